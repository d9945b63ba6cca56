// Nova stores naive UTC timestamps ("YYYY-MM-DD HH:MM:SS"). Both drivers
// take and return them as strings here (mysql2 runs with dateStrings and
// time_zone +00:00), so one format serves MariaDB and SQLite alike.

export function utcNowString(now: Date = new Date()): string {
  return now.toISOString().slice(0, 19).replace('T', ' ');
}

/** Parse a naive-UTC DATETIME string (as stored by Nova) into epoch ms. */
export function parseUtc(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const ms = Date.parse(`${value.replace(' ', 'T').slice(0, 19)}Z`);
  return Number.isNaN(ms) ? undefined : ms;
}
