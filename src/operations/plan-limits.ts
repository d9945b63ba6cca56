// The circuit breaker's side that reads: how many objects of each kind the
// plan's scopes hold. The verdict is src/domain/plan-limits.ts.
import type { Deployment } from '../db/deployment-databases.js';
import { countLiveComputeNodeObjects, countResourceProviders } from '../db/plan-scope-counts.js';
import type { CellNamer } from '../domain/cell-names.js';
import { checkPlanLimits, planObjects, type LimitTrip, type PlanLimits, type ScopeTotals } from '../domain/plan-limits.js';
import type { Plan } from '../domain/plan.js';
import { databaseFor } from './apply-plan.js';

/** The limits the plan exceeds (none when it has no units, or when every limit is off). */
export async function planLimitTrips(d: Deployment, plan: Plan, limits: PlanLimits, cellName: CellNamer): Promise<LimitTrip[]> {
  if (plan.units.length === 0) return [];
  if (limits.maxFraction >= 1) return checkPlanLimits(plan, { computeNodesByCell: new Map(), providers: undefined }, limits, cellName);
  return checkPlanLimits(plan, await scopeTotals(d, plan), limits, cellName);
}

async function scopeTotals(d: Deployment, plan: Plan): Promise<ScopeTotals> {
  const objects = planObjects(plan);
  const computeNodesByCell = new Map<string, number>();
  for (const cellUuid of objects.computeNodes.keys()) {
    const db = await databaseFor(d, { db: 'cell', cellUuid });
    computeNodesByCell.set(cellUuid, await countLiveComputeNodeObjects(db.knex));
  }
  const providers = objects.providers.size === 0 ? undefined : await countResourceProviders((await d.placement()).knex);
  return { computeNodesByCell, providers };
}
