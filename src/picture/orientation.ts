/**
 * The eight orientations a rendition may have against what it should show: the identity, the
 * mirrors, the turns and their combinations. The hash (hash.ts) and the colour grid
 * (colour-compare.ts) are each compared under every one.
 */
import type { Fingerprint } from './codec.js';

/** How the actual picture relates to the expected one geometrically. */
export type FingerprintTransform =
  | 'identity'
  | 'mirrored'
  | 'flipped'
  | 'rotated180'
  | 'transposed'
  | 'rotated90'
  | 'rotated270'
  | 'transversed';

/**
 * The eight orientations, as what was done to the expected picture to give the actual one. On the
 * DCT: a transpose swaps u and v; mirroring (after it) negates odd u, flipping negates odd v.
 */
export interface Transform {
  readonly name: FingerprintTransform;
  readonly words: string;
  readonly transpose: boolean;
  readonly mirror: boolean;
  readonly flip: boolean;
}

export const TRANSFORMS: readonly Transform[] = [
  { name: 'identity', words: 'same orientation', transpose: false, mirror: false, flip: false },
  { name: 'mirrored', words: 'mirrored (flipped left to right)', transpose: false, mirror: true, flip: false },
  {
    name: 'flipped',
    words: 'flipped upside down (mirrored top to bottom)',
    transpose: false,
    mirror: false,
    flip: true,
  },
  { name: 'rotated180', words: 'rotated 180°', transpose: false, mirror: true, flip: true },
  { name: 'transposed', words: 'transposed (mirrored and rotated 90°)', transpose: true, mirror: false, flip: false },
  { name: 'rotated90', words: 'rotated 90° clockwise', transpose: true, mirror: true, flip: false },
  { name: 'rotated270', words: 'rotated 90° anticlockwise', transpose: true, mirror: false, flip: true },
  { name: 'transversed', words: 'transversed (mirrored and rotated 270°)', transpose: true, mirror: true, flip: true },
];

export const IDENTITY = TRANSFORMS[0]!;

/** The width and height both pictures have, in the actual one's orientation (the expected turned by `t`). */
export function commonSize(expected: Fingerprint, actual: Fingerprint, t: Transform) {
  const [width, height] = t.transpose ? [expected.height, expected.width] : [expected.width, expected.height];
  return { width: Math.min(width, actual.width), height: Math.min(height, actual.height) };
}
