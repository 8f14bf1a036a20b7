/** Format-preserving edits of a page's text: only what differs is rewritten, in the text's own layout. */
import { describe, expect, it } from 'vitest';
import { diffEdits, replaceValues } from '../../src/page-render/rewrite.js';

const edit = (text: string, after: unknown, path: Array<string | number> = ['$', 'image']) =>
  replaceValues(text, diffEdits(path, (JSON.parse(text) as Record<string, unknown>).image, after));

describe('diffEdits + replaceValues', () => {
  it('rewrites only the leaves that differ, keeping each object’s own key order', () => {
    const text =
      '{\n  "image": {\n    "sizes": {\n      "xs": {"url": "/a.jpg", "width": 3, "height": 2}\n    }\n  }\n}\n';
    const written = edit(text, { sizes: { xs: { width: 3, height: 2, url: '/b.jpg' } } });
    expect(written).toBe(text.replace('/a.jpg', '/b.jpg'));
  });

  it('changes nothing when nothing differs', () => {
    const text = '{"image": {"width": 1, "height": 0.5}}';
    expect(diffEdits(['$', 'image'], { width: 1, height: 0.5 }, { width: 1, height: 0.5 })).toEqual([]);
    expect(edit(text, { width: 1 })).toBe(text);
  });

  it.each([
    [
      'several properties, pretty',
      '{\n  "image": {\n    "width": 1,\n    "sizes": {}\n  }\n}',
      '{\n  "image": {\n    "width": 1,\n    "sizes": {},\n    "srcset": "x 1w"\n  }\n}',
    ],
    [
      'a lone property, pretty',
      '{\n  "image": {\n    "sizes": {}\n  }\n}',
      '{\n  "image": {\n    "sizes": {},\n    "srcset": "x 1w"\n  }\n}',
    ],
    ['one line, compact', '{"image":{"width":1,"sizes":{}}}', '{"image":{"width":1,"sizes":{},"srcset":"x 1w"}}'],
    ['a lone property, one line', '{"image": {"sizes": {}}}', '{"image": {"sizes": {}, "srcset": "x 1w"}}'],
  ])('inserts a missing plain value after its sibling, separated as the object is: %s', (_, text, expected) => {
    expect(edit(text, { sizes: {}, srcset: 'x 1w' })).toBe(expected);
  });

  it(
    'replaces an object whole where keys with object values are missing or it is empty: ' +
      'in the document’s indentation, or on one line if it was',
    () => {
      const text =
        '{\n  "image": {\n    "sizes": {\n      "xl": {"width": 4, "height": 2, "url": "/a.jpg"}\n    },\n' +
        '    "alt_text": {}\n  }\n}';
      const written = edit(text, {
        sizes: { xs: { width: 2, height: 1, url: '/s.jpg' }, xl: { width: 4, height: 2, url: '/a.jpg' } },
        alt_text: { en: 'x', de: 'y' },
      });
      expect(JSON.parse(written)).toEqual({
        image: {
          sizes: { xs: { width: 2, height: 1, url: '/s.jpg' }, xl: { width: 4, height: 2, url: '/a.jpg' } },
          alt_text: { en: 'x', de: 'y' },
        },
      });
      expect(written).toContain('\n    "sizes": {\n      "xs": {\n        "width": 2,');
      expect(written).toContain('"alt_text": {"en":"x","de":"y"}');
    },
  );

  it('keeps the keys only the text has', () => {
    const text = '{"image": {"sizes": {"xl": {"width": 4, "height": 2, "url": "/a.jpg", "note": "kept"}}}}';
    expect(JSON.parse(edit(text, { sizes: { xl: { width: 4, height: 2, url: '/b.jpg' } } })).image.sizes.xl).toEqual({
      width: 4,
      height: 2,
      url: '/b.jpg',
      note: 'kept',
    });
  });

  it('refuses an edit at a path the text does not have', () => {
    expect(() => replaceValues('{"a": 1}', [{ path: ['$', 'b', 'c'], value: 1 }])).toThrow(
      /no value at \$\.b\.c to replace/,
    );
  });
});
