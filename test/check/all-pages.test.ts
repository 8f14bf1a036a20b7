/**
 * `check --all-pages` and `inspect --all-pages`: a site's Wagtail API v2 listing walked a listing
 * page at a time, every page it gives fetched from its detail URL, in id order. Mostly the
 * library in-process (listPageIds, loadSite, CheckRun, inspectSite) against `serve` over
 * samples/content, a generated folder of 46 pages, and a server of our own that misbehaves;
 * the built binary only for what the CLI alone does: exit codes, one-line refusals, reporters.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CheckedPage, type CheckOptions, CheckRun } from '../../src/check/check.js';
import { loadSite, type TargetOptions } from '../../src/check/targets.js';
import { runInspect } from '../../src/cli/commands/inspect/run.js';
import { siteFrom } from '../../src/cli/options.js';
import { buildProgram } from '../../src/cli/program.js';
import { createDispatcher } from '../../src/client/http.js';
import { listingUrl, listPageIds, type SiteQuery } from '../../src/client/listing.js';
import { ContentApiError, InvalidArgumentError } from '../../src/errors.js';
import { inspectSite } from '../../src/inspect/inspect.js';
import type { InspectReport } from '../../src/inspect/report.js';
import { loadContent } from '../../src/server/content.js';
import { createContentServer } from '../../src/server/server.js';
import { runCli } from '../cli/run-cli.js';

const SAMPLES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../samples/content');
/** No retries: a 5xx answers at once, and the tests stay fast. */
const FAST = { retries: 0, timeoutMs: 5_000 };

/** A server listening on loopback, port 0; its base URL. */
async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
const close = (server: Server | undefined) =>
  new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));

/** The id a page endpoint URL names. */
const idOf = (source: string) => /\/api\/v2\/pages\/(\d+)\/$/.exec(source)?.[1] ?? source;

/** `check --all-pages` in-process: every page checked, in the order handed on, and the counts. */
async function checkSite(query: SiteQuery, pages: TargetOptions, options: CheckOptions = {}) {
  const run = new CheckRun(options);
  const checked: CheckedPage[] = [];
  for await (const page of run.run(loadSite(query, { ...FAST, ...pages }))) checked.push(page);
  return { checked, summary: run.summary };
}

/** Every id the listing gives, as listPageIds walks it. */
async function listAll(baseUrl: string, query: SiteQuery = {}): Promise<string[]> {
  const dispatcher = createDispatcher(FAST);
  const ids: string[] = [];
  try {
    for await (const id of listPageIds(baseUrl, query, { ...FAST, dispatcher })) ids.push(id);
  } finally {
    await dispatcher.close();
  }
  return ids;
}

/** The request targets a content server logged, by path. */
const requested = (log: string[], pathname: string) =>
  log
    .map((line) => / (?:GET|HEAD) (\S+) /.exec(line)?.[1])
    .filter((target): target is string => target !== undefined)
    .map((target) => new URL(target, 'http://x.invalid'))
    .filter((url) => url.pathname === pathname);

/** Runs `fn` with standard output and error captured (the CLI's `printData` and `printMessage`). */
async function captured<T>(fn: () => Promise<T>): Promise<{ value: T; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    stdout += String(chunk);
    return true;
  }) as typeof process.stdout.write);
  const err = vi.spyOn(process.stderr, 'write').mockImplementation(((chunk: unknown) => {
    stderr += String(chunk);
    return true;
  }) as typeof process.stderr.write);
  try {
    return { value: await fn(), stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

/** How the CLI's entry point (main.ts) ends on `error`: exit 2 and one line, for a ContentApiError. */
function expectExit2(error: unknown, message: string | RegExp): void {
  expect(error).toBeInstanceOf(ContentApiError);
  const text = (error as Error).message;
  expect(text).not.toContain('\n');
  if (typeof message === 'string') expect(text).toContain(message);
  else expect(text).toMatch(message);
}

/** One line on stderr, `error: ...`, nothing on stdout, exit 2. */
function expectCliExit2(result: { code: number | null; stdout: string; stderr: string }, message: string): void {
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
  expect(result.stderr).toContain(message);
  expect(result.code).toBe(2);
}

// --- samples/content, served ---

let samples: Server;
let base: string;

beforeAll(async () => {
  samples = createContentServer(await loadContent(SAMPLES));
  base = await listen(samples);
});
afterAll(() => close(samples));

describe('samples/content served (pages 100, 101, 200 published; 201 not)', () => {
  it('check --all-pages: the listing gives 100, 101, 200, each checked in id order, no findings', async () => {
    const { checked, summary } = await checkSite({}, { baseUrl: base });
    expect(checked.map((page) => page.source)).toEqual(
      ['100', '101', '200'].map((id) => `${base}/api/v2/pages/${id}/`),
    );
    expect(checked.map((page) => page.problems)).toEqual([[], [], []]);
    expect(summary).toMatchObject({ pages: 3, errors: 0, warnings: 0 });
  });

  it('CLI: check --all-pages --verify-files <base> --reporter json: 100, 101, 200 in order, exit 0', async () => {
    const result = await runCli([
      'check',
      '--all-pages',
      '--base-url',
      base,
      '--verify-files',
      base,
      '--reporter',
      'json',
    ]);
    expect(result.stderr).toBe('');
    const report = JSON.parse(result.stdout);
    expect(report.pages.map((page: { source: string }) => page.source)).toEqual(
      ['100', '101', '200'].map((id) => `${base}/api/v2/pages/${id}/`),
    );
    expect(report.pages.flatMap((page: { problems: unknown[] }) => page.problems)).toEqual([]);
    expect(report).toMatchObject({ errors: 0, warnings: 0 });
    expect(report.files.probed).toBeGreaterThan(0);
    expect(result.code).toBe(0);
  });
});

describe("the listing's filters: --type, --child-of, --descendant-of", () => {
  const ids = async (query: SiteQuery) =>
    (await checkSite(query, { baseUrl: base })).checked.map((page) => idOf(page.source));

  it('each narrows the walk as Wagtail filters the listing', async () => {
    expect(await ids({ type: 'site.PresentationPage' })).toEqual(['101']); // 201 is one too, unpublished
    expect(await ids({ childOf: '100' })).toEqual(['101']);
    expect(await ids({ descendantOf: 'root' })).toEqual(['100', '101', '200']);
  });

  it("the listing URL carries them, with only ids asked for, in id order, at the site's own page size", () => {
    const url = new URL(listingUrl(`${base}/`, { type: 'site.PresentationPage', childOf: '100' }, 40));
    expect(`${url.origin}${url.pathname}`).toBe(`${base}/api/v2/pages/`);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      type: 'site.PresentationPage',
      child_of: '100',
      fields: '_,id',
      order: 'id',
      offset: '40',
    });
  });

  it('a filter the server refuses (400) is exit 2, said as Wagtail says it', async () => {
    const refused = async (query: SiteQuery) => {
      const error = await checkSite(query, { baseUrl: base }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      return error;
    };
    const unknownType = await refused({ type: 'site.NoSuchPage' });
    expectExit2(unknownType, 'the listing refused the query: ');
    expectExit2(unknownType, "type doesn't exist");
    expectExit2(unknownType, listingUrl(base, { type: 'site.NoSuchPage' }, 0));
    // 201 is in the folder, but unpublished: Wagtail knows no such parent.
    expectExit2(await refused({ childOf: '201' }), /the listing refused the query: .*parent page doesn't exist/);
  });

  it('a filter that matches no page is exit 2 naming the listing, never a pass on nothing', async () => {
    const error = await checkSite({ childOf: '101' }, { baseUrl: base }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expectExit2(error, `${listingUrl(base, { childOf: '101' }, 0)}: the listing gives no pages`);
  });

  it('CLI: check --all-pages --child-of 101: exit 2, one line, no report', async () => {
    const result = await runCli(['check', '--all-pages', '--child-of', '101', '--base-url', base]);
    expectCliExit2(result, 'the listing gives no pages');
    expect(result.stderr).toContain('child_of=101');
  });
});

// --- 46 pages: more than one listing page ---

describe('a site of more than one listing page', () => {
  /** 95..139: two-digit ids before three-digit ones, as numbers sort and strings do not. */
  const GENERATED = Array.from({ length: 45 }, (_, i) => 95 + i);
  let folder: string;
  let server: Server;
  let serverBase: string;
  const log: string[] = [];

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'content-api-all-pages-'));
    await mkdir(path.join(folder, 'pages'));
    const template = JSON.parse(await readFile(path.join(SAMPLES, 'pages/201.json'), 'utf8'));
    await writeFile(path.join(folder, 'pages/200.json'), await readFile(path.join(SAMPLES, 'pages/200.json'), 'utf8'));
    for (const id of GENERATED) {
      const page = structuredClone(template);
      page.id = id;
      page.title = `Installation ${id}`;
      page.meta.slug = `installation-${id}`;
      page.meta.detail_url = `{base_url}/api/v2/pages/${id}/`;
      page.meta.html_url = `{base_url}/collecting/installations/installation-${id}/`;
      page.meta.first_published_at = '2026-04-02T08:00:00.000000';
      await writeFile(path.join(folder, `pages/${id}.json`), JSON.stringify(page, null, 2));
    }
    server = createContentServer(await loadContent(folder), { log: (line) => log.push(line) });
    serverBase = await listen(server);
  });
  afterAll(async () => {
    await close(server);
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('all 46 pages come out in id order; the listing is asked at offsets 0, 20 and 40', async () => {
    log.length = 0;
    const { checked, summary } = await checkSite({}, { baseUrl: serverBase });
    expect(checked.map((page) => idOf(page.source))).toEqual([...GENERATED.map(String), '200']);
    expect(checked.flatMap((page) => page.problems)).toEqual([]);
    expect(summary.pages).toBe(46);
    const listings = requested(log, '/api/v2/pages/');
    expect(listings.map((url) => url.searchParams.get('offset'))).toEqual(['0', '20', '40']);
    for (const url of listings) {
      // No limit: a site answers its own default (at most 20), which a limit of ours could pass.
      expect(url.searchParams.has('limit')).toBe(false);
      expect(url.searchParams.get('order')).toBe('id');
      expect(url.searchParams.get('fields')).toBe('_,id');
    }
    // Each listed page fetched once from its detail URL.
    const details = log.map((line) => / GET \/api\/v2\/pages\/(\d+)\/ /.exec(line)?.[1]).filter(Boolean);
    expect(details.sort()).toEqual([...GENERATED.map(String), '200'].sort());
  });
});

// --- a server of our own: a page that fails, listings that are wrong ---

/** A page as a site answers it: samples/content/pages/100.json, `{base_url}` filled, as page `id`. */
async function pageAs(baseUrl: string, id: number): Promise<string> {
  const text = await readFile(path.join(SAMPLES, 'pages/100.json'), 'utf8');
  const page = JSON.parse(text.replaceAll('{base_url}', baseUrl));
  page.id = id;
  page.meta.detail_url = `${baseUrl}/api/v2/pages/${id}/`;
  return JSON.stringify(page);
}

describe('a server of its own', () => {
  let own: Server;
  let ownBase: string;
  /** Listing requests per scenario. */
  const listings = new Map<string, number>();
  /** Detail requests at once, and the most there were (`slow`). */
  let active = 0;
  let mostActive = 0;

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const listing = (ids: number[], total: number, offset: number) => ({
    meta: { total_count: total },
    items: ids.slice(offset, offset + 20).map((id) => ({ id, meta: { type: 'site.PresentationPage' } })),
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x.invalid');
    const [, scenario = '', rest = ''] = /^\/([\w-]+)(\/.*)$/.exec(url.pathname) ?? [];
    const scenarioBase = `${ownBase}/${scenario}`;
    const offset = Number(url.searchParams.get('offset') ?? 0);
    if (rest === '/api/v2/pages/') {
      const count = (listings.get(scenario) ?? 0) + 1;
      listings.set(scenario, count);
      switch (scenario) {
        case 'fetch-fail':
          return json(res, 200, listing([1, 2, 3], 3, offset));
        case 'slow':
          return json(res, 200, listing([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12], 12, offset));
        case 'unordered':
          return json(res, 200, listing([3, 2], 2, offset));
        case 'not-listing':
          return json(res, 200, { items: [{ title: 'x' }] });
        case 'html':
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          return void res.end('<!doctype html><html><body>Welcome</body></html>');
        case 'endless':
          // Says a million, gives two, then nothing; a walk that keeps asking is stopped by a 500 here.
          if (count > 5) return json(res, 500, { message: 'asked too often' });
          return json(res, 200, listing(offset === 0 ? [1, 2] : [], 1_000_000, 0));
        case 'growing': {
          // Twenty new, rising ids on every page, and a count one past them: the walk must not follow it.
          if (count > 5) return json(res, 500, { message: 'asked too often' });
          const ids = Array.from({ length: 20 }, (_, i) => offset + i + 1);
          return json(res, 200, { meta: { total_count: offset + 21 }, items: ids.map((id) => ({ id })) });
        }
      }
    }
    const detail = /^\/api\/v2\/pages\/(\d+)\/$/.exec(rest);
    if (detail) {
      const id = Number(detail[1]);
      if (scenario === 'fetch-fail' && id === 2) return json(res, 500, { message: 'Internal error.' });
      if (scenario === 'slow') {
        active++;
        mostActive = Math.max(mostActive, active);
        await new Promise((resolve) => setTimeout(resolve, 40));
        active--;
      }
      return json(res, 200, await pageAs(scenarioBase, id));
    }
    json(res, 404, { message: 'Not found.' });
  }

  beforeAll(async () => {
    own = createServer((req, res) => {
      handle(req, res).catch(() => json(res, 500, { message: 'test server failed' }));
    });
    ownBase = await listen(own);
  });
  afterAll(() => close(own));

  describe('a page listed but not fetched', () => {
    it('is a page-fetch finding naming its URL; the pages around it are checked', async () => {
      const site = `${ownBase}/fetch-fail`;
      const { checked, summary } = await checkSite({}, { baseUrl: site });
      expect(checked.map((page) => page.source)).toEqual([1, 2, 3].map((id) => `${site}/api/v2/pages/${id}/`));
      expect(checked[0]!.problems).toEqual([]);
      expect(checked[2]!.problems).toEqual([]);
      expect(checked[1]!.problems).toHaveLength(1);
      expect(checked[1]!.problems[0]).toMatchObject({ severity: 'error', path: '$', rule: 'page-fetch' });
      expect(checked[1]!.problems[0]!.message).toContain(`cannot fetch: ${site}/api/v2/pages/2/`);
      expect(checked[1]!.problems[0]!.message).toContain('HTTP 500');
      expect(summary).toMatchObject({ pages: 3, errors: 1, warnings: 0 });
    });

    it('inspect: a report each for 1 and 3, one error line for 2, the count; exit 1', async () => {
      const site = `${ownBase}/fetch-fail`;
      const { value, stdout, stderr } = await captured(() => runInspect({}, { baseUrl: site, json: true, ...FAST }));
      const reports: InspectReport[] = JSON.parse(stdout);
      expect(reports.map((report) => report.url)).toEqual([1, 3].map((id) => `${site}/api/v2/pages/${id}/`));
      expect(reports.map((report) => report.errors)).toEqual([0, 0]);
      const lines = stderr.split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^error: cannot fetch: \S+\/pages\/2\/: HTTP 500/);
      expect(lines[0]).toContain(`${site}/api/v2/pages/2/`);
      expect(lines[1]).toBe('3 page(s) inspected: 0 with errors, 1 could not be inspected');
      expect(lines[2]).toBe('');
      expect(value).toBe(1);
    });

    it('CLI: check --all-pages --reporter junit: a failing page-fetch case for page 2, exit 1', async () => {
      const site = `${ownBase}/fetch-fail`;
      const result = await runCli([
        'check',
        '--all-pages',
        '--base-url',
        site,
        '--retries',
        '0',
        '--reporter',
        'junit',
      ]);
      const suites = [...result.stdout.matchAll(/<testsuite name="([^"]+)" tests="\d+" failures="(\d+)"/g)];
      expect(suites.map((suite) => [suite[1], suite[2]])).toEqual([
        [`${site}/api/v2/pages/1/`, '0'],
        [`${site}/api/v2/pages/2/`, '1'],
        [`${site}/api/v2/pages/3/`, '0'],
      ]);
      expect(result.stdout).toMatch(/<failure type="error:page-fetch" message="cannot fetch: [^"]*\/pages\/2\/[^"]*"/);
      expect(result.code).toBe(1);
    });
  });

  it('pages are fetched 8 at a time, and handed on in id order', async () => {
    mostActive = 0;
    const { checked } = await checkSite({}, { baseUrl: `${ownBase}/slow` });
    expect(checked.map((page) => idOf(page.source))).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)));
    expect(mostActive).toBe(8);
  });

  describe('hostile listings: the walk stops, naming the listing', () => {
    it('items not in id order', async () => {
      const site = `${ownBase}/unordered`;
      const error = await listAll(site).catch((caught: unknown) => caught);
      expectExit2(error, listingUrl(site, {}, 0));
      expectExit2(error, 'page 2 after page 3: the listing is not in id order');
      // Through the whole walk too: the check stops, it does not report on.
      const walked = await checkSite({}, { baseUrl: site }).catch((caught: unknown) => caught);
      expectExit2(walked, 'not in id order');
    });

    it('a body that is not a listing', async () => {
      const site = `${ownBase}/not-listing`;
      const error = await listAll(site).catch((caught: unknown) => caught);
      expectExit2(error, listingUrl(site, {}, 0));
      expectExit2(error, /: \$\.(meta|items\[0\]\.id): .*not a Wagtail API v2 listing$/);
    });

    it('an HTML page answered 200', async () => {
      const site = `${ownBase}/html`;
      const error = await listAll(site).catch((caught: unknown) => caught);
      expectExit2(error, listingUrl(site, {}, 0));
      expectExit2(error, 'HTML');
    });

    it('a total_count of a million with no items after the first page: the walk ends', async () => {
      const site = `${ownBase}/endless`;
      listings.delete('endless');
      expect(await listAll(site)).toEqual(['1', '2']);
      expect(listings.get('endless')).toBe(2);
    });

    it('a total_count that grows as the walk goes: the walk ends at the count of its first page', async () => {
      listings.delete('growing');
      const ids = await listAll(`${ownBase}/growing`);
      expect(ids).toEqual(Array.from({ length: 21 }, (_, i) => String(i + 1)));
      expect(listings.get('growing')).toBe(2);
    });
  });
});

// --- inspect --all-pages ---

describe('inspect --all-pages', () => {
  it('inspectSite: a report for each of 100, 101, 200, none with errors', async () => {
    const reports: unknown[] = [];
    for await (const result of inspectSite({}, { baseUrl: base, ...FAST })) reports.push(result);
    expect(reports.map((report) => (report as InspectReport).url)).toEqual(
      ['100', '101', '200'].map((id) => `${base}/api/v2/pages/${id}/`),
    );
    expect(reports.map((report) => (report as InspectReport).errors)).toEqual([0, 0, 0]);
  });

  it('text: the reports one after another, a "Page <id>:" heading each; the count on stderr; exit 0', async () => {
    const { value, stdout, stderr } = await captured(() => runInspect({}, { baseUrl: base, json: false, ...FAST }));
    expect([...stdout.matchAll(/^Page (\d+):/gm)].map((match) => match[1])).toEqual(['100', '101', '200']);
    expect(stderr).toBe('3 page(s) inspected: 0 with errors\n');
    expect(value).toBe(0);
  });

  it('CLI: --json is one JSON array of the 3 reports; the count line on stderr; exit 0', async () => {
    const result = await runCli(['inspect', '--all-pages', '--base-url', base, '--json']);
    const reports = JSON.parse(result.stdout);
    expect(Array.isArray(reports)).toBe(true);
    expect(reports.map((report: { url: string }) => report.url)).toEqual(
      ['100', '101', '200'].map((id) => `${base}/api/v2/pages/${id}/`),
    );
    expect(result.stderr).toBe('3 page(s) inspected: 0 with errors\n');
    expect(result.code).toBe(0);
  });
});

// --- flags ---

describe('flags', () => {
  /** The program as main.ts runs it, in-process: a refusal rejects with the error main.ts prints (exit 2). */
  const parse = (args: string[]) =>
    buildProgram()
      .parseAsync(args, { from: 'user' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );

  it('siteFrom: --all-pages takes no targets; --type, --child-of, --descendant-of need it', () => {
    expect(() => siteFrom({ allPages: true }, ['101'])).toThrow(/--all-pages takes no targets \(got 1\)/);
    expect(() => siteFrom({ type: 'x' }, ['pages'])).toThrow('--type narrows --all-pages; give --all-pages too');
    expect(() => siteFrom({ childOf: '1' }, [])).toThrow('--child-of narrows --all-pages; give --all-pages too');
    expect(() => siteFrom({ descendantOf: 'root' }, [])).toThrow(
      '--descendant-of narrows --all-pages; give --all-pages too',
    );
    expect(siteFrom({}, ['101'])).toBeUndefined();
    expect(siteFrom({ allPages: true, type: 'a.B', childOf: '3' }, [])).toEqual({
      type: 'a.B',
      childOf: '3',
      descendantOf: undefined,
    });
  });

  it('check --type x pages, inspect with neither target nor --all-pages: refused (exit 2, one line)', async () => {
    expectExit2(await parse(['check', '--type', 'x', 'pages']), '--type narrows --all-pages; give --all-pages too');
    expectExit2(await parse(['inspect', '--child-of', '100']), 'give --all-pages too');
    expectExit2(await parse(['inspect']), "missing required argument 'target' (or --all-pages");
  });

  it('loadSite without a base URL: refused naming --base-url', async () => {
    const error = await checkSite({}, {}).catch((caught: unknown) => caught);
    expectExit2(error, '--all-pages needs --base-url');
  });

  it('CLI: check 101 --all-pages --base-url X: exit 2, one line', async () => {
    const result = await runCli(['check', '101', '--all-pages', '--base-url', 'http://127.0.0.1:9']);
    expectCliExit2(result, '--all-pages takes no targets');
  });

  it('CLI: check --all-pages without --base-url (nor CONTENT_API_BASE_URL): exit 2 naming --base-url', async () => {
    const result = await runCli(['check', '--all-pages'], { env: { CONTENT_API_BASE_URL: undefined } });
    expectCliExit2(result, '--all-pages needs --base-url (or CONTENT_API_BASE_URL)');
  });
});
