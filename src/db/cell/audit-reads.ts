// What the audit by cell reads of every cell before it judges any
// (operations/read/audit-by-cell.ts): the keys a cell could share with
// another, in keyset pages of a few columns, never as records.
import type { Knex } from 'knex';
import { eachByKeyset } from '../keyset.js';

export interface ServiceKeys {
  readonly id: number;
  readonly host: string | null;
  readonly binary: string;
  readonly deleted: number | string | null;
}

/** Every service row Nova sees (deleted not NULL), soft-deleted ones included. */
export async function eachServiceKeys(db: Knex, onRow: (row: ServiceKeys) => void): Promise<void> {
  await eachByKeyset(
    async (afterId, limit) => (await db('services').select('id', 'host', 'binary', 'deleted').whereNotNull('deleted').andWhere('id', '>', afterId).orderBy('id').limit(limit)) as ServiceKeys[],
    onRow,
  );
}

export interface NodeKeys {
  readonly id: number;
  readonly uuid: string | null;
  readonly host: string | null;
  readonly hypervisor_hostname: string | null;
  readonly hypervisor_type: string;
  readonly deleted: number | string | null;
}

/** Every compute node row Nova sees (deleted not NULL), soft-deleted ones included. */
export async function eachNodeKeys(db: Knex, onRow: (row: NodeKeys) => void): Promise<void> {
  await eachByKeyset(
    async (afterId, limit) =>
      (await db('compute_nodes').select('id', 'uuid', 'host', 'hypervisor_hostname', 'hypervisor_type', 'deleted').whereNotNull('deleted').andWhere('id', '>', afterId).orderBy('id').limit(limit)) as NodeKeys[],
    onRow,
  );
}
