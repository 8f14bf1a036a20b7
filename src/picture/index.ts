/**
 * Picture fingerprints: a compact string that says what a rendition shows, so that renditions of one
 * Image can be checked against one another and against what `render` recorded. It holds a perceptual
 * hash (the signs of the 8x8 lowest DCT frequencies of the luma, with which of them are strong) and a
 * 4x4 grid of mean colours in CIELAB, both from one box-average pass over the pixels down to 32x32:
 * the same at any rendition size and after any reasonable lossy encode, different when the picture is
 * another one, edited, rotated, mirrored or colour-converted wrongly. `compareFingerprints` says which.
 *
 * Pure but for `fingerprintFile`: the pixels come from the caller (`fingerprintFile` decodes a file with
 * sharp for it).
 *
 * The parts, one idea each: grid.ts (the pixels down to 32x32), hash.ts (the DCT hash and its
 * distance), orientation.ts (the eight orientations), colour.ts (CIELAB cells), codec.ts (the `f1:`
 * text), compare.ts and colour-compare.ts (the comparison and its words), thresholds.ts (every
 * threshold, with what it was calibrated on), fingerprint.ts (pixels to a fingerprint) and
 * fingerprint-file.ts (a file to one, the only part that imports sharp).
 */
export {
  FINGERPRINT_VERSION,
  type Fingerprint,
  FingerprintError,
  parseFingerprint,
} from './codec.js';
export { compareFingerprints, type FingerprintComparison, type FingerprintMeasures } from './compare.js';
export { fingerprint } from './fingerprint.js';
export { fingerprintFile } from './fingerprint-file.js';
export type { FingerprintTransform } from './orientation.js';
