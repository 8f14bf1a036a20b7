/**
 * The queue's failure rules (src/queue/failures.ts), pure: which failures say a store cannot be
 * used at all (the job waits in the queue), which are the infrastructure's (retried), and which
 * the original's (failed once).
 */
import { describe, expect, it } from 'vitest';
import {
  InvalidArgumentError,
  OutputNotWritableError,
  SourceError,
  type SourceErrorCode,
  StorageError,
} from '../../src/errors.js';
import { isTransient, storeWideKind } from '../../src/queue/failures.js';

describe('storeWideKind', () => {
  it('says a store cannot be used at all: unreachable, no credentials or bucket, throttled, not writable', () => {
    for (const kind of ['unreachable', 'credentials', 'no-bucket', 'throttled'] as const) {
      expect(storeWideKind(new StorageError('s3://media/: no', kind)), kind).toBe('down');
    }
    expect(storeWideKind(new OutputNotWritableError('/srv/media', 'EACCES'))).toBe('down');
  });

  it("tells a denial apart: it may be the store's or one object's", () => {
    expect(storeWideKind(new StorageError('s3://media/: access denied', 'denied'))).toBe('denied');
  });

  it("finds the store's error among the causes of an original's failure", () => {
    const unreachable = new StorageError('s3://originals/: unreachable', 'unreachable');
    const failed = new SourceError('CONTENT_API_UNREADABLE', 's3://originals/a.jpg', 'cannot read', {
      cause: new Error('read', { cause: unreachable }),
    });
    expect(storeWideKind(failed)).toBe('down');
    const notWritable = new OutputNotWritableError('/srv/media', 'EROFS');
    const wrapped = new SourceError('CONTENT_API_RENDER_FAILED', '/in/a.jpg', 'cannot write', { cause: notWritable });
    expect(storeWideKind(wrapped)).toBe('down');
  });

  it("leaves to the job what is one object's or the original's: 5xx, missing, other, corrupt, a reset", () => {
    for (const kind of ['server', 'missing', 'invalid-key', 'other'] as const) {
      expect(storeWideKind(new StorageError('s3://media/a.jpg: no', kind)), kind).toBeUndefined();
    }
    expect(storeWideKind(new SourceError('CONTENT_API_CORRUPT_IMAGE', '/in/a.jpg', 'corrupt'))).toBeUndefined();
    expect(storeWideKind(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBeUndefined();
    expect(storeWideKind(new InvalidArgumentError('--quality: not a number'))).toBeUndefined();
    expect(storeWideKind(undefined)).toBeUndefined();
  });

  it('decides by the first storage error among the causes', () => {
    const unreachable = new StorageError('s3://media/: unreachable', 'unreachable');
    const missing = new StorageError('s3://media/a.jpg: missing', 'missing', { cause: unreachable });
    expect(storeWideKind(missing)).toBeUndefined();
    const denied = new StorageError('s3://media/: access denied', 'denied');
    expect(storeWideKind(new StorageError('s3://media/: unreachable', 'unreachable', { cause: denied }))).toBe('down');
  });
});

describe('isTransient', () => {
  const failed = (cause: unknown, code: SourceErrorCode = 'CONTENT_API_RENDER_FAILED') =>
    new SourceError(code, 's3://originals/a.jpg', 'cannot write renditions', { cause });

  it('retries what the infrastructure failed: a store unreachable, throttled or 5xx, a full disk, a reset', () => {
    for (const kind of ['unreachable', 'throttled', 'server', 'credentials'] as const) {
      expect(isTransient(failed(new StorageError('s3://media/: no', kind))), kind).toBe(true);
    }
    for (const code of ['ENOSPC', 'ECONNRESET', 'ETIMEDOUT']) {
      expect(isTransient(failed(Object.assign(new Error(code), { code }))), code).toBe(true);
    }
    const wrapped = new Error('outer', { cause: Object.assign(new Error('inner'), { code: 'ENOSPC' }) });
    expect(isTransient(failed(wrapped))).toBe(true);
  });

  it('fails once what the original itself failed: corrupt, unsupported, too large, colliding, missing, denied', () => {
    for (const code of [
      'CONTENT_API_CORRUPT_IMAGE',
      'CONTENT_API_UNSUPPORTED_FORMAT',
      'CONTENT_API_PIXEL_LIMIT',
      'CONTENT_API_NAME_COLLISION',
      'CONTENT_API_EMPTY_FILE',
    ] as const) {
      expect(isTransient(failed(Object.assign(new Error('x'), { code: 'ECONNRESET' }), code)), code).toBe(false);
    }
    expect(
      isTransient(
        failed(new StorageError('s3://originals/a.jpg: no such object', 'missing'), 'CONTENT_API_UNREADABLE'),
      ),
    ).toBe(false);
    expect(isTransient(failed(Object.assign(new Error('gone'), { code: 'ENOENT' }), 'CONTENT_API_UNREADABLE'))).toBe(
      false,
    );
    // Denied while its store answers (the worker asked it again): a policy or key on that object.
    expect(
      isTransient(failed(new StorageError('s3://originals/a.jpg: access denied', 'denied'), 'CONTENT_API_UNREADABLE')),
    ).toBe(false);
    expect(isTransient(failed(undefined))).toBe(false);
  });
});
