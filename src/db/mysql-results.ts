// What mysql2 hands back from knex.raw, and how a name is written into SQL
// where a binding cannot stand (a database or table name).

/** The rows of a raw MySQL result ([rows, fields]); [] for anything else. */
export function rowsOf(res: unknown): Array<Record<string, unknown>> {
  const rows = Array.isArray(res) ? res[0] : res;
  return Array.isArray(rows) ? (rows as Array<Record<string, unknown>>) : [];
}

/** A MySQL identifier in backquotes, a backquote in it doubled: any name is one identifier, never SQL. */
export function quoteIdentifier(name: string): string {
  return '`' + name.replace(/`/g, '``') + '`';
}
