// No module of src/ imports itself through others, type-only imports
// included: a circle hides which of two rooms holds a thing (docs/ARCHITECTURE.md),
// and a value circle can leave a binding undefined at load time. The detector
// is also run on samples that hold a circle, so one that finds nothing fails.
import { readFileSync } from 'node:fs';
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listTs } from '../helpers/source-files.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** The files under src/ that a file imports or re-exports from (relative specifiers only), as paths under src/. */
function localImports(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
  const specifiers = [
    ...[...code.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.[^'"]+)['"]/gm)].map((m) => m[1] ?? ''),
    ...[...code.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? ''),
  ];
  return specifiers.map((from) => {
    const parts = file.split('/').slice(0, -1);
    for (const p of from.split('/')) {
      if (p === '..') parts.pop();
      else if (p !== '.') parts.push(p);
    }
    return parts.join('/').replace(/\.js$/, '.ts');
  });
}

/** The strongly connected groups of more than one file (Tarjan), each sorted; a file importing itself counts too. */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string | undefined;
    do {
      w = stack.pop() as string;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return circles;
}

describe('import circles', () => {
  it('src/ has none, type-only imports included', () => {
    const graph = new Map(
      listTs(SRC).map((full) => {
        const file = relative(SRC, full).split(sep).join('/');
        return [file, localImports(file, readFileSync(full, 'utf8'))] as const;
      }),
    );
    expect(graph.size).toBeGreaterThan(100);
    expect(importCircles(graph)).toEqual([]);
  });

  it('the detector finds a type-only circle through a subfolder, and a file importing itself', () => {
    const graph = new Map([
      ['sandbox/scenarios.ts', localImports('sandbox/scenarios.ts', "import { a } from './scenarios/empty.js';")],
      ['sandbox/scenarios/empty.ts', localImports('sandbox/scenarios/empty.ts', "import type { Scenario } from '../scenarios.js';")],
      ['domain/self.ts', localImports('domain/self.ts', "export { x } from './self.js';")],
      ['domain/free.ts', localImports('domain/free.ts', "// import { y } from './self.js';")],
    ]);
    expect(importCircles(graph)).toEqual([['sandbox/scenarios.ts', 'sandbox/scenarios/empty.ts'], ['domain/self.ts']]);
  });
});
