/**
 * The render contact sheet in a real headless browser (Debian's chromium, driven by
 * playwright-core), opened as an editor would open it later: the output folder gone, the
 * browser offline, every request but the file itself aborted and recorded.
 */
import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Locator } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactSheetHtml } from '../../src/contact-sheet/contact-sheet.js';
import { type RenderReport, renderOriginals } from '../../src/renditions/render.js';
import { openStore } from '../../src/storage/location.js';
import { formatBytes } from '../../src/units.js';
import { launchChromium } from '../fixtures/chromium.js';
import { photo, writeImage } from '../fixtures/images.js';
import { callingThread } from '../fixtures/score-pool.js';
import { tempDir } from '../fixtures/tmp.js';

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(() => browser?.close());

/** File names that are markup: a script element, and an attribute that closes and runs one. */
const SCRIPT_NAME = '<script>document.title="pwned"<script>.jpg';
const ATTRIBUTE_NAME = '"><img src=x onerror="document.title=\'pwned\'">.png';

/** Small generated originals (a photo, a portrait with alpha, the hostile names) and a file that is no image. */
async function originals() {
  const dir = await tempDir();
  const input = path.join(dir, 'originals');
  await writeImage(input, 'harbour.jpg', photo(640, 400).jpeg());
  await writeImage(input, 'poster.png', photo(300, 500, 4).png());
  await writeImage(input, SCRIPT_NAME, photo(360, 240).jpeg());
  await writeImage(input, ATTRIBUTE_NAME, photo(200, 200).png());
  await writeFile(path.join(input, 'broken.jpg'), 'not a JPEG at all');
  return { dir, input, outDir: path.join(dir, 'media') };
}

/** Writes the sheet and opens it offline; every request besides the file itself is aborted and recorded. */
async function openSheet(text: string) {
  const file = path.join(await tempDir(), 'report.html');
  await writeFile(file, text);
  const context = await browser.newContext({ offline: true, viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const requests: string[] = [];
  const dialogs: string[] = [];
  await page.route('**', (route) => {
    const url = route.request().url();
    if (url === pathToFileURL(file).href || url.startsWith('data:')) return route.continue();
    requests.push(url);
    return route.abort();
  });
  page.on('request', (request) => {
    const url = request.url();
    if (url !== pathToFileURL(file).href && !url.startsWith('data:') && !requests.includes(url)) requests.push(url);
  });
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, requests, dialogs, close: () => context.close() };
}

/** Each image `locator` finds: decoded, its natural width, its src scheme. */
const images = (locator: Locator) =>
  locator.evaluateAll((nodes) =>
    Promise.all(
      nodes.map(async (node) => {
        const img = node as unknown as { decode(): Promise<void>; naturalWidth: number; src: string };
        const decoded = await img.decode().then(
          () => true,
          () => false,
        );
        return { decoded, naturalWidth: img.naturalWidth, src: img.src.slice(0, 23) };
      }),
    ),
  );

describe('the contact sheet', () => {
  it(
    'shows failures and warnings first, then every original with five thumbnails and its bytes per format, ' +
      'opened offline with the output folder gone',
    async () => {
      const { input, outDir } = await originals();
      const rendered = await renderOriginals([input], { outDir, formats: ['keep', 'webp'] });
      expect(rendered.results).toHaveLength(4);
      expect(rendered.failures.map((failure) => path.basename(failure.source))).toEqual(['broken.jpg']);
      const report: RenderReport = {
        ...rendered,
        warnings: ['<script>document.title="pwned"</script> & "quoted" warning'],
      };
      const text = await contactSheetHtml(report, { store: outDir, title: 'Batch <7>' });
      await rm(outDir, { recursive: true });

      const { page, requests, dialogs, close } = await openSheet(text);
      expect(await page.title()).toBe('Batch <7>');
      expect(await page.locator('h1').innerText()).toBe('Batch <7>');
      expect(await page.locator('.summary').innerText()).toBe(
        '4 rendered, 0 up to date, 0 planned, 1 failed, 0 not started, 1 warning(s)',
      );

      // Failures and warnings come before the first card, each one line, escaped.
      const classes = await page.locator('body > *').evaluateAll((nodes) => nodes.map((node) => node.className));
      const at = (name: string) => classes.findIndex((names) => names.split(' ').includes(name));
      const order = { failures: at('failures'), warnings: at('warnings'), card: at('card') };
      expect(order.failures).toBeGreaterThan(-1);
      expect(order.failures).toBeLessThan(order.warnings);
      expect(order.warnings).toBeLessThan(order.card);
      const failure = page.locator('.failures li');
      expect(await failure.count()).toBe(1);
      expect(await failure.getAttribute('data-code')).toBe(rendered.failures[0]!.code);
      expect(await failure.innerText()).toContain(`${rendered.failures[0]!.source} [${rendered.failures[0]!.code}]`);
      expect(await page.locator('.warnings li').allInnerTexts()).toEqual(report.warnings);

      // One card per original, in the report's order, each with five decoded thumbnails.
      const cards = page.locator('.card');
      expect(await cards.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-source')))).toEqual(
        rendered.results.map((result) => result.source),
      );
      for (let index = 0; index < rendered.results.length; index++) {
        const result = rendered.results[index]!;
        const card = cards.nth(index);
        expect(await card.locator('h2').innerText()).toBe(result.source);
        const thumbnails = await images(card.locator('figure[data-key] img'));
        expect(thumbnails).toHaveLength(5);
        for (const thumbnail of thumbnails) {
          expect(thumbnail.decoded).toBe(true);
          expect(thumbnail.naturalWidth).toBeGreaterThan(0);
          expect(thumbnail.src).toBe('data:image/webp;base64,');
        }
        const captions = await card.locator('figure[data-key] figcaption').allInnerTexts();
        expect(captions).toEqual(
          (['xs', 'sm', 'md', 'lg', 'xl'] as const).map(
            (key) => `${key} ${result.files[key].width}x${result.files[key].height}`,
          ),
        );
        // Bytes per format, the primary first, as the results say.
        const bytes = await card
          .locator('table.formats tr[data-format]')
          .evaluateAll((rows) =>
            rows.map((row) => [
              row.getAttribute('data-format'),
              Number(row.querySelector('[data-bytes]')?.getAttribute('data-bytes')),
            ]),
          );
        expect(bytes).toEqual([
          [result.format, result.bytes],
          ...result.alternates.map((alternate) => [alternate.format, alternate.bytes]),
        ]);
        expect(result.alternates.map((alternate) => alternate.format)).toEqual(['webp']);
        // The placeholder a page shows while the image loads.
        expect(await card.locator('.placeholder-of').getAttribute('data-color')).toBe(result.placeholder!.color);
      }
      expect((await images(page.locator('.placeholder-of img'))).every((preview) => preview.decoded)).toBe(true);

      // The totals per format add up the results.
      const totals = new Map<string, number>();
      for (const result of rendered.results)
        for (const { format, bytes } of [result, ...result.alternates])
          totals.set(format, (totals.get(format) ?? 0) + bytes!);
      const shown = await page
        .locator('table.totals tr[data-format]')
        .evaluateAll((rows) =>
          rows.map((row) => [
            row.getAttribute('data-format'),
            Number(row.querySelector('[data-bytes]')?.getAttribute('data-bytes')),
          ]),
        );
      expect(new Map(shown as Array<[string, number]>)).toEqual(totals);

      // The hostile names are text: no script element, no element their markup would make, nothing ran.
      const names = await cards.locator('h2').allInnerTexts();
      expect(names.map((name) => path.basename(name))).toEqual(expect.arrayContaining([SCRIPT_NAME, ATTRIBUTE_NAME]));
      expect(await page.locator('script').count()).toBe(0);
      expect(await page.locator('img[onerror]').count()).toBe(0);
      expect(await page.title()).toBe('Batch <7>');
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([]);
      await close();
    },
  );

  it('bounds itself: past the thumbnail budget, boxes and a note; past the card limit, a line each', async () => {
    const { input, outDir } = await originals();
    const rendered = await renderOriginals([input], { outDir, formats: ['keep', 'webp'] });
    const store = await openStore(outDir);
    const text = await contactSheetHtml(rendered, { store, thumbnailBudget: 12_000, maxCards: 3 });
    const thumbnails = text.match(/data:image\/webp;base64,[A-Za-z0-9+/=]+/g) ?? [];
    const previews = rendered.results.slice(0, 3).map((result) => result.placeholder!.preview);
    const embedded = thumbnails.filter((uri) => !previews.includes(uri));
    expect(embedded.length).toBeGreaterThan(0);
    expect(embedded.join('').length).toBeLessThanOrEqual(12_000);

    const { page, requests, close } = await openSheet(text);
    expect(await page.locator('.card').count()).toBe(3);
    const spent = page.locator('figure[data-key] .placeholder');
    expect(await spent.count()).toBe(15 - embedded.length);
    expect(await spent.first().innerText()).toBe("not embedded: the report's thumbnail budget is spent");
    expect(await page.locator('p.note').allInnerTexts()).toEqual([
      `${15 - embedded.length} thumbnail(s) not embedded: the sheet's thumbnail budget (12.0 kB) is spent. ` +
        'Boxes show those renditions at their proportions.',
      'Past 3 cards, the other 1 original(s) are listed in one line each.',
    ]);
    // The boxes keep each rendition's proportions.
    const boxes = await spent.evaluateAll((nodes) =>
      nodes.map((node) => {
        const figure = node.parentElement!;
        const { width, height } = node.getBoundingClientRect();
        return { ratio: width / height, real: Number(figure.dataset.width) / Number(figure.dataset.height) };
      }),
    );
    for (const { ratio, real } of boxes) expect(Math.abs(ratio - real)).toBeLessThan(0.05);
    const listed = page.locator('table.listed tr');
    expect(await listed.count()).toBe(1);
    expect(await listed.getAttribute('data-source')).toBe(rendered.results[3]!.source);
    expect(requests).toEqual([]);
    await close();
  });

  it('a dry run: sizes in boxes, no thumbnails, no bytes', async () => {
    const { input, outDir } = await originals();
    const planned = await renderOriginals([input], { outDir, formats: ['keep', 'webp'], dryRun: true });
    const text = await contactSheetHtml(planned, { store: outDir });
    const { page, requests, close } = await openSheet(text);
    expect(await page.locator('.summary').innerText()).toBe(
      '0 rendered, 0 up to date, 4 planned, 1 failed, 0 not started, 0 warning(s)',
    );
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('figure[data-key] .placeholder').count()).toBe(20);
    expect(await page.locator('figure[data-key] .placeholder').first().innerText()).toBe('planned: not written');
    expect(await page.locator('table.totals').count()).toBe(0);
    expect(await page.locator('table.formats td.bytes').first().innerText()).toBe('not written');
    expect(await page.locator('table.formats td.bytes[data-key]').count()).toBe(0);
    expect(await page.locator('p.note').first().innerText()).toMatch(/^A dry run: nothing was written/);
    expect(requests).toEqual([]);
    await close();
  });

  it('shows each rendition’s encoder quality and score with --quality auto', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'small.jpg', photo(320, 200).jpeg());
    const outDir = path.join(dir, 'media');
    const rendered = await renderOriginals([source], { outDir, quality: { mode: 'auto' }, scorePool: callingThread });
    const result = rendered.results[0]!;
    expect(result.measured).toBeDefined();
    const { page, close } = await openSheet(await contactSheetHtml(rendered, { store: outDir }));
    const cells = await page
      .locator('table.formats tr.primary td.measured')
      .evaluateAll((nodes) => nodes.map((node) => [Number(node.dataset.quality), Number(node.dataset.score)]));
    expect(cells).toEqual(
      (['xs', 'sm', 'md', 'lg', 'xl'] as const).map((key) => [
        result.measured![key].quality,
        Number(result.measured![key].score.toFixed(2)),
      ]),
    );
    // The bytes of each rendition stay beside its quality and score.
    const bytes = await page
      .locator('table.formats tr.primary td.bytes[data-key]')
      .evaluateAll((nodes) => nodes.map((node) => Number(node.dataset.bytes)));
    expect(bytes).toEqual(
      await Promise.all(
        (['xs', 'sm', 'md', 'lg', 'xl'] as const).map(
          async (key) => (await stat(path.join(outDir, result.files[key].path))).size,
        ),
      ),
    );
    await close();
  });

  it("gives each original's pixel size and each rendition's bytes in every format, without --quality auto", async () => {
    const dir = await tempDir();
    const input = path.join(dir, 'originals');
    await writeImage(input, 'harbour.jpg', photo(1640, 1000).jpeg());
    await writeImage(input, 'poster.png', photo(300, 500, 4).png());
    const outDir = path.join(dir, 'media');
    const rendered = await renderOriginals([input], { outDir, formats: ['keep', 'webp'] });
    expect(rendered.results.map((result) => result.measured)).toEqual([undefined, undefined]);
    const sizes = new Map<string, number>();
    for (const result of rendered.results)
      for (const { files } of [result, ...result.alternates])
        for (const file of Object.values(files)) sizes.set(file.path, (await stat(path.join(outDir, file.path))).size);
    const text = await contactSheetHtml(rendered, { store: outDir });
    await rm(outDir, { recursive: true });

    const { page, requests, close } = await openSheet(text);
    const cards = page.locator('.card');
    expect(await cards.count()).toBe(2);
    for (const [index, result] of rendered.results.entries()) {
      const card = cards.nth(index);
      const original = card.locator('.facts .original');
      expect(await original.count()).toBe(1);
      expect(await original.innerText()).toBe(`original ${result.original.width}x${result.original.height} px`);
      expect([await original.getAttribute('data-width'), await original.getAttribute('data-height')]).toEqual([
        String(result.original.width),
        String(result.original.height),
      ]);
      // A column per rendition, in each format's row: the bytes of that file, as written.
      expect(await card.locator('table.formats th').allInnerTexts()).toEqual([
        'format',
        'bytes',
        'xs',
        'sm',
        'md',
        'lg',
        'xl',
      ]);
      for (const { format, files } of [result, ...result.alternates]) {
        const cells = card.locator(`table.formats tr[data-format="${format}"] td.bytes[data-key]`);
        const shown = await cells.evaluateAll((nodes) =>
          nodes.map((node) => [node.dataset.key, Number(node.dataset.bytes), node.textContent]),
        );
        expect(shown).toEqual(
          (['xs', 'sm', 'md', 'lg', 'xl'] as const).map((key) => {
            const bytes = sizes.get(files[key].path)!;
            return [key, bytes, formatBytes(bytes)];
          }),
        );
      }
      // Quality and score only with --quality auto.
      expect(await card.locator('td.measured').count()).toBe(0);
    }
    expect(requests).toEqual([]);
    await close();
  });

  it('shows art with transparency on a mid-grey checkerboard: white art and black art alike stand out', async () => {
    const dir = await tempDir();
    const input = path.join(dir, 'originals');
    // A 400x400 transparent square with an opaque square of one colour in its middle.
    const art = (value: number) => {
      const pixels = Buffer.alloc(400 * 400 * 4);
      for (let y = 100; y < 300; y++)
        for (let x = 100; x < 300; x++) pixels.set([value, value, value, 255], (y * 400 + x) * 4);
      return sharp(pixels, { raw: { width: 400, height: 400, channels: 4 } }).png();
    };
    await writeImage(input, 'white-logo.png', art(255));
    await writeImage(input, 'black-logo.png', art(0));
    const outDir = path.join(dir, 'media');
    const rendered = await renderOriginals([input], { outDir });
    const { page, close } = await openSheet(await contactSheetHtml(rendered, { store: outDir }));
    for (const result of rendered.results) {
      const thumbnail = page.locator(`.card[data-source="${result.source}"] figure[data-key="xs"] img`);
      const shot = await sharp(await thumbnail.screenshot())
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const { width, height } = shot.info;
      const at = (x: number, y: number) => luminance(shot.data, (y * width + x) * 3);
      // The art in the middle, the background in the top-left corner (inside the border; both tiles).
      const ink = at(Math.round(width / 2), Math.round(height / 2));
      const background: number[] = [];
      for (let y = 3; y < 20; y++) for (let x = 3; x < 20; x++) background.push(at(x, y));
      expect(new Set(background.map((value) => value.toFixed(2))).size).toBeGreaterThan(1); // a checkerboard
      // WCAG's 3:1, the contrast it asks of graphics, against every pixel of the checkerboard.
      const contrast = Math.min(...background.map((value) => contrastRatio(ink, value)));
      expect(contrast, `${path.basename(result.source)} against its background`).toBeGreaterThanOrEqual(3);
    }
    await close();
  });
});

/** The relative luminance (WCAG 2) of the sRGB pixel at `offset`. */
function luminance(data: Buffer, offset: number): number {
  const linear = (value: number) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(data[offset]!) + 0.7152 * linear(data[offset + 1]!) + 0.0722 * linear(data[offset + 2]!);
}

const contrastRatio = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
