// Suggested commands keep the user's configuration: a finding, a refusal or
// an error hint that says `nova-reconcile compute_node rebalance` must run
// against the deployment the user named with --config-file/--config-dir, not
// against the default search path (which may name another cloud, or none).
// The domain writes suggestions as plain command lines; this is where the
// options are put back, in command-line order (a --config-dir is read at its
// position), each path quoted for a POSIX shell so the line can be pasted.
import type { ConfigSource } from '../config/types.js';
import type { Finding } from '../domain/audit/index.js';
import type { Plan } from '../domain/plan.js';
import { shellWord } from '../domain/text-and-maps.js';

/**
 * A command of this tool or of nova-manage (which reads the same nova.conf)
 * at the start of a command line: its name followed by one of its categories.
 */
const COMMAND = /\b(nova-reconcile|nova-manage)(?= (?:cell_v2|placement|db|api_db|compute_node|audit|undo)\b)/g;

/** `--config-file F --config-dir D ...` as given, or '' with the default search. */
export function configArguments(sources: readonly ConfigSource[]): string {
  return sources.map((s) => `${s.kind === 'file' ? '--config-file' : '--config-dir'} ${shellWord(s.path)}`).join(' ');
}

/** The command line that undoes a journal, as this process was started and configured (an interrupt's summary). */
export function undoCommandLine(self: string | undefined, sources: readonly ConfigSource[], journalPath: string): string {
  const config = configArguments(sources);
  return `${self ?? 'nova-reconcile'}${config === '' ? '' : ` ${config}`} undo ${shellWord(journalPath)} --apply`;
}

/**
 * What a run stopped by a signal says on stderr: `head` (what was done and
 * what was not started), the journal and the command that undoes it (when
 * something was journaled), and how to finish.
 */
export function formatInterruptSummary(head: string, journalPath: string | undefined, undoLabel: string, finish: string, self: string | undefined, sources: readonly ConfigSource[]): string {
  const lines = [head];
  if (journalPath !== undefined) {
    lines.push(`  journal: ${journalPath}`);
    lines.push(`  ${undoLabel}: ${undoCommandLine(self, sources, journalPath)}`);
  }
  lines.push(`  to finish: ${finish}`);
  return lines.join('\n') + '\n';
}

export function withConfigArguments(text: string, sources: readonly ConfigSource[]): string {
  if (sources.length === 0) return text;
  const args = configArguments(sources);
  return text.replace(COMMAND, (name) => `${name} ${args}`);
}

export function findingsWithConfigArguments(findings: readonly Finding[], sources: readonly ConfigSource[]): Finding[] {
  return findings.map((f) => ({ ...f, suggestion: withConfigArguments(f.suggestion, sources) }));
}

/** The plan with every refusal's suggestion completed (the units carry no commands). */
export function planWithConfigArguments<P extends Plan>(plan: P, sources: readonly ConfigSource[]): P {
  if (sources.length === 0 || plan.refused.length === 0) return plan;
  return { ...plan, refused: plan.refused.map((r) => (r.suggestion === undefined ? r : { ...r, suggestion: withConfigArguments(r.suggestion, sources) })) };
}
