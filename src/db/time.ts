// Nova stores naive UTC timestamps ("YYYY-MM-DD HH:MM:SS"). Both drivers
// take and return them as strings here (mysql2 runs with dateStrings and
// time_zone +00:00), so one format serves MariaDB and SQLite alike.

export function utcNowString(now: Date = new Date()): string {
  return now.toISOString().slice(0, 19).replace('T', ' ');
}
