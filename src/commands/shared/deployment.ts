// Open the deployment named by the configuration for one command run.
import type { CommandContext } from '../../cli/spec.js';
import { openDeployment, type Deployment } from '../../operations/open-deployment.js';
import type { JournalSettings } from '../../operations/journal.js';

export async function useDeployment<T>(ctx: CommandContext, fn: (d: Deployment) => Promise<T>): Promise<T> {
  return openDeployment(ctx.loadConfig(), fn, deploymentReport(ctx));
}

/** Where opening the deployment reports: an unknown alembic head's warning, and with --debug each database's release. */
export function deploymentReport(ctx: CommandContext): { warn: (line: string) => void; debug?: (line: string) => void } {
  const line = (text: string): void => {
    ctx.stderr.write(text + '\n');
  };
  return ctx.debug ? { warn: line, debug: line } : { warn: line };
}

/**
 * Where an applying command journals (--journal, else [nova_reconcile]
 * journal_dir) and how long it waits for the apply lock; the journal's path
 * goes to stderr as soon as the file exists, before the first write.
 */
export function journalSettings(ctx: CommandContext, journalPath: string | undefined): JournalSettings {
  const { journalDir, lockTimeout } = ctx.loadConfig().reconcile;
  return { journalPath, journalDir, lockTimeout, onJournal: (path) => ctx.stderr.write(`journal: ${path}\n`) };
}
