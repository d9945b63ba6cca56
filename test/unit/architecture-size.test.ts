// Size rules: a file in src/ holds one thing (at most 450 lines) and a function
// does one step (at most 80 lines). The allowlist holds files being reworked
// at their current size; it may only shrink, so an entry that already fits fails.
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { listTs } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 80;

/** Files over a limit for now: path -> their size in lines, or their longest function's. */
const FILE_ALLOWLIST: Readonly<Record<string, number>> = {};
const FUNCTION_ALLOWLIST: Readonly<Record<string, number>> = {};

const FILES = listTs(SRC).map((full) => ({
  path: relative(SRC, full).split(sep).join('/'),
  text: readFileSync(full, 'utf8'),
}));

const lineCount = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** Every function-like node with a body, as `name (line N)` and its length in lines. */
export function functionLengths(path: string, text: string): Array<{ readonly name: string; readonly lines: number }> {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const out: Array<{ name: string; lines: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = node.name !== undefined ? node.name.getText(sf) : nameFromParent(node, sf);
      out.push({ name: `${named} (line ${start + 1})`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function nameFromParent(node: ts.Node, sf: ts.SourceFile): string {
  const p = node.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText(sf);
  return '<anonymous>';
}

describe('size rules', () => {
  it('measures a function that breaks the rule', () => {
    const body = Array.from({ length: MAX_FUNCTION_LINES }, (_, i) => `  const a${i} = ${i};`).join('\n');
    const [f] = functionLengths('sample.ts', `export const long = (): void => {\n${body}\n};\n`);
    expect(f).toEqual({ name: 'long (line 1)', lines: MAX_FUNCTION_LINES + 2 });
  });

  it(`no file in src/ is over ${MAX_FILE_LINES} lines`, () => {
    const over = FILES.filter((f) => !(f.path in FILE_ALLOWLIST) && lineCount(f.text) > MAX_FILE_LINES).map(
      (f) => `${f.path}: ${lineCount(f.text)} lines`,
    );
    expect(over).toEqual([]);
  });

  it(`no function in src/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const over = FILES.filter((f) => !(f.path in FUNCTION_ALLOWLIST)).flatMap((f) =>
      functionLengths(f.path, f.text)
        .filter((fn) => fn.lines > MAX_FUNCTION_LINES)
        .map((fn) => `${f.path}: ${fn.name}, ${fn.lines} lines`),
    );
    expect(over).toEqual([]);
  });

  it('the allowlists only shrink: an entry is still over its limit and no larger than recorded', () => {
    const byPath = new Map(FILES.map((f) => [f.path, f.text]));
    const stale: string[] = [];
    for (const [path, recorded] of Object.entries(FILE_ALLOWLIST)) {
      const text = byPath.get(path);
      const lines = text === undefined ? 0 : lineCount(text);
      if (lines <= MAX_FILE_LINES || lines > recorded) stale.push(`${path}: ${lines} lines (allowlisted at ${recorded})`);
    }
    for (const [path, recorded] of Object.entries(FUNCTION_ALLOWLIST)) {
      const text = byPath.get(path);
      const longest = text === undefined ? 0 : Math.max(0, ...functionLengths(path, text).map((f) => f.lines));
      if (longest <= MAX_FUNCTION_LINES || longest > recorded)
        stale.push(`${path}: longest function ${longest} lines (allowlisted at ${recorded})`);
    }
    expect(stale).toEqual([]);
  });
});
