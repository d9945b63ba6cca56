// The fast property campaign of `npm test` (issue 22): random cloud
// histories on SQLite with a fixed seed, bounded to about 30 s. The long
// campaign is `npm run test:fuzz` (MariaDB, thousands of histories).
// A failure prints the shortest history fast-check found, with the seed and
// path that replay it: FUZZ_SEED=<seed> FUZZ_PATH=<path> npm run test:fuzz.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCampaign, runCampaign, type Campaign } from './campaign.js';

const SEED = 20261203;
const RUNS = Number(process.env['FAST_FUZZ_RUNS'] ?? 10);

describe('property campaign over random cloud histories [sqlite]', () => {
  let campaign: Campaign;
  beforeAll(async () => {
    campaign = await openCampaign('sqlite', 'fz');
  });
  afterAll(async () => {
    await campaign?.close();
  });

  it(`${RUNS} histories (seed ${SEED}): dry runs change nothing, applies keep allocations, undo is exact, re-runs are clean`, async () => {
    await runCampaign(campaign, { seed: SEED, runs: RUNS, maxEvents: 12, timeLimitMs: 100_000 });
    console.log(`fast campaign: ${JSON.stringify(campaign.stats)}`);
    expect(campaign.stats.histories).toBeGreaterThanOrEqual(RUNS);
    expect(campaign.stats.unitsApplied).toBeGreaterThan(0);
  }, 180_000);
});
