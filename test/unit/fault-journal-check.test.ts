// The kill campaign's journal invariant (test/faults/helpers.ts checkJournals):
// a cut last line is accepted only in the journal of a run it killed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJournal, type JournalChange } from '../../src/operations/journal.js';
import { checkJournals } from '../faults/helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'nrc-journal-check-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const header = { type: 'header', format: 'nova-reconcile-journal/1', command: 'test', startedAt: '2026-12-05 00:00:00', deployment: { api: 'x', cells: [] } } as const;
const change = (seq: number): JournalChange => ({ type: 'change', seq, unit: `u${seq}`, target: { db: 'placement' }, change: {} as JournalChange['change'], rows: [] });

/** A journal of two uncommitted changes; `cut` drops the last line's newline and half of it. */
function journal(name: string, cut: boolean, committed = false): string {
  const path = join(dir, name);
  const w = openJournal(path, header);
  w.append(change(1));
  if (committed) w.append({ type: 'commit', seq: 1 });
  w.append(change(2));
  w.close();
  if (cut) {
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.slice(0, text.length - 20));
  }
  return path;
}

describe('checkJournals', () => {
  it('accepts whole journals, killed or not', () => {
    const j = journal('whole.jsonl', false);
    expect(checkJournals([j], new Set())).toEqual([]);
    expect(checkJournals([j], new Set([j]))).toEqual([]);
  });

  it('accepts a cut last line only in the journal of a killed run', () => {
    const j = journal('cut.jsonl', true);
    expect(checkJournals([j], new Set([j]))).toEqual([]);
    const bad = checkJournals([j], new Set());
    expect(bad).toHaveLength(1);
    expect(bad[0]).toContain('truncated');
  });

  it('reports damage before the last line, killed or not', () => {
    const j = journal('middle.jsonl', false);
    const lines = readFileSync(j, 'utf8').split('\n');
    lines[1] = (lines[1] ?? '').slice(0, 10);
    writeFileSync(j, lines.join('\n'));
    expect(checkJournals([j], new Set([j]))).toHaveLength(1);
  });

  it('reports a committed change without row images', () => {
    const j = journal('committed.jsonl', true, true);
    expect(checkJournals([j], new Set([j]))).toEqual([`${j}: committed change 1 without row images`]);
  });

  it('skips a journal that was never written', () => {
    expect(checkJournals([join(dir, 'absent.jsonl')], new Set())).toEqual([]);
  });
});
