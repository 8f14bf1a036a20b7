/**
 * `formats`: every rendition in each listed format from one decode, the first described by the
 * Image object, the others as `alternates`; incremental runs, removal, collisions and dry runs
 * treat alternates as they treat the primary files.
 */
import { copyFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pictureHtml } from '../../src/markup/picture.js';
import { type RenderResult, renderOriginal, renderOriginals } from '../../src/renditions/render.js';
import { parseSrcset, RENDITION_KEYS } from '../../src/renditions/rules.js';
import { animatedGif, photo, writeImage } from '../fixtures/images.js';
import { readEntries } from '../fixtures/manifest.js';
import { callingThread } from '../fixtures/score-pool.js';
import { tempDir } from '../fixtures/tmp.js';
import { versioned } from '../fixtures/versions.js';

/**
 * A 2410x400 strip of the sample photograph samples/originals/ladybird.jpg (2560x1600), as
 * ladybird.jpg: wider than 2400, so its five renditions have five sizes, at a sixth of the pixels
 * to encode in every format.
 */
let LADYBIRD: string;
beforeAll(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'content-api-ladybird-'));
  LADYBIRD = await writeImage(
    dir,
    'ladybird.jpg',
    sharp(path.resolve('samples/originals/ladybird.jpg'))
      .extract({ left: 0, top: 600, width: 2410, height: 400 })
      .jpeg({ quality: 90 }),
  );
});
afterAll(() => rm(path.dirname(LADYBIRD), { recursive: true, force: true }));

/** Each of the result's files in `format` read back: its format and pixel size are the primary's. */
async function expectFiles(out: string, result: RenderResult, files: RenderResult['files'], format: string) {
  for (const key of RENDITION_KEYS) {
    const meta = await sharp(path.join(out, files[key].path)).metadata();
    expect({ key, format: meta.format, width: meta.width, height: meta.height }).toEqual({
      key,
      format,
      width: result.image.sizes[key].width,
      height: result.image.sizes[key].height,
    });
  }
}

const mtimes = async (out: string, files: RenderResult['files']) =>
  Promise.all(RENDITION_KEYS.map(async (key) => (await stat(path.join(out, files[key].path))).mtimeMs));

const manifestKeys = async (out: string) => Object.keys(await readEntries(out));

describe('alternates: one decode, every format', () => {
  it('writes each format, the Image object describes the first, the rest are alternates', async () => {
    const out = path.join(await tempDir(), 'media');
    const result = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'avif', 'webp'] });
    expect(result.status).toBe('rendered');
    expect(result.format).toBe('jpeg');
    expect(result.image.sizes.md.url).toBe(
      await versioned('/media/ladybird.max-1200x1200.jpg', path.join(out, 'ladybird.max-1200x1200.jpg')),
    );
    await expectFiles(out, result, result.files, 'jpeg');
    expect(result.alternates.map((alternate) => [alternate.format, alternate.type])).toEqual([
      ['avif', 'image/avif'],
      ['webp', 'image/webp'],
    ]);
    for (const alternate of result.alternates) {
      await expectFiles(out, result, alternate.files, alternate.format === 'avif' ? 'heif' : 'webp');
      // The srcset names the alternate's own files, each with its version, with the primary's real widths.
      expect(parseSrcset(alternate.srcset)).toEqual(
        await Promise.all(
          RENDITION_KEYS.map(async (key) => ({
            url: await versioned(`/media/${alternate.files[key].path}`, path.join(out, alternate.files[key].path)),
            width: alternate.files[key].width,
          })),
        ),
      );
      const distinct = [...new Set(RENDITION_KEYS.map((key) => alternate.files[key].path))];
      const sizes = await Promise.all(distinct.map(async (file) => (await stat(path.join(out, file))).size));
      expect(alternate.bytes).toBe(sizes.reduce((sum, size) => sum + size, 0));
    }
    expect(result.alternates[0]!.files.md.path).toBe('ladybird.max-1200x1200.avif');
    expect(await manifestKeys(out)).toEqual(['ladybird.avif', 'ladybird.jpg', 'ladybird.webp']);
  });

  it('skips what is up to date, renders only a format added, keeps a format no longer listed until pruned', async () => {
    const out = path.join(await tempDir(), 'media');
    const first = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp'] });
    const jpegTimes = await mtimes(out, first.files);
    const again = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp'] });
    expect(again).toMatchObject({ status: 'skipped', removed: [] });
    expect(again.alternates[0]!.bytes).toBe(first.alternates[0]!.bytes);

    // A dry run says which formats are up to date and which would be written.
    const plan = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp', 'avif'], dryRun: true });
    expect(plan.status).toBe('planned');
    expect([plan.bytes, ...plan.alternates.map((alternate) => alternate.bytes)]).toEqual([
      first.bytes,
      first.alternates[0]!.bytes,
      null,
    ]);
    const added = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp', 'avif'] });
    expect(added.status).toBe('rendered');
    // The JPEG and WebP files were up to date: not written again.
    expect(await mtimes(out, added.files)).toEqual(jpegTimes);
    expect(added.alternates.map((alternate) => alternate.format)).toEqual(['webp', 'avif']);
    await expectFiles(out, added, added.alternates[1]!.files, 'heif');

    const avifs = RENDITION_KEYS.map((key) => added.alternates[1]!.files[key].path).sort();
    const dropped = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp'] });
    expect([dropped.status, dropped.removed, dropped.kept]).toEqual(['skipped', [], avifs]);
    for (const file of avifs) await stat(path.join(out, file));
    expect(await manifestKeys(out)).toEqual(['ladybird.avif', 'ladybird.jpg', 'ladybird.webp']);
    const pruned = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp'], prune: true });
    expect([pruned.status, pruned.removed, pruned.kept]).toEqual(['skipped', avifs, []]);
    for (const file of avifs) await expect(stat(path.join(out, file))).rejects.toThrow(/ENOENT/);
    expect(await manifestKeys(out)).toEqual(['ladybird.jpg', 'ladybird.webp']);
  });

  it('an alternate deleted by hand is written again, and only it', async () => {
    const out = path.join(await tempDir(), 'media');
    const first = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp'] });
    const jpegTimes = await mtimes(out, first.files);
    const { rm } = await import('node:fs/promises');
    await rm(path.join(out, first.alternates[0]!.files.sm.path));
    const again = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'webp'] });
    expect(again.status).toBe('rendered');
    expect(await mtimes(out, again.files)).toEqual(jpegTimes);
    await expectFiles(out, again, again.alternates[0]!.files, 'webp');
  });

  it('warns once when no listed format is one every client shows (--formats avif,webp), not for one format', async () => {
    const outDir = path.join(await tempDir(), 'media');
    const none = await renderOriginals([LADYBIRD], { outDir, formats: ['avif', 'webp'], dryRun: true });
    expect(none.warnings).toEqual([
      "--formats avif,webp: no format every client shows, so the Image object's URLs and the <img> of --html are " +
        'avif, which some browsers, mail clients and feed readers do not show; put keep (or jpeg, png) first: ' +
        '--formats keep,avif,webp',
    ]);
    for (const formats of [['webp'], ['keep', 'avif', 'webp'], ['webp', 'jpeg']] as const) {
      expect((await renderOriginals([LADYBIRD], { outDir, formats: [...formats], dryRun: true })).warnings).toEqual([]);
    }
  });

  it('an alternate heavier than the primary is a warning, and markup leaves it out', async () => {
    const dir = await tempDir();
    // Line art on a palette: PNG's own ground, where lossy WebP weighs more.
    const bars = Array.from({ length: 60 }, (_, i) => {
      const fill = i % 2 ? '#000' : '#f00';
      return `<rect x="${i * 25}" y="${i * 18}" width="12" height="1200" fill="${fill}"/>`;
    });
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="1200">${bars.join('')}</svg>`;
    const source = await writeImage(
      dir,
      'lines.png',
      sharp(Buffer.from(svg)).flatten({ background: '#fff' }).png({ palette: true }),
    );
    const report = await renderOriginals([source], {
      outDir: path.join(dir, 'media'),
      formats: ['keep', 'webp', 'avif'],
    });
    const [result] = report.results;
    const [webp, avif] = result!.alternates;
    expect(webp!.bytes!).toBeGreaterThan(result!.bytes!);
    expect(avif!.bytes!).toBeLessThan(result!.bytes!);
    expect(report.warnings).toEqual([
      expect.stringMatching(
        new RegExp(`^${source}: its webp \\(\\d+\\.\\d kB\\) alternate renditions are larger than its png ones \\(`),
      ),
    ]);
    const html = pictureHtml(result!);
    expect(html).toContain('<source type="image/avif"');
    expect(html).not.toContain('<source type="image/webp"');
  });

  it('an alternate a few bytes heavier: the warning gives exact bytes, where rounding would say one figure twice', async () => {
    const dir = await tempDir();
    // One flat column: its AVIF (1,587 bytes) weighs a little more than its JPEG (1,561), both "1.6 kB".
    const source = await writeImage(
      dir,
      'column.jpg',
      sharp({ create: { width: 1, height: 500, channels: 3, background: '#336699' } }).jpeg(),
    );
    const report = await renderOriginals([source], { outDir: path.join(dir, 'media'), formats: ['keep', 'avif'] });
    const [result] = report.results;
    const [avif] = result!.alternates;
    expect(avif!.bytes!).toBeGreaterThan(result!.bytes!);
    expect(report.warnings).toEqual([
      `${source}: its avif (${avif!.bytes} bytes) alternate renditions are larger than ` +
        `its jpeg ones (${result!.bytes} bytes): markup leaves them out, as a browser ` +
        'would download more for the same picture',
    ]);
  });

  it('a dry run plans every format and writes nothing', async () => {
    const out = path.join(await tempDir(), 'media');
    const planned = await renderOriginal(LADYBIRD, { outDir: out, formats: ['avif', 'keep'], dryRun: true });
    expect(planned).toMatchObject({ status: 'planned', format: 'avif', bytes: null });
    expect(planned.alternates).toMatchObject([{ format: 'jpeg', bytes: null }]);
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
  });

  it('an animation stays animated in GIF; a still format shows its first frame, with a warning, never offered', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'spin.gif', await animatedGif(120, 80, 3));
    const outDir = path.join(dir, 'media');
    const report = await renderOriginals([source], { outDir, formats: ['keep', 'png', 'avif', 'webp'] });
    const [result] = report.results;
    const pages = async (file: string) => (await sharp(path.join(dir, 'media', file)).metadata()).pages ?? 1;
    expect(await pages(result!.files.xs.path)).toBe(3);
    const [png, avif, webp] = result!.alternates;
    expect([await pages(png!.files.xs.path), await pages(avif!.files.xs.path)]).toEqual([1, 1]);
    expect(await pages(webp!.files.xs.path)).toBe(3);
    expect(report.warnings).toContain(
      `${source}: animated (3 frames); its png, avif renditions show the first frame only: markup leaves them out, ` +
        'as a browser would show them instead of its animated gif ones',
    );
    // Every browser shows PNG and AVIF: offered first, they would stand for the animation everywhere.
    expect(result!.alternates.map((alternate) => alternate.firstFrameOnly)).toEqual([true, true, undefined]);
    const offered = (html: string) => [...html.matchAll(/<source type="([^"]+)"/g)].map((match) => match[1]);
    expect(offered(pictureHtml(result!))).toEqual(['image/webp']);
    // Up to date, the same.
    const again = await renderOriginals([source], { outDir, formats: ['keep', 'png', 'avif', 'webp'] });
    expect(again.results[0]!.status).toBe('skipped');
    expect(offered(pictureHtml(again.results[0]!))).toEqual(['image/webp']);
  });

  it('keep and the format it resolves to are written once', async () => {
    const out = path.join(await tempDir(), 'media');
    const result = await renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'jpeg', 'webp'] });
    expect(result.alternates.map((alternate) => alternate.format)).toEqual(['webp']);
  });

  it("an alternate that would be another original's primary files fails both", async () => {
    const dir = await tempDir();
    await copyFile(LADYBIRD, path.join(dir, 'photo.jpg'));
    await writeImage(dir, 'photo.webp', photo(64, 48));
    const report = await renderOriginals([dir], { outDir: path.join(dir, 'media'), formats: ['keep', 'webp'] });
    expect(report.results).toEqual([]);
    expect(report.failures.map((failure) => [path.basename(failure.source), failure.code])).toEqual([
      ['photo.jpg', 'CONTENT_API_NAME_COLLISION'],
      ['photo.webp', 'CONTENT_API_NAME_COLLISION'],
    ]);
    expect(report.failures[0]!.error).toContain("(both are 'photo.webp' in the output folder)");
  });

  it('JPEG is flattened onto white while the PNG and WebP keep their alpha, from the same pixels', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'glass.png', photo(800, 600, 4));
    const out = path.join(dir, 'media');
    const result = await renderOriginal(source, { outDir: out, formats: ['jpeg', 'png', 'webp'] });
    const [png, webp] = result.alternates;
    const jpeg = await sharp(path.join(out, result.files.sm.path)).metadata();
    expect([jpeg.format, jpeg.hasAlpha]).toEqual(['jpeg', false]);
    for (const alternate of [png!, webp!]) {
      expect((await sharp(path.join(out, alternate.files.sm.path)).metadata()).hasAlpha).toBe(true);
    }
    // The same picture: the alternates' pixels over white are the JPEG's, within its loss.
    const flat = (file: string) =>
      sharp(path.join(out, file)).flatten({ background: '#ffffff' }).removeAlpha().raw().toBuffer();
    const [a, b] = await Promise.all([flat(result.files.sm.path), flat(png!.files.sm.path)]);
    let error = 0;
    for (let i = 0; i < a.length; i++) error += Math.abs(a[i]! - b[i]!);
    expect(error / a.length).toBeLessThan(4);
  });

  it('with --quality auto each format gets its own search, recorded per alternate', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'small.png', photo(400, 300));
    const result = await renderOriginal(source, {
      outDir: path.join(dir, 'media'),
      formats: ['jpeg', 'webp'],
      quality: { mode: 'auto:70' },
      scorePool: callingThread,
    });
    expect(result.measured?.md.score).toBeGreaterThanOrEqual(70);
    expect(result.alternates[0]!.measured?.md.score).toBeGreaterThanOrEqual(70);
  });
});
