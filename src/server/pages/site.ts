/**
 * The pages of a content folder as Wagtail's API v2 sees a site: a tree built from each page's
 * own `meta.parent`, walked in tree order (Wagtail's `path` order; siblings by id, the order they
 * were made in), its page types and the fields each offers, and which pages are published
 * (spec 3: `first_published_at` holds a timestamp). Built once, when the server starts.
 */
import { BASE_URL_PLACEHOLDER } from '../../page/common.js';
import type { FieldSet } from './fields.js';

type Json = Record<string, unknown>;

export interface SitePage {
  /** The id as canonical digits, the content folder's key. */
  id: string;
  json: Json;
  meta: Json;
  /** `meta.type`, `site.PresentationPage`; '' when the page has none. */
  type: string;
  /** The page above it in the tree, or null for a page at the top. */
  parent: SitePage | null;
  children: SitePage[];
  published: boolean;
  /** Its place in tree order. */
  order: number;
  /** How many pages its subtree holds, itself included: they are the next ones in tree order. */
  size: number;
}

/** How a field's filter value is read (Wagtail converts by the model field's class). */
export type FieldKind = 'integer' | 'boolean' | 'relation' | 'text';

/** One page type: its name as written and the fields its pages carry beyond `id` and `meta`. */
export interface PageType {
  name: string;
  /** The class part, `PresentationPage`: Wagtail's 404 names it (`No PresentationPage matches ...`). */
  className: string;
  bodyFields: string[];
  kinds: Map<string, FieldKind>;
}

/** Wagtail's meta fields of a page, in its order; `parent` on a page's own detail only. */
export const META_FIELDS = [
  'type',
  'detail_url',
  'html_url',
  'slug',
  'show_in_menus',
  'seo_title',
  'search_description',
  'first_published_at',
  'alias_of',
  'parent',
] as const;
const LISTING_DEFAULTS = ['id', 'type', 'detail_url', 'title', 'html_url', 'slug', 'first_published_at'];
const NESTED_DEFAULTS = ['id', 'type', 'detail_url', 'title'];
const DETAIL_ONLY = 'parent';
/** The fields of Wagtail's `Page` that are database columns: filters and `order` take them. */
const PAGE_COLUMNS: ReadonlyMap<string, FieldKind> = new Map<string, FieldKind>([
  ['id', 'integer'],
  ['title', 'text'],
  ['slug', 'text'],
  ['show_in_menus', 'boolean'],
  ['seo_title', 'text'],
  ['search_description', 'text'],
  ['first_published_at', 'text'],
  ['alias_of', 'relation'],
]);

export class Site {
  readonly pages = new Map<string, SitePage>();
  /** Every page in tree order, published or not. */
  readonly inTreeOrder: SitePage[] = [];
  /** The site's root page (the one page at the top, when only one is), or null when it is not in the folder. */
  readonly rootPage: SitePage | null;
  /** The root page's children: the pages at the top when the root page is not in the folder. */
  readonly rootChildren: SitePage[];
  /** Lower-cased type name -> type. */
  readonly types = new Map<string, PageType>();
  /** Meta fields, Wagtail's then any other a page carries, in order. */
  readonly metaFields: string[];
  readonly metaSet: ReadonlySet<string>;
  /** Published pages by the path of their `html_url`, components joined by `/`. */
  readonly #byHtmlPath = new Map<string, SitePage>();
  /** What `fieldSet` and `columns` made, for each type (at most one each per type of the site). */
  readonly #fieldSets = new Map<string, FieldSet>();
  readonly #columns = new Map<PageType, Map<string, FieldKind>>();

  constructor(records: ReadonlyMap<string, { json: unknown }>) {
    const metaFields = new Set<string>(META_FIELDS);
    for (const [id, record] of records) {
      const json = record.json as Json;
      const meta = (typeof json.meta === 'object' && json.meta !== null ? json.meta : {}) as Json;
      for (const key of Object.keys(meta)) if (key !== 'id' && key !== 'title') metaFields.add(key);
      const type = typeof meta.type === 'string' ? meta.type : '';
      const published = typeof meta.first_published_at === 'string';
      this.pages.set(id, { id, json, meta, type, parent: null, children: [], published, order: 0, size: 1 });
      this.#addType(type, json);
    }
    this.metaFields = [...metaFields];
    this.metaSet = metaFields;
    const byId = (a: SitePage, b: SitePage) => compareIds(a.id, b.id);
    const all = [...this.pages.values()].sort(byId);
    const parentOf = (page: SitePage) => {
      const id = (page.meta.parent as { id?: unknown } | null | undefined)?.id;
      return Number.isSafeInteger(id) ? this.pages.get(String(id)) : undefined;
    };
    for (const page of all) parentOf(page)?.children.push(page);
    // Tree order, depth first. A page whose parent is not in the folder is at the top; so is the first
    // page of a parent cycle (hostile content), so every page is reached once and the walk ends.
    const placed = new Set<SitePage>();
    const place = (top: SitePage) => {
      const stack = [top];
      while (stack.length > 0) {
        const page = stack.pop()!;
        if (placed.has(page)) continue;
        placed.add(page);
        page.order = this.inTreeOrder.length;
        this.inTreeOrder.push(page);
        for (const child of [...page.children].reverse()) if (!placed.has(child)) stack.push(child);
      }
    };
    const tops = all.filter((page) => parentOf(page) === undefined);
    for (const top of tops) place(top);
    for (const page of all) {
      if (placed.has(page)) continue;
      tops.push(page);
      place(page);
      // The parent it had is below it now: it is not that page's child in this tree.
      const children = parentOf(page)!.children;
      children.splice(children.indexOf(page), 1);
    }
    const top = new Set(tops);
    for (const page of all) page.parent = top.has(page) ? null : parentOf(page)!;
    for (const page of [...this.inTreeOrder].reverse()) if (page.parent) page.parent.size += page.size;
    // One page alone at the top is the site's root page (Wagtail's home page, whose parent, the tree's root,
    // is never served); several are the children of a root page the folder does not hold.
    const home = tops.length === 1 ? tops[0]! : null;
    this.rootPage = home;
    this.rootChildren = home ? home.children : tops;
    for (const page of this.inTreeOrder) {
      const path = page.published ? htmlPath(page.meta.html_url) : null;
      if (path !== null && !this.#byHtmlPath.has(path)) this.#byHtmlPath.set(path, page);
    }
  }

  #addType(name: string, json: Json): void {
    const key = name.toLowerCase();
    let type = this.types.get(key);
    if (!type) {
      type = { name, className: name.slice(name.indexOf('.') + 1), bodyFields: ['id', 'title'], kinds: new Map() };
      this.types.set(key, type);
    }
    for (const [field, value] of Object.entries(json)) {
      if (field === 'meta' || field === 'id') continue;
      if (!type.bodyFields.includes(field)) type.bodyFields.push(field);
      if (!type.kinds.has(field) && value !== null && value !== undefined) type.kinds.set(field, kindOf(value));
    }
  }

  /** The published page whose `html_url` has this path (`/collecting/fairs/x/`, or without slashes). */
  findByHtmlPath(path: string): SitePage | undefined {
    return this.#byHtmlPath.get(path.split('/').filter(Boolean).join('/'));
  }

  /**
   * The fields a view offers for `type` (null: Wagtail's `Page`, as with no `type` or several):
   * the listing's (no `parent`) or a page's detail (all of them, by default).
   */
  fieldSet(type: PageType | null, view: 'listing' | 'detail'): FieldSet {
    const key = `${type?.name ?? ''}\n${view}`;
    let set = this.#fieldSets.get(key);
    if (!set) {
      const body = type ? type.bodyFields : ['id', 'title'];
      const meta = view === 'listing' ? this.metaFields.filter((field) => field !== DETAIL_ONLY) : this.metaFields;
      const all = [...new Set([...body, ...meta])];
      const relation: FieldSet = {
        all: ['id', 'title', ...this.metaFields.filter((field) => field !== DETAIL_ONLY)],
        defaults: NESTED_DEFAULTS,
        nested: new Map(),
      };
      set = { all, defaults: view === 'listing' ? LISTING_DEFAULTS : all, nested: new Map([['alias_of', relation]]) };
      this.#fieldSets.set(key, set);
    }
    return set;
  }

  /** The fields that filters and `order` take for `type` (null: `Page`), with how a value is read. */
  columns(type: PageType | null): ReadonlyMap<string, FieldKind> {
    if (!type) return PAGE_COLUMNS;
    let columns = this.#columns.get(type);
    if (!columns) {
      columns = new Map(PAGE_COLUMNS);
      for (const field of type.bodyFields) if (!columns.has(field)) columns.set(field, type.kinds.get(field) ?? 'text');
      this.#columns.set(type, columns);
    }
    return columns;
  }
}

function kindOf(value: unknown): FieldKind {
  if (typeof value === 'boolean') return 'boolean';
  return Number.isInteger(value) ? 'integer' : 'text';
}

/** Two ids as digits, in numeric order (past 2^53 too). */
export function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** The path of a page's `html_url` (`{base_url}/a/b/` or an absolute URL), components joined by `/`. */
function htmlPath(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  let path = url;
  if (url.startsWith(BASE_URL_PLACEHOLDER)) path = url.slice(BASE_URL_PLACEHOLDER.length);
  else if (URL.canParse(url)) path = decodedPath(new URL(url).pathname);
  return path.split('/').filter(Boolean).join('/');
}

/** A URL's path as `html_path` gives it (decoded), or as it is when it does not decode. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/** A page's field's value: meta fields from `meta`, the others from the page itself. */
export function fieldValue(page: SitePage, field: string, metaFields: ReadonlySet<string>): unknown {
  return metaFields.has(field) ? page.meta[field] : page.json[field];
}

/** Which pages of a site (by their place in tree order) are among `pages`: 1 for each. */
export function membership(pages: readonly SitePage[], size: number): Uint8Array {
  const wanted = new Uint8Array(size);
  for (const page of pages) wanted[page.order] = 1;
  return wanted;
}

/** Whether `above` is an ancestor of `page` (not the page itself): a test of their places in tree order. */
export function isAncestor(above: SitePage, page: SitePage): boolean {
  return above.order < page.order && page.order < above.order + above.size;
}
