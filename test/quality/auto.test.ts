/**
 * `--quality auto`'s parts: the bounded search for the lowest quality that reaches a target, and the
 * sample of detailed tiles a large rendition is scored on.
 */
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { jpegProbe } from '../../src/pixels/read.js';
import {
  isSampled,
  MAX_ENCODES,
  MAX_EXACT_ENCODES,
  PROBE_QUALITY,
  probeBlocks,
  sampleBudget,
  samplePixels,
  searchQuality,
  slopeOf,
} from '../../src/quality/auto.js';
import { ssimulacra2 } from '../../src/quality/ssimulacra2.js';

/** A search over a score curve: what it chose and the qualities it tried. */
async function search(curve: (quality: number) => number, target: number, start: number, exact = false) {
  const { best, trials } = await searchQuality(async (quality) => ({ score: curve(quality), result: quality }), {
    target,
    start,
    min: 10,
    max: 100,
    exact,
  });
  return { chosen: best.quality, score: best.score, tried: trials.map((t) => t.quality) };
}

describe('searchQuality', () => {
  it('finds the lowest quality reaching the target within two, in at most six encodes, from any start', async () => {
    const curves: Array<[string, (q: number) => number]> = [
      ['straight', (q) => 30 + 0.6 * q],
      ['steep', (q) => 2 * q - 60],
      ['flat top', (q) => 100 - 1500 / q],
      // libjpeg's tables move in steps: a curve with stairs and a dip.
      ['stairs', (q) => 30 + 0.6 * (q - (q % 4)) - (q % 7 === 0 ? 0.3 : 0)],
    ];
    for (const [name, curve] of curves) {
      const lowest = [...Array(91).keys()].map((i) => i + 10).find((q) => curve(q) >= 80)!;
      for (const start of [10, 50, 80, 100]) {
        const { chosen, score, tried } = await search(curve, 80, start);
        expect(tried.length, `${name} from ${start}: ${tried}`).toBeLessThanOrEqual(MAX_ENCODES);
        expect(score, `${name} from ${start}`).toBeGreaterThanOrEqual(80);
        expect(chosen - lowest, `${name} from ${start}: ${tried}`).toBeLessThanOrEqual(2);
        expect(chosen).toBeGreaterThanOrEqual(lowest);
      }
    }
  });

  it('keeps the highest quality when none reaches the target, and stops at the lowest when all do', async () => {
    const low = await search(() => 50, 80, 80);
    expect(low.chosen).toBe(100);
    expect(low.tried).toContain(100);
    expect(low.tried.length).toBeLessThanOrEqual(MAX_ENCODES);
    const high = await search(() => 95, 80, 80);
    expect(high.chosen).toBe(10);
    expect(high.tried.length).toBeLessThanOrEqual(MAX_ENCODES);
  });

  it('starting at the answer costs one encode, when the slope says the quality below falls short', async () => {
    const curve = (q: number) => 30 + 0.6 * q; // 80 first reached at 84
    expect(await search(curve, 80, 84)).toMatchObject({ chosen: 84, tried: [84] });
    // 90 passes by 4 points: down by the slope to 82, which fails, then between the two.
    expect(await search(curve, 80, 90)).toMatchObject({ chosen: 84, tried: [90, 82, 84] });
  });

  it('exact: stops only once the quality below was tried and failed, where the slope would have stopped it', async () => {
    // Steep, then flat at the target: from 84 the assumed slope says 83 fails, and it passes.
    const curve = (q: number) => (q >= 82 ? 80 + 0.1 * (q - 82) : 80 - 2 * (82 - q));
    expect(await search(curve, 80, 84)).toMatchObject({ chosen: 84, tried: [84] });
    // Wherever it starts, the lowest passing quality (these scores grow with the quality), within its budget.
    for (const start of [10, 50, 80, 84, 100]) {
      const { chosen, tried } = await search(curve, 80, start, true);
      expect(chosen, `from ${start}: ${tried}`).toBe(82);
      expect(tried, `from ${start}`).toContain(81);
      expect(tried.length, `from ${start}: ${tried}`).toBeLessThanOrEqual(MAX_EXACT_ENCODES);
    }
    const curves: Array<[string, (q: number) => number]> = [
      ['straight', (q) => 30 + 0.6 * q],
      ['steep', (q) => 2 * q - 60],
      ['flat top', (q) => 100 - 1500 / q],
    ];
    for (const [name, growing] of curves) {
      const lowest = [...Array(91).keys()].map((i) => i + 10).find((q) => growing(q) >= 80)!;
      for (const start of [10, 50, 80, 100]) {
        const { chosen, tried } = await search(growing, 80, start, true);
        expect(chosen, `${name} from ${start}: ${tried}`).toBe(lowest);
        expect(tried.length, `${name} from ${start}: ${tried}`).toBeLessThanOrEqual(MAX_EXACT_ENCODES);
      }
    }
  });
});

describe('slopeOf', () => {
  it('is the score per quality step between the lowest and highest quality tried, within bounds', () => {
    const trial = (quality: number, score: number) => ({ quality, score });
    expect(slopeOf([trial(90, 84), trial(82, 79.2), trial(84, 80.4)])).toBeCloseTo(0.6, 10);
    expect(slopeOf([trial(80, 70), trial(81, 75)])).toBe(2);
    expect(slopeOf([trial(80, 70), trial(90, 70.5)])).toBe(0.2);
    expect(slopeOf([trial(80, 70)])).toBeUndefined();
    expect(slopeOf([trial(80, 70), trial(90, 69)])).toBeUndefined();
    expect(slopeOf([])).toBeUndefined();
  });
});

/** Raw RGB pixels, `width` x `height`, from `pick(x, y)` (a grey level). */
function grey(width: number, height: number, pick: (x: number, y: number) => number) {
  const data = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) data.fill(pick(x, y), (y * width + x) * 3, (y * width + x) * 3 + 3);
  return { data, info: { width, height, channels: 3 } };
}

describe('samplePixels', () => {
  it('scores a rendition within the budget whole', () => {
    // Every sm rendition (at most 600x600) is scored whole; an md rendition is sampled.
    expect(isSampled({ width: 600, height: 400, channels: 3 })).toBe(false);
    expect(isSampled({ width: 600, height: 600, channels: 3 })).toBe(false);
    expect(isSampled({ width: 1200, height: 800, channels: 3 })).toBe(true);
    expect(isSampled({ width: 2048, height: 1024, channels: 3 })).toBe(true);
    expect(isSampled({ width: 2048, height: 1024, channels: 3 }, 4 << 20)).toBe(false);
    // 256 K pixels, twice that for an xl rendition of more than 8 MP.
    expect(sampleBudget({ width: 2400, height: 1600, channels: 3 })).toBe(256 * 1024);
    expect(sampleBudget({ width: 4800, height: 3200, channels: 3 })).toBe(512 * 1024);
    // An image without two whole tiles has no sample to take.
    const narrow = grey(300, 500, () => 128);
    expect(() => samplePixels(narrow, { plain: narrow, lossy: narrow })).toThrow(/fewer than two 256 px tiles/);
  });

  it('takes the tiles the probe lost most in for what they show, in a full rectangle, pixel for pixel', () => {
    // 2048x1024: 8 x 4 tiles. Gradients in (1, 0), (6, 2), (3, 3) and (7, 3), where the probe is 3
    // levels off; noise in (0, 0) and (5, 1), where it is 12 off (more, but in more contrast); flat 90
    // elsewhere, where it is 1 off.
    const smooth = new Set(['1,0', '6,2', '3,3', '7,3']);
    const noisy = new Set(['0,0', '5,1']);
    const tileOf = (x: number, y: number) => `${x >> 8},${y >> 8}`;
    const noise = (x: number, y: number) => ((x * 7919 + y * 104729) % 251) * ((x ^ y) & 1);
    const level = (x: number, y: number) => {
      if (smooth.has(tileOf(x, y))) return 60 + ((x + y) & 255) / 4;
      return noisy.has(tileOf(x, y)) ? noise(x, y) : 90;
    };
    const pixels = grey(2048, 1024, level);
    const off = (x: number, y: number) => {
      if (smooth.has(tileOf(x, y))) return 3;
      return noisy.has(tileOf(x, y)) ? 12 : 1;
    };
    // What a JPEG of the whole would be, cut down to the blocks a probe reads.
    const lossy = probeBlocks({
      data: Buffer.from(
        Array.from({ length: 2048 * 1024 }, (_, i) => level(i % 2048, i >> 11) + off(i % 2048, i >> 11)),
      ),
      info: { width: 2048, height: 1024, channels: 1 },
    });
    const probe = { plain: probeBlocks(pixels), lossy };
    const sample = samplePixels(pixels, probe, 4 * 256 * 256);
    expect(sample.info).toEqual({ width: 512, height: 512, channels: 3 });
    // The smooth tiles, in their order in the image, each copied whole.
    const tile = (image: typeof sample, tx: number, ty: number) => {
      const rows = [];
      for (let y = 0; y < 256; y++) {
        const from = ((ty * 256 + y) * image.info.width + tx * 256) * 3;
        rows.push(Buffer.from(image.data.subarray(from, from + 256 * 3)));
      }
      return Buffer.concat(rows);
    };
    const expected = [
      [1, 0],
      [6, 2],
      [3, 3],
      [7, 3],
    ];
    for (const [slot, [tx, ty]] of expected.entries()) {
      expect(tile(sample, slot % 2, slot >> 1).equals(tile(pixels, tx!, ty!)), `slot ${slot}`).toBe(true);
    }
  });

  it("probes a quarter of the blocks, each as a JPEG of the whole rendition's green channel loses it", async () => {
    const pixels = await sharp('samples/originals/ladybird.jpg')
      .resize(1024, 768, { fit: 'cover' })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const { plain, lossy } = await jpegProbe(pixels);
    expect(lossy.info).toEqual({ width: 512, height: 384, channels: 1 });
    expect(plain).toEqual(probeBlocks(pixels));
    const whole = await sharp(pixels.data, { raw: pixels.info })
      .extractChannel(1)
      .jpeg({ quality: PROBE_QUALITY })
      .toBuffer();
    const decoded = await sharp(whole).toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
    expect(Buffer.from(lossy.data).equals(Buffer.from(probeBlocks(decoded).data))).toBe(true);
  });

  it('a JPEG of the sample has the blocks of the whole image: tiles sit on the 16 px grid', async () => {
    // A photograph over 3 x 2 of the 6 x 4 tiles, flat grey around it: the sample is the photograph.
    const photo = await sharp('samples/originals/ladybird.jpg').resize(768, 512, { fit: 'cover' }).toBuffer();
    const canvas = await sharp({ create: { width: 1536, height: 1024, channels: 3, background: '#808080' } })
      .composite([{ input: photo, left: 0, top: 0 }])
      .raw()
      .toBuffer({ resolveWithObject: true });
    const budget = 6 * 256 * 256;
    const probe = await jpegProbe(canvas);
    const sample = samplePixels(canvas, probe, budget);
    const jpeg = async (pixels: { data: Uint8Array; info: { width: number; height: number; channels: number } }) =>
      sharp(
        await sharp(pixels.data, { raw: pixels.info as never })
          .jpeg({ quality: 60 })
          .toBuffer(),
      )
        .raw()
        .toBuffer({ resolveWithObject: true });
    // The whole image encoded, then cut: its photograph tiles are the sample encoded on its own.
    const cut = samplePixels(await jpeg(canvas), probe, budget);
    const part = await jpeg(sample);
    let differing = 0;
    for (let i = 0; i < part.data.length; i++) if (Math.abs(part.data[i]! - cut.data[i]!) > 2) differing++;
    // Luma and chroma blocks are the same; libjpeg's smoothed chroma upsampling differs along tile edges.
    expect(differing / part.data.length).toBeLessThan(0.01);
    expect(Math.abs(ssimulacra2(sample, part) - ssimulacra2(sample, cut))).toBeLessThan(0.5);
  });
});
