// The standard resource classes, as Placement inserts them when its API
// process starts (placement/objects/resource_class.py:_resource_classes_sync),
// not at `placement-manage db sync`. A real placement database may therefore
// lack them until the API has run once; the tool tolerates both.
import type { Knex } from 'knex';
import { FIRST_CUSTOM_RESOURCE_CLASS_ID, STANDARD_RESOURCE_CLASSES } from '../../src/domain/resource-classes.js';
import { dialectOf } from '../ddl.js';


export async function up(knex: Knex): Promise<void> {
  // A transaction (a savepoint when knex already runs the migration in one)
  // pins one connection, so the session sql_mode below covers the insert.
  await knex.transaction(async (trx) => {
    const rows: { name: string }[] = await trx('resource_classes').select('name').whereIn('name', STANDARD_RESOURCE_CLASSES);
    const present = new Set(rows.map((r) => r.name));
    const createdAt = naiveUtcNow();
    const missing = STANDARD_RESOURCE_CLASSES.flatMap((name, id) => (present.has(name) ? [] : [{ id, name, created_at: createdAt }]));
    if (missing.length === 0) return;
    if (dialectOf(trx) === 'sqlite') {
      await trx('resource_classes').insert(missing);
      return;
    }
    // VCPU has id 0, which MySQL reads as "next auto-increment value" unless
    // NO_AUTO_VALUE_ON_ZERO is set, exactly as Placement does it.
    const saved: unknown = await trx.raw('SELECT @@SESSION.sql_mode AS mode');
    const mode = sessionMode(saved);
    await trx.raw("SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')");
    try {
      await trx('resource_classes').insert(missing);
    } finally {
      await trx.raw('SET SESSION sql_mode = ?', [mode]);
    }
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('resource_classes').where('id', '<', FIRST_CUSTOM_RESOURCE_CLASS_ID).whereIn('name', STANDARD_RESOURCE_CLASSES).delete();
}

/** Nova and Placement store naive UTC timestamps without fractions. */
function naiveUtcNow(): string {
  return new Date().toISOString().slice(0, 19).replace('T', ' ');
}

/** mysql2 answers raw() with [rows, fields]. */
function sessionMode(result: unknown): string {
  const rows: unknown = Array.isArray(result) ? result[0] : undefined;
  const first: unknown = Array.isArray(rows) ? rows[0] : undefined;
  const mode = typeof first === 'object' && first !== null ? (first as Record<string, unknown>)['mode'] : undefined;
  if (typeof mode !== 'string') throw new Error('could not read @@SESSION.sql_mode');
  return mode;
}
