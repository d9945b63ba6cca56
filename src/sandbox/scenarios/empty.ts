// A deployment with its three cells mapped and nothing in them.
import type { Scenario } from '../scenario.js';

export const emptyScenario: Scenario = {
  name: 'empty',
  summary: 'cells mapped, no services, hosts or providers',
  story: [
    'A freshly deployed control plane: cell0, cell1 and cell2 are mapped in the API database, and no compute service has started yet.',
    'discover_hosts finds nothing to map and exits 0; list_hosts prints an empty table.',
  ],
  tryNext: ['cell_v2 list_cells', 'cell_v2 discover_hosts --verbose', 'cell_v2 list_hosts'],
  async populate() {
    // Nothing: the sandbox has already mapped the cells.
  },
};
