import { describe, expect, it } from 'vitest';
import { createProgress } from '../../src/cli/progress.js';

function harness(tty: boolean, forced: boolean): { out: string[]; clock: { t: number }; line: ReturnType<typeof createProgress> } {
  const out: string[] = [];
  const clock = { t: 0 };
  const line = createProgress({ stderr: { write: (s) => void out.push(s) }, stderrIsTty: tty, stderrColumns: 40 }, { forced, now: () => clock.t });
  return { out, clock, line };
}

describe('the progress line', () => {
  it('on a terminal: redrawn in place, at most every 100 ms, the last count always, cut to the width, erased by clear()', () => {
    const { out, clock, line } = harness(true, false);
    line.phase('applying x', 1000);
    for (let i = 1; i <= 1000; i++) {
      clock.t = i; // 1 ms per unit: one second in all
      line.update(i, `${i} applied`);
    }
    line.clear();
    expect(out[0]).toBe('\r\x1b[Kapplying x  0/1000');
    // The phase, about one draw per 100 ms, and the final count.
    expect(out.length).toBeGreaterThanOrEqual(10);
    expect(out.length).toBeLessThanOrEqual(14);
    expect(out.at(-2)).toMatch(/^\r\x1b\[Kapplying x {2}1000\/1000 {2}1000\/s/);
    for (const o of out.slice(0, -1)) expect(o.length - 4).toBeLessThanOrEqual(39);
    expect(out.at(-1)).toBe('\r\x1b[K');
  });

  it('piped: nothing, unless forced; then plain lines at most every 2 s', () => {
    const quiet = harness(false, false);
    quiet.line.phase('auditing', 5);
    quiet.line.update(5);
    quiet.line.clear();
    expect(quiet.out).toEqual([]);
    const { out, clock, line } = harness(false, true);
    line.phase('auditing', 10);
    for (let i = 1; i <= 10; i++) {
      clock.t = i * 1000;
      line.update(i);
    }
    line.clear();
    expect(out.every((o) => o.endsWith('\n') && !o.includes('\r'))).toBe(true);
    expect(out[0]).toBe('auditing  0/10\n');
    expect(out.at(-1)).toMatch(/^auditing {2}10\/10 {2}1\.0\/s\n$/);
    expect(out.length).toBeLessThanOrEqual(7);
  });
});
