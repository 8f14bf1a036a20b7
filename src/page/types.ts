/** TypeScript types of the Content API resources, inferred from the zod model. */
import type { z } from 'zod';
import type { bannerSchema, blockSchema, relatedPresentationSchema } from './blocks.js';
import type { imageSchema, renditionSize } from './image.js';
import type { listStageSchema } from './list-stage.js';
import type { pageMetaSchema, parentSummarySchema, socialMetaSchema } from './meta.js';
import type { pageSchema, presentationStageSchema } from './page.js';
import type {
  articleSummarySchema,
  exhibitionSummarySchema,
  newsCategorySchema,
  newsEntrySchema,
} from './summaries.js';
import type {
  artworkInquirySchema,
  generalInquirySchema,
  groupedWorkSchema,
  inquiryFormDataSchema,
  workSchema,
} from './work.js';

export type Page = z.infer<typeof pageSchema>;
export type PageMeta = z.infer<typeof pageMetaSchema>;
export type ParentSummary = z.infer<typeof parentSummarySchema>;
export type PresentationStage = z.infer<typeof presentationStageSchema>;
export type ListStage = z.infer<typeof listStageSchema>;
export type Image = z.infer<typeof imageSchema>;
export type RenditionSizeEntry = z.infer<typeof renditionSize>;
export type Block = z.infer<typeof blockSchema>;
export type Banner = z.infer<typeof bannerSchema>;
export type RelatedPresentation = z.infer<typeof relatedPresentationSchema>;
export type Work = z.infer<typeof workSchema>;
export type GroupedWork = z.infer<typeof groupedWorkSchema>;
export type InquiryFormData = z.infer<typeof inquiryFormDataSchema>;
export type GeneralInquiry = z.infer<typeof generalInquirySchema>;
export type ArtworkInquiry = z.infer<typeof artworkInquirySchema>;
export type ArticleSummary = z.infer<typeof articleSummarySchema>;
export type ExhibitionSummary = z.infer<typeof exhibitionSummarySchema>;
export type NewsEntry = z.infer<typeof newsEntrySchema>;
export type NewsCategory = z.infer<typeof newsCategorySchema>;
export type SocialMeta = z.infer<typeof socialMetaSchema>;
