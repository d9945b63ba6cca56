// `--plan-in FILE --apply`: a reviewed unit that planning no longer has is
// skipped (domain/plan-review.ts). When what changed is a row the unit owns
// (its compute node now on another host, an instance moved), the skip names
// it as the apply's ownership guard does when the same change races the
// apply: "ownership changed: compute node U is now on host host_b, not
// host_a".
import { changeAlreadyDone } from '../db/already-done.js';
import { describeOwnershipChange } from '../db/cell/ownership.js';
import type { Deployment } from '../db/deployment-databases.js';
import { withWhatChanged, type StaleUnit } from '../domain/plan-review.js';
import type { Change } from '../domain/plan.js';
import { databaseFor } from './apply-plan.js';

/** The skipped units, those planning finds nothing for given what changed in their cells' rows (read without a lock, under the apply lock). */
export async function findWhatChanged(d: Deployment, stale: readonly StaleUnit[]): Promise<StaleUnit[]> {
  const out: StaleUnit[] = [];
  for (const s of stale) {
    if (s.nothingToDo !== true) {
      out.push(s);
      continue;
    }
    const changes = s.unit.changes.map((c) => c.change);
    // Done by someone else (an earlier apply of this plan): nothing to name, as the apply's guard says nothing then.
    if (await allDone(d, changes)) {
      out.push(s);
      continue;
    }
    const cells = [...new Set(changes.flatMap((c) => (c.target.db === 'cell' ? [c.target.cellUuid] : [])))];
    let changed: string | undefined;
    for (const cellUuid of cells) {
      changed = await describeOwnershipChange((await databaseFor(d, { db: 'cell', cellUuid })).knex, cellUuid, changes);
      if (changed !== undefined) break;
    }
    out.push(withWhatChanged(s, changed));
  }
  return out;
}

async function allDone(d: Deployment, changes: readonly Change[]): Promise<boolean> {
  for (const change of changes) if (!(await changeAlreadyDone((await databaseFor(d, change.target)).knex, change))) return false;
  return true;
}
