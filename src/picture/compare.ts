/**
 * Two fingerprints compared: the same picture, or how they differ. The hash (hash.ts) says whether
 * the structure is the same, another picture's, an edited one's, or the same turned, mirrored or
 * inverted (orientation.ts); the colour grid (colour-compare.ts) whether the colours were converted
 * wrongly, or, for flat pictures, the orientation; the sizes whether the aspect ratio is kept.
 */
import { type Fingerprint, parseFingerprint } from './codec.js';
import { colourDifference, colourDiffers, compareColours, round } from './colour-compare.js';
import { bestVariant, hashDistance } from './hash.js';
import { type FingerprintTransform, IDENTITY, TRANSFORMS, type Transform } from './orientation.js';
import { THRESHOLDS } from './thresholds.js';

const { FLAT_ENERGY, MIN_HASH_BITS, MIN_SIDE_BITS, SAME_HASH, VARIANT_HASH, OTHER_HASH, ASPECT_SLACK } = THRESHOLDS;

/** The measures behind a comparison, for reports and tests. */
export interface FingerprintMeasures {
  /** Opposite signs among the coefficients strong in either fingerprint, as compared (identity). */
  readonly hashDistance: number;
  /** How many coefficients were strong in either (the most `hashDistance` can be). */
  readonly hashBits: number;
  /** The transform of the expected picture that matches the actual one best (`identity` when same). */
  readonly transform: FingerprintTransform;
  /** The actual picture is a negative of the expected one (under `transform`). */
  readonly inverted: boolean;
  /** The hash distance under `transform` (and the inversion). */
  readonly transformDistance: number;
  /** CIELAB ΔE (1976) per 4x4 cell, under `transform`: the mean and the worst. */
  readonly meanDeltaE: number;
  readonly worstDeltaE: number;
  /** Mean L* of the actual minus the expected. */
  readonly lightness: number;
  /** Mean chroma of the actual over the expected's (1 when the expected is near grey). */
  readonly chromaRatio: number;
  /** Both pictures have structure enough for the hash to say anything (not flat or near flat). */
  readonly textured: boolean;
}

/** The outcome of `compareFingerprints`: `same`, or a sentence per difference. */
export interface FingerprintComparison {
  readonly same: boolean;
  /** Each difference in words, e.g. `rotated 90° clockwise`, `another picture (hash distance 21 of 44)`. */
  readonly differences: string[];
  readonly measures: FingerprintMeasures;
}

/**
 * Compares the fingerprint of a rendition (`actual`) with what it should show (`expected`: the
 * recorded fingerprint, or another rendition's of the same Image; between two renditions, pass the
 * larger as `expected`). Sizes may differ: only the aspect ratio is compared, to the pixel. `same`
 * is false when the pictures differ in content, orientation or colour; `differences` says how, one
 * sentence each, e.g. `rotated 90° clockwise` (the actual is the expected turned so),
 * `another picture (hash distance 21 of 44)`, `colours differ (mean ΔE 9.5, worst cell 15.7): less
 * saturated (chroma 83%): ...`. A re-encode at another quality, or another size, is the same.
 *
 * @throws FingerprintError when either is not a fingerprint this version reads.
 */
export function compareFingerprints(expected: string, actual: string): FingerprintComparison {
  return compareParsed(parseFingerprint(expected), parseFingerprint(actual));
}

function compareParsed(expected: Fingerprint, actual: Fingerprint): FingerprintComparison {
  const differences: string[] = [];
  const identity = hashDistance(expected, actual, IDENTITY, false);
  const resolved = identity.bits >= MIN_HASH_BITS && identity.fewest >= MIN_SIDE_BITS;
  const textured = resolved && expected.energy >= FLAT_ENERGY && actual.energy >= FLAT_ENERGY;
  let match = { transform: IDENTITY, inverted: false, ...identity };
  // The structure: the same, another picture, or one in between (edited, re-cropped, re-shot).
  let structure: 'same' | 'edited' | 'other' | 'flat' = 'same';
  if (textured) {
    if (identity.distance > SAME_HASH) {
      const best = bestVariant(expected, actual);
      if (best.distance <= VARIANT_HASH && best.distance <= identity.distance / 2) match = best;
      else structure = identity.distance <= OTHER_HASH ? 'edited' : 'other';
    }
  } else if (
    resolved &&
    Math.max(expected.energy, actual.energy) >= 2 * FLAT_ENERGY &&
    Math.min(expected.energy, actual.energy) * 4 <= Math.max(expected.energy, actual.energy)
  ) {
    // One is flat (a plain colour, a smooth gradient), the other is not.
    structure = 'flat';
  } else {
    // Both (near) flat, or too small to say: the colour grid alone tells the orientation.
    const straight = compareColours(expected, actual, IDENTITY);
    if (colourDiffers(straight)) {
      const turned = TRANSFORMS.map((t) => ({ t, colour: compareColours(expected, actual, t) }));
      const best = turned.reduce((a, b) => (b.colour.mean < a.colour.mean ? b : a));
      if (!colourDiffers(best.colour)) match = { ...match, transform: best.t };
    }
  }
  if (match.transform !== IDENTITY) differences.push(match.transform.words);
  if (match.inverted) differences.push('inverted: a negative (e.g. a CMYK picture read with its channels inverted)');
  const measured = `hash distance ${identity.distance} of ${identity.bits}`;
  if (structure === 'edited')
    differences.push(`differs in detail (${measured}): an edited, re-cropped or older version`);
  if (structure === 'other') differences.push(`another picture (${measured})`);
  if (structure === 'flat') {
    differences.push(`another picture (the ${expected.energy < actual.energy ? 'expected' : 'actual'} one is flat)`);
  }
  const colour = compareColours(expected, actual, match.transform);
  if (structure === 'same' && !match.inverted) {
    const words = colourDifference(expected, actual, match.transform, colour);
    if (words) differences.push(words);
  }
  const aspect = aspectDifference(expected, actual, match.transform);
  if (aspect) differences.push(aspect);
  return {
    same: differences.length === 0,
    differences,
    measures: {
      hashDistance: identity.distance,
      hashBits: identity.bits,
      transform: match.transform.name,
      inverted: match.inverted,
      transformDistance: match.distance,
      meanDeltaE: round(colour.mean),
      worstDeltaE: round(colour.worst),
      lightness: round(colour.lightness),
      chromaRatio: round(colour.chromaRatio, 3),
      textured,
    },
  };
}

function aspectDifference(expected: Fingerprint, actual: Fingerprint, t: Transform): string | null {
  const [ew, eh] = t.transpose ? [expected.height, expected.width] : [expected.width, expected.height];
  const difference = Math.abs(Math.log(ew / eh) - Math.log(actual.width / actual.height));
  // A rendition's sides are rounded to whole pixels: half a pixel on each side of each picture.
  const rounding = 0.5 / ew + 0.5 / eh + 0.5 / actual.width + 0.5 / actual.height + ASPECT_SLACK;
  if (difference <= rounding) return null;
  const ratio = (w: number, h: number) => `${round(w / h, 2)} (${w}x${h})`;
  return `aspect ratio differs: ${ratio(actual.width, actual.height)}, expected ${ratio(ew, eh)}`;
}
