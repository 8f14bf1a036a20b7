import { describe, expect, it } from 'vitest';
import {
  buildSrcset,
  fitWithinBox,
  mediaUrl,
  parseRenditionFileName,
  parseSrcset,
  RENDITION_BOXES,
  RENDITION_KEYS,
  relativeSize,
  renditionFileName,
  renditionSizes,
  safeName,
} from '../../src/renditions/rules.js';

describe('the five boxes', () => {
  it('are xs..xl at 300, 600, 1200, 2400, 4800 px', () => {
    expect(RENDITION_KEYS).toEqual(['xs', 'sm', 'md', 'lg', 'xl']);
    expect(RENDITION_KEYS.map((key) => RENDITION_BOXES[key])).toEqual([300, 600, 1200, 2400, 4800]);
  });
});

describe('fitWithinBox', () => {
  const table: Array<[string, [number, number], Array<[number, number]>]> = [
    [
      'smaller than every box',
      [200, 150],
      [
        [200, 150],
        [200, 150],
        [200, 150],
        [200, 150],
        [200, 150],
      ],
    ],
    [
      'exactly 600x600',
      [600, 600],
      [
        [300, 300],
        [600, 600],
        [600, 600],
        [600, 600],
        [600, 600],
      ],
    ],
    [
      '301x301',
      [301, 301],
      [
        [300, 300],
        [301, 301],
        [301, 301],
        [301, 301],
        [301, 301],
      ],
    ],
    [
      '4801x10: the short side rounds, never below 1',
      [4801, 10],
      [
        [300, 1],
        [600, 1],
        [1200, 2],
        [2400, 5],
        [4800, 10],
      ],
    ],
    [
      '10000x400 panorama',
      [10000, 400],
      [
        [300, 12],
        [600, 24],
        [1200, 48],
        [2400, 96],
        [4800, 192],
      ],
    ],
    [
      '400x8000 tall',
      [400, 8000],
      [
        [15, 300],
        [30, 600],
        [60, 1200],
        [120, 2400],
        [240, 4800],
      ],
    ],
    [
      '1x1',
      [1, 1],
      [
        [1, 1],
        [1, 1],
        [1, 1],
        [1, 1],
        [1, 1],
      ],
    ],
    [
      '24 MP 6000x4000',
      [6000, 4000],
      [
        [300, 200],
        [600, 400],
        [1200, 800],
        [2400, 1600],
        [4800, 3200],
      ],
    ],
    [
      'rounds half up (1000x333 to 300: 99.9)',
      [1000, 333],
      [
        [300, 100],
        [600, 200],
        [1000, 333],
        [1000, 333],
        [1000, 333],
      ],
    ],
  ];
  it.each(table)('%s', (_name, [width, height], expected) => {
    const sizes = renditionSizes({ width, height });
    expect(RENDITION_KEYS.map((key) => [sizes[key].width, sizes[key].height])).toEqual(expected);
  });

  it('never upscales and keeps each side inside the box', () => {
    for (let i = 1; i < 2000; i += 37) {
      for (const box of [300, 600, 1200]) {
        const fit = fitWithinBox({ width: i * 3, height: i }, box);
        expect(fit.width).toBeLessThanOrEqual(Math.min(box, i * 3));
        expect(fit.height).toBeLessThanOrEqual(Math.min(box, i));
      }
    }
  });

  it('refuses sizes that are not positive integers', () => {
    expect(() => fitWithinBox({ width: 0, height: 10 }, 300)).toThrow(RangeError);
    expect(() => fitWithinBox({ width: 1.5, height: 10 }, 300)).toThrow(RangeError);
  });
});

describe('file names', () => {
  it('follows both naming styles and reads them back', () => {
    expect(renditionFileName('river', 300, 'jpg')).toBe('river.max-300x300.jpg');
    expect(renditionFileName('river', 4800, 'png', 'underscore')).toBe('river_4800x4800.png');
    expect(parseRenditionFileName('/media/a/river.max-300x300.jpg')).toEqual({
      name: 'river',
      box: 300,
      ext: 'jpg',
      style: 'max',
    });
    expect(parseRenditionFileName('river_2400x2400.webp')).toEqual({
      name: 'river',
      box: 2400,
      ext: 'webp',
      style: 'underscore',
    });
    expect(parseRenditionFileName('river.max-300x200.jpg')).toBeNull();
    expect(parseRenditionFileName('river.jpg')).toBeNull();
  });

  it('makes names URL-safe by one rule', () => {
    expect(safeName('Évening Light (2)')).toBe('evening-light-2');
    expect(safeName('my_photo.final')).toBe('my-photo-final');
    expect(safeName('  --Ünïcödé--  ')).toBe('unicode');
    expect(safeName('日本')).toBe('image');
    expect(safeName('ABC123')).toBe('abc123');
  });
});

describe('srcset, relative size and URLs', () => {
  it('lists xs..xl as "<url> <width>w" and parses back', () => {
    const sizes = Object.fromEntries(
      RENDITION_KEYS.map((key, i) => [key, { width: 100 * (i + 1), url: `/m/${key}.jpg` }]),
    );
    const srcset = buildSrcset(sizes as never);
    expect(srcset).toBe('/m/xs.jpg 100w, /m/sm.jpg 200w, /m/md.jpg 300w, /m/lg.jpg 400w, /m/xl.jpg 500w');
    expect(parseSrcset(srcset)?.map((e) => e.width)).toEqual([100, 200, 300, 400, 500]);
    expect(parseSrcset('/a.jpg 100w, /b.jpg')).toBeNull();
  });

  it('gives the longer side 1 and the shorter its ratio to 6 decimals', () => {
    expect(relativeSize({ width: 6000, height: 4000 })).toEqual({ width: 1, height: 0.666667 });
    expect(relativeSize({ width: 400, height: 8000 })).toEqual({ width: 0.05, height: 1 });
    expect(relativeSize({ width: 1, height: 1 })).toEqual({ width: 1, height: 1 });
  });

  it('joins the media URL prefix and encodes each segment', () => {
    expect(mediaUrl('/media/', 'a/b.max-300x300.jpg')).toBe('/media/a/b.max-300x300.jpg');
    expect(mediaUrl('https://cdn.example.org/m', 'x y.jpg')).toBe('https://cdn.example.org/m/x%20y.jpg');
  });
});
