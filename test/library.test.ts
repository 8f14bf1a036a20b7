/** The package's public API, imported as a user would (the built `exports` entry). */
import path from 'node:path';
import type { Image, ImageObject, Page } from 'content-api';
import * as api from 'content-api';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { tempDir } from './fixtures/tmp.js';
import { withVersions } from './fixtures/versions.js';
import { PAGES } from './page/variants.js';

describe('content-api as a library', () => {
  it('exports the render pipeline, the rules, the page model, validation and inspect', () => {
    for (const name of [
      'renderOriginals',
      'renderOriginal',
      'renditionSizes',
      'fitWithinBox',
      'renditionFileName',
      'buildSrcset',
      'pageSchema',
      'imageSchema',
      'blockSchema',
      'validatePage',
      'verifyImage',
      'inspectPage',
      'fetchPage',
      'pageJsonSchema',
      'ContentApiError',
      'SourceError',
      'HttpError',
      'loadPage',
      'renderPage',
      'renderSources',
      'replaceValues',
      'mediaPath',
    ]) {
      expect(typeof (api as Record<string, unknown>)[name], name).not.toBe('undefined');
    }
    expect(api.RENDITION_KEYS).toEqual(['xs', 'sm', 'md', 'lg', 'xl']);
  });

  it('renderPage: a page file and a folder of originals in, renditions and the updated page text out', async () => {
    const page = await api.loadPage(path.resolve(PAGES, '../content/pages/101.json'));
    const outDir = path.join(await tempDir(), 'media');
    const report = await api.renderPage(page, {
      outDir,
      originals: path.resolve(PAGES, '../originals'),
      concurrency: 2,
    });
    expect(report.failures).toEqual([]);
    expect(report.results.map((r) => path.basename(r.source)).sort()).toEqual([
      'dandelion.jpg',
      'dune.jpg',
      'ladybird.jpg',
      'marigold.png',
      'raindrops.webp',
      'storm.jpg',
    ]);
    // The sample's renditions were made from these originals: only the URLs' versions are new.
    expect(report.text).toBe(await withVersions(page.text, outDir));
    expect(api.mediaPath('https://cdn.example.org/media/a/b%20c.max-300x300.jpg', '/media/')).toBe(
      'a/b c.max-300x300.jpg',
    );
  });

  it('types: an Image object from render is a Content API Image', () => {
    expectTypeOf<ImageObject>().toMatchTypeOf<Image>();
    expectTypeOf<Page['presentation_stage']['thumbnail']>().toEqualTypeOf<Image>();
  });
});

describe('check as a library', () => {
  it('checkPages: pages in, every result and the counts out; the same rules and config as the CLI', async () => {
    const file = path.join(PAGES, 'presentation-every-block.json');
    const page = await api.loadPage(file);
    const bad = { ...page, json: { ...(page.json as object), colour: 'red' }, source: 'bad.json' };
    const report = await api.checkPages([page, bad]);
    expect(report.pages.map((p) => [p.source, p.problems.map((f) => f.rule)])).toEqual([
      [file, []],
      ['bad.json', ['unknown-key']],
    ]);
    expect(report).toMatchObject({ errors: 0, warnings: 1, images: 36, files: null });
    const off = await api.checkPages([bad], { policy: api.createPolicy({ rules: { 'unknown-key': 'off' } }) });
    expect(off).toMatchObject({ warnings: 0, ignored: 1 });
  });
});
