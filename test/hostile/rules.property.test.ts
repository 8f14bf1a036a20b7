/**
 * Property-based tests (fast-check) of the rendition rules in src/renditions/rules.ts, for
 * any original size: every rendition fits its box, is never upscaled, keeps the aspect
 * within a pixel; the srcset, the file names and the Image object built from them agree,
 * and `verifyImage` (the check side, on the same rules) finds nothing in what `render` makes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { imageSchema } from '../../src/page/image.js';
import { buildImageObject } from '../../src/renditions/image-object.js';
import {
  buildSrcset,
  fitWithinBox,
  type NamingStyle,
  parseRenditionFileName,
  parseSrcset,
  RENDITION_BOXES,
  RENDITION_KEYS,
  relativeSize,
  renditionFileName,
  renditionSizes,
  safeName,
} from '../../src/renditions/rules.js';
import { verifyImage } from '../../src/renditions/verify.js';

/** Original sizes from 1 px to past sharp's default pixel limit on a side, extreme aspects included. */
const side = fc.oneof(
  fc.integer({ min: 1, max: 400 }),
  fc.integer({ min: 1, max: 20_000 }),
  fc.integer({ min: 1, max: 200_000 }),
);
const size = fc.record({ width: side, height: side });
const RUNS = { numRuns: 2_000 };

describe('fitWithinBox and renditionSizes, for any original size', () => {
  it('fits its box, is never upscaled, and its longer side is the box or the original', () => {
    fc.assert(
      fc.property(size, (original) => {
        for (const key of RENDITION_KEYS) {
          const box = RENDITION_BOXES[key];
          const fit = fitWithinBox(original, box);
          expect(Number.isInteger(fit.width) && Number.isInteger(fit.height)).toBe(true);
          expect(Math.min(fit.width, fit.height)).toBeGreaterThanOrEqual(1);
          expect(Math.max(fit.width, fit.height)).toBeLessThanOrEqual(box);
          expect(fit.width).toBeLessThanOrEqual(original.width);
          expect(fit.height).toBeLessThanOrEqual(original.height);
          expect(Math.max(fit.width, fit.height)).toBe(Math.min(box, Math.max(original.width, original.height)));
        }
      }),
      RUNS,
    );
  });

  it('keeps the aspect ratio within a pixel on the shorter side', () => {
    fc.assert(
      fc.property(size, fc.integer({ min: 1, max: 10_000 }), (original, box) => {
        const fit = fitWithinBox(original, box);
        const exact =
          original.width >= original.height
            ? (fit.width * original.height) / original.width
            : (fit.height * original.width) / original.height;
        const short = original.width >= original.height ? fit.height : fit.width;
        expect(Math.abs(short - exact)).toBeLessThanOrEqual(1);
        // Rounded to the nearest pixel, unless clamped up to 1.
        if (short > 1) expect(Math.abs(short - exact)).toBeLessThanOrEqual(0.5);
      }),
      RUNS,
    );
  });

  it('grows monotonically from xs to xl', () => {
    fc.assert(
      fc.property(size, (original) => {
        const sizes = renditionSizes(original);
        for (let i = 1; i < RENDITION_KEYS.length; i++) {
          const [a, b] = [sizes[RENDITION_KEYS[i - 1]!], sizes[RENDITION_KEYS[i]!]];
          expect(a.width <= b.width && a.height <= b.height).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('refuses a size that is not positive integers, with a RangeError', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ max: 0 }), fc.double({ noInteger: true }), fc.constant(Number.NaN)),
        side,
        (bad, good) => {
          expect(() => fitWithinBox({ width: bad, height: good }, 300)).toThrow(RangeError);
          expect(() => relativeSize({ width: good, height: bad })).toThrow(RangeError);
        },
      ),
    );
  });
});

describe('names, srcset and Image objects agree', () => {
  const name = fc.string({ unit: 'grapheme', maxLength: 40 });
  const style = fc.constantFrom<NamingStyle>('max', 'underscore');
  const ext = fc.constantFrom('jpg', 'png', 'webp', 'gif', 'avif');

  it('safeName gives a-z0-9 words joined by single dashes, and is idempotent', () => {
    fc.assert(
      fc.property(name, (raw) => {
        const safe = safeName(raw);
        expect(safe).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
        expect(safeName(safe)).toBe(safe);
      }),
      RUNS,
    );
  });

  it('a rendition file name reads back to its name, box, extension and style', () => {
    fc.assert(
      fc.property(name, style, ext, fc.constantFrom(...RENDITION_KEYS), (raw, naming, extension, key) => {
        const box = RENDITION_BOXES[key];
        const file = renditionFileName(safeName(raw), box, extension, naming);
        expect(parseRenditionFileName(`/media/folder/${file}`)).toEqual({
          name: safeName(raw),
          box,
          ext: extension,
          style: naming,
        });
      }),
      RUNS,
    );
  });

  it('the Image object render builds for any size passes every image rule, its srcset read back entry by entry', () => {
    const folder = fc.array(name.map(safeName), { maxLength: 3 });
    fc.assert(
      fc.property(
        size,
        name,
        folder,
        style,
        ext,
        fc.constantFrom('/media/', 'https://cdn.example.org/m/'),
        (original, raw, dirs, naming, extension, prefix) => {
          const sizes = renditionSizes(original);
          const files = Object.fromEntries(
            RENDITION_KEYS.map((key) => [
              key,
              {
                ...sizes[key],
                path: [...dirs, renditionFileName(safeName(raw), RENDITION_BOXES[key], extension, naming)].join('/'),
              },
            ]),
          ) as Parameters<typeof buildImageObject>[1];
          const image = buildImageObject(original, files, { mediaUrl: prefix });
          expect(parseSrcset(image.srcset)).toEqual(
            RENDITION_KEYS.map((key) => ({ url: image.sizes[key].url, width: image.sizes[key].width })),
          );
          expect(buildSrcset(image.sizes)).toBe(image.srcset);
          expect(verifyImage(image, { srcsetRequired: true })).toEqual([]);
          expect(relativeSize(original)).toEqual({ width: image.width, height: image.height });
          expect(Math.max(image.width, image.height)).toBe(1);
        },
      ),
      RUNS,
    );
  });
});

describe('very long strips', () => {
  // relativeSize rounds to 6 decimals, so an original longer than 2,000,000:1 (3,000,000 x 1
  // is within sharp's default pixel limit) once got a relative side of 0, which the page
  // schema (spec 2.5: a positive number) refuses: render wrote an Image that check then failed.
  it('the relative size of any original within the pixel limit is positive, as the schema requires', () => {
    const long = fc.integer({ min: 2_000_001, max: 268_402_689 });
    fc.assert(
      fc.property(long, fc.boolean(), (n, wide) => {
        const original = wide ? { width: n, height: 1 } : { width: 1, height: n };
        const sizes = renditionSizes(original);
        const files = Object.fromEntries(
          RENDITION_KEYS.map((key) => [
            key,
            { ...sizes[key], path: renditionFileName('strip', RENDITION_BOXES[key], 'png') },
          ]),
        ) as Parameters<typeof buildImageObject>[1];
        expect(imageSchema.safeParse(buildImageObject(original, files, { mediaUrl: '/media/' })).success).toBe(true);
      }),
    );
  });
});
