/**
 * Picture fingerprints compared on real photographs (the samples): no finding across rendition sizes
 * and encodings, and each seeded defect (another picture, a stale one, a wrong orientation, a wrong
 * colour conversion) caught and named.
 *
 * The thresholds were calibrated on far more than runs here (the 7 samples at every size up to the
 * original's, 39 more pictures, the files `render` writes): the margins measured are noted beside
 * them in src/picture/thresholds.ts. Here: sizes 300 and 600, a few encodings each, AVIF at its
 * fastest effort, so that the file runs in a few seconds.
 */
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { compareFingerprints, fingerprint } from '../../src/picture/index.js';
import { rawPixels } from '../../src/pixels/read.js';
import type { RawPixels } from '../../src/quality/linear.js';
import { FILES, image, mapColours, raw, readSamples, rendition, SAMPLES } from './samples.js';

let originals: Map<string, RawPixels>;
let references: Map<string, string>;

beforeAll(async () => {
  ({ originals, references } = await readSamples());
});

/** The encodings a rendition may have, each decoded back to pixels as check reads them. */
const ENCODINGS: ReadonlyArray<[string, (s: Sharp) => Sharp, number[]]> = [
  ['JPEG q30', (s) => s.flatten({ background: '#ffffff' }).jpeg({ quality: 30 }), [300, 600]],
  ['JPEG q95', (s) => s.flatten({ background: '#ffffff' }).jpeg({ quality: 95 }), [300]],
  ['WebP q30', (s) => s.webp({ quality: 30 }), [300, 600]],
  ['WebP q90', (s) => s.webp({ quality: 90 }), [300]],
  // Effort 0 keeps the test fast; the calibration used render's default (4) and 2.
  ['AVIF q30', (s) => s.avif({ quality: 30, effort: 0, chromaSubsampling: '4:2:0' }), [300, 600]],
  ['AVIF q70', (s) => s.avif({ quality: 70, effort: 0 }), [300]],
  ['PNG', (s) => s.png(), [300, 600]],
];

describe('the same picture at another size or encoding', () => {
  it('is the same for every sample, against the original and among its renditions', async () => {
    const problems: string[] = [];
    for (const file of FILES) {
      const fingerprints: Array<[string, string]> = [['original', references.get(file)!]];
      for (const box of [300, 600]) {
        const pixels = await rendition(originals.get(file)!, box);
        fingerprints.push([`${box} raw`, fingerprint(pixels)]);
        for (const [name, encode, boxes] of ENCODINGS) {
          if (!boxes.includes(box)) continue;
          const encoded = await encode(image(pixels)).toBuffer();
          fingerprints.push([`${box} ${name}`, fingerprint(await rawPixels(encoded))]);
        }
      }
      for (const [i, [a, fa]] of fingerprints.entries()) {
        for (const [b, fb] of fingerprints.slice(i + 1)) {
          const { same, differences } = compareFingerprints(fa, fb);
          if (!same) problems.push(`${file}: ${a} vs ${b}: ${differences.join('; ')}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

/** A wide-gamut picture's numbers read as sRGB: the pixels converted to Adobe RGB (1998), not tagged. */
function adobeRgbAsSrgb(pixels: RawPixels): RawPixels {
  // Linear sRGB to linear Adobe RGB (both D65): inverse(Adobe RGB to XYZ) x (sRGB to XYZ).
  const m = [
    [0.7152, 0.2848, 0],
    [0, 1, 0],
    [0, 0.0412, 0.9588],
  ];
  const linear = (v: number) => (v <= 10.31475 ? v / 3294.6 : ((v / 255 + 0.055) / 1.055) ** 2.4);
  return mapColours(pixels, (r, g, b) => {
    const rgb = [linear(r), linear(g), linear(b)];
    return m.map(([x, y, z]) => 255 * Math.max(0, x! * rgb[0]! + y! * rgb[1]! + z! * rgb[2]!) ** (256 / 563));
  });
}

/** A CMYK picture read with its four channels inverted (as Adobe's inverted CMYK JPEGs are, read naively). */
function cmykInverted(pixels: RawPixels): RawPixels {
  return mapColours(pixels, (r, g, b) => {
    const k = 1 - Math.max(r, g, b) / 255;
    const ink = (v: number) => (k < 1 ? (1 - v / 255 - k) / (1 - k) : 0);
    // Inverted: c' = 1 - c, k' = 1 - k; shown as (1 - c')(1 - k') = c k.
    return [r, g, b].map((v) => 255 * ink(v) * k);
  });
}

/** `patch` pasted into `pixels` at (left, top), both fractions of the size. */
async function paste(pixels: RawPixels, patch: RawPixels, left: number, top: number, size: number) {
  const { width, height } = pixels.info;
  const input = await image(patch)
    .resize(Math.round(width * size), Math.round(height * size), { fit: 'fill' })
    .removeAlpha()
    .png()
    .toBuffer();
  return raw(image(pixels).composite([{ input, left: Math.round(width * left), top: Math.round(height * top) }]));
}

/** A window of 80% of the original's width and height, `x` and `y` (0..1) across the room left, at 300 px. */
function window80(original: RawPixels, x: number, y: number): Promise<RawPixels> {
  const { width, height } = original.info;
  const w = Math.round(width * 0.8);
  const h = Math.round(height * 0.8);
  return raw(
    image(original)
      .extract({ left: Math.round((width - w) * x), top: Math.round((height - h) * y), width: w, height: h })
      .resize(300, 300, { fit: 'inside' }),
  );
}

describe('seeded defects', () => {
  const at300 = (file: string) => rendition(originals.get(file)!, 300);
  const compare = (file: string, pixels: RawPixels) => compareFingerprints(references.get(file)!, fingerprint(pixels));
  const OPAQUE = FILES.filter((file) => file !== 'marigold.png');
  // Near grey: its colours barely move when wide-gamut numbers are read as sRGB (mean ΔE 1.5).
  const COLOURFUL = FILES.filter((file) => file !== 'landscapes/storm.jpg');

  // Swapped: all 42 pairs say "another picture (hash distance 14 to 31 of 37 to 52)".
  it('swapped: another sample at the same size is another picture, the two landscapes too', async () => {
    for (const file of FILES) {
      const { width, height } = (await at300(file)).info;
      for (const other of FILES.filter((f) => f !== file)) {
        const swapped = await raw(image(originals.get(other)!).resize(width, height, { fit: 'fill' }));
        const { same, differences } = compare(file, swapped);
        expect(same, `${other} as ${file}`).toBe(false);
        expect(differences.join('; ')).toMatch(/another picture|differs in detail|colours differ/);
      }
    }
    const dune = await at300('landscapes/dune.jpg');
    const storm = await raw(image(originals.get('landscapes/storm.jpg')!).resize(300, 188, { fit: 'fill' }));
    expect(compare('landscapes/dune.jpg', storm).differences).toEqual([
      expect.stringMatching(/^another picture \(hash distance \d+ of \d+\)$/),
    ]);
    expect(dune.info).toMatchObject({ width: 300, height: 188 });
  });

  // Stale. The object added (21): "one region differs (where; ΔE)" 14, "differs in detail" 5, "another
  // picture" 1, "colours differ: lighter" 1. The crop moved (28): "another picture" 22, "differs in
  // detail" 4, "colours differ" 2 (the storm, nearest: hash 4, worst cell 7.5, ΔL* -3.2). Shot again (7):
  // "colours differ (...): lighter (...)" 6, "darker" 1, most "more saturated" too.
  it('stale: an object added, the crop moved, the scene shot again', async () => {
    for (const file of FILES) {
      const pixels = await at300(file);
      const other = originals.get(FILES[(FILES.indexOf(file) + 1) % FILES.length]!)!;
      // An object added (or painted over) on a sixteenth of the picture: a quarter of each side.
      for (const [left, top] of [
        [0.1, 0.1],
        [0.4, 0.4],
        [0.6, 0.2],
      ] as const) {
        const edited = compare(file, await paste(pixels, other, left, top, 0.25));
        expect(edited.same, `${file}: patch at ${left},${top}`).toBe(false);
        expect(edited.differences.join('; ')).toMatch(
          /one region differs|differs in detail|another picture|colours differ/,
        );
      }
      // The crop moved by a tenth of the width or height: the same 80% window, once centred.
      const centred = fingerprint(await window80(originals.get(file)!, 0.5, 0.5));
      for (const [x, y] of [
        [0, 0.5],
        [1, 0.5],
        [0.5, 0],
        [0.5, 1],
      ] as const) {
        const moved = compareFingerprints(centred, fingerprint(await window80(originals.get(file)!, x, y)));
        expect(moved.same, `${file}: window at ${x},${y}`).toBe(false);
      }
      // Another shot of the scene: 10% closer, turned by 3°, 10% brighter.
      const { width, height } = pixels.info;
      const turned = await raw(image(pixels).rotate(3, { background: '#808080' }));
      const reshot = await raw(
        image(turned)
          .extract({
            left: Math.round((turned.info.width - width / 1.1) / 2),
            top: Math.round((turned.info.height - height / 1.1) / 2),
            width: Math.round(width / 1.1),
            height: Math.round(height / 1.1),
          })
          .resize(width, height, { fit: 'fill' })
          .linear(1.1, 0),
      );
      expect(compare(file, reshot).same, `${file}: shot again`).toBe(false);
    }
  });

  it('wrongly oriented: rotated 180°, mirrored, rotated 90° either way, EXIF orientation ignored', async () => {
    for (const file of FILES) {
      const pixels = await at300(file);
      expect(compare(file, await raw(image(pixels).rotate(180))).differences).toEqual(['rotated 180°']);
      expect(compare(file, await raw(image(pixels).flop())).differences).toEqual(['mirrored (flipped left to right)']);
      expect(compare(file, await raw(image(pixels).flip())).differences).toEqual([
        'flipped upside down (mirrored top to bottom)',
      ]);
      // The box is then taller than wide (or wider than tall): the turn explains the aspect.
      expect(compare(file, await raw(image(pixels).rotate(90))).differences).toEqual(['rotated 90° clockwise']);
      expect(compare(file, await raw(image(pixels).rotate(270))).differences).toEqual(['rotated 90° anticlockwise']);
    }
    // The dandelion is stored on its side with EXIF orientation 6: read without it, it lies turned.
    const stored = await raw(
      sharp(path.join(SAMPLES, 'dandelion.jpg'), { autoOrient: false }).resize(300, 300, { fit: 'inside' }),
    );
    expect(stored.info).toMatchObject({ width: 300, height: 200 });
    expect(compare('dandelion.jpg', stored).differences).toEqual(['rotated 90° anticlockwise']);
  });

  it('wrongly colour-converted: channels swapped, wide gamut read as sRGB, CMYK inverted, grey, gamma', async () => {
    for (const file of FILES) {
      const pixels = await at300(file);
      const differences = async (changed: RawPixels | Promise<RawPixels>) =>
        compare(file, await changed).differences.join('; ');
      expect(await differences(mapColours(pixels, (r, g, b) => [b, g, r]))).toMatch(
        /^colours differ \(mean ΔE [\d.]+, worst cell [\d.]+\): red and blue channels swapped \(BGR\)$/,
      );
      if (COLOURFUL.includes(file)) {
        // Display P3 numbers (sharp converts to its built-in P3 profile) shown as sRGB; Adobe RGB likewise.
        const p3 = await raw(image(pixels).withIccProfile('p3'));
        for (const changed of [p3, adobeRgbAsSrgb(pixels)]) {
          expect(await differences(changed)).toMatch(
            /^colours differ \(.*\): less saturated \(chroma \d+%\): a wide-gamut/,
          );
        }
      }
      if (OPAQUE.includes(file)) {
        expect(await differences(cmykInverted(pixels))).toMatch(/^inverted: a negative/);
      }
      const grey = mapColours(pixels, (r, g, b) => Array(3).fill(0.299 * r + 0.587 * g + 0.114 * b));
      expect(await differences(grey)).toMatch(/: greyscale where colour is expected$/);
      // Linear light stored as sRGB (a gamma left out) and sRGB encoded twice.
      const darker = mapColours(pixels, (r, g, b) => [r, g, b].map((v) => 255 * (v / 255) ** 2.2));
      const lighter = mapColours(pixels, (r, g, b) => [r, g, b].map((v) => 255 * (v / 255) ** (1 / 2.2)));
      expect(await differences(darker)).toMatch(/: darker \(mean ΔL\* -[\d.]+\): a gamma or tone-curve error\?/);
      expect(await differences(lighter)).toMatch(/: lighter \(mean ΔL\* \+[\d.]+\): a gamma or tone-curve error\?/);
    }
  });
});
