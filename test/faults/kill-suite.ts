// The SIGKILL campaign shared by the fast subsets (npm test) and the full runs
// (npm run test:faults). FAULT_KILLS is the number of kills per command.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createFaultDeployment, faultTarget, killCampaign, type CampaignTarget } from './helpers.js';

export interface KillSuiteDefaults {
  readonly kills: number;
  readonly rounds: number;
  readonly timeoutMs: number;
  /** The deployment: by default `orphans` orphan nodes and `stale` stale providers (cleanup_orphans, cleanup_providers). */
  readonly orphans?: number;
  readonly stale?: number;
  readonly create?: () => Promise<CampaignTarget>;
}

export function killSuite(name: string, defaults: KillSuiteDefaults): void {
  const kills = Number(process.env['FAULT_KILLS'] ?? defaults.kills);
  const rounds = Number(process.env['FAULT_ROUNDS'] ?? defaults.rounds);
  const create = defaults.create ?? (async () => faultTarget(await createFaultDeployment(defaults.orphans ?? 80, defaults.stale ?? 30)));
  describeMysql(name, () => {
    let t: CampaignTarget;
    beforeAll(async () => {
      t = await create();
    }, 120_000);
    afterAll(async () => {
      await t?.d.cleanup();
    });
    it(
      `${rounds} round(s) of ${kills} SIGKILL(s) per command; invariants hold after each, re-runs converge, undo restores`,
      async () => {
        const journalDir = join(t.d.dir, 'kills');
        mkdirSync(journalDir, { recursive: true });
        const stats = await killCampaign(t, {
          rounds,
          killsPerCommand: Math.ceil(kills / rounds),
          journalDir,
          log: (s) => console.log(s),
          dryRunStdout: async (argv) => {
            const r = await runBin(argv);
            return { code: r.code, stdout: r.stdout };
          },
        });
        console.log(`fault figures (${name}): ${JSON.stringify({ ...stats, violations: stats.violations.length })}`);
        expect(stats.violations).toEqual([]);
        expect(stats.changesPlanned).toBeGreaterThan(0);
        expect(stats.kills).toBeGreaterThan(0);
      },
      defaults.timeoutMs,
    );
  });
}
