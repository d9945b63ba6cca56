// cell_v2 list_cells: nova-manage's table, with nova's password masking.
import { renderPrettyTable } from '../cli/prettytable.js';
import { flagOption, stringOption } from '../cli/options.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { maskNovaUrl } from '../config/mask-url.js';
import { listCells } from '../operations/cell-listing.js';
import { useDeployment } from './shared/deployment.js';
import { jsonResult, report } from '../cli/results.js';

export const listCellsCommand: CommandSpec<{ readonly verbose: boolean; readonly json: boolean }> = {
  path: ['cell_v2', 'list_cells'],
  family: 'compatible',
  summary: 'list the cells with their (rendered) URLs (nova-manage compatible)',
  description: [
    'Prints Name, UUID, Transport URL, Database Connection and Disabled for every cell, sorted by name. URLs are rendered through ' +
      "Nova's templating against the local [database] connection and [DEFAULT] transport_url. Passwords are masked as nova-manage masks them, " +
      'unless --verbose is given.',
  ],
  options: [{ flags: '--verbose', description: 'show the URLs with their passwords, as nova-manage does' }, FORMAT_OPTION],
  jsonSchemas: ['cell_v2-list_cells'],
  exitCodes: [
    [0, 'success'],
    [1, 'a config file could not be read'],
    [255, 'any other error'],
  ],
  differences: ['--format json is an addition; it masks passwords the same way unless --verbose.'],
  parse(raw) {
    return { verbose: flagOption(raw, 'verbose'), json: stringOption(raw, 'format') === 'json' };
  },
  async run(ctx, { verbose, json }) {
    const cells = await useDeployment(ctx, (d) => listCells(d));
    const url = (u: string | null): string | null => (verbose ? u : maskNovaUrl(u));
    if (json) {
      return jsonResult({
        changed: false,
        cells: cells.map((c) => ({
          name: c.name,
          uuid: c.uuid,
          transport_url: url(c.transportUrl),
          database_connection: url(c.databaseConnection),
          disabled: c.disabled,
        })),
      }, 0);
    }
    const rows = cells.map((c) => [c.name ?? '', c.uuid, String(url(c.transportUrl)), String(url(c.databaseConnection)), c.disabled ? 'True' : 'False']);
    return report(renderPrettyTable(['Name', 'UUID', 'Transport URL', 'Database Connection', 'Disabled'], rows) + '\n', 0);
  },
};
