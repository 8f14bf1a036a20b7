/**
 * The HTML contact sheet in a real headless browser: Debian's chromium, driven by
 * playwright-core (.ci/run installs chromium).
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderOriginals } from '../../src/renditions/render.js';
import { runCli } from '../cli/run-cli.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadVariants, PAGES } from '../page/variants.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium (apt-get install chromium)`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
});
afterAll(() => browser?.close());

describe('the HTML report', () => {
  it('shows every image with its five renditions at their real proportions, and each finding beside its image', async () => {
    const dir = await tempDir();
    const media = path.join(dir, 'media');
    await renderOriginals([path.resolve(PAGES, '../originals')], { outDir: media });
    const variant = loadVariants().find((v) => v.name === 'image-aspect')!;
    const pageFile = path.join(dir, 'page.json');
    await writeFile(pageFile, JSON.stringify(variant.page));
    const report = path.join(dir, 'report.html');
    const result = await runCli(['check', pageFile, '--verify-files', media, '--reporter', 'html', '--output', report]);
    expect(result.code).toBe(1);

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(pathToFileURL(report).href, { waitUntil: 'load' });
    // The JSON says md is 1200x700 (image-aspect); the file itself is 1200x750 (file-size).
    expect(await page.locator('.summary').innerText()).toBe('1 page(s), 18 image(s): 2 error(s), 0 warning(s)');
    expect(await page.locator('.image').count()).toBe(18);
    expect(await page.locator('.image figure img').count()).toBe(90);

    // Every rendition file loads (they are lazy for a person scrolling; load them all now)
    // and is drawn with its real aspect ratio.
    await page.locator('img').evaluateAll((images) =>
      Promise.all(
        images.map((node) => {
          const img = node as unknown as { loading: string; decode(): Promise<void> };
          img.loading = 'eager';
          return img.decode().catch(() => undefined);
        }),
      ),
    );
    const figures = await page.locator('.image figure').evaluateAll((nodes) =>
      nodes.map((figure) => {
        const img = figure.querySelector('img')!;
        const box = img.getBoundingClientRect();
        return { width: Number(figure.getAttribute('data-width')), height: Number(figure.getAttribute('data-height')), natural: [img.naturalWidth, img.naturalHeight], drawn: box.width / box.height, complete: img.complete };
      }),
    );
    for (const figure of figures) {
      expect(figure.complete).toBe(true);
      // (the one figure whose JSON is wrong shows the file's real 1200x750)
      if (figure.height !== 700) expect(figure.natural).toEqual([figure.width, figure.height]);
      expect(Math.abs(figure.drawn - figure.width / figure.height)).toBeLessThan(0.05);
    }

    // The finding sits in the card of the image it concerns, and only there.
    const flagged = page.locator('.image.has-findings');
    expect(await flagged.count()).toBe(1);
    expect(await flagged.getAttribute('data-path')).toBe('$.presentation_stage.thumbnail');
    const items = await flagged.locator('li.error').allInnerTexts();
    expect(items).toHaveLength(2);
    expect(items.join('\n')).toContain('[image-aspect] md is 1200x700');
    expect(items.join('\n')).toMatch(/\[file-size\] .*ladybird\.max-1200x1200\.jpg is 1200x750, the JSON says 1200x700/);
    await page.screenshot({ path: process.env.CONTENT_API_SCREENSHOT ?? path.join(dir, 'report.png') });
    await page.close();
  });
});
