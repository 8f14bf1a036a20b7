/**
 * `--quality auto` through the render pipeline, on real photographs: each rendition at the lowest
 * quality that reaches the target, its quality and score recorded in the manifest, in results and in
 * `--json`, and the score the one an independent measurement of the written file gives.
 */
import { cp, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp, { type JpegOptions } from 'sharp';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { rawPixels } from '../../src/pixels/read.js';
import { isSampled, TILE_MARGIN } from '../../src/quality/auto.js';
import type { RawPixels } from '../../src/quality/linear.js';
import { ScorePool } from '../../src/quality/score-pool.js';
import { prepareWith } from '../../src/quality/ssimulacra2.js';
import * as render from '../../src/renditions/render.js';
import { RENDITION_KEYS } from '../../src/renditions/rules.js';
import { runCli } from '../cli/run-cli.js';
import { animatedGif, writeImage } from '../fixtures/images.js';
import { readEntries } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';

const SAMPLES = path.resolve(import.meta.dirname, '../../samples/originals');
const LADYBIRD = path.join(SAMPLES, 'ladybird.jpg');
const RAINDROPS = path.join(SAMPLES, 'raindrops.webp');
const MARIGOLD = path.join(SAMPLES, 'marigold.png');
const FLOWER = path.join(SAMPLES, 'Yellow Flower.jpg');

/** sharp's JPEG of `pixels` with `options`. */
const jpegOf = (pixels: RawPixels, options: JpegOptions) =>
  sharp(pixels.data, { raw: { ...pixels.info, channels: pixels.info.channels as 1 | 2 | 3 | 4 } })
    .jpeg(options)
    .toBuffer();

/**
 * A picture like a photograph (a smooth light, fine grain) with one 256 px patch of fine stripes of
 * opposite colours: 4:2:0 JPEG halves colour resolution, so no quality brings the patch's tiles to the
 * aim, while the whole picture, of which the patch is a sliver, reaches the target well below 100.
 */
function hardTiles(width: number, height: number) {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      if (x >= 512 && x < 768 && y >= 512 && y < 768) {
        const stripe = x & 1 ? 15 : -15;
        data[at] = 128 + stripe;
        data[at + 1] = 100 + (y % 256) / 8;
        data[at + 2] = 128 - stripe;
      } else {
        const grain = ((x * 7919 + y * 104729) ^ (x * y)) % 8;
        data[at] = 90 + (x / width) * 100 + grain;
        data[at + 1] = 80 + (y / height) * 90 + grain;
        data[at + 2] = 70 + grain * 2;
      }
    }
  }
  return sharp(data, { raw: { width, height, channels: 3 } }).png();
}

/**
 * The library's render, scoring in two worker threads of the compiled worker (`npm test` builds it
 * before the tests run, as test/quality/score-pool.test.ts relies on): the sources' own pool, the
 * built worker's threads, so the searches of the sizes scored on tiles, and renders run at once,
 * share both cores. The scores are the calling thread's to the bit (score-pool.test.ts).
 */
const pool = new ScorePool({ threads: 2, worker: new URL('../../dist/quality/score-worker.js', import.meta.url) });
afterAll(() => pool.close());
const renderOriginal = (source: string, options: render.RenderOptions) =>
  render.renderOriginal(source, { scorePool: pool, ...options });
const renderOriginals = (sources: string[], options: render.RenderOptions) =>
  render.renderOriginals(sources, { scorePool: pool, ...options });

/**
 * The written file measured again, whole, against the pixels before encoding: a preparation of its
 * own in this thread's WebAssembly, apart from the pool's. It is `ssimulacra2(before, after)` to the
 * bit (test/quality/ssimulacra2.test.ts), in a fifth of the TypeScript's time; `prepareWith(before)`
 * alone for several files against one reference.
 */
const measureAgain = (before: RawPixels, after: RawPixels) => prepareWith(before, 'wasm').score(after);

/** Made on first use and shared by the tests that only read it (each test still runs alone). */
const once = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
};
/** Folders kept for the whole file, unlike `tempDir`'s (removed after each test); as deep as those. */
const sharedDirs: string[] = [];
afterAll(() => Promise.all(sharedDirs.map((dir) => rm(dir, { recursive: true, force: true }))));
/** FLOWER with --no-quality-sample, and its lossless PNG renditions (the pixels before encoding). */
const flower = once(async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'content-api-'));
  sharedDirs.push(dir);
  const [whole, lossless] = await Promise.all([
    renderOriginal(FLOWER, { outDir: path.join(dir, 'whole'), quality: { mode: 'auto', sample: false } }),
    renderOriginal(FLOWER, { outDir: path.join(dir, 'png'), formats: ['png'] }),
  ]);
  return { dir, whole, lossless };
});

const bytesOf = async (outDir: string, files: Record<string, { path: string }>) =>
  (await Promise.all(Object.values(files).map((f) => stat(path.join(outDir, f.path))))).reduce((a, s) => a + s.size, 0);

describe('render --quality auto', () => {
  it('says where it searched nothing: an animation kept animated, a batch of lossless renditions only', async () => {
    const dir = await tempDir();
    const frames = await (await animatedGif(160, 120, 3)).toBuffer();
    const source = await writeImage(dir, 'loop.webp', sharp(frames, { animated: true }).webp());
    const outDir = path.join(dir, 'media');
    const report = await renderOriginals([source], { outDir, formats: ['webp', 'jpeg'], quality: { mode: 'auto' } });
    const [result] = report.results;
    // The animated WebP keeps the fixed quality; its JPEG alternate, a still picture, is searched.
    expect(result!.measured).toBeUndefined();
    expect((await sharp(path.join(outDir, result!.files.xs.path)).metadata()).pages).toBe(3);
    expect(Object.keys(result!.alternates[0]!.measured ?? {})).toEqual([...RENDITION_KEYS]);
    expect(report.warnings).toEqual([
      `${source}: animated (3 frames); its jpeg renditions show the first frame only: markup leaves them out, as a ` +
        'browser would show them instead of its animated webp ones',
      `${source}: animated (3 frames): --quality auto scores still pictures, so its webp renditions are at ` +
        '--webp-quality 80',
    ]);

    const png = await renderOriginals([source], {
      outDir: path.join(dir, 'png'),
      formats: ['png'],
      quality: { mode: 'auto:85' },
    });
    expect(png.failures).toEqual([]);
    expect(png.warnings).toEqual([
      '--quality auto:85 searches nothing here: png renditions are lossless (it chooses the quality of jpeg, webp ' +
        'and avif)',
      `${source}: animated (3 frames); its png renditions show the first frame only`,
    ]);
  });

  it('renders originals too small or thin to score (under 8x8) at the fixed quality, and says so', async () => {
    const dir = await tempDir();
    const flat = (width: number, height: number) =>
      sharp({ create: { width, height, channels: 3, background: { r: 200, g: 100, b: 50 } } }).jpeg();
    const sources = {
      dot: await writeImage(dir, 'dot.jpg', flat(1, 1)),
      tiny: await writeImage(dir, 'tiny.jpg', flat(7, 3)),
      panorama: await writeImage(dir, 'panorama.jpg', flat(20000, 8)),
      thin: await writeImage(dir, 'thin.jpg', flat(1000, 10)),
    };
    const outDir = path.join(dir, 'media');
    const report = await renderOriginals(Object.values(sources), {
      outDir,
      formats: ['jpeg', 'webp'],
      quality: { mode: 'auto' },
    });
    expect(report.failures).toEqual([]);
    const fixed = 'at --jpeg-quality 80, --webp-quality 80';
    const unscored = (which: string) =>
      `${which} are too small for --quality auto to score (SSIMULACRA2 needs 8x8 pixels): ${fixed}`;
    // In the order the originals finished.
    expect([...report.warnings].sort()).toEqual([
      `${sources.dot}: ${unscored('all its renditions (1x1)')}`,
      `${sources.panorama}: ${unscored('all its renditions (300x1 to 4800x2)')}`,
      `${sources.thin}: ${unscored('its xs, sm renditions (300x3 to 600x6)')}`,
      `${sources.tiny}: ${unscored('all its renditions (7x3)')}`,
    ]);
    // The thin one's larger sizes are searched; its smaller ones record no score.
    const entries = await readEntries(outDir);
    for (const key of ['thin.jpg', 'thin.webp']) {
      const { renditions } = entries[key]!;
      expect(renditions.xs.score).toBeUndefined();
      expect(renditions.sm.quality).toBeUndefined();
      expect(renditions.md.score).toBeGreaterThan(0);
    }
  });

  it("records each rendition's quality and its score, which the written file, measured again, gives", async () => {
    const outDir = path.join(await tempDir(), 'auto');
    // The pixels before encoding: the same pipeline's lossless PNG renditions.
    const pngDir = path.join(await tempDir(), 'png');
    const [auto, lossless] = await Promise.all([
      renderOriginal(LADYBIRD, { outDir, quality: { mode: 'auto' } }),
      renderOriginal(LADYBIRD, { outDir: pngDir, formats: ['png'] }),
    ]);
    expect(auto.measured).toBeDefined();
    const manifest = { entries: await readEntries(outDir) };
    const records = Object.values(manifest.entries as Record<string, { renditions: object }>)[0]!.renditions;
    for (const key of RENDITION_KEYS) {
      const measured = auto.measured![key];
      expect(measured.score, key).toBeGreaterThanOrEqual(80);
      expect(measured.quality).toBeGreaterThanOrEqual(10);
      expect(measured.quality).toBeLessThanOrEqual(100);
      expect(records[key as keyof typeof records]).toMatchObject(measured);
      const file = path.join(outDir, auto.files[key].path);
      expect(await sharp(file).metadata()).toMatchObject({ format: 'jpeg' });
      const before = await rawPixels(path.join(pngDir, lossless.files[key].path));
      const whole = measureAgain(before, await rawPixels(file));
      if (measured.scored === 'rendition') expect(whole).toBeCloseTo(measured.score, 2);
      else {
        // A sample aims TILE_MARGIN over the target, and the whole rendition reaches the target.
        expect(measured.score, key).toBeGreaterThanOrEqual(80 + TILE_MARGIN);
        expect(whole, key).toBeGreaterThanOrEqual(80);
      }
    }
    // Renditions over 512 K pixels (md is 1200x750 here) are scored on a sample of their tiles; but lg's
    // tiles ended 11 qualities over sm's whole (82 against 71), more than SAMPLE_DOUBT: searched whole, 78.
    const scored = Object.fromEntries(RENDITION_KEYS.map((key) => [key, auto.measured![key].scored]));
    expect(scored).toEqual({ xs: 'rendition', sm: 'rendition', md: 'tiles', lg: 'rendition', xl: 'tiles' });

    // Up to date: the same record, read back from the manifest.
    const again = await renderOriginal(LADYBIRD, { outDir, quality: { mode: 'auto' } });
    expect(again.status).toBe('skipped');
    expect(again.measured).toEqual(auto.measured);
  });

  it('with sample off, scores every rendition whole: scores the files give, smaller files, own key', async () => {
    const dir = await tempDir();
    const outDir = path.join(dir, 'whole');
    const shared = await flower();
    const { whole, lossless } = shared;
    // The flower at 1000x625 for the render that decodes each size on its own, in two formats: md, lg and xl
    // (625 K pixels) are over WHOLE_PIXELS, so a sample would show, and have two fifths of the pixels to search.
    const smaller = await writeImage(dir, 'flower.jpg', sharp(FLOWER).resize(1000));
    const [sampled, kept] = await Promise.all([
      renderOriginal(FLOWER, { outDir: path.join(dir, 'sampled'), quality: { mode: 'auto' } }),
      // Each size decoded on its own (kept metadata), and two formats: asserted at the end.
      renderOriginal(smaller, {
        outDir: path.join(dir, 'kept'),
        formats: ['jpeg', 'webp'],
        keepMetadata: true,
        quality: { mode: 'auto', sample: false },
      }),
      // The shared render's folder (at the same depth, for the manifest's relative paths), as this test
      // renders into it again below.
      cp(path.join(shared.dir, 'whole'), outDir, { recursive: true, preserveTimestamps: true }),
    ]);
    for (const key of RENDITION_KEYS) {
      const measured = whole.measured![key];
      expect(measured.scored, key).toBe('rendition');
      expect(measured.score, key).toBeGreaterThanOrEqual(80);
      const before = await rawPixels(path.join(shared.dir, 'png', lossless.files[key].path));
      const file = await rawPixels(path.join(outDir, whole.files[key].path));
      expect(measureAgain(before, file), key).toBeCloseTo(measured.score, 2);
    }
    // Without the sample's margin, the sizes it sampled (md, and lg, the same pixels as xl here) take lower qualities.
    for (const key of ['md', 'lg'] as const) {
      expect(sampled.measured![key].scored, key).toBe('tiles');
      expect(whole.measured![key].quality, key).toBeLessThan(sampled.measured![key].quality);
    }
    expect(await bytesOf(outDir, whole.files)).toBeLessThan(await bytesOf(path.join(dir, 'sampled'), sampled.files));

    // The setting is in the manifest's key: sampling again redoes the files; with fixed quality it changes nothing.
    const resampled = await renderOriginal(FLOWER, { outDir, quality: { mode: 'auto' } });
    expect(resampled.status).toBe('rendered');
    expect(resampled.measured).toEqual(sampled.measured);
    const fixedDir = path.join(dir, 'fixed');
    await renderOriginal(FLOWER, { outDir: fixedDir });
    const fixed = await renderOriginals([FLOWER], { outDir: fixedDir, quality: { sample: false } });
    expect(fixed.results[0]!.status).toBe('skipped');
    expect(fixed.warnings).toEqual(['--no-quality-sample does nothing with --quality fixed: it is for --quality auto']);

    // Each size decoded on its own (kept metadata), and two formats: every search scored whole too.
    expect(isSampled({ ...kept.files.md, channels: 3 })).toBe(true);
    for (const measured of [kept.measured!, kept.alternates[0]!.measured!]) {
      expect(RENDITION_KEYS.map((key) => measured[key].scored)).toEqual(RENDITION_KEYS.map(() => 'rendition'));
    }
  });

  it('with sample off, each quality is the lowest reaching the target; a quantisation table given is used', async () => {
    const dir = await tempDir();
    const whole = { mode: 'auto', sample: false };
    // The library's own table: the shared render with --no-quality-sample.
    const [shared, five] = await Promise.all([
      flower(),
      renderOriginal(FLOWER, { outDir: path.join(dir, 'five'), quality: whole, jpeg: { table: 5 } }),
    ]);
    const { whole: own, lossless } = shared;
    const folders = { own: path.join(shared.dir, 'whole'), five: path.join(dir, 'five') };
    for (const key of RENDITION_KEYS) {
      const before = await rawPixels(path.join(shared.dir, 'png', lossless.files[key].path));
      const reference = prepareWith(before, 'wasm');
      for (const [run, folder, table] of [
        [own, 'own', undefined],
        [five, 'five', 5],
      ] as const) {
        // The file is sharp's JPEG of the pixels before encoding at the quality recorded, with that table, to the byte.
        const { quality, score } = run.measured![key];
        expect(score, `${folder} ${key}`).toBeGreaterThanOrEqual(80);
        const expected = await jpegOf(before, { quality, quantisationTable: table });
        expect(Buffer.compare(await readFile(path.join(folders[folder], run.files[key].path)), expected), key).toBe(0);
        // The quality below it falls short: the lowest quality reaching 80, exactly.
        const lower = await jpegOf(before, { quality: quality - 1, quantisationTable: table });
        expect(reference.score(await rawPixels(lower)), `${folder} ${key}`).toBeLessThan(80);
      }
    }
    // Table 5 reaches the same floor with fewer bytes (by SSIMULACRA2; Butteraugli disagrees, docs/performance.md).
    expect(await bytesOf(folders.five, five.files)).toBeLessThan(await bytesOf(folders.own, own.files));
  });

  it('never takes a sample over the whole picture: tiles that no quality brings to the aim leave a large rendition ' +
    'at the lowest quality the whole of it needs', async () => {
    const dir = await tempDir();
    const original = await writeImage(dir, 'mouse.png', hardTiles(2400, 1600));
    const quality = { mode: 'auto' } as const;
    const [auto, lossless] = await Promise.all([
      renderOriginal(original, { outDir: path.join(dir, 'auto'), quality, formats: ['jpeg'] }),
      renderOriginal(original, { outDir: path.join(dir, 'png'), formats: ['png'] }),
    ]);
    const { sm, lg } = auto.measured!;
    // On tiles, lg (3.8 MP) ended 16 qualities over sm, scored whole (92 against 76): more than a
    // sample's margin explains (SAMPLE_DOUBT), so the whole rendition was searched, exactly.
    expect([sm.scored, lg.scored]).toEqual(['rendition', 'rendition']);
    const before = await rawPixels(path.join(dir, 'png', lossless.files.lg.path));
    const reference = prepareWith(before, 'wasm');
    const file = await readFile(path.join(dir, 'auto', auto.files.lg.path));
    expect(reference.score(await rawPixels(file))).toBeGreaterThanOrEqual(80);
    // The quality below falls short on the whole rendition: it is the lowest that reaches 80.
    const lower = await jpegOf(before, { quality: lg.quality - 1 });
    expect(reference.score(await rawPixels(lower))).toBeLessThan(80);
  }, 120_000);

  it('searches each format as it would alone, on one reference per size shared by the formats', async () => {
    const dir = await tempDir();
    // The pool's own prepare, counted, and each reference's release counted too.
    const prepare = ScorePool.prototype.prepare;
    let prepared = 0;
    let released = 0;
    const spy = vi.spyOn(ScorePool.prototype, 'prepare').mockImplementation(async function (this: ScorePool, ...args) {
      const reference = await prepare.apply(this, args);
      prepared++;
      const release = () => {
        released++;
        reference.release();
      };
      return { score: reference.score, release };
    });
    try {
      const render = async (source: string, formats: Array<'jpeg' | 'webp'>) => {
        const result = await renderOriginal(source, {
          outDir: path.join(dir, `${path.basename(source)}-${formats.join('-')}`),
          formats,
          quality: { mode: 'auto' },
        });
        // Every reference is released by the time the render returns.
        expect(released).toBe(prepared);
        return result;
      };
      // A picture whose samples agree with its sizes scored whole: one reference a size, no whole search.
      const jpeg = (await render(FLOWER, ['jpeg'])).measured;
      const references = prepared;
      const webp = (await render(FLOWER, ['webp'])).measured;
      expect(prepared).toBe(2 * references);
      const both = await render(FLOWER, ['jpeg', 'webp']);
      expect(both.measured).toEqual(jpeg);
      expect(both.alternates[0]!.measured).toEqual(webp);
      // One reference per size for both formats: as many as one format alone prepared.
      expect(prepared).toBe(3 * references);

      // With alpha, JPEG's pixels are flattened onto white and WebP's are not: a reference each.
      const before = prepared;
      await render(MARIGOLD, ['jpeg']);
      const alpha = prepared - before;
      await render(MARIGOLD, ['jpeg', 'webp']);
      expect(prepared - before).toBe(3 * alpha);
    } finally {
      spy.mockRestore();
    }
  });

  it('a lower target gives smaller files, a higher one larger; one out of reach is a warning', async () => {
    const dir = await tempDir();
    // The raindrops at 1000x625: md, lg and xl (625 K pixels) still scored on tiles, at a quarter of the pixels.
    const raindrops = await writeImage(dir, 'raindrops.webp', sharp(RAINDROPS).resize(1000).webp({ quality: 90 }));
    const [low, high] = await Promise.all([
      renderOriginal(raindrops, { outDir: path.join(dir, 'low'), quality: { mode: 'auto:60' } }),
      renderOriginal(raindrops, { outDir: path.join(dir, 'high'), quality: { mode: 'auto:84' } }),
    ]);
    for (const key of RENDITION_KEYS) {
      expect(low.measured![key].score).toBeGreaterThanOrEqual(60);
      expect(high.measured![key].score).toBeGreaterThanOrEqual(84);
      expect(low.measured![key].quality).toBeLessThan(high.measured![key].quality);
    }
    expect(await bytesOf(path.join(dir, 'low'), low.files)).toBeLessThan(
      await bytesOf(path.join(dir, 'high'), high.files),
    );
    // Lossy WebP halves the colour resolution: no quality reaches 95 on this photograph.
    const out = await renderOriginals([raindrops], { outDir: path.join(dir, 'out'), quality: { mode: 'auto:95' } });
    const [result] = out.results;
    expect(Object.values(result!.measured!).map((m) => m.quality)).toEqual([100, 100, 100, 100, 100]);
    expect(out.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          '^.*raindrops\\.webp: SSIMULACRA2 95 not reached by webp \\(lossy WebP always halves colour resolution\\): ' +
            'xs [\\d.]+ at quality 100, .*; kept at the highest quality tried$',
        ),
      ),
    ]);
    // Every size kept under what it aimed at is named, those scored on tiles with their aim.
    for (const key of RENDITION_KEYS) {
      const { score, scored } = result!.measured![key];
      expect(out.warnings[0]).toContain(`${key} ${score}${scored === 'tiles' ? ' on tiles (aiming at 97)' : ''} at`);
    }
  });

  it("JPEG's 4:2:0 chroma out of reach of a high target is a warning that says why", async () => {
    const outDir = path.join(await tempDir(), 'jpeg');
    const out = await renderOriginals([LADYBIRD], { outDir, quality: { mode: 'auto:97' } });
    expect(out.warnings).toEqual([
      expect.stringContaining(
        'SSIMULACRA2 97 not reached by jpeg (4:2:0 chroma halves colour resolution; --jpeg-chroma 4:4:4 keeps it): xs ',
      ),
    ]);
  });

  it('fixed quality, the default, measures nothing and records no score', async () => {
    const outDir = path.join(await tempDir(), 'fixed');
    const fixed = await renderOriginal(RAINDROPS, { outDir });
    expect(fixed.measured).toBeUndefined();
    expect(JSON.stringify(await readEntries(outDir))).not.toContain('"score"');
  });

  it('a changed mode renders again; lossless formats are not searched', async () => {
    const outDir = path.join(await tempDir(), 'out');
    // FLOWER (1600x1000) rather than LADYBIRD (2560x1600): a photograph, searched in a third of the time.
    const first = await renderOriginals([FLOWER, path.join(SAMPLES, 'marigold.png')], { outDir });
    expect(first.results.map((r) => r.status)).toEqual(['rendered', 'rendered']);
    const second = await renderOriginals([FLOWER, path.join(SAMPLES, 'marigold.png')], {
      outDir,
      quality: { mode: 'auto' },
    });
    const bySource = Object.fromEntries(second.results.map((r) => [path.basename(r.source), r]));
    expect(bySource['Yellow Flower.jpg']).toMatchObject({ status: 'rendered' });
    expect(bySource['Yellow Flower.jpg']!.measured).toBeDefined();
    expect(bySource['marigold.png']).toMatchObject({ status: 'skipped' });
    expect(bySource['marigold.png']!.measured).toBeUndefined();
  });

  it("--quality auto:<score> on the command line; --json carries each rendition's quality and score", async () => {
    const outDir = path.join(await tempDir(), 'cli');
    // FLOWER: LADYBIRD at auto:70 searches every size whole, its 4 MP ones too (8 s of CPU against 1.5).
    const { code, stdout, stderr } = await runCli([
      'render',
      FLOWER,
      '--out',
      outDir,
      '--quality',
      'auto:70',
      '--json',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const [result] = JSON.parse(stdout).results;
    expect(Object.keys(result.measured)).toEqual([...RENDITION_KEYS]);
    for (const key of RENDITION_KEYS) {
      expect(result.measured[key]).toEqual({
        quality: expect.any(Number),
        score: expect.any(Number),
        scored: expect.stringMatching(/^(rendition|tiles)$/),
      });
      expect(result.measured[key].score).toBeGreaterThanOrEqual(70);
    }
    const bad = await runCli(['render', FLOWER, '--out', outDir, '--quality', 'auto:101']);
    expect(bad.code).toBe(2);
    // Named by its flag.
    expect(bad.stderr).toContain(
      "Expected fixed, auto, or auto:<score> with a score from 30 to 99 for --quality but got 'auto:101'",
    );
    expect(bad.stdout).toBe('');
  });
});
