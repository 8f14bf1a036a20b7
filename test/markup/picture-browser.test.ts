/**
 * The markup in a real browser (Debian's chromium, driven by playwright-core; npm test installs
 * chromium) over real files: a sample rendered in JPEG, AVIF and WebP, served on loopback with
 * the page that holds the markup. The server can hold the image bytes back, to see the box the
 * browser reserves before they arrive.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MarkupImage, pictureHtml } from '../../src/markup/picture.js';
import { type RenderResult, renderOriginal } from '../../src/renditions/render.js';
import { launchChromium } from '../fixtures/chromium.js';
import { versionedIn } from '../fixtures/versions.js';

const LADYBIRD = path.resolve('samples/originals/ladybird.jpg');

/** Serves `/media/...` from `root` (each response held while `hold` is on) and `/page.html`. */
async function startServer(root: string) {
  let page = '';
  let held: Array<() => void> | null = null;
  const media: string[] = [];
  const server = createServer(async (req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    if (pathname === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return res.end(page);
    }
    const file = path.join(root, pathname.replace(/^\/media\//, ''));
    const body = file.startsWith(root + path.sep) ? await readFile(file).catch(() => null) : null;
    if (!body) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    media.push(pathname);
    if (held) await new Promise<void>((resolve) => held!.push(resolve));
    const type = { '.jpg': 'image/jpeg', '.avif': 'image/avif', '.webp': 'image/webp' }[path.extname(file)];
    res.writeHead(200, { 'content-type': type ?? 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** The page served next, with `markup` in its body and a paragraph after it. */
    setPage(markup: string) {
      page =
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Markup</title>\n' +
        '<link rel="icon" href="data:,">\n' +
        '<style>body { margin: 0 } img { display: block; width: 100%; height: auto }</style>\n' +
        `</head>\n<body>\n${markup}\n<p>After the image.</p>\n</body>\n</html>\n`;
    },
    media,
    hold: () => (held = []),
    release: () => {
      for (const resolve of held ?? []) resolve();
      held = null;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let browser: Browser;
let server: Awaited<ReturnType<typeof startServer>>;
let rendered: RenderResult;
/** The files for every test of the file (tempDir's folders go after each test). */
let dir: string;
/** The URL the markup gives a rendition (`/media/<file>?v=<its version>`), as the browser resolves it. */
const served = async (file: string) => `${server.base}${await versionedIn(path.join(dir, 'media'), `/media/${file}`)}`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'content-api-markup-'));
  const out = path.join(dir, 'media');
  // AVIF at effort 0: the markup is under test here, not the encoder (a few seconds, not 30).
  [rendered, browser] = await Promise.all([
    renderOriginal(LADYBIRD, { outDir: out, formats: ['keep', 'avif', 'webp'], avif: { effort: 0 } }),
    launchChromium(),
  ]);
  server = await startServer(out);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Seen {
  /** The img's box height while its bytes are held back, then once it is decoded. */
  before: number;
  after: number;
  complete: boolean;
  currentSrc: string;
  /** The sum of the page's layout-shift scores (the Layout Instability API). */
  shift: number;
  /** Rendition files fetched, by path. */
  media: string[];
  /** Console errors, page errors, failed requests and requests that left loopback. */
  errors: string[];
  /** The img's attributes as the browser parsed them, the children of <picture>, the page's scripts. */
  attributes: Record<string, string>;
  children: string[];
  scripts: number;
  background: { color: string; image: string };
}

/** The little of the DOM the functions run in the page use (the tests' TypeScript has no DOM library). */
interface Img {
  complete: boolean;
  currentSrc: string;
  decode(): Promise<void>;
  getBoundingClientRect(): { height: number };
  attributes: ArrayLike<{ name: string; value: string }>;
  parentElement: { children: ArrayLike<{ tagName: string }> } | null;
}
interface InPage {
  shift: number;
  document: { scripts: { length: number } };
  getComputedStyle(node: Img): { backgroundColor: string; backgroundImage: string };
  requestAnimationFrame(callback: () => void): void;
  PerformanceObserver: new (
    callback: (list: { getEntries(): Array<{ value: number }> }) => void,
  ) => { observe(options: { type: string; buffered: boolean }): void };
}

/**
 * Opens a page holding `markup` at `width` x 900 CSS px, device scale factor 1: the image as wide
 * as the page, or as `column` CSS px.
 */
async function view(markup: string, width: number, column?: number): Promise<Seen> {
  server.setPage(column ? `<div style="width: ${column}px">\n${markup}\n</div>` : markup);
  server.media.length = 0;
  const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
  try {
    await context.addInitScript(() => {
      const w = globalThis as unknown as InPage;
      w.shift = 0;
      new w.PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.shift += entry.value;
      }).observe({ type: 'layout-shift', buffered: true });
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(`console: ${message.text()}`));
    page.on('pageerror', (error) => errors.push(`page: ${error.message}`));
    page.on('dialog', (dialog) => errors.push(`dialog: ${dialog.message()}`));
    page.on('requestfailed', (request) => errors.push(`failed: ${request.url()} ${request.failure()?.errorText}`));
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${server.base}/`) && !url.startsWith('data:')) errors.push(`left loopback: ${url}`);
    });

    server.hold();
    const image = page.waitForRequest((request) => request.url().includes('/media/'));
    await page.goto(`${server.base}/page.html`, { waitUntil: 'domcontentloaded' });
    await image;
    const img = page.locator('img');
    const early = await img.evaluate((node: Img) => {
      const style = (globalThis as unknown as InPage).getComputedStyle(node);
      return {
        before: node.getBoundingClientRect().height,
        complete: node.complete,
        background: { color: style.backgroundColor, image: style.backgroundImage },
      };
    });
    server.release();
    await page.waitForLoadState('load');
    const late = await img.evaluate(async (node: Img) => {
      const w = globalThis as unknown as InPage;
      await node.decode();
      // Two frames, for the layout-shift entries of the frame that drew the image.
      await new Promise<void>((resolve) => w.requestAnimationFrame(() => w.requestAnimationFrame(resolve)));
      return {
        after: node.getBoundingClientRect().height,
        currentSrc: node.currentSrc,
        shift: w.shift,
        attributes: Object.fromEntries(Array.from(node.attributes, (a) => [a.name, a.value])),
        children: Array.from(node.parentElement?.children ?? [], (child) => child.tagName.toLowerCase()),
        scripts: w.document.scripts.length,
      };
    });
    return { ...early, ...late, media: [...server.media], errors };
  } finally {
    await context.close();
  }
}

/** A placeholder as render makes one: the average colour and a tiny WebP preview. */
async function placeholderOf(file: string) {
  const { channels } = await sharp(file).stats();
  const color = `#${channels
    .slice(0, 3)
    .map((channel) => Math.round(channel.mean).toString(16).padStart(2, '0'))
    .join('')}`;
  const preview = await sharp(file).resize(16).webp({ quality: 40 }).toBuffer();
  return { color, preview: `data:image/webp;base64,${preview.toString('base64')}` };
}

const HOSTILE = `"><script>alert(1)</script><img src=x onerror="alert(2)">'&amp;`;

describe('pictureHtml in Chromium', () => {
  it('AVIF first, the smallest rendition that covers the slot, the box kept from the start, no errors', async () => {
    const placeholder = await placeholderOf(LADYBIRD);
    const item: MarkupImage = { ...rendered, image: { ...rendered.image, alt_text: HOSTILE }, placeholder };
    const markup = pictureHtml(item);

    // 400 CSS px at 1x, the image as wide as the page: 400 px, and sm (600w) is the first that covers it.
    const narrow = await view(markup, 400);
    expect(narrow.errors).toEqual([]);
    expect(narrow.currentSrc).toBe(await served('ladybird.max-600x600.avif'));
    expect(narrow.media).toEqual(['/media/ladybird.max-600x600.avif']); // not the src, not the WebP
    // The box is the image's: 400 wide at 1600:1000, before the bytes came and after.
    expect(narrow.complete).toBe(false);
    expect(narrow.before).toBe(250);
    expect(narrow.after).toBe(narrow.before);
    expect(narrow.shift).toBe(0);
    // The placeholder paints that box meanwhile.
    const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(placeholder.color.slice(i, i + 2), 16));
    expect(narrow.background.color).toBe(`rgb(${r}, ${g}, ${b})`);
    expect(narrow.background.image).toBe(`url("${placeholder.preview}")`);
    // The hostile alt text stayed text: the same attributes, the alt as given, no script, no dialog.
    expect(narrow.children).toEqual(['source', 'source', 'img']);
    expect(Object.keys(narrow.attributes)).toEqual([
      'src',
      'srcset',
      'sizes',
      'width',
      'height',
      'alt',
      'loading',
      'decoding',
      'style',
    ]);
    expect(narrow.attributes.alt).toBe(HOSTILE);
    expect(narrow.scripts).toBe(0);

    // 1400 CSS px: md (1200w) falls short, lg (2400w) covers it.
    const wide = await view(markup, 1400);
    expect(wide.errors).toEqual([]);
    expect(wide.currentSrc).toBe(await served('ladybird.max-2400x2400.avif'));
    expect(wide.media).toEqual(['/media/ladybird.max-2400x2400.avif']);
    expect(wide.before).toBe(875);
    expect(wide.after).toBe(wide.before);
    expect(wide.shift).toBe(0);
  }, 30_000);

  it('sizes: by default the rendition for the width the image is drawn at; with 100vw, for the window', async () => {
    // A 500 px column in a 1400 px window: auto finds 500 px, and sm (600w) covers it.
    const column = await view(pictureHtml(rendered), 1400, 500);
    expect(column.currentSrc).toBe(await served('ladybird.max-600x600.avif'));
    expect([column.before, column.after]).toEqual([312.5, 312.5]);
    const viewport = await view(pictureHtml(rendered, { sizes: '100vw' }), 1400, 500);
    expect(viewport.currentSrc).toBe(await served('ladybird.max-2400x2400.avif'));
    const eager = await view(pictureHtml(rendered, { loading: 'eager' }), 1400, 500);
    expect(eager.currentSrc).toBe(await served('ladybird.max-2400x2400.avif'));
    for (const seen of [column, viewport, eager]) expect(seen.errors).toEqual([]);
  });

  it('the test can see a layout shift: without width and height the box is empty until the bytes arrive', async () => {
    // (With sizes=auto, Chromium's own style gives a lazy image a fixed 300x150 box till it loads.)
    const markup = pictureHtml(rendered, { sizes: '100vw' }).replace(/ width="\d+" height="\d+"/, '');
    const seen = await view(markup, 400);
    expect(seen.errors).toEqual([]);
    expect(seen.before).toBe(0);
    expect(seen.after).toBe(250);
    expect(seen.shift).toBeGreaterThan(0);
  });
});
