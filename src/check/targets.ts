/**
 * What `check` and `inspect` read: page JSON files, folders of them, page ids or page
 * endpoint URLs fetched from the API, standard input, or every page of a site (its listing
 * walked). Pages come one at a time, so a run over 100,000 files or pages holds one folder
 * listing (or listing page) and a few pages, never all of them.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { createDispatcher } from '../client/http.js';
import { listingUrl, listPageIds, type SiteQuery } from '../client/listing.js';
import { type LoadedPage, type LoadPageOptions, loadPage, pageUrl } from '../client/pages.js';
import { escapedMessage, escapeText, InvalidArgumentError } from '../errors.js';
import { walkFiles } from '../fs/walk.js';
import { BASE_URL_PLACEHOLDER } from '../page/common.js';

export type { LoadedPage };

export type TargetOptions = Omit<LoadPageOptions, 'dispatcher'> & {
  /** Pages to leave out, by source (file path or URL), decided before they are read. */
  skip?: (source: string) => boolean;
  /** How many pages a site's listing holds, told when its first listing page is read (`loadSite`). */
  onTotal?: (total: number) => void;
};

const isRemote = (target: string) => /^\d+$/.test(target) || /^https?:\/\//i.test(target);

/**
 * Every page the targets name, in order (a folder's files sorted by path). Throws (exit 2)
 * for a target that cannot be read or fetched at all, or a folder with no `.json` file.
 */
export async function* loadTargets(targets: string[], options: TargetOptions): AsyncGenerator<LoadedPage> {
  const dispatcher = targets.some(isRemote) ? createDispatcher(options) : undefined;
  const { skip, onTotal: _, ...loadOptions } = options;
  try {
    for (const target of targets) {
      const sources = target === '-' || isRemote(target) ? [target] : jsonFiles(target);
      for await (const source of sources) {
        if (skip?.(source)) continue;
        const page = await loadPage(source, { ...loadOptions, ...(dispatcher && { dispatcher }) });
        yield fillBaseUrl(page, options.baseUrl);
      }
    }
  } finally {
    await dispatcher?.close();
  }
}

/** Pages fetched at once in a walk over a whole site: enough to hide the round trips, few enough for any server. */
export const SITE_PAGES_IN_FLIGHT = 8;

/**
 * Every page of the site at `options.baseUrl` that the listing gives for `query` (published
 * pages, in id order), each fetched from its page endpoint, `SITE_PAGES_IN_FLIGHT` at a time,
 * handed on in order. A listing that cannot be read throws (exit 2); a page listed but not
 * fetched (gone since, a 500) comes with `fetchError`, and the walk goes on.
 */
export async function* loadSite(query: SiteQuery, options: TargetOptions): AsyncGenerator<LoadedPage> {
  const { skip, baseUrl, onTotal, ...loadOptions } = options;
  if (!baseUrl)
    throw new InvalidArgumentError('--all-pages needs --base-url (or CONTENT_API_BASE_URL): the site to walk');
  const dispatcher = createDispatcher(options);
  const inFlight: Array<Promise<LoadedPage>> = [];
  let listed = 0;
  try {
    for await (const id of listPageIds(baseUrl, query, { ...loadOptions, dispatcher, onTotal })) {
      listed++;
      const source = pageUrl(baseUrl, id);
      if (skip?.(source)) continue;
      const page = loadPage(id, { ...loadOptions, baseUrl, dispatcher }).catch(
        (error: unknown): LoadedPage => ({ source, text: '', json: undefined, fetchError: escapedMessage(error) }),
      );
      inFlight.push(page);
      if (inFlight.length >= SITE_PAGES_IN_FLIGHT) yield await inFlight.shift()!;
    }
    while (inFlight.length > 0) yield await inFlight.shift()!;
    // A CI job pointed at the wrong site, or filters that match nothing, must not pass on nothing.
    if (listed === 0)
      throw new InvalidArgumentError(`${escapeText(listingUrl(baseUrl, query, 0))}: the listing gives no pages`);
  } finally {
    await Promise.allSettled(inFlight);
    await dispatcher.close();
  }
}

/**
 * A page from a `serve` content folder writes absolute URLs as `{base_url}/...`; with a base
 * URL they are filled in, as `serve` does, and the page is checked against that base.
 */
export function fillBaseUrl(page: LoadedPage, baseUrl: string | undefined): LoadedPage {
  if (!baseUrl || page.json === undefined || page.baseUrl || !page.text.includes(BASE_URL_PLACEHOLDER)) return page;
  const base = JSON.stringify(baseUrl.replace(/\/+$/, '')).slice(1, -1);
  const text = page.text.replaceAll(BASE_URL_PLACEHOLDER, base);
  return { ...page, text, json: JSON.parse(text), baseUrl };
}

/** A file, or every `.json` file below a folder (hidden names skipped, each real folder walked once). */
async function* jsonFiles(target: string): AsyncGenerator<string> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new InvalidArgumentError(`${target}: no such file, folder or page id`);
  if (!info.isDirectory()) {
    yield target;
    return;
  }
  let found = 0;
  const walk = walkFiles(target, {
    include: (name, isFolder) => !name.startsWith('.') && (isFolder || name.endsWith('.json')),
    onUnreadable: (folder, error) => {
      throw new InvalidArgumentError(`${folder}: cannot read the folder (${error.code ?? error.message})`);
    },
  });
  for await (const file of walk) {
    found++;
    yield path.join(target, file);
  }
  // A CI job pointed at the wrong folder must not pass on nothing.
  if (found === 0) throw new InvalidArgumentError(`${target}: no .json files in this folder`);
}
