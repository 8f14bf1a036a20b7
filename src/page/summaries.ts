/** Article summary (2.9), Exhibition summary (2.10), News entry and News category (2.11). */
import { z } from 'zod';
import { html, isoDate, onlySeenAsNull } from './common.js';
import { imageSchema } from './image.js';
import { socialMetaSchema } from './meta.js';

/** Fields every summary carries that are shown only as null. */
const listingNulls = {
  admin_url: onlySeenAsNull,
  publish_time: onlySeenAsNull,
  publish_time_display: onlySeenAsNull,
  status_display: onlySeenAsNull,
  class_name: onlySeenAsNull,
};

export const articleSummarySchema = z.strictObject({
  absolute_url: z.string(),
  ...listingNulls,
  id: z.number().int(),
  column: z.string().nullable(),
  contents_image: imageSchema,
  contents_intro: html,
  date: isoDate,
  slug: z.string(),
  title: z.string(),
  /** URL of the article resource: /api/quarterly/articles/<yyyy>/<mm>/<dd>/<slug>/ */
  url: z.string(),
});

export const exhibitionSummarySchema = z.strictObject({
  absolute_url: z.string(),
  ...listingNulls,
  id: z.number().int(),
  /** URL of the exhibition resource: /api/gallery/exhibitions/<yyyy>/<slug>/ */
  url: z.string(),
  title: z.string(),
  subtitle: z.string(),
  slug: z.string(),
  date_start: isoDate,
  date_end: isoDate,
  date_extended: isoDate.nullable(),
  /** Equals date_extended when set, otherwise date_end. */
  date_end_effective: isoDate,
  date_text_override: z.string().nullable(),
  location_str: z.string(),
  full_title: z.string(),
  full_title_location: z.string(),
  full_title_location_dates: z.string(),
  dates_display: z.string(),
  is_current: z.boolean(),
  /** True exactly when date_extended is set. */
  is_extended: z.boolean(),
  opening_soon: z.boolean(),
  opening_reception: z.string(),
  reception_date: isoDate.nullable(),
  thumbnail: imageSchema,
});

export const newsCategorySchema = z.strictObject({
  /** URL of the category resource: /api/gallery/newscategories/<slug>/ */
  url: z.string(),
  title: z.string(),
  slug: z.string(),
  order: z.number().int(),
  meta_description: z.string(),
  absolute_url: z.string(),
  meta: socialMetaSchema,
});

export const newsEntrySchema = z.strictObject({
  absolute_url: z.string(),
  ...listingNulls,
  id: z.number().int(),
  /** URL of the news entry resource: /api/gallery/newsentries/<yyyy>/<mm>/<dd>/<slug>/ */
  url: z.string(),
  header: z.string(),
  title: z.string(),
  title_bold: z.boolean(),
  subtitle: z.string(),
  subtitle_bold: z.boolean(),
  slug: z.string(),
  intro: html,
  thumbnail: imageSchema,
  play_button: z.boolean(),
  page_intro: z.string(),
  page_thumbnail: imageSchema.nullable(),
  media_code: z.string().nullable(),
  media_caption: z.string(),
  category: newsCategorySchema,
  featured: z.boolean(),
  order: z.number().int().nullable(),
  order_by: z.string(),
  date: isoDate,
  full_title: z.string(),
  meta: socialMetaSchema,
  press_release_line: z.string().nullable(),
});
