/**
 * The HTML contact sheet in a real headless browser (Debian's chromium, driven by
 * playwright-core; npm test installs chromium), opened later and elsewhere as a CI artifact
 * is: the media folder gone, the browser offline.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckRun } from '../../src/check/check.js';
import { openFileSource } from '../../src/check/probe.js';
import { htmlReporter } from '../../src/check/reporters/html.js';
import { loadPage } from '../../src/client/pages.js';
import { renderOriginal } from '../../src/renditions/render.js';
import { runCli } from '../cli/run-cli.js';
import { launchChromium } from '../fixtures/chromium.js';
import { photo, writeImage } from '../fixtures/images.js';
import { sampleRenditions } from '../fixtures/sample-renditions.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadVariants, PAGES } from '../page/variants.js';
import { startMediaServer } from './media-server.js';

let browser: Browser;
/** The sample originals rendered once for the file, read by the tests (one that removes them takes a copy). */
const samples = sampleRenditions();

beforeAll(async () => {
  await Promise.all([launchChromium().then((launched) => (browser = launched)), samples.shared()]);
});
afterAll(() => browser?.close());

/**
 * The sample originals' renditions (`copy`: a copy of its own, for a test that removes them) and the
 * image-aspect variant (md says 1200x700; the file is 1200x750).
 */
async function fixture(copy = false) {
  const dir = await tempDir();
  const media = copy ? await samples.copy(dir) : await samples.shared();
  const pageFile = path.join(dir, 'page.json');
  await writeFile(pageFile, JSON.stringify(loadVariants().find((v) => v.name === 'image-aspect')!.page));
  return { dir, media, pageFile };
}

/** Opens the report offline and records every request the page makes besides its own file. */
async function openOffline(file: string) {
  const context = await browser.newContext({ offline: true, viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (request) => {
    if (request.url() !== pathToFileURL(file).href && !request.url().startsWith('data:')) requests.push(request.url());
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, requests, close: () => context.close() };
}

describe('the HTML report', () => {
  it(
    'is one self-contained file: thumbnails of every rendition embedded, decoded offline with the media folder ' +
      'gone',
    async () => {
      const { dir, media, pageFile } = await fixture(true);
      const report = path.join(dir, 'report.html');
      const result = await runCli([
        'check',
        pageFile,
        '--verify-files',
        media,
        '--reporter',
        'html',
        '--output',
        report,
        '--base-url',
        'https://gallery.example.org',
      ]);
      expect(result.code).toBe(1);
      // Opened elsewhere, later: the renditions are not there any more.
      await rm(media, { recursive: true });
      const moved = path.join(await tempDir(), 'artifact.html');
      await rename(report, moved);
      expect((await readFile(moved)).length).toBeLessThan(1_000_000);

      const { page, requests, close } = await openOffline(moved);
      expect(await page.locator('.summary').innerText()).toBe('1 page(s), 18 image(s): 2 error(s), 0 warning(s)');
      expect(await page.locator('.image').count()).toBe(18);
      expect(await page.locator('.image figure img').count()).toBe(90);

      // Every <img> decodes, and shows the file's real proportions at their real aspect ratio.
      const figures = await page.locator('.image figure').evaluateAll(async (nodes) =>
        Promise.all(
          nodes.map(async (figure) => {
            const img = figure.querySelector('img') as unknown as {
              decode(): Promise<void>;
              naturalWidth: number;
              naturalHeight: number;
              complete: boolean;
              src: string;
              getBoundingClientRect(): { width: number; height: number };
            };
            const decoded = await img.decode().then(
              () => true,
              () => false,
            );
            const box = img.getBoundingClientRect();
            const link = figure.querySelector('a')?.getAttribute('href') ?? null;
            return {
              width: Number(figure.getAttribute('data-width')),
              height: Number(figure.getAttribute('data-height')),
              natural: [img.naturalWidth, img.naturalHeight],
              drawn: box.width / box.height,
              decoded,
              complete: img.complete,
              src: img.src.slice(0, 23),
              link,
            };
          }),
        ),
      );
      for (const figure of figures) {
        expect(figure.decoded && figure.complete).toBe(true);
        expect(figure.src).toBe('data:image/webp;base64,');
        expect(figure.natural[1]).toBeLessThanOrEqual(192); // a thumbnail, not the file
        // (the one figure whose JSON is wrong shows the file's real 1200x750)
        const real = figure.height === 700 ? 1200 / 750 : figure.width / figure.height;
        expect(Math.abs(figure.natural[0]! / figure.natural[1]! - real)).toBeLessThan(0.05);
        expect(Math.abs(figure.drawn - figure.width / figure.height)).toBeLessThan(0.05);
        expect(figure.link).toMatch(/^https:\/\/gallery\.example\.org\/media\/\S+\.max-\d+x\d+\.(jpg|png|webp)$/);
      }
      expect(requests).toEqual([]);

      // The findings sit in the card of the image they concern, and only there.
      const flagged = page.locator('.image.has-findings');
      expect(await flagged.count()).toBe(1);
      expect(await flagged.getAttribute('data-path')).toBe('$.presentation_stage.thumbnail');
      const items = await flagged.locator('li.error').allInnerTexts();
      expect(items).toHaveLength(2);
      expect(items.join('\n')).toContain('[image-aspect] md is 1200x700');
      expect(items.join('\n')).toMatch(
        /\[file-size\] .*ladybird\.max-1200x1200\.jpg is 1200x750, the JSON says 1200x700/,
      );
      await page.screenshot({ path: process.env.CONTENT_API_SCREENSHOT ?? path.join(dir, 'report.png') });
      await close();
    },
  );

  it('over HTTP: thumbnails made from the URLs read, and the server may be gone when it is opened', async () => {
    const { dir, media, pageFile } = await fixture();
    const server = await startMediaServer(media);
    const report = path.join(dir, 'report.html');
    try {
      expect(
        (await runCli(['check', pageFile, '--verify-files', server.base, '--reporter', 'html', '--output', report]))
          .code,
      ).toBe(1);
    } finally {
      await server.close();
    }
    const { page, requests, close } = await openOffline(report);
    const decoded = await page.locator('img').evaluateAll((images) =>
      Promise.all(
        images.map((img) =>
          (img as unknown as { decode(): Promise<void> }).decode().then(
            () => true,
            () => false,
          ),
        ),
      ),
    );
    expect(decoded).toEqual(Array(90).fill(true));
    // Root-relative URLs and no --base-url: nothing to link to, so no link.
    expect(await page.locator('figure a').count()).toBe(0);
    expect(requests).toEqual([]);
    await close();
  });

  it(
    "without a way to reach the files it says so, with boxes at each rendition's proportions instead of broken " +
      'images',
    async () => {
      const { dir, pageFile } = await fixture();
      const report = path.join(dir, 'report.html');
      expect((await runCli(['check', pageFile, '--reporter', 'html', '--output', report])).code).toBe(1);
      const { page, requests, close } = await openOffline(report);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('figure .placeholder').count()).toBe(90);
      expect(await page.locator('p.note').first().innerText()).toMatch(
        /^No thumbnails: the rendition files were not read \(give --verify-files/,
      );
      expect(requests).toEqual([]);
      await close();
    },
  );

  it('links only http(s) and relative URLs: a javascript: or data: rendition URL is escaped text (#22)', async () => {
    const sample = JSON.parse(await readFile(path.join(PAGES, 'presentation-every-block.json'), 'utf8'));
    const sizes = sample.presentation_stage.thumbnail.sizes;
    sizes.xs.url = 'javascript:alert(document.domain)';
    sizes.sm.url = ' JavaScript:alert(1)';
    sizes.md.url = 'data:text/html,<script>alert(2)</script>';
    const dir = await tempDir();
    const pageFile = path.join(dir, 'page.json');
    await writeFile(pageFile, JSON.stringify(sample));
    const report = path.join(dir, 'report.html');
    const base = ['--base-url', 'https://gallery.example.org'];
    expect((await runCli(['check', pageFile, '--reporter', 'html', '--output', report, ...base])).code).toBe(1);
    const { page, requests, close } = await openOffline(report);
    const hrefs = await page.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    expect(hrefs).toHaveLength(87);
    for (const href of hrefs) expect(href).toMatch(/^https:\/\/gallery\.example\.org\/media\//);
    const card = page.locator('.image[data-path="$.presentation_stage.thumbnail"]');
    const caption = (key: string) => card.locator(`figure[data-key="${key}"] figcaption`).innerText();
    expect(await caption('xs')).toMatch(/^xs 300x188\s+javascript:alert\(document\.domain\)$/);
    expect(await caption('sm')).toMatch(/^sm 600x375\s+JavaScript:alert\(1\)$/);
    expect(await caption('md')).toMatch(/^md 1200x750\s+data:text\/html,<script>alert\(2\)<\/script>$/);
    expect(await page.locator('script').count()).toBe(0);
    expect(requests).toEqual([]);
    await close();
  });

  it(
    'bounds itself: cards with findings first, a budget for thumbnails, the other pages listed in a line ' + 'each',
    async () => {
      const { media, pageFile } = await fixture();
      const valid = path.join(PAGES, 'presentation-every-block.json');
      const pages = await Promise.all(
        [pageFile, ...Array.from({ length: 30 }, () => valid)].map((file) => loadPage(file)),
      );
      const files = await openFileSource(media);
      try {
        const reporter = htmlReporter({ files, maxFlaggedCards: 5, maxCleanCards: 10, thumbnailBudget: 40_000 });
        const run = new CheckRun({ files });
        for await (const checked of run.run(pages)) reporter.page(checked);
        const text = await reporter.end({ summary: run.summary, fixed: [] });
        expect(run.summary.pages).toBe(31);
        const cards = text.match(/<div class="image[ "]/g) ?? [];
        expect(cards.length).toBe(11); // the flagged one, then 10 without findings
        expect(text.indexOf('has-findings')).toBeLessThan(text.indexOf('<div class="image"'));
        const thumbnails = text.match(/data:image\/webp;base64,[A-Za-z0-9+/=]+/g) ?? [];
        expect(thumbnails.length).toBeGreaterThan(0);
        expect(thumbnails.join('').length).toBeLessThanOrEqual(40_000);
        expect(text).toContain("not embedded: the report's thumbnail budget is spent");
        // The valid pages: the first page's cards spent the budget for cards without findings.
        expect((text.match(/<tr>/g) ?? []).length).toBe(30);
      } finally {
        await files.close();
      }
    },
  );

  it("shows the files of an alternate a finding is about, not the primary's", async () => {
    // A photograph rendered as JPEG with WebP alternates; md's WebP then replaced by a magenta picture of its size.
    const dir = await tempDir();
    const media = path.join(dir, 'media');
    const original = await writeImage(dir, 'meadow.jpg', photo(1600, 1000).jpeg());
    const result = await renderOriginal(original, { outDir: media, formats: ['keep', 'webp'] });
    const md = result.alternates[0]!.files.md;
    const magenta = { r: 255, g: 0, b: 255 };
    await sharp({ create: { width: md.width, height: md.height, channels: 3, background: magenta } })
      .webp()
      .toFile(path.join(media, md.path));
    const json = { id: 1, images: [result.image] };
    const files = await openFileSource(media);
    let text: string;
    try {
      const reporter = htmlReporter({ files });
      const run = new CheckRun({ files });
      for await (const checked of run.run([{ source: 'page.json', text: JSON.stringify(json), json }]))
        reporter.page(checked);
      text = await reporter.end({ summary: run.summary, fixed: [] });
    } finally {
      await files.close();
    }
    const report = path.join(dir, 'report.html');
    await writeFile(report, text);

    const { page, requests, close } = await openOffline(report);
    const card = page.locator('.image.has-findings');
    expect(await card.count()).toBe(1);
    const finding = card.locator('li.error', { hasText: 'webp alternate' });
    expect(await finding.innerText()).toMatch(
      /\[file-picture\] webp alternate \S*meadow\.max-1200x1200\.webp is not the picture render recorded/,
    );
    // The finding sits with the thumbnails of the files it is about: the WebP alternate's md, magenta.
    const group = card.locator('.alternate', { has: page.locator('li.error', { hasText: 'webp alternate' }) });
    expect(await group.count()).toBe(1);
    expect(await group.getAttribute('data-format')).toBe('webp');
    const figures = group.locator('figure');
    expect(await figures.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-key')))).toEqual(['md']);
    const mean = async (src: string | null) => {
      const { channels } = await sharp(Buffer.from(src!.replace(/^data:image\/webp;base64,/, ''), 'base64')).stats();
      return channels.slice(0, 3).map((channel) => Math.round(channel.mean));
    };
    const [r, g, b] = await mean(await figures.locator('img').getAttribute('src'));
    expect(r).toBeGreaterThan(230);
    expect(g).toBeLessThan(30);
    expect(b).toBeGreaterThan(230);
    // The Image's own md, a JPEG of the photograph, is no magenta: the alternate's thumbnail is its own file's.
    const primary = await mean(
      await card.locator(':scope > .renditions figure[data-key="md"] img').getAttribute('src'),
    );
    expect(primary).not.toEqual([r, g, b]);
    expect(primary[1]).toBeGreaterThan(60);
    expect(requests).toEqual([]);
    await close();
  });
});
