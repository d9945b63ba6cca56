// Histories the property campaigns shrank to, one per bug found, kept as
// named regression tests next to the fix (docs/RELIABILITY.md lists them).
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openCampaign, type Campaign } from './campaign.js';
import type { CloudEvent } from './cloud-history.js';

const REGRESSIONS: ReadonlyArray<{ name: string; history: CloudEvent[] }> = [
  {
    // Issue 13.1: nova's audit counts a live instance's DISK_GB on a sharing
    // provider as orphaned (the provider's root is no compute node), and
    // --delete removed it.
    name: 'placement audit --delete keeps a live instance share on a sharing provider',
    history: [
      { kind: 'start-libvirt-host', a: 0, b: 1 },
      { kind: 'instance-built', a: 0, b: 0 },
      { kind: 'instance-disk-on-sharing-provider', a: 0, b: 0 },
    ],
  },
];

describe('property campaign regressions [sqlite]', () => {
  let campaign: Campaign;
  beforeAll(async () => {
    campaign = await openCampaign('sqlite', 'fr');
  });
  afterAll(async () => {
    await campaign?.close();
  });
  for (const r of REGRESSIONS) it(r.name, async () => campaign.check(r.history), 60_000);
});
