// Colour on a terminal, never in a pipe, a file or a cron mail. The level is
// decided here from the run's environment rather than by chalk's own probe of
// `process` (which ignores NO_COLOR): NO_COLOR (any non-empty value, see
// no-color.org) turns it off, FORCE_COLOR turns it on even when piped (as
// chalk, node and npm read it: 0/false off, 1/true/empty basic, 2 256, 3
// truecolor), TERM=dumb turns it off on a terminal.
import type { ChalkInstance } from 'chalk';
import type { RunContext } from './context.js';

/**
 * chalk, loaded only by a run that colours (loadColour): most runs (piped,
 * cron, --format json) do not need it at start-up.
 */
let chalkModule: typeof import('chalk') | undefined;

/** Load chalk when this run's stdout is coloured; call before paletteFor. */
export async function loadColour(ctx: Pick<RunContext, 'env' | 'stdoutIsTty'>): Promise<void> {
  if (chalkModule === undefined && colourLevel(ctx.env, ctx.stdoutIsTty) > 0) chalkModule = await import('chalk');
}

export type ColourLevel = 0 | 1 | 2 | 3;

export function colourLevel(env: Readonly<Record<string, string | undefined>>, stdoutIsTty: boolean): ColourLevel {
  const force = env['FORCE_COLOR'];
  if (force !== undefined) {
    if (force === '' || force === 'true') return 1;
    if (force === 'false') return 0;
    const n = Number.parseInt(force, 10);
    if (Number.isFinite(n)) return Math.max(0, Math.min(3, n)) as ColourLevel;
  }
  if ((env['NO_COLOR'] ?? '') !== '') return 0;
  if (!stdoutIsTty || env['TERM'] === 'dumb') return 0;
  return 1;
}

/** How findings' kinds and plans' verbs look on this run's stdout. */
export interface Palette {
  readonly enabled: boolean;
  /** An audit finding's kind, by how much it matters. */
  kind(kind: string): string;
  /** A plan line's verb: destructive red, moving yellow, creating green. */
  verb(text: string): string;
  /** A skipped or refused marker. */
  warn(text: string): string;
  dim(text: string): string;
}

export function paletteFor(ctx: Pick<RunContext, 'env' | 'stdoutIsTty'>): Palette {
  const level = colourLevel(ctx.env, ctx.stdoutIsTty);
  // Without loadColour (a caller that never coloured before) the output stays plain rather than failing.
  if (level === 0 || chalkModule === undefined) return PLAIN;
  const c: ChalkInstance = new chalkModule.Chalk({ level });
  return {
    enabled: true,
    kind: (kind) => {
      const s = severityOf(kind);
      return s === 'error' ? c.red.bold(kind) : s === 'warning' ? c.yellow(kind) : c.cyan(kind);
    },
    verb: (text) => {
      const style = verbStyle(text);
      return style === 'remove' ? c.red(text) : style === 'move' ? c.yellow(text) : style === 'create' ? c.green(text) : text;
    },
    warn: (text) => c.yellow.bold(text),
    dim: (text) => c.dim(text),
  };
}

const PLAIN: Palette = { enabled: false, kind: (k) => k, verb: (t) => t, warn: (t) => t, dim: (t) => t };

/**
 * error: the cloud misbehaves now (instances unschedulable or double-booked);
 * warning: state to repair; info: worth a look, possibly harmless.
 */
export function severityOf(kind: string): 'error' | 'warning' | 'info' {
  if (/^(duplicate-compute-node|wrong-cell-mapping|allocation-on-other-node|instance-without-allocation|provider-name-conflict|mapping-host-has-instances)$/.test(kind)) return 'error';
  if (/^(suspect-|node-of-dead-service)/.test(kind)) return 'info';
  return 'warning';
}

function verbStyle(text: string): 'remove' | 'move' | 'create' | 'other' {
  if (/^(soft-delete|delete|remove)\b/.test(text)) return 'remove';
  if (/^(move|re-key|re-home|rename|replace)\b/.test(text)) return 'move';
  if (/^(create|restore|set|check)\b/.test(text)) return 'create';
  return 'other';
}
