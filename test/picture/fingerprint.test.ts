/**
 * Picture fingerprints: the format, every pixel layout, any size, a file as displayed, what is not a
 * fingerprint, and flat pictures compared by their colours. On the samples (samples.ts); the same
 * picture and the seeded defects across sizes and encodings are in compare.test.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  compareFingerprints,
  FINGERPRINT_VERSION,
  FingerprintError,
  fingerprint,
  fingerprintFile,
  parseFingerprint,
} from '../../src/picture/index.js';
import { rawPixels } from '../../src/pixels/read.js';
import type { RawPixels } from '../../src/quality/linear.js';
import { image, raw, readSamples, rendition, SAMPLES } from './samples.js';

let originals: Map<string, RawPixels>;
let references: Map<string, string>;

beforeAll(async () => {
  ({ originals, references } = await readSamples());
});

describe('fingerprint', () => {
  it('is a short, versioned, JSON-safe string', () => {
    const fp = references.get('ladybird.jpg')!;
    expect(fp).toMatch(/^f1:[A-Za-z0-9_-]{92}$/);
    expect(fp.startsWith(`${FINGERPRINT_VERSION}:`)).toBe(true);
    expect(JSON.parse(JSON.stringify(fp))).toBe(fp);
    expect(parseFingerprint(fp)).toMatchObject({ width: 2560, height: 1600 });
  });

  it('reads grey, grey and alpha, RGB and RGBA alike; alpha is blended over white', async () => {
    const rgb = await raw(image(originals.get('ladybird.jpg')!).resize(120, 75));
    const rgba = await raw(image(rgb).ensureAlpha());
    expect(fingerprint(rgba)).toBe(fingerprint(rgb));
    const grey = await raw(image(rgb).toColourspace('b-w'));
    expect(grey.info.channels).toBe(1);
    const greyRgb = await raw(image(grey).toColourspace('srgb'));
    expect(greyRgb.info.channels).toBe(3);
    expect(fingerprint(grey)).toBe(fingerprint(greyRgb));
    const pairs = new Uint8Array(grey.data.length * 2);
    for (const [i, v] of grey.data.entries()) pairs.set([v, 255], 2 * i);
    expect(fingerprint({ data: pairs, info: { ...grey.info, channels: 2 } })).toBe(fingerprint(grey));
    // Half transparent black over white is mid grey.
    const half = new Uint8Array(64 * 64 * 2).map((_, i) => (i % 2 === 0 ? 0 : 128));
    const mid = new Uint8Array(64 * 64).fill(127);
    const halfInfo = { width: 64, height: 64, channels: 2 };
    expect(fingerprint({ data: half, info: halfInfo })).toBe(
      fingerprint({ data: mid, info: { ...halfInfo, channels: 1 } }),
    );
    // The marigold's soft transparent oval: its pixels as they are and flattened on white (a JPEG).
    const marigold = await rendition(originals.get('marigold.png')!, 300);
    expect(marigold.info.channels).toBe(4);
    const flat = await raw(image(marigold).flatten({ background: '#ffffff' }));
    expect(compareFingerprints(fingerprint(marigold), fingerprint(flat))).toMatchObject({ same: true });
  });

  it('takes pictures of any size, down to one pixel', async () => {
    const ramp = Buffer.alloc(4800 * 16 * 3);
    for (let i = 0; i < ramp.length; i++) ramp[i] = Math.floor((Math.floor(i / 3) % 4800) / 19);
    const wide: RawPixels = { data: ramp, info: { width: 4800, height: 16, channels: 3 } };
    const thin = await raw(image(wide).resize(300, 1, { fit: 'fill' }));
    expect(compareFingerprints(fingerprint(wide), fingerprint(thin))).toMatchObject({ same: true });
    // A panorama strip 4801x10 and its xs rendition, 300x1: no rows to compare, the columns agree.
    const strip = await raw(
      image(originals.get('landscapes/dune.jpg')!).extract({ left: 0, top: 500, width: 1680, height: 4 }),
    );
    const panorama = await raw(image(strip).resize(4801, 10, { fit: 'fill' }));
    for (const [width, height] of [
      [300, 1],
      [600, 1],
      [1200, 2],
      [2400, 5],
    ]) {
      const smaller = fingerprint(await raw(image(panorama).resize(width, height, { fit: 'fill' })));
      expect(compareFingerprints(fingerprint(panorama), smaller), `${width}x${height}`).toMatchObject({ same: true });
    }
    const dot = fingerprint({ data: new Uint8Array([10, 20, 30]), info: { width: 1, height: 1, channels: 3 } });
    expect(parseFingerprint(dot)).toMatchObject({ width: 1, height: 1 });
  });

  it('rejects pixels that do not match their size', () => {
    expect(() => fingerprint({ data: new Uint8Array(5), info: { width: 2, height: 1, channels: 3 } })).toThrow(
      'cannot fingerprint 2x1x3 pixels from 5 bytes',
    );
    expect(() => fingerprint({ data: new Uint8Array(0), info: { width: 0, height: 1, channels: 3 } })).toThrow(
      FingerprintError,
    );
  });

  it('fingerprints a file as displayed (fingerprintFile)', async () => {
    const file = path.join(SAMPLES, 'dandelion.jpg');
    expect(await fingerprintFile(file)).toBe(references.get('dandelion.jpg'));
    expect(parseFingerprint(await fingerprintFile(file))).toMatchObject({ width: 1066, height: 1600 });
    await expect(fingerprintFile(path.join(SAMPLES, 'no-such.jpg'))).rejects.toMatchObject({ name: 'SourceError' });
  });
});

describe('parseFingerprint and compareFingerprints', () => {
  /** A smooth two-colour gradient (no structure for the hash), `width` x `height`. */
  function gradient(width: number, height: number): RawPixels {
    const data = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const t = (x / width + y / height) / 2;
        data.set([40 + 180 * t, 90, 200 - 150 * t], (y * width + x) * 3);
      }
    }
    return { data, info: { width, height, channels: 3 } };
  }

  it('compares flat pictures (plain colours, smooth gradients) by their colours alone', async () => {
    const large = gradient(1200, 800);
    const small = fingerprint(await rawPixels(await image(large).resize(300, 200).jpeg({ quality: 30 }).toBuffer()));
    expect(compareFingerprints(fingerprint(large), small)).toMatchObject({ same: true, measures: { textured: false } });
    expect(compareFingerprints(fingerprint(large), fingerprint(await raw(image(large).rotate(180))))).toMatchObject({
      differences: ['rotated 180°'],
    });
    const plain = (colour: string) =>
      raw(sharp({ create: { width: 300, height: 200, channels: 3, background: colour } }));
    expect(compareFingerprints(fingerprint(await plain('#6a8fb0')), fingerprint(await plain('#b08f6a')))).toMatchObject(
      {
        same: false,
        differences: [expect.stringMatching(/^colours differ \(mean ΔE [\d.]+, worst cell [\d.]+\)/)],
      },
    );
    const photo = await rendition(originals.get('ladybird.jpg')!, 300);
    expect(compareFingerprints(fingerprint(await plain('#6a8fb0')), fingerprint(photo)).differences).toEqual([
      'another picture (the expected one is flat)',
      'aspect ratio differs: 1.6 (300x188), expected 1.5 (300x200)',
    ]);
  });

  it('refuse what is not a fingerprint of this version, in one line', () => {
    const fp = references.get('ladybird.jpg')!;
    expect(() => compareFingerprints(fp, `f2:${fp.slice(3)}`)).toThrow(
      /^"f2:.{21}…": fingerprint version f2 cannot be read \(this version reads f1\)$/,
    );
    expect(() => parseFingerprint('sha256:abc')).toThrow('"sha256:abc" is not a picture fingerprint');
    expect(() => parseFingerprint('f1:abc')).toThrow('"f1:abc": malformed fingerprint');
    expect(() => parseFingerprint(`${fp.slice(0, -1)}!`)).toThrow(FingerprintError);
    expect(() => parseFingerprint('f1:abc')).toThrow(expect.objectContaining({ code: 'CONTENT_API_FINGERPRINT' }));
  });

  it('says the same for one fingerprint against itself', () => {
    const fp = references.get('landscapes/storm.jpg')!;
    expect(compareFingerprints(fp, fp)).toEqual({
      same: true,
      differences: [],
      measures: expect.objectContaining({ hashDistance: 0, meanDeltaE: 0, transform: 'identity', inverted: false }),
    });
  });
});

describe('src/picture', () => {
  it('decodes files in fingerprint-file.ts alone: nothing else there reaches sharp', () => {
    const SRC = path.resolve(import.meta.dirname, '../../src');
    /** The modules `file` (under src/) imports, and the packages. */
    const imports = (file: string) =>
      ts
        .preProcessFile(readFileSync(path.join(SRC, file), 'utf8'), true, true)
        .importedFiles.map(({ fileName }) =>
          fileName.startsWith('.')
            ? path.relative(SRC, path.resolve(SRC, path.dirname(file), fileName.replace(/\.js$/, '.ts')))
            : fileName,
        );
    const reaches = (file: string, seen = new Set<string>()): Set<string> => {
      for (const imported of imports(file)) {
        if (seen.has(imported)) continue;
        seen.add(imported);
        if (imported.endsWith('.ts')) reaches(imported, seen);
      }
      return seen;
    };
    const modules = readdirSync(path.join(SRC, 'picture')).map((file) => `picture/${file}`);
    expect(modules).toContain('picture/fingerprint-file.ts');
    const decoding = modules.filter((file) => reaches(file).has('sharp'));
    expect(decoding.sort()).toEqual(['picture/fingerprint-file.ts', 'picture/index.ts']);
  });
});
