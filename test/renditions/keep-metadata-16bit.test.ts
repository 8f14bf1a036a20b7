/**
 * A 16-bit RGB original keeps its colours with `keepMetadata` (issue #35, item 15): sharp (0.35) works
 * on 16-bit RGB in Display P3, so the sRGB profile `withMetadata()` converts to took untagged pixels for
 * P3 ones (about 8 levels a channel more saturated), and an original's own profile converted its
 * pixels to P3 that were then written as sRGB (less saturated). The renditions of each 16-bit
 * original, with and without `keepMetadata`, show what those of the same picture in 8 bits do, and
 * each file is the picture its manifest record holds (what `check --verify-files` compares).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareFingerprints, fingerprintFile } from '../../src/picture/index.js';
import { type RenderResult, renderOriginals } from '../../src/renditions/render.js';
import { RENDITION_KEYS } from '../../src/renditions/rules.js';
import { readEntries } from '../fixtures/manifest.js';
import { pngChunk } from '../fixtures/png.js';

/** A photograph whose xs the issue measured (157/112/56), warm enough for a gamut mistake to show. */
const DANDELION = path.resolve(import.meta.dirname, '../../samples/originals/dandelion.jpg');
const COPYRIGHT = 'Gallery 2026';
/** The sRGB profile sharp tags its output with. */
const SRGB = sharp({ create: { width: 1, height: 1, channels: 3, background: '#000' } })
  .withIccProfile('srgb')
  .png()
  .toBuffer()
  .then(async (png) => (await sharp(png).metadata()).icc!);

/** `png` with an sRGB chunk (perceptual intent) after its IHDR: tagged sRGB without an ICC profile. */
const withSrgbChunk = (png: Buffer) =>
  Buffer.concat([png.subarray(0, 33), pngChunk('sRGB', Buffer.from([0])), png.subarray(33)]);

const mean = async (file: string) => (await sharp(file).stats()).channels.slice(0, 3).map((c) => c.mean);

describe('a 16-bit RGB PNG rendered with keepMetadata', () => {
  const originals = ['untagged16.png', 'srgb-chunk16.png', 'icc-srgb16.png'];
  let dir: string;
  /** The renditions of each original, by file name, without and with keepMetadata. */
  const plain = new Map<string, RenderResult>();
  const kept = new Map<string, RenderResult>();

  // Rendered once for every test below (tempDir's folders go after each test).
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'content-api-16bit-'));
    const input = path.join(dir, 'in');
    // The same sRGB numbers in 8 bits (the reference) and in 16, untagged, tagged by chunk, tagged by profile.
    const photo = await sharp(DANDELION).resize(700).png().toBuffer();
    const exif = (image: Sharp) => image.withExif({ IFD0: { Copyright: COPYRIGHT } });
    const sixteen = () => exif(sharp(photo).toColourspace('rgb16'));
    const untagged = await sixteen().png().toBuffer();
    const files: Record<string, Buffer> = {
      'eight.png': await exif(sharp(photo)).png().toBuffer(),
      'untagged16.png': untagged,
      'srgb-chunk16.png': withSrgbChunk(untagged),
      'icc-srgb16.png': await sixteen().withIccProfile('srgb').png().toBuffer(),
    };
    await mkdir(input);
    for (const [name, data] of Object.entries(files)) await writeFile(path.join(input, name), data);
    for (const name of originals) {
      const meta = await sharp(files[name]).metadata();
      expect([name, meta.space, meta.bitsPerSample, meta.hasProfile]).toEqual([
        name,
        'rgb16',
        16,
        name.startsWith('icc'),
      ]);
    }
    for (const [keepMetadata, results] of [
      [false, plain],
      [true, kept],
    ] as const) {
      const report = await renderOriginals([input], { outDir: path.join(dir, String(keepMetadata)), keepMetadata });
      expect(report.failures).toEqual([]);
      for (const result of report.results) results.set(path.basename(result.source), result);
    }
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  const xs = (keepMetadata: boolean, name: string) =>
    path.join(dir, String(keepMetadata), (keepMetadata ? kept : plain).get(name)!.files.xs.path);

  it.each(originals)('%s: xs has the colours of the 8-bit picture, with and without keepMetadata', async (name) => {
    const reference = await mean(xs(false, 'eight.png'));
    // The figures for this photograph's xs: 157/112/56 (its 8-bit rendering), 164/109/43 (kept, before).
    for (const [c, value] of [157, 112, 56].entries()) expect(Math.abs(reference[c]! - value)).toBeLessThan(1.5);
    const without = await mean(xs(false, name));
    const withMetadata = await mean(xs(true, name));
    for (const [c, value] of reference.entries()) {
      expect(Math.abs(withMetadata[c]! - without[c]!), `${name} channel ${c}: kept vs stripped`).toBeLessThanOrEqual(2);
      expect(Math.abs(withMetadata[c]! - value), `${name} channel ${c}: kept vs 8-bit`).toBeLessThanOrEqual(2);
      expect(Math.abs(without[c]! - value), `${name} channel ${c}: stripped vs 8-bit`).toBeLessThanOrEqual(2);
    }
  });

  it.each(originals)('%s: keepMetadata still keeps EXIF and tags the renditions sRGB', async (name) => {
    const meta = await sharp(xs(true, name)).metadata();
    expect(meta.exif?.toString('latin1')).toContain(COPYRIGHT);
    expect(meta.icc?.equals(await SRGB)).toBe(true);
  });

  it('every rendition is the picture its manifest record holds (check --verify-files)', async () => {
    for (const keepMetadata of [false, true]) {
      const out = path.join(dir, String(keepMetadata));
      const entries = Object.values(await readEntries(out));
      expect(entries).toHaveLength(originals.length + 1);
      for (const entry of entries) {
        for (const key of RENDITION_KEYS) {
          const rendition = entry.renditions[key];
          const comparison = compareFingerprints(
            rendition.fingerprint!,
            await fingerprintFile(path.join(out, rendition.path)),
          );
          expect([rendition.path, keepMetadata, comparison.differences]).toEqual([rendition.path, keepMetadata, []]);
        }
      }
    }
  });
});
