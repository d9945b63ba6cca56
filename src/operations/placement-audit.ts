// placement audit: read a snapshot (without --delete the cells are judged one
// at a time: read/placement-audit.ts; with --resource_provider the
// allocations are streamed one consumer at a time: openPlacementAudit), find the
// orphaned allocations by nova's definition (src/domain/audit/nova-orphaned-allocations.ts),
// and with --delete (on a whole read) remove them
// the way nova-manage walks them: provider by provider, consumer by consumer,
// each one compare-and-swap transaction journaled before it commits (so
// `undo` restores it), under the apply lock. As in nova, a provider on which
// a delete failed is finished, and then the run stops: later providers are
// neither audited nor touched.
import type { Deployment } from '../db/deployment-databases.js';
import { applyChange } from '../db/apply-change.js';
import type { Database } from '../db/connect.js';
import { describeDriverError } from '../db/driver-errors.js';
import { countConsumerAllocations } from '../db/placement/allocation-counts.js';
import { CasConflict } from '../db/row-images.js';
import { writeJournaled, WriteFailed } from './journaled-write.js';
import { utcNowString } from '../db/time.js';
import { auditPlacementAllocations, ConsumerSplit, openPlacementAudit, orphansOf, type AuditedProvider, type OrphanedConsumer, type PlacementAuditReport } from '../domain/audit/nova-orphaned-allocations.js';
import { failedAfterChanges, ReconcileError } from '../errors.js';
import { deploymentIdentity, withApplyLock } from './apply-plan.js';
import { journalHeader, defaultJournalPath, openJournal, type JournalSettings, type JournalWriter } from './journal.js';
import { streamAllocations } from './read/placement.js';
import { PLACEMENT_AUDIT_READ, PLACEMENT_AUDIT_STREAMED_READ } from './read/recipes.js';
import { readSnapshot } from './read/snapshot.js';
import { auditPlacementByCell } from './read/placement-audit.js';

export const PLACEMENT_AUDIT_COMMAND = 'placement audit';

export interface PlacementAuditRunOptions extends JournalSettings {
  readonly providerUuid: string | undefined;
  readonly allResourceClasses: boolean;
  readonly delete: boolean;
  /** Ctrl-C or SIGTERM while deleting: no consumer's allocations are deleted after it, the one in flight finishes (as heal_allocations). */
  readonly signal?: AbortSignal;
  readonly holdInterrupts?: () => () => void;
}

export type OrphanOutcome =
  | { readonly status: 'found' }
  /** alreadyGone: another writer removed the share first; nova counts that (a 404) as deleted too. */
  | { readonly status: 'deleted'; readonly alreadyGone: boolean }
  | { readonly status: 'failed'; readonly reason: string };

export interface ProviderAudit {
  readonly provider: AuditedProvider;
  readonly orphans: ReadonlyArray<{ readonly orphan: OrphanedConsumer; readonly outcome: OrphanOutcome }>;
}

export type PlacementAuditResult =
  | { readonly kind: 'unknown-provider'; readonly providerUuid: string }
  | {
      readonly kind: 'audited';
      readonly delete: boolean;
      readonly allResourceClasses: boolean;
      /**
       * In audit order; with a failed delete, up to and including that
       * provider. The report without --delete holds only the providers with
       * something to say (see providersChecked).
       */
      readonly providers: readonly ProviderAudit[];
      /** How many providers placement lists (and the audit went through). */
      readonly providersChecked: number;
      /** The provider after which the run stopped because a delete failed. */
      readonly stoppedAt: string | undefined;
      readonly journalPath: string | undefined;
      /** Set when a signal stopped the deletes: its reason, and how many orphans were left as they were. */
      readonly interrupted?: { readonly reason: string; readonly notStarted: number };
    };

export async function runPlacementAudit(deployment: Deployment, options: PlacementAuditRunOptions): Promise<PlacementAuditResult> {
  const auditOptions = { providerUuid: options.providerUuid, allResourceClasses: options.allResourceClasses };
  // What --delete acts on is read whole: the allocations beside the cells, so that an instance being scheduled is seen
  // as near as possible to its allocations (reading them after the cells would widen that window by the whole read).
  const audit = async (): Promise<PlacementAuditReport> => auditPlacementAllocations(await readSnapshot(deployment, PLACEMENT_AUDIT_READ), auditOptions);
  // The report alone reads the allocations after the cells, never whole: for the whole deployment cell by cell
  // (read/placement-audit.ts: memory bounded by the largest cell); for one provider, the cells whole and the
  // allocations one consumer at a time. A server scheduled meanwhile can show as an orphan, as in `audit` (--help says so).
  const report = async (): Promise<PlacementAuditReport & { providersChecked?: number }> => {
    if ((options.providerUuid ?? '') === '') return auditPlacementByCell(deployment, auditOptions);
    const streamed = openPlacementAudit(await readSnapshot(deployment, PLACEMENT_AUDIT_STREAMED_READ), auditOptions);
    if (streamed.kind === 'unknown-provider') return streamed;
    try {
      await streamAllocations(deployment, (consumerUuid, rows) => streamed.consumer(consumerUuid, rows));
      return streamed.finish();
    } catch (err) {
      if (!(err instanceof ConsumerSplit)) throw err;
      // An id the collation takes for another's (an accent, a trailing space) split a consumer: judge the whole snapshot instead.
      return auditPlacementAllocations(await readSnapshot(deployment, PLACEMENT_AUDIT_READ), auditOptions);
    }
  };
  if (!options.delete) {
    const found = await report();
    if (found.kind === 'unknown-provider') return found;
    const providers = found.providers.map((provider) => ({ provider, orphans: provider.orphans.map((orphan) => ({ orphan, outcome: FOUND })) }));
    return { kind: 'audited', delete: false, allResourceClasses: found.allResourceClasses, providers, providersChecked: found.providersChecked ?? providers.length, stoppedAt: undefined, journalPath: undefined };
  }
  // An unknown provider or nothing to delete ends here, without the lock (on
  // SQLite the lock is a file beside the API database, which a failed or empty
  // run must not create).
  const first = await audit();
  if (first.kind === 'unknown-provider') return first;
  if (orphansOf(first).length === 0) return deleteOrphans(deployment, first, options);
  // Audited again under the lock, so a second --delete run waits and then sees what the first left.
  return withApplyLock(deployment, options.lockTimeout, async () => {
    const report = await audit();
    if (report.kind === 'unknown-provider') return report;
    return deleteOrphans(deployment, report, options);
  });
}

const FOUND: OrphanOutcome = { status: 'found' };

async function deleteOrphans(deployment: Deployment, report: Extract<PlacementAuditReport, { kind: 'audited' }>, options: PlacementAuditRunOptions): Promise<PlacementAuditResult> {
  const base = { kind: 'audited', delete: true, allResourceClasses: report.allResourceClasses, providersChecked: report.providers.length } as const;
  if (orphansOf(report).length === 0) {
    return { ...base, providers: report.providers.map((provider) => ({ provider, orphans: [] })), stoppedAt: undefined, journalPath: undefined };
  }
  const db = await deployment.placement();
  const path = options.journalPath ?? defaultJournalPath(options.journalDir, PLACEMENT_AUDIT_COMMAND, new Date());
  const journal = openJournal(path, journalHeader(PLACEMENT_AUDIT_COMMAND, await deploymentIdentity(deployment)));
  options.onJournal?.(journal.path);
  const providers: ProviderAudit[] = [];
  let stoppedAt: string | undefined;
  /** Deletes committed so far: a failure after one says changed. */
  let deleted = 0;
  let interrupted: { reason: string; notStarted: number } | undefined;
  let left = orphansOf(report).length;
  const release = options.holdInterrupts?.();
  try {
    for (const provider of report.providers) {
      const orphans: Array<{ orphan: OrphanedConsumer; outcome: OrphanOutcome }> = [];
      for (const orphan of provider.orphans) {
        if (options.signal?.aborted === true) {
          interrupted = { reason: String(options.signal.reason), notStarted: left };
          break;
        }
        left -= 1;
        const outcome = await deleteOrphan(db, journal, provider, orphan);
        if (outcome.status === 'deleted' && !outcome.alreadyGone) deleted += 1;
        orphans.push({ orphan, outcome });
      }
      providers.push({ provider, orphans });
      // A failed delete stops the run after its provider, as in nova; a signal stops it at once (and says so, in either case).
      if (orphans.some((o) => o.outcome.status === 'failed')) stoppedAt = provider.uuid;
      if (stoppedAt !== undefined || interrupted !== undefined) break;
    }
  } catch (err) {
    // An error that already says changed (a cut COMMIT) keeps saying it.
    throw failedAfterChanges(err, deleted > 0);
  } finally {
    journal.close();
    release?.();
  }
  return { ...base, providers, stoppedAt, journalPath: journal.path, ...(interrupted === undefined ? {} : { interrupted }) };
}

async function deleteOrphan(db: Database, journal: JournalWriter, provider: AuditedProvider, orphan: OrphanedConsumer): Promise<OrphanOutcome> {
  const change = orphan.change;
  try {
    await writeJournaled(db, () => journal, async (trx) => ({
      value: undefined,
      entry: { unit: `orphaned-allocations:${provider.uuid}:${orphan.consumerUuid}`, target: change.target, change, rows: await applyChange(trx, db.dialect, change, utcNowString()) },
    }));
    return { status: 'deleted', alreadyGone: false };
  } catch (err) {
    if (!(err instanceof CasConflict)) {
      const committing = err instanceof WriteFailed && err.committing;
      const cause = err instanceof WriteFailed ? err.cause : err;
      throw new ReconcileError('connection', `failed ${committing ? 'committing the delete of' : 'deleting'} allocations of consumer ${orphan.consumerUuid} in the ${db.label}: ${describeDriverError(cause)}; ${committing ? 'whether that delete committed is unknown' : 'that delete was rolled back'}`, {
        hint: 'the journal lists the deletes committed before; re-run the command to finish',
        cause,
        ...(committing ? { changed: true } : {}),
      });
    }
    // Gone already (another writer got there first): nova's DELETE counts a 404 as done, and so do we.
    if ((await countConsumerAllocations(db.knex, orphan.consumerUuid, provider.id)) === 0) return { status: 'deleted', alreadyGone: true };
    return { status: 'failed', reason: err.message };
  }
}
