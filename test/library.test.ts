/** The package's public API, imported as a user would (the built `exports` entry). */
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as api from 'content-api';
import type { Image, Page, ImageObject } from 'content-api';

describe('content-api as a library', () => {
  it('exports the render pipeline, the rules, the page model, validation and inspect', () => {
    for (const name of ['renderOriginals', 'renderOriginal', 'renditionSizes', 'fitWithinBox', 'renditionFileName', 'buildSrcset', 'pageSchema', 'imageSchema', 'blockSchema', 'validatePage', 'verifyImage', 'inspectPage', 'fetchPage', 'pageJsonSchema', 'ContentApiError', 'SourceError', 'HttpError']) {
      expect(typeof (api as Record<string, unknown>)[name], name).not.toBe('undefined');
    }
    expect(api.RENDITION_KEYS).toEqual(['xs', 'sm', 'md', 'lg', 'xl']);
  });

  it('types: an Image object from render is a Content API Image', () => {
    expectTypeOf<ImageObject>().toMatchTypeOf<Image>();
    expectTypeOf<Page['presentation_stage']['thumbnail']>().toEqualTypeOf<Image>();
  });
});
