/**
 * `--quality auto`: the lowest encoder quality whose SSIMULACRA2 score, against the pixels before
 * encoding, reaches a target. A bounded search (at most MAX_ENCODES encodes), which starts where
 * the neighbouring rendition ended, over a sample of the rendition's tiles that lose most when it is
 * larger than SAMPLE_PIXELS (the metric costs about 0.4 s of CPU a megapixel; the sample keeps the
 * search's cost the same for a 1 MP and a 15 MP rendition), aimed TILE_MARGIN over the target.
 */
import type { RawPixels } from './linear.js';

/** Encodes tried per rendition, at most. */
export const MAX_ENCODES = 6;
/** Renditions up to this many pixels are scored whole; larger ones on a sample of this size. */
export const SAMPLE_PIXELS = 1 << 19;
/**
 * The sample's tiles: 256 px squares at multiples of 256 px from the top left, so a JPEG tile's
 * 8x8 and 16x16 blocks are the blocks of the whole image and encode to the same coefficients.
 */
const TILE = 256;

/** What a search found for one rendition. */
export interface Measured {
  /** The encoder quality chosen. */
  quality: number;
  /** Its SSIMULACRA2 score against the pixels before encoding. */
  score: number;
  /** What was scored: the whole rendition, or a sample of its tiles (`tiles`, see `samplePixels`). */
  scored: 'rendition' | 'tiles';
}

/** One encode tried: its quality and score, and what the caller keeps of it. */
export interface Trial<T> {
  quality: number;
  score: number;
  result: T;
}

export interface SearchOptions {
  /** The score to reach. */
  target: number;
  /** The first quality tried (the neighbouring rendition's, or the format's fixed quality). */
  start: number;
  /** The encoder's quality range. */
  min: number;
  max: number;
  /** Encodes at most (default MAX_ENCODES). */
  encodes?: number;
}

/**
 * The lowest quality in `min..max` whose trial scores at least `target`, assuming the score grows
 * with the quality: from `start`, steps towards the target by the score's slope, then narrows the
 * bracket by interpolation until it is 2 qualities wide (JPEG's and WebP's scores move by about
 * half a point per quality step) or the encodes run out. When no quality reaches the target, the
 * highest is tried last and kept, whatever its score; `trials` lists every encode, in order.
 */
export async function searchQuality<T>(
  trial: (quality: number) => Promise<{ score: number; result: T }>,
  options: SearchOptions,
): Promise<{ best: Trial<T>; trials: Array<Trial<T>> }> {
  const { target, min, max } = options;
  const encodes = options.encodes ?? MAX_ENCODES;
  const trials: Array<Trial<T>> = [];
  let pass: Trial<T> | undefined; // the lowest quality that reached the target
  let fail: Trial<T> | undefined; // the highest that did not
  let quality = clamp(Math.round(options.start), min, max);
  while (trials.length < encodes) {
    const tried: Trial<T> = { quality, ...(await trial(quality)) };
    trials.push(tried);
    if (tried.score >= target) {
      if (!pass || quality < pass.quality) pass = tried;
    } else if (!fail || quality > fail.quality) fail = tried;
    if (pass && (pass.quality === min || (fail && pass.quality - fail.quality <= 2))) break;
    if (!pass && fail?.quality === max) break;
    const next = nextQuality(pass, fail, trials, options);
    // The last encode, with the target not reached yet, goes to the top of the range.
    quality = !pass && trials.length === encodes - 1 ? max : next;
    if (trials.some((t) => t.quality === quality)) break;
  }
  const best = pass ?? trials.reduce((a, b) => (b.quality > a.quality ? b : a));
  return { best, trials };
}

/** The slope assumed before two trials give one: score points per quality step. */
const SLOPE = 0.5;

function nextQuality<T>(
  pass: Trial<T> | undefined,
  fail: Trial<T> | undefined,
  trials: Array<Trial<T>>,
  { target, min, max }: SearchOptions,
): number {
  if (pass && fail) {
    // Between the two, where the line through them meets the target, but a quarter of the way in at
    // least: scores are not straight lines (libjpeg's tables move in steps), and a point that lands
    // next to one end again and again would narrow the bracket one quality per encode.
    const width = pass.quality - fail.quality;
    const at = fail.quality + ((target - fail.score) * width) / (pass.score - fail.score);
    const margin = Math.max(1, Math.round(width / 4));
    return clamp(Math.round(at), fail.quality + margin, pass.quality - margin);
  }
  const last = trials.at(-1)!;
  const before = trials.at(-2);
  const measured =
    before && before.quality !== last.quality && (last.score - before.score) / (last.quality - before.quality);
  const slope = measured && measured > 0.1 ? Math.min(measured, 2) : SLOPE;
  // Half as far again as the line says: a bracket early, then narrowing it, takes fewer encodes
  // than creeping up on a curve that flattens out.
  const step = clamp(Math.round((1.5 * Math.abs(target - last.score)) / slope), 2, 40);
  return clamp(pass ? last.quality - step : last.quality + step, min, max);
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** True when a rendition of this size is scored on a sample of its tiles (`samplePixels`), not whole. */
export function isSampled(info: RawPixels['info'], budget = SAMPLE_PIXELS): boolean {
  const { width, height } = info;
  return (
    width * height > budget && Math.floor(width / TILE) * Math.floor(height / TILE) >= 2 && budget >= 2 * TILE * TILE
  );
}

/**
 * The JPEG quality of the probe that ranks the tiles, and the floor under a block's variance in its
 * loss: a probe's squared error counts as much as the block's own contrast plus 10 (in 8-bit levels
 * squared), so smooth gradients, where banding and blocking show, rank high, and flat ones do not.
 */
export const PROBE_QUALITY = 80;
const LOSS_FLOOR = 10;
/**
 * Points added to the target when a rendition is scored on tiles. A sample is an estimate: on the
 * bench corpus the tiles' score was 3 points under to 1.8 over the whole rendition's (docs/quality.md).
 */
export const TILE_MARGIN = 2;

/**
 * The pixels a search scores when `isSampled`: a mosaic of the rendition's 256 px tiles that lose
 * most, as many as fit in `budget` in a full rectangle, in their order in the image. `probe` is the
 * rendition's green channel (grey for grey images) after a JPEG round trip at PROBE_QUALITY, one
 * channel: a tile's loss is the mean over its 8x8 blocks of (squared error / (variance + 10))^2,
 * the places where an encoder's losses are largest for what the block shows, which is where the
 * metric finds them. Tiles sit on a 256 px grid, so a JPEG of a tile has the blocks of the whole.
 */
export function samplePixels(pixels: RawPixels, probe: RawPixels, budget = SAMPLE_PIXELS): RawPixels {
  const { width, height, channels } = pixels.info;
  if (probe.info.width !== width || probe.info.height !== height || probe.info.channels !== 1) {
    throw new Error(
      `the probe is ${probe.info.width}x${probe.info.height}x${probe.info.channels}, not ${width}x${height}x1`,
    );
  }
  const across = Math.floor(width / TILE);
  const count = Math.min(Math.floor(budget / (TILE * TILE)), across * Math.floor(height / TILE));
  // A full rectangle of tiles (no blank cell for an encoder to find easy), the most of them, as square as can be.
  let columns = 1;
  for (let c = 2; c <= count; c++) {
    const more = c * Math.floor(count / c) - columns * Math.floor(count / columns);
    if (more > 0 || (more === 0 && Math.abs(c - count / c) < Math.abs(columns - count / columns))) columns = c;
  }
  const rows = Math.floor(count / columns);
  const tiles: Array<{ index: number; loss: number }> = [];
  const down = Math.floor(height / TILE);
  for (let index = 0; index < across * down; index++) {
    tiles.push({ index, loss: loss(pixels, probe, (index % across) * TILE, Math.floor(index / across) * TILE) });
  }
  const chosen = tiles
    .sort((a, b) => b.loss - a.loss || a.index - b.index)
    .slice(0, columns * rows)
    .sort((a, b) => a.index - b.index);
  const outWidth = columns * TILE;
  const data = Buffer.alloc(outWidth * rows * TILE * channels);
  const rowBytes = TILE * channels;
  for (const [slot, { index }] of chosen.entries()) {
    const fromX = (index % across) * TILE;
    const fromY = Math.floor(index / across) * TILE;
    const toX = (slot % columns) * TILE;
    const toY = Math.floor(slot / columns) * TILE;
    for (let y = 0; y < TILE; y++) {
      const from = ((fromY + y) * width + fromX) * channels;
      const to = ((toY + y) * outWidth + toX) * channels;
      data.set(pixels.data.subarray(from, from + rowBytes), to);
    }
  }
  return { data, info: { width: outWidth, height: rows * TILE, channels } };
}

/** The tile's loss in the probe (see `samplePixels`), over 8x8 blocks of the green (or grey) channel. */
function loss(pixels: RawPixels, probe: RawPixels, left: number, top: number): number {
  const { width, channels } = pixels.info;
  const { data } = pixels;
  const lossy = probe.data;
  const first = channels >= 3 ? 1 : 0;
  let sum = 0;
  for (let by = top; by < top + TILE; by += 8) {
    for (let bx = left; bx < left + TILE; bx += 8) {
      let level = 0;
      let square = 0;
      let error = 0;
      for (let y = by; y < by + 8; y++) {
        for (let x = bx, at = (y * width + bx) * channels + first, p = y * width + bx; x < bx + 8; x++) {
          const value = data[at]!;
          const difference = lossy[p]! - value;
          level += value;
          square += value * value;
          error += difference * difference;
          at += channels;
          p++;
        }
      }
      const variance = square / 64 - (level / 64) ** 2;
      const ratio = error / 64 / (variance + LOSS_FLOOR);
      sum += ratio * ratio;
    }
  }
  return sum;
}
