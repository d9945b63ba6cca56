// cell_v2 list_hosts: nova-manage's table, sorted by host.
import { renderPrettyTable } from '../cli/prettytable.js';
import { stringOption } from '../cli/options.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { listHosts } from '../operations/cell-listing.js';
import { useDeployment } from './shared/deployment.js';
import { jsonResult, report } from '../cli/results.js';

export const listHostsCommand: CommandSpec<{ readonly cellUuid: string | undefined; readonly json: boolean }> = {
  path: ['cell_v2', 'list_hosts'],
  family: 'compatible',
  summary: 'list the host mappings of one or all cells (nova-manage compatible)',
  description: ['Prints a table of Cell Name, Cell UUID and Hostname for every host mapping, sorted by host name.'],
  options: [{ flags: '--cell_uuid <cell_uuid>', description: 'only list the hosts of this cell' }, FORMAT_OPTION],
  jsonSchemas: ['cell_v2-list_hosts'],
  exitCodes: [
    [0, 'success'],
    [1, '"Cell with uuid <U> was not found."; or a config file could not be read'],
    [255, 'any other error'],
  ],
  differences: ['--format json is an addition.'],
  parse(raw) {
    return { cellUuid: stringOption(raw, 'cell_uuid'), json: stringOption(raw, 'format') === 'json' };
  },
  async run(ctx, { cellUuid, json }) {
    const result = await useDeployment(ctx, (d) => listHosts(d, cellUuid));
    if (result.kind === 'cell-not-found') {
      if (json) return jsonResult({ changed: false, error: { kind: 'not-found', message: `Cell with uuid ${result.cellUuid} was not found.`, exit_code: 1 } }, 1);
      return report(`Cell with uuid ${result.cellUuid} was not found.\n`, 1);
    }
    if (json) return jsonResult({ changed: false, hosts: result.hosts.map((h) => ({ cell_name: h.cellName, cell_uuid: h.cellUuid, host: h.host })) }, 0);
    // prettytable prints a NULL cell name as Python's str(None).
    const rows = result.hosts.map((h) => [h.cellName ?? 'None', h.cellUuid, h.host]);
    return report(renderPrettyTable(['Cell Name', 'Cell UUID', 'Hostname'], rows) + '\n', 0);
  },
};
