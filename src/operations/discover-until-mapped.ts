// discover_hosts --expect/--wait: repeat discovery until every expected host
// has a host mapping, or the wait runs out. It replaces the wait loops that
// every deployer wrote around nova-manage (kolla 20 x 10 s, TripleO 600 s,
// ci-framework 30 x 10 s): `--strict` cannot say "all of these hosts" and
// returns 0 once one host maps (ci-framework #2501). Mappings made on the
// way are kept; a pass that fails stops the wait.
import type { Deployment } from '../db/deployment-databases.js';
import { findHostMappings } from '../db/api/host-mappings.js';
import { discoverHosts, type DiscoverOptions, type DiscoverResult } from './discover-hosts.js';

export interface ExpectOptions {
  /** Expected hosts, as given (the database's collation decides what matches). */
  readonly expect: readonly string[];
  /** Seconds to keep trying; 0: one pass. */
  readonly waitSeconds: number;
  readonly intervalSeconds: number;
  readonly discover: DiscoverOptions;
  /** After every pass, with the hosts still missing and the seconds waited so far. */
  readonly onPass?: (pass: DiscoverResult, index: number, missing: readonly string[], waitedSeconds: number) => void;
}

export interface ExpectResult {
  readonly passes: readonly DiscoverResult[];
  /** Expected hosts that have a mapping, in the order given. */
  readonly mapped: readonly string[];
  readonly missing: readonly string[];
  readonly waitedSeconds: number;
}

export async function discoverUntilMapped(deployment: Deployment, options: ExpectOptions): Promise<ExpectResult> {
  const started = Date.now();
  const deadline = started + options.waitSeconds * 1000;
  const passes: DiscoverResult[] = [];
  const api = await deployment.api();
  const expect = [...new Set(options.expect)];
  for (;;) {
    const pass = await discoverHosts(deployment, options.discover);
    passes.push(pass);
    const found = new Set((await findHostMappings(api.knex, api.dialect, expect)).map((m) => m.candidate));
    const missing = expect.filter((h) => !found.has(h));
    const waited = (Date.now() - started) / 1000;
    options.onPass?.(pass, passes.length - 1, missing, waited);
    const failed = pass.cells.some((c) => c.kind === 'failed');
    const left = deadline - Date.now();
    if (missing.length === 0 || failed || left <= 0) {
      return { passes, mapped: expect.filter((h) => found.has(h)), missing, waitedSeconds: Math.round(waited * 10) / 10 };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalSeconds * 1000, left)));
  }
}
