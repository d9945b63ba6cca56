// The long property campaign (`npm run test:fuzz`): random cloud histories
// on MariaDB. Its size and seed come from the command line through
// scripts/fuzz.mjs (FUZZ_RUNS, FUZZ_SEED, FUZZ_MAX_EVENTS, FUZZ_PATH).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCampaign, runCampaign, type Campaign } from '../property/campaign.js';

const RUNS = Number(process.env['FUZZ_RUNS'] ?? 200);
const SEED = Number(process.env['FUZZ_SEED'] ?? Date.now() % 2 ** 31);
const MAX_EVENTS = Number(process.env['FUZZ_MAX_EVENTS'] ?? 20);
const PATH = process.env['FUZZ_PATH'];

describe('property campaign [mariadb]', () => {
  let campaign: Campaign;
  const started = Date.now();
  beforeAll(async () => {
    campaign = await openCampaign('mysql', 'fzm');
  });
  afterAll(async () => {
    const s = campaign?.stats;
    if (s !== undefined)
      console.log(
        `fuzz: seed ${SEED}, ${s.histories} histories, ${s.events} events, ${s.unitsApplied} units applied, ${s.undos} undos, ` +
          `${s.propertiesChecked} properties checked, ${((Date.now() - started) / 1000).toFixed(0)} s`,
      );
    await campaign?.close();
  });

  it(`${RUNS} histories, seed ${SEED}`, async () => {
    await runCampaign(campaign, { seed: SEED, runs: RUNS, maxEvents: MAX_EVENTS, ...(PATH === undefined ? {} : { path: PATH }) });
    expect(campaign.stats.histories).toBeGreaterThan(0);
  });
});
