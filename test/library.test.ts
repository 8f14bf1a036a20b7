/** The package's public API, imported as a user would (the built `exports` entry). */
import path from 'node:path';
import * as api from 'content-api';
import type { Image, ImageObject, Page } from 'content-api/model';
import * as model from 'content-api/model';
import * as quality from 'content-api/quality';
import * as queue from 'content-api/queue';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { tempDir } from './fixtures/tmp.js';
import { withVersions } from './fixtures/versions.js';
import { PAGES } from './page/variants.js';

describe('content-api as a library', () => {
  it('exports the commands at its root, the rules and the page model, the metric and the queue by purpose', () => {
    const exported = (entry: object, names: string[]) =>
      names.filter((name) => typeof (entry as Record<string, unknown>)[name] === 'undefined');
    const root = ['renderOriginals', 'renderOriginal', 'renderSources', 'renderPage', 'inspectPage', 'checkPages'];
    expect(exported(api, [...root, 'fetchPage', 'loadPage', 'replaceValues', 'SourceError', 'HttpError'])).toEqual([]);
    const rules = ['renditionSizes', 'fitWithinBox', 'renditionFileName', 'buildSrcset', 'mediaPath', 'verifyImage'];
    const pages = ['schemas', 'validatePage', 'pageJsonSchema'];
    expect(exported(model, [...rules, ...pages, 'ContentApiError'])).toEqual([]);
    // The page model whole, its parts by name.
    expect(exported(model.schemas, ['page', 'image', 'block', 'blocks'])).toEqual([]);
    expect(model.schemas.page.shape.presentation_stage.shape.thumbnail).toBe(model.schemas.image);
    expect(exported(quality, ['ssimulacra2', 'rawPixels', 'ScorePool'])).toEqual([]);
    expect(exported(queue, ['enqueueRender', 'startWorker', 'collectBatch', 'queueStatus'])).toEqual([]);
    expect(model.RENDITION_KEYS).toEqual(['xs', 'sm', 'md', 'lg', 'xl']);
    // One class, whichever entry it is imported from.
    expect(model.ContentApiError).toBe(api.ContentApiError);
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
    expect(model.mediaPath('https://cdn.example.org/media/a/b%20c.max-300x300.jpg', '/media/')).toBe(
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
