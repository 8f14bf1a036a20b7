/**
 * Which failures are the infrastructure's and which the original's: pure rules over an error
 * and its causes, no Redis, no BullMQ. The worker (`./worker.ts`) acts on them: a store that
 * cannot be used at all puts the job back, a transient failure spends an attempt, the rest fail
 * once.
 */
import { OutputNotWritableError, type SourceError, STORE_WIDE, StorageError } from '../errors.js';

/**
 * What says a store (the output, or the originals' bucket) cannot be used at all: unreachable,
 * refusing these credentials, throttling, or a folder this machine cannot write; and
 * `denied`, which may be the store's or one object's.
 */
export function storeWideKind(error: unknown): 'denied' | 'down' | undefined {
  for (let cause: unknown = error; cause; cause = (cause as { cause?: unknown }).cause) {
    if (cause instanceof OutputNotWritableError) return 'down';
    if (cause instanceof StorageError) {
      if (cause.kind === 'denied') return 'denied';
      return STORE_WIDE.has(cause.kind) || cause.kind === 'throttled' ? 'down' : undefined;
    }
  }
  return undefined;
}

/**
 * The failure is the infrastructure's, not the original's: a store that could not be
 * reached, throttled, answered 5xx, or a disk that refused the write. Worth another try.
 */
export function isTransient(error: SourceError): boolean {
  if (error.code !== 'CONTENT_API_RENDER_FAILED' && error.code !== 'CONTENT_API_UNREADABLE') return false;
  for (let cause: unknown = error.cause; cause; cause = (cause as { cause?: unknown }).cause) {
    // Denied after the job was put back for other workers (see `waits` in `./worker.ts`): the same every time.
    if (cause instanceof StorageError) return !['missing', 'invalid-key', 'other', 'denied'].includes(cause.kind);
    const code = (cause as NodeJS.ErrnoException).code;
    if (code && TRANSIENT_CODES.has(code)) return true;
  }
  return false;
}

const TRANSIENT_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'EMFILE',
]);
