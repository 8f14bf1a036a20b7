import { mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  INVALID_MANIFEST_FILE,
  MANIFEST_FILE,
  MANIFEST_RECORDS,
  MIGRATED_MANIFEST_FILE,
} from '../../src/renditions/manifest.js';
import { type RenderResult, renderOriginal, renderOriginals, renderSources } from '../../src/renditions/render.js';
import { parseSrcset, RENDITION_KEYS, renditionSizes } from '../../src/renditions/rules.js';
import { animatedGif, orientedImage, photo, writeImage } from '../fixtures/images.js';
import { readEntries, recordFile } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';
import { versioned } from '../fixtures/versions.js';

/** Reads every rendition back and checks it against the Image object and the rules. */
async function expectFilesMatchImage(outDir: string, result: RenderResult) {
  const expected = renditionSizes(result.original);
  const srcset = parseSrcset(result.image.srcset);
  expect(srcset).not.toBeNull();
  for (const [index, key] of RENDITION_KEYS.entries()) {
    const file = result.files[key];
    const meta = await sharp(path.join(outDir, file.path)).metadata();
    expect({ key, width: meta.width, height: meta.height }).toEqual({ key, ...expected[key] });
    // Each URL carries its file's version: the first 8 hex digits of the SHA-256 of the bytes written.
    const url = await versioned(`/media/${file.path}`, path.join(outDir, file.path));
    expect(result.image.sizes[key]).toEqual({ width: meta.width, height: meta.height, url });
    expect(srcset![index]).toEqual({ url, width: meta.width });
  }
}

describe('geometry, read back from the written files', () => {
  const table: Array<[string, number, number]> = [
    ['smaller than 300 px', 200, 150],
    ['exactly 600x600', 600, 600],
    ['301x301', 301, 301],
    ['4801x10', 4801, 10],
    ['10000x400 panorama', 10000, 400],
    ['400x8000 tall', 400, 8000],
    ['1x1', 1, 1],
  ];
  it.each(table)('%s', async (_name, width, height) => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'in/original.png', photo(width, height));
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    expect(result.status).toBe('rendered');
    expect(result.original).toEqual({ width, height });
    await expectFilesMatchImage(out, result);
  });

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('EXIF orientation %i: sizes and pixels as displayed', async (orientation) => {
    const dir = await tempDir();
    const source = await writeImage(dir, `o${orientation}.jpg`, await orientedImage(orientation));
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    const displayed = orientation >= 5 ? { width: 20, height: 40 } : { width: 40, height: 20 };
    expect(result.original).toEqual(displayed);
    await expectFilesMatchImage(out, result);
    const xl = path.join(out, result.files.xl.path);
    expect((await sharp(xl).metadata()).orientation ?? 1).toBe(1);
    const { data } = await sharp(xl).raw().toBuffer({ resolveWithObject: true });
    const pixel = (x: number, y: number) => [
      ...data.subarray((y * displayed.width + x) * 3, (y * displayed.width + x) * 3 + 3),
    ];
    const [r, , b] = pixel(2, 2);
    expect(r).toBeGreaterThan(200);
    expect(b).toBeLessThan(60);
    const [r2, , b2] = pixel(displayed.width - 3, displayed.height - 3);
    expect(r2).toBeLessThan(60);
    expect(b2).toBeGreaterThan(200);
  });

  it('renders a 24-megapixel-class JPEG with every rendition at its box', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'big.jpg', photo(6000, 4000).jpeg());
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    await expectFilesMatchImage(out, result);
    expect(result.files.xl).toMatchObject({ width: 4800, height: 3200 });
    expect(result.image).toMatchObject({ width: 1, height: 0.666667 });
  });
});

describe('naming', () => {
  it('writes <name>.max-<n>x<n>.<ext> by default, <name>_<n>x<n>.<ext> on request, keeping folders', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'in/Old Works/Évening Light.JPG', photo(700, 500).jpeg());
    const out = path.join(dir, 'out');
    const [max] = (await renderOriginals([path.join(dir, 'in')], { outDir: out })).results;
    expect(RENDITION_KEYS.map((key) => max!.files[key].path)).toEqual(
      [300, 600, 1200, 2400, 4800].map((n) => `old-works/evening-light.max-${n}x${n}.jpg`),
    );
    const earlier = RENDITION_KEYS.map((key) => max!.files[key].path).sort();
    const [under] = (await renderOriginals([path.join(dir, 'in')], { outDir: out, naming: 'underscore' })).results;
    expect(under!.files.md.path).toBe('old-works/evening-light_1200x1200.jpg');
    await stat(path.join(out, 'old-works/evening-light_1200x1200.jpg'));
    // The files of the earlier naming are kept, and named in the record, so that a later prune finds them ...
    expect(under!.kept).toEqual(earlier);
    await stat(path.join(out, 'old-works/evening-light.max-1200x1200.jpg'));
    expect((await readEntries(out))['old-works/evening-light.jpg']!.kept).toEqual(earlier);
    // ... and removes them.
    const [pruned] = (await renderOriginals([path.join(dir, 'in')], { outDir: out, naming: 'underscore', prune: true }))
      .results;
    expect([pruned!.status, pruned!.removed]).toEqual(['skipped', earlier]);
    await expect(stat(path.join(out, 'old-works/evening-light.max-1200x1200.jpg'))).rejects.toThrow();
    expect((await readEntries(out))['old-works/evening-light.jpg']!.kept).toBeUndefined();
    const [after] = (await renderOriginals([path.join(dir, 'in')], { outDir: out, naming: 'underscore' })).results;
    expect([after!.status, after!.removed, after!.kept]).toEqual(['skipped', [], []]);
  });

  it('builds URLs from --media-url and the path under the output folder', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'a.png', photo(400, 300));
    const result = await renderOriginal(source, {
      outDir: path.join(dir, 'out'),
      mediaUrl: 'https://cdn.example.org/m',
    });
    const xs = await versioned('https://cdn.example.org/m/a.max-300x300.png', path.join(dir, 'out/a.max-300x300.png'));
    expect(result.image.sizes.xs.url).toBe(xs);
    expect(result.image.srcset.startsWith(`${xs} 300w, `)).toBe(true);
  });

  it('names three of the others in a collision, however many there are (#22: a reason per original grew as the square)', async () => {
    const dir = await tempDir();
    const names = ['photo', 'Photo', 'PHOTO', 'pHoto', 'phOto', 'phoTo', 'photO', 'PhOtO'];
    for (const name of names) await writeImage(dir, `in/${name}.jpg`, photo(64, 48).jpeg());
    const report = await renderOriginals([path.join(dir, 'in')], { outDir: path.join(dir, 'out') });
    expect(report.failures).toHaveLength(8);
    for (const failure of report.failures) {
      expect(failure.code).toBe('CONTENT_API_NAME_COLLISION');
      expect(failure.error).toMatch(/ and 4 more \(all 8 are 'photo.jpg' in the output folder\); rename one$/);
      expect(failure.error.match(/\/in\//g)).toHaveLength(4); // its own source and three others
    }
  });

  it('refuses two originals that would write the same files, and renders the rest', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'in/Photo.jpg', photo(100, 100).jpeg());
    await writeImage(dir, 'in/photo.jpeg', photo(100, 100).jpeg());
    await writeImage(dir, 'in/scan.jpg', photo(100, 100).jpeg());
    await writeImage(dir, 'in/scan.tif', photo(100, 100).tiff()); // becomes JPEG: the same files
    await writeImage(dir, 'in/lake.jpg', photo(100, 100).jpeg());
    await writeImage(dir, 'in/lake.png', photo(100, 100).png()); // other files: no collision
    const out = path.join(dir, 'out');
    const report = await renderOriginals([path.join(dir, 'in')], { outDir: out });
    expect(report.results.map((r) => path.basename(r.source))).toEqual(['lake.jpg', 'lake.png']);
    expect(report.failures.map((f) => [path.basename(f.source), f.code]).sort()).toEqual([
      ['Photo.jpg', 'CONTENT_API_NAME_COLLISION'],
      ['photo.jpeg', 'CONTENT_API_NAME_COLLISION'],
      ['scan.jpg', 'CONTENT_API_NAME_COLLISION'],
      ['scan.tif', 'CONTENT_API_NAME_COLLISION'],
    ]);
    const errorOf = (name: string) => report.failures.find((f) => path.basename(f.source) === name)!.error;
    expect(errorOf('Photo.jpg')).toContain('photo.jpeg');
    expect(errorOf('scan.tif')).toContain('scan.jpg');
    const written = (await readdir(out)).filter((f) => !f.startsWith('.')).sort();
    expect(written.every((f) => f.startsWith('lake.'))).toBe(true);
    expect(written).toHaveLength(10);
  });

  it('refuses to overwrite the renditions another original wrote in an earlier run, unless forced', async () => {
    const dir = await tempDir();
    const first = await writeImage(dir, '2024/a.jpg', photo(300, 200).jpeg());
    const second = await writeImage(dir, '2025/a.jpg', photo(200, 300).jpeg());
    const out = path.join(dir, 'out');
    await renderOriginal(first, { outDir: out });
    const report = await renderOriginals([second], { outDir: out });
    expect(report.failures).toEqual([expect.objectContaining({ code: 'CONTENT_API_NAME_COLLISION' })]);
    expect(report.failures[0]!.error).toContain(path.resolve(first));
    expect((await sharp(path.join(out, 'a.max-300x300.jpg')).metadata()).width).toBe(300);
    const forced = await renderOriginal(second, { outDir: out, force: true });
    expect(forced.files.xs).toMatchObject({ width: 200, height: 300 });
    // Once the earlier original is gone (moved or renamed), its place may be taken.
    await rm(first);
    await writeImage(dir, '2026/a.jpg', photo(250, 250).jpeg());
    await rm(second);
    expect((await renderOriginal(path.join(dir, '2026/a.jpg'), { outDir: out })).status).toBe('rendered');
  });

  it(
    'renders bytes in memory under a given stem, but not over renditions an original file wrote, ' + 'unless forced',
    async () => {
      const dir = await tempDir();
      const original = await writeImage(dir, 'a.jpg', photo(300, 200).jpeg());
      const out = path.join(dir, 'out');
      await renderOriginal(original, { outDir: out });
      const download = {
        source: 'http://127.0.0.1:9/media/a.max-4800x4800.jpg',
        stem: 'a',
        data: await photo(200, 300).jpeg().toBuffer(),
      };
      const refused = await renderSources([download], { outDir: out });
      expect(refused.failures).toEqual([
        expect.objectContaining({ code: 'CONTENT_API_NAME_COLLISION', source: download.source }),
      ]);
      expect(refused.failures[0]!.error).toContain(`would overwrite the renditions of ${path.resolve(original)}`);
      expect((await sharp(path.join(out, 'a.max-300x300.jpg')).metadata()).width).toBe(300);
      const forced = await renderSources([download], { outDir: out, force: true });
      expect(forced.results.map((r) => [r.status, r.files.xs.width, r.files.xs.height])).toEqual([
        ['rendered', 200, 300],
      ]);
      expect((await sharp(path.join(out, 'a.max-300x300.jpg')).metadata()).width).toBe(200);
    },
  );

  it('keeps the files of an earlier format when the format changes, and removes them with prune', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'a.png', photo(400, 300));
    const out = path.join(dir, 'out');
    await renderOriginal(source, { outDir: out });
    const pngs = [
      'a.max-1200x1200.png',
      'a.max-2400x2400.png',
      'a.max-300x300.png',
      'a.max-4800x4800.png',
      'a.max-600x600.png',
    ];
    const webps = [
      'a.max-1200x1200.webp',
      'a.max-2400x2400.webp',
      'a.max-300x300.webp',
      'a.max-4800x4800.webp',
      'a.max-600x600.webp',
    ];
    const pictures = async () => (await readdir(out)).filter((f) => !f.startsWith('.')).sort();
    // Without prune, nothing is removed: the PNGs are kept, said every run, and their record stays.
    const converted = await renderOriginal(source, { outDir: out, formats: ['webp'] });
    expect([converted.status, converted.removed, converted.kept]).toEqual(['rendered', [], pngs]);
    const again = await renderOriginal(source, { outDir: out, formats: ['webp'] });
    expect([again.status, again.removed, again.kept]).toEqual(['skipped', [], pngs]);
    expect(await pictures()).toEqual([...pngs, ...webps].sort());
    expect(Object.keys(await readEntries(out))).toEqual(['a.png', 'a.webp']);
    // Pruned: listed first by a dry run, which removes nothing ...
    const planned = await renderOriginal(source, { outDir: out, formats: ['webp'], prune: true, dryRun: true });
    expect([planned.removed, planned.kept]).toEqual([pngs, []]);
    expect(await pictures()).toEqual([...pngs, ...webps].sort());
    // ... then removed, with their record.
    const pruned = await renderOriginal(source, { outDir: out, formats: ['webp'], prune: true });
    expect([pruned.status, pruned.removed, pruned.kept]).toEqual(['skipped', pngs, []]);
    expect((await renderOriginal(source, { outDir: out, formats: ['webp'], prune: true })).removed).toEqual([]);
    expect(await pictures()).toEqual([
      'a.max-1200x1200.webp',
      'a.max-2400x2400.webp',
      'a.max-300x300.webp',
      'a.max-4800x4800.webp',
      'a.max-600x600.webp',
    ]);
    expect(Object.keys(await readEntries(out))).toEqual(['a.webp']);
  });
});

describe('formats and colour', () => {
  it('keeps web formats, turns TIFF into JPEG (PNG with alpha), and converts all with format', async () => {
    const dir = await tempDir();
    const inDir = path.join(dir, 'in');
    await writeImage(inDir, 'a.webp', photo(500, 400).webp());
    await writeImage(inDir, 'b.tif', photo(500, 400).tiff());
    await writeImage(inDir, 'c.tif', photo(500, 400, 4).tiff({ compression: 'lzw' }));
    await writeImage(inDir, 'd.avif', photo(320, 200).avif());
    const out = path.join(dir, 'out');
    const report = await renderOriginals([inDir], { outDir: out });
    expect(report.results.map((r) => r.format)).toEqual(['webp', 'jpeg', 'png', 'avif']);
    for (const result of report.results) {
      const meta = await sharp(path.join(out, result.files.xs.path)).metadata();
      expect(meta.format).toBe(result.format === 'avif' ? 'heif' : result.format);
    }
    const pngMeta = await sharp(path.join(out, report.results[2]!.files.sm.path)).metadata();
    expect(pngMeta.hasAlpha).toBe(true);

    const forced = await renderOriginals([inDir], { outDir: path.join(dir, 'forced'), formats: ['webp'] });
    expect(forced.results.map((r) => r.format)).toEqual(['webp', 'webp', 'webp', 'webp']);
    expect(forced.results[1]!.files.xs.path).toBe('b.max-300x300.webp');
  });

  it('converts a CMYK original to sRGB, as libvips colour management does', async () => {
    const dir = await tempDir();
    const colour = { r: 180, g: 90, b: 70 };
    const cmyk = sharp({ create: { width: 640, height: 480, channels: 3, background: colour } })
      .toColourspace('cmyk')
      .jpeg({ quality: 95 });
    const source = await writeImage(dir, 'cmyk.jpg', cmyk);
    const meta = await sharp(source).metadata();
    expect([meta.space, meta.channels]).toEqual(['cmyk', 4]);
    // The reference: libvips' own CMYK -> sRGB transform of the decoded original.
    const reference = [...(await sharp(source).toColourspace('srgb').raw().toBuffer()).subarray(0, 3)];
    expect(Math.abs(reference[0]! - colour.r)).toBeLessThan(20);
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    for (const key of RENDITION_KEYS) {
      const file = path.join(out, result.files[key].path);
      const written = await sharp(file).metadata();
      expect([written.space, written.channels]).toEqual(['srgb', 3]);
      const { channels } = await sharp(file).stats();
      for (const [i, channel] of channels.entries()) expect(Math.abs(channel.mean - reference[i]!)).toBeLessThan(4);
    }
  });

  it('converts a Display P3 original to sRGB through its profile', async () => {
    const dir = await tempDir();
    const colour = { r: 230, g: 60, b: 40 };
    // The sRGB colour, transformed into Display P3 numbers and tagged with the P3 profile.
    const source = await writeImage(
      dir,
      'p3.png',
      sharp({ create: { width: 64, height: 48, channels: 3, background: colour } })
        .withIccProfile('p3')
        .png(),
    );
    const stored = (await sharp(source).stats()).channels.map((c) => Math.round(c.mean));
    expect((await sharp(source).metadata()).hasProfile).toBe(true);
    expect(Math.abs(stored[0]! - colour.r)).toBeGreaterThan(10); // P3 numbers differ from sRGB ones
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    const file = path.join(out, result.files.xs.path);
    expect((await sharp(file).metadata()).hasProfile).toBe(false);
    const written = (await sharp(file).stats()).channels.map((c) => c.mean);
    for (const [i, value] of [colour.r, colour.g, colour.b].entries())
      expect(Math.abs(written[i]! - value)).toBeLessThan(3);

    // With metadata kept, the pixels are converted all the same, and tagged sRGB.
    const kept = await renderOriginal(source, { outDir: path.join(dir, 'kept'), keepMetadata: true });
    const keptFile = path.join(dir, 'kept', kept.files.xs.path);
    const srgb = (
      await sharp(
        await sharp({ create: { width: 1, height: 1, channels: 3, background: colour } })
          .withIccProfile('srgb')
          .png()
          .toBuffer(),
      ).metadata()
    ).icc;
    expect((await sharp(keptFile).metadata()).icc?.equals(srgb!)).toBe(true);
    const keptPixels = (await sharp(keptFile).stats()).channels.map((c) => c.mean);
    for (const [i, value] of [colour.r, colour.g, colour.b].entries()) {
      expect(Math.abs(keptPixels[i]! - value)).toBeLessThan(3);
    }
  });

  it('flattens transparency onto white when the output is JPEG', async () => {
    const dir = await tempDir();
    const source = await writeImage(
      dir,
      'clear.png',
      sharp({ create: { width: 50, height: 50, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png(),
    );
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out, formats: ['jpeg'] });
    const { channels } = await sharp(path.join(out, result.files.xs.path)).stats();
    expect(channels.map((c) => Math.round(c.mean))).toEqual([255, 255, 255]);
  });

  it('keeps an animated GIF animated, every frame resized', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'spin.gif', await animatedGif(800, 400, 4));
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    expect(result.format).toBe('gif');
    expect(result.original).toEqual({ width: 800, height: 400 });
    for (const key of RENDITION_KEYS) {
      const meta = await sharp(path.join(out, result.files[key].path), { animated: true }).metadata();
      expect(meta.pages).toBe(4);
      expect({ width: meta.width, height: meta.pageHeight }).toEqual({
        width: result.files[key].width,
        height: result.files[key].height,
      });
    }
    expect(result.files.xs).toMatchObject({ width: 300, height: 150 });
  });

  it('keeps an animated WebP animated', async () => {
    const dir = await tempDir();
    const frames = await (await animatedGif(640, 480, 3)).toBuffer();
    const source = await writeImage(dir, 'loop.webp', sharp(frames, { animated: true }).webp());
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out });
    expect(result.format).toBe('webp');
    const meta = await sharp(path.join(out, result.files.sm.path), { animated: true }).metadata();
    expect([meta.pages, meta.width, meta.pageHeight]).toEqual([3, 600, 450]);
  });

  it('strips metadata by default and keeps it on request', async () => {
    const dir = await tempDir();
    const source = await writeImage(
      dir,
      'exif.jpg',
      photo(400, 300)
        .jpeg()
        .withExif({ IFD0: { Copyright: 'Gallery 2026' } }),
    );
    const stripped = await renderOriginal(source, { outDir: path.join(dir, 'a') });
    expect((await sharp(path.join(dir, 'a', stripped.files.xs.path)).metadata()).exif).toBeUndefined();
    const kept = await renderOriginal(source, { outDir: path.join(dir, 'b'), keepMetadata: true });
    const exif = (await sharp(path.join(dir, 'b', kept.files.xs.path)).metadata()).exif;
    expect(exif?.toString('latin1')).toContain('Gallery 2026');
  });
});

describe('Image objects', () => {
  it('carries alt text when given, null otherwise', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'in/a.png', photo(30, 20));
    await writeImage(dir, 'in/b.png', photo(30, 20));
    const report = await renderOriginals([path.join(dir, 'in')], {
      outDir: path.join(dir, 'out'),
      altText: (o) => (o.source.endsWith('a.png') ? 'A river at dusk' : undefined),
    });
    expect(report.results.map((r) => r.image.alt_text)).toEqual(['A river at dusk', null]);
  });
});

describe('incremental runs', () => {
  it('skips unchanged originals, redoes changed, damaged or forced ones', async () => {
    const dir = await tempDir();
    const inDir = path.join(dir, 'in');
    await writeImage(inDir, 'a.jpg', photo(900, 600).jpeg());
    await writeImage(inDir, 'b.jpg', photo(600, 900).jpeg());
    await writeImage(inDir, 'c.jpg', photo(300, 300).jpeg());
    const out = path.join(dir, 'out');
    const statuses = async (options = {}) =>
      (await renderOriginals([inDir], { outDir: out, ...options })).results.map(
        (r) => `${path.basename(r.source)}:${r.status}`,
      );

    expect(await statuses()).toEqual(['a.jpg:rendered', 'b.jpg:rendered', 'c.jpg:rendered']);
    expect(Object.keys(await readEntries(out))).toEqual(['a.jpg', 'b.jpg', 'c.jpg']);
    expect(await statuses()).toEqual(['a.jpg:skipped', 'b.jpg:skipped', 'c.jpg:skipped']);

    await writeImage(inDir, 'a.jpg', photo(900, 601).jpeg()); // changed content
    await rm(path.join(out, 'b.max-300x300.jpg')); // damaged output
    await writeFile(path.join(out, 'c.max-300x300.jpg'), 'truncated'); // damaged output
    expect(await statuses()).toEqual(['a.jpg:rendered', 'b.jpg:rendered', 'c.jpg:rendered']);
    expect(await statuses({ quality: { jpeg: 80 } })).toEqual(['a.jpg:skipped', 'b.jpg:skipped', 'c.jpg:skipped']);
    expect(await statuses({ quality: { jpeg: 60 } })).toEqual(['a.jpg:rendered', 'b.jpg:rendered', 'c.jpg:rendered']);
    expect(await statuses({ quality: { jpeg: 60 }, force: true })).toEqual([
      'a.jpg:rendered',
      'b.jpg:rendered',
      'c.jpg:rendered',
    ]);
    expect(await statuses({ quality: { jpeg: 60 } })).toEqual(['a.jpg:skipped', 'b.jpg:skipped', 'c.jpg:skipped']);
  });

  it(
    'records no stamp for a file changed within the last 2 s: ' + 'it could change again without its times moving',
    async () => {
      const dir = await tempDir();
      const source = await writeImage(dir, 'in/a.jpg', photo(900, 600).jpeg());
      const out = path.join(dir, 'out');
      expect((await renderOriginal(source, { outDir: out })).status).toBe('rendered');
      expect((await readEntries(out))['a.jpg']!.stamp).toBeUndefined();
    },
  );

  it('trusts the recorded hash only while the file’s stamp (size, times, inode) is the one recorded', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000 }); // every file looks settled
    onTestFinished(() => void vi.useRealTimers());
    const dir = await tempDir();
    const source = await writeImage(dir, 'in/a.jpg', photo(900, 600).jpeg());
    await utimes(source, 1_700_000_000, 1_700_000_000); // whole seconds, so the test can put it back exactly
    const out = path.join(dir, 'out');
    const manifestFile = recordFile(out, 'a.jpg');
    expect((await renderOriginal(source, { outDir: out })).status).toBe('rendered');
    const { mtimeMs, ctimeMs, size, ino } = await stat(source);
    const record = JSON.parse(await readFile(manifestFile, 'utf8'));
    expect(record.entry.stamp).toEqual({ size, mtimeMs, ctimeMs, ino });

    // Make the recorded hash wrong: a run that trusts the stamp does not notice (it did not read the file) ...
    record.entry.sha256 = '0'.repeat(64);
    await writeFile(manifestFile, JSON.stringify(record));
    expect((await renderOriginal(source, { outDir: out })).status).toBe('skipped');
    // ... and once the stamp changes (the file rewritten, same size, its modification time put back: only its
    // change time tells), the file is hashed again.
    await writeFile(source, await readFile(source));
    await utimes(source, 1_700_000_000, 1_700_000_000);
    expect((await stat(source)).mtimeMs).toBe(mtimeMs);
    expect((await renderOriginal(source, { outDir: out })).status).toBe('rendered');
    const again = JSON.parse(await readFile(manifestFile, 'utf8')).entry;
    expect(again.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(again.sha256).not.toBe('0'.repeat(64));
    expect(again.stamp.ctimeMs).toBe((await stat(source)).ctimeMs);
  });

  it(
    'originals moved together with their output folder (a clone elsewhere) are up to date: ' +
      'the manifest names them relative to it',
    async () => {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000 }); // every file looks settled
      onTestFinished(() => void vi.useRealTimers());
      const { rename } = await import('node:fs/promises');
      const dir = await tempDir();
      await writeImage(dir, 'project/originals/a.jpg', photo(900, 600).jpeg());
      await renderOriginals([path.join(dir, 'project/originals')], { outDir: path.join(dir, 'project/media') });
      const manifestIn = (folder: string) => recordFile(path.join(dir, folder, 'media'), 'a.jpg');
      const stored = JSON.parse(await readFile(manifestIn('project'), 'utf8'));
      expect(stored.entry.source).toBe(path.join('..', 'originals', 'a.jpg'));

      // A manifest from before relative paths names the old absolute path: after a move it is hashed
      // once, and recorded relative.
      stored.entry.source = path.join(dir, 'project/originals/a.jpg');
      await writeFile(manifestIn('project'), JSON.stringify(stored));
      await rename(path.join(dir, 'project'), path.join(dir, 'moved'));
      const moved = await renderOriginals([path.join(dir, 'moved/originals')], {
        outDir: path.join(dir, 'moved/media'),
      });
      expect(moved.results.map((r) => r.status)).toEqual(['skipped']);
      const again = JSON.parse(await readFile(manifestIn('moved'), 'utf8'));
      expect(again.entry.source).toBe(path.join('..', 'originals', 'a.jpg'));

      // Moved once more: the relative path still names it and its stamp holds, so it is not even read (a
      // wrong hash goes unseen).
      again.entry.sha256 = '0'.repeat(64);
      await writeFile(manifestIn('moved'), JSON.stringify(again));
      await rename(path.join(dir, 'moved'), path.join(dir, 'cloned'));
      const cloned = await renderOriginals([path.join(dir, 'cloned/originals')], {
        outDir: path.join(dir, 'cloned/media'),
      });
      expect(cloned.results.map((r) => r.status)).toEqual(['skipped']);
    },
  );

  it('a one-file manifest of an earlier version is migrated to records on the first run that writes, without a re-render', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 10_000 }); // every file looks settled
    onTestFinished(() => void vi.useRealTimers());
    const dir = await tempDir();
    const inDir = path.join(dir, 'in');
    await writeImage(inDir, 'a.jpg', photo(300, 200).jpeg());
    await writeImage(inDir, 'deep/b.png', photo(200, 300));
    const out = path.join(dir, 'out');
    await renderOriginals([inDir], { outDir: out });
    // The folder as an earlier version left it: one file, the same entries, no records.
    const entries = await readEntries(out);
    expect(Object.keys(entries)).toEqual(['a.jpg', 'deep/b.png']);
    await rm(path.join(out, MANIFEST_RECORDS), { recursive: true });
    await writeFile(path.join(out, MANIFEST_FILE), JSON.stringify({ version: 1, entries }));

    // A dry run reads it as it is, and writes nothing.
    const planned = await renderOriginals([inDir], { outDir: out, dryRun: true });
    expect(planned.results.map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect((await readdir(out)).filter((name) => name.startsWith('.'))).toEqual([MANIFEST_FILE]);
    // The first run that writes migrates it: nothing rendered, every entry a record, the old file kept aside.
    const migrated = await renderOriginals([inDir], { outDir: out });
    expect(migrated.results.map((r) => r.status)).toEqual(['skipped', 'skipped']);
    expect(await readEntries(out)).toEqual(entries);
    expect((await readdir(out)).filter((name) => name.startsWith('.')).sort()).toEqual([
      MANIFEST_RECORDS.slice(0, -1),
      MIGRATED_MANIFEST_FILE,
    ]);
    const again = await renderOriginals([inDir], { outDir: out });
    expect(again.results.map((r) => r.status)).toEqual(['skipped', 'skipped']);
  });

  it('a one-file manifest that is not one is set aside by the first run that writes, and said once', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'in/a.jpg', photo(300, 200).jpeg());
    const out = path.join(dir, 'out');
    await mkdir(out);
    await writeFile(path.join(out, MANIFEST_FILE), '{"version": 1, "entries": {"a.jpg": 7}}');
    const first = await renderOriginals([path.dirname(source)], { outDir: out });
    expect(first.results.map((r) => r.status)).toEqual(['rendered']);
    expect(first.warnings).toEqual([
      `${path.join(out, MANIFEST_FILE)}: not a valid manifest (kept as ${INVALID_MANIFEST_FILE}); ` +
        'every original it recorded will be rendered again',
    ]);
    expect((await readdir(out)).filter((name) => name.startsWith('.')).sort()).toEqual([
      MANIFEST_RECORDS.slice(0, -1),
      INVALID_MANIFEST_FILE,
    ]);
    const again = await renderOriginals([path.dirname(source)], { outDir: out });
    expect([again.results.map((r) => r.status), again.warnings]).toEqual([['skipped'], []]);
  });

  it('plans without writing on a dry run', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'a.jpg', photo(900, 600).jpeg());
    const out = path.join(dir, 'out');
    const result = await renderOriginal(source, { outDir: out, dryRun: true });
    expect(result.status).toBe('planned');
    expect(result.files.md).toMatchObject({ path: 'a.max-1200x1200.jpg', width: 900, height: 600 });
    await expect(stat(out)).rejects.toThrow();
  });
});
