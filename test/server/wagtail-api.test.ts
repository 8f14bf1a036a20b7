/**
 * Conformance with Wagtail API v2's pages endpoint: the queries of Wagtail's own tests
 * (`wagtail/api/v2/tests/test_pages.py`, and `tests.py` for the `fields` parser) that a content
 * folder can express, run against `serve` over the page tree of Wagtail's demosite fixture
 * (test/fixtures/wagtail-site.ts), with the ids, keys and messages Wagtail's tests expect.
 *
 * What the folder cannot express is left out: images, tags, child relations (`feed_image`,
 * `tags`, `related_links`, `carousel_items`), other sites (`site=`), locales and translations,
 * view restrictions, settings Wagtail's tests override (`WAGTAILAPI_SEARCH_ENABLED`). Page types
 * are `site.<Model>` here where Wagtail's are `demosite.<Model>`, and `first_published_at` is one
 * fixed timestamp (null in the fixture). Bodies are compact JSON, so parsed values are compared.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Content, loadContent } from '../../src/server/content.js';
import { createContentServer, type ServerOptions } from '../../src/server/server.js';
import { tempDir } from '../fixtures/tmp.js';
import { PUBLISHED_AT, wagtailSite } from '../fixtures/wagtail-site.js';

type Params = Record<string, string>;

/** DRF's `Allow` (`APIView.default_response_headers`), on every answer of the endpoint. */
const ALLOW = 'GET, HEAD, OPTIONS';

interface Answer {
  status: number;
  contentType: string | null;
  allow: string | null;
  location: string | null;
  /** The parsed JSON body; the text when the body is not JSON. */
  body: any;
}

const servers: Server[] = [];
let content: Content;
let base: string;

async function start(options: ServerOptions = {}, from = content): Promise<string> {
  const server = createContentServer(from, options);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  const dir = await tempDir();
  await wagtailSite(dir);
  content = await loadContent(dir);
  base = await start();
});
afterAll(() => Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))));

/** GET `path` with `params` (encoded as Django's test client encodes them), not following a redirect. */
async function get(urlPath: string, params: Params = {}, from = base): Promise<Answer> {
  const query = new URLSearchParams(params).toString();
  const res = await fetch(`${from}${urlPath}${query ? `?${query}` : ''}`, { redirect: 'manual' });
  const text = await res.text();
  const contentType = res.headers.get('content-type');
  return {
    status: res.status,
    contentType,
    allow: res.headers.get('allow'),
    location: res.headers.get('location'),
    body: contentType === 'application/json' ? JSON.parse(text) : text,
  };
}

const listing = (params: Params = {}, from = base) => get('/api/v2/pages/', params, from);
const detail = (id: number, params: Params = {}) => get(`/api/v2/pages/${id}/`, params);
const find = (params: Params = {}, from = base) => get('/api/v2/pages/find/', params, from);

/** A 200 JSON listing's item ids, in order. */
async function ids(params: Params, from = base): Promise<number[]> {
  const answer = await listing(params, from);
  expect([answer.status, answer.contentType, answer.allow]).toEqual([200, 'application/json', ALLOW]);
  return answer.body.items.map((item: { id: number }) => item.id);
}

/** A 200 JSON listing's items. */
async function items(params: Params): Promise<any[]> {
  const answer = await listing(params);
  expect([answer.status, answer.contentType, answer.allow]).toEqual([200, 'application/json', ALLOW]);
  return answer.body.items;
}

/** The refusal Wagtail gives: status, `application/json`, `{"message": ...}`. */
function refusal(status: number, message: string) {
  return { status, contentType: 'application/json', body: { message } };
}
const answered = ({ status, contentType, body }: Answer) => ({ status, contentType, body });

/**
 * Wagtail's default order of the demosite's default site: tree (`path`) order (test_ordering_default),
 * `[..., 23, 20, 13, 14, 12]`, where siblings go by their place in the tree. A page's JSON does not
 * carry that place, so `serve` orders siblings by id, the order they were made in: the home page's
 * children Contact page (12) and People (20, with 13 and 14 below it) change places. This is the
 * one difference in order (docs/commands/serve.md says so).
 */
const TREE_ORDER = [2, 4, 8, 9, 5, 16, 18, 19, 6, 10, 15, 17, 21, 22, 23, 12, 20, 13, 14];
const LISTING_META = ['type', 'detail_url', 'html_url', 'slug', 'first_published_at'];
/** Wagtail's meta fields of a page, in its output order (no `parent`: a listing's `*` leaves it out). */
const ALL_META = [
  'type',
  'detail_url',
  'html_url',
  'slug',
  'show_in_menus',
  'seo_title',
  'search_description',
  'first_published_at',
  'alias_of',
];
/** The body fields of our page model, in order: what `*` adds to `id` and `meta` (Wagtail: the `api_fields`). */
const BODY_FIELDS = [
  'title',
  'date',
  'legacy_url',
  'presentation_stage',
  'list_presentation_stage',
  'child_of_collecting_home',
  'press_release_line',
];

describe('the demosite folder', () => {
  it('loads with loadContent, no error (warnings are fine)', () => {
    expect(content.pages.size).toBe(19);
  });
});

describe('Allow on every answer of the pages endpoint (DRF sends it on errors and redirects too)', () => {
  it.each<[string, string, Params]>([
    ['listing', '/api/v2/pages/', {}],
    ['listing, 400', '/api/v2/pages/', { limit: 'abc' }],
    ['detail', '/api/v2/pages/16/', {}],
    ['detail with fields', '/api/v2/pages/16/', { fields: '_,id' }],
    ['detail, 400', '/api/v2/pages/16/', { order: 'bad' }],
    ['detail, 404', '/api/v2/pages/1000/', {}],
    ['find, 302', '/api/v2/pages/find/', { id: '5' }],
    ['find, 404', '/api/v2/pages/find/', {}],
  ])('%s: %s %j', async (_what, urlPath, params) => {
    expect((await get(urlPath, params)).allow).toBe(ALLOW);
  });
});

describe('listing: basics and default order', () => {
  it('test_basic: 200, application/json, {meta: {total_count}, items}, the default fields', async () => {
    const answer = await listing();
    expect([answer.status, answer.contentType, answer.allow]).toEqual([200, 'application/json', ALLOW]);
    expect(Object.keys(answer.body)).toEqual(['meta', 'items']);
    expect(answer.body.meta).toEqual({ total_count: 19 });
    for (const item of answer.body.items) {
      expect(Object.keys(item)).toEqual(['id', 'meta', 'title']);
      expect(Object.keys(item.meta)).toEqual(LISTING_META);
    }
    // Key order as Wagtail's serializer writes it: id, meta (in meta_fields order), then the body fields.
    expect(JSON.stringify(answer.body.items[0])).toBe(
      JSON.stringify({
        id: 2,
        meta: {
          type: 'site.HomePage',
          detail_url: `${base}/api/v2/pages/2/`,
          html_url: `${base}/`,
          slug: 'home-page',
          first_published_at: PUBLISHED_AT,
        },
        title: 'Home page',
      }),
    );
  });

  // test_ordering_default: tree order, siblings by id (see TREE_ORDER).
  it('test_ordering_default: tree order', async () => {
    expect(await ids({})).toEqual(TREE_ORDER);
  });

  it('test_offset_5_usually_appears_5th_in_list', async () => {
    expect((await ids({})).indexOf(5)).toBe(4);
  });
});

describe('listing: type', () => {
  // test_type_filter_items_are_all_blog_entries, test_type_filter_total_count, test_ordering_default_with_type
  it('test_type_filter_*: one type, its pages in tree order, the default fields only', async () => {
    const answer = await listing({ type: 'site.BlogEntryPage' });
    expect([answer.status, answer.contentType, answer.body.meta]).toEqual([
      200,
      'application/json',
      { total_count: 3 },
    ]);
    expect(answer.body.items.map((item: any) => item.id)).toEqual([16, 18, 19]);
    for (const item of answer.body.items) {
      expect(item.meta.type).toBe('site.BlogEntryPage');
      expect(Object.keys(item)).toEqual(['id', 'meta', 'title']);
      expect(Object.keys(item.meta)).toEqual(LISTING_META); // test_fields_default
    }
  });

  it('test_type_filter_multiple: pages of either type, generic fields only', async () => {
    const found = await items({ type: 'site.BlogEntryPage,site.EventPage' });
    expect(found.map((item) => item.id)).toEqual([8, 9, 16, 18, 19]);
    expect(new Set(found.map((item) => item.meta.type))).toEqual(new Set(['site.BlogEntryPage', 'site.EventPage']));
    for (const item of found) expect(Object.keys(item)).toEqual(['id', 'meta', 'title']);
  });

  // Wagtail resolves app label and model without case (its tests use `demosite.contactpage`).
  it('type names are case-insensitive (test_ancestor_of_with_type uses demosite.eventindexpage)', async () => {
    expect(await ids({ type: 'site.blogentrypage' })).toEqual([16, 18, 19]);
    expect(await ids({ type: 'SITE.BLOGENTRYPAGE' })).toEqual([16, 18, 19]);
  });

  it.each<[string, Params]>([
    ['test_non_existent_type_gives_error', { type: 'site.IDontExist' }],
    ['test_non_page_type_gives_error', { type: 'auth.User' }],
    ['test_search_with_invalid_type', { type: 'site.InvalidPageType', search: 'blog' }],
    // The notes' other causes: no dot, an empty piece, two dots.
    ['no dot', { type: 'BlogEntryPage' }],
    ['an empty piece', { type: 'site.BlogEntryPage,' }],
    ['two dots', { type: 'site.BlogEntryPage.x' }],
  ])("%s: %j gives 400 type doesn't exist", async (_name, params) => {
    expect(answered(await listing(params))).toEqual(refusal(400, "type doesn't exist"));
  });

  it('an empty type= filters nothing (notes 2.4)', async () => {
    expect(await ids({ type: '' })).toEqual(await ids({}));
  });
});

describe('listing: fields', () => {
  it.each<[string, Params, string[], string[] | null]>([
    ['test_remove_fields', { fields: '-title' }, ['id', 'meta'], LISTING_META],
    [
      'test_remove_meta_fields',
      { fields: '-html_url' },
      ['id', 'meta', 'title'],
      ['type', 'detail_url', 'slug', 'first_published_at'],
    ],
    [
      'test_remove_all_meta_fields',
      { fields: '-type,-detail_url,-slug,-first_published_at,-html_url' },
      ['id', 'title'],
      null,
    ],
    ['test_remove_id_field', { fields: '-id' }, ['meta', 'title'], LISTING_META],
    ['test_remove_all_fields', { type: 'site.BlogEntryPage', fields: '_,id,type' }, ['id', 'meta'], ['type']],
    // test_fields (title,date,feed_image): our pages have no feed_image.
    [
      'test_fields',
      { type: 'site.BlogEntryPage', fields: 'title,date' },
      ['id', 'meta', 'title', 'date'],
      LISTING_META,
    ],
    // test_fields_ordering (date,title,feed_image,related_links): ours has legacy_url after date.
    [
      'test_fields_ordering',
      { type: 'site.BlogEntryPage', fields: 'legacy_url,date,title' },
      ['id', 'meta', 'title', 'date', 'legacy_url'],
      LISTING_META,
    ],
    // Entries apply in turn: `-title,title` has it, `title,-title` has not (notes 3.2).
    ['in turn: -title,title', { fields: '-title,title' }, ['id', 'meta', 'title'], LISTING_META],
    ['in turn: title,-title', { fields: 'title,-title' }, ['id', 'meta'], LISTING_META],
    ['empty fields= is the defaults', { fields: '' }, ['id', 'meta', 'title'], LISTING_META],
  ])('%s: %j', async (_name, params, keys, metaKeys) => {
    const found = await items(params);
    expect(found.length).toBeGreaterThan(0);
    for (const item of found) {
      expect(Object.keys(item)).toEqual(keys);
      if (metaKeys) expect(Object.keys(item.meta)).toEqual(metaKeys);
    }
  });

  // Wagtail's `*` has `locale` too (`"en"`, even with i18n off; test_all_fields): a page of the spec has no
  // locale, and a content folder is one site in one locale, so `serve` offers no `locale` field.
  it('test_all_fields: * is every field but parent, meta in Wagtail order', async () => {
    const found = await items({ type: 'site.BlogEntryPage', fields: '*' });
    expect(found.map((item) => item.id)).toEqual([16, 18, 19]);
    for (const item of found) {
      expect(Object.keys(item)).toEqual(['id', 'meta', ...BODY_FIELDS]);
      expect(Object.keys(item.meta).filter((key) => key !== 'locale')).toEqual(ALL_META);
    }
  });

  it('test_all_fields: no locale (see above); fields=locale is an unknown field', async () => {
    const found = await items({ type: 'site.BlogEntryPage', fields: '*' });
    for (const item of found) expect(Object.keys(item.meta)).not.toContain('locale');
    expect(answered(await listing({ fields: 'locale' }))).toEqual(refusal(400, 'unknown fields: locale'));
  });

  it('test_all_fields_then_remove_something: *,-title,-date,-seo_title', async () => {
    const found = await items({ type: 'site.BlogEntryPage', fields: '*,-title,-date,-seo_title' });
    for (const item of found) {
      expect(Object.keys(item)).toEqual(['id', 'meta', ...BODY_FIELDS.filter((f) => f !== 'title' && f !== 'date')]);
      expect(Object.keys(item.meta).filter((key) => key !== 'locale')).toEqual(
        ALL_META.filter((f) => f !== 'seo_title'),
      );
    }
  });

  it.each<[string, Params, string]>([
    [
      'test_star_in_wrong_position_gives_error',
      { fields: 'title,*' },
      "fields error: '*' must be in the first position",
    ],
    ['test_parent_field_gives_error', { fields: 'parent' }, 'unknown fields: parent'],
    // test_fields_without_type_gives_error (title,related_links); `date` is a BlogEntryPage field, as there.
    ['test_fields_without_type_gives_error', { fields: 'title,related_links' }, 'unknown fields: related_links'],
    ['test_fields_without_type_gives_error (date)', { fields: 'title,date' }, 'unknown fields: date'],
    ['test_fields_which_are_not_in_api_fields_gives_error', { fields: 'path' }, 'unknown fields: path'],
    ['test_fields_unknown_field_gives_error', { fields: '123,title,abc' }, 'unknown fields: 123, abc'],
    ['test_fields_remove_unknown_field_gives_error', { fields: '-123,-title,-abc' }, 'unknown fields: 123, abc'],
    [
      'test_nested_fields_on_non_relational_field_gives_error',
      { type: 'site.BlogEntryPage', fields: 'title(foo,bar)' },
      "'title' does not support nested fields",
    ],
    // test_unknown_nested_fields_give_error (feed_image(123,title,abc)): alias_of is our one page relation.
    [
      'test_unknown_nested_fields_give_error (alias_of)',
      { fields: 'alias_of(123,title,abc)' },
      'unknown fields: 123, abc',
    ],
    ['nested fields on type (notes 3.2)', { fields: 'type(x)' }, "'type' does not support nested fields"],
  ])('%s: %j', async (_name, params, message) => {
    expect(answered(await listing(params))).toEqual(refusal(400, message));
  });

  // tests.py, TestParseFieldsParameter: each error the parser gives, through the listing ("fields error: ...").
  it.each<[string, string]>([
    ['test#', "unexpected char '#' at position 4"],
    [' test', 'unexpected whitespace at position 0'],
    ['test ', 'unexpected whitespace at position 4'],
    ['test, test', 'unexpected whitespace at position 5'],
    ['test ,test', 'unexpected whitespace at position 4'],
    ['test-', "unexpected char '-' at position 4"],
    ['test,(foo)', "unexpected char '(' at position 5"],
    ['test)', "unexpected char ')' at position 4"],
    ['test,,foo', "unexpected char ',' at position 5"],
    ['test,foo,', "unexpected char ',' at position 9"],
    ['test(foo', 'unexpected end of input (did you miss out a close bracket?)'],
    ['-test(foo)', "unexpected char '(' at position 5"],
    ['test,*', "'*' must be in the first position"],
    ['-*', "'*' cannot be negated"],
    ['*(foo,bar)', "unexpected char '(' at position 1"],
    ['*foo', "unexpected char 'f' at position 1"],
    ['foo*', "unexpected char '*' at position 3"],
    ['*,foo', "additional fields with '*' doesn't make sense"],
    ['test,_', "'_' must be in the first position"],
    ['-_', "'_' cannot be negated"],
    ['_(foo,bar)', "unexpected char '(' at position 1"],
    ['_,-foo', "negated fields with '_' doesn't make sense"],
    ['*,_', "'_' must be in the first position"],
  ])('tests.py parse error: fields=%j', async (fields, message) => {
    expect(answered(await listing({ fields }))).toEqual(refusal(400, `fields error: ${message}`));
  });
});

describe('listing: field filters', () => {
  it.each<[string, Params, number[]]>([
    ['test_filtering_exact_filter', { title: 'Home page' }, [2]],
    ['test_filtering_exact_filter_on_specific_field', { type: 'site.BlogEntryPage', date: '2013-12-02' }, [16]],
    ['test_filtering_on_id', { id: '16' }, [16]],
    ['test_filtering_on_boolean', { show_in_menus: 'false' }, [8, 9, 16, 18, 19, 17]],
  ])('%s: %j', async (_name, params, expected) => {
    expect(await ids(params)).toEqual(expected);
  });

  it.each<[string, Params, string]>([
    [
      'test_filtering_doesnt_work_on_specific_fields_without_type',
      { date: '2013-12-02' },
      'query parameter is not an operation or a recognised field: date',
    ],
    [
      'test_filtering_id_int_validation',
      { id: 'abc' },
      "field filter error. 'abc' is not a valid value for id (invalid literal for int() with base 10: 'abc')",
    ],
    [
      'test_filtering_boolean_validation',
      { show_in_menus: 'abc' },
      "field filter error. 'abc' is not a valid value for show_in_menus (expected 'true' or 'false', got 'abc')",
    ],
    [
      'test_slug_field_containing_null_bytes_gives_error',
      { slug: '\0' },
      'field filter error. null characters are not allowed for slug',
    ],
  ])('%s: %j', async (_name, params, message) => {
    expect(answered(await listing(params))).toEqual(refusal(400, message));
  });
});

describe('listing: child_of, ancestor_of, descendant_of', () => {
  it.each<[string, Params, number[]]>([
    ['test_child_of_filter', { child_of: '5' }, [16, 18, 19]],
    // Children of the home page in `path` order: People (20) before Contact page (12).
    // Wagtail's [4, 5, 6, 20, 12], siblings by id (see TREE_ORDER).
    ['test_child_of_root', { child_of: 'root' }, [4, 5, 6, 12, 20]],
    ['test_child_of_with_type', { type: 'site.EventPage', child_of: '5' }, []],
    ['test_ancestor_of_filter', { ancestor_of: '10' }, [2, 6]],
    ['test_ancestor_of_with_type', { type: 'site.eventindexpage', ancestor_of: '8' }, [4]],
    ['test_ancestor_of_home_page_ignores_root', { ancestor_of: '2' }, []],
    ['test_descendant_of_filter', { descendant_of: '6' }, [10, 15, 17, 21, 22, 23]],
    ['test_descendant_of_root', { descendant_of: 'root' }, TREE_ORDER.slice(1)],
    ['test_descendant_of_with_type', { type: 'site.eventindexpage', descendant_of: '2' }, [4]],
  ])('%s: %j', async (_name, params, expected) => {
    expect(await ids(params)).toEqual(expected);
  });

  it.each<[string, Params, string]>([
    ['test_child_of_unknown_page_gives_error', { child_of: '1000' }, "parent page doesn't exist"],
    ['test_child_of_not_integer_gives_error', { child_of: 'abc' }, 'child_of must be a positive integer'],
    ['test_child_of_page_thats_not_in_same_site_gives_error', { child_of: '1' }, "parent page doesn't exist"],
    ['test_ancestor_of_unknown_page_gives_error', { ancestor_of: '1000' }, "descendant page doesn't exist"],
    ['test_ancestor_of_not_integer_gives_error', { ancestor_of: 'abc' }, 'ancestor_of must be a positive integer'],
    ['test_descendant_of_unknown_page_gives_error', { descendant_of: '1000' }, "ancestor page doesn't exist"],
    [
      'test_descendant_of_not_integer_gives_error',
      { descendant_of: 'abc' },
      'descendant_of must be a positive integer',
    ],
    [
      'test_descendant_of_page_thats_not_in_same_site_gives_error',
      { descendant_of: '1' },
      "ancestor page doesn't exist",
    ],
    [
      'test_descendant_of_when_filtering_by_child_of_gives_error',
      { descendant_of: '6', child_of: '5' },
      'filtering by descendant_of with child_of is not supported',
    ],
  ])('%s: %j', async (_name, params, message) => {
    expect(answered(await listing(params))).toEqual(refusal(400, message));
  });
});

describe('listing: order', () => {
  const BY_TITLE = [21, 22, 19, 23, 5, 16, 18, 12, 14, 8, 9, 4, 2, 13, 20, 17, 6, 10, 15];

  it.each<[string, Params, number[]]>([
    ['test_ordering_by_title', { order: 'title' }, BY_TITLE],
    ['test_ordering_by_title_backwards', { order: '-title' }, [...BY_TITLE].reverse()],
    ['test_ordering_by_title_with_type', { type: 'site.BlogEntryPage', order: 'title' }, [19, 16, 18]],
    ['test_ordering_by_specific_field_with_type', { type: 'site.BlogEntryPage', order: 'date' }, [16, 18, 19]],
  ])('%s: %j', async (_name, params, expected) => {
    expect(await ids(params)).toEqual(expected);
  });

  it('an empty order= keeps the default order (notes 4.5)', async () => {
    expect(await ids({ order: '' })).toEqual(await ids({}));
  });

  it('test_ordering_by_id_and_slug: id order (Wagtail checks the first 15)', async () => {
    const byId = [...TREE_ORDER].sort((a, b) => a - b);
    expect((await ids({ order: 'id,slug' })).slice(0, 15)).toEqual(byId.slice(0, 15));
  });

  it('test_ordering_by_title_and_id_backwards: starts 21, 22, 19, 23, 5', async () => {
    expect((await ids({ order: 'title,-id' })).slice(0, 5)).toEqual([21, 22, 19, 23, 5]);
  });

  it('test_ordering_by_random: two calls differ, same pages', async () => {
    const first = await ids({ order: 'random' });
    const second = await ids({ order: 'random' });
    expect(first).not.toEqual(second);
    expect([...first].sort((a, b) => a - b)).toEqual([...second].sort((a, b) => a - b));
    expect(first).toHaveLength(19);
  });

  it.each<[string, Params, string]>([
    [
      'test_ordering_by_random_backwards_gives_error',
      { order: '-random' },
      "cannot order by '-random' (unknown field)",
    ],
    [
      'test_ordering_by_random_with_offset_gives_error',
      { order: 'random', offset: '10' },
      'random ordering with offset is not supported',
    ],
    [
      'offset=0 with random is refused too (notes 4.5)',
      { order: 'random', offset: '0' },
      'random ordering with offset is not supported',
    ],
    [
      'test_ordering_by_unknown_field_gives_error',
      { order: 'not_a_field' },
      "cannot order by 'not_a_field' (unknown field)",
    ],
    [
      'test_random_ordering_with_unknown_field_gives_error',
      { order: 'random,id' },
      'random ordering cannot be combined with other fields',
    ],
    ['date without type (notes 4.5)', { order: 'date' }, "cannot order by 'date' (unknown field)"],
  ])('%s: %j', async (_name, params, message) => {
    expect(answered(await listing(params))).toEqual(refusal(400, message));
  });
});

describe('listing: search', () => {
  // Our search matches query words against the words of a page's title and text; Wagtail's database
  // backend has its own index and relevance. Without `order` the order is relevance (Wagtail's tests compare
  // sets), so only the sets are compared there. Every page's text here is the sample page's ("Art Fairs",
  // "gallery", ...), so "blog" and "elephants" match titles only, as in the fixture's index.
  it.each<[string, Params, number[]]>([
    ['test_search_for_blog', { search: 'blog' }, [5, 16, 18, 19]],
    ['test_search_with_type', { type: 'site.BlogEntryPage', search: 'blog' }, [16, 18, 19]],
    [
      'test_search_operator_and',
      { type: 'site.BlogEntryPage', search: 'blog elephants', search_operator: 'and' },
      [18],
    ],
    [
      'test_search_operator_or',
      { type: 'site.BlogEntryPage', search: 'blog elephants', search_operator: 'or' },
      [16, 18, 19],
    ],
  ])('%s: %j (as a set)', async (_name, params, expected) => {
    expect([...(await ids(params))].sort((a, b) => a - b)).toEqual(expected);
  });

  it.each<[string, Params, number[]]>([
    ['test_search_with_filter', { title: 'Another blog post', search: 'blog', order: 'title' }, [19]],
    ['test_search_with_order', { search: 'blog', order: 'title' }, [19, 5, 16, 18]],
  ])('%s: %j', async (_name, params, expected) => {
    expect(await ids(params)).toEqual(expected);
  });

  it('test_empty_searches_work: search= gives 200, application/json, total_count 0', async () => {
    const answer = await listing({ search: '' });
    expect([answer.status, answer.contentType, answer.body]).toEqual([
      200,
      'application/json',
      { meta: { total_count: 0 }, items: [] },
    ]);
  });
});

describe('listing: limit and offset', () => {
  it('test_limit_only_two_items_returned, test_limit_total_count: limit=2', async () => {
    const answer = await listing({ limit: '2' });
    expect(answer.status).toBe(200);
    expect(answer.body.items.map((item: any) => item.id)).toEqual([2, 4]);
    expect(answer.body.meta).toEqual({ total_count: 19 });
  });

  it('test_offset_5_moves_after_offset: offset=4 puts 5 first', async () => {
    expect((await ids({ offset: '4' })).indexOf(5)).toBe(0);
  });

  it('test_offset_total_count: offset=10 leaves total_count alone', async () => {
    const answer = await listing({ offset: '10' });
    expect([answer.status, answer.body.meta, answer.body.items.length]).toEqual([200, { total_count: 19 }, 9]);
  });

  it('limit=0 is valid: no items, the real total_count (notes 5)', async () => {
    expect(answered(await listing({ limit: '0' }))).toEqual({
      status: 200,
      contentType: 'application/json',
      body: { meta: { total_count: 19 }, items: [] },
    });
  });

  it.each<[string, Params, string]>([
    ['test_limit_not_integer_gives_error', { limit: 'abc' }, 'limit must be a positive integer'],
    ['test_limit_too_high_gives_error', { limit: '1000' }, 'limit cannot be higher than 20'],
    ['test_offset_not_integer_gives_error', { offset: 'abc' }, 'offset must be a positive integer'],
    ['offset before limit (notes 2.1)', { limit: 'abc', offset: 'abc' }, 'offset must be a positive integer'],
  ])('%s: %j', async (_name, params, message) => {
    expect(answered(await listing(params))).toEqual(refusal(400, message));
  });

  it('test_limit_max_none_gives_no_errors: WAGTAILAPI_LIMIT_MAX=None (limitMax 0), limit=1000000', async () => {
    const answer = await listing({ limit: '1000000' }, await start({ limitMax: 0 }));
    expect([answer.status, answer.body.items.length]).toEqual([200, 19]);
  });

  it('test_limit_maximum_can_be_changed: WAGTAILAPI_LIMIT_MAX=10, limit=20', async () => {
    expect(answered(await listing({ limit: '20' }, await start({ limitMax: 10 })))).toEqual(
      refusal(400, 'limit cannot be higher than 10'),
    );
  });

  it('test_limit_default_changes_with_max: WAGTAILAPI_LIMIT_MAX=2, no limit', async () => {
    expect(await ids({}, await start({ limitMax: 2 }))).toEqual([2, 4]);
  });
});

describe('listing: unknown parameters', () => {
  it.each<[string, Params, string]>([
    ['test_filtering_unknown_field_gives_error', { not_a_field: 'abc' }, 'not_a_field'],
    ['several, sorted (notes 2.5)', { b: '1', a: '2' }, 'a, b'],
    ['html_path is for find only (notes 2.5)', { html_path: '/' }, 'html_path'],
    ['html_url is not a database field (notes 2.5)', { html_url: 'x' }, 'html_url'],
  ])('%s: %j', async (_name, params, names) => {
    expect(answered(await listing(params))).toEqual(
      refusal(400, `query parameter is not an operation or a recognised field: ${names}`),
    );
  });
});

describe('detail', () => {
  it('test_basic: page 16, its meta and parent', async () => {
    const answer = await detail(16);
    expect([answer.status, answer.contentType, answer.allow]).toEqual([200, 'application/json', ALLOW]);
    const page = answer.body;
    expect(page.id).toBe(16);
    expect(page.meta.type).toBe('site.BlogEntryPage');
    expect(page.meta.detail_url).toBe(`${base}/api/v2/pages/16/`);
    expect(page.meta.html_url).toBe(`${base}/blog-index/blog-post/`);
    expect(page.meta.alias_of).toBeNull();
    expect(page.date).toBe('2013-12-02');
    // Wagtail's parent meta html_url is the parent's URL; our parent summary holds null (spec 2.2).
    expect(Object.keys(page.meta.parent)).toEqual(['id', 'meta', 'title']);
    expect(Object.keys(page.meta.parent.meta)).toEqual(['type', 'detail_url', 'html_url']);
    expect([page.meta.parent.id, page.meta.parent.meta.type, page.meta.parent.meta.detail_url]).toEqual([
      5,
      'site.BlogIndexPage',
      `${base}/api/v2/pages/5/`,
    ]);
  });

  it('test_field_ordering: id, meta (Wagtail order, parent last), then the body fields', async () => {
    const page = (await detail(16)).body;
    expect(Object.keys(page)).toEqual(['id', 'meta', ...BODY_FIELDS]);
    expect(Object.keys(page.meta)).toEqual([...ALL_META, 'parent']);
  });

  // Wagtail writes the home page's parent as null (the tree root is not in the site). The spec's page
  // model needs a parent summary, so the folder's home page names the tree root (id 1), which it does
  // not hold: `serve` answers the page as stored, and the tree root is no page of the site.
  it('test_meta_parent_id_doesnt_show_root_page: the tree root is not served, nor listed', async () => {
    const answer = await detail(2);
    expect([answer.status, answer.body.meta.parent.id]).toEqual([200, 1]);
    expect(answered(await detail(1))).toEqual(refusal(404, 'No Page matches the given query.'));
    expect(await ids({ ancestor_of: '4' })).toEqual([2]);
  });

  it.each<[string, number, Params, string]>([
    ['a page the folder does not have', 1000, {}, 'No Page matches the given query.'],
    ['the tree root (not in the site)', 1, {}, 'No Page matches the given query.'],
    ['a page of the other site', 24, {}, 'No Page matches the given query.'],
    // get_object() runs the filter backends: a page the filters leave out is not found (notes 7).
    ['child_of that leaves it out', 16, { child_of: '6' }, 'No Page matches the given query.'],
    ['type given: its model named', 16, { type: 'site.EventPage' }, 'No EventPage matches the given query.'],
    ['type given, in its case', 16, { type: 'site.eventpage' }, 'No EventPage matches the given query.'],
    ['type given, no such page', 1000, { type: 'site.BlogEntryPage' }, 'No BlogEntryPage matches the given query.'],
  ])('404 %s: %i %j', async (_name, id, params, message) => {
    expect(answered(await detail(id, params))).toEqual(refusal(404, message));
  });

  it.each<[string, Params, string]>([
    [
      'test_star_in_wrong_position_gives_error',
      { fields: 'title,*' },
      "fields error: '*' must be in the first position",
    ],
    ['test_fields_which_are_not_in_api_fields_gives_error', { fields: 'path' }, 'unknown fields: path'],
    ['test_fields_unknown_field_gives_error', { fields: '123,title,abc' }, 'unknown fields: 123, abc'],
    ['test_fields_remove_unknown_field_gives_error', { fields: '-123,-title,-abc' }, 'unknown fields: 123, abc'],
    [
      'test_nested_fields_on_non_relational_field_gives_error',
      { fields: 'title(foo,bar)' },
      "'title' does not support nested fields",
    ],
    // The filter backends validate on the detail view too (notes 7).
    ['order=bad (notes 7)', { order: 'bad' }, "cannot order by 'bad' (unknown field)"],
    [
      'id=abc (notes 7)',
      { id: 'abc' },
      "field filter error. 'abc' is not a valid value for id (invalid literal for int() with base 10: 'abc')",
    ],
    [
      'order=random&offset=0 (notes 7)',
      { order: 'random', offset: '0' },
      'random ordering with offset is not supported',
    ],
    ['a bad type (notes 7)', { type: 'site.IDontExist' }, "type doesn't exist"],
  ])('400 %s: 16 %j', async (_name, params, message) => {
    expect(answered(await detail(16, params))).toEqual(refusal(400, message));
  });

  it.each<[string, Params, string[], string[] | null]>([
    ['test_remove_fields', { fields: '-title' }, ['id', 'meta', ...BODY_FIELDS.slice(1)], [...ALL_META, 'parent']],
    [
      'test_remove_meta_fields',
      { fields: '-html_url' },
      ['id', 'meta', ...BODY_FIELDS],
      [...ALL_META.filter((f) => f !== 'html_url'), 'parent'],
    ],
    [
      'test_remove_all_meta_fields',
      {
        fields:
          '-type,-detail_url,-slug,-first_published_at,-alias_of,-html_url,-search_description,-show_in_menus,' +
          '-parent,-seo_title',
      },
      ['id', ...BODY_FIELDS],
      null,
    ],
    ['test_remove_id_field', { fields: '-id' }, ['meta', ...BODY_FIELDS], [...ALL_META, 'parent']],
    ['test_remove_all_fields', { fields: '_,id,type' }, ['id', 'meta'], ['type']],
  ])('%s: 16 %j', async (_name, params, keys, metaKeys) => {
    const answer = await detail(16, params);
    expect([answer.status, answer.contentType, answer.allow]).toEqual([200, 'application/json', ALLOW]);
    expect(Object.keys(answer.body)).toEqual(keys);
    if (metaKeys) expect(Object.keys(answer.body.meta)).toEqual(metaKeys);
  });

  it('fields=_,id,type: the values', async () => {
    expect((await detail(16, { fields: '_,id,type' })).body).toEqual({ id: 16, meta: { type: 'site.BlogEntryPage' } });
  });

  it.each<[string, Params]>([
    // test_image_chooser_block_with_custom_get_api_representation asks for /pages/<id>/?extended=1.
    ['an unknown parameter is ignored', { extended: '1' }],
    ['a filter that keeps it', { child_of: '5' }],
    ['the type it has', { type: 'site.BlogEntryPage' }],
    ['limit and offset are not read (no pagination)', { limit: 'abc', offset: 'abc' }],
  ])('200 %s: 16 %j, the page as stored', async (_name, params) => {
    const answer = await detail(16, params);
    expect([answer.status, answer.contentType, answer.allow]).toEqual([200, 'application/json', ALLOW]);
    expect(answer.body).toEqual((await detail(16)).body);
  });
});

describe('find', () => {
  it.each<[string, Params]>([
    ['test_without_parameters', {}],
    ['test_find_by_id_nonexistent', { id: '1234' }],
    ['test_find_by_html_path_nonexistent', { html_path: '/foo' }],
    // test_find_by_id_with_page_in_non_default_site: without ?site=, page 24 is not found.
    ['test_find_by_id_with_page_in_non_default_site', { id: '24' }],
    ['the tree root', { id: '1' }],
    // A path that leads nowhere ends the search: id is not tried (notes 8).
    ['html_path that leads nowhere, id of a page', { html_path: '/foo/', id: '5' }],
    ['a type the page does not have', { id: '5', type: 'site.EventPage' }],
  ])('404 not found, %s: %j', async (_name, params) => {
    expect(answered(await find(params))).toEqual(refusal(404, 'not found'));
  });

  it.each<[string, Params, string]>([
    ['test_find_by_id', { id: '5' }, '/api/v2/pages/5/?'],
    ['test_find_by_html_path', { html_path: '/events-index/event-1/' }, '/api/v2/pages/8/?'],
    [
      'test_find_by_html_path_with_start_and_end_slashes_removed',
      { html_path: 'events-index/event-1' },
      '/api/v2/pages/8/?',
    ],
    [
      'test_find_by_html_path_with_fields',
      { html_path: '/events-index/event-1/', fields: '_,id,type' },
      '/api/v2/pages/8/?fields=_%2Cid%2Ctype',
    ],
    [
      'test_find_by_html_path_takes_precedence_over_id',
      { id: '1234', html_path: '/events-index/event-1/' },
      '/api/v2/pages/8/?',
    ],
    ['html_path=/ is the site root page', { html_path: '/' }, '/api/v2/pages/2/?'],
    ['a deeper path', { html_path: '/standard-index/a-deeper-menu-level/a-grandchild-page/' }, '/api/v2/pages/22/?'],
    [
      'the other parameters kept, in order (notes 8)',
      { fields: 'title', id: '16', type: 'site.BlogEntryPage' },
      '/api/v2/pages/16/?fields=title&type=site.BlogEntryPage',
    ],
  ])('302 %s: %j', async (_name, params, location) => {
    const answer = await find(params);
    expect([answer.status, answer.location, answer.allow, answer.body]).toEqual([302, `${base}${location}`, ALLOW, '']);
  });
});

describe('an unpublished page (first_published_at null)', () => {
  let from: string;
  beforeAll(async () => {
    const dir = await tempDir();
    await wagtailSite(dir);
    const file = path.join(dir, 'pages', '16.json');
    const page = JSON.parse(await readFile(file, 'utf8'));
    page.meta.first_published_at = null;
    await writeFile(file, JSON.stringify(page));
    from = await start({}, await loadContent(dir));
  });

  it('test_unpublished_pages_dont_appear_in_list: page 16 unpublished, total_count 18', async () => {
    const answer = await listing({}, from);
    expect([answer.status, answer.body.meta]).toEqual([200, { total_count: 18 }]);
    expect(answer.body.items.map((item: any) => item.id)).not.toContain(16);
    expect(await ids({ child_of: '5' }, from)).toEqual([18, 19]);
  });

  it('find does not find it (its queryset is the live pages)', async () => {
    for (const params of [{ id: '16' }, { html_path: '/blog-index/blog-post/' }] as Params[])
      expect(answered(await find(params, from))).toEqual(refusal(404, 'not found'));
  });
});
