/**
 * The page model whole, one namespace (`content-api/model` exports it as `schemas`, as zod itself is
 * `import * as z`): the Page and every part of it by name. Each part is the very schema object the
 * Page holds (`schemas.image` is the schema of every Image inside `schemas.page`) and the one
 * `validatePage` checks with. Only the Page, its stage and `block` differ from what `validatePage`
 * runs, which takes any block type and checks each block's value by its type
 * (`blocks[type].shape.value`), so that a type the spec does not show is a warning, not a failure.
 * zod's `.shape` reaches the same parts by key; these name them, wherever they sit.
 */
// biome-ignore-all assist/source/organizeImports: the parts in the order of the spec's section 2
import type { z } from 'zod';
import { BLOCK_TYPES, type BlockType, blockSchema } from './blocks.js';

/** Page (2.1), with blocks of the types the spec shows: the whole; Presentation stage (2.3). */
export { pageSchema as page, presentationStageSchema as presentationStage } from './page.js';
/** Page meta and Parent summary (2.2, `meta.parent`), Social/SEO meta (2.12). */
export {
  pageMetaSchema as pageMeta,
  parentSummarySchema as parentSummary,
  socialMetaSchema as socialMeta,
} from './meta.js';
/** List stage (2.4). */
export { listStageSchema as listStage } from './list-stage.js';
/** Image (2.5), the shape only (the rendition rules are `verifyImage`'s), and one entry of its `sizes`. */
export { imageSchema as image, renditionSize } from './image.js';
/**
 * A block (2.6) of any type the spec shows (the union of `blocks` below, on `type`); the `banner`
 * block's `value.banner`; a presentation the `related_presentations` block lists.
 */
export {
  blockSchema as block,
  bannerSchema as banner,
  relatedPresentationSchema as relatedPresentation,
} from './blocks.js';
/**
 * Work (2.7) and a work of a group inside one block (plus `text`); Inquiry form data (2.8) of
 * either kind, on `inquiry_type`, and each kind (`collecting_general`, `collecting_artwork`: the
 * Page holds each in its place, never the union).
 */
export {
  workSchema as work,
  groupedWorkSchema as groupedWork,
  inquiryFormDataSchema as inquiryFormData,
  generalInquirySchema as generalInquiry,
  artworkInquirySchema as artworkInquiry,
} from './work.js';
/**
 * Article summary (2.9), Exhibition summary (2.10), News entry and News category (2.11). The block
 * listing exhibitions has a type the spec does not show, so `page` has no place for it;
 * `validatePage` checks such a block's list with `exhibitionSummary`.
 */
export {
  articleSummarySchema as articleSummary,
  exhibitionSummarySchema as exhibitionSummary,
  newsEntrySchema as newsEntry,
  newsCategorySchema as newsCategory,
} from './summaries.js';

/** The member of `blockSchema`'s union whose `type` is `T`: `{ type: T, value, id }`. */
type BlockSchemaOf<T extends BlockType> = Extract<
  (typeof blockSchema.options)[number],
  { shape: { type: z.ZodLiteral<T> } }
>;

/**
 * Each block type's schema by its name (`blocks.text_image`, the names of `BLOCK_TYPES`): the
 * members of `block`'s union themselves, whose `.shape.value` is the value `validatePage` checks.
 */
export const blocks: { readonly [T in BlockType]: BlockSchemaOf<T> } = Object.freeze(
  Object.fromEntries(
    BLOCK_TYPES.map((type) => [type, blockSchema.options.find((block) => block.shape.type.value === type)]),
  ) as { [T in BlockType]: BlockSchemaOf<T> },
);
