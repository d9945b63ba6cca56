// One HTTP(S) request with keystoneauth's session options (cafile, insecure,
// timeout), on node:http/node:https: the built-in fetch cannot take a CA file
// without undici's dispatcher, which Node 20 does not expose. A failure is an
// HttpFailure whose text never holds a header or a body (tokens, passwords).
import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { http, https } from '../builtins.js';

export interface HttpOptions {
  readonly cafile?: string | undefined;
  readonly insecure?: boolean;
  /** Milliseconds for the whole exchange. */
  readonly timeoutMs: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** Why no response came: refused and reset are retried (as Nova's ironic client does), a timeout is not. */
export type HttpFailureKind = 'refused' | 'reset' | 'timeout' | 'tls' | 'other';

export class HttpFailure extends Error {
  readonly kind: HttpFailureKind;
  constructor(kind: HttpFailureKind, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
  }
}

/** A response larger than this is not a node page (1,000 nodes of 5 fields are about 250 kB). */
const MAX_BODY = 64 * 1024 * 1024;

export function send(method: 'GET' | 'POST', url: URL, headers: Record<string, string>, body: string | undefined, options: HttpOptions): Promise<HttpResponse> {
  const secure = url.protocol === 'https:';
  const ca = secure && options.cafile !== undefined ? readCa(options.cafile) : undefined;
  return new Promise((resolve, reject) => {
    const req = (secure ? https().request : http().request)(
      url,
      {
        method,
        headers: { ...headers, ...(body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(body)) }) },
        ...(secure ? { rejectUnauthorized: options.insecure !== true, ...(ca === undefined ? {} : { ca }) } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BODY) req.destroy(new HttpFailure('other', `the response from ${origin(url)} is larger than ${MAX_BODY} bytes`));
          else chunks.push(chunk);
        });
        // A connection cut in the middle of a body is an error, never a short page.
        res.on('aborted', () => req.destroy(new HttpFailure('reset', `the connection to ${origin(url)} was cut during the response`)));
        res.on('error', (err) => reject(classify(err, url)));
        res.on('end', () => {
          if (res.complete) resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
          else reject(new HttpFailure('reset', `the connection to ${origin(url)} was cut during the response`));
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new HttpFailure('timeout', `no complete answer from ${origin(url)} within ${options.timeoutMs / 1000} s`)), options.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', (err) => reject(classify(err, url)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

function readCa(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new HttpFailure('other', `cannot read [ironic] cafile ${path}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`, err);
  }
}

function classify(err: unknown, url: URL): HttpFailure {
  if (err instanceof HttpFailure) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code ?? '';
  const where = origin(url);
  if (code === 'ECONNREFUSED') return new HttpFailure('refused', `connection refused by ${where}`, err);
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED') return new HttpFailure('reset', `the connection to ${where} was reset`, err);
  if (code === 'ETIMEDOUT') return new HttpFailure('timeout', `connecting to ${where} timed out`, err);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new HttpFailure('other', `cannot resolve ${url.hostname}`, err);
  if (/CERT|SSL|TLS|SELF_SIGNED/.test(code)) return new HttpFailure('tls', `TLS verification of ${where} failed (${code}); set [ironic] cafile`, err);
  return new HttpFailure('other', `request to ${where} failed (${code || (err instanceof Error ? err.message : 'unknown error')})`, err);
}

/** scheme://host:port, the part of a URL that may be printed. */
export function origin(url: URL): string {
  return `${url.protocol}//${url.host}`;
}
