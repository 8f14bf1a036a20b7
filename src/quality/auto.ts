/**
 * `--quality auto`: the lowest encoder quality whose SSIMULACRA2 score, against the pixels before
 * encoding, reaches a target. A bounded search (at most MAX_ENCODES encodes), which starts where
 * the neighbouring rendition ended, over a sample of the rendition's tiles that lose most when it is
 * larger than WHOLE_PIXELS (the metric costs about 0.12 s of CPU a megapixel; the sample keeps the
 * search's cost about the same for a 1 MP and a 15 MP rendition), aimed TILE_MARGIN over the target.
 */
import type { RawPixels } from './linear.js';

/** Encodes tried per rendition, at most. */
export const MAX_ENCODES = 6;
/**
 * The same for an exact search (`exact`), which closes its bracket to one step: the most any start needed on
 * smooth score curves over 10-100 and targets 40-95 (simulated); past it, the lowest passing quality tried is kept.
 */
export const MAX_EXACT_ENCODES = 12;
/** Renditions up to this many pixels (every xs and sm rendition) are scored whole, larger ones on a sample. */
export const WHOLE_PIXELS = 1 << 19;
/** The pixels of a sample (`sampleBudget`): 4 tiles. */
export const SAMPLE_PIXELS = 1 << 18;
/**
 * Above this many pixels (the xl rendition of a large original) the sample is twice as large: there
 * it covers the least of the rendition, and a 256 K sample misjudged it most (docs/quality.md).
 */
export const LARGE_PIXELS = 8 << 20;

/** The pixels a rendition's sample holds: SAMPLE_PIXELS, twice that above LARGE_PIXELS. */
export const sampleBudget = ({ width, height }: RawPixels['info']): number =>
  width * height > LARGE_PIXELS ? 2 * SAMPLE_PIXELS : SAMPLE_PIXELS;
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
  /**
   * The first quality tried: where the neighbouring rendition's search ended (moved by the difference
   * in target at its slope), or the format's fixed quality.
   */
  start: number;
  /** The encoder's quality range. */
  min: number;
  max: number;
  /** Encodes at most (default MAX_ENCODES, MAX_EXACT_ENCODES with `exact`). */
  encodes?: number;
  /** Score points per quality step assumed until two trials measure it (default SLOPE): the neighbour's. */
  slope?: number;
  /**
   * Stop only at a passing quality whose next lower one was tried and failed (or is `min`), never on
   * the slope's word that it would: the lowest passing quality, not one within a step of it.
   */
  exact?: boolean;
}

/** The slope assumed before two trials give one: score points per quality step (JPEG near 80 gains 0.5-0.7). */
export const SLOPE = 0.5;
/** Slopes are taken within these bounds: a flat or steep stretch between two trials is not the curve. */
const SLOPES = [0.2, 2] as const;

/**
 * The lowest quality in `min..max` whose trial scores at least `target`, assuming the score grows
 * with the quality by about `slope` a step: from `start`, each next quality is where the line
 * through the last trials meets the target (rounded towards passing), and the search stops at a
 * passing quality once the quality below it has failed or, by the slope, would fail (its score
 * less than a step's slope over the target; not with `exact`). Starting next to the answer, that is
 * one or two encodes. When no quality reaches the target, the highest is tried last and kept, whatever
 * its score; `trials` lists every encode, in order.
 */
export async function searchQuality<T>(
  trial: (quality: number) => Promise<{ score: number; result: T }>,
  options: SearchOptions,
): Promise<{ best: Trial<T>; trials: Array<Trial<T>> }> {
  const { target, min, max } = options;
  const encodes = options.encodes ?? (options.exact ? MAX_EXACT_ENCODES : MAX_ENCODES);
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
    if (!pass && fail?.quality === max) break;
    const slope = slopeOf(pass && fail ? [fail, pass] : trials.slice(-2)) ?? options.slope ?? SLOPE;
    const below = fail && pass && pass.quality - fail.quality <= 1;
    if (pass && (pass.quality === min || below || (!options.exact && pass.score - slope < target))) break;
    let next: number;
    if (pass && fail) {
      // A quarter of the way in at least: over a wide bracket the line is not the curve, and a point
      // that lands next to one end again and again would narrow it one quality per encode.
      const margin = Math.max(1, Math.round((pass.quality - fail.quality) / 4));
      next = clamp(
        fail.quality + Math.ceil((target - fail.score) / slope),
        fail.quality + margin,
        pass.quality - margin,
      );
    } else if (pass) next = pass.quality - Math.max(1, Math.floor((pass.score - target) / slope));
    else next = fail!.quality + Math.max(1, Math.ceil((target - fail!.score) / slope));
    // The last encode, with the target not reached yet, goes to the top of the range.
    quality = !pass && trials.length === encodes - 1 ? max : clamp(next, min, max);
    if (trials.some((t) => t.quality === quality)) break;
  }
  const best = pass ?? trials.reduce((a, b) => (b.quality > a.quality ? b : a));
  return { best, trials };
}

/**
 * Score points per quality step between the trials (by their lowest and highest quality), within
 * SLOPES; undefined for fewer than two qualities or a score that did not grow.
 */
export function slopeOf(trials: ReadonlyArray<{ quality: number; score: number }>): number | undefined {
  if (trials.length === 0) return undefined;
  const low = trials.reduce((a, b) => (b.quality < a.quality ? b : a));
  const high = trials.reduce((a, b) => (b.quality > a.quality ? b : a));
  if (high.quality === low.quality) return undefined;
  const slope = (high.score - low.score) / (high.quality - low.quality);
  return slope > 0 ? clamp(slope, ...SLOPES) : undefined;
}

const clamp = (value: number, low: number, high: number) => Math.min(high, Math.max(low, value));

/** True when a rendition of this size is scored on a sample of its tiles (`samplePixels`), not whole. */
export function isSampled(info: RawPixels['info'], whole = WHOLE_PIXELS): boolean {
  const { width, height } = info;
  return width * height > whole && Math.floor(width / TILE) * Math.floor(height / TILE) >= 2;
}

/**
 * The JPEG quality of the probe that ranks the tiles, and the floor under a block's variance in its
 * loss: a probe's squared error counts as much as the block's own contrast plus 10 (in 8-bit levels
 * squared), so smooth gradients, where banding and blocking show, rank high, and flat ones do not.
 */
export const PROBE_QUALITY = 80;
const LOSS_FLOOR = 10;
/**
 * Points added to the target when a rendition is scored on tiles. A sample is an estimate: on 16
 * originals of the bench corpus (md and lg on 256 K, xl on 512 K, at JPEG quality 84 and 88) the
 * tiles scored 2.25 points under to 1.79 over the whole rendition (docs/quality.md).
 */
export const TILE_MARGIN = 2;

/** The score a search aims at for `target`: TILE_MARGIN over it when a sample of tiles is scored. */
export const aimOf = (target: number, scored: Measured['scored']): number =>
  target + (scored === 'tiles' ? TILE_MARGIN : 0);

/**
 * The 8x8 blocks the probe reads: every other block row, and in those rows every other block,
 * shifted by one from one such row to the next, so a quarter of the blocks of every tile, spread
 * over the whole of it. They are packed into a plane of half the width and height, in which each
 * keeps its place on the 8 px grid: a JPEG of the plane has each block's coefficients, so its
 * losses are the blocks' losses in a JPEG of the rendition's whole channel, at a quarter of the cost.
 */
const probeGrid = ({ width, height }: RawPixels['info']) => {
  const across = Math.floor(width / TILE) * (TILE / 8);
  const down = Math.floor(height / TILE) * (TILE / 8);
  return { across, down, width: (across / 2) * 8, height: (down / 2) * 8 };
};

/** A probe: the plane of the blocks it reads (`probeBlocks`), before and after a JPEG round trip. */
export interface Probe {
  plain: RawPixels;
  lossy: RawPixels;
}

/**
 * The plane a probe encodes: the green channel (grey for grey pixels) of the blocks it reads (see
 * `probeGrid`), packed. `jpegProbe` (pixels/read.ts) round-trips it through JPEG at PROBE_QUALITY.
 */
export function probeBlocks(pixels: RawPixels): RawPixels {
  const { width, channels } = pixels.info;
  const grid = probeGrid(pixels.info);
  const data = Buffer.alloc(grid.width * grid.height);
  const first = channels >= 3 ? 1 : 0;
  for (let row = 0; row < grid.down / 2; row++) {
    for (let column = 0; column < grid.across / 2; column++) {
      const bx = 2 * column + (row & 1);
      for (let y = 0; y < 8; y++) {
        let at = ((16 * row + y) * width + 8 * bx) * channels + first;
        let to = (8 * row + y) * grid.width + 8 * column;
        for (let x = 0; x < 8; x++, at += channels) data[to++] = pixels.data[at]!;
      }
    }
  }
  return { data, info: { width: grid.width, height: grid.height, channels: 1 } };
}

/**
 * The pixels a search scores when `isSampled`: a mosaic of the rendition's 256 px tiles that lose
 * most, as many as fit in `budget` in a full rectangle, in their order in the image. `probe` is
 * `probeBlocks(pixels)` before and after a JPEG round trip at PROBE_QUALITY (`jpegProbe`): a tile's
 * loss is the sum over its probed 8x8 blocks of (squared error / (variance + 10))^2, the places where an
 * encoder's losses are largest for what the block shows, which is where the metric finds them.
 * Tiles sit on a 256 px grid, so a JPEG of a tile has the blocks of the whole.
 */
export function samplePixels(pixels: RawPixels, probe: Probe, budget = sampleBudget(pixels.info)): RawPixels {
  const { width, height, channels } = pixels.info;
  if (!isSampled(pixels.info, 0)) throw new Error(`a ${width}x${height} image has fewer than two 256 px tiles`);
  const grid = probeGrid(pixels.info);
  for (const plane of [probe.plain, probe.lossy]) {
    if (plane.info.width !== grid.width || plane.info.height !== grid.height || plane.info.channels !== 1) {
      throw new Error(
        `the probe is ${plane.info.width}x${plane.info.height}x${plane.info.channels}, ` +
          `not ${grid.width}x${grid.height}x1 (probeBlocks of ${width}x${height})`,
      );
    }
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
  const losses = blockLosses(probe);
  const tiles: Array<{ index: number; loss: number }> = [];
  const down = Math.floor(height / TILE);
  const perTile = TILE / 16; // probed block rows (and blocks per such row) in a tile
  for (let index = 0; index < across * down; index++) {
    const [tx, ty] = [index % across, Math.floor(index / across)];
    let loss = 0;
    for (let row = ty * perTile; row < (ty + 1) * perTile; row++) {
      for (let column = tx * perTile; column < (tx + 1) * perTile; column++)
        loss += losses[row * (grid.across / 2) + column]!;
    }
    tiles.push({ index, loss });
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

/**
 * Each probed block's loss, in the probe's packed order: (squared error / (variance + 10))^2 over
 * its 64 pixels, the variance the block's own (in the probe's plane before encoding).
 */
function blockLosses({ plain: { data: plain }, lossy: { data: lossy, info } }: Probe): Float64Array {
  const { width, height } = info;
  const losses = new Float64Array((width / 8) * (height / 8));
  for (let block = 0; block < losses.length; block++) {
    const left = (block % (width / 8)) * 8;
    const top = Math.floor(block / (width / 8)) * 8;
    let level = 0;
    let square = 0;
    let error = 0;
    for (let y = top; y < top + 8; y++) {
      for (let p = y * width + left, end = p + 8; p < end; p++) {
        const value = plain[p]!;
        const difference = lossy[p]! - value;
        level += value;
        square += value * value;
        error += difference * difference;
      }
    }
    const variance = square / 64 - (level / 64) ** 2;
    const ratio = error / 64 / (variance + LOSS_FLOOR);
    losses[block] = ratio * ratio;
  }
  return losses;
}
