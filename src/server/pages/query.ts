/**
 * Wagtail API v2's query parameters for pages, applied as `wagtail/api/v2/views.py` and
 * `filters.py` apply them, in their order and with their messages: `type`, then (on the listing)
 * unknown parameters, then the field filters, `child_of`, `ancestor_of`, `descendant_of`,
 * `order` and `search`; then `offset` and `limit`.
 */
import { BadRequest } from './errors.js';
import { type OrderCache, ordered } from './order.js';
import { pythonInt, pythonRepr, quotePlus } from './python.js';
import type { PageSearch } from './search.js';
import { type FieldKind, fieldValue, isAncestor, type PageType, type Site, type SitePage } from './site.js';

/** A request's query parameters: the last value of each, as Django's `request.GET[name]` gives it. */
export class Query {
  readonly #params: URLSearchParams;
  constructor(params: URLSearchParams) {
    this.#params = params;
  }
  get(name: string): string | undefined {
    return this.#params.getAll(name).at(-1);
  }
  has(name: string): boolean {
    return this.#params.has(name);
  }
  names(): string[] {
    return [...new Set(this.#params.keys())];
  }
  /** Every parameter but `leave`, encoded as Django's `QueryDict.urlencode()` does (Python's `quote_plus`). */
  encodeWithout(leave: readonly string[]): string {
    return this.names()
      .filter((name) => !leave.includes(name))
      .flatMap((name) => this.#params.getAll(name).map((value) => `${quotePlus(name)}=${quotePlus(value)}`))
      .join('&');
  }
}

/** What `type` asks for: the types, and the one whose fields the view offers (null: `Page`'s only). */
export interface TypeQuery {
  types: PageType[] | null;
  model: PageType | null;
}

/**
 * `type=app.Model[,app.Model]`, names compared without case; any that is not a type of the site: a
 * 400. `wagtailcore.Page`, the class every page is, is every page. Then `site`, which Wagtail reads
 * with the type, before anything else: a content folder is one site.
 */
export function typeQuery(site: Site, query: Query): TypeQuery {
  const value = query.get('type');
  const types = value
    ? value.split(',').map((name) => {
        if (name.toLowerCase() === EVERY_PAGE.name.toLowerCase()) return EVERY_PAGE;
        const type = /^[^.]+\.[^.]+$/.test(name) ? site.types.get(name.toLowerCase()) : undefined;
        if (!type) throw new BadRequest("type doesn't exist");
        return type;
      })
    : null;
  if (query.has('site')) throw unsupported('site');
  if (!types) return { types: null, model: null };
  // Named twice is still two to Wagtail, whose fields are then `Page`'s; each is tested once all the same.
  return { types: [...new Set(types)], model: types.length === 1 ? types[0]! : null };
}

/** Wagtail's `Page`: every page is one, with only the fields every page has. */
const EVERY_PAGE: PageType = {
  name: 'wagtailcore.Page',
  className: 'Page',
  bodyFields: ['id', 'title'],
  kinds: new Map(),
};

/** Whether `page` is of one of `types` (`wagtailcore.Page`: any page). */
export function isOfType(types: readonly PageType[], page: SitePage): boolean {
  return types.some((type) => type === EVERY_PAGE || type.name === page.type);
}

/** Known to Wagtail, but about sites and locales a content folder does not have: a 400 of its own. */
const unsupported = (name: string) =>
  new BadRequest(`${name} is not supported: a content folder is one site in one locale`);

/** The parameters every pages view knows, besides the fields it can filter on. */
const KNOWN_PARAMETERS = new Set([
  ...['limit', 'offset', 'fields', 'order', 'search', 'search_operator', '_', 'format'],
  ...['type', 'child_of', 'ancestor_of', 'descendant_of', 'translation_of', 'locale', 'site'],
]);

/** The listing's check: a parameter that is neither an operation nor a field it filters on is a 400. */
export function checkParameters(site: Site, { model }: TypeQuery, query: Query): void {
  const columns = site.columns(model);
  const unknown = query
    .names()
    .filter((name) => !KNOWN_PARAMETERS.has(name) && !columns.has(name))
    .sort();
  if (unknown.length > 0)
    throw new BadRequest(`query parameter is not an operation or a recognised field: ${unknown.join(', ')}`);
}

/**
 * `pages` (in tree order) narrowed and ordered by the query's filters, `order` and `search`, in
 * Wagtail's order, each refusal its 400.
 */
export function filterPages(
  site: Site,
  { types, model }: TypeQuery,
  query: Query,
  pages: readonly SitePage[],
  search: PageSearch,
  orders: OrderCache,
): SitePage[] {
  let result = types ? pages.filter((page) => isOfType(types, page)) : [...pages];
  const keep = (test: (page: SitePage) => boolean) => {
    result = result.filter(test);
  };
  const columns = site.columns(model);
  for (const name of query.names()) {
    const kind = columns.get(name);
    if (kind) keep(fieldFilter(site, name, kind, query.get(name)!));
  }
  let byChildOf = false;
  const childOf = query.get('child_of');
  if (childOf !== undefined) {
    const parent = treePage(site, 'child_of', childOf, "parent page doesn't exist", true);
    keep(parent === 'root' ? (page) => page.parent === site.rootPage : (page) => page.parent === parent);
    byChildOf = true;
  }
  const ancestorOf = query.get('ancestor_of');
  if (ancestorOf !== undefined) {
    const below = treePage(site, 'ancestor_of', ancestorOf, "descendant page doesn't exist", false) as SitePage;
    keep((page) => isAncestor(page, below));
    // As in Wagtail, whose filter hands on a copy of the query set without its child_of mark.
    byChildOf = false;
  }
  const descendantOf = query.get('descendant_of');
  if (descendantOf !== undefined) {
    if (byChildOf) throw new BadRequest('filtering by descendant_of with child_of is not supported');
    const above = treePage(site, 'descendant_of', descendantOf, "ancestor page doesn't exist", true);
    if (above === 'root') {
      const root = site.rootPage;
      if (root) keep((page) => isAncestor(root, page));
    } else keep((page) => isAncestor(above, page));
  }
  const order = query.get('order');
  if (order) result = ordered(site, model, order, query.has('offset'), result, orders);
  // Wagtail's TranslationOfFilter and LocaleFilter run here, between order and search.
  for (const name of ['translation_of', 'locale']) if (query.has(name)) throw unsupported(name);
  const text = query.get('search');
  if (text !== undefined) result = search.search(result, text, query.get('search_operator'), !query.has('order'));
  return result;
}

/** `?name=value` on a field: the test a page must pass, or a 400 for a value the field cannot hold. */
function fieldFilter(site: Site, name: string, kind: FieldKind, value: string): (page: SitePage) => boolean {
  const refuse = (reason: string) =>
    new BadRequest(`field filter error. '${value}' is not a valid value for ${name} (${reason})`);
  let wanted: unknown = value;
  if (kind === 'boolean') {
    if (value === 'true' || value === '1') wanted = true;
    else if (value === 'false' || value === '0') wanted = false;
    else throw refuse(`expected 'true' or 'false', got '${value}'`);
  } else if (kind === 'integer' || kind === 'relation') {
    const number = pythonInt(value);
    if (number === null)
      throw refuse(
        kind === 'integer'
          ? `invalid literal for int() with base 10: ${pythonRepr(value)}`
          : `Field 'id' expected a number but got ${pythonRepr(value)}.`,
      );
    wanted = number;
  } else if (value.includes('\0')) {
    throw new BadRequest(`field filter error. null characters are not allowed for ${name}`);
  }
  if (name === 'id') return (page) => BigInt(page.id) === wanted;
  return (page) => {
    let held = fieldValue(page, name, site.metaSet);
    if (kind === 'relation') held = (held as { id?: unknown } | null)?.id;
    if (typeof wanted !== 'bigint') return held === wanted;
    return Number.isInteger(held) && BigInt(held as number) === wanted;
  };
}

/**
 * The page `value` names for a tree filter: a published page's id, or `root` where the filter takes
 * it; a 400 otherwise, in Wagtail's words (`child_of must be a positive integer`, `missing`).
 */
function treePage(site: Site, name: string, value: string, missing: string, takesRoot: boolean): SitePage | 'root' {
  const id = pythonInt(value);
  if (id === null || id < 0n) {
    if (takesRoot && value === 'root') return 'root';
    throw new BadRequest(`${name} must be a positive integer`);
  }
  const page = site.pages.get(String(id));
  if (!page?.published) throw new BadRequest(missing);
  return page;
}

/** `offset` and `limit` as Wagtail's pagination reads them, `limitMax` its `WAGTAILAPI_LIMIT_MAX` (0: none). */
export function pagination(query: Query, limitMax: number): { offset: number; limit: number } {
  const read = (name: string, fallback: number) => {
    const value = query.get(name);
    if (value === undefined) return BigInt(fallback);
    const number = pythonInt(value);
    if (number === null || number < 0n) throw new BadRequest(`${name} must be a positive integer`);
    return number;
  };
  const offset = read('offset', 0);
  const limit = read('limit', limitMax ? Math.min(20, limitMax) : 20);
  if (limitMax && limit > BigInt(limitMax)) throw new BadRequest(`limit cannot be higher than ${limitMax}`);
  const clamp = (n: bigint) => Number(n > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : n);
  return { offset: clamp(offset), limit: clamp(limit) };
}
