/**
 * The archive checked whole (`check --verify-files <place>` without pages): every record of the
 * manifest `render` wrote, each of its files present, decodable, of its recorded size and picture
 * and of its extension's format, alternates agreeing in sizes. Real renders of small originals
 * with real sharp, in a folder and in a bucket prefix (a real s3rver): one contract for both.
 */
import path from 'node:path';
import sharp, { type JpegOptions } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ArchiveRecord, ArchiveRun, archiveRecords, byStem, type StoreSource } from '../../src/check/archive.js';
import type { CheckedPage } from '../../src/check/check.js';
import { openFileSource } from '../../src/check/probe.js';
import type { ManifestEntry } from '../../src/renditions/manifest.js';
import { renderOriginals } from '../../src/renditions/render.js';
import { photo, writeImage } from '../fixtures/images.js';
import { type Place, places } from '../fixtures/places.js';
import { applyEnv, startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';

let s3: TestS3;

beforeAll(async () => {
  s3 = await startS3(['archive']);
  applyEnv(s3.env);
});

afterAll(async () => {
  await s3.close();
});

const kinds = places(() => s3, 'archive');

/**
 * Two originals of one size showing different pictures, rendered as JPEG with WebP alternates:
 * `meadow` (xs 300x188, sm 600x375, md to xl 700x438) and `quarry`.
 */
async function rendered(place: Place): Promise<void> {
  const originals = await tempDir();
  await writeImage(originals, 'meadow.jpg', photo(700, 438).jpeg());
  await writeImage(originals, 'quarry.jpg', photo(438, 700).rotate(90).flop().negate().jpeg());
  const report = await renderOriginals([originals], { outDir: place.location, formats: ['keep', 'webp'] });
  expect(report.failures).toEqual([]);
}

async function check(place: Place): Promise<{ pages: CheckedPage[]; run: ArchiveRun }> {
  const files = (await openFileSource(place.location)) as StoreSource;
  try {
    const run = new ArchiveRun({ files });
    const pages: CheckedPage[] = [];
    for await (const page of run.run(await archiveRecords(files))) pages.push(page);
    return { pages, run };
  } finally {
    await files.close();
  }
}

/** `file` in `place` encoded again as a JPEG: the same picture, other bytes. */
const encodeAsJpeg = async (place: Place, file: string, options?: JpegOptions) =>
  place.write(
    file,
    await sharp(await place.read(file))
      .jpeg(options)
      .toBuffer(),
  );

const findings = (pages: CheckedPage[]) =>
  pages.flatMap((page) =>
    page.problems.map(({ rule, path, message }) => ({ source: page.source, record: page.record, rule, path, message })),
  );

describe.each(kinds)('the archive checked whole (%s)', (_, open) => {
  it('two originals in two formats: every record checked, every file read once, no findings', async () => {
    const place = await open();
    await rendered(place);
    const { pages, run } = await check(place);
    expect(pages.map((page) => [page.source, page.record])).toEqual(
      ['meadow.jpg', 'meadow.webp', 'quarry.jpg', 'quarry.webp'].map((key) => [place.named(key), key]),
    );
    expect(findings(pages)).toEqual([]);
    expect(run.summary).toMatchObject({ records: 4, pages: 4, errors: 0, warnings: 0, files: { probed: 20 } });
    expect(pages[1]!.images[0]!.sizes.md).toMatchObject({
      width: 700,
      height: 438,
      url: '/media/meadow.max-1200x1200.webp',
    });
  });

  it('a truncated, a swapped, a missing and a wrong-size file: each once, naming its record and file', async () => {
    const place = await open();
    await rendered(place);
    const truncated = 'meadow.max-1200x1200.webp';
    const bytes = await place.read(truncated);
    await place.write(truncated, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    // Another picture of the same size in its place.
    const swapped = 'meadow.max-2400x2400.jpg';
    await place.write(swapped, await place.read('quarry.max-2400x2400.jpg'));
    const missing = 'quarry.max-300x300.webp';
    await place.remove(missing);
    const resized = 'quarry.max-600x600.jpg';
    await place.write(
      resized,
      await sharp(await place.read(resized))
        .resize(500)
        .jpeg()
        .toBuffer(),
    );

    const found = findings((await check(place)).pages);
    expect(found.map(({ record, rule, path }) => `${record} ${rule} ${path}`)).toEqual([
      'meadow.jpg file-picture $.renditions.lg.path',
      'meadow.webp file-unreadable $.renditions.md.path',
      'quarry.jpg file-size $.renditions.sm.path',
      'quarry.webp file-missing $.renditions.xs.path',
    ]);
    expect(found.map(({ source }) => source)).toEqual(
      ['meadow.jpg', 'meadow.webp', 'quarry.jpg', 'quarry.webp'].map(place.named),
    );
    expect(found[0]!.message).toMatch(`${place.named(swapped)} is not the picture render recorded: `);
    expect(found[1]!.message).toMatch(`${place.named(truncated)} does not decode: `);
    expect(found[2]!.message).toBe(`${place.named(resized)} is 500x313, the manifest records 600x375`);
    expect(found[3]!.message).toBe(`${place.named(missing)} does not exist`);
  });

  it('a file encoded again (its picture, size and format as recorded, its bytes not) is file-version', async () => {
    const place = await open();
    await rendered(place);
    const file = 'meadow.max-600x600.jpg';
    await encodeAsJpeg(place, file, { quality: 95 });
    const found = findings((await check(place)).pages);
    expect(found.map(({ record, rule, path }) => `${record} ${rule} ${path}`)).toEqual([
      'meadow.jpg file-version $.renditions.sm.path',
    ]);
    const [message] = found.map((finding) => finding.message);
    expect(message!.startsWith(`${place.named(file)} is version `)).toBe(true);
    expect(message).toMatch(
      / is version [0-9a-f]{8} \(its SHA-256's first 8 hex digits\), the manifest records [0-9a-f]{8}$/,
    );
  });

  it('a JPEG under a .webp name is file-format', async () => {
    const place = await open();
    await rendered(place);
    const file = 'quarry.max-1200x1200.webp';
    await encodeAsJpeg(place, file);
    expect(findings((await check(place)).pages)).toEqual([
      {
        source: place.named('quarry.webp'),
        record: 'quarry.webp',
        rule: 'file-format',
        path: '$.renditions.md.path',
        message: `${place.named(file)} is jpeg, its name says webp`,
      },
    ]);
  });

  it('an alternate of another size than the one its original is recorded at is file-size, once', async () => {
    const place = await open();
    await rendered(place);
    // The WebP's sm file and its record agree, but not with the JPEG's record of the same original.
    const file = 'meadow.max-600x600.webp';
    await place.write(
      file,
      await sharp(await place.read(file))
        .resize(590)
        .webp()
        .toBuffer(),
    );
    await place.editRecord('meadow.webp', (entry) => {
      entry.renditions.sm.width = 590;
      entry.renditions.sm.height = 369;
    });
    expect(findings((await check(place)).pages)).toEqual([
      {
        source: place.named('meadow.webp'),
        record: 'meadow.webp',
        rule: 'file-size',
        path: '$.renditions.sm.path',
        message: `${place.named(file)} is 590x369, its jpg alternate meadow.jpg records 600x375`,
      },
    ]);
  });
});

describe('the archive: no manifest, and records out of order', () => {
  it('a place with files but no manifest cannot be checked whole', async () => {
    const media = path.join(await tempDir(), 'media');
    await writeImage(media, 'loose.jpg', photo(64, 48).jpeg());
    const files = (await openFileSource(media)) as StoreSource;
    await expect(archiveRecords(files)).rejects.toThrow(
      `--verify-files ${media}: holds no manifest (render writes one beside the renditions)`,
    );
    await files.close();
  });

  it('groups records by stem in key order, and holds back a bounded number of stems in any order', async () => {
    const entry = {} as ManifestEntry;
    const from = async function* (keys: string[]): AsyncIterable<ArchiveRecord> {
      for (const key of keys) yield [key, entry];
    };
    const groups = async (keys: string[]) => {
      const found: string[][] = [];
      for await (const group of byStem(from(keys))) found.push(group.map(([key]) => key));
      return found;
    };
    // `dune.b.jpg` (stem `dune.b`) sorts between `dune.avif` and `dune.jpg`, both of stem `dune`.
    expect(await groups(['a/x.jpg', 'dune-2.jpg', 'dune.avif', 'dune.b.jpg', 'dune.jpg', 'dunes.jpg'])).toEqual([
      ['a/x.jpg'],
      ['dune-2.jpg'],
      ['dune.b.jpg'],
      ['dune.avif', 'dune.jpg'],
      ['dunes.jpg'],
    ]);
    // Backwards, no group is ever passed: the oldest ones go on as the bound is reached.
    const backwards = Array.from({ length: 1000 }, (_, i) => `p${String(999 - i).padStart(4, '0')}.jpg`);
    let most = 0;
    let seen = 0;
    for await (const group of byStem(
      (async function* () {
        for (const key of backwards) {
          seen++;
          most = Math.max(most, seen);
          yield [key, entry] as ArchiveRecord;
        }
      })(),
    )) {
      seen -= group.length;
    }
    expect(most).toBeLessThanOrEqual(257);
  });
});
