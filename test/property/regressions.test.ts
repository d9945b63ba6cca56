// Histories the property campaigns shrank to, one per bug found, kept as
// named regression tests next to the fix (docs/RELIABILITY.md lists them).
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openCampaign, type Campaign } from './campaign.js';
import type { CloudEvent } from './cloud-history.js';
import { describeMysql } from '../helpers/mysql.js';

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
  {
    // 2026-12-04, the MariaDB campaign: the instance is evacuated, so
    // placement audit --delete removes its old host's share and, as Placement
    // does, bumps the generation of every provider left in its allocation
    // set, the sharing provider's too. The invariant had called that bump a
    // change to a non-compute provider; the allocations and inventories stay.
    name: "an evacuated instance's old share goes; its share on a sharing provider stays (generation bumped)",
    history: [
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-libvirt-host', a: 0, b: 0 },
      { kind: 'instance-built', a: 0, b: 0 },
      { kind: 'instance-disk-on-sharing-provider', a: 0, b: 0 },
      { kind: 'start-libvirt-host', a: 0, b: 0 },
      { kind: 'instance-evacuated', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
    ],
  },
];

/**
 * Histories that broke the campaign's own harness on MariaDB (its foreign
 * and unique keys are enforced): a provider deleted through the
 * service-delete API (root_provider_id self-reference), a ring rebalance onto
 * a host that already had a 409 duplicate of the node (the (host, node)
 * key), and the reset between histories after a migration row (instances
 * emptied before migrations).
 */
const MARIADB_HARNESS: ReadonlyArray<{ name: string; history: CloudEvent[] }> = [
  {
    name: 'a service deleted through the API takes its ironic node\'s provider with it',
    history: [
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'ironic-node-created', a: 0, b: 0 },
      { kind: 'service-deleted-via-api', a: 0, b: 0 },
      { kind: 'instance-built', a: 0, b: 0 },
    ],
  },
  {
    name: 'a ring rebalance towards a service that already holds a 409 duplicate of the node leaves the rows as they are',
    history: [
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'ironic-node-created', a: 0, b: 0 },
      { kind: 'ring-rebalance-409', a: 0, b: 0 },
      { kind: 'ring-rebalance', a: 0, b: 0 },
      { kind: 'service-row-deleted-by-hand', a: 0, b: 0 },
    ],
  },
  {
    name: 'an instance deleted after a migration, then the next history starts from empty tables',
    history: [
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'start-ironic-service', a: 0, b: 0 },
      { kind: 'instance-deleted', a: 0, b: 0 },
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

describeMysql('property campaign regressions [mariadb]', () => {
  let campaign: Campaign;
  beforeAll(async () => {
    campaign = await openCampaign('mysql', 'frm');
  });
  afterAll(async () => {
    await campaign?.close();
  });
  // Each history runs after the one before, so the reset between them is exercised too.
  for (const r of [...REGRESSIONS, ...MARIADB_HARNESS, ...MARIADB_HARNESS]) it(r.name, async () => campaign.check(r.history), 60_000);
});
