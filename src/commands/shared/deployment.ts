// Open the deployment named by the configuration for one command run.
import type { CommandContext } from '../../cli/spec.js';
import { openDeployment, type Deployment } from '../../operations/open-deployment.js';
import type { JournalSettings } from '../../operations/journal.js';
import { deploymentReport } from '../../operations/reporter.js';

export async function useDeployment<T>(ctx: CommandContext, fn: (d: Deployment) => Promise<T>): Promise<T> {
  return openDeployment(ctx.loadConfig(), fn, deploymentReport(ctx.reporter));
}

/**
 * Where an applying command journals (--journal, else [nova_reconcile]
 * journal_dir) and how long it waits for the apply lock; the journal's path
 * goes to stderr as soon as the file exists, before the first write.
 */
export function journalSettings(ctx: CommandContext, journalPath: string | undefined): JournalSettings {
  const { journalDir, lockTimeout } = ctx.loadConfig().reconcile;
  return { journalPath, journalDir, lockTimeout, onJournal: (path) => ctx.reporter.warn(`journal: ${path}`) };
}
