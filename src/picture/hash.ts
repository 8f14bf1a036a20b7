/**
 * The perceptual hash: the lowest 8x8 DCT coefficients of the 32x32 grid's luma (grid.ts), kept as
 * their signs and which of them are strong, and the hash distance between two fingerprints under
 * each orientation (orientation.ts).
 */
import type { Fingerprint } from './codec.js';
import { GRID } from './grid.js';
import { commonSize, IDENTITY, TRANSFORMS, type Transform } from './orientation.js';
import { THRESHOLDS } from './thresholds.js';

const { STRONG_SHARE, MIN_HASH_BITS, MIN_SIDE_BITS } = THRESHOLDS;

/** The DCT block kept from the grid, across and down. */
const HASH = 8;

/** Orthonormal DCT-II basis: `COS[k * GRID + x]`. */
const COS = (() => {
  const table = new Float64Array(HASH * GRID);
  for (let k = 0; k < HASH; k++) {
    const scale = Math.sqrt((k === 0 ? 1 : 2) / GRID);
    for (let x = 0; x < GRID; x++) table[k * GRID + x] = scale * Math.cos((Math.PI * (2 * x + 1) * k) / (2 * GRID));
  }
  return table;
})();

/** Coefficient (u, v) at `v * 8 + u` (u across, v down) of the luma (Rec. 601 weights on sRGB values). */
function lowDct(means: Float64Array): Float64Array {
  const luma = new Float64Array(GRID * GRID);
  for (let i = 0; i < GRID * GRID; i++) {
    luma[i] = 0.299 * means[3 * i]! + 0.587 * means[3 * i + 1]! + 0.114 * means[3 * i + 2]!;
  }
  const across = new Float64Array(GRID * HASH);
  for (let y = 0; y < GRID; y++) {
    for (let u = 0; u < HASH; u++) {
      let sum = 0;
      for (let x = 0; x < GRID; x++) sum += luma[y * GRID + x]! * COS[u * GRID + x]!;
      across[y * HASH + u] = sum;
    }
  }
  const out = new Float64Array(HASH * HASH);
  for (let v = 0; v < HASH; v++) {
    for (let u = 0; u < HASH; u++) {
      let sum = 0;
      for (let y = 0; y < GRID; y++) sum += across[y * HASH + u]! * COS[v * GRID + y]!;
      out[v * HASH + u] = sum;
    }
  }
  return out;
}

/**
 * The hash of the grid of mean sRGB values (`boxAverage`): the RMS of the 63 low AC coefficients
 * (8-bit units; ~0 for a flat picture), bit `v * 8 + u` set in `signs` when coefficient (u, v) is
 * positive and in `strong` when it is among the stronger ones.
 */
export function perceptualHash(means: Float64Array): { rms: number; signs: bigint; strong: bigint } {
  const coefficients = lowDct(means);
  let energy = 0;
  for (let i = 1; i < HASH * HASH; i++) energy += coefficients[i]! ** 2;
  const rms = Math.sqrt(energy / (HASH * HASH - 1));
  // Strong: in the larger half, and not small beside the whole (a ramp's energy is in a few
  // coefficients; the signs of the rest are noise).
  const magnitudes = [...coefficients.subarray(1)].map(Math.abs).sort((a, b) => b - a);
  const floor = Math.max(magnitudes[(HASH * HASH) / 2 - 1]!, STRONG_SHARE * rms, Number.MIN_VALUE);
  let signs = 0n;
  let strong = 0n;
  for (let i = 1; i < HASH * HASH; i++) {
    const c = coefficients[i]!;
    if (c > 0) signs |= 1n << BigInt(i);
    if (Math.abs(c) >= floor) strong |= 1n << BigInt(i);
  }
  return { rms, signs, strong };
}

/** `bits` of the expected picture as the picture transformed by `t` would have them. */
function transformBits(bits: bigint, t: Transform): bigint {
  let out = 0n;
  for (let v = 0; v < HASH; v++) {
    for (let u = 0; u < HASH; u++) {
      const from = t.transpose ? u * HASH + v : v * HASH + u;
      if ((bits >> BigInt(from)) & 1n) out |= 1n << BigInt(v * HASH + u);
    }
  }
  return out;
}

/** The sign flips of `t`: bits whose coefficient changes sign (odd u when mirrored, odd v when flipped). */
function signFlips(t: Transform): bigint {
  let out = 0n;
  for (let v = 0; v < HASH; v++) {
    for (let u = 1 - Math.min(v, 1); u < HASH; u++) {
      if ((t.mirror && u % 2 === 1) !== (t.flip && v % 2 === 1)) out |= 1n << BigInt(v * HASH + u);
    }
  }
  return out;
}

/**
 * The coefficients a picture of this size holds: (u, v) with u below its width and v below its
 * height. A 300x1 rendition (of a 4801x10 original) has no vertical detail to compare.
 */
function resolvable(size: { width: number; height: number }): bigint {
  let bits = 0n;
  for (let v = 0; v < Math.min(HASH, size.height); v++) {
    for (let u = 0; u < Math.min(HASH, size.width); u++) bits |= 1n << BigInt(v * HASH + u);
  }
  return bits;
}
const AC = ((1n << BigInt(HASH * HASH)) - 1n) & ~1n;

/** The orientation (and inversion) of the expected picture closest to the actual one by hash. */
export function bestVariant(expected: Fingerprint, actual: Fingerprint) {
  let best = { transform: IDENTITY, inverted: false, ...hashDistance(expected, actual, IDENTITY, false) };
  for (const transform of TRANSFORMS) {
    for (const inverted of [false, true]) {
      const d = hashDistance(expected, actual, transform, inverted);
      if (d.distance < best.distance && d.bits >= MIN_HASH_BITS && d.fewest >= MIN_SIDE_BITS) {
        best = { transform, inverted, ...d };
      }
    }
  }
  return best;
}

/** Opposite signs among the coefficients strong in either, the expected turned by `t` (and inverted). */
export function hashDistance(expected: Fingerprint, actual: Fingerprint, t: Transform, inverted: boolean) {
  let signs = transformBits(expected.signs, t) ^ signFlips(t);
  if (inverted) signs = ~signs;
  const within = AC & resolvable(commonSize(expected, actual, t));
  const expectedStrong = transformBits(expected.strong, t) & within;
  const actualStrong = actual.strong & within;
  const counted = expectedStrong | actualStrong;
  return {
    distance: popCount((signs ^ actual.signs) & counted),
    bits: popCount(counted),
    // The fewer strong coefficients of the two: a ramp's few, a thin picture's.
    fewest: Math.min(popCount(expectedStrong), popCount(actualStrong)),
  };
}

function popCount(bits: bigint): number {
  let count = 0;
  for (let b = bits; b > 0n; b &= b - 1n) count++;
  return count;
}
