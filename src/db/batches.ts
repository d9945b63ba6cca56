// Set-based work in bounded statements: MySQL caps placeholders at 65,535 and
// huge IN lists hurt the planner, so lists are cut into batches.
export const BATCH_SIZE = 1000;

export function chunk<T>(items: readonly T[], size: number = BATCH_SIZE): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
