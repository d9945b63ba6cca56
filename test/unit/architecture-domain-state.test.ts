// The domain is pure: what a function returns depends on its arguments only.
// So no module in src/domain/ keeps state between calls: no top-level let or
// var, and no top-level collection or object that the module mutates.
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { listTs } from '../helpers/source-files.js';

const DOMAIN = fileURLToPath(new URL('../../src/domain', import.meta.url));

/** Module-level state being removed, as `path: name`; an entry that no longer exists fails, so the list only shrinks. */
const ALLOWLIST: readonly string[] = [];

const MUTATORS = new Set(['set', 'add', 'delete', 'clear', 'push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'copyWithin']);

/** A top-level initializer that makes a mutable container: `new Map()`, `new Set()`, `[]`, `{}`. */
function isContainer(init: ts.Expression | undefined): boolean {
  if (init === undefined) return false;
  while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
  if (ts.isNewExpression(init)) return ts.isIdentifier(init.expression) && /^(Map|Set|WeakMap|WeakSet|Array)$/.test(init.expression.text);
  return ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init);
}

/** The names the file mutates in place: `x.set(...)`, `x.push(...)`, `x[k] = v`, `x.p = v`, `x++`. */
function mutatedNames(sf: ts.SourceFile): Set<string> {
  const out = new Set<string>();
  const target = (e: ts.Expression): string | undefined => {
    if ((ts.isPropertyAccessExpression(e) || ts.isElementAccessExpression(e)) && ts.isIdentifier(e.expression)) return e.expression.text;
    return undefined;
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && ts.isIdentifier(node.expression.expression)) {
      if (MUTATORS.has(node.expression.name.text)) out.add(node.expression.expression.text);
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && node.operatorToken.kind <= ts.SyntaxKind.LastAssignment) {
      const name = target(node.left);
      if (name !== undefined) out.add(name);
    }
    if (ts.isPrefixUnaryExpression(node) || ts.isPostfixUnaryExpression(node)) {
      const name = target(node.operand);
      if (name !== undefined) out.add(name);
    }
    if (ts.isDeleteExpression(node)) {
      const name = target(node.expression);
      if (name !== undefined) out.add(name);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Every piece of module-level state of a file, by name. */
export function moduleState(path: string, text: string): string[] {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const mutated = mutatedNames(sf);
  const out: string[] = [];
  for (const stmt of sf.statements) {
    if (!ts.isVariableStatement(stmt)) continue;
    const isConst = (stmt.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const d of stmt.declarationList.declarations) {
      const name = d.name.getText(sf);
      if (!isConst || (isContainer(d.initializer) && mutated.has(name))) out.push(name);
    }
  }
  return out;
}

const STATE = listTs(DOMAIN).flatMap((full) => {
  const path = relative(DOMAIN, full).split(sep).join('/');
  return moduleState(path, readFileSync(full, 'utf8')).map((name) => `${path}: ${name}`);
});

describe('no module-level mutable state in src/domain', () => {
  it('finds the state in a sample that keeps it', () => {
    const sample = [
      'let calls = 0;',
      'const cache = new Map<string, number>();',
      'const seen: string[] = [];',
      'const fixed = new Set(["a"]);',
      'export function f(k: string): number { seen.push(k); cache.set(k, 1); return fixed.has(k) ? 1 : 0; }',
    ].join('\n');
    expect(moduleState('sample.ts', sample)).toEqual(['calls', 'cache', 'seen']);
  });

  it('no module keeps state, but for the allowlisted', () => {
    expect(STATE.filter((s) => !ALLOWLIST.includes(s))).toEqual([]);
  });

  it('every allowlisted entry still exists (the list only shrinks)', () => {
    expect(ALLOWLIST.filter((s) => !STATE.includes(s))).toEqual([]);
  });
});
