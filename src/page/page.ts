/** Page (2.1): the response of `GET /api/v2/pages/{id}/`. */
import { z } from 'zod';
import { anyBlockSchema, blockSchema } from './blocks.js';
import { isoDate } from './common.js';
import { listStageSchema } from './list-stage.js';
import { pageMetaSchema } from './meta.js';
import { presentationStageSchemaWith } from './stage.js';

/** The Page around a Presentation stage: the one of the spec's blocks, or the lenient one for validation. */
function pageSchemaWith<S extends z.ZodType>(stage: S) {
  return z.strictObject({
    id: z.number().int(),
    meta: pageMetaSchema,
    title: z.string(),
    date: isoDate,
    /** Path of the earlier website address; null when none. */
    legacy_url: z.string().nullable(),
    presentation_stage: stage,
    list_presentation_stage: listStageSchema,
    child_of_collecting_home: z.boolean(),
    press_release_line: z.string().nullable(),
  });
}

export const presentationStageSchema = presentationStageSchemaWith(blockSchema);

/** The Page with blocks of the types the spec shows (for types and the JSON Schema); its stage is the one above. */
export const pageSchema = pageSchemaWith(presentationStageSchema);

/** The same, with any block type: `validate.ts` checks each block by its own type. */
export const pageEnvelopeSchema = pageSchemaWith(presentationStageSchemaWith(anyBlockSchema));
