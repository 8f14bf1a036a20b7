/**
 * Every threshold of the picture fingerprints, in one table. STRONG_SHARE is part of the `f1` format
 * (it decides which bits a fingerprint stores: changing it changes the fingerprints written, a new
 * FINGERPRINT_VERSION); the others decide only how two fingerprints are compared (compare.ts,
 * colour-compare.ts and hash.ts's best orientation).
 */

/*
 * Thresholds. Calibrated on the 7 samples and on 39 pictures from MATE's backgrounds (photographs,
 * the samples' sources among them, stripes, smooth and flat gradients, noise, a plain colour, a ramp
 * with an XOR texture, 24 MP mosaics), at every rendition size in JPEG q30-q95 (and mozjpeg), WebP
 * q30-q90, AVIF q30-q70, PNG, PNG palette and GIF, each against the unencoded renditions and all
 * against one another, and on the files `render` writes from the samples in each format: about
 * 87,000 same-picture pairs, none a finding; and on 5,900 pairs of different pictures. Worst
 * same-picture values, then the closest other picture or seeded defect:
 * - hash distance (pictures with structure): 0, against 11 for another picture (14 on the samples);
 *   the best turn or mirror of another picture 7; a real turn or mirror 0, a negative 0, a CMYK
 *   picture read inverted 0-6.
 * - mean ΔE 3.5 (a plain colour in JPEG q30 against WebP q50; photographs 1.3), worst cell 3.5
 *   (photographs 3.3, GIF); a wide-gamut picture read as sRGB: mean 5.5-10, chroma 82-88%, on
 *   the colourful samples (the near-grey storm: mean 1.5, 92%, not caught).
 * - |ln chroma ratio| 0.09 (the plain colour; photographs 0.035), |ΔL*| 1.3.
 */
export const THRESHOLDS = {
  /** A strong coefficient is at least this share of the RMS of all 63. */
  STRONG_SHARE: 0.1,
  /** Below this AC energy a picture is (near) flat and its hash bits are noise (flat: 0-3, photographs 29-280). */
  FLAT_ENERGY: 8,
  /** Fewer strong coefficients than this to compare (a picture a few pixels tall or wide): the hash says nothing. */
  MIN_HASH_BITS: 20,
  /** Nor with fewer than this in either picture (a ramp: its energy in a few coefficients). */
  MIN_SIDE_BITS: 12,
  /** At most this hash distance: the same structure. */
  SAME_HASH: 6,
  /** At most this under a turn, a mirror or an inversion (and half the straight distance): that is what was done. */
  VARIANT_HASH: 8,
  /** Above this: another picture; between SAME_HASH and this, an edited or re-cropped one. */
  OTHER_HASH: 12,
  /** Per-cell ΔE: the mean and the worst cell above which colours differ. */
  MEAN_DELTA_E: 5,
  WORST_DELTA_E: 7,
  /** |ln(chroma ratio)| above which the actual is more or less saturated, when the expected has colour. */
  CHROMA_LOG_RATIO: 0.15,
  MIN_CHROMA: 3,
  CHROMA_SLACK: 3,
  /** Mean |ΔL*| above which the actual is lighter or darker. */
  LIGHTNESS: 3,
  /** Once colours differ, the smaller changes that still say why: in chroma and in lightness. */
  CAUSE_CHROMA_LOG_RATIO: 0.08,
  CAUSE_LIGHTNESS: 2,
  /** Once colours differ, a mean chroma under this in the actual (the expected's MIN_CHROMA or more): greyscale. */
  GREYSCALE_CHROMA: 1.5,
  /** |ln| of the aspect ratios' difference allowed beyond the rounding of the sides to whole pixels. */
  ASPECT_SLACK: 0.002,
} as const;
