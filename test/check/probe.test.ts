/**
 * One contract for every kind of place --verify-files reads from (a folder, an HTTP server,
 * a bucket): the same cases run against each driver, on real files and real servers.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FileSource, openFileSource, probe, readMedia } from '../../src/check/probe.js';
import { applyEnv, startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';
import { type MediaServer, startMediaServer } from './media-server.js';

let media: string;
let server: MediaServer;
let serverNoRanges: MediaServer;
let s3: TestS3;

beforeAll(async () => {
  const { mkdtemp } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  media = await mkdtemp(path.join(tmpdir(), 'content-api-probe-'));
  await mkdir(path.join(media, 'sub'));
  // A JPEG with a 40 KB EXIF-like comment before its size: the header needs a second, larger read.
  await sharp({
    create: {
      width: 640,
      height: 360,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 128, sigma: 30 },
    },
  })
    .jpeg()
    .toFile(path.join(media, 'sub', 'photo.jpg'));
  const big = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#123' } })
    .jpeg()
    .withExif({ IFD0: { ImageDescription: 'x'.repeat(40_000) } })
    .toBuffer();
  await writeFile(path.join(media, 'long-header.jpg'), big);
  await writeFile(path.join(media, 'text.png'), 'not an image at all');
  server = await startMediaServer(media);
  serverNoRanges = await startMediaServer(media, { ranges: false });
  s3 = await startS3(['probe']);
  applyEnv(s3.env);
  for (const name of ['sub/photo.jpg', 'long-header.jpg', 'text.png'])
    await s3.put('probe', `site/media/${name}`, await readFile(path.join(media, name)));
});

afterAll(async () => {
  await server.close();
  await serverNoRanges.close();
  await s3.close();
  const { rm } = await import('node:fs/promises');
  await rm(media, { recursive: true, force: true });
});

const drivers: Array<[string, () => Promise<FileSource>]> = [
  ['folder', () => openFileSource(media, { mediaPrefix: '/media/' })],
  ['http with Range', () => openFileSource(server.base)],
  ['http without Range', () => openFileSource(serverNoRanges.base)],
  ['bucket', () => openFileSource('s3://probe/site/media/')],
];

describe.each(drivers)('%s', (_name, open) => {
  let source: FileSource;
  beforeAll(async () => {
    source = await open();
  });
  afterAll(() => source.close());

  it('reads the first N bytes of a file, and says when that was all of it', async () => {
    const head = await readMedia('/media/sub/photo.jpg', source, 100);
    expect(head.ok && head.bytes.length === 100 && !head.complete).toBe(true);
    const whole = await readMedia('/media/text.png', source, 4096);
    expect(whole.ok && whole.bytes.toString() === 'not an image at all' && whole.complete).toBe(true);
  });

  it('probes size and format from the header, reading more only when the header is longer', async () => {
    expect(await probe('/media/sub/photo.jpg', source)).toMatchObject({
      ok: true,
      width: 640,
      height: 360,
      format: 'jpeg',
      bytesRead: 4096,
    });
    const long = await probe('https://cdn.example.org/media/long-header.jpg?v=2', source);
    expect(long).toMatchObject({ ok: true, width: 64, height: 48, format: 'jpeg' });
    expect(long.bytesRead).toBeGreaterThan(4096);
  });

  it('a missing file is "missing"; a file that is no image is "unreadable"', async () => {
    expect(await probe('/media/sub/none.jpg', source)).toMatchObject({ ok: false, reason: 'missing' });
    expect(await probe('/media/text.png', source)).toMatchObject({ ok: false, reason: 'unreadable' });
  });
});

describe('openFileSource', () => {
  it('refuses what is not a folder or a reachable server (exit 2 in the CLI)', async () => {
    const dir = await tempDir();
    await expect(openFileSource(path.join(dir, 'none'))).rejects.toThrow(
      `--verify-files ${path.join(dir, 'none')}: no such folder`,
    );
    const closed = await startMediaServer(dir);
    await closed.close();
    await expect(openFileSource(closed.base)).rejects.toMatchObject({ code: 'CONTENT_API_MEDIA_UNREACHABLE' });
    await expect(openFileSource('s3://no-such-bucket/media/')).rejects.toThrow(
      '--verify-files s3://no-such-bucket/media/: no such bucket',
    );
  });

  it('a folder keeps reads inside it', async () => {
    const source = await openFileSource(path.join(media, 'sub'));
    // the URL's own '..' stops at the root
    expect(await probe('/media/../long-header.jpg', source)).toMatchObject({ ok: false, reason: 'missing' });
    expect(await probe('/media/..%2Flong-header.jpg', source)).toMatchObject({ ok: false, reason: 'outside' });
  });
});
