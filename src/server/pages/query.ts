/**
 * Wagtail API v2's query parameters for pages, applied as `wagtail/api/v2/views.py` and
 * `filters.py` apply them, in their order and with their messages: `type`, then (on the listing)
 * unknown parameters, then the field filters, `child_of`, `ancestor_of`, `descendant_of`,
 * `order` and `search`; then `offset` and `limit`.
 */
import { BadRequest } from './errors.js';
import type { PageSearch } from './search.js';
import { compareIds, type FieldKind, fieldValue, membership, type PageType, type Site, type SitePage } from './site.js';

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

/** Python's `quote_plus`: only letters, digits and `_.-~` kept, a space as `+`. */
function quotePlus(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
    .replaceAll('%20', '+');
}

/** What `type` asks for: the types, and the one whose fields the view offers (null: `Page`'s only). */
export interface TypeQuery {
  types: PageType[] | null;
  model: PageType | null;
}

/** `type=app.Model[,app.Model]`, names compared without case; any that is not a type of the site: a 400. */
export function typeQuery(site: Site, query: Query): TypeQuery {
  const value = query.get('type');
  if (!value) return { types: null, model: null };
  const types = value.split(',').map((name) => {
    const type = /^[^.]+\.[^.]+$/.test(name) ? site.types.get(name.toLowerCase()) : undefined;
    if (!type) throw new BadRequest("type doesn't exist");
    return type;
  });
  // Named twice is still two to Wagtail, whose fields are then `Page`'s; each is tested once all the same.
  return { types: [...new Set(types)], model: types.length === 1 ? types[0]! : null };
}

/** The parameters every pages view knows, besides the fields it can filter on. */
const KNOWN_PARAMETERS = new Set([
  ...['limit', 'offset', 'fields', 'order', 'search', 'search_operator', '_', 'format'],
  ...['type', 'child_of', 'ancestor_of', 'descendant_of', 'translation_of', 'locale', 'site'],
]);
/** Known to Wagtail, but about sites and locales a content folder does not have. */
const UNSUPPORTED = ['translation_of', 'locale', 'site'];

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
  for (const name of UNSUPPORTED)
    if (query.has(name)) throw new BadRequest(`${name} is not supported: a content folder is one site in one locale`);
  let result = types ? pages.filter((page) => types.some((type) => type.name === page.type)) : [...pages];
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
  if (order) result = ordered(site, model, query, order, result, orders);
  const text = query.get('search');
  if (text !== undefined) result = search.search(result, text, query.get('search_operator'), !query.has('order'));
  return result;
}

/** Python's `int()` of a query value: spaces around, a sign, `_` between digits; null when it is not one. */
export function pythonInt(text: string): bigint | null {
  const match = /^\s*([+-]?)(\d+(?:_\d+)*)\s*$/.exec(text);
  return match ? BigInt(`${match[1]}${match[2]!.replaceAll('_', '')}`) : null;
}

/** Python's `repr()` of a string, cut to 200 characters as `%.200R` cuts it. */
function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text.replace(/[\\\n\r\t'"\x00-\x1f\x7f]/g, (char) => {
    if (char === '\\') return '\\\\';
    if (char === '\n') return '\\n';
    if (char === '\r') return '\\r';
    if (char === '\t') return '\\t';
    if (char === "'" || char === '"') return char === quote ? `\\${char}` : char;
    return `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`;
  });
  return Array.from(`${quote}${escaped}${quote}`).slice(0, 200).join('');
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

/** Whether `above` is an ancestor of `page` (not the page itself). */
function isAncestor(above: SitePage, page: SitePage): boolean {
  for (let at = page.parent; at; at = at.parent) if (at === above) return true;
  return false;
}

/** Every page of a site sorted by an `order`, kept for the next request that asks for it. */
export class OrderCache {
  static readonly MAX = 64;
  readonly #sorted = new Map<string, SitePage[]>();

  /** The pages of `pages` in the order of `all` sorted by `compare`, which is sorted once per `key`. */
  pick(key: string, all: readonly SitePage[], compare: (a: SitePage, b: SitePage) => number, pages: SitePage[]) {
    let sorted = this.#sorted.get(key);
    if (!sorted) {
      sorted = [...all].sort(compare);
      this.#sorted.set(key, sorted);
      if (this.#sorted.size > OrderCache.MAX) this.#sorted.delete(this.#sorted.keys().next().value!);
    }
    if (pages.length === all.length) return [...sorted];
    const wanted = membership(pages, all.length);
    return sorted.filter((page) => wanted[page.order] === 1);
  }
}

/** `order=field,-field` or `random`, each refusal as Wagtail's. Ties keep the order given (tree order). */
function ordered(
  site: Site,
  model: PageType | null,
  query: Query,
  order: string,
  pages: SitePage[],
  orders: OrderCache,
): SitePage[] {
  const columns = site.columns(model);
  const fields = order.split(',');
  if (fields.includes('random')) {
    if (fields.length > 1) throw new BadRequest('random ordering cannot be combined with other fields');
    if (query.has('offset')) throw new BadRequest('random ordering with offset is not supported');
    return shuffled(pages);
  }
  for (const field of fields)
    if (!columns.has(field.replace(/^-+/, ''))) throw new BadRequest(`cannot order by '${field}' (unknown field)`);
  // Wagtail strips every leading '-' to check the name; Django then refuses the second.
  if (fields.some((field) => field.startsWith('--')))
    throw new BadRequest(`cannot order by '${order}' (invalid field)`);
  // A field named again never decides (the first already did): each once, so a long `order` costs no more.
  const named = new Set<string>();
  const keys = fields.flatMap((field) => {
    const name = field.replace(/^-/, '');
    if (named.has(name)) return [];
    named.add(name);
    return [{ name, sign: field.startsWith('-') ? -1 : 1, relation: columns.get(name) === 'relation' }];
  });
  const keyOf = (page: SitePage, name: string, relation: boolean): unknown => {
    if (name === 'id') return BigInt(page.id);
    const value = fieldValue(page, name, site.metaSet);
    return relation ? (value as { id?: unknown } | null)?.id : value;
  };
  const compare = (a: SitePage, b: SitePage) => {
    for (const { name, sign, relation } of keys) {
      const c = compareValues(keyOf(a, name, relation), keyOf(b, name, relation));
      if (c !== 0) return sign * c;
    }
    return a.order - b.order;
  };
  // Which fields are columns depends on the type asked for, and so may their kinds.
  return orders.pick(`${model?.name ?? ''}\n${order}`, site.inTreeOrder, compare, pages);
}

/** Values of one field in order: numbers by value, strings by code point, false before true; nulls last. */
function compareValues(a: unknown, b: unknown): number {
  const rank = (value: unknown) => (value === null || value === undefined || typeof value === 'object' ? 1 : 0);
  if (rank(a) || rank(b)) return rank(a) - rank(b);
  if (typeof a === 'bigint' && typeof b === 'bigint') return compareIds(String(a), String(b));
  if (typeof a === typeof b) return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  return typeof a < typeof b ? -1 : 1;
}

function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
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
