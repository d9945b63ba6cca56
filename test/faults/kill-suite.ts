// The SIGKILL campaign shared by the fast subset (npm test) and the full run
// (npm run test:faults). FAULT_KILLS is the number of kills per command.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runBin } from '../helpers/cli.js';
import { describeMysql } from '../helpers/mysql.js';
import { createFaultDeployment, killCampaign, type FaultDeployment } from './helpers.js';

export function killSuite(name: string, defaults: { kills: number; rounds: number; orphans: number; stale: number; timeoutMs: number }): void {
  const kills = Number(process.env['FAULT_KILLS'] ?? defaults.kills);
  const rounds = Number(process.env['FAULT_ROUNDS'] ?? defaults.rounds);
  describeMysql(name, () => {
    let f: FaultDeployment;
    beforeAll(async () => {
      f = await createFaultDeployment(defaults.orphans, defaults.stale);
    }, 120_000);
    afterAll(async () => {
      await f?.d.cleanup();
    });
    it(
      `${rounds} round(s) of ${kills} SIGKILL(s) per command; invariants hold after each, re-runs converge, undo restores`,
      async () => {
        const journalDir = join(f.d.dir, 'kills');
        mkdirSync(journalDir, { recursive: true });
        const stats = await killCampaign(f, {
          rounds,
          killsPerCommand: Math.ceil(kills / rounds),
          journalDir,
          log: (s) => console.log(s),
          dryRunStdout: async (argv) => {
            const r = await runBin(argv);
            return { code: r.code, stdout: r.stdout };
          },
        });
        console.log(`fault figures: ${JSON.stringify({ ...stats, violations: stats.violations.length })}`);
        expect(stats.violations).toEqual([]);
        expect(stats.changesPlanned).toBeGreaterThan(0);
        expect(stats.kills).toBeGreaterThan(0);
      },
      defaults.timeoutMs,
    );
  });
}
