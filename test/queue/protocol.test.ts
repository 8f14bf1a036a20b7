/**
 * The queue's pure rules: job ids (what makes a batch enqueued twice add nothing) and which job
 * data a worker takes. Which failures are retried: failures.test.ts.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempPathFor } from '../../src/fs/atomic.js';
import { type JobData, jobId, MAX_JOB_DATA_BYTES, PROTOCOL, readJobData } from '../../src/queue/protocol.js';
import { CLAIMS_FOLDER } from '../../src/renditions/claims.js';
import { MANIFEST_FILE, MANIFEST_RECORDS } from '../../src/renditions/manifest.js';
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
      job({ settings: { ...job().settings, formats: ['webp'] } }),
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

describe('job data as a worker reads it', () => {
  const read = (data: unknown) => readJobData(typeof data === 'string' ? data : JSON.stringify(data));
  const withStem = (stem: string) => read(job({ originals: [{ source: 's3://originals/a.jpg', stem }] }));

  it('takes the jobs render --queue makes', () => {
    expect(read(job())).toEqual({ data: job() });
    for (const stem of ['old-works/evening-light', 'image', 'a/b/c-1']) expect(withStem(stem)).toHaveProperty('data');
  });

  it("refuses stems that are not render's, and so every stem naming the tool's own files beside the renditions", () => {
    const own = [
      MANIFEST_FILE,
      `${MANIFEST_FILE}.lock`,
      CLAIMS_FOLDER,
      MANIFEST_RECORDS.replace(/\/$/, ''),
      path.basename(tempPathFor('photo.max-300x300.jpg')),
    ];
    const others = ['', '../up', 'a/../../up', '/abs', 'a//b', 'Photo', 'a b', 'a\nb', 'é'];
    for (const stem of [...own.flatMap((name) => [name, `${name}/x`, `a/${name}`]), ...others]) {
      const refused = withStem(stem);
      expect(refused, stem).toEqual({
        refused: expect.stringContaining(`$.originals[0].stem: a stem render makes`),
        batch: job().batch,
      });
    }
  });

  it(`refuses data over ${MAX_JOB_DATA_BYTES} bytes unread, and data that is not JSON, saying so in one short line`, () => {
    const huge = JSON.stringify(
      job({ originals: [{ source: `s3://o/${'\x1b'.repeat(MAX_JOB_DATA_BYTES)}`, stem: 'a' }] }),
    );
    expect(readJobData(huge)).toEqual({
      refused: `job data of ${Buffer.byteLength(huge)} bytes, over the limit of ${MAX_JOB_DATA_BYTES}`,
      batch: undefined,
    });
    expect(readJobData('{"protocol":')).toEqual({
      refused: `not a render job of content-api protocol ${PROTOCOL}: not JSON (Unexpected end of JSON input)`,
      batch: undefined,
    });
    const hostile = read({ protocol: PROTOCOL, batch: '\x1b]0;x\x07', originals: 'x'.repeat(60_000) });
    expect('refused' in hostile && hostile.refused).toMatch(/^not a render job of content-api protocol \S+: \$\.\w+: /);
    expect('refused' in hostile && hostile.refused.length).toBeLessThan(300);
    expect(hostile).toMatchObject({ batch: undefined });
  });
});
