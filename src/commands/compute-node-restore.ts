// compute_node restore --uuid U: undelete a compute node soft-deleted while its node still exists (bug 1839560).
import type { CommandSpec } from '../cli/spec.js';
import { isUuid } from '../domain/ironic-nodes.js';
import { planNodeRestore } from '../domain/restore-node.js';
import { ReconcileError } from '../errors.js';
import { CELLS_READ } from '../operations/read/recipes.js';
import { readSnapshot } from '../operations/read/snapshot.js';
import { requiredOption } from '../cli/options.js';
import { APPLY_OPTIONS, PLAN_EXIT_CODES, parsePlanRun, runPlanCommand, type PlanRunOptions } from './shared/plan-command.js';

interface RestoreNodeOptions {
  readonly uuid: string;
  readonly run: PlanRunOptions;
}

export const restoreNodeCommand: CommandSpec<RestoreNodeOptions> = {
  path: ['compute_node', 'restore'],
  family: 'reconcile',
  summary: 'bring back a compute node soft-deleted while its node still exists (plan first; --apply to change)',
  description: [
    "A compute node soft-deleted while its node still exists (an ironic node deleted from Nova while in maintenance, bug 1839560) keeps " +
      'its uuid in compute_nodes_uuid_idx, so a Zed (26.x) nova-compute fails with DBDuplicateEntry on every cycle; from 27.0.0 (2023.1) ' +
      'nova-compute un-deletes the row itself once it runs, so the restore matters only while it does not. `audit` reports it as ' +
      'soft-deleted-node-with-provider. The restore is what Nova does on a uuid collision: deleted = 0 and deleted_at = NULL, id, uuid and ' +
      'every other column kept, as a compare-and-swap on the deleted row. Its provider and allocations were never touched.',
    'Refused when a live compute node has the same uuid or the same host and hypervisor_hostname, or when the node\'s nova-compute ' +
      'service is gone. Restore before `nova-manage db archive_deleted_rows` runs: it moves the row to the shadow tables.',
    'It plans one unit for the one row --uuid names, so it takes none of the scope options (--cell, --host, --node, --max-count): ' +
      'they narrow a plan of many units, and a soft-deleted row is named by its uuid alone (several deleted rows may share a hypervisor_hostname).',
  ],
  options: [{ flags: '--uuid <uuid>', description: 'the compute node (and resource provider) uuid', required: true }, ...APPLY_OPTIONS],
  jsonSchemas: ['plan'],
  exitCodes: PLAN_EXIT_CODES,
  examples: ['nova-reconcile compute_node restore --uuid 33509888-9e82-4645-b10f-8cf051fe7c31', 'nova-reconcile compute_node restore --uuid 33509888-9e82-4645-b10f-8cf051fe7c31 --apply'],
  parse(raw) {
    const uuid = requiredOption(raw, 'uuid', '--uuid <uuid>');
    if (!isUuid(uuid)) throw new ReconcileError('usage', `--uuid must be a uuid, got '${uuid}'`);
    return { uuid, run: parsePlanRun(raw) };
  },
  async run(ctx, { uuid, run }) {
    return runPlanCommand(ctx, run, async (d) => {
      const result = planNodeRestore(await readSnapshot(d, CELLS_READ), uuid);
      if (!result.found)
        throw new ReconcileError('not-found', `no compute node, live or soft-deleted, has uuid ${uuid} in any cell`, {
          hint: 'a row archived by `nova-manage db archive_deleted_rows` is in shadow_compute_nodes and cannot be restored here',
        });
      return result.plan;
    });
  },
};
