/**
 * `order`, as Wagtail's `OrderingFilter` reads it: fields (`-` for descending) or `random`, each
 * refusal its 400; a site's pages sorted once for each `order` asked for, then picked from.
 */
import { BadRequest } from './errors.js';
import { compareIds, fieldValue, membership, type PageType, type Site, type SitePage } from './site.js';

/** Every page of a site sorted by an `order`, kept for the next request that asks for it. */
export class OrderCache {
  static readonly MAX = 16;
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
export function ordered(
  site: Site,
  model: PageType | null,
  order: string,
  withOffset: boolean,
  pages: SitePage[],
  orders: OrderCache,
): SitePage[] {
  const columns = site.columns(model);
  const fields = order.split(',');
  if (fields.includes('random')) {
    if (fields.length > 1) throw new BadRequest('random ordering cannot be combined with other fields');
    if (withOffset) throw new BadRequest('random ordering with offset is not supported');
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

/** Values of one field in order: numbers by value, strings by UTF-16 code unit, false before true; nulls last. */
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
