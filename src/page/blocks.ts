/**
 * Blocks of a stage's `body` (2.6): `{type, value, id}` with one value shape per type.
 * `blockSchema` is the strict union of the types the spec shows; `validate.ts` checks each
 * block by its type with `BLOCK_VALUES`, so an unknown type is a warning, not a failure.
 */
import { z } from 'zod';
import { html, onlySeenAsNull, uuid } from './common.js';
import { imageSchema } from './image.js';
import { listStageSchema } from './list-stage.js';
import { articleSummarySchema, exhibitionSummarySchema, newsEntrySchema } from './summaries.js';
import { groupedWorkSchema, workSchema } from './work.js';

const hexColour = z
  .string()
  .regex(/^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/, { error: 'expected a hex colour' });
const ratio = z.string().regex(/^\d+(?:\.\d+)?\/\d+(?:\.\d+)?$/, { error: 'expected an aspect ratio as w/h' });

export const bannerSchema = z.strictObject({
  url: z.string().nullable(),
  banner_type: z.string(),
  background_color: hexColour,
  foreground_color: hexColour,
  logo_color_mobile: z.string().nullable(),
  image: imageSchema.nullable(),
  image_mobile: onlySeenAsNull,
  video_url: z.string().nullable(),
  video_mobile_url: z.string().nullable(),
  duration: onlySeenAsNull,
  header: z.string().nullable(),
  /** May hold `<br/>`. */
  title: z.string(),
  subtitle: z.string(),
  text: html,
  cta: onlySeenAsNull,
  step_down_text_on_mobile: z.boolean(),
});

export const relatedPresentationSchema = z.strictObject({
  id: z.number().int(),
  list_presentation_stage: listStageSchema,
  url: z.string(),
});

/** The value shape of each block type the spec shows. */
export const BLOCK_VALUES = {
  text_image: z.strictObject({
    typeface: z.string(),
    text: html,
    show_press_release: z.boolean().nullable().optional(),
    image: imageSchema,
    image_caption: html,
    image_layout: z.string(),
    layout: z.string(),
  }),
  quarterly_articles: z.strictObject({ title: z.string(), articles: z.array(articleSummarySchema) }),
  news: z.strictObject({
    title: z.string(),
    news_entries: z.array(newsEntrySchema),
    more_link_text: z.string(),
    more_link_url: z.string(),
  }),
  banner: z.strictObject({ banner: bannerSchema, hide_logo: z.boolean() }),
  dek_quote_cta: z.strictObject({
    background_color: z.string(),
    text_color: z.string(),
    borders: z.boolean(),
    layout: z.string(),
    typeface: z.string(),
    text: html,
    attribution: z.string(),
    cta_text: z.string(),
    cta_link: z.string(),
  }),
  text: z.strictObject({ layout: z.string(), typeface: z.string(), text: html, show_press_release: z.boolean() }),
  share_button: z.strictObject({ spacing: z.string(), hashtags: z.array(z.string()) }),
  embed: z.strictObject({ layout: z.string(), embed: html, caption: html }),
  custom_embed: z.strictObject({
    layout: z.string(),
    html: z.string(),
    caption: z.string(),
    aspect_ratio_mobile: ratio,
    aspect_ratio_desktop: ratio,
  }),
  /** One work, or (in some blocks) a group of works each with its own `text`. */
  single_work: z.union([
    z.strictObject({ layout: z.string(), work: workSchema, text: z.string() }),
    z.strictObject({ layout: z.string(), works: z.array(groupedWorkSchema), text: z.string().optional() }),
  ]),
  single_image: z.strictObject({ image: imageSchema, caption: html, layout: z.string() }),
  section_header: z.strictObject({ title: z.string() }),
  related_presentations: z.strictObject({
    title: z.string(),
    large_presentations: z.strictObject({ presentations: z.array(relatedPresentationSchema) }),
  }),
} as const;

export type BlockType = keyof typeof BLOCK_VALUES;
export const BLOCK_TYPES = Object.keys(BLOCK_VALUES) as BlockType[];

/**
 * The block listing exhibitions, whose type name the spec does not show: `title`?, an array
 * of Exhibition summary (its key not shown either), `more_link_text`, `more_link_url`.
 */
export const exhibitionsListValueSchema = z
  .looseObject({ title: z.string().nullable().optional(), more_link_text: z.string(), more_link_url: z.string() })
  .refine((value) => Object.values(value).some((v) => Array.isArray(v)), {
    error: 'expected an array of exhibition summaries',
  });
export const exhibitionsArray = z.array(exhibitionSummarySchema);

const blockOf = <T extends BlockType>(type: T) =>
  z.strictObject({ type: z.literal(type), value: BLOCK_VALUES[type], id: uuid });

/** A block of one of the types the spec shows. */
export const blockSchema = z.discriminatedUnion('type', [
  blockOf('text_image'),
  blockOf('quarterly_articles'),
  blockOf('news'),
  blockOf('banner'),
  blockOf('dek_quote_cta'),
  blockOf('text'),
  blockOf('share_button'),
  blockOf('embed'),
  blockOf('custom_embed'),
  blockOf('single_work'),
  blockOf('single_image'),
  blockOf('section_header'),
  blockOf('related_presentations'),
]);

/** The envelope every block has, whatever its type; used to validate blocks one by one. */
export const anyBlockSchema = z.strictObject({ type: z.string(), value: z.record(z.string(), z.unknown()), id: uuid });
