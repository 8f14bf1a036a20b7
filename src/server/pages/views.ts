/**
 * Wagtail API v2's three views of pages over a content folder: the listing (`/api/v2/pages/`),
 * a page's detail with the listing's parameters (`/api/v2/pages/<id>/?fields=...`) and `find`
 * (`/api/v2/pages/find/?html_path=...`). Each answers a plain value to send as JSON, or throws
 * an `ApiRefusal` (400 or 404, Wagtail's message).
 */

import { NotFound } from './errors.js';
import { type FieldEntry, parseFields, selectFields } from './fields.js';
import { OrderCache } from './order.js';
import { checkParameters, filterPages, isOfType, pagination, type Query, type TypeQuery, typeQuery } from './query.js';
import { PageSearch } from './search.js';
import { Site, type SitePage } from './site.js';

export interface PagesApiOptions {
  /** The most items a listing request may ask for, as Wagtail's `WAGTAILAPI_LIMIT_MAX` (default 20); 0: no limit. */
  limitMax?: number | undefined;
}

/** Sets of fields whose items are kept as text (a front end asks for a few). */
const ITEM_FIELD_SETS = 4;

/** Parameters that only pick the page `find` redirects to; the others go on to its detail URL. */
const FIND_PARAMETERS = ['id', 'html_path'];

export class PagesApi {
  readonly site: Site;
  readonly limitMax: number;
  readonly #search: PageSearch;
  readonly #orders = new OrderCache();
  readonly #items = new Map<string, Map<SitePage, string>>();
  /** The published pages, in tree order: what the listing starts from. */
  readonly #published: SitePage[];

  constructor(records: ReadonlyMap<string, { json: unknown }>, options: PagesApiOptions = {}) {
    this.site = new Site(records);
    this.#search = new PageSearch(this.site.inTreeOrder);
    this.limitMax = options.limitMax ?? 20;
    this.#published = this.site.inTreeOrder.filter((page) => page.published);
  }

  /**
   * `GET /api/v2/pages/`: `{"meta": {"total_count": n}, "items": [...]}`, as JSON text (absolute URLs
   * still `{base_url}/...`). Each item's text is made once for a set of fields, then reused.
   */
  listing(query: Query): string {
    const types = typeQuery(this.site, query);
    checkParameters(this.site, types, query);
    const pages = filterPages(this.site, types, query, this.#published, this.#search, this.#orders);
    const { offset, limit } = pagination(query, this.limitMax);
    const fields = selectFields(this.site.fieldSet(types.model, 'listing'), this.#fieldEntries(query));
    const texts = this.#itemTexts(fields);
    const items = pages.slice(offset, offset + limit).map((page) => {
      let text = texts.get(page);
      if (text === undefined) {
        text = JSON.stringify(this.#item(page, fields));
        texts.set(page, text);
      }
      return text;
    });
    return `{"meta":{"total_count":${pages.length}},"items":[${items.join(',')}]}`;
  }

  /** The items made for one set of fields, page -> JSON text; the last `ITEM_FIELD_SETS` sets are kept. */
  #itemTexts(fields: readonly string[]): Map<SitePage, string> {
    const key = fields.join(',');
    let texts = this.#items.get(key);
    if (!texts) {
      texts = new Map();
      this.#items.set(key, texts);
      if (this.#items.size > ITEM_FIELD_SETS) this.#items.delete(this.#items.keys().next().value!);
    }
    return texts;
  }

  /**
   * `GET /api/v2/pages/<id>/` with parameters: the page (published or not, as the folder holds it)
   * if the query's filters keep it, else a 404; its fields as `fields` selects them, or null for
   * the page as stored. Parameters the view does not know are left alone, as Wagtail's are.
   */
  detail(id: string, query: Query): unknown {
    const page = this.site.pages.get(id);
    const types = typeQuery(this.site, query);
    const kept = filterPages(this.site, types, query, page ? [page] : [], this.#search, this.#orders);
    if (kept.length === 0) throw new NotFound(`No ${modelName(types)} matches the given query.`);
    if (!query.has('fields')) return null;
    const own = this.site.types.get(page!.type.toLowerCase()) ?? null;
    return this.#item(page!, selectFields(this.site.fieldSet(own, 'detail'), this.#fieldEntries(query)));
  }

  /**
   * `GET /api/v2/pages/find/`: the detail path (`/api/v2/pages/<id>/?<the other parameters>`) of the
   * published page whose `html_url` has the path `html_path`, else of the page `id`; a 404 `not found`.
   */
  find(query: Query): string {
    const types = typeQuery(this.site, query);
    const fits = (page: SitePage | undefined): page is SitePage =>
      page?.published === true && (!types.types || isOfType(types.types, page));
    let found: SitePage | undefined;
    const htmlPath = query.get('html_path');
    if (htmlPath !== undefined) {
      const routed = this.site.findByHtmlPath(htmlPath);
      // A path that leads nowhere ends the search; one that leads to a page the query leaves out tries `id`.
      if (!routed) throw new NotFound('not found');
      if (fits(routed)) found = routed;
    }
    const id = query.get('id');
    if (!found && id !== undefined && /^\d+$/.test(id)) {
      const page = this.site.pages.get(id.replace(/^0+(?=\d)/, ''));
      if (fits(page)) found = page;
    }
    if (!found) throw new NotFound('not found');
    return `/api/v2/pages/${found.id}/?${query.encodeWithout(FIND_PARAMETERS)}`;
  }

  #fieldEntries(query: Query): FieldEntry[] {
    const fields = query.get('fields');
    return fields === undefined ? [] : parseFields(fields);
  }

  /** A page as Wagtail's serializer writes it: `id` first, then `meta` (left out when empty), then the rest. */
  #item(page: SitePage, fields: readonly string[]): Record<string, unknown> {
    const item: Record<string, unknown> = {};
    const meta: Record<string, unknown> = {};
    const { metaSet } = this.site;
    if (fields.includes('id')) item.id = page.json.id;
    for (const field of fields)
      if (metaSet.has(field) && Object.hasOwn(page.meta, field)) meta[field] = page.meta[field];
    if (Object.keys(meta).length > 0) item.meta = meta;
    for (const field of fields)
      if (field !== 'id' && !metaSet.has(field) && Object.hasOwn(page.json, field)) item[field] = page.json[field];
    return item;
  }
}

/** The model a 404 names: the one type asked for, else `Page`. */
function modelName({ model }: TypeQuery): string {
  return model ? model.className : 'Page';
}
