// cell_v2 delete_host: nova-manage's checks, messages and exit codes 0-4.
import { assertNever } from '../errors.js';
import { requiredOption, stringOption } from '../cli/options.js';
import { FORMAT_OPTION, type CommandSpec } from '../cli/spec.js';
import { deleteHost, type DeleteHostResult } from '../operations/delete-host.js';
import { useDeployment } from './shared/deployment.js';
import { jsonResult, report } from '../cli/results.js';

interface DeleteHostOptions {
  readonly cellUuid: string;
  readonly host: string;
  readonly json: boolean;
}

export const deleteHostCommand: CommandSpec<DeleteHostOptions> = {
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
  jsonSchemas: ['cell_v2-delete_host'],
  exitCodes: [
    [0, 'the host mapping was deleted'],
    [1, '"Cell with uuid <U> was not found."'],
    [2, '"The host <H> was not found."; or invalid usage'],
    [3, '"The host <H> was not found in the cell <U>."'],
    [4, '"There are instances on the host <H>."'],
    [255, 'any other error'],
  ],
  differences: ['--format json is an addition.'],
  parse(raw) {
    return { cellUuid: requiredOption(raw, 'cell_uuid', '--cell_uuid <cell_uuid>'), host: requiredOption(raw, 'host', '--host <host>'), json: stringOption(raw, 'format') === 'json' };
  },
  async run(ctx, { cellUuid, host, json }) {
    const result = await useDeployment(ctx, (d) => deleteHost(d, cellUuid, host));
    const [code, message] = describe(result);
    // The operator log: the deletion, or the refusal with nova-manage's message.
    if (result.kind === 'deleted') ctx.log?.info(`deleted host mapping of host '${host}' in cell ${cellUuid}`);
    else ctx.log?.warning(`refused to delete host '${host}': ${message}`);
    if (json) return jsonResult({ changed: result.kind === 'deleted', result: result.kind, message, ...result, exit_code: code }, code);
    return report(message === '' ? '' : message + '\n', code);
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
