// The layering rules of docs/ARCHITECTURE.md, checked mechanically on the
// source text: who may import what, who may touch `process`, and who may build
// a query. Each rule is also run on an inline sample that breaks it, so a
// detector that silently matches nothing fails here too.
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listTs } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

interface SourceFile {
  /** Relative to src/, with forward slashes: `operations/run-plan.ts`. */
  readonly path: string;
  /** The text with comments blanked out (a comment may name what the code may not do). */
  readonly code: string;
}

/**
 * Block comments and line comments removed. A `//` inside a string (a URL)
 * is kept: only one at a line's start or after whitespace counts as a comment.
 */
export function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|\s)\/\/.*$/gm, '$1');
}

const SOURCES: readonly SourceFile[] = listTs(SRC).map((full) => ({
  path: relative(SRC, full).split(sep).join('/'),
  code: stripComments(readFileSync(full, 'utf8')),
}));

const inFolder = (f: SourceFile, folder: string): boolean => f.path.startsWith(`${folder}/`);

/** The module specifiers of every import and re-export, with `type` when the import is type-only. */
export function importsOf(code: string): Array<{ readonly from: string; readonly typeOnly: boolean }> {
  const out: Array<{ from: string; typeOnly: boolean }> = [];
  for (const m of code.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm))
    out.push({ from: m[3] ?? '', typeOnly: m[2] !== undefined });
  for (const m of code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ from: m[1] ?? '', typeOnly: false });
  return out;
}

/** Resolve a relative specifier of `file` to a path under src/ (`db/time.js`); bare specifiers stay as they are. */
function resolved(file: string, from: string): string {
  if (!from.startsWith('.')) return from;
  const parts = file.split('/').slice(0, -1);
  for (const p of from.split('/')) {
    if (p === '..') parts.pop();
    else if (p !== '.') parts.push(p);
  }
  return parts.join('/');
}

const DRIVERS = /^(knex|better-sqlite3|mysql2)(\/|$)/;

/** Lines that touch the process (only main.ts may: it hands the rest a CommandContext). */
export function processUses(code: string): string[] {
  return code.split('\n').filter((l) => /\bprocess\.[A-Za-z_]|['"](node:)?process['"]|\bglobalThis\.process\b/.test(l));
}

/**
 * Lines that build a knex query: calling the knex instance, a transaction or
 * a database handle with a table name (`knex('t')`, `trx('t')`, `db.knex('t')`,
 * `q('t')`), or a builder method that nothing else in src/ has. `.update(` counts
 * only with an object or a column name, since hashes and progress lines have
 * an `update(value)` of their own.
 */
export function queryBuilding(code: string): string[] {
  const table = /\b(knex|trx|tx|db|q|qb|api|cell|placement)\s*\(\s*['"`][A-Za-z_]+['"`]\s*\)/;
  const methods = /\.(where|whereIn|whereNot|whereNull|whereNotNull|orWhere|select|insert|del|forUpdate|forShare|raw|onConflict|orderBy|groupBy|count)\s*\(/;
  const update = /\.update\s*\(\s*[{'"]/;
  return code.split('\n').filter((l) => table.test(l) || methods.test(l) || update.test(l));
}

const NOT_VALUES = new Set(['return', 'of', 'in', 'case', 'yield', 'await', 'typeof', 'else', 'do', 'throw', 'new', 'void', 'delete', 'instanceof']);

/**
 * Lines that read a command's raw options record (commander's CommandOptions)
 * other than through the readers of cli/options.ts: an index by a string
 * literal on a value (`o['host']`, `raw["apply"]`, `ctx.options['x']`), or any
 * index on a record named `o` or `raw` (`o[key]`). Type lookups
 * (`AuditMetrics['cells']`, capitalised), array literals after a keyword
 * (`of ['a', 'b']`) and numeric indexes (`args[0]`) are not reads.
 */
export function rawOptionReads(code: string): string[] {
  return code
    .split('\n')
    .filter((l) => [...l.matchAll(/(?<![\w$])([a-z_$][\w$]*)\s*(?:\?\.)?\[\s*(['"`]?)/g)].some((m) => !NOT_VALUES.has(m[1] ?? '') && (m[2] !== '' || m[1] === 'o' || m[1] === 'raw')));
}

function violations(files: readonly SourceFile[], check: (f: SourceFile) => string[]): string[] {
  return files.flatMap((f) => check(f).map((v) => `${f.path}: ${v.trim()}`));
}

describe('layers (docs/ARCHITECTURE.md)', () => {
  it('reads the source tree', () => {
    // A wrong path would make every rule below pass on nothing.
    expect(SOURCES.length).toBeGreaterThan(100);
    expect(SOURCES.map((f) => f.path)).toContain('main.ts');
    expect(SOURCES.map((f) => f.path)).toContain('db/deployment-databases.ts');
  });

  it('domain/ is pure: it imports nothing outside domain/ but errors.ts, and no node:* or package', () => {
    const bad = violations(
      SOURCES.filter((f) => inFolder(f, 'domain')),
      (f) => importsOf(f.code).flatMap((i) => (resolved(f.path, i.from).startsWith('domain/') || resolved(f.path, i.from) === 'errors.js' ? [] : [i.from])),
    );
    expect(bad).toEqual([]);
  });

  it('only main.ts touches process', () => {
    expect(violations(SOURCES.filter((f) => f.path !== 'main.ts'), (f) => processUses(f.code))).toEqual([]);
  });

  it('only db/ and sandbox/ import knex or a driver (elsewhere: `import type` of knex, which emits no code)', () => {
    const bad = violations(
      SOURCES.filter((f) => !inFolder(f, 'db') && !inFolder(f, 'sandbox')),
      (f) => importsOf(f.code).flatMap((i) => (DRIVERS.test(i.from) && !(i.typeOnly && i.from === 'knex') ? [i.from] : [])),
    );
    expect(bad).toEqual([]);
  });

  it('no file under commands/ imports from db/ (commands go through operations/)', () => {
    const bad = violations(
      SOURCES.filter((f) => inFolder(f, 'commands')),
      (f) => importsOf(f.code).flatMap((i) => (resolved(f.path, i.from).startsWith('db/') ? [i.from] : [])),
    );
    expect(bad).toEqual([]);
  });

  it('no file outside db/ builds a query (sandbox/ writes the rows of the databases it builds)', () => {
    expect(violations(SOURCES.filter((f) => !inFolder(f, 'db') && !inFolder(f, 'sandbox')), (f) => queryBuilding(f.code))).toEqual([]);
  });

  it('folders point one way: only main.ts imports dispatch/; cli/ (the toolkit) imports neither commands/ nor dispatch/; only cli/, commands/ and dispatch/ import cli/', () => {
    const into = (f: SourceFile, folder: string): string[] => importsOf(f.code).flatMap((i) => (resolved(f.path, i.from).startsWith(`${folder}/`) ? [i.from] : []));
    expect(violations(SOURCES.filter((f) => f.path !== 'main.ts' && !inFolder(f, 'dispatch')), (f) => into(f, 'dispatch'))).toEqual([]);
    expect(violations(SOURCES.filter((f) => inFolder(f, 'cli')), (f) => [...into(f, 'commands'), ...into(f, 'dispatch')])).toEqual([]);
    expect(violations(SOURCES.filter((f) => !['cli', 'commands', 'dispatch'].some((d) => inFolder(f, d)) && f.path !== 'main.ts'), (f) => into(f, 'cli'))).toEqual([]);
    // The rule sees the folders it names.
    expect(SOURCES.filter((f) => inFolder(f, 'dispatch')).map((f) => f.path).sort()).toEqual(['dispatch/command-index.ts', 'dispatch/command-modules.ts', 'dispatch/program.ts', 'dispatch/registry.ts']);
  });

  it('commands do not import each other: what two commands share lives in commands/shared/, which imports no command', () => {
    const commandImports = (f: SourceFile): string[] =>
      importsOf(f.code).flatMap((i) => {
        const to = resolved(f.path, i.from);
        return to.startsWith('commands/') && !to.startsWith('commands/shared/') ? [i.from] : [];
      });
    expect(violations(SOURCES.filter((f) => inFolder(f, 'commands')), commandImports)).toEqual([]);
    // The rule sees the shared folder and a command that uses it.
    expect(SOURCES.some((f) => f.path === 'commands/shared/plan-command.ts')).toBe(true);
    expect(commandImports({ path: 'commands/x.ts', code: "import { a } from './audit.js';\nimport { b } from './shared/deployment.js';" })).toEqual(['./audit.js']);
    expect(commandImports({ path: 'commands/shared/x.ts', code: "import { a } from '../cell-v2-prune-host-mappings.js';" })).toEqual(['../cell-v2-prune-host-mappings.js']);
  });

  it("no file under commands/ indexes the raw options: each command's parse reads them with cli/options.ts", () => {
    expect(violations(SOURCES.filter((f) => inFolder(f, 'commands')), (f) => rawOptionReads(f.code))).toEqual([]);
  });
});

describe('the detectors fail on samples that break the rules', () => {
  it('finds query building', () => {
    const sample = [
      "const rows = await trx('services').select('*');",
      "await db.knex('allocations').count({ n: '*' }).first();",
      "const cn = await lock(q('compute_nodes'));",
      "await builder.where({ uuid }).forUpdate();",
      "await trx.raw('SELECT 1');",
      "await t.update({ host: 'x' });",
      "await t.whereIn('id', ids);",
      "await t.insert(rows);",
    ];
    expect(queryBuilding(sample.join('\n'))).toEqual(sample);
  });

  it('does not take hashes, progress lines, joins or comments for queries', () => {
    const sample = ['hash.update(key);', "progress.update(p.done, 'x');", "names.join(', ');", "Array.from({ length: 3 });", "const url = 'mysql://db/nova'; // select('*')"];
    expect(queryBuilding(stripComments(sample.join('\n')))).toEqual([]);
    expect(queryBuilding(stripComments("/* trx('services').select('*') */\nconst x = 1;"))).toEqual([]);
  });

  it('finds reads of the raw options record', () => {
    const sample = [
      "const host = typeof o['host'] === 'string' ? o['host'] : undefined;",
      'if (raw["apply"] === true) apply();',
      'const given = (key) => o[key] !== undefined && o[key] !== false;',
      'const value = raw[key];',
      "const format = options['format'];",
      "const json = ctx.options?.['json'];",
    ];
    expect(rawOptionReads(sample.join('\n'))).toEqual(sample);
  });

  it('does not take numeric indexes, array literals, type lookups or comments for option reads', () => {
    const sample = ['const first = args[0];', "for (const k of ['apply', 'journal']) check(k);", "return ['a', 'b'];", "const m: AuditMetrics['cells'] = [];", 'const row = rows[i];', "path: ['audit'],"];
    expect(rawOptionReads(stripComments(sample.join('\n')))).toEqual([]);
    expect(rawOptionReads(stripComments("// typeof o['x']\nconst x = stringOption(raw, 'x');"))).toEqual([]);
  });

  it('finds imports, type-only imports and dynamic imports', () => {
    const code = "import { withDeployment } from '../db/deployment.js';\nimport type { Knex } from 'knex';\nexport { x } from './x.js';\nconst m = await import('mysql2/promise');";
    expect(importsOf(code)).toEqual([
      { from: '../db/deployment.js', typeOnly: false },
      { from: 'knex', typeOnly: true },
      { from: './x.js', typeOnly: false },
      { from: 'mysql2/promise', typeOnly: false },
    ]);
    expect(resolved('commands/deployment.ts', '../db/deployment.js')).toBe('db/deployment.js');
    expect(resolved('domain/a.ts', './b.js')).toBe('domain/b.js');
  });

  it('finds process', () => {
    expect(processUses("const e = process.env['X'];\nimport { argv } from 'node:process';\nconst s = 'no cells to process.';")).toEqual([
      "const e = process.env['X'];",
      "import { argv } from 'node:process';",
    ]);
  });
});
