/**
 * How a page's images are grouped by source: the stem their largest rendition's URL names; and
 * how sized references (`meta.thumb`) join them.
 */
import { describe, expect, it } from 'vitest';
import { groupPageImages, groupPaths } from '../../src/page-render/images.js';
import { mediaPath } from '../../src/renditions/rules.js';

const image = (...urls: string[]) => ({
  width: 1,
  height: 1,
  sizes: Object.fromEntries(
    urls.map((url, i) => [['xs', 'sm', 'md', 'lg', 'xl'][i], { width: 100 * (i + 1), height: 100 * (i + 1), url }]),
  ),
});

describe('mediaPath: a rendition URL back to its path under the media folder', () => {
  it.each([
    ['/media/a/b.max-300x300.jpg', '/media/', 'a/b.max-300x300.jpg'],
    ['https://cdn.example.org/media/a%20b.jpg?v=2#x', '/media/', 'a b.jpg'],
    ['/media/x.jpg', 'https://cdn.example.org/media', 'x.jpg'],
    ['/static/x.jpg', '/media/', 'static/x.jpg'],
    ['/media/../../etc/x.jpg', '/media/', 'etc/x.jpg'],
    ['/media/%zz.jpg', '/media/', null],
  ])('%s below %s is %s', (url, prefix, expected) => {
    expect(mediaPath(url, prefix)).toBe(expected);
  });
});

describe('groupPageImages', () => {
  it('names each source by its largest rendition: folders and the <name> of either naming style, made safe', () => {
    const page = {
      a: image('/media/Old Works/evening.max-300x300.jpg', '/media/Old Works/Évening_600x600.jpg'),
      b: { nested: [image('/media/Old Works/Évening.max-300x300.JPG', '/media/Old Works/Évening.max-600x600.JPG')] },
      c: image('/media/plain-name.jpg'),
      d: image('/media/../../../etc/passwd.max-300x300.jpg'),
    };
    const { groups, unusable } = groupPageImages(page, '/media/');
    expect(unusable).toEqual([]);
    expect(groups.map((g) => [g.stem, g.ext, g.images.map((i) => i.path.join('.'))])).toEqual([
      ['old-works/evening', 'jpg', ['$.a', '$.b.nested.0']],
      ['plain-name', 'jpg', ['$.c']],
      ['etc/passwd', 'jpg', ['$.d']],
    ]);
    expect(groups[0]!.largest).toEqual({
      key: 'sm',
      url: '/media/Old Works/Évening_600x600.jpg',
      width: 200,
      height: 200,
    });
  });

  it('renditions that are other files are other sources, even where their stems are the same', () => {
    const page = {
      jpg: image('/media/lake.max-300x300.jpg'),
      png: image('/media/lake.max-300x300.png'),
      upper: image('/media/Lake.max-300x300.jpg'),
      cdn: image('https://cdn.example.org/media/lake_300x300.jpg'),
    };
    const { groups } = groupPageImages(page, '/media/');
    expect(groups.map((g) => [g.stem, g.ext, g.images.map((i) => i.path.join('.'))])).toEqual([
      ['lake', 'jpg', ['$.jpg', '$.cdn']],
      ['lake', 'png', ['$.png']],
      ['lake', 'jpg', ['$.upper']],
    ]);
  });

  it('an image with no usable rendition is set aside with the reason', () => {
    const { groups, unusable } = groupPageImages(
      { x: { width: 1, sizes: { xs: { url: '/media/a.jpg' } } } },
      '/media/',
    );
    expect(groups).toEqual([]);
    expect(unusable).toEqual([
      { path: ['$', 'x'], reason: 'no rendition with a url, width and height to name its source' },
    ]);
  });

  it(
    'a sized reference outside the Images joins the group of its source, keyed by the size box in its name; ' +
      'one whose source no Image shows is a group of its own, downloaded (if need be) as its largest reference',
    () => {
      const page = {
        image: image('/media/storm.max-300x300.jpg', '/media/storm.max-600x600.jpg'),
        meta: { thumb: { url: '/media/storm_1200x1200.jpg', width: 1200, height: 800 } },
        news: [
          { meta: { thumb: { url: '/media/flower.max-600x600.png', width: 600, height: 400 } } },
          {
            meta: {
              thumb: { url: 'https://cdn.example.org/media/flower.max-2400x2400.png', width: 2400, height: 1600 },
            },
          },
        ],
      };
      const { groups, unusableReferences } = groupPageImages(page, '/media/');
      expect(unusableReferences).toEqual([]);
      expect(
        groups.map((g) => [g.stem, g.ext, g.references.map((r) => [r.path.join('.'), r.key]), groupPaths(g)]),
      ).toEqual([
        ['storm', 'jpg', [['$.meta.thumb', 'md']], ['$.image', '$.meta.thumb']],
        [
          'flower',
          'png',
          [
            ['$.news.0.meta.thumb', 'sm'],
            ['$.news.1.meta.thumb', 'lg'],
          ],
          ['$.news[0].meta.thumb', '$.news[1].meta.thumb'],
        ],
      ]);
      expect(groups[0]!.largest.url).toBe('/media/storm.max-600x600.jpg'); // the Image's, not the reference's
      expect(groups[1]!.images).toEqual([]);
      expect(groups[1]!.largest).toEqual({
        key: 'lg',
        url: 'https://cdn.example.org/media/flower.max-2400x2400.png',
        width: 2400,
        height: 1600,
      });
      expect(groups[1]!.references[0]!.value).toBe(page.news[0]!.meta.thumb);
    },
  );

  it(
    'a sized reference whose name has no size box of ours is set aside with the reason; ' +
      'one outside the media prefix, or a size of an Image, is no reference',
    () => {
      const page = {
        image: image('/media/storm.max-300x300.jpg'),
        card: { url: '/media/social/card.jpg', width: 1200, height: 630 },
        odd: { url: '/media/storm.max-1000x1000.jpg', width: 1000, height: 667 },
        outside: { url: '/static/storm.max-1200x1200.jpg', width: 1200, height: 800 },
        plain: '/media/storm.max-1200x1200.jpg',
      };
      const { groups, unusableReferences } = groupPageImages(page, '/media/');
      expect(groups.map((g) => [g.stem, groupPaths(g)])).toEqual([['storm', ['$.image']]]);
      const why =
        'names no rendition: its name has no size box ' +
        '(.max-<n>x<n>. or _<n>x<n>., n one of 300, 600, 1200, 2400, 4800); left as it is';
      expect(unusableReferences).toEqual([
        { path: ['$', 'card'], reason: `card.jpg ${why}` },
        { path: ['$', 'odd'], reason: `storm.max-1000x1000.jpg ${why}` },
      ]);
    },
  );
});
