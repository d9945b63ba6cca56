// Loads a CommonJS file with a V8 code cache written beside it at build time,
// for start-up: without it V8 parses the database drivers' bundle
// (db-drivers.cjs) on every run and compiles each function the first
// connection runs. With the cache V8 takes the bytecode it wrote at build
// time instead.
//
// The cache is only ever an optimisation. It is used when its header says it
// was written by a V8 that takes it (v8.cachedDataVersionTag(): V8's version,
// its flags and the CPU's features) for this exact source, and its bytes are
// the ones the header hashes; anything else (another Node.js, V8 flags in
// NODE_OPTIONS, a rebuilt or edited bundle, a damaged or missing file)
// compiles the source as if there were no cache, and V8 still refuses a cache
// it did not write itself. Nothing is written at run time: the CLI may run
// from a read-only install.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { cachedDataVersionTag } from 'node:v8';
import { Script, constants as vmConstants } from 'node:vm';

const FORMAT = 'nova-reconcile-code-cache/2';

interface Header {
  readonly format: string;
  /** v8.cachedDataVersionTag() of the V8 that wrote the cache. */
  readonly v8_tag: number;
  readonly source_sha256: string;
  readonly cache_sha256: string;
}

/** What became of the cache: used, refused by V8, not written for this source or this V8, or not there. */
export type CodeCacheUse = 'accepted' | 'rejected' | 'mismatch' | 'absent';

export interface LoadedModule {
  readonly exports: unknown;
  readonly cache: CodeCacheUse;
  /** The compiled script, for writeCodeCache. */
  readonly script: Script;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The cache's bytes when its header matches this V8 and this source; why not otherwise. */
function readCache(cacheFile: string, source: Buffer): Buffer | 'mismatch' | 'absent' {
  let raw: Buffer;
  try {
    raw = readFileSync(cacheFile);
  } catch {
    return 'absent';
  }
  const newline = raw.indexOf(0x0a);
  if (newline < 0) return 'mismatch';
  let header: Partial<Header>;
  try {
    header = JSON.parse(raw.subarray(0, newline).toString('utf8')) as Partial<Header>;
  } catch {
    return 'mismatch';
  }
  if (header.format !== FORMAT || header.v8_tag !== cachedDataVersionTag()) return 'mismatch';
  const data = raw.subarray(newline + 1);
  if (header.cache_sha256 !== sha256(data) || header.source_sha256 !== sha256(source)) return 'mismatch';
  return data;
}

/**
 * Runs a CommonJS file as require() would (its own require, module, exports,
 * __filename and __dirname), with the code cache when it fits. The module is
 * not entered in require.cache: callers load it once and keep its exports.
 */
export function loadCommonJs(file: string, cacheFile: string | undefined): LoadedModule {
  // Read as bytes: hashing them is five times cheaper than hashing the
  // string (which would be encoded to UTF-8 again).
  const bytes = readFileSync(file);
  const cached = cacheFile === undefined ? 'absent' : readCache(cacheFile, bytes);
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${bytes.toString('utf8')}\n})`, {
    filename: file,
    ...(Buffer.isBuffer(cached) ? { cachedData: cached } : {}),
    // import() inside the file behaves as in any module (Node.js 20.12 and later).
    ...(vmConstants?.USE_MAIN_CONTEXT_DEFAULT_LOADER === undefined ? {} : { importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER }),
  });
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (exports: unknown, require: NodeJS.Require, module: { exports: unknown }, filename: string, dirname: string) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  const cache: CodeCacheUse = Buffer.isBuffer(cached) ? (script.cachedDataRejected === true ? 'rejected' : 'accepted') : cached;
  return { exports: module.exports, cache, script };
}

/**
 * Build time: writes the cache of `file` after `warm` has run the code an
 * ordinary run runs first, so that the bytecode of those functions (V8
 * compiles a function when it is first called) is in the cache too.
 */
export function writeCodeCache(file: string, cacheFile: string, warm: (exports: unknown) => void): void {
  const loaded = loadCommonJs(file, undefined);
  warm(loaded.exports);
  const data = loaded.script.createCachedData();
  const header: Header = {
    format: FORMAT,
    v8_tag: cachedDataVersionTag(),
    source_sha256: sha256(readFileSync(file)),
    cache_sha256: sha256(data),
  };
  writeFileSync(cacheFile, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`, 'utf8'), data]));
}
