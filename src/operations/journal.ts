// The journal: JSON lines, one header, then for every change its row images,
// written and fsynced BEFORE the change's transaction commits, and a commit
// marker after. Undo reads it back. It never contains a password: the header
// names databases by their redacted display form only.
import { closeSync, fsync, fsyncSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import type { Change, DbRef } from '../domain/plan.js';
import type { RowImage } from '../db/row-images.js';
import type { ReleaseJson } from '../domain/nova-release.js';
import { ReconcileError } from '../errors.js';
import { describeFileError, makeDirectories, readTextFile } from '../files.js';
import { utcNowString } from '../db/time.js';

const fsyncAsync = promisify(fsync);

/** Where an applying command journals and how long it waits for the apply lock ([nova_reconcile] journal_dir, lock_timeout). */
export interface JournalSettings {
  /** --journal, or undefined for a timestamped file in journalDir. */
  readonly journalPath: string | undefined;
  readonly journalDir: string;
  readonly lockTimeout: number;
  /** Called once the journal exists, so its path reaches stderr before the first write. */
  readonly onJournal?: (path: string) => void;
}

export const JOURNAL_FORMAT = 'nova-reconcile-journal/1';

/** A journal of 30,000 changed rows with before- and after-images is about 150 MB. */
const JOURNAL_MAX_BYTES = 512 * 1024 * 1024;

export interface JournalHeader {
  readonly type: 'header';
  readonly format: typeof JOURNAL_FORMAT;
  readonly command: string;
  readonly startedAt: string;
  /** Identifies the deployment: the API database (redacted) and the cell uuids. */
  readonly deployment: DeploymentIdentity;
}

/** The first line of every journal: this format, the command, now, and the deployment it was written for. */
export function journalHeader(command: string, deployment: DeploymentIdentity): JournalHeader {
  return { type: 'header', format: JOURNAL_FORMAT, command, startedAt: utcNowString(), deployment };
}

export interface DeploymentIdentity {
  /** The API database as the writer reached it (redacted URL): for messages, and for journals older than the fields below. */
  readonly api: string;
  readonly cells: readonly string[];
  /**
   * What binds a journal to the deployment rather than to an address: the API
   * database's name (SQLite: its file) and each cell mapping's created_at.
   * Absent in journals written before they existed.
   */
  readonly apiDatabase?: string;
  readonly cellsCreatedAt?: Readonly<Record<string, string | null>>;
  /** What the databases' alembic heads said when it was written (absent in older journals and plan files). */
  readonly release?: ReleaseJson;
}

/**
 * Whether a journal's deployment is this one. The same deployment reached
 * through another Galera node, a VIP or a host name instead of an IP has the
 * same API database name and the same cell mappings, each created at the
 * same second; another deployment differs in one of them. A journal without
 * those fields (older, or of a deployment without cells) falls back to the
 * API database's address.
 */
export function sameDeployment(there: DeploymentIdentity, here: DeploymentIdentity): boolean {
  const thereCells = there.cellsCreatedAt === undefined ? [] : Object.entries(there.cellsCreatedAt);
  if (there.apiDatabase !== undefined && thereCells.length > 0 && here.apiDatabase !== undefined && here.cellsCreatedAt !== undefined) {
    const hereCells = here.cellsCreatedAt;
    return there.apiDatabase === here.apiDatabase && thereCells.every(([uuid, at]) => Object.hasOwn(hereCells, uuid) && hereCells[uuid] === at);
  }
  return there.api === here.api && there.cells.every((c) => here.cells.includes(c));
}

export interface JournalChange {
  readonly type: 'change';
  readonly seq: number;
  readonly unit: string;
  readonly target: DbRef;
  readonly change: Change;
  readonly rows: readonly RowImage[];
}

export interface JournalCommit {
  readonly type: 'commit';
  readonly seq: number;
}

/**
 * A change the server certainly rolled back (a deadlock victim, a Galera
 * certification failure, a compare-and-swap that missed after the change was
 * journaled): it never happened, and undo never restores it. Its re-run is
 * journaled under a new seq.
 */
export interface JournalRollback {
  readonly type: 'rollback';
  readonly seq: number;
}

export type JournalEntry = JournalHeader | JournalChange | JournalCommit | JournalRollback;

export interface JournalWriter {
  readonly path: string;
  /** The seq of the next change: 1, 2, 3... (a re-run attempt takes a new one). */
  nextSeq(): number;
  append(entry: JournalEntry): void;
  /**
   * Append a change and resolve once it is on disk, without blocking the
   * event loop: the units that an apply runs side by side overlap their
   * fsyncs (and their round trips) instead of waiting for each other's.
   */
  appendDurably(entry: JournalChange): Promise<void>;
  /**
   * Append several entries in one write, fsynced once unless they are all
   * commit markers (see append): the changes of one transaction that commits
   * several of them (an apply batch), or their markers.
   */
  appendAll(entries: readonly JournalEntry[]): void;
  /** appendAll of changes, resolving once they are on disk, without blocking the event loop. */
  appendAllDurably(entries: readonly JournalChange[]): Promise<void>;
  close(): void;
}

/** `<dir>/<command>-<UTC timestamp>-<random>.jsonl` */
export function defaultJournalPath(dir: string, command: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const slug = command.replace(/[^A-Za-z0-9]+/g, '-');
  return join(dir, `${slug}-${stamp}-${Math.random().toString(16).slice(2, 8)}.jsonl`);
}

export function openJournal(path: string, header: JournalHeader): JournalWriter {
  let fd: number;
  try {
    makeDirectories(dirname(path));
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    throw new ReconcileError('config', `cannot create the journal ${path}: ${describeFileError(err)}`, {
      hint: 'pass --journal FILE, or set [nova_reconcile] journal_dir to a writable directory',
      cause: err,
    });
  }
  let seq = 0;
  const writer: JournalWriter = {
    path,
    nextSeq() {
      seq += 1;
      return seq;
    },
    append(entry) {
      writeSync(fd, JSON.stringify(entry) + '\n');
      // A change's images must be on disk before its transaction commits. A
      // commit marker need not be: undo decides from the rows' current state,
      // so a lost marker costs nothing, and skipping its fsync halves the
      // journal's cost per change. A rollback marker is fsynced: without it
      // a rolled-back attempt would look like a change whose COMMIT was cut.
      if (entry.type !== 'commit') fsyncSync(fd);
    },
    async appendDurably(entry) {
      writeSync(fd, JSON.stringify(entry) + '\n');
      await fsyncAsync(fd);
    },
    appendAll(entries) {
      if (entries.length === 0) return;
      writeLines(fd, entries);
      if (entries.some((e) => e.type !== 'commit')) fsyncSync(fd);
    },
    async appendAllDurably(entries) {
      if (entries.length === 0) return;
      writeLines(fd, entries);
      await fsyncAsync(fd);
    },
    close() {
      closeSync(fd);
    },
  };
  writer.append(header);
  return writer;
}

/**
 * One write per line, as append does: Linux stops a write to a file between
 * pages when the process is SIGKILLed, so a kill that lands in one large
 * write of many lines (the fault campaign's often did) leaves the last of
 * them incomplete, and undo then needs --allow-truncated. A line is one
 * short write, which a kill nearly never cuts (docs/RELIABILITY.md,
 * "Truncated journals").
 */
function writeLines(fd: number, entries: readonly JournalEntry[]): void {
  for (const e of entries) writeSync(fd, JSON.stringify(e) + '\n');
}

export interface ReadJournal {
  readonly header: JournalHeader;
  /** The changes that may have committed: those marked rolled back are left out. */
  readonly changes: readonly JournalChange[];
  readonly committed: ReadonlySet<number>;
}

/**
 * Parse and validate a journal; any corruption or truncation is refused with
 * one line. A process killed while appending leaves an incomplete LAST line;
 * that entry's transaction never committed (a change line is fsynced before
 * its commit; a commit marker is informational), so with `allowTruncatedTail`
 * the line is dropped and the rest is used. That is an explicit choice of the
 * operator (`undo --allow-truncated`): a journal cut short by a copy or a full
 * disk looks the same, and undoing part of it silently would be a guess.
 */
export function readJournal(path: string, options: { readonly allowTruncatedTail?: boolean } = {}): ReadJournal {
  let text: string;
  try {
    text = readTextFile(path, JOURNAL_MAX_BYTES);
  } catch (err) {
    throw new ReconcileError('input', `cannot read the journal ${path}: ${describeFileError(err)}`, { cause: err });
  }
  if (text.length === 0) throw new ReconcileError('input', `the journal ${path} is empty`);
  if (!text.endsWith('\n') && options.allowTruncatedTail !== true)
    throw new ReconcileError('input', `the journal ${path} is truncated (its last line is incomplete); refusing to undo from it`, {
      hint: 'if the run that wrote it was killed, `undo --allow-truncated` drops that uncommitted last entry and undoes the rest',
    });
  const complete = text.endsWith('\n') ? text : text.slice(0, text.lastIndexOf('\n') + 1);
  if (complete.length === 0) throw new ReconcileError('input', `the journal ${path} is truncated inside its header; refusing to undo from it`);
  const lines = complete.slice(0, -1).split('\n');
  const entries: unknown[] = lines.map((line, i) => {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      throw new ReconcileError('input', `the journal ${path} is corrupt at line ${i + 1}: not JSON`);
    }
  });
  const header = entries[0];
  if (!isObject(header) || header['type'] !== 'header' || header['format'] !== JOURNAL_FORMAT || !isObject(header['deployment']))
    throw new ReconcileError('input', `${path} is not a nova-reconcile journal (no ${JOURNAL_FORMAT} header)`);
  const changes: JournalChange[] = [];
  const committed = new Set<number>();
  const rolledBack = new Set<number>();
  entries.slice(1).forEach((e, i) => {
    if (isObject(e) && e['type'] === 'change' && typeof e['seq'] === 'number' && Array.isArray(e['rows']) && isObject(e['target']) && isObject(e['change'])) {
      const problem = targetProblem(e['target']) ?? (e['rows'] as unknown[]).map(rowImageProblem).find((p) => p !== undefined);
      if (problem !== undefined) throw new ReconcileError('input', `the journal ${path} is corrupt at line ${i + 2}: change ${e['seq']}: ${problem}; refusing to undo from it`);
      changes.push(e as unknown as JournalChange);
    } else if (isObject(e) && e['type'] === 'commit' && typeof e['seq'] === 'number') {
      committed.add(e['seq']);
    } else if (isObject(e) && e['type'] === 'rollback' && typeof e['seq'] === 'number') {
      rolledBack.add(e['seq']);
    } else {
      throw new ReconcileError('input', `the journal ${path} is corrupt at line ${i + 2}: unexpected entry`);
    }
  });
  return { header: header as unknown as JournalHeader, changes: changes.filter((c) => !rolledBack.has(c.seq)), committed };
}

/** What is wrong with a change's database, if anything: the API, placement, or a cell named by its uuid. */
function targetProblem(target: Record<string, unknown>): string | undefined {
  if (target['db'] === 'api' || target['db'] === 'placement') return undefined;
  if (target['db'] === 'cell' && typeof target['cellUuid'] === 'string' && target['cellUuid'] !== '') return undefined;
  return 'its database is none of the API, placement, or a cell named by uuid';
}

/**
 * What is wrong with one row image of a journal line, if anything. Undo
 * writes these images back with the key as the WHERE clause, so a hand-edited
 * or damaged line must not reach the database: an empty key would make the
 * restore an UPDATE or DELETE of the whole table, a value that is an object
 * or a list would be bound as something else than one value, and a table
 * name is used as an identifier. Every image the tool writes passes.
 */
function rowImageProblem(img: unknown, index: number): string | undefined {
  const at = `row image ${index + 1}`;
  if (!isObject(img)) return `${at} is not an object`;
  const { table, key, before, after } = img;
  if (typeof table !== 'string' || !/^[a-z][a-z0-9_]*$/.test(table)) return `${at} names no table`;
  if (!isObject(key) || Object.keys(key).length === 0) return `${at} (${table}) has no key`;
  for (const [column, value] of Object.entries(key))
    if (!((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'string')) return `${at} (${table}) has a key ${column} that is not a number or a string`;
  if (before === null && after === null) return `${at} (${table}) has neither a before- nor an after-image`;
  for (const [name, image] of [['before', before], ['after', after]] as const) {
    if (image === null) continue;
    if (!isObject(image)) return `${at} (${table}) has a ${name}-image that is not a row`;
    for (const [column, value] of Object.entries(image))
      if (!(value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) return `${at} (${table}) has a ${name}-image column ${column} that is not a number, a string or null`;
    for (const [column, value] of Object.entries(key))
      if (column in image && String(image[column]) !== String(value)) return `${at} (${table}) has a ${name}-image of another row than its key names (${column})`;
  }
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
