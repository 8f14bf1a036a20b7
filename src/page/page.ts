/** Page (2.1): the response of `GET /api/v2/pages/{id}/`. */
import { z } from 'zod';
import { anyBlockSchema, blockSchema } from './blocks.js';
import { isoDate } from './common.js';
import { listStageSchema } from './list-stage.js';
import { pageMetaSchema } from './meta.js';
import { presentationStageSchemaWith } from './stage.js';

function pageSchemaWith<B extends z.ZodType>(block: B) {
  return z.strictObject({
    id: z.number().int(),
    meta: pageMetaSchema,
    title: z.string(),
    date: isoDate,
    /** Path of the earlier website address; null when none. */
    legacy_url: z.string().nullable(),
    presentation_stage: presentationStageSchemaWith(block),
    list_presentation_stage: listStageSchema,
    child_of_collecting_home: z.boolean(),
    press_release_line: z.string().nullable(),
  });
}

/** The Page with blocks of the types the spec shows (for types and the JSON Schema). */
export const pageSchema = pageSchemaWith(blockSchema);

/** The same, with any block type: `validate.ts` checks each block by its own type. */
export const pageEnvelopeSchema = pageSchemaWith(anyBlockSchema);

export const presentationStageSchema = presentationStageSchemaWith(blockSchema);
