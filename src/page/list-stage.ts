/** List stage (2.4): the listing summary of a stage, repeating the like-named stage fields. */
import { z } from 'zod';
import { html } from './common.js';
import { imageSchema } from './image.js';

export const listStageSchema = z.strictObject({
  header: z.string(),
  title: z.string(),
  subtitle: z.string(),
  info: html,
  intro: html,
  thumbnail: imageSchema,
  thumbnail_caption: z.string(),
  feature_large_image: imageSchema.nullable(),
  feature_small_image: imageSchema.nullable(),
  feature_cta: z.string().nullable(),
});
