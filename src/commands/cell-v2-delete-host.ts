// cell_v2 delete_host: nova-manage's checks, messages and exit codes 0-4.
import { assertNever } from '../errors.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { deleteHost, type DeleteHostResult } from '../operations/delete-host.js';
import { printJson, useDeployment } from './deployment.js';

export const deleteHostCommand: CommandSpec = {
  path: ['cell_v2', 'delete_host'],
  family: 'compatible',
  summary: 'delete the host mapping of a host without instances (nova-manage compatible)',
  description: [
    'Checks, in this order, that the cell exists, that the host has a mapping, that the mapping is to that cell, and that no live instance ' +
      'is on the host. Then every live compute node of the host gets mapped = 0 and the host mapping is deleted. Services and compute nodes ' +
      'are not deleted, so the next discover_hosts maps the host again while they exist. The scheduler caches host-to-cell mappings: ' +
      'restart it or send it SIGHUP afterwards.',
  ],
  options: [
    { flags: '--cell_uuid <cell_uuid>', description: 'the uuid of the cell', required: true },
    { flags: '--host <host>', description: 'the host to delete', required: true },
    FORMAT_OPTION,
  ],
  exitCodes: [
    [0, 'the host mapping was deleted'],
    [1, '"Cell with uuid <U> was not found."'],
    [2, '"The host <H> was not found."; or invalid usage'],
    [3, '"The host <H> was not found in the cell <U>."'],
    [4, '"There are instances on the host <H>."'],
    [255, 'any other error'],
  ],
  differences: ['--format json is an addition.'],
  async run(ctx, o) {
    const result = await useDeployment(ctx, (d) => deleteHost(d, String(o['cell_uuid']), String(o['host'])));
    const [code, message] = describe(result);
    // The operator log: the deletion, or the refusal with nova-manage's message.
    if (result.kind === 'deleted') ctx.log?.info(`deleted host mapping of host '${String(o['host'])}' in cell ${String(o['cell_uuid'])}`);
    else ctx.log?.warning(`refused to delete host '${String(o['host'])}': ${message}`);
    if (o['format'] === 'json') printJson(ctx, { changed: result.kind === 'deleted', result: result.kind, message, ...result, exit_code: code });
    else if (message !== '') ctx.stdout.write(message + '\n');
    return code;
  },
};

function describe(r: DeleteHostResult): [number, string] {
  switch (r.kind) {
    case 'deleted':
      return [0, ''];
    case 'cell-not-found':
      return [1, `Cell with uuid ${r.cellUuid} was not found.`];
    case 'host-not-found':
      return [2, `The host ${r.host} was not found.`];
    case 'wrong-cell':
      return [3, `The host ${r.host} was not found in the cell ${r.cellUuid}.`];
    case 'has-instances':
      return [4, `There are instances on the host ${r.host}.`];
    default:
      return assertNever(r, 'delete_host result');
  }
}
