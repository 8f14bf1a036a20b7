/**
 * `schemas`, the page model whole as `content-api/model` exports it: every part is reachable by
 * name, is the very schema object inside the Page (not a copy that could drift) and the one
 * `validatePage` checks with, and the whole parses the sample page.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import {
  BLOCK_TYPES,
  type Block,
  findImages,
  type Image,
  type Page,
  schemas,
  validatePage,
} from '../../src/api/model.js';
import { BLOCK_VALUES, exhibitionsArray } from '../../src/page/blocks.js';
import { pageEnvelopeSchema } from '../../src/page/page.js';
import { loadPage } from './variants.js';

const sample = () => loadPage('presentation-every-block.json') as Page;

const isSchema = (value: unknown): value is z.ZodType => typeof value === 'object' && value !== null && '_zod' in value;

/** Every schema reachable from `roots` through zod's definitions: shapes, elements, options, inner types. */
function reachable(...roots: z.ZodType[]): Set<z.ZodType> {
  const seen = new Set<z.ZodType>();
  const visit = (value: unknown): void => {
    if (isSchema(value)) {
      if (seen.has(value)) return;
      seen.add(value);
      visit(Object.values(value._zod.def));
    } else if (Array.isArray(value)) {
      for (const item of value) visit(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const item of Object.values(value)) visit(item); // an object's shape
    }
  };
  for (const root of roots) visit(root);
  return seen;
}

/** The parts by name, but `blocks`, the block types' schemas by name. */
const parts = Object.entries(schemas).filter(([name]) => name !== 'blocks') as Array<[string, z.ZodType]>;
const blocks = Object.entries(schemas.blocks);
/** The parts the Page does not hold itself, and why. */
const NOT_IN_PAGE: Record<string, string> = {
  inquiryFormData: 'a union of two parts the Page holds each in its place',
  exhibitionSummary: "the spec does not show the exhibitions list's block type; validatePage checks it with this",
};

describe('schemas: the page model whole', () => {
  it('names every part of the Page by name, each the schema object inside it', () => {
    const inPage = reachable(schemas.page);
    const missing = parts.filter(([name, schema]) => !(name in NOT_IN_PAGE) && !inPage.has(schema));
    expect(missing.map(([name]) => name)).toEqual([]);
    expect(schemas.page.shape.presentation_stage).toBe(schemas.presentationStage);
    expect(schemas.presentationStage.shape.thumbnail).toBe(schemas.image);
    expect(schemas.image.shape.sizes.shape.xl).toBe(schemas.renditionSize);
    expect(schemas.work.shape.inquiry_form_data).toBe(schemas.artworkInquiry);
    expect(schemas.inquiryFormData.options).toEqual([schemas.generalInquiry, schemas.artworkInquiry]);
    expect(schemas.inquiryFormData.options[0]).toBe(schemas.generalInquiry);
    expect(schemas.inquiryFormData.options[1]).toBe(schemas.artworkInquiry);
  });

  it('names each block type, the members of the union of blocks themselves', () => {
    expect(Object.keys(schemas.blocks)).toEqual(BLOCK_TYPES);
    expect(Object.values(schemas.blocks)).toEqual(schemas.block.options);
    for (const [type, block] of blocks) {
      expect(schemas.block.options).toContain(block);
      expect(block.shape.type.value).toBe(type);
    }
    expect(schemas.presentationStage.shape.body.element).toBe(schemas.block);
    expect(Object.isFrozen(schemas.blocks)).toBe(true);
  });

  it('is what validatePage checks with: the same objects, but the Page, its stage and the blocks around values', () => {
    const checked = reachable(pageEnvelopeSchema, ...Object.values(BLOCK_VALUES), exhibitionsArray);
    const own = ['page', 'presentationStage', 'block', 'inquiryFormData'];
    const missing = parts.filter(([name, schema]) => !own.includes(name) && !checked.has(schema));
    expect(missing.map(([name]) => name)).toEqual([]);
    // Each block's value is the one checked by its type.
    for (const [type, block] of blocks) expect(block.shape.value).toBe(BLOCK_VALUES[type as keyof typeof BLOCK_VALUES]);
    // The Page and its stage are the validator's but for the blocks: the same parts at the same keys.
    const partsAt = (object: z.ZodObject) =>
      Object.entries(object.shape).filter(([, schema]) => parts.some(([, part]) => part === schema));
    expect(partsAt(pageEnvelopeSchema)).toEqual(partsAt(schemas.page).filter(([key]) => key !== 'presentation_stage'));
    expect(partsAt(pageEnvelopeSchema).map(([key]) => key)).toEqual(['meta', 'list_presentation_stage']);
    expect(partsAt(pageEnvelopeSchema.shape.presentation_stage)).toEqual(partsAt(schemas.presentationStage));
    expect(partsAt(schemas.presentationStage).map(([key]) => key)).toEqual(['thumbnail', 'inquiry_form_data']);
  });

  it('parses the sample page whole, and each of its blocks and images through its part', () => {
    const page = sample();
    expect(validatePage(page).problems).toEqual([]);
    const parsed = schemas.page.safeParse(page);
    expect(parsed.error?.issues).toBeUndefined();
    expect(parsed.data).toEqual(page);
    const body = page.presentation_stage.body;
    expect(new Set(body.map((block) => block.type)).size).toBe(BLOCK_TYPES.length);
    for (const block of body) expect(schemas.blocks[block.type].safeParse(block).success).toBe(true);
    const images = [...findImages(page)];
    expect(images).toHaveLength(18);
    for (const { image } of images) expect(schemas.image.safeParse(image).success).toBe(true);
    expect(schemas.pageMeta.parse(page.meta)).toEqual(page.meta);
  });

  it('fails where validatePage fails, at the same path; only a block type the spec does not show differs', () => {
    const page = structuredClone(sample()) as unknown as { presentation_stage: Record<string, unknown> };
    const thumbnail = page.presentation_stage.thumbnail as { sizes: Record<string, unknown> };
    delete thumbnail.sizes.md;
    const paths = (result: z.ZodSafeParseResult<unknown>) => result.error?.issues.map((issue) => issue.path.join('.'));
    expect(paths(schemas.page.safeParse(page))).toEqual(['presentation_stage.thumbnail.sizes.md']);
    expect(paths(schemas.image.safeParse(thumbnail))).toEqual(['sizes.md']);
    const errors = validatePage(page).problems.filter((problem) => problem.severity === 'error');
    expect(errors.map((problem) => [problem.rule, problem.path])).toContainEqual([
      'schema',
      '$.presentation_stage.thumbnail.sizes.md',
    ]);

    const unknown = structuredClone(sample()) as unknown as { presentation_stage: { body: Array<{ type: string }> } };
    unknown.presentation_stage.body[0]!.type = 'carousel';
    expect(paths(schemas.page.safeParse(unknown))).toEqual(['presentation_stage.body.0.type']);
    expect(validatePage(unknown).problems.map((problem) => [problem.severity, problem.rule])).toEqual([
      ['warning', 'unknown-block-type'],
    ]);
  });

  it('types: each part infers the type of the same name', () => {
    expectTypeOf<z.infer<typeof schemas.page>>().toEqualTypeOf<Page>();
    expectTypeOf<z.infer<typeof schemas.image>>().toEqualTypeOf<Image>();
    expectTypeOf<z.infer<typeof schemas.blocks.text_image>>().toEqualTypeOf<Extract<Block, { type: 'text_image' }>>();
  });
});
