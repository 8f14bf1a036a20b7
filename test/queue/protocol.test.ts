/**
 * The queue's pure rules: job ids (what makes a batch enqueued twice add nothing) and which
 * failures are the infrastructure's (retried) rather than the original's (failed once).
 */
import { describe, expect, it } from 'vitest';
import { SourceError, type SourceErrorCode, StorageError } from '../../src/errors.js';
import { type JobData, jobId, PROTOCOL } from '../../src/queue/protocol.js';
import { isTransient } from '../../src/queue/worker.js';
import { resolveSettings } from '../../src/renditions/settings.js';

const job = (patch: Partial<JobData> = {}): JobData => ({
  protocol: PROTOCOL,
  outDir: 's3://media/media/',
  settings: resolveSettings({ pixelLimit: 1e8 }),
  force: false,
  originals: [{ source: 's3://originals/a.jpg', stem: 'a' }],
  batch: '20261123-000000-aaaaaa',
  ...patch,
});

describe('job ids', () => {
  it('are the same for the same original, output and settings, whichever batch adds them', () => {
    expect(jobId(job())).toBe(jobId(job({ batch: '20261124-000000-bbbbbb' })));
    expect(jobId(job())).toMatch(/^r[0-9a-f]{40}$/);
  });

  it('differ when anything that shapes the files differs, or the output', () => {
    const base = jobId(job());
    const others = [
      job({ outDir: 's3://media/other/' }),
      job({ force: true }),
      job({ settings: { ...job().settings, quality: { ...job().settings.quality, jpeg: 81 } } }),
      job({ settings: { ...job().settings, format: 'webp' } }),
      job({ originals: [{ source: 's3://originals/b/a.jpg', stem: 'a' }] }),
    ].map(jobId);
    expect(new Set([base, ...others]).size).toBe(others.length + 1);
  });

  it('do not depend on the order of originals that fold together', () => {
    const [a, b] = [
      { source: 's3://o/A.jpg', stem: 'a' },
      { source: 's3://o/a.jpeg', stem: 'a' },
    ];
    expect(jobId(job({ originals: [a, b] }))).toBe(jobId(job({ originals: [b, a] })));
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
