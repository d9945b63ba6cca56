// One line for an error inside a result (a failed cell), redacted.
import { redactUrl } from '../config/mask-url.js';
import { ReconcileError } from '../errors.js';

export function describeError(err: unknown): string {
  const text = err instanceof ReconcileError ? err.message : err instanceof Error ? `unexpected error: ${err.message}` : String(err);
  return redactUrl(text.replace(/\s*\n\s*/g, ' ').trim());
}
