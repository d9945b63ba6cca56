// Reading the operator's files and making directories, safely for any path a
// user can type. fs.readFileSync on /dev/zero or /dev/urandom never returns
// (it reads until memory runs out), and fs.mkdirSync(..., { recursive: true })
// spins forever on a path under /proc (ENOENT on every retry). These two
// helpers bound the one and walk the other, and every failure carries a
// short reason for the one-line error (describeFileError).
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

/** A file is refused beyond this many bytes unless the caller says otherwise. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/** Devices and pipes (`--config-file <(...)`) have no size to check first. */
const STREAM_MAX_BYTES = 64 * 1024 * 1024;

/** Thrown for a file above the size limit; `code` is 'EFBIG' like the errno. */
export class FileTooLargeError extends Error {
  readonly code = 'EFBIG';
  readonly maxBytes: number;
  constructor(path: string, maxBytes: number) {
    super(`${path} is larger than ${formatBytes(maxBytes)}`);
    this.name = 'FileTooLargeError';
    this.maxBytes = maxBytes;
  }
}

/**
 * Reads a UTF-8 text file, refusing a directory (EISDIR) and anything larger
 * than maxBytes (FileTooLargeError), including endless devices. Errors keep
 * their errno `code`.
 */
export function readTextFile(path: string, maxBytes = DEFAULT_MAX_BYTES): string {
  const fd = openSync(path, 'r');
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) throw Object.assign(new Error(`EISDIR: illegal operation on a directory, read '${path}'`), { code: 'EISDIR' });
    // A regular file says its size; a device or pipe is read up to a smaller cap, so /dev/urandom fails fast.
    const limit = info.isFile() ? maxBytes : Math.min(maxBytes, STREAM_MAX_BYTES);
    if (info.isFile() && info.size > limit) throw new FileTooLargeError(path, limit);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, limit + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      total += n;
      if (total > limit) throw new FileTooLargeError(path, limit);
      chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * mkdir -p: creates every missing directory of `path`, one level at a time.
 * A component that exists and is not a directory fails with ENOTDIR.
 */
export function makeDirectories(path: string): void {
  const target = resolve(path);
  const missing: string[] = [];
  let cur = target;
  for (;;) {
    const kind = statKind(cur);
    if (kind === 'dir') break;
    if (kind === 'other') throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${cur}'`), { code: 'ENOTDIR', path: cur });
    missing.push(cur);
    const parent = dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir);
    } catch (err) {
      // Another process made it in between: fine, as with mkdir -p.
      if (errnoOf(err) !== 'EEXIST' || statKind(dir) !== 'dir') throw err;
    }
  }
}

/** A short reason for people: "no such file", "is a directory", "permission denied", ... */
export function describeFileError(err: unknown): string {
  switch (errnoOf(err)) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EISDIR':
      return 'is a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EEXIST':
      return 'it already exists';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'EFBIG':
      return err instanceof FileTooLargeError ? `larger than ${formatBytes(err.maxBytes)}` : 'file too large';
    default:
      return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? 'unknown error';
  }
}

export function errnoOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !('code' in err)) return undefined;
  const code = (err as { code: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

function statKind(path: string): 'dir' | 'other' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'dir' : 'other';
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return 'missing';
    throw err;
  }
}

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / (1024 * 1024)} MiB` : `${n} bytes`;
}

/**
 * Replaces `path` atomically: the text goes to a temporary file in the same
 * directory (rename(2) is atomic only within one filesystem), is flushed, and
 * is renamed over `path`. A reader (node_exporter's textfile collector) sees
 * the old file or the new one, never half of one. The temporary name starts
 * with '.' and does not end in .prom, so the collector never reads it.
 */
export function writeFileAtomically(path: string, text: string): void {
  const target = resolve(path);
  const tmp = `${dirname(target)}/.${basename(target)}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, target);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
