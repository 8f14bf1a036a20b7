/**
 * Image (spec 2.5). The rendition rules themselves (boxes, fit, srcset, names) are checked
 * by `renditions/verify.ts`, the one home of those rules; this is only the shape.
 */
import { z } from 'zod';
import { RENDITION_KEYS } from '../renditions/rules.js';
import { html } from './common.js';

export const renditionSize = z.strictObject({
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  url: z.string().min(1),
});

export const imageSchema = z.strictObject({
  /** Relative size value, not a pixel count. */
  width: z.number().positive(),
  height: z.number().positive(),
  alt_text: z.string().nullable(),
  /** HTML credit line; present on some images. */
  credit: html.nullable().optional(),
  sizes: z.strictObject(
    Object.fromEntries(RENDITION_KEYS.map((key) => [key, renditionSize])) as Record<
      (typeof RENDITION_KEYS)[number],
      typeof renditionSize
    >,
  ),
  /** `<url> <width>w` entries, xs..xl; absent on some nested images. */
  srcset: z.string().optional(),
});
