/**
 * `render` with a bucket (a real s3rver on loopback) for the output, the originals, or both:
 * the same rules as on disk, nothing re-uploaded when nothing changed, nothing half-written
 * trusted after a kill, and one line with exit 2 when the bucket cannot be used at all.
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { photo, writeImage } from '../fixtures/images.js';
import { startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionOfBytes } from '../fixtures/versions.js';
import { BIN, runCli, startCli } from './run-cli.js';

let s3: TestS3;
/** Folders of originals the tests read, written before the one wait for their stamps to settle. */
const settled = { photos: '', lake: '', alternates: '', doomed: '' };
/**
 * The big originals of the kill test (over 2,400 wide: five sizes, each its own), encoded while that wait goes by
 * and written by the test itself.
 */
let big: Buffer[];
let fixtures: string;
beforeAll(async () => {
  fixtures = await mkdtemp(path.join(tmpdir(), 'content-api-s3-'));
  const folder = async (name: string) => {
    const dir = path.join(fixtures, name);
    await mkdir(dir);
    return dir;
  };
  settled.photos = await originals(await folder('photos'));
  settled.lake = await folder('lake');
  await writeImage(settled.lake, 'lake.jpg', photo(800, 600).jpeg());
  settled.alternates = await folder('alternates');
  await writeImage(settled.alternates, 'lake.jpg', photo(800, 600).jpeg());
  settled.doomed = await originals(await folder('doomed'), 6);
  // Files changed in the last 2 s have no settled stamp yet (see render's RACY_MS): let them settle, once for all,
  // meanwhile starting the server, encoding the big originals and loading the command line (its first run's cost).
  [s3, big] = await Promise.all([
    startS3(['media', 'originals', 'doomed']),
    Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        photo(2401 + i, 1600)
          .jpeg()
          .toBuffer(),
      ),
    ),
    import(pathToFileURL(path.resolve(path.dirname(BIN), '../dist/cli/run.js')).href),
    new Promise((resolve) => setTimeout(resolve, 2_100)),
  ]);
});
afterAll(async () => {
  await s3?.close();
  await rm(fixtures, { recursive: true, force: true });
});

let bucketRun = 0;
let out: string;
let prefix: string;
beforeEach(() => {
  prefix = `run-${++bucketRun}/media/`;
  out = `s3://media/${prefix}`;
});

const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
  runCli(args, { env: { ...s3.env, ...env } });
const renditionKeys = (objects: Map<string, number>) =>
  [...objects.keys()].filter((key) => !key.includes('.content-api-manifest/'));
const records = (objects: Map<string, number>) =>
  [...objects.keys()].filter((key) => key.includes('.content-api-manifest/'));

/** `count` photographs and a PNG in a folder with a space and an accent (settled by the wait in beforeAll). */
async function originals(dir: string, count = 3): Promise<string> {
  for (let i = 0; i < count; i++) await writeImage(dir, `photo-${i}.jpg`, photo(900 + i * 10, 600).jpeg());
  await writeImage(dir, 'Old Works/Évening Light.png', photo(500, 700).png());
  return dir;
}

/** Every record's five objects are there with the recorded bytes, and each decodes to its recorded size. */
async function expectComplete(recordCount: number): Promise<void> {
  const objects = await s3.objects('media', prefix);
  const found = records(objects);
  expect(found).toHaveLength(recordCount);
  for (const key of found) {
    const { entry } = JSON.parse((await s3.get('media', key)).toString('utf8'));
    for (const rendition of Object.values(entry.renditions) as Array<{
      path: string;
      width: number;
      height: number;
      bytes: number;
    }>) {
      expect(objects.get(prefix + rendition.path)).toBe(rendition.bytes);
      const meta = await sharp(await s3.get('media', prefix + rendition.path)).metadata();
      expect([meta.width, meta.height]).toEqual([rendition.width, rendition.height]);
    }
  }
}

describe('content-api render to and from a bucket', () => {
  it(
    'renders a folder into a bucket with serve’s headers; a rerun uploads nothing; ' +
      'a changed original rewrites only its objects',
    async () => {
      const dir = settled.photos;
      const first = await cli(['render', dir, '--out', out, '--json']);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      const report = JSON.parse(first.stdout);
      expect(report.results.map((r: { status: string }) => r.status)).toEqual([
        'rendered',
        'rendered',
        'rendered',
        'rendered',
      ]);
      expect(report.results[0].files[0]).toMatch(new RegExp(`^s3://media/${prefix}`));
      const objects = await s3.objects('media', prefix);
      expect(renditionKeys(objects)).toContain(`${prefix}old-works/evening-light.max-300x300.png`);
      expect(renditionKeys(objects)).toHaveLength(20);
      // Every URL published carries its object's version, so the object may be kept for good.
      expect(await s3.head('media', `${prefix}photo-0.max-600x600.jpg`)).toMatchObject({
        contentType: 'image/jpeg',
        cacheControl: 'public, max-age=31536000, immutable',
      });
      const photo0 = report.results.find((r: { source: string }) => r.source.endsWith('photo-0.jpg'));
      expect(photo0.image.sizes.sm.url).toBe(
        `/media/photo-0.max-600x600.jpg?v=${versionOfBytes(await s3.get('media', `${prefix}photo-0.max-600x600.jpg`))}`,
      );
      expect(await s3.head('media', `${prefix}old-works/evening-light.max-300x300.png`)).toMatchObject({
        contentType: 'image/png',
      });
      await expectComplete(4);

      await s3.sync();
      const putsBefore = s3.puts.length;
      const again = await cli(['render', dir, '--out', out, '--json']);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout).results.every((r: { status: string }) => r.status === 'skipped')).toBe(true);
      await s3.sync();
      expect(s3.puts.length).toBe(putsBefore);

      await writeImage(dir, 'photo-1.jpg', photo(1300, 500).jpeg());
      const changed = await cli(['render', dir, '--out', out, '--json']);
      expect(changed.code).toBe(0);
      const statuses = Object.fromEntries(
        JSON.parse(changed.stdout).results.map((r: { source: string; status: string }) => [
          path.basename(r.source),
          r.status,
        ]),
      );
      expect(statuses).toMatchObject({ 'photo-0.jpg': 'skipped', 'photo-1.jpg': 'rendered', 'photo-2.jpg': 'skipped' });
      await s3.sync();
      const rewritten = s3.puts.slice(putsBefore);
      expect(rewritten.sort()).toEqual([
        `media/${prefix}.content-api-manifest/photo-1.jpg.json`,
        ...['1200x1200', '2400x2400', '300x300', '4800x4800', '600x600'].map(
          (box) => `media/${prefix}photo-1.max-${box}.jpg`,
        ),
      ]);
      await expectComplete(4);
    },
  );

  it(
    'a record from before URL versions gets them from its objects, once; --no-url-versions: plain URLs, ' +
      'objects that revalidate',
    async () => {
      const dir = settled.lake; // a settled stamp: see beforeAll
      const first = await cli(['render', dir, '--out', out, '--json']);
      expect(first.code, first.stderr).toBe(0);
      const image = JSON.parse(first.stdout).results[0].image;
      const key = `${prefix}.content-api-manifest/lake.jpg.json`;
      const record = JSON.parse((await s3.get('media', key)).toString('utf8'));
      for (const name of ['xs', 'sm', 'md', 'lg', 'xl']) {
        const rendition = record.entry.renditions[name];
        const version = versionOfBytes(await s3.get('media', prefix + rendition.path));
        expect([rendition.version, image.sizes[name].url]).toEqual([version, `/media/${rendition.path}?v=${version}`]);
        delete rendition.version;
      }
      await s3.put('media', key, Buffer.from(JSON.stringify(record)));

      // Up to date: the URLs the same, read from the objects; the record learns its versions again.
      const again = await cli(['render', dir, '--out', out, '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect(JSON.parse(again.stdout).results[0]).toMatchObject({ status: 'skipped', image });
      const refreshed = JSON.parse((await s3.get('media', key)).toString('utf8'));
      expect(refreshed.entry.renditions.md.version).toBe(image.sizes.md.url.split('?v=')[1]);

      // Off: the same objects (up to date, nothing written), their URLs without a version.
      const plain = await cli(['render', dir, '--out', out, '--json', '--no-url-versions']);
      expect(plain.code, plain.stderr).toBe(0);
      const result = JSON.parse(plain.stdout).results[0];
      expect(result.status).toBe('skipped');
      expect(result.image.sizes.md.url).toBe('/media/lake.max-1200x1200.jpg');
      expect(result.image.srcset).not.toContain('?');
      // Written with versions off, an object revalidates: its URL names whatever it holds now.
      const forced = await cli(['render', dir, '--out', out, '--no-url-versions', '--force']);
      expect(forced.code, forced.stderr).toBe(0);
      expect(await s3.head('media', `${prefix}lake.max-1200x1200.jpg`)).toMatchObject({
        contentType: 'image/jpeg',
        cacheControl: 'public, no-cache',
      });
    },
  );

  it('keeps the objects of an earlier rendering when an original changes format; --prune removes them and their record', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'lake.jpg', photo(800, 600).jpeg());
    const firstRun = await cli(['render', dir, '--out', out]);
    expect(firstRun.stderr).toMatch(/^1 rendered/);
    const second = await cli(['render', dir, '--out', out, '--format', 'webp', '--json']);
    expect(second.stderr).toBe('');
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).results[0]).toMatchObject({ removed: [], kept: expect.any(Array) });
    expect(JSON.parse(second.stdout).results[0].kept).toHaveLength(5);
    let objects = await s3.objects('media', prefix);
    expect(renditionKeys(objects).filter((key) => key.endsWith('.jpg'))).toHaveLength(5);
    expect(records(objects).sort()).toEqual([
      `${prefix}.content-api-manifest/lake.jpg.json`,
      `${prefix}.content-api-manifest/lake.webp.json`,
    ]);
    const pruned = await cli(['render', dir, '--out', out, '--format', 'webp', '--prune', '--json']);
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout).results[0].removed).toHaveLength(5);
    objects = await s3.objects('media', prefix);
    expect(renditionKeys(objects).every((key) => key.endsWith('.webp'))).toBe(true);
    expect(records(objects)).toEqual([`${prefix}.content-api-manifest/lake.webp.json`]);
  });

  it('alternates in a bucket: a record per format; a format added uploads only its objects; one dropped is kept until pruned', async () => {
    // Settled, so its records are not rewritten to learn its stamp (see render's RACY_MS, and beforeAll).
    const dir = settled.alternates;
    const both = await cli(['render', dir, '--out', out, '--formats', 'keep,webp', '--json']);
    expect([both.code, both.stderr]).toEqual([0, '']);
    const [result] = JSON.parse(both.stdout).results;
    expect(result.alternates[0].files[0]).toBe(`s3://media/${prefix}lake.max-300x300.webp`);
    expect(await s3.head('media', `${prefix}lake.max-600x600.webp`)).toMatchObject({ contentType: 'image/webp' });
    let objects = await s3.objects('media', prefix);
    expect(records(objects).sort()).toEqual([
      `${prefix}.content-api-manifest/lake.jpg.json`,
      `${prefix}.content-api-manifest/lake.webp.json`,
    ]);
    await s3.sync();
    const before = s3.puts.length;
    const added = await cli(['render', dir, '--out', out, '--formats', 'keep,webp,avif']);
    expect(added.code).toBe(0);
    await s3.sync();
    // Only the AVIF objects and their record.
    const uploaded = s3.puts.slice(before).map((key) => key.replace(`media/${prefix}`, ''));
    const others = uploaded.filter((key) => !key.endsWith('.avif') && key !== '.content-api-manifest/lake.avif.json');
    expect(others).toEqual([]);
    expect(uploaded).toContain('.content-api-manifest/lake.avif.json');
    const dropped = await cli(['render', dir, '--out', out, '--formats', 'keep', '--json']);
    expect(JSON.parse(dropped.stdout).results[0]).toMatchObject({ status: 'skipped', removed: [] });
    expect(JSON.parse(dropped.stdout).results[0].kept).toHaveLength(10);
    expect(records(await s3.objects('media', prefix))).toHaveLength(3);
    const pruned = await cli(['render', dir, '--out', out, '--formats', 'keep', '--prune', '--json']);
    expect(JSON.parse(pruned.stdout).results[0]).toMatchObject({ status: 'skipped' });
    expect(JSON.parse(pruned.stdout).results[0].removed).toHaveLength(10);
    objects = await s3.objects('media', prefix);
    expect(renditionKeys(objects).every((key) => key.endsWith('.jpg'))).toBe(true);
    expect(records(objects)).toEqual([`${prefix}.content-api-manifest/lake.jpg.json`]);
  });

  it('refuses to overwrite another original’s objects, as on disk; --force replaces them', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'a/lake.jpg', photo(800, 600).jpeg());
    await writeImage(dir, 'b/lake.jpg', photo(600, 800).jpeg());
    expect((await cli(['render', path.join(dir, 'a'), '--out', out])).code).toBe(0);
    const second = await cli(['render', path.join(dir, 'b'), '--out', out, '--json']);
    expect(second.code).toBe(1);
    expect(JSON.parse(second.stdout).failures[0]).toMatchObject({ code: 'CONTENT_API_NAME_COLLISION' });
    expect((await sharp(await s3.get('media', `${prefix}lake.max-300x300.jpg`)).metadata()).width).toBe(300);
    expect((await cli(['render', path.join(dir, 'b'), '--out', out, '--force'])).code).toBe(0);
    expect((await sharp(await s3.get('media', `${prefix}lake.max-300x300.jpg`)).metadata()).width).toBe(225);
  });

  it(
    'renders originals from a bucket, into a bucket or a folder; ' +
      'an unchanged object is skipped, a replaced one rendered again',
    async () => {
      const source = `src-${bucketRun}/2026/`;
      await s3.put('originals', `${source}a.jpg`, await photo(700, 500).jpeg().toBuffer());
      await s3.put('originals', `${source}deep/b.png`, await photo(300, 900).png().toBuffer());
      await s3.put('originals', `${source}notes.txt`, Buffer.from('not an image'));
      await s3.put('originals', `empty-${bucketRun}/nothing.jpg`, Buffer.alloc(0));
      await s3.put('originals', `${source}scan.tif`, await photo(2000, 1500).tiff().toBuffer());
      const first = await cli(['render', `s3://originals/${source}`, '--out', out, '--json']);
      expect(first.stderr).toBe('');
      expect(JSON.parse(first.stdout).results.map((r: { source: string }) => r.source)).toEqual([
        `s3://originals/${source}a.jpg`,
        `s3://originals/${source}deep/b.png`,
        `s3://originals/${source}scan.tif`,
      ]);
      await expectComplete(3);

      const empty = await cli(['render', `s3://originals/empty-${bucketRun}/`, '--out', out]);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toMatch(
        new RegExp(`failed: s3://originals/empty-${bucketRun}/nothing\\.jpg: object is empty`),
      );

      const local = await tempDir();
      const toFolder = await cli(['render', `s3://originals/${source}`, '--out', local, '--json']);
      expect(toFolder.code).toBe(0);
      const meta = await sharp(path.join(local, 'deep/b.max-600x600.png')).metadata();
      expect([meta.width, meta.height]).toEqual([200, 600]);

      // A rerun over the unchanged bucket lists it and reads no original, not even a header.
      await s3.sync();
      const before = s3.requests.length;
      const unchanged = await cli(['render', `s3://originals/${source}`, '--out', out, '--json']);
      expect(JSON.parse(unchanged.stdout).results.map((r: { status: string }) => r.status)).toEqual([
        'skipped',
        'skipped',
        'skipped',
      ]);
      await s3.sync();
      expect(s3.requests.slice(before).filter((line) => line.startsWith(`GET /originals/${source}`))).toEqual([]);

      await s3.put('originals', `${source}a.jpg`, await photo(710, 500).jpeg().toBuffer());
      const again = await cli(['render', `s3://originals/${source}`, '--out', out, '--json']);
      const statuses = JSON.parse(again.stdout).results.map((r: { status: string }) => r.status);
      expect(statuses).toEqual(['rendered', 'skipped', 'skipped']);
      expect(JSON.parse(again.stdout).results[0].image.sizes.xs).toMatchObject({ width: 300, height: 211 });
    },
  );

  it(
    'a run killed with SIGKILL mid-batch leaves nothing a rerun trusts wrongly: ' +
      'the rerun completes every original',
    async () => {
      const dir = await tempDir();
      await Promise.all(big.map((bytes, i) => writeFile(path.join(dir, `big-${i}.jpg`), bytes)));
      const putsBefore = s3.puts.length;
      const { child, done } = startCli(['render', dir, '--out', out, '--concurrency', '1'], { env: s3.env });
      while (s3.puts.length < putsBefore + 8) await new Promise((resolve) => setTimeout(resolve, 20));
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');
      const partial = records(await s3.objects('media', prefix)).length;
      expect(partial).toBeLessThan(8);

      const rerun = await cli(['render', dir, '--out', out, '--json']);
      expect(rerun.code).toBe(0);
      const statuses = JSON.parse(rerun.stdout).results.map((r: { status: string }) => r.status);
      expect(statuses.filter((s: string) => s === 'skipped')).toHaveLength(partial);
      await expectComplete(8);
    },
  );

  it(
    'render --page writes renditions to a bucket; ' +
      'check --verify-files reads them there, and finds a resized and a deleted one',
    async () => {
      const dir = await tempDir();
      await mkdir(path.join(dir, 'originals/landscapes'), { recursive: true });
      for (const name of [
        'dandelion.jpg',
        'ladybird.jpg',
        'marigold.png',
        'raindrops.webp',
        'Yellow Flower.jpg',
        'landscapes/dune.jpg',
        'landscapes/storm.jpg',
      ]) {
        await copyFile(path.join('samples/originals', name), path.join(dir, 'originals', name));
      }
      const page = path.join(dir, 'page.json');
      const run = await cli([
        'render',
        '--page',
        'samples/content/pages/101.json',
        '--originals',
        path.join(dir, 'originals'),
        '--out',
        out,
        '--write-page',
        page,
      ]);
      expect(run.stderr).toMatch(/rendered/);
      expect(run.code).toBe(0);
      const objects = await s3.objects('media', prefix);
      expect(renditionKeys(objects)).toContain(`${prefix}dandelion.max-4800x4800.jpg`);
      expect(renditionKeys(objects)).toContain(`${prefix}landscapes/storm.max-300x300.jpg`);
      const written = JSON.parse(await readFile(page, 'utf8'));
      expect(JSON.stringify(written)).toContain('/media/dandelion.max-300x300.jpg');
      await expectComplete(records(objects).length);

      // A second run without --originals finds the originals the bucket's records name: all up to date.
      const again = await cli(['render', '--page', 'samples/content/pages/101.json', '--out', out, '--json']);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout).results.every((r: { status: string }) => r.status === 'skipped')).toBe(true);

      // check --verify-files reads the bucket (ranged GETs): all good; then a resized and a deleted object are found.
      const good = await cli(['check', page, '--base-url', 'http://127.0.0.1:8000', '--verify-files', out]);
      expect(good.stdout + good.stderr).not.toMatch(/file-/);
      expect(good.stdout).toMatch(/30 files probed/);
      expect(good.code).toBe(0);
      await s3.put('media', `${prefix}dandelion.max-600x600.jpg`, await photo(500, 400).jpeg().toBuffer());
      await s3.remove('media', `${prefix}landscapes/storm.max-300x300.jpg`);
      const bad = await cli([
        'check',
        page,
        '--base-url',
        'http://127.0.0.1:8000',
        '--verify-files',
        out,
        '--reporter',
        'json-lines',
      ]);
      expect(bad.code).toBe(1);
      const findings = bad.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
        .flatMap((record) => record.problems ?? []);
      expect(
        findings.filter((f: { rule: string }) => f.rule === 'file-size').map((f: { message: string }) => f.message),
      ).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^s3://media/${prefix}dandelion\\.max-600x600\\.jpg is 500x400`)),
        ]),
      );
      expect(
        findings.filter((f: { rule: string }) => f.rule === 'file-missing').map((f: { message: string }) => f.message),
      ).toEqual(expect.arrayContaining([`s3://media/${prefix}landscapes/storm.max-300x300.jpg does not exist`]));
    },
  );

  it(
    'an endpoint that keeps answering 503 SlowDown is retried with backoff, ' + 'then exit 2 naming it throttled',
    async () => {
      let requests = 0;
      const server = createServer((_request, response) => {
        requests++;
        response.writeHead(503, { 'content-type': 'application/xml' });
        response.end(
          '<?xml version="1.0" encoding="UTF-8"?>' +
            '<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const result = await cli(['render', 'samples/originals', '--out', 's3://media/throttled/'], {
          AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
        });
        expect(result.code).toBe(2);
        expect(result.stderr).toBe('error: s3://media/throttled/: throttled after 4 attempts\n');
        expect(requests).toBe(4);
      } finally {
        server.close();
      }
    },
  );

  it('an endpoint that accepts connections and never answers is cut at --timeout, retried, then exit 2', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const server = createNetServer((socket) => sockets.add(socket)); // reads nothing, answers nothing
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const started = Date.now();
      const result = await cli(['render', 'samples/originals', '--out', 's3://media/stalled/', '--timeout', '300'], {
        AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}`,
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(
          `^error: s3://media/stalled/: endpoint http://127\\.0\\.0\\.1:${port} unreachable \\(ETIMEDOUT\\) after 4 attempts\n$`,
        ),
      );
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });

  it('a single object is an original, as a single file is; a prefix with nothing below it fails, named', async () => {
    await s3.put('originals', `one-${bucketRun}/photo.jpg`, await photo(640, 480).jpeg().toBuffer());
    const one = await cli(['render', `s3://originals/one-${bucketRun}/photo.jpg`, '--out', out, '--json']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout).results[0]).toMatchObject({
      source: `s3://originals/one-${bucketRun}/photo.jpg`,
      status: 'rendered',
    });
    expect(await s3.head('media', `${prefix}photo.max-300x300.jpg`)).toMatchObject({ contentType: 'image/jpeg' });
    const none = await cli(['render', `s3://originals/nothing-${bucketRun}/`, '--out', out]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      new RegExp(`failed: s3://originals/nothing-${bucketRun}/: no such object, and no objects below this prefix`),
    );
  });

  it('s3:/ with one slash is refused, never taken for a local folder', async () => {
    const dir = await tempDir();
    const original = path.resolve('samples/originals/dandelion.jpg');
    const result = await runCli(['render', original, '--out', 's3:/media/x/'], {
      cwd: dir,
      env: s3.env,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /Expected s3:\/\/bucket\/prefix\/ with a valid bucket name but got 's3:\/media\/x\/'/,
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('a bucket deleted mid-run: each original that fails says why, naming the bucket and the key (#22)', async () => {
    const dir = settled.doomed;
    await s3.sync();
    const before = s3.puts.length;
    const run = startCli(['render', dir, '--out', 's3://doomed/media/', '--concurrency', '1'], { env: s3.env });
    // The first rendition written, the bucket goes.
    for (;;) {
      await s3.sync();
      if (s3.puts.slice(before).some((put) => put.startsWith('doomed/'))) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await s3.deleteBucket('doomed');
    const result = await run.done;
    expect(result.code).toBe(1);
    const failed = result.stderr.split('\n').filter((line) => line.startsWith('failed'));
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed) {
      expect(line).not.toContain('CONTENT_API_STORAGE');
      expect(line).toMatch(
        /s3:\/\/doomed\/media\/\S+: no such bucket \(NoSuchBucket: the bucket 'doomed' does not exist\)/,
      );
    }
    expect(
      failed.filter((line) => line.includes(': cannot write renditions (s3://doomed/media/')).length,
    ).toBeGreaterThan(0);
  });

  describe('a bucket that cannot be used is exit 2 with one line naming it', () => {
    const cases: Array<[string, () => [string[], Record<string, string | undefined>], RegExp]> = [
      [
        'no credentials',
        () => [
          ['render', 'samples/originals', '--out', out],
          { AWS_ACCESS_KEY_ID: undefined, AWS_SECRET_ACCESS_KEY: undefined },
        ],
        /no AWS credentials/,
      ],
      [
        'an unknown access key',
        () => [['render', 'samples/originals', '--out', out], { AWS_ACCESS_KEY_ID: 'NOBODY' }],
        /access denied/,
      ],
      [
        'a bucket that does not exist',
        () => [['render', 'samples/originals', '--out', 's3://no-such-bucket/media/'], {}],
        /s3:\/\/no-such-bucket\/media\/: no such bucket/,
      ],
      [
        'an endpoint that is down',
        () => [['render', 'samples/originals', '--out', out], { AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9' }],
        // The endpoint named (#22): which one was tried is the first thing to check.
        /: endpoint http:\/\/127\.0\.0\.1:9 unreachable \(ECONNREFUSED\)/,
      ],
      [
        'originals in a missing bucket',
        () => [['render', 's3://no-such-bucket/in/', '--out', out], {}],
        /s3:\/\/no-such-bucket\/in\/: no such bucket/,
      ],
      [
        'an s3:// URL that is no bucket name',
        () => [['render', 'samples/originals', '--out', 's3://A_B/'], {}],
        /Expected s3:\/\/bucket\/prefix\//,
      ],
    ];
    it.each(cases)('%s', async (_name, make, message) => {
      const [args, env] = make();
      const result = await cli(args, env);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    });
  });
});
