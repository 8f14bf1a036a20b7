/**
 * The encoders' settings, read back from the files written: PNG palettes only where they lose
 * nothing (or when asked), row filtering, mozjpeg, chroma subsampling, the JPEG quantisation table, WebP
 * and AVIF effort; each changes the manifest's key, so a change of setting renders again.
 */
import { copyFile, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp, { type JpegOptions } from 'sharp';
import { describe, expect, it } from 'vitest';
import { type RenderResult, renderOriginal, renderOriginals } from '../../src/renditions/render.js';
import { RENDITION_KEYS } from '../../src/renditions/rules.js';
import type { RenderSettingsInput } from '../../src/renditions/settings.js';
import { photo, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';

/** A flat artwork: six bands of solid colour, one of them half transparent. */
function bands(width: number, height: number) {
  const colours = [
    [200, 30, 30, 255],
    [30, 160, 60, 255],
    [20, 40, 200, 255],
    [240, 220, 40, 255],
    [250, 250, 250, 128],
    [10, 10, 10, 255],
  ];
  const data = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set(colours[Math.floor((x * 6) / width)]!, (y * width + x) * 4);
  }
  return sharp(data, { raw: { width, height, channels: 4 } });
}

/** Renders `source` into a new folder with `settings`; the result and each file's bytes and metadata. */
async function render(source: string, settings: RenderSettingsInput = {}) {
  const outDir = path.join(await tempDir(), 'out');
  const result = await renderOriginal(source, { outDir, ...settings });
  const files = await Promise.all(
    RENDITION_KEYS.map(async (key) => {
      const file = path.join(outDir, result.files[key].path);
      return { key, file, bytes: (await stat(file)).size, meta: await sharp(file).metadata() };
    }),
  );
  return { result, files, total: files.reduce((sum, file) => sum + file.bytes, 0) };
}

/** A JPEG's quantisation tables: its DQT segments, in order. */
function tablesOf(jpeg: Buffer): Buffer {
  const segments: Buffer[] = [];
  for (let at = 2; at + 4 <= jpeg.length && jpeg[at] === 0xff && jpeg[at + 1] !== 0xda; ) {
    const length = jpeg.readUInt16BE(at + 2);
    if (jpeg[at + 1] === 0xdb) segments.push(jpeg.subarray(at + 4, at + 2 + length));
    at += 2 + length;
  }
  expect(segments.length).toBeGreaterThan(0);
  return Buffer.concat(segments);
}

const raw = (file: string) => sharp(file).ensureAlpha().raw().toBuffer();

describe('PNG', () => {
  it('a flat artwork gets palettes that keep every pixel as it is; a photograph stays truecolour', async () => {
    const dir = await tempDir();
    const artwork = await writeImage(dir, 'bands.png', bands(1800, 600));
    const exact = await render(artwork);
    const truecolour = await render(artwork, { png: { palette: 'off' } });
    for (const [i, file] of exact.files.entries()) {
      expect(file.meta.isPalette, file.key).toBe(true);
      expect(truecolour.files[i]!.meta.isPalette, file.key).toBe(false);
      expect((await raw(file.file)).equals(await raw(truecolour.files[i]!.file)), file.key).toBe(true);
    }
    expect(exact.total).toBeLessThan(truecolour.total / 2);
    // With its metadata kept (each size decoded from the original on its own), palettes too, the profile with them.
    // Its largest sizes over a megapixel, which are not decoded for a fingerprint: read for the palette alone.
    const smaller = await writeImage(dir, 'smaller.png', bands(1500, 700));
    const [kept, keptTruecolour, keptLossy] = await Promise.all([
      render(smaller, { keepMetadata: true }),
      render(smaller, { keepMetadata: true, png: { palette: 'off' } }),
      render(smaller, { keepMetadata: true, png: { palette: 'lossy' } }),
    ]);
    for (const [i, file] of kept.files.entries()) {
      expect(file.meta, file.key).toMatchObject({ isPalette: true, hasProfile: true });
      expect(keptTruecolour.files[i]!.meta, file.key).toMatchObject({ isPalette: false, hasProfile: true });
      expect((await raw(file.file)).equals(await raw(keptTruecolour.files[i]!.file)), file.key).toBe(true);
      expect(keptLossy.files[i]!.meta, file.key).toMatchObject({ isPalette: true, hasProfile: true });
    }

    // 600x400: big enough for far more than 256 colours; libimagequant's lossy palette costs 8 s of CPU at 1200x800.
    const photograph = await writeImage(dir, 'photo.png', photo(600, 400));
    for (const file of (await render(photograph)).files) expect(file.meta.isPalette, file.key).toBe(false);
    const lossy = await render(photograph, { png: { palette: 'lossy' } });
    for (const file of lossy.files) expect(file.meta.isPalette, file.key).toBe(true);
    // With its metadata kept, sizes over a megapixel: a photograph, and one under a flat band deeper than
    // the rows read first (they decide alone only when they hold over 256 colours), both stay truecolour.
    const large = await writeImage(dir, 'large.png', photo(1500, 700));
    const banded = await writeImage(
      dir,
      'banded.png',
      sharp({ create: { width: 1500, height: 700, channels: 3, background: '#3a6' } }).composite([
        { input: await photo(1500, 500).png().toBuffer(), top: 200, left: 0 },
      ]),
    );
    for (const source of [large, banded]) {
      for (const file of (await render(source, { keepMetadata: true })).files) {
        expect(file.meta, `${source} ${file.key}`).toMatchObject({ isPalette: false, hasProfile: true });
      }
    }
  });

  it('adaptive row filtering (the default) makes photographic PNGs smaller; compression 9 smaller still', async () => {
    const photograph = await writeImage(await tempDir(), 'photo.png', photo(1600, 1000));
    const filtered = await render(photograph);
    const unfiltered = await render(photograph, { png: { filtering: false } });
    const level9 = await render(photograph, { png: { compression: 9 } });
    expect(filtered.total).toBeLessThan(unfiltered.total);
    expect(level9.total).toBeLessThan(filtered.total);
  });

  it('a rendition at its original size larger than the original file is a warning saying why', async () => {
    const dir = await tempDir();
    // Compressed as hard as libpng goes, then rendered with no filtering and no compression at all.
    const original = await writeImage(
      dir,
      'tight.png',
      photo(500, 400).png({ compressionLevel: 9, adaptiveFiltering: true }),
    );
    const outDir = path.join(dir, 'out');
    const report = await renderOriginals([original], { outDir, png: { compression: 0, filtering: false } });
    expect(report.failures).toEqual([]);
    expect(report.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          /^.*tight\.png: its 500x400 PNG rendition \(\d+ bytes\) is larger than the original file /.source +
            /\(\d+ bytes\) at the same size: .*try --png-compression 9/.source,
        ),
      ),
    ]);
    // As the warning says, compression 9 does as well as the original (libpng's own best): nothing to say.
    const again = await renderOriginals([original], { outDir: path.join(dir, 'level9'), png: { compression: 9 } });
    expect(again.warnings).toEqual([]);

    // A flat artwork of a few hundred bytes, written as its own rendition is: nothing to say of it, but
    // --keep-metadata adds an sRGB profile and EXIF, which the warning names first.
    const made = await render(await writeImage(dir, 'bands.png', bands(200, 150)));
    const flat = path.join(dir, 'flat.png');
    await copyFile(made.files[0]!.file, flat);
    const plain = await renderOriginals([flat], { outDir: path.join(dir, 'flat') });
    expect(plain.warnings).toEqual([]);
    const kept = await renderOriginals([flat], { outDir: path.join(dir, 'kept'), keepMetadata: true });
    expect(kept.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          /^.*flat\.png: its 200x150 PNG rendition .* at the same size: the metadata --keep-metadata keeps /.source +
            /.*; try without --keep-metadata, --png-compression 9/.source,
        ),
      ),
    ]);
  });
});

describe('JPEG, WebP and AVIF', () => {
  it('mozjpeg makes smaller JPEGs at the same quality; 4:4:4 chroma keeps colour at a cost in bytes', async () => {
    const source = await writeImage(await tempDir(), 'photo.jpg', photo(1600, 1000).jpeg({ quality: 95 }));
    const plain = await render(source);
    const mozjpeg = await render(source, { jpeg: { mozjpeg: true } });
    const full = await render(source, { jpeg: { chroma: '4:4:4' } });
    expect(mozjpeg.total).toBeLessThan(plain.total);
    expect(full.total).toBeGreaterThan(plain.total);
    for (const file of [...plain.files, ...mozjpeg.files, ...full.files]) expect(file.meta.format).toBe('jpeg');
  });

  it('the JPEG quantisation table given is the one written, with mozjpeg or without', async () => {
    const source = await writeImage(await tempDir(), 'photo.jpg', photo(800, 500).jpeg({ quality: 95 }));
    // The tables sharp writes at quality 80 with `options`, read from a file of its own.
    const expected = async (options: JpegOptions) =>
      tablesOf(
        await sharp({ create: { width: 16, height: 16, channels: 3, background: '#808080' } })
          .jpeg({ quality: 80, ...options })
          .toBuffer(),
      );
    const cases: Array<[RenderSettingsInput['jpeg'], JpegOptions]> = [
      [{}, {}],
      [{ table: 5 }, { quantisationTable: 5 }],
      [{ mozjpeg: true }, { mozjpeg: true }],
      [
        { mozjpeg: true, table: 5 },
        { mozjpeg: true, quantisationTable: 5 },
      ],
    ];
    const written = [];
    for (const [jpeg, options] of cases) {
      const { files } = await render(source, { jpeg });
      const tables = tablesOf(await readFile(files[0]!.file));
      expect(tables, JSON.stringify(jpeg)).toEqual(await expected(options));
      written.push(tables.toString('hex'));
    }
    // Three tables in four files: libjpeg's own (0), 5, mozjpeg's own (3), and 5 again (as without mozjpeg).
    expect(written[1]).toBe(written[3]);
    expect(new Set(written).size).toBe(3);
  });

  it('WebP and AVIF effort change what is written', async () => {
    // 600x400 rather than 700x500: AVIF at effort 6 takes a third of the time, and what is written still differs.
    const source = await writeImage(await tempDir(), 'photo.jpg', photo(600, 400).jpeg({ quality: 95 }));
    const webp = await Promise.all([0, 6].map((effort) => render(source, { formats: ['webp'], webp: { effort } })));
    expect(webp[0]!.total).not.toBe(webp[1]!.total);
    const avif = await Promise.all(
      [
        { effort: 0, chroma: '4:4:4' as const },
        { effort: 6, chroma: '4:4:4' as const },
        { effort: 0, chroma: '4:2:0' as const },
      ].map((settings) => render(source, { formats: ['avif'], avif: settings })),
    );
    expect(new Set(avif.map((run) => run.total)).size).toBe(3);
    for (const file of avif.flatMap((run) => run.files)) expect(file.meta.format).toBe('heif');
  });
});

describe('the manifest key', () => {
  it('a changed encoder setting renders again; the same settings are up to date', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'photo.jpg', photo(800, 500).jpeg({ quality: 95 }));
    const outDir = path.join(dir, 'out');
    const status = async (settings: RenderSettingsInput) =>
      ((await renderOriginals([source], { outDir, ...settings })).results[0] as RenderResult).status;
    expect(await status({})).toBe('rendered');
    expect(await status({})).toBe('skipped');
    expect(await status({ jpeg: { mozjpeg: true } })).toBe('rendered');
    expect(await status({ jpeg: { mozjpeg: true } })).toBe('skipped');
    // A setting of another format leaves a JPEG's files as they are.
    expect(await status({ jpeg: { mozjpeg: true }, webp: { effort: 6 } })).toBe('skipped');
  });
});
