// What a command's run returns: data, not output. The dispatcher hands it to
// writeResult (render-result.ts), which prints it and turns it into the exit code.
import type { Finding } from '../domain/audit/index.js';
import type { CellRec } from '../domain/model.js';
import type { Palette } from './colour.js';
import type { Listing, ListingFormat } from './listing.js';
import type { RunPlanOutcome } from '../operations/run-plan.js';

/** What a command's JSON result holds: any document, as long as it says whether it changed something. */
export type JsonDocument = { readonly changed: boolean } & Readonly<Record<string, unknown>>;

/** Text already in its final form (nova-manage's own lines, a report); `after` goes to stderr once stdout is written. */
export interface ReportResult {
  readonly kind: 'report';
  readonly text: string;
  readonly exitCode: number;
  readonly after?: string;
}

/** One JSON document on stdout (printed with schema_version and snake_case keys). */
export interface DocumentResult {
  readonly kind: 'document';
  readonly document: JsonDocument;
  readonly exitCode: number;
  readonly after?: string;
}

/** Rows for -f table, value or csv; `highlight` colours a table cell. */
export interface ListingResult {
  readonly kind: 'listing';
  readonly listing: Listing;
  readonly format: 'table' | 'value' | 'csv';
  readonly highlight?: (palette: Palette, header: string, text: string) => string;
  readonly exitCode: number;
}

/** The audit's findings as a table, value or csv. */
export interface FindingsResult {
  readonly kind: 'findings';
  readonly findings: readonly Finding[];
  readonly cells: readonly CellRec[];
  readonly format: 'table' | 'value' | 'csv';
  readonly columns: readonly string[] | undefined;
  readonly exitCode: number;
}

/** What was printed before a failure (nova-manage prints its lines, then fails), and the failure, reported as any error. */
export interface FailedResult {
  readonly kind: 'failed';
  readonly text: string;
  readonly error: unknown;
}

/** A plan command's outcome and what the command adds to it (render-plan-outcome.ts). */
export interface PlanOutcomeResult {
  readonly kind: 'plan';
  readonly outcome: RunPlanOutcome;
  readonly format: ListingFormat;
  readonly columns: readonly string[] | undefined;
  readonly maxCount: number | undefined;
  readonly planOut: string | undefined;
  /** The command applies all or nothing (compute_node move): a dry run does not promise to leave the refused items alone. */
  readonly allOrNothing: boolean;
  /** The command's own JSON fields. */
  readonly extras: object;
  /** Lines after the plan or the apply's result (what to do next). */
  readonly followUp: string;
  /** The command that undoes what was applied, with the user's --config-file/--config-dir. */
  readonly undo: string | undefined;
  /** An interrupted apply's summary (stderr). */
  readonly interruptSummary: string | undefined;
  /** stderr lines once something was applied (exit 4 or 5). */
  readonly appliedNote: string | undefined;
}

export type CommandResult = ReportResult | DocumentResult | ListingResult | FindingsResult | FailedResult | PlanOutcomeResult;

export function report(text: string, exitCode: number, after?: string): ReportResult {
  return after === undefined || after === '' ? { kind: 'report', text, exitCode } : { kind: 'report', text, exitCode, after };
}

export function jsonResult(document: JsonDocument, exitCode: number, after?: string): DocumentResult {
  return after === undefined || after === '' ? { kind: 'document', document, exitCode } : { kind: 'document', document, exitCode, after };
}

/** Lines as nova-manage prints them, each ending in a newline. */
export function lines(texts: readonly string[]): string {
  return texts.map((l) => l + '\n').join('');
}
