// Scenarios: named deployment states for the sandbox, the tests, the demo and
// the conformance tier. A scenario only writes hosts, nodes, instances and
// placement data; it never creates cell_mappings, because the conformance
// tier runs scenarios against databases that the real nova-manage built and
// mapped. Everything is deterministic: fixed uuids, timestamps relative to
// the moment of populating (services heartbeat "now").
//
// To add a scenario, write src/sandbox/scenarios/<name>.ts exporting a
// Scenario and list it in SCENARIOS below.
import { deletedIronicNodeScenario } from './scenarios/deleted-ironic-node.js';
import { emptyScenario } from './scenarios/empty.js';
import { ironicFailoverRenamedScenario, ironicFailoverScenario } from './scenarios/ironic-failover.js';
import { ironicHaScenario } from './scenarios/ironic-ha.js';
import { libvirtScenario } from './scenarios/libvirt.js';
import { staleProviderScenario } from './scenarios/stale-provider.js';

export type { Scenario, ScenarioDatabases } from './scenario.js';
import type { Scenario } from './scenario.js';

export const SCENARIOS: readonly Scenario[] = Object.freeze([
  emptyScenario,
  ironicHaScenario,
  libvirtScenario,
  deletedIronicNodeScenario,
  staleProviderScenario,
  ironicFailoverScenario,
  ironicFailoverRenamedScenario,
]);

export function findScenario(name: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}

export function scenarioNames(): string[] {
  return SCENARIOS.map((s) => s.name);
}
