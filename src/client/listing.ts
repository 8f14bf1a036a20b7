/**
 * Every page of a site, from Wagtail API v2's listing (`GET {base_url}/api/v2/pages/`), walked a
 * listing page at a time in id order: only the ids of one listing page are held, whatever the
 * size of the site. Works against `serve` and a real Wagtail site alike.
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { escapeText, InvalidArgumentError } from '../errors.js';
import { issuePath } from '../json.js';
import { fetchJson, HttpError, type HttpOptions } from './http.js';
import { pageUrl } from './pages.js';

/** Which pages: the listing's own filters. */
export interface SiteQuery {
  /** Page types, `site.PresentationPage` (several: comma-separated, as Wagtail takes them). */
  type?: string | undefined;
  /** Only the children of this page id (or `root`). */
  childOf?: string | undefined;
  /** Only the descendants of this page id (or `root`). */
  descendantOf?: string | undefined;
}

/**
 * The listing URL for the items from `offset`: only their ids (`fields=_,id`), in id order. No
 * `limit`: a site answers its own default, at most 20 and never over its `WAGTAILAPI_LIMIT_MAX`,
 * which a `limit` of ours could pass (a 400); the walk goes on from the items it got.
 */
export function listingUrl(baseUrl: string, query: SiteQuery, offset: number): string {
  const url = new URL('api/v2/pages/', pageUrl(baseUrl, 0).replace(/api\/v2\/pages\/0\/$/, ''));
  const parameters: Array<[string, string | undefined]> = [
    ['type', query.type],
    ['child_of', query.childOf],
    ['descendant_of', query.descendantOf],
    ['fields', '_,id'],
    ['order', 'id'],
    ['offset', String(offset)],
  ];
  for (const [name, value] of parameters) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

/**
 * The id of every page the listing gives, in id order, as digits. Throws (the command cannot run)
 * when a listing page cannot be fetched or is not a listing: a `{"meta": {"total_count": n},
 * "items": [{"id": n}, ...]}`, its ids rising. The walk ends at the count its first page gave (a
 * count that grows as the walk goes cannot keep it going) or at a page with no items; rising ids
 * keep it free of repeats, and show a server that ignores `order=id`.
 */
export async function* listPageIds(
  baseUrl: string,
  query: SiteQuery,
  options: HttpOptions & { dispatcher: Dispatcher; onTotal?: ((total: number) => void) | undefined },
): AsyncGenerator<string> {
  let offset = 0;
  let last: number | undefined;
  let total: number | undefined;
  for (;;) {
    const url = listingUrl(baseUrl, query, offset);
    const { json } = await fetchJson(url, options.dispatcher, options).catch((error: unknown) => {
      // A 400 is the server refusing a filter (an unknown type, a page that is not there): said as Wagtail says it.
      if (error instanceof HttpError && error.status === 400)
        throw new InvalidArgumentError(`the listing refused the query: ${error.message}`);
      throw error;
    });
    const listed = listingItems(url, json);
    if (total === undefined) {
      total = listed.total;
      options.onTotal?.(total);
    }
    // No more than the first page's count, however many a page brings.
    const ids = listed.ids.slice(0, Math.max(0, total - offset));
    for (const id of ids) {
      if (last !== undefined && id <= last)
        throw new InvalidArgumentError(
          `${escapeText(url)}: page ${id} after page ${last}: the listing is not in id order (order=id); ` +
            'a site that changed during the walk says so too: run again',
        );
      last = id;
      yield String(id);
    }
    offset += ids.length;
    if (ids.length === 0 || offset >= total) return;
  }
}

/** What the walk reads of a listing page; anything else in it is left alone. */
const listingSchema = z.object({
  meta: z.object({ total_count: z.number().int().nonnegative() }),
  items: z.array(z.object({ id: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER) })),
});

/** The ids of one listing page and its total count; throws naming the URL and the first JSON path otherwise. */
function listingItems(url: string, json: unknown): { total: number; ids: number[] } {
  const parsed = listingSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidArgumentError(
      `${escapeText(url)}: ${issuePath(issue.path)}: ${escapeText(issue.message)}; not a Wagtail API v2 listing`,
    );
  }
  return { total: parsed.data.meta.total_count, ids: parsed.data.items.map((item) => item.id) };
}
