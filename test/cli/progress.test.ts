// Progress of long runs (issue 18 item 4): on a terminal one status line is
// redrawn in place (\r, erase line) with the phase, done/total and the rate;
// piped, nothing but the final count, unless --progress asks for throttled
// plain lines. The terminal is a real pseudo-terminal: script(1) from
// util-linux runs the built binary on one.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/cli.js';
import { createTestDeployment, type TestDeployment } from '../helpers/test-deployment.js';
import { generateCloud } from '../../src/sandbox/scale-cloud.js';

const ERASE = '\r\x1b[K';

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Runs the binary on a pseudo-terminal (stdout to /dev/null: only stderr's bytes come back) and returns what the terminal received. */
function onTerminal(args: readonly string[]): { status: number | null; screen: string } {
  const cmd = [process.execPath, BIN, ...args].map(shellQuote).join(' ') + ' >/dev/null; echo "[exit $?]"';
  const r = spawnSync('script', ['-qfc', cmd, '/dev/null'], { encoding: 'utf8', input: '', env: { PATH: process.env['PATH'], HOME: '/nonexistent-home', TERM: 'xterm' }, timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, screen: r.stdout };
}

describe('progress on a terminal and piped', () => {
  let d: TestDeployment;
  let units: number;
  beforeAll(async () => {
    d = await createTestDeployment('sqlite', 'empty', 'prg');
    await generateCloud(
      { api: d.dbs.api, cells: [d.dbs.cells.cell1, d.dbs.cells.cell2], cellIds: [d.dbs.cellIds.cell1, d.dbs.cellIds.cell2], placement: d.dbs.placement },
      { hostsPerCell: 4, nodesPerHost: 15, failedOverFraction: 0.5 },
    );
    const plan = await runBin([...d.args, 'compute_node', 'rebalance', '--format', 'json']);
    units = (JSON.parse(plan.stdout) as { units: unknown[] }).units.length;
    expect(units).toBeGreaterThanOrEqual(30);
  }, 120_000);
  afterAll(async () => {
    await d?.cleanup();
  });

  it('piped: audit prints nothing on stderr; with --progress, plain throttled lines and no terminal codes', async () => {
    const quiet = await runBin([...d.args, 'audit']);
    expect(quiet.code).toBe(3);
    expect(quiet.stderr).toBe('');
    const asked = await runBin([...d.args, 'audit', '--progress']);
    expect(asked.code).toBe(3);
    expect(asked.stderr).not.toContain('\r');
    expect(asked.stderr).not.toContain('\x1b');
    expect(asked.stderr).toMatch(/^reading host mappings from the API database/m);
    expect(asked.stderr).toMatch(/^auditing {2}\d+\/\d+/m);
    expect(asked.stdout).toBe(quiet.stdout);
  }, 60_000);

  it('on a terminal: audit shows its phases on one line, redrawn in place and erased before it ends', () => {
    const { screen } = onTerminal([...d.args, 'audit']);
    expect(screen).toContain('[exit 3]');
    expect(screen).toContain(`${ERASE}reading host mappings from the API database`);
    expect(screen).toMatch(/\r\x1b\[Kauditing {2}0\/\d+/);
    expect(screen).toMatch(/\r\x1b\[Kauditing {2}(\d+)\/\1 {2}done/);
    // Every draw starts with \r + erase: the line never scrolls.
    const beforeExit = screen.slice(0, screen.indexOf('[exit'));
    expect(beforeExit.replace(/\r\n$/, '')).not.toContain('\n');
    // The last thing drawn is the erase: the terminal is left clean.
    expect(beforeExit.endsWith(ERASE)).toBe(true);
  }, 60_000);

  it('on a terminal: an apply of many units updates one line in place (not a line per unit), then prints its count', () => {
    const { screen } = onTerminal([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(screen).toContain('[exit 4]');
    expect(screen).toContain(`${ERASE}applying compute_node rebalance  0/${units}`);
    // The rate shows once half a second has passed (test/unit/progress.test.ts): a quick apply has none.
    expect(screen).toMatch(new RegExp(`\\r\\x1b\\[Kapplying compute_node rebalance {2}${units}/${units} {2}(?:[0-9.]+/s {2})?${units} applied`));
    // Cut to the terminal's width (80 without a size), never wrapped onto a second line.
    const draws = screen.split(ERASE).filter((t) => t.startsWith('applying'));
    expect(draws.length).toBeGreaterThanOrEqual(2);
    for (const draw of draws) expect(draw.length).toBeLessThanOrEqual(80);
    const lines = screen.split('\n');
    // journal:, done N/N, undo:, [exit]: four lines for the whole apply, whatever the number of units.
    expect(lines.filter((l) => l !== '')).toHaveLength(4);
    expect(screen).toMatch(new RegExp(`\\r\\x1b\\[Kdone ${units}/${units} unit\\(s\\): ${units} applied, 0 already done, 0 skipped\\r\\nundo: .* undo \\S+ --apply\\r\\n`));
  }, 60_000);

  it('a re-run with nothing to do draws nothing and prints nothing on stderr, on a terminal or piped', async () => {
    const journal = /journal: (\S+)/.exec(onTerminal([...d.args, 'compute_node', 'rebalance', '--apply']).screen);
    expect(journal).toBeNull();
    const again = await runBin([...d.args, 'compute_node', 'rebalance', '--apply']);
    expect(again.code).toBe(0);
    expect(again.stderr).toBe('');
  }, 60_000);

  it('piped, with --progress: the undo-able apply shows plain progress lines; without it only journal and count', async () => {
    const fresh = await createTestDeployment('sqlite', 'empty', 'prg2');
    try {
      await generateCloud(
        { api: fresh.dbs.api, cells: [fresh.dbs.cells.cell1, fresh.dbs.cells.cell2], cellIds: [fresh.dbs.cellIds.cell1, fresh.dbs.cellIds.cell2], placement: fresh.dbs.placement },
        { hostsPerCell: 4, nodesPerHost: 15, failedOverFraction: 0.5 },
      );
      const piped = await runBin([...fresh.args, 'compute_node', 'rebalance', '--apply']);
      expect(piped.code).toBe(4);
      const journal = /^journal: (\S+)$/m.exec(piped.stderr)?.[1] ?? '';
      expect(piped.stderr).toMatch(new RegExp(`^journal: \\S+\ndone ${units}/${units} unit\\(s\\): ${units} applied, 0 already done, 0 skipped\nundo: .* undo ${journal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} --apply\n$`));
      expect((await runBin([...fresh.args, 'undo', journal, '--apply'])).code).toBe(4);
      const asked = await runBin([...fresh.args, '--progress', 'compute_node', 'rebalance', '--apply']);
      expect(asked.code).toBe(4);
      expect(asked.stderr).not.toContain('\r');
      expect(asked.stderr).toMatch(new RegExp(`^applying compute_node rebalance {2}0/${units}$`, 'm'));
      expect(asked.stderr).toMatch(new RegExp(`^applying compute_node rebalance {2}${units}/${units} .*${units} applied`, 'm'));
    } finally {
      await fresh.cleanup();
    }
  }, 120_000);
});
