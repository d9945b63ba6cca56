// One status line for long runs: on a terminal it is redrawn in place
// (\r, erase line), at most every REDRAW_MS; when stderr is not a terminal
// nothing is shown unless --progress asks for it, and then one plain line is
// written at most every LINE_MS, so a cron log stays short. The line says
// the phase, done/total and the rate.
import type { Reporter } from '../operations/reporter.js';
import type { RunContext } from './context.js';

const REDRAW_MS = 100;
const LINE_MS = 2000;

export interface ProgressLine {
  /** A new phase (e.g. "reading cell 'cell1'"); total undefined when unknown. */
  phase(name: string, total?: number): void;
  /** Progress in the current phase. */
  update(done: number, extra?: string): void;
  /** Erase the line on a terminal (before other output is written). */
  clear(): void;
}

export interface ProgressOptions {
  /** --progress was given. */
  readonly forced: boolean;
  /** Injected clock (tests of the throttle); Date.now by default. */
  readonly now?: () => number;
}

export function createProgress(ctx: Pick<RunContext, 'stderr' | 'stderrIsTty' | 'stderrColumns'>, opts: ProgressOptions): ProgressLine {
  const tty = ctx.stderrIsTty;
  const enabled = tty || opts.forced;
  const now = opts.now ?? Date.now;
  let phase = '';
  let total: number | undefined;
  let started = now();
  let lastDraw = 0;
  let drawn = false;
  let lastDone = 0;
  let lastExtra = '';

  const text = (): string => {
    const elapsed = (now() - started) / 1000;
    const parts = [phase];
    if (total !== undefined) parts.push(`${lastDone}/${total}`);
    else if (lastDone > 0) parts.push(String(lastDone));
    if (lastDone > 0 && elapsed >= 0.5) parts.push(`${formatRate(lastDone / elapsed)}/s`);
    if (lastExtra !== '') parts.push(lastExtra);
    return parts.join('  ');
  };
  const draw = (force: boolean): void => {
    if (!enabled) return;
    const t = now();
    if (!force && t - lastDraw < (tty ? REDRAW_MS : LINE_MS)) return;
    lastDraw = t;
    if (tty) {
      const width = Math.max(20, (ctx.stderrColumns ?? 80) - 1);
      const line = text();
      ctx.stderr.write(`\r\x1b[K${line.length > width ? line.slice(0, width - 1) + '…' : line}`);
      drawn = true;
    } else {
      ctx.stderr.write(`${text()}\n`);
    }
  };
  return {
    phase(name, t) {
      phase = name;
      total = t;
      started = now();
      lastDone = 0;
      lastExtra = '';
      draw(true);
    },
    update(done, extra = '') {
      lastDone = done;
      lastExtra = extra;
      draw(total !== undefined && done === total);
    },
    clear() {
      if (tty && drawn) ctx.stderr.write('\r\x1b[K');
      drawn = false;
    },
  };
}

/** The run's reporter: its lines on stderr (the progress line erased first), --debug's only with --debug, and one progress line. */
export function createReporter(ctx: Pick<RunContext, 'stderr' | 'stderrIsTty' | 'stderrColumns'>, opts: { readonly debug: boolean; readonly forced: boolean }): Reporter {
  const line = createProgress(ctx, { forced: opts.forced });
  const warn = (text: string): void => {
    line.clear();
    ctx.stderr.write(text + '\n');
  };
  return {
    warn,
    ...(opts.debug ? { debug: warn } : {}),
    phase: (name, total) => line.phase(name, total),
    update: (done, detail) => line.update(done, detail),
    clear: () => line.clear(),
  };
}

function formatRate(perSecond: number): string {
  return perSecond >= 100 ? String(Math.round(perSecond)) : perSecond.toFixed(1);
}
