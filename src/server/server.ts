/**
 * The read-only Content API over a content folder (spec section 4), with Wagtail API v2's listing,
 * `find` and detail parameters for pages (./pages/). Responses for a record as stored are prepared
 * once per base URL and format, then served from memory (a bounded cache).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { escapeText } from '../errors.js';
import { BASE_URL_PLACEHOLDER } from '../page/common.js';
import { resourceUrls } from '../page/links.js';
import { VERSION_PARAMETER } from '../renditions/rules.js';
import { ifNoneMatch } from './conditional.js';
import type { Content, ContentRecord } from './content.js';
import { serveMedia } from './media.js';
import { ApiRefusal } from './pages/errors.js';
import { Query } from './pages/query.js';
import { PagesApi } from './pages/views.js';
import { PreparedCache, type PreparedResponse } from './prepared-cache.js';

export interface ServerOptions {
  /** The base URL absolute URLs are built from; default: the request's Host. */
  baseUrl?: string | undefined;
  /** One line per request. */
  log?: ((line: string) => void) | undefined;
  /** The prepared responses held in memory (default: a `PreparedCache` of `PREPARED_CACHE_BYTES`, 64 MiB). */
  cache?: PreparedCache | undefined;
  /** The most items a listing request may ask for (`limit`), as Wagtail's `WAGTAILAPI_LIMIT_MAX`: 20; 0, none. */
  limitMax?: number | undefined;
}

const ALLOW = 'GET, HEAD, OPTIONS';
/** Longest request target accepted (Node itself limits headers to 16 KiB). */
const MAX_URL = 2048;
/** A page's id is its digits, looked up as written: `0101` or `1e2` names no page (a 404), never page 101. */
const PAGE_PATH = /^\/api\/v2\/pages\/(\d+)\/$/;
const LISTING_PATH = '/api/v2/pages/';
const FIND_PATH = '/api/v2/pages/find/';
const API_PATH = /^\/api\/(?:v2\/pages|quarterly|gallery)(?:\/|$)/;

export function createContentServer(content: Content, options: ServerOptions = {}): Server {
  const prepared = options.cache ?? new PreparedCache();
  const pagesApi = new PagesApi(content.pages, { limitMax: options.limitMax });

  /** The record as served from `base`, with `?format=api` applied to a page when asked. */
  const prepare = (record: ContentRecord, base: string, formatApi: boolean, isPage: boolean): PreparedResponse =>
    prepared.get(`${record.file}\n${base}\n${formatApi}`, () => {
      const text = record.text.replaceAll(BASE_URL_PLACEHOLDER, base);
      return ready(formatApi && isPage ? JSON.stringify(withFormatApi(JSON.parse(text))) : text);
    });

  /** A page, or pages, made for this request: `{base_url}` filled, `?format=api` applied when asked. */
  const made = (value: unknown, base: string, formatApi: boolean, pages: (value: unknown) => unknown[]) => {
    if (formatApi) {
      value = JSON.parse(JSON.stringify(value));
      for (const page of pages(value)) withFormatApi(page);
    }
    return ready(JSON.stringify(value).replaceAll(BASE_URL_PLACEHOLDER, base));
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    res.on('finish', () => {
      options.log?.(
        `${req.socket.remoteAddress ?? '-'} ${req.method} ${escapeText(req.url ?? '')} ${res.statusCode} ` +
          `${(performance.now() - started).toFixed(1)}ms`,
      );
    });
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, req, 500, { message: 'Internal error.' });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = req.url ?? '/';
    if (target.length > MAX_URL) return sendJson(res, req, 414, { message: 'Request-URI too long.' });
    let url: URL;
    try {
      url = new URL(target, 'http://placeholder.invalid');
    } catch {
      return sendJson(res, req, 400, { message: 'Malformed request URL.' });
    }
    const base = options.baseUrl?.replace(/\/+$/, '') ?? baseFromHost(req);
    if (!base) return sendJson(res, req, 400, { message: 'Bad Host header.' });
    const pathname = url.pathname;

    if (pathname.startsWith('/media/') && content.mediaRoot) {
      if (!allowed(req, res)) return;
      if (req.method === 'OPTIONS') return sendOptions(res);
      const version = url.searchParams.get(VERSION_PARAMETER);
      return serveMedia(req, res, content.mediaRoot, pathname.slice('/media/'.length), version, () =>
        notFound(req, res),
      );
    }
    if (!API_PATH.test(pathname)) return notFound(req, res);
    if (!pathname.endsWith('/')) {
      // As Django's APPEND_SLASH does for the API it comes from.
      res.writeHead(301, { location: `${pathname}/${url.search}`, 'content-length': 0 });
      return void res.end();
    }
    if (!allowed(req, res)) return;

    const format = url.searchParams.getAll('format').at(-1) ?? null;
    if (format !== null && format !== 'api' && format !== 'json') return notFound(req, res);
    const formatApi = format === 'api';
    if (pathname.startsWith(LISTING_PATH)) {
      try {
        return pages(req, res, pathname, url.search, base, formatApi);
      } catch (error) {
        if (error instanceof ApiRefusal) return sendJson(res, req, error.status, { message: error.message });
        throw error;
      }
    }
    for (const key of url.searchParams.keys()) {
      if (key !== 'format')
        return sendJson(res, req, 400, {
          message: `query parameter is not an operation or a recognised field: ${key}`,
        });
    }
    const record = content.resources.get(pathname);
    if (!record) return notFound(req, res);
    if (req.method === 'OPTIONS') return sendOptions(res);
    send(req, res, prepare(record, base, false, false));
  }

  /**
   * The page routes: the listing, `find`, and a page's detail; an `ApiRefusal` is thrown for the caller
   * to send. What a query answers is kept, as a record is (the folder does not change while served),
   * but for `order=random`.
   */
  function pages(
    req: IncomingMessage,
    res: ServerResponse,
    pathname: string,
    search: string,
    base: string,
    formatApi: boolean,
  ) {
    const query = new Query(new URLSearchParams(search));
    const answer = (make: () => PreparedResponse) =>
      query.get('order') === 'random' ? make() : prepared.get(`query\n${pathname}${search}\n${base}`, make);
    if (pathname === LISTING_PATH) {
      if (req.method === 'OPTIONS') return sendOptions(res);
      const items = (body: unknown) => (body as { items: unknown[] }).items;
      const listing = () => {
        const text = pagesApi.listing(query);
        if (formatApi) return made(JSON.parse(text), base, true, items);
        return ready(text.replaceAll(BASE_URL_PLACEHOLDER, base));
      };
      return send(req, res, answer(listing));
    }
    if (pathname === FIND_PATH) {
      if (req.method === 'OPTIONS') return sendOptions(res);
      res.writeHead(302, {
        location: `${base}${pagesApi.find(query)}`,
        allow: ALLOW,
        vary: 'Accept',
        'content-length': 0,
      });
      return void res.end();
    }
    const id = PAGE_PATH.exec(pathname)?.[1];
    if (id === undefined) return notFound(req, res);
    const record = content.pages.get(id);
    // OPTIONS names the methods, as Django REST framework answers it: no filter is run for it.
    if (req.method === 'OPTIONS')
      return record ? sendOptions(res) : sendJson(res, req, 404, { message: 'No Page matches the given query.' });
    // Only `format`: the page as stored, prepared once. Other parameters filter it or pick its fields.
    const selected = query.names().every((name) => name === 'format') ? null : pagesApi.detail(id, query);
    if (!record) return sendJson(res, req, 404, { message: 'No Page matches the given query.' });
    if (selected === null) return send(req, res, prepare(record, base, formatApi, true));
    send(
      req,
      res,
      answer(() => made(selected, base, formatApi, (page) => [page])),
    );
  }

  /** A prepared response: 304 when the client holds it already. */
  function send(req: IncomingMessage, res: ServerResponse, response: PreparedResponse): void {
    const headers = { allow: ALLOW, 'content-type': 'application/json', vary: 'Accept', etag: response.etag };
    if (ifNoneMatch(req.headers['if-none-match'], response.etag)) {
      res.writeHead(304, headers);
      return void res.end();
    }
    res.writeHead(200, { ...headers, 'content-length': response.body.length });
    res.end(req.method === 'HEAD' ? undefined : response.body);
  }

  return server;
}

/** A response body and its entity tag. */
function ready(text: string): PreparedResponse {
  const body = Buffer.from(text);
  return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` };
}

/** `page` with `?format=api` on the nested URLs of its linked resources (spec 4.1, rule 2), changed in place. */
function withFormatApi(page: unknown): unknown {
  for (const { holder } of resourceUrls(page))
    if (typeof holder.url === 'string' && !holder.url.includes('?')) holder.url = `${holder.url}?format=api`;
  return page;
}

/** Only GET, HEAD and OPTIONS: anything else is a 405 naming what is allowed. */
function allowed(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'OPTIONS') return true;
  res.setHeader('allow', ALLOW);
  sendJson(res, req, 405, { message: `Method "${req.method}" not allowed.` });
  return false;
}

function sendOptions(res: ServerResponse): void {
  res.writeHead(200, { allow: ALLOW, 'content-length': 0, vary: 'Accept' });
  res.end();
}

function notFound(req: IncomingMessage, res: ServerResponse): void {
  sendJson(res, req, 404, { message: 'Not found.' });
}

function sendJson(res: ServerResponse, req: IncomingMessage, status: number, body: unknown): void {
  const text = Buffer.from(JSON.stringify(body));
  // As Django REST framework sends it on every response of the API, refusals included.
  res.writeHead(status, {
    allow: ALLOW,
    'content-type': 'application/json',
    'content-length': text.length,
    vary: 'Accept',
  });
  res.end(req.method === 'HEAD' ? undefined : text);
}

/** Longest Host accepted: a DNS name (253) and a port. Each `{base_url}` in a record becomes it. */
const MAX_HOST = 261;

/** `http://<Host>` when the Host header is a plain host[:port]; null otherwise. */
function baseFromHost(req: IncomingMessage): string | null {
  const host = req.headers.host;
  return host && host.length <= MAX_HOST && /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/.test(host)
    ? `http://${host}`
    : null;
}
