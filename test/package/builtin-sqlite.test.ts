// The sandbox on Node's built-in SQLite (node:sqlite, Node.js 22.16 and
// later), the driver an operator's install has when better-sqlite3 is not
// beside it (issue 38: the tarball depends on nothing that compiles).
//
// The whole demo (`npm run demo`: discover_hosts both ways, audits, every
// cleanup and repair with --apply, undo, on several scenarios) is run on
// node:sqlite and must pass as it does on better-sqlite3; then, when a
// Node.js on PATH loads the checkout's better-sqlite3 (.ci/run's LTS step:
// Debian's Node.js 20, which built it), the two runs must print the same,
// byte for byte but for the temporary folder, the journals' time-stamped
// names and the node command that runs the binary.
//
// Node.js 20 has no built-in SQLite: there this file is skipped, and .ci/run
// runs it on the LTS Node.js (test/package).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodeSqlite } from '../../src/db/node-sqlite.js';
import { REPO, run, type Run } from '../helpers/repo-export.js';

const BUILTIN_SQLITE = 'module' in loadNodeSqlite();

/** A Node.js (this one first, then each on PATH) in which the checkout's better-sqlite3 loads, if any. */
function nodeWithBetterSqlite3(): string | undefined {
  let onPath: string[] = [];
  try {
    onPath = execFileSync('which', ['-a', 'node'], { encoding: 'utf8' }).split('\n').filter((l) => l !== '');
  } catch {
    onPath = [];
  }
  const probe = `new (require(${JSON.stringify(join(REPO, 'node_modules', 'better-sqlite3'))}))(':memory:').close()`;
  for (const node of [process.execPath, ...onPath]) {
    try {
      execFileSync(node, ['-e', probe], { stdio: 'ignore' });
      return node;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** The demo, with its sandboxes under `tmp` (it keeps them for the reader: the test removes them). */
function demo(node: string, driver: 'node:sqlite' | 'better-sqlite3', tmp: string): Run {
  // The demo runs bin/nova-reconcile through its shebang: `node` on PATH is this one.
  return run(node, [join(REPO, 'scripts', 'demo.mjs')], {
    cwd: REPO,
    env: { PATH: `${dirname(node)}:${process.env['PATH'] ?? ''}`, HOME: '/nonexistent-home', TMPDIR: tmp, NOVA_RECONCILE_SQLITE_DRIVER: driver },
    timeoutMs: 300_000,
  });
}

/** What differs between two runs of the demo by nature, not by driver. */
function comparable(text: string): string {
  return text
    .replace(/\/[^\s'"]*\/nova-reconcile-demo-[A-Za-z0-9]+/g, 'DIR')
    .replace(/-\d{8}T\d{6}Z-[0-9a-f]+\.jsonl/g, '-TIME.jsonl')
    .replace(/\S*\bnode (?=\S*bin\/nova-reconcile\b)/g, 'NODE ');
}

describe.runIf(BUILTIN_SQLITE)("the demo on Node.js's built-in SQLite", () => {
  let builtin: Run;
  let tmp: string;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'nova-reconcile-test-demo-'));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('passes every step', () => {
    builtin = demo(process.execPath, 'node:sqlite', tmp);
    expect(builtin.stderr).toBe('');
    expect(builtin.code).toBe(0);
    expect(builtin.stdout).toContain('undo');
  }, 300_000);

  const reference = nodeWithBetterSqlite3();
  it.runIf(reference !== undefined)(`prints what it prints on better-sqlite3 (under ${reference ?? 'no Node.js that loads it'})`, () => {
    const better = demo(reference as string, 'better-sqlite3', tmp);
    expect(better.code).toBe(0);
    expect(comparable(builtin.stdout)).toBe(comparable(better.stdout));
    expect(builtin.stdout).not.toBe(comparable(builtin.stdout));
  }, 300_000);

  // In CI the LTS step has Debian's Node.js 20 on PATH, which built the checkout's better-sqlite3.
  it.runIf(reference === undefined && process.env['CI'] === 'true')('finds a Node.js on PATH that loads better-sqlite3, to compare with', () => {
    expect(reference).toBeDefined();
  });
});
