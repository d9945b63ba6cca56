// The V8 code cache of the drivers' bundle (src/db/code-cache.ts) is only an
// optimisation: a cache that does not belong to the source, or to this V8
// and its flags, is never used, and the module loads all the same. Each load
// runs in a fresh `node` (an isolate that compiled the source once would
// take it from its own in-memory cache, not from the file).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';

const CODE_CACHE = fileURLToPath(new URL('../../dist/src/db/code-cache.js', import.meta.url));
const DRIVERS = fileURLToPath(new URL('../../dist/src/bundle/db-drivers.cjs', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'nova-reconcile-code-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MODULE = join(dir, 'module.cjs');
const CACHE = `${MODULE}.v8-cache`;
const SOURCE = "const { join } = require('node:path');\nmodule.exports = { add: (a, b) => a + b, where: join(__dirname, 'x'), file: __filename };\n";

function node(script: string, flags: readonly string[] = []): string {
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
}

function writeCache(): void {
  node(`import { writeCodeCache } from ${JSON.stringify(CODE_CACHE)}; writeCodeCache(${JSON.stringify(MODULE)}, ${JSON.stringify(CACHE)}, (m) => m.add(1, 2));`);
}

function load(flags: readonly string[] = [], file = MODULE): { cache: string; add: number; where: string; file: string } {
  const out = node(
    `import { loadCommonJs } from ${JSON.stringify(CODE_CACHE)};
     const r = loadCommonJs(${JSON.stringify(file)}, ${JSON.stringify(`${file}.v8-cache`)});
     const m = r.exports;
     process.stdout.write(JSON.stringify({ cache: r.cache, add: m.add === undefined ? null : m.add(2, 3), where: m.where, file: m.file }));`,
    flags,
  );
  return JSON.parse(out) as { cache: string; add: number; where: string; file: string };
}

describe('loadCommonJs and its code cache', () => {
  beforeEach(() => {
    writeFileSync(MODULE, SOURCE);
    rmSync(CACHE, { force: true });
  });

  it('runs the file as require would, from the cache the build wrote', () => {
    expect(load()).toEqual({ cache: 'absent', add: 5, where: join(dir, 'x'), file: MODULE });
    writeCache();
    expect(load()).toEqual({ cache: 'accepted', add: 5, where: join(dir, 'x'), file: MODULE });
  });

  it('ignores the cache of another source, even one of the same length', () => {
    writeCache();
    writeFileSync(MODULE, SOURCE.replace('a + b', 'a * b'));
    expect(load()).toMatchObject({ cache: 'mismatch', add: 6 });
  });

  it('ignores a damaged cache, one of another V8, and a file that is no cache', () => {
    writeCache();
    const good = readFileSync(CACHE);
    const newline = good.indexOf(0x0a);

    const flipped = Buffer.from(good);
    flipped[newline + 40] = (flipped[newline + 40] as number) ^ 0xff;
    writeFileSync(CACHE, flipped);
    expect(load()).toMatchObject({ cache: 'mismatch', add: 5 });

    writeFileSync(CACHE, good.subarray(0, good.length - 100));
    expect(load()).toMatchObject({ cache: 'mismatch', add: 5 });

    const header = JSON.parse(good.subarray(0, newline).toString('utf8')) as Record<string, string>;
    writeFileSync(CACHE, Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, v8_tag: 12345 })}\n`), good.subarray(newline + 1)]));
    expect(load()).toMatchObject({ cache: 'mismatch', add: 5 });

    writeFileSync(CACHE, 'not a cache');
    expect(load()).toMatchObject({ cache: 'mismatch', add: 5 });
  });

  it('a cache written under other V8 flags is not offered to V8, and the module still loads', () => {
    writeCache();
    expect(load(['--max-old-space-size=200'])).toMatchObject({ cache: 'mismatch', add: 5 });
  });

  it('V8 refusing a cache it is offered is no failure either', () => {
    writeCache();
    // A header that claims the other flags' V8: V8 itself checks its flags and refuses.
    const good = readFileSync(CACHE);
    const newline = good.indexOf(0x0a);
    const header = JSON.parse(good.subarray(0, newline).toString('utf8')) as Record<string, unknown>;
    const tag = Number(node("import { cachedDataVersionTag } from 'node:v8'; process.stdout.write(String(cachedDataVersionTag()));", ['--max-old-space-size=200']));
    writeFileSync(CACHE, Buffer.concat([Buffer.from(`${JSON.stringify({ ...header, v8_tag: tag })}\n`), good.subarray(newline + 1)]));
    expect(load(['--max-old-space-size=200'])).toMatchObject({ cache: 'rejected', add: 5 });
  });
});

describe('the built drivers bundle', () => {
  it('ships with a cache this Node.js accepts, and loads without it', () => {
    const copy = join(dir, 'db-drivers.cjs');
    copyFileSync(DRIVERS, copy);
    copyFileSync(`${DRIVERS}.v8-cache`, `${copy}.v8-cache`);
    expect(load([], copy).cache).toBe('accepted');
    rmSync(`${copy}.v8-cache`);
    expect(load([], copy).cache).toBe('absent');
  });
});
