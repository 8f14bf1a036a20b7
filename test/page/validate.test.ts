import { describe, expect, it } from 'vitest';
import { BLOCK_TYPES } from '../../src/page/blocks.js';
import { pageJsonSchema } from '../../src/page/schema.js';
import { PAGE_RULES, validatePage } from '../../src/page/validate.js';
import { findImages } from '../../src/page/walk.js';
import { IMAGE_RULES } from '../../src/renditions/verify.js';
import { loadPage, loadVariants } from './variants.js';

const valid = () => loadPage('presentation-every-block.json') as Record<string, unknown>;
const variants = loadVariants();
const key = (p: { severity: string; rule: string; path: string }) => `${p.severity} ${p.rule} ${p.path}`;

describe('the valid sample page', () => {
  it('uses every block type the spec shows and reports nothing', () => {
    const page = valid();
    const types = new Set((page.presentation_stage as { body: Array<{ type: string }> }).body.map((b) => b.type));
    expect([...types].sort()).toEqual([...BLOCK_TYPES].sort());
    const result = validatePage(page);
    expect(result.problems).toEqual([]);
    expect(result.page).toBe(page);
  });

  it('finds images everywhere: stage, list stage, blocks, works, overlays, inquiry, banner, summaries, related', () => {
    const paths = [...findImages(valid())].map((found) => found.path.join('.'));
    // stage 2, list stage 1, text_image 1, single_image 1, work 3 (image, artwork, overlay), works 2x3,
    // banner 1, article 1, news 1, related 1
    expect(paths).toHaveLength(18);
    for (const where of [
      'presentation_stage.thumbnail',
      'list_presentation_stage.thumbnail',
      'overlay',
      'artwork_image',
      'banner.image',
      'contents_image',
      'news_entries',
      'list_presentation_stage',
      'works',
    ]) {
      expect(
        paths.some((p) => p.includes(where)),
        where,
      ).toBe(true);
    }
  });

  it('is valid with format=api when every nested url carries it, and meta.detail_url does not', () => {
    const text = JSON.stringify(valid()).replace(
      /"(http:\/\/localhost:8000\/api\/(?:quarterly|gallery)\/[^"]+\/)"/g,
      '"$1?format=api"',
    );
    expect(text.match(/\?format=api/g)?.length).toBe(3);
    expect(validatePage(JSON.parse(text), { formatApi: true }).problems).toEqual([]);
    expect(validatePage(JSON.parse(text), { formatApi: false }).problems.map((p) => p.rule)).toEqual([
      'format-api-url',
      'format-api-url',
      'format-api-url',
    ]);
  });

  it('checks meta.detail_url against the base URL when it is known', () => {
    expect(validatePage(valid(), { baseUrl: 'http://localhost:8000/' }).problems).toEqual([]);
    expect(validatePage(valid(), { baseUrl: 'http://127.0.0.1:9000' }).problems).toEqual([
      expect.objectContaining({ path: '$.meta.detail_url', rule: 'detail-url', severity: 'error' }),
    ]);
  });
});

describe('variants with one known defect each', () => {
  it.each(variants.map((v) => [v.name, v] as const))('%s', (_name, variant) => {
    const result = validatePage(variant.page, variant.options);
    expect(result.problems.map(key).sort()).toEqual(variant.expect.map(key).sort());
    expect(result.page === null).toBe(variant.expect.some((p) => p.severity === 'error'));
  });

  it('cover every rule, each found at least once', () => {
    const covered = new Set(variants.flatMap((v) => v.expect.map((p) => p.rule)));
    for (const rule of [...Object.keys(PAGE_RULES), ...Object.keys(IMAGE_RULES)])
      expect(covered.has(rule), rule).toBe(true);
    for (const v of variants) expect(v.expect.length, v.name).toBeGreaterThan(0);
  });
});

describe('bad data never crashes', () => {
  it.each([
    null,
    [],
    'page',
    42,
    {},
    { presentation_stage: { body: [null, 5, { type: 3 }, { type: 'text', value: null, id: 'x' }] } },
  ])('%j', (json) => {
    const result = validatePage(json);
    expect(result.page).toBeNull();
    expect(result.problems.length).toBeGreaterThan(0);
    for (const problem of result.problems) expect(problem.path.startsWith('$')).toBe(true);
  });
});

describe('JSON Schema', () => {
  it('describes the Page with every block type', () => {
    const schema = pageJsonSchema() as { $schema: string; required: string[]; properties: Record<string, unknown> };
    expect(schema.$schema).toContain('2020-12');
    expect(schema.required).toEqual(
      expect.arrayContaining(['id', 'meta', 'title', 'date', 'presentation_stage', 'list_presentation_stage']),
    );
    const text = JSON.stringify(schema);
    for (const type of BLOCK_TYPES) expect(text).toContain(`"const":"${type}"`);
  });
});
