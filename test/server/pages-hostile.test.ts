/**
 * The listing's parameters against hostile queries and content, in-process (the views `serve`
 * answers from, over pages built here): a parent cycle ends, long queries cost what short ones do,
 * and a type named twice is two, as Wagtail reads it.
 */
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../../src/server/pages/errors.js';
import { Query } from '../../src/server/pages/query.js';
import { MAX_TERMS } from '../../src/server/pages/search.js';
import { PagesApi } from '../../src/server/pages/views.js';

/** A page record as `serve` holds one: the fields the listing reads. */
function page(id: number, parent: number | null, title: string, type = 'site.PresentationPage', htmlUrl?: string) {
  const json = {
    id,
    meta: {
      type,
      detail_url: `{base_url}/api/v2/pages/${id}/`,
      html_url: htmlUrl ?? `{base_url}/p/${id}/`,
      slug: `p-${id}`,
      first_published_at: '2026-01-01T00:00:00.000000',
      parent: parent === null ? null : { id: parent, meta: { type, detail_url: '', html_url: null }, title: '' },
    },
    title,
    date: '2026-01-01',
  };
  return [String(id), { json }] as const;
}

const api = (...pages: Array<ReturnType<typeof page>>) => new PagesApi(new Map(pages));
const ids = (pagesApi: PagesApi, search: string) =>
  (JSON.parse(pagesApi.listing(new Query(new URLSearchParams(search)))) as { items: Array<{ id: number }> }).items.map(
    (item) => item.id,
  );

describe('hostile content', () => {
  it('a parent cycle is listed whole, each page once, and the tree walks end', () => {
    // 1 -> 2 -> 3 -> 1 has no page at the top; the first of the cycle is put there, after the pages
    // that are (4, whose parent is not in the folder).
    const pages = api(page(1, 3, 'One'), page(2, 1, 'Two'), page(3, 2, 'Three'), page(4, 9, 'Four'));
    expect(ids(pages, '')).toEqual([4, 1, 2, 3]);
    expect(ids(pages, 'descendant_of=1')).toEqual([2, 3]);
    expect(ids(pages, 'ancestor_of=3')).toEqual([1, 2]);
    expect(ids(pages, 'child_of=3')).toEqual([]);
    expect(ids(pages, 'child_of=root')).toEqual([4, 1]);
  });
});

describe('the tree', () => {
  it('a chain 3,000 pages deep: each below all of those above it, and above all below it', () => {
    const chain = api(...Array.from({ length: 3000 }, (_, i) => page(i + 1, i === 0 ? null : i, `Page ${i + 1}`)));
    expect(ids(chain, 'descendant_of=2990&limit=0')).toEqual([]);
    const below = JSON.parse(chain.listing(new Query(new URLSearchParams('descendant_of=2990')))).meta.total_count;
    expect(below).toBe(10);
    expect(ids(chain, 'ancestor_of=4')).toEqual([1, 2, 3]);
    expect(ids(chain, 'child_of=2999')).toEqual([3000]);
    // Page 1 is alone at the top: the root page; its children are child_of=root, all below it descendant_of=root.
    expect(ids(chain, 'child_of=root')).toEqual([2]);
    expect(JSON.parse(chain.listing(new Query(new URLSearchParams('descendant_of=root')))).meta.total_count).toBe(2999);
  });

  it('find by the path of an absolute html_url that is not ASCII (the URL holds it percent-encoded)', () => {
    const pages = api(
      page(1, null, 'Home'),
      page(2, 1, 'Wiese', 'site.PresentationPage', 'https://example.org/grüne-wiese/'),
    );
    for (const path of ['/grüne-wiese/', 'grüne-wiese'])
      expect(pages.find(new Query(new URLSearchParams({ html_path: path })))).toBe('/api/v2/pages/2/?');
  });
});

describe("Wagtail's order of refusals, and its Page", () => {
  const pages = api(page(1, null, 'alpha'), page(2, 1, 'beta'));
  const refusal = (search: string) => {
    try {
      pages.listing(new Query(new URLSearchParams(search)));
    } catch (error) {
      return (error as BadRequest).message;
    }
    return 'no refusal';
  };

  it('site comes with type, before unknown parameters; translation_of and locale after order', () => {
    expect(refusal('site=x&nope=1')).toBe('site is not supported: a content folder is one site in one locale');
    expect(refusal('type=x.Y&site=x')).toBe("type doesn't exist");
    expect(refusal('translation_of=1&order=nope')).toBe("cannot order by 'nope' (unknown field)");
    expect(refusal('translation_of=1&search=x&search_operator=xor')).toBe(
      'translation_of is not supported: a content folder is one site in one locale',
    );
  });

  it('wagtailcore.Page is every page, with only the fields every page has', () => {
    expect(ids(pages, 'type=wagtailcore.Page')).toEqual([1, 2]);
    expect(ids(pages, 'type=wagtailcore.page,site.PresentationPage')).toEqual([1, 2]);
    expect(refusal('type=wagtailcore.Page&fields=date')).toBe('unknown fields: date');
    expect(pages.find(new Query(new URLSearchParams({ id: '2', type: 'wagtailcore.Page' })))).toBe(
      '/api/v2/pages/2/?type=wagtailcore.Page',
    );
  });
});

describe('long queries', () => {
  const pages = api(page(1, null, 'alpha'), page(2, 1, 'beta'), page(3, 1, 'gamma'));

  it(`search looks for the first ${MAX_TERMS} distinct words of a query, no more`, () => {
    const words = Array.from({ length: MAX_TERMS }, (_, i) => `w${i}`);
    expect(ids(pages, `search=${[...words, 'beta'].join('+')}`)).toEqual([]);
    expect(ids(pages, `search=${['beta', ...words].join('+')}`)).toEqual([2]);
    // Words repeated count once: the 33rd distinct word is still looked for.
    expect(ids(pages, `search=${[...words.slice(1), ...words, 'beta'].join('+')}`)).toEqual([]);
    expect(ids(pages, `search=${[...words.slice(0, MAX_TERMS - 1), ...words.slice(0, 5), 'beta'].join('+')}`)).toEqual([
      2,
    ]);
  });

  it('order names a field again: the first decides, as in the database', () => {
    const repeated = Array.from({ length: 200 }, (_, i) => (i % 2 ? '-title' : 'title')).join(',');
    expect(ids(pages, `order=${repeated}`)).toEqual(ids(pages, 'order=title'));
    expect(ids(pages, 'order=-title,title')).toEqual([3, 2, 1]);
  });

  it("a type named twice is two types to Wagtail: Page's fields only", () => {
    const twice = 'type=site.PresentationPage,site.presentationpage';
    expect(ids(pages, twice)).toEqual([1, 2, 3]);
    expect(() => pages.listing(new Query(new URLSearchParams(`${twice}&fields=date`)))).toThrow(
      new BadRequest('unknown fields: date'),
    );
    expect(ids(pages, 'type=site.PresentationPage&fields=date')).toEqual([1, 2, 3]);
  });
});
