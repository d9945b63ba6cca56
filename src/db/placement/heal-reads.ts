// The lookup tables `placement heal_allocations` needs beside the placement
// snapshot: resource class ids by name, and the Keystone ids of projects and
// users (a consumer stores their internal ids).
import type { Knex } from 'knex';
import { readByKeyset } from '../keyset.js';

export async function readResourceClassIds(db: Knex): Promise<Map<string, number>> {
  const rows = (await db('resource_classes').select('id', 'name')) as Array<{ id: number; name: string }>;
  return new Map(rows.map((r) => [r.name, Number(r.id)]));
}

export async function readExternalIds(db: Knex, table: 'projects' | 'users'): Promise<Map<number, string>> {
  const rows = await readByKeyset(
    async (afterId, limit) => (await db(table).select('id', 'external_id').where('id', '>', afterId).orderBy('id').limit(limit)) as Array<{ id: number; external_id: string }>,
    (r) => [Number(r.id), r.external_id] as const,
  );
  return new Map(rows);
}
