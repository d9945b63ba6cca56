// A benchmark of a wrong result is worthless: after every timed run, every
// host must have exactly one host_mappings row, pointing at its own cell.
import type { ScratchDeployment } from './scratch-deployment.js';

export class WrongResultError extends Error {}

export interface VerifyOptions {
  readonly hostsPerCell: number;
  /** Also require mapped = 1 on every live compute node (nova-reconcile's node path). */
  readonly allNodesMapped: boolean;
  /** For the message: which run this was. */
  readonly after: string;
}

export async function verifyMappings(deployment: ScratchDeployment, opts: VerifyOptions): Promise<void> {
  const api = deployment.api;
  const problems: string[] = [];
  const expectedTotal = opts.hostsPerCell * deployment.cells.length;
  const total = await count(api, 'SELECT COUNT(*) AS n FROM host_mappings');
  // The unique key on host_mappings.host makes "at most one" structural; the
  // count makes it "exactly one" once each cell's hosts are all found.
  if (total !== expectedTotal) problems.push(`host_mappings has ${total} rows, expected ${expectedTotal} (one per host)`);
  for (const cell of deployment.cells) {
    const mapped = await count(
      api,
      `SELECT COUNT(DISTINCT s.host) AS n FROM \`${cell.database}\`.services s ` +
        `JOIN \`${deployment.apiDatabase}\`.host_mappings h ON h.host = s.host AND h.cell_id = ? ` +
        "WHERE s.deleted = 0 AND s.`binary` = 'nova-compute'",
      [cell.id],
    );
    if (mapped !== opts.hostsPerCell) problems.push(`${cell.name}: ${mapped} of ${opts.hostsPerCell} hosts are mapped to their cell`);
    if (opts.allNodesMapped) {
      const unmarked = await count(cell.knex, 'SELECT COUNT(*) AS n FROM compute_nodes WHERE deleted = 0 AND (mapped IS NULL OR mapped < 1)');
      if (unmarked !== 0) problems.push(`${cell.name}: ${unmarked} live compute nodes still have mapped = 0`);
    }
  }
  if (problems.length > 0) throw new WrongResultError(`wrong result after ${opts.after}:\n  ${problems.join('\n  ')}`);
}

/** The `n` of a one-row COUNT query. */
export async function count(db: ScratchDeployment['api'], sql: string, bindings: readonly number[] = []): Promise<number> {
  const result = (await db.raw(sql, [...bindings])) as unknown as [{ n: number | string }[], unknown];
  return Number(result[0][0]?.n ?? NaN);
}
