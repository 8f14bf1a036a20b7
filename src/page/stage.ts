/** Presentation stage (2.3). */
import { z } from 'zod';
import { html, timestamp } from './common.js';
import { imageSchema } from './image.js';
import { generalInquirySchema } from './work.js';

/** The stage, with its blocks given by `block` (the strict union, or a lenient shape for validation). */
export function presentationStageSchemaWith<B extends z.ZodType>(block: B) {
  return z.strictObject({
    /** Content blocks, in order. */
    body: z.array(block),
    thumbnail: imageSchema,
    feature_large_image: imageSchema.nullable(),
    feature_small_image: imageSchema.nullable(),
    thumbnail_caption: z.string(),
    subtitle: z.string(),
    inquiry_form_data: generalInquirySchema,
    info: html,
    intro: html,
    created_at: timestamp,
    updated_at: timestamp,
    stage: z.string(),
    header: z.string(),
    title: z.string(),
    feature_cta: z.string().nullable(),
    /** Empty, or one or more tags starting with `#`. */
    hashtags: z.string(),
    meta_description: z.string(),
    title_tag: z.string().nullable(),
  });
}
