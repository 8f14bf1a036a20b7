/**
 * `content-api render --page` over real HTTP: the sample content folder served on loopback
 * by `createContentServer`, its renditions downloaded or its originals matched by name,
 * renditions written and read back by `check --verify-files`.
 */
import { copyFile, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findNodeAtLocation, parseTree } from 'jsonc-parser';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findImages } from '../../src/page/walk.js';
import { RENDITION_BOXES, RENDITION_KEYS, type RenditionKey } from '../../src/renditions/rules.js';
import { loadContent } from '../../src/server/content.js';
import { createContentServer } from '../../src/server/server.js';
import { runCli, runInTerminal } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionedIn, withVersions } from '../fixtures/versions.js';
import { PAGES } from '../page/variants.js';

const CONTENT = path.resolve(PAGES, '../content');
const ORIGINALS = path.resolve(PAGES, '../originals');
/** Page 101 shows 18 Images from 6 sources. */
/** The news entry whose meta.thumb and category's meta.thumb name storm's md rendition. */
const NEWS = '$.presentation_stage.body[11].value.news_entries[0]';
const SOURCES = ['dandelion', 'ladybird', 'landscapes/dune', 'landscapes/storm', 'marigold', 'raindrops'];

let server: Server;
let base: string;
let requests: string[] = [];

beforeAll(async () => {
  server = createContentServer(await loadContent(CONTENT));
  server.on('request', (req: { url: string }) => requests.push(req.url));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  requests = [];
});

const mediaRequests = () => requests.filter((url) => url.startsWith('/media/'));
const page101 = async () => (await fetch(`${base}/api/v2/pages/101/`)).text();

interface Report {
  results: Array<{
    paths: string[];
    origin: string;
    source: string;
    status: string;
    image: { sizes: Record<string, { url: string }>; srcset: string };
  }>;
  failures: Array<{ source: string; paths: string[]; origin: string | null; error: string }>;
  warnings: string[];
  updated: string[];
  written: string | null;
}

/** `render --page` with `args` into `dir`/media, the page written to `dir`/page.json. */
async function renderInto(dir: string, args: string[], input?: string) {
  const out = path.join(dir, 'media');
  const written = path.join(dir, 'page.json');
  const result = await runCli(['render', '--out', out, '--write-page', written, '--json', ...args], { input });
  const report = JSON.parse(result.stdout || '{}') as Report;
  return { ...result, report, args, dir, out, written };
}
type PageRun = Awaited<ReturnType<typeof renderInto>>;

/**
 * Renders of page 101 made once in this file, on first use, for tests that are about the page
 * written or about one source among bystanders: `originals` (from --originals, as the page's
 * formats), `webp` (the same, --format webp: the meta.thumb test's own run, which it only reads)
 * and `downloads` (no originals: each source's largest rendition downloaded).
 */
const SEEDS = {
  originals: () => ['--page', '101', '--base-url', base, '--originals', ORIGINALS],
  webp: () => ['--page', '101', '--base-url', base, '--originals', ORIGINALS, '--format', 'webp'],
  downloads: () => ['--page', '101', '--base-url', base],
};
type Seed = keyof typeof SEEDS;
const seeds = new Map<Seed, Promise<PageRun>>();

/** The seed render's run, made on first use; the requests it made are not the test's. */
function seedRun(seed: Seed): Promise<PageRun> {
  let made = seeds.get(seed);
  if (!made) {
    made = (async () => {
      const seen = [...requests];
      const run = await renderInto(await mkdtemp(path.join(tmpdir(), 'content-api-seed-')), SEEDS[seed]());
      requests = seen;
      return run;
    })();
    seeds.set(seed, made);
  }
  return made;
}
afterAll(async () => {
  for (const made of seeds.values()) await rm((await made).dir, { recursive: true, force: true });
});

/**
 * A test's own render with a seed's arguments into an empty folder, taken as that seed if none is
 * made yet: it is what the seed's render would be, so that render is not made again. The seed is a
 * copy of the folder as rendered (the test goes on writing into its own); the requests were the test's.
 */
async function offerSeed(seed: Seed, run: PageRun): Promise<void> {
  if (run.args.join('\n') !== SEEDS[seed]().join('\n')) throw new Error(`not the ${seed} seed's arguments`);
  if (seeds.has(seed) || run.code !== 0) return;
  const made = (async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'content-api-seed-'));
    await cp(run.dir, dir, { recursive: true, preserveTimestamps: true });
    return { ...run, dir, out: path.join(dir, 'media'), written: path.join(dir, 'page.json') };
  })();
  seeds.set(seed, made);
  await made;
}

/**
 * `render --page` with `args`, into a fresh output folder, the page written beside it.
 * `from`: the folder starts as a copy of that seed render's (or of that earlier run's), so the
 * sources it rendered are up to date (skipped, as in a second run) and only what the test is about
 * is rendered.
 */
async function renderPage(args: string[], options: { input?: string; from?: Seed | PageRun } = {}) {
  const dir = await tempDir();
  const out = path.join(dir, 'media');
  if (typeof options.from === 'string') await copySeed(options.from, out);
  else if (options.from) await cp(options.from.out, out, { recursive: true, preserveTimestamps: true });
  return renderInto(dir, args, options.input);
}

/**
 * A copy of that seed render's output folder at `out`, which must not exist yet: the test writes
 * into its own copy, never into the seed's.
 */
async function copySeed(seed: Seed, out: string) {
  const run = await seedRun(seed);
  if (run.code !== 0) throw new Error(`the ${seed} seed render failed (${run.code}): ${run.stderr}`);
  await cp(run.out, out, { recursive: true, preserveTimestamps: true });
}

/**
 * The page passes check --verify-files: every file it names, meta.thumb's included, is there at
 * the size the page gives. `probed` files: the 30 renditions of page 101's 6 sources; each of its
 * meta.thumb references names one of storm's, so adds no file of its own unless a test makes it.
 */
async function checkFiles(page: string, media: string, probed = 30) {
  const result = await runCli(['check', page, '--verify-files', media, '--reporter', 'json']);
  const report = JSON.parse(result.stdout);
  expect(report.images).toBe(18);
  expect(report.files.probed).toBe(probed);
  expect(report.pages[0].problems.map((p: { rule: string; path: string }) => `${p.rule} ${p.path}`)).toEqual([]);
  expect(result.code).toBe(0);
}

/** The two meta.thumb objects of page 101 (the news entry's and its category's), as key paths. */
const THUMBS = [
  ['presentation_stage', 'body', 11, 'value', 'news_entries', 0, 'category', 'meta', 'thumb'],
  ['presentation_stage', 'body', 11, 'value', 'news_entries', 0, 'meta', 'thumb'],
];

/** The text of the value at `at` (a key path, no `$`): to compare one value's bytes. */
function textAt(text: string, at: Array<string | number>): string {
  const node = findNodeAtLocation(parseTree(text)!, at)!;
  return text.slice(node.offset, node.offset + node.length);
}

/**
 * The text with the value of every Image's `sizes` and `srcset`, and of the meta.thumb objects'
 * `url`, `width` and `height`, cut out: what must not change.
 */
function withoutRenditions(text: string): string {
  const root = parseTree(text)!;
  const spans = [
    ...[...findImages(JSON.parse(text))].flatMap(({ path: at }) =>
      ['sizes', 'srcset'].map((key) => [...at.slice(1), key]),
    ),
    ...THUMBS.flatMap((thumb) => ['url', 'width', 'height'].map((key) => [...thumb, key])),
  ].flatMap((at) => {
    const node = findNodeAtLocation(root, at);
    return node ? [node] : [];
  });
  let masked = text;
  for (const node of spans.sort((a, b) => b.offset - a.offset))
    masked = `${masked.slice(0, node.offset)}<cut>${masked.slice(node.offset + node.length)}`;
  return masked;
}

/**
 * A static file server on loopback over `roots` (the first that has the file wins), for media the
 * sample content lacks.
 */
async function serveFiles(
  ...roots: string[]
): Promise<{ base: string; requests: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const files = createServer(async (req, res) => {
    const url = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    seen.push(url);
    for (const root of roots) {
      const body = await readFile(path.join(root, url)).catch(() => null);
      if (body) return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(body);
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(files.address() as AddressInfo).port}`,
    requests: seen,
    close: () => new Promise<void>((resolve) => files.close(() => resolve())),
  };
}

/** Page 101 with its text changed by `edit`, as a file; returns the file's path. */
async function page101File(edit: (text: string) => string): Promise<string> {
  const file = path.join(await tempDir(), 'in.json');
  await writeFile(file, edit(await page101()));
  return file;
}

describe('content-api render --page', () => {
  it(
    'without originals: downloads each source’s largest rendition once, renders each source once, ' +
      'and the written page passes check --verify-files',
    async () => {
      const run = await renderPage(['--page', '101', '--base-url', base]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.report.failures).toEqual([]);
      expect(run.report.results.map((r) => r.source).sort()).toEqual(
        SOURCES.map(
          (s) => `${base}/media/${s}.max-4800x4800.${s === 'marigold' ? 'png' : s === 'raindrops' ? 'webp' : 'jpg'}`,
        ),
      );
      expect(run.report.results.every((r) => r.origin === 'rendition' && r.status === 'rendered')).toBe(true);
      // 18 Images and the 2 meta.thumb references to storm, each in exactly one result: images that
      // share a source are rendered together.
      const paths = run.report.results.flatMap((r) => r.paths);
      expect(paths).toHaveLength(20);
      expect(new Set(paths).size).toBe(20);
      expect(run.report.results.find((r) => r.source.includes('raindrops'))!.paths).toEqual([
        '$.presentation_stage.body[4].value.work.overlay[0].value.image',
        '$.presentation_stage.body[5].value.works[0].overlay[0].value.image',
        '$.presentation_stage.body[5].value.works[1].overlay[0].value.image',
        '$.presentation_stage.body[10].value.articles[0].contents_image',
        '$.presentation_stage.body[12].value.large_presentations.presentations[0].list_presentation_stage.thumbnail',
      ]);
      expect(mediaRequests().sort()).toEqual(run.report.results.map((r) => new URL(r.source).pathname).sort());
      expect(run.stderr).toMatch(
        new RegExp(
          /warning: \$\.presentation_stage\.body\[9\]\.value\.banner\.image /.source +
            /and 4 more \('landscapes\/storm'\): no original found, /.source +
            /rendered from http:\/\/127\.0\.0\.1:\d+\/media\/landscapes\/storm\.max-4800x4800\.jpg /.source +
            /\(1920x1280\); the renditions are no sharper than it/.source,
        ),
      );
      expect(run.report.written).toBe(run.written);
      // Only sizes and srcset may differ from the page as served; the thumbs name storm's md rendition
      // as before (a JPEG, 1200x800), so only their URL's version is new.
      const written = await readFile(run.written, 'utf8');
      expect(withoutRenditions(written)).toBe(withoutRenditions(await page101()));
      for (const thumb of THUMBS)
        expect(textAt(written, thumb)).toBe(await withVersions(textAt(await page101(), thumb), run.out));
      await checkFiles(run.written, run.out);
      // This render is the downloads seed's, made here in full; later tests start from a copy of it.
      await offerSeed('downloads', run);

      // Again into the same folder: the same bytes downloaded, so every source is up to date.
      const again = await runCli(['render', '--page', '101', '--base-url', base, '--out', run.out, '--json']);
      expect(again.code, again.stderr).toBe(0);
      expect((JSON.parse(again.stdout) as Report).results.map((r) => [r.origin, r.status])).toEqual(
        Array(6).fill(['rendition', 'skipped']),
      );
    },
  );

  it(
    'with --originals: every image from its original, matched by name below the folder; no download; ' +
      'a second run finds everything up to date',
    async () => {
      const first = await renderPage(['--page', '101', '--base-url', base, '--originals', ORIGINALS]);
      expect(first.code, first.stderr).toBe(0);
      expect(first.report.results.map((r) => [r.origin, path.relative(ORIGINALS, r.source)]).sort()).toEqual([
        ['original', 'dandelion.jpg'],
        ['original', 'ladybird.jpg'],
        ['original', 'landscapes/dune.jpg'],
        ['original', 'landscapes/storm.jpg'],
        ['original', 'marigold.png'],
        ['original', 'raindrops.webp'],
      ]);
      expect(mediaRequests()).toEqual([]);
      expect(first.report.warnings).toEqual([]);
      await checkFiles(first.written, first.out);
      // This render is the originals seed's, made here in full; later tests start from a copy of it.
      await offerSeed('originals', first);

      const again = await runCli([
        'render',
        '--page',
        '101',
        '--base-url',
        base,
        '--originals',
        ORIGINALS,
        '--out',
        first.out,
        '--json',
      ]);
      expect(again.code).toBe(0);
      expect((JSON.parse(again.stdout) as Report).results.map((r) => r.status)).toEqual(Array(6).fill('skipped'));
    },
  );

  it.each([
    ['as served (2-space indents)', (text: string) => text],
    [
      'tab-indented, CRLF line ends',
      (text: string) => JSON.stringify(JSON.parse(text), null, '\t').replaceAll('\n', '\r\n'),
    ],
    ['on one line', (text: string) => JSON.stringify(JSON.parse(text))],
  ])('--write-page changes only sizes and srcset, in the page’s own layout: %s', async (_, layout) => {
    const dir = await tempDir();
    const input = layout(await page101());
    await writeFile(path.join(dir, 'in.json'), input);
    const run = await renderPage(['--page', path.join(dir, 'in.json'), '--originals', ORIGINALS, '--format', 'webp'], {
      from: 'webp',
    });
    expect(run.code, run.stderr).toBe(0);
    const written = await readFile(run.written, 'utf8');
    expect(withoutRenditions(written)).toBe(withoutRenditions(input));
    for (const { image } of findImages(JSON.parse(written))) {
      const sizes = image.sizes as Record<RenditionKey, { url: string; width: number }>;
      for (const key of RENDITION_KEYS) {
        const file = sizes[key].url.split('?')[0]!;
        expect(file).toMatch(new RegExp(`\\.max-${RENDITION_BOXES[key]}x${RENDITION_BOXES[key]}\\.webp$`));
        expect(sizes[key].url).toBe(await versionedIn(run.out, file));
      }
      if ('srcset' in image)
        expect(image.srcset).toBe(RENDITION_KEYS.map((key) => `${sizes[key].url} ${sizes[key].width}w`).join(', '));
    }
    if (!input.includes('\n')) expect(written).not.toContain('\n');
    if (input.includes('\t')) expect(written).toMatch(/\r\n\t+"sizes": \{\r\n\t+"xs": \{\r\n\t+"width": \d+,/);
    if (input.includes('\t')) expect(written.replaceAll('\r\n', '')).not.toContain('\n');
    for (const thumb of THUMBS)
      expect(JSON.parse(textAt(written, thumb))).toEqual({
        url: await versionedIn(run.out, '/media/landscapes/storm.max-1200x1200.webp'),
        width: 1200,
        height: 800,
      });
    await checkFiles(run.written, run.out);
  });

  it(
    'a source that cannot be found fails its image alone: ' +
      'the others are rendered and written, that Image is left as it was',
    async () => {
      const dir = await tempDir();
      const input = (await page101()).replaceAll('/media/landscapes/dune.', '/media/landscapes/gone.');
      await writeFile(path.join(dir, 'in.json'), input);
      // From the downloads seed: the five other sources download the same bytes, so are up to date;
      // the test is about the one that fails and the page written.
      const run = await renderPage(['--page', path.join(dir, 'in.json'), '--base-url', base], { from: 'downloads' });
      expect(run.code).toBe(1);
      expect(run.report.results).toHaveLength(5);
      expect(run.report.failures).toEqual([
        {
          source: `${base}/media/landscapes/gone.max-4800x4800.jpg`,
          paths: ['$.presentation_stage.body[3].value.image'],
          origin: null,
          code: 'CONTENT_API_NO_SOURCE',
          error:
            "$.presentation_stage.body[3].value.image ('landscapes/gone'): " +
            `${base}/media/landscapes/gone.max-4800x4800.jpg: HTTP 404 Not Found (Not found.)`,
        },
      ]);
      expect(run.stderr).toContain(`failed: ${run.report.failures[0]!.error}`);
      const written = JSON.parse(await readFile(run.written, 'utf8'));
      expect(written.presentation_stage.body[3].value.image).toEqual(
        JSON.parse(input).presentation_stage.body[3].value.image,
      );
    },
  );

  it('removes nothing unasked; --prune removes only the earlier files of the images the page shows (#34)', async () => {
    // The folder starts as the webp seed's: the page's WebP files are up to date, so the first run
    // renders only their own formats and yellow-flower; it leaves the same files as in an empty folder.
    const out = path.join(await tempDir(), 'media');
    await copySeed('webp', out);
    const all = await runCli(['render', ORIGINALS, '--out', out, '--formats', 'keep,webp']);
    expect(all.code, all.stderr).toBe(0);
    const webps = async () => (await readdir(out, { recursive: true })).filter((f) => f.endsWith('.webp')).sort();
    const before = await webps();
    // Seven originals, each with WebP files: raindrops is a WebP itself, yellow-flower is on no page.
    expect(before.filter((f) => f.includes('.max-300x300.'))).toHaveLength(7);
    const page = ['render', '--page', '101', '--base-url', base, '--originals', ORIGINALS, '--out', out, '--json'];
    const kept = await runCli(page);
    expect(kept.code, kept.stderr).toBe(0);
    expect([JSON.parse(kept.stdout).removed, JSON.parse(kept.stdout).kept]).toEqual([0, 25]);
    expect(await webps()).toEqual(before);
    const pruned = await runCli([...page, '--prune']);
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout).removed).toBe(25);
    // The page's five non-WebP images lose their WebP files; raindrops' own and yellow-flower's stay.
    expect(await webps()).toEqual(before.filter((f) => /^(raindrops|yellow-flower)\./.test(f)));
  });

  it('a download over --max-bytes fails its image alone, naming the URL and the bound', async () => {
    const run = await renderPage(['--page', '101', '--base-url', base, '--max-bytes', '200000'], { from: 'downloads' });
    expect(run.code).toBe(1);
    expect(run.report.results.length).toBeGreaterThan(0);
    expect(run.report.failures.length).toBeGreaterThan(0);
    expect(run.report.results.length + run.report.failures.length).toBe(6);
    for (const failure of run.report.failures)
      expect(failure.error).toMatch(
        /^\$\.\S+ .*\): http:\/\/127\.0\.0\.1:\d+\/media\/\S+: response larger than 200000 bytes$/,
      );
  });

  it(
    'a run without --originals renders from the originals the output folder’s manifest names: ' +
      'up to date, nothing downloaded',
    async () => {
      const first = await renderPage(['--page', '101', '--base-url', base, '--originals', ORIGINALS], {
        from: 'originals',
      });
      expect(first.code, first.stderr).toBe(0);
      requests = [];
      const again = await runCli(['render', '--page', '101', '--base-url', base, '--out', first.out, '--json']);
      expect(again.code, again.stderr).toBe(0);
      const report = JSON.parse(again.stdout) as Report;
      expect(report.results.map((r) => [r.origin, r.status, path.relative(ORIGINALS, r.source)]).sort()).toEqual(
        first.report.results.map((r) => ['original', 'skipped', path.relative(ORIGINALS, r.source)]).sort(),
      );
      expect(report.warnings).toEqual([]);
      expect(mediaRequests()).toEqual([]);
    },
  );

  it('page problems that re-rendering does not fix are a warning, not a stop', async () => {
    const dir = await tempDir();
    const page = JSON.parse(await page101());
    page.title = 42;
    await writeFile(path.join(dir, 'in.json'), JSON.stringify(page, null, 2));
    const run = await renderPage(['--page', path.join(dir, 'in.json'), '--originals', ORIGINALS], {
      from: 'originals',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.report.warnings).toEqual([
      `${path.join(dir, 'in.json')}: 1 problem(s) that re-rendering does not fix, ` +
        'first $.title: Invalid input: expected string, received number [schema] (see content-api check)',
    ]);
    expect(run.report.results).toHaveLength(6);
  });

  it(
    'downloads use the client’s retries (503, then 200) and timeout ' +
      '(a server that never answers fails that image alone)',
    async () => {
      const attempts = new Map<string, number>();
      const flaky = createServer(async (req, res) => {
        const url = new URL(req.url ?? '/', 'http://x').pathname;
        if (url.startsWith('/hang/')) return; // never answers
        const seen = attempts.get(url) ?? 0;
        attempts.set(url, seen + 1);
        if (seen === 0) {
          res.writeHead(503, { 'retry-after': '0', 'content-type': 'text/plain' });
          return res.end('busy');
        }
        const body = await readFile(path.join(CONTENT, decodeURIComponent(url))).catch(() => null);
        res.writeHead(body ? 200 : 404, { 'content-type': body ? 'image/jpeg' : 'text/plain' });
        res.end(body ?? 'not found');
      });
      await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
      try {
        const flakyBase = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}`;
        const dir = await tempDir();
        await writeFile(
          path.join(dir, 'in.json'),
          (await page101()).replaceAll('/media/landscapes/dune.', '/hang/landscapes/dune.'),
        );
        // From the downloads seed: the five downloads are still made (their bytes decide), and are up to date.
        const run = await renderPage(
          ['--page', path.join(dir, 'in.json'), '--base-url', flakyBase, '--timeout', '400', '--retries', '2'],
          { from: 'downloads' },
        );
        expect(run.code).toBe(1);
        expect(run.report.results).toHaveLength(5);
        expect([...attempts.values()]).toEqual(Array(5).fill(2)); // each download: one 503, one retry that succeeds
        expect(run.report.failures.map((f) => f.error)).toEqual([
          expect.stringMatching(
            new RegExp(
              /^\$\.presentation_stage\.body\[3\]\.value\.image \('hang\/landscapes\/dune'\): /.source +
                /http:\/\/127\.0\.0\.1:\d+\/hang\/landscapes\/dune\.max-4800x4800\.jpg: timed out/.source,
            ),
          ),
        ]);
      } finally {
        flaky.closeAllConnections();
        await new Promise((resolve) => flaky.close(resolve));
      }
    },
  );

  it('--no-download: images without an original fail, naming the original that is missing', async () => {
    const originals = path.join(await tempDir(), 'originals');
    await mkdir(originals);
    await copyFile(path.join(ORIGINALS, 'dandelion.jpg'), path.join(originals, 'dandelion.jpg'));
    const run = await renderPage(['--page', '101', '--base-url', base, '--originals', originals, '--no-download']);
    expect(run.code).toBe(1);
    expect(run.report.results.map((r) => r.source)).toEqual([path.join(originals, 'dandelion.jpg')]);
    expect(run.report.failures).toHaveLength(5);
    // storm's 3 Images and the 2 meta.thumb references that name its md rendition
    expect(run.report.failures.find((f) => f.source === 'landscapes/storm')!.error).toBe(
      "$.presentation_stage.body[9].value.banner.image and 4 more ('landscapes/storm'): " +
        `no original named 'storm' in ${originals}, and downloads are off`,
    );
    expect(mediaRequests()).toEqual([]);
  });

  it(
    'two originals that both match a name are a failure for that image, not a guess, ' +
      'unless one has the renditions’ extension',
    async () => {
      const originals = path.join(await tempDir(), 'originals');
      await writeImage(originals, 'a/marigold.png', photo(90, 60));
      await writeImage(originals, 'b/marigold.png', photo(90, 60));
      await writeImage(originals, 'b/ladybird.png', photo(90, 60));
      await writeImage(originals, 'c/ladybird.jpg', photo(90, 60).jpeg());
      // From the downloads seed: the sources downloaded (no original of theirs here) are up to date.
      const run = await renderPage(['--page', '101', '--base-url', base, '--originals', originals], {
        from: 'downloads',
      });
      expect(run.code).toBe(1);
      const failure = run.report.failures.find((f) => f.source === 'marigold')!;
      expect(failure.error).toMatch(
        /several originals in .* are named 'marigold' \(.*a\/marigold\.png, .*b\/marigold\.png\)/,
      );
      // The page shows ladybird.max-*.jpg: of ladybird.png and ladybird.jpg, the JPEG is its original.
      expect(run.report.results.find((r) => r.paths.includes('$.presentation_stage.body[2].value.image'))!.source).toBe(
        path.join(originals, 'c/ladybird.jpg'),
      );
    },
  );

  it(
    'an original of another aspect ratio: width and height follow it, with a warning; ' + 'check finds nothing',
    async () => {
      const originals = path.join(await tempDir(), 'originals');
      await writeImage(originals, 'ladybird.jpg', photo(500, 500).jpeg());
      // From the downloads seed: the five sources downloaded are up to date; ladybird's new original is rendered.
      const run = await renderPage(['--page', '101', '--base-url', base, '--originals', originals], {
        from: 'downloads',
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.report.warnings).toContain(
        "$.presentation_stage.body[2].value.image: width/height 1/0.625 became 1/1, the new original's aspect ratio",
      );
      const written = JSON.parse(await readFile(run.written, 'utf8'));
      expect(written.presentation_stage.body[2].value.image).toMatchObject({
        width: 1,
        height: 1,
        sizes: { xl: { width: 500, height: 500 } },
      });
      await checkFiles(run.written, run.out);
    },
  );

  it(
    'reads the page from standard input; root-relative URLs without --base-url fail per image with the reason; ' +
      '--write-page - prints the page',
    async () => {
      const input = await page101();
      const dir = await tempDir();
      // Two processes (standard input is theirs), independent of each other: run at once.
      const [noBase, piped] = await Promise.all([
        renderPage(['--page', '-'], { input }),
        runCli(
          ['render', '--page', '-', '--originals', ORIGINALS, '--out', path.join(dir, 'media'), '--write-page', '-'],
          { input },
        ),
      ]);
      expect(noBase.code).toBe(1);
      expect(noBase.report.failures).toHaveLength(6);
      expect(noBase.report.failures[0]!.error).toMatch(
        /^\$\.\S+ (and \d more )?\('[a-z/-]+'\): \/media\/\S+: a relative URL, and no --base-url to download it from$/,
      );

      expect(piped.code, piped.stderr).toBe(0);
      // Byte for byte, but for each rendition URL's version, new since the page was written.
      expect(piped.stdout).toBe(await withVersions(input, path.join(dir, 'media')));
      expect(piped.stderr).toMatch(
        new RegExp(
          /^stdin: 6 rendered, 0 up to date in [\d.]+ s \(output: .*media\); /.source +
            /page written to stdout \(20 Image\(s\) updated\)$/.source,
          'm',
        ),
      );
    },
  );

  it('takes a page endpoint URL as well as an id', async () => {
    const run = await renderPage(['--page', `${base}/api/v2/pages/101/`, '--originals', ORIGINALS], {
      from: 'originals',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.report.results).toHaveLength(6);
  });

  it(
    'warns where URLs move to another folder or host, ' +
      'and where a plain string outside the Images names an old rendition',
    async () => {
      const moved = await renderPage(
        [
          '--page',
          '101',
          '--base-url',
          base,
          '--originals',
          ORIGINALS,
          '--media-url',
          'https://cdn.example.org/media/',
        ],
        { from: 'originals' },
      );
      expect(moved.code, moved.stderr).toBe(0);
      expect(moved.report.warnings).toContain(
        "$.presentation_stage.body[3].value.image ('landscapes/dune'): " +
          'its URLs move from /media/landscapes/ to https://cdn.example.org/media/landscapes/ ' +
          '(new URLs are --media-url https://cdn.example.org/media/ and the path below it)',
      );
      const input = await page101File((text) => {
        const page = JSON.parse(text);
        page.presentation_stage.body[11].value.news_entries[0].meta.image = '/media/landscapes/storm.max-1200x1200.jpg';
        return JSON.stringify(page, null, 2);
      });
      const webp = await renderPage(['--page', input, '--originals', ORIGINALS, '--format', 'webp'], { from: 'webp' });
      expect(webp.code, webp.stderr).toBe(0);
      expect(webp.report.warnings.filter((w) => w.includes('move from'))).toEqual([]);
      // The meta.thumb objects are rewritten (see below); the plain string is not, and is named.
      expect(webp.report.warnings.filter((w) => w.includes('still names'))).toEqual([
        `${NEWS}.meta.image: still names /media/landscapes/storm.max-1200x1200.jpg; ` +
          `the re-rendered file is ${await versionedIn(webp.out, '/media/landscapes/storm.max-1200x1200.webp')} ` +
          '(only Images and {url, width, height} objects under the media URL are rewritten)',
      ]);
    },
  );

  it(
    'meta.thumb references are re-rendered with their source: after --format webp --write-page, ' +
      'check --verify-files finds nothing',
    async () => {
      // The webp seed (page 101 from --originals, --format webp), rendered once: this test only reads
      // what that run reported and wrote; other tests start from a copy of its output folder.
      const run = await seedRun('webp');
      expect(run.code, run.stderr).toBe(0);
      const written = JSON.parse(await readFile(run.written, 'utf8'));
      const entry = written.presentation_stage.body[11].value.news_entries[0];
      const md = {
        url: await versionedIn(run.out, '/media/landscapes/storm.max-1200x1200.webp'),
        width: 1200,
        height: 800,
      };
      expect(entry.meta.thumb).toEqual(md);
      expect(entry.category.meta.thumb).toEqual(md);
      expect(run.report.updated).toEqual(expect.arrayContaining([`${NEWS}.category.meta.thumb`, `${NEWS}.meta.thumb`]));
      expect(run.report.results.find((r) => r.source.endsWith('storm.jpg'))!.paths).toEqual([
        '$.presentation_stage.body[9].value.banner.image',
        `${NEWS}.thumbnail`,
        '$.presentation_stage.feature_large_image',
        `${NEWS}.category.meta.thumb`,
        `${NEWS}.meta.thumb`,
      ]);
      expect(run.report.warnings).toEqual([]);
      await checkFiles(run.written, run.out);
    },
  );

  it(
    'a meta.thumb whose source no Image shows is a source of its own: rendered from --originals ' +
      '(or else downloaded: the file it names), and rewritten; when that fails, the failure names it',
    async () => {
      const input = await page101File((text) => {
        const page = JSON.parse(text);
        // Yellow Flower.jpg (1600x1000) is in the originals, and no Image of page 101 shows it.
        page.presentation_stage.body[11].value.news_entries[0].meta.thumb = {
          url: '/media/yellow-flower.max-600x600.jpg',
          width: 640,
          height: 480,
        };
        return JSON.stringify(page, null, 2);
      });
      const run = await renderPage(['--page', input, '--originals', ORIGINALS, '--format', 'webp'], { from: 'webp' });
      expect(run.code, run.stderr).toBe(0);
      const flower = run.report.results.find((r) => r.paths.includes(`${NEWS}.meta.thumb`))!;
      expect(flower).toMatchObject({
        source: path.join(ORIGINALS, 'Yellow Flower.jpg'),
        origin: 'original',
        status: 'rendered',
        paths: [`${NEWS}.meta.thumb`],
      });
      const thumb = JSON.parse(await readFile(run.written, 'utf8')).presentation_stage.body[11].value.news_entries[0]
        .meta.thumb;
      expect(thumb).toEqual({
        url: await versionedIn(run.out, '/media/yellow-flower.max-600x600.webp'),
        width: 600,
        height: 375,
      });
      expect(run.report.updated).toContain(`${NEWS}.meta.thumb`);
      expect(run.report.warnings).toEqual([]);
      // The 30 renditions of the Images, and the thumb's: a file no Image names.
      await checkFiles(run.written, run.out, 31);

      // A source that cannot be found: the failure lists the thumb's path; the thumb stays as it was.
      const gone = await page101File((text) => {
        const page = JSON.parse(text);
        page.presentation_stage.body[11].value.news_entries[0].meta.thumb.url = '/media/gone.max-1200x1200.jpg';
        return JSON.stringify(page, null, 2);
      });
      expect(await readFile(gone, 'utf8')).toContain('/media/gone.max-1200x1200.jpg');
      const failed = await renderPage(['--page', gone, '--base-url', base], { from: 'downloads' });
      expect(failed.code).toBe(1);
      expect(failed.report.failures).toEqual([
        {
          source: `${base}/media/gone.max-1200x1200.jpg`,
          paths: [`${NEWS}.meta.thumb`],
          origin: null,
          code: 'CONTENT_API_NO_SOURCE',
          error:
            `${NEWS}.meta.thumb ('gone'): ` + `${base}/media/gone.max-1200x1200.jpg: HTTP 404 Not Found (Not found.)`,
        },
      ]);
      expect(failed.report.results).toHaveLength(6);
      expect(textAt(await readFile(failed.written, 'utf8'), THUMBS[1]!)).toBe(
        textAt(await readFile(gone, 'utf8'), THUMBS[1]!),
      );
    },
  );

  it('a meta.thumb whose file name has no size box names no rendition: one warning, left byte for byte', async () => {
    const input = await page101File((text) => {
      const page = JSON.parse(text);
      page.presentation_stage.body[11].value.news_entries[0].category.meta.thumb = {
        url: '/media/social/card.jpg',
        width: 1200,
        height: 630,
      };
      return JSON.stringify(page, null, 2);
    });
    const before = await readFile(input, 'utf8');
    expect(JSON.parse(textAt(before, THUMBS[0]!))).toEqual({ url: '/media/social/card.jpg', width: 1200, height: 630 });
    const run = await renderPage(['--page', input, '--originals', ORIGINALS, '--format', 'webp'], { from: 'webp' });
    expect(run.code, run.stderr).toBe(0);
    expect(run.report.warnings).toEqual([
      `${NEWS}.category.meta.thumb: card.jpg names no rendition: its name has no size box ` +
        '(.max-<n>x<n>. or _<n>x<n>., n one of 300, 600, 1200, 2400, 4800); left as it is',
    ]);
    const written = await readFile(run.written, 'utf8');
    expect(textAt(written, THUMBS[0]!)).toBe(textAt(before, THUMBS[0]!));
    expect(run.report.updated).not.toContain(`${NEWS}.category.meta.thumb`);
    expect(run.report.results.flatMap((r) => r.paths)).not.toContain(`${NEWS}.category.meta.thumb`);
    // The other thumb names storm's md rendition: rewritten to the WebP.
    expect(JSON.parse(textAt(written, THUMBS[1]!)).url).toBe(
      await versionedIn(run.out, '/media/landscapes/storm.max-1200x1200.webp'),
    );
  });

  it('a meta.thumb whose source’s new original has another aspect ratio gets that width and height', async () => {
    const originals = path.join(await tempDir(), 'originals');
    await writeImage(originals, 'landscapes/storm.jpg', photo(1500, 1500).jpeg());
    // From the downloads seed: the five sources downloaded are up to date; storm's new original is rendered.
    const run = await renderPage(['--page', '101', '--base-url', base, '--originals', originals], {
      from: 'downloads',
    });
    expect(run.code, run.stderr).toBe(0);
    const written = await readFile(run.written, 'utf8');
    for (const thumb of THUMBS) {
      // Only the height changes, and the URL's version: the url names the same file, 1200 wide as before.
      expect(textAt(written, thumb)).toBe(
        await withVersions(textAt(await page101(), thumb).replace('"height":800', '"height":1200'), run.out),
      );
      expect(JSON.parse(textAt(written, thumb))).toEqual({
        url: await versionedIn(run.out, '/media/landscapes/storm.max-1200x1200.jpg'),
        width: 1200,
        height: 1200,
      });
    }
    expect(run.report.updated).toEqual(expect.arrayContaining([`${NEWS}.category.meta.thumb`, `${NEWS}.meta.thumb`]));
    await checkFiles(run.written, run.out);
  });

  it(
    'a {url, width, height} outside the media prefix is no reference (check does not verify it): ' +
      'left as it is, and named where it still names a re-rendered file',
    async () => {
      const input = await page101File((text) => text.replaceAll('"/media/landscapes/storm.', '"/other/storm.'));
      // From the originals seed: the five other sources are up to date; storm, now other/storm, is rendered.
      const run = await renderPage(['--page', input, '--originals', ORIGINALS], { from: 'originals' });
      expect(run.code, run.stderr).toBe(0);
      const storm = run.report.results.find((r) => r.source.endsWith('storm.jpg'))!;
      expect(storm.paths.filter((at) => at.endsWith('.thumb'))).toEqual([]);
      const md = await versionedIn(run.out, '/media/other/storm.max-1200x1200.jpg');
      expect(storm.image.sizes.md!.url).toBe(md);
      expect(run.report.warnings.filter((w) => w.includes('still names'))).toEqual(
        [`${NEWS}.category.meta.thumb.url`, `${NEWS}.meta.thumb.url`].map(
          (at) =>
            `${at}: still names /other/storm.max-1200x1200.jpg; ` +
            `the re-rendered file is ${md} ` +
            '(only Images and {url, width, height} objects under the media URL are rewritten)',
        ),
      );
      const written = await readFile(run.written, 'utf8');
      for (const thumb of THUMBS) expect(textAt(written, thumb)).toBe(textAt(await readFile(input, 'utf8'), thumb));
      await checkFiles(run.written, run.out);
    },
  );

  it('a page without Images renders nothing, with a warning', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, 'in.json'), '{"id": 1}');
    const run = await renderPage(['--page', path.join(dir, 'in.json')]);
    expect(run.code).toBe(0);
    expect(run.report.results).toEqual([]);
    expect(run.report.warnings).toContain(`${path.join(dir, 'in.json')}: no Images in the page; nothing to render`);
  });

  it(
    'on a terminal, a progress line counts the downloads, then the renders; ' +
      'the summary names the page and its Images',
    async () => {
      const dir = await tempDir();
      const tty = await runInTerminal([
        'render',
        '--page',
        '101',
        '--base-url',
        base,
        '--out',
        path.join(dir, 'media'),
        '--write-page',
        path.join(dir, 'page.json'),
      ]);
      expect(tty.code).toBe(0);
      expect(tty.stdout).toMatch(/\r\x1b\[2K\[#+-*\] \d\/6 download \/media\/\S+\.max-4800x4800\./);
      // the renders, named by their source
      expect(tty.stdout).toMatch(/\r\x1b\[2K\[#{24}\] 6\/6 http:\/\/127\.0\.0\.1:\d+\/media\/\S+\.max-4800x4800\./);
      expect(tty.stdout).toMatch(/\r\x1b\[2Kwarning: /);
      expect(tty.stdout).toMatch(
        new RegExp(
          'http://127\\.0\\.0\\.1:\\d+/api/v2/pages/101/: ' +
            '6 rendered, 0 up to date in [\\d.]+ s \\(output: .*media\\); ' +
            `page written to ${path.join(dir, 'page.json')} \\(\\d+ Image\\(s\\) updated\\)`,
        ),
      );
    },
  );

  it('--dry-run writes nothing and lists what it would write', async () => {
    const dir = await tempDir();
    const run = await runCli([
      'render',
      '--page',
      '101',
      '--base-url',
      base,
      '--originals',
      ORIGINALS,
      '--out',
      path.join(dir, 'media'),
      '--write-page',
      path.join(dir, 'page.json'),
      '--dry-run',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `would write\t${path.join(dir, 'media', 'landscapes', 'dune.max-300x300.jpg')}\t300x188`,
    );
    // The sample's renditions were made from these originals: the page would not change.
    expect(run.stdout).toContain(`would write\t${path.join(dir, 'page.json')}\tthe page with 0 Image(s) updated`);
    const webp = await runCli([
      'render',
      '--page',
      '101',
      '--base-url',
      base,
      '--originals',
      ORIGINALS,
      '--out',
      path.join(dir, 'media'),
      '--write-page',
      path.join(dir, 'page.json'),
      '--dry-run',
      '--format',
      'webp',
    ]);
    // As WebP, every Image changes but the five that show raindrops, a WebP already; and the two
    // meta.thumb references to storm's md rendition, which `updated` (the count printed) lists too.
    expect(webp.stdout).toContain(`would write\t${path.join(dir, 'page.json')}\tthe page with 15 Image(s) updated`);
    expect(await readFile(path.join(dir, 'page.json')).catch(() => null)).toBeNull();
    expect(await readFile(path.join(dir, 'media', 'landscapes', 'dune.max-300x300.jpg')).catch(() => null)).toBeNull();
    // What the run would refuse, the dry run refuses: a --write-page that is a link to another file.
    const link = path.join(dir, 'page-link.json');
    await symlink(path.join(dir, 'elsewhere.json'), link);
    await writeFile(path.join(dir, 'elsewhere.json'), '{}');
    const linked = await runCli(
      ['render', '--page', '101', '--base-url', base, '--out', path.join(dir, 'media')].concat([
        '--originals',
        ORIGINALS,
        '--write-page',
        link,
        '--dry-run',
      ]),
    );
    expect([linked.code, linked.stdout]).toEqual([2, '']);
    expect(linked.stderr).toContain(`--write-page ${link}: cannot write (it is a symlink to a file`);
  });

  it(
    'renditions of one name in two formats are two sources: ' +
      'lake.max-*.jpg and lake.max-*.png each keep their own pixels and extension',
    async () => {
      const media = path.join(await tempDir(), 'media');
      await mkdir(media);
      for (const box of [300, 600, 1200, 2400, 4800]) {
        await copyFile(
          path.join(CONTENT, 'media', `ladybird.max-${box}x${box}.jpg`),
          path.join(media, `lake.max-${box}x${box}.jpg`),
        );
        await copyFile(
          path.join(CONTENT, 'media', `marigold.max-${box}x${box}.png`),
          path.join(media, `lake.max-${box}x${box}.png`),
        );
      }
      const files = await serveFiles(path.dirname(media), CONTENT);
      try {
        const input = await page101File((text) =>
          text.replaceAll('/media/ladybird.', '/media/lake.').replaceAll('/media/marigold.', '/media/lake.'),
        );
        // From the downloads seed: the sources other than lake, the same bytes from this server, are up to date.
        const run = await renderPage(['--page', input, '--base-url', files.base], { from: 'downloads' });
        expect(run.code, run.stderr).toBe(0);
        const lake = run.report.results.filter((r) => r.source.includes('/media/lake.'));
        expect(lake.map((r) => r.source).sort()).toEqual([
          `${files.base}/media/lake.max-4800x4800.jpg`,
          `${files.base}/media/lake.max-4800x4800.png`,
        ]);
        const written = JSON.parse(await readFile(run.written, 'utf8'));
        expect(written.presentation_stage.body[2].value.image.sizes.xl.url).toBe(
          await versionedIn(run.out, '/media/lake.max-4800x4800.jpg'),
        );
        expect(written.presentation_stage.body[4].value.work.image.sizes.xl.url).toBe(
          await versionedIn(run.out, '/media/lake.max-4800x4800.png'),
        );
        expect(run.report.warnings.filter((w) => w.includes('became'))).toEqual([]); // each kept its own aspect ratio
        await checkFiles(run.written, run.out);

        // With originals, each finds the one of its own format.
        const originals = path.join(await tempDir(), 'originals');
        await mkdir(originals);
        await copyFile(path.join(ORIGINALS, 'ladybird.jpg'), path.join(originals, 'lake.jpg'));
        await copyFile(path.join(ORIGINALS, 'marigold.png'), path.join(originals, 'lake.png'));
        const matched = await renderPage(['--page', input, '--base-url', files.base, '--originals', originals], {
          from: 'downloads',
        });
        expect(matched.code, matched.stderr).toBe(0);
        expect(
          matched.report.results
            .filter((r) => r.origin === 'original')
            .map((r) => path.basename(r.source))
            .sort(),
        ).toEqual(['lake.jpg', 'lake.png']);
        await checkFiles(matched.written, matched.out);

        // Only lake.jpg: it is not taken for the PNG's images, which fail alone. From a copy of the
        // run above, where lake.jpg is up to date: the test is about what is not taken.
        await rm(path.join(originals, 'lake.png'));
        const onlyJpeg = await renderPage(
          ['--page', input, '--base-url', files.base, '--originals', originals, '--no-download'],
          { from: matched },
        );
        expect(onlyJpeg.code).toBe(1);
        expect(onlyJpeg.report.results.map((r) => path.basename(r.source))).toEqual(['lake.jpg']);
        expect(onlyJpeg.report.failures.filter((f) => f.source === 'lake').map((f) => f.error)).toEqual([
          expect.stringMatching(
            new RegExp(
              "^\\$\\.presentation_stage\\.body\\[4\\]\\.value\\.work\\.image and 1 more \\('lake'\\): " +
                `no original named 'lake' in its format \\(\\.png\\) in ${originals}, and downloads are off$`,
            ),
          ),
        ]);
        const kept = JSON.parse(await readFile(onlyJpeg.written, 'utf8'));
        expect(kept.presentation_stage.body[4].value.work.image.sizes.xl.url).toBe('/media/lake.max-4800x4800.png');
      } finally {
        await files.close();
      }
    },
  );

  it('renditions whose names differ only in what the naming rule folds (case) fail together, saying so', async () => {
    const media = path.join(await tempDir(), 'media');
    await mkdir(media);
    for (const box of [300, 600, 1200, 2400, 4800])
      await copyFile(
        path.join(CONTENT, 'media', `ladybird.max-${box}x${box}.jpg`),
        path.join(media, `Ladybird.max-${box}x${box}.jpg`),
      );
    const files = await serveFiles(path.dirname(media), CONTENT);
    try {
      // The work's images show /media/Ladybird.*.jpg, the text_image block's /media/ladybird.*.jpg: two
      // files on the server.
      const input = await page101File((text) =>
        text.replace(/\/media\/marigold\.max-(\d+)x\1\.png/g, '/media/Ladybird.max-$1x$1.jpg'),
      );
      // From the downloads seed: the other sources, the same bytes from this server, are up to date.
      const run = await renderPage(['--page', input, '--base-url', files.base], { from: 'downloads' });
      expect(run.code).toBe(1);
      expect(run.report.failures.map((f) => f.source).sort()).toEqual([
        `${files.base}/media/Ladybird.max-4800x4800.jpg`,
        `${files.base}/media/ladybird.max-4800x4800.jpg`,
      ]);
      for (const failure of run.report.failures) {
        expect(failure.error).toMatch(
          new RegExp(
            /would write the same renditions as .* \(both are 'ladybird\.jpg' in the output folder\); /.source +
              /the naming rule folds case, accents and punctuation together; neither is rendered$/.source,
          ),
        );
      }
    } finally {
      await files.close();
    }
  });

  it('an Image whose size entry is an empty object gets the whole entry, and the page stays valid JSON', async () => {
    const dir = await tempDir();
    const page = JSON.parse(await page101());
    page.presentation_stage.thumbnail.sizes.lg = {};
    await writeFile(path.join(dir, 'in.json'), JSON.stringify(page, null, 2));
    const run = await renderPage(['--page', path.join(dir, 'in.json'), '--originals', ORIGINALS], {
      from: 'originals',
    });
    expect(run.code, run.stderr).toBe(0);
    const written = JSON.parse(await readFile(run.written, 'utf8'));
    const lg = JSON.parse(await page101()).presentation_stage.thumbnail.sizes.lg;
    expect(written.presentation_stage.thumbnail.sizes.lg).toEqual({ ...lg, url: await versionedIn(run.out, lg.url) });
    await checkFiles(run.written, run.out);
  });

  it(
    'an Image that must have a srcset and has none gets one, right after its sizes; ' + 'check then finds nothing',
    async () => {
      const dir = await tempDir();
      const page = JSON.parse(await page101());
      delete page.presentation_stage.thumbnail.srcset;
      const input = JSON.stringify(page, null, 2);
      await writeFile(path.join(dir, 'in.json'), input);
      const run = await renderPage(['--page', path.join(dir, 'in.json'), '--originals', ORIGINALS], {
        from: 'originals',
      });
      expect(run.code, run.stderr).toBe(0);
      const text = await readFile(run.written, 'utf8');
      const thumbnail = JSON.parse(text).presentation_stage.thumbnail;
      expect(Object.keys(thumbnail)).toEqual(['width', 'height', 'alt_text', 'sizes', 'srcset']);
      expect(thumbnail.srcset).toBe(
        `${thumbnail.sizes.xs.url} ${thumbnail.sizes.xs.width}w, ` +
          `${thumbnail.sizes.sm.url} ${thumbnail.sizes.sm.width}w, ` +
          `${thumbnail.sizes.md.url} ${thumbnail.sizes.md.width}w, ` +
          `${thumbnail.sizes.lg.url} ${thumbnail.sizes.lg.width}w, ` +
          `${thumbnail.sizes.xl.url} ${thumbnail.sizes.xl.width}w`,
      );
      // Every Image and meta.thumb is updated (each URL now carries its file's version); only the
      // thumbnail gains a line.
      expect([...run.report.updated].sort()).toEqual(run.report.results.flatMap((r) => r.paths).sort());
      // Nothing else changed: taking the added line out gives the input back, byte for byte, but for
      // each rendition URL's version.
      expect(text.replace(/,\n {6}"srcset": "[^"]*"/, '')).toBe(await withVersions(input, run.out));
      await checkFiles(run.written, run.out);
    },
  );

  it(
    'leaves the key order of each size as the page has it ' + '(url, width, height on inquiry artwork images)',
    async () => {
      const dir = await tempDir();
      const page = JSON.parse(await page101());
      const artwork = page.presentation_stage.body[4].value.work.inquiry_form_data.artwork_image;
      artwork.sizes = Object.fromEntries(
        Object.entries(artwork.sizes as Record<string, { url: string; width: number; height: number }>).map(
          ([key, { url, width, height }]) => [key, { url, width, height }],
        ),
      );
      await writeFile(path.join(dir, 'in.json'), JSON.stringify(page, null, 2));
      const run = await renderPage(
        ['--page', path.join(dir, 'in.json'), '--originals', ORIGINALS, '--format', 'webp'],
        {
          from: 'webp',
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const sizes = JSON.parse(await readFile(run.written, 'utf8')).presentation_stage.body[4].value.work
        .inquiry_form_data.artwork_image.sizes;
      for (const size of Object.values(sizes as Record<string, object>))
        expect(Object.keys(size)).toEqual(['url', 'width', 'height']);
      expect(sizes.xl.url).toBe(await versionedIn(run.out, '/media/marigold.max-4800x4800.webp'));
      await checkFiles(run.written, run.out);
    },
  );

  it(
    'warns for every Image whose URLs move folder, ' + 'also where two folders’ images found one original by name',
    async () => {
      const input = await page101File((text) => {
        const page = JSON.parse(text);
        const image = page.presentation_stage.feature_large_image;
        expect(image.sizes.xl.url).toBe('/media/landscapes/storm.max-4800x4800.jpg');
        return JSON.stringify(
          JSON.parse(
            JSON.stringify(page).replace(/"feature_large_image":\{.*?"srcset":"[^"]*"\}/, (match) =>
              match.replaceAll('/media/landscapes/storm.', '/media/other/storm.'),
            ),
          ),
          null,
          2,
        );
      });
      const run = await renderPage(['--page', input, '--originals', ORIGINALS], { from: 'originals' });
      expect(run.code, run.stderr).toBe(0);
      const storm = run.report.results.find((r) => r.source.endsWith('storm.jpg'))!;
      expect(storm.paths).toContain('$.presentation_stage.feature_large_image');
      expect(run.report.warnings).toContain(
        "$.presentation_stage.feature_large_image ('other/storm'): " +
          'its URLs move from /media/other/ to /media/landscapes/ ' +
          '(new URLs are --media-url /media/ and the path below it)',
      );
      expect(JSON.parse(await readFile(run.written, 'utf8')).presentation_stage.feature_large_image.sizes.xl.url).toBe(
        await versionedIn(run.out, '/media/landscapes/storm.max-4800x4800.jpg'),
      );
    },
  );

  it('downloads only from the API’s origin unless --download-from allows another', async () => {
    const files = await serveFiles(CONTENT);
    try {
      const input = await page101File((text) =>
        text.replaceAll('"/media/landscapes/dune.', `"${files.base}/media/landscapes/dune.`),
      );
      const refused = await renderPage(['--page', input, '--base-url', base], { from: 'downloads' });
      expect(refused.code).toBe(1);
      expect(refused.report.failures.map((f) => f.error)).toEqual([
        "$.presentation_stage.body[3].value.image ('landscapes/dune'): " +
          `${files.base}/media/landscapes/dune.max-4800x4800.jpg: ` +
          `not downloaded: ${files.base} is not the API's origin (${base}); ` +
          `allow it with --download-from ${files.base}`,
      ]);
      expect(files.requests).toEqual([]);
      expect(refused.report.results).toHaveLength(5);

      // From the downloads seed too: dune is still downloaded (its bytes decide), and up to date.
      const allowed = await renderPage(['--page', input, '--base-url', base, '--download-from', files.base], {
        from: 'downloads',
      });
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(files.requests).toEqual(['/media/landscapes/dune.max-4800x4800.jpg']);
      expect(allowed.report.results.map((r) => r.source)).toContain(
        `${files.base}/media/landscapes/dune.max-4800x4800.jpg`,
      );
    } finally {
      await files.close();
    }
  });

  it(
    'rendition URLs that climb out of the media folder (.., encoded dots and slashes) ' +
      'still write only below --out',
    async () => {
      const input = await page101File((text) =>
        text
          .replaceAll('"/media/landscapes/dune.', '"/media/..%2F..%2F../../../dune.')
          .replaceAll('"/media/landscapes/storm.', '"/media/%2e%2e%2f%2e%2e%2fetc/storm.'),
      );
      // --out three levels down, so a climb of one, two or three levels would land in `dir`, where it shows.
      const dir = await tempDir();
      const out = path.join(dir, 'a', 'b', 'media');
      await mkdir(path.join(dir, 'a'));
      const written = path.join(dir, 'a', 'page.json');
      // --out starts as the originals seed's: the four sources whose URLs stay are up to date there.
      await copySeed('originals', out);
      const run = await runCli([
        'render',
        '--page',
        input,
        '--originals',
        ORIGINALS,
        '--out',
        out,
        '--write-page',
        written,
        '--json',
      ]);
      expect(run.code, run.stderr).toBe(0);
      const urls = Object.fromEntries(
        (JSON.parse(run.stdout) as Report).results.map((r) => [path.basename(r.source), r.image.sizes.xl?.url]),
      );
      // the URL's own '..' segments climb to the root: no folder is left
      expect(urls['dune.jpg']).toBe(await versionedIn(out, '/media/dune.max-4800x4800.jpg'));
      // decoded '..' is a name, made safe
      expect(urls['storm.jpg']).toBe(await versionedIn(out, '/media/image/image/etc/storm.max-4800x4800.jpg'));
      const outside = (await readdir(dir, { recursive: true })).filter(
        (name) => !name.startsWith(path.join('a', 'b', 'media')),
      );
      expect(outside.sort()).toEqual(['a', path.join('a', 'b'), path.join('a', 'page.json')]);
      // The meta.thumb URLs climb too, but only once decoded: their paths start with /media/, so
      // they are references under the media prefix (check verifies them, and found them
      // file-outside before). They name storm's source, so they are rewritten with its Images.
      const page = JSON.parse(await readFile(written, 'utf8'));
      expect(page.presentation_stage.body[11].value.news_entries[0].meta.thumb.url).toBe(
        await versionedIn(out, '/media/image/image/etc/storm.max-1200x1200.jpg'),
      );
      await checkFiles(written, out);
    },
  );

  it.each([
    [
      ['render', 'samples/originals', '--page', '101'],
      /Expected original files and folders or --page, not both \(got samples\/originals and --page\)/,
    ],
    [['render', 'samples/originals', '--originals', 'x'], /--originals applies only with --page/],
    [
      ['render', 'samples/originals', '--originals', 'x', '--no-download'],
      /--originals, --no-download apply only with --page/,
    ],
    [
      ['render', 'samples/originals', '--download-from', 'https://cdn.example.org'],
      /--download-from applies only with --page/,
    ],
    [
      ['render', '--page', '101', '--download-from', 'ftp://cdn.example.org'],
      new RegExp(
        /Expected an http\(s\) origin such as https:\/\/cdn\.example\.org for --download-from /.source +
          /but got 'ftp:\/\/cdn\.example\.org'/.source,
      ),
    ],
    [
      ['render', '--page', 'samples/pages/presentation-every-block.json', '--originals', 'README.md'],
      /--originals README\.md: is a file, not a folder/,
    ],
    [
      ['render', '--page', 'http://127.0.0.1:9/pages/101'],
      new RegExp(
        /http:\/\/127\.0\.0\.1:9\/pages\/101: /.source +
          /not a page endpoint URL \(\{base_url\}\/api\/v2\/pages\/\{id\}\/\); /.source +
          /give the page id and --base-url/.source,
      ),
    ],
    [['render', '--out', 'x'], /Expected originals to render \(files or folders\), or --page/],
    [['render', '--page', '101'], /Expected --base-url or CONTENT_API_BASE_URL to fetch page 101/],
    [['render', '--page', 'nope.json'], /nope\.json: no such file or page id/],
    [['render', '--page', 'README.md'], /^error: README\.md: not JSON \(.*\)\n$/],
    [
      ['render', '--page', 'samples/pages/presentation-every-block.json', '--originals', 'no-such-folder'],
      /--originals no-such-folder: no such folder/,
    ],
    [
      ['render', '--page', '101', '--write-page', '-', '--json'],
      /--json and --write-page - both write to standard output: write one of them elsewhere/,
    ],
    [
      ['render', '--page', '101', '--write-page', '-', '--report', '/dev/stdout'],
      /--report \/dev\/stdout and --write-page - both write to standard output: write one of them elsewhere/,
    ],
    [
      ['render', '--page', 'README.md', '--write-page', 'no-such-folder/page.json'],
      /^error: --write-page no-such-folder\/page\.json: cannot write \(no folder no-such-folder\)$/m,
    ],
  ])('could not run (exit 2): %j', async (args, message) => {
    const dir = await tempDir();
    const run = await runCli([...args, ...(args.includes('--out') ? [] : ['--out', path.join(dir, 'media')])], {
      cwd: path.resolve(PAGES, '../..'),
    });
    expect(run.stderr).toMatch(message);
    expect(run.code).toBe(2);
  });
});
