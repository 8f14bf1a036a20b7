/** Page meta (2.2), Parent summary (2.2) and Social/SEO meta (2.12). */
import { z } from 'zod';
import { absoluteUrl, onlySeenAsNull, pageType, timestamp } from './common.js';

export const parentSummarySchema = z.strictObject({
  id: z.number().int(),
  meta: z.strictObject({ type: pageType, detail_url: absoluteUrl, html_url: z.string().nullable() }),
  title: z.string(),
});

export const pageMetaSchema = z.strictObject({
  type: pageType,
  /** Absolute URL of this page's endpoint, without query string. */
  detail_url: absoluteUrl,
  /** Public web address; null for category pages. */
  html_url: absoluteUrl.nullable(),
  slug: z.string(),
  show_in_menus: z.boolean(),
  seo_title: z.string(),
  search_description: z.string(),
  /** Null when the page is not published. */
  first_published_at: timestamp.nullable(),
  alias_of: onlySeenAsNull,
  parent: parentSummarySchema,
});

export const socialMetaSchema = z.strictObject({
  page_title: z.string(),
  noindex: z.boolean(),
  canonical_url: z.string(),
  description: z.string(),
  site_name: z.string(),
  og_type: z.string(),
  thumb: z.strictObject({ url: z.string(), width: z.number().int(), height: z.number().int() }),
  published_time: timestamp,
  publisher: z.string(),
  social_card: z.string(),
  social_site: z.string(),
  social_admins: z.string(),
  hashtags: z.array(z.string()).nullable(),
});
