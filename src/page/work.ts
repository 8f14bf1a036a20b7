/** Inquiry form data (2.8) and Work (2.7). */
import { z } from 'zod';
import { html, onlySeenAsNull, timestamp, uuid } from './common.js';
import { imageSchema } from './image.js';

const inquiryCommon = {
  inquiry_form_title_html: html,
  /** Pre-filled message text. */
  message: z.string(),
  subscribe_label: z.string(),
  /** Identifier of a newsletter interest group. */
  newsletter_interests: z.string(),
  /** Comma-separated tag identifiers. */
  newsletter_tags: z.string(),
};

/** Page-level inquiry data. */
export const generalInquirySchema = z.strictObject({ inquiry_type: z.literal('collecting_general'), ...inquiryCommon });

/** Work-level inquiry data, with the artwork's label and image. */
export const artworkInquirySchema = z.strictObject({
  inquiry_type: z.literal('collecting_artwork'),
  ...inquiryCommon,
  work_label: z.string(),
  mosaic_work_id: z.string(),
  artwork_label_html: html,
  artwork_image: imageSchema,
});

export const inquiryFormDataSchema = z.discriminatedUnion('inquiry_type', [generalInquirySchema, artworkInquirySchema]);

const workFields = {
  image: imageSchema,
  inquiry_form_data: artworkInquirySchema,
  overlay: z.array(
    z.strictObject({ type: z.literal('image'), value: z.strictObject({ image: imageSchema }), id: uuid }),
  ),
  title: html,
  caption: html,
  artist: z.string(),
  slug: z.string(),
  price: onlySeenAsNull,
  /** Catalogue identifier. */
  mosaic_work_id: z.string(),
  created: timestamp,
  modified: timestamp,
};

export const workSchema = z.strictObject(workFields);

/** An element of a group of works inside one block value: the Work shape plus `text`. */
export const groupedWorkSchema = z.strictObject({ ...workFields, text: z.string() });
