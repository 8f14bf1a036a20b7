/**
 * The markup as a string: structure, defaults, escaping, placeholders. What a browser makes of
 * it is picture-browser.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { DEFAULT_SIZES, type MarkupImage, pictureHtml, picturesHtml } from '../../src/markup/picture.js';
import { buildImageObject, type RenditionFile } from '../../src/renditions/image-object.js';
import { RENDITION_BOXES, RENDITION_KEYS, type RenditionKey, renditionSizes } from '../../src/renditions/rules.js';

/** The Image object of a 2560x1600 original rendered as `<stem>.max-<n>x<n>.<ext>`. */
function imageOf(stem: string, ext: string, altText: string | null = null) {
  const sizes = renditionSizes({ width: 2560, height: 1600 });
  const files = Object.fromEntries(
    RENDITION_KEYS.map((key) => [
      key,
      { ...sizes[key], path: `${stem}.max-${RENDITION_BOXES[key]}x${RENDITION_BOXES[key]}.${ext}` },
    ]),
  ) as Record<RenditionKey, RenditionFile>;
  return buildImageObject({ width: 2560, height: 1600 }, files, { mediaUrl: '/media/', altText });
}

const alternate = (stem: string, format: string) => ({ type: `image/${format}`, srcset: imageOf(stem, format).srcset });

const LADYBIRD: MarkupImage = {
  image: imageOf('ladybird', 'jpg', 'A ladybird on a leaf'),
  alternates: [alternate('ladybird', 'avif'), alternate('ladybird', 'webp')],
};

/** Each tag's `sizes` attribute. */
const sizesOf = (html: string) => tags(html).map((t) => t.attributes.sizes);

/** Each tag of `html` with its attributes, values decoded as a browser decodes them. */
function tags(html: string): Array<{ name: string; attributes: Record<string, string> }> {
  const decode = (value: string) =>
    value.replace(/&(amp|quot|#39|lt|gt);/g, (_, entity: string) => {
      return { amp: '&', quot: '"', '#39': "'", lt: '<', gt: '>' }[entity]!;
    });
  return [...html.matchAll(/<(\/?\w+)((?:\s+[\w-]+="[^"]*")*)\s*>/g)].map((match) => ({
    name: match[1]!,
    attributes: Object.fromEntries([...match[2]!.matchAll(/([\w-]+)="([^"]*)"/g)].map((a) => [a[1]!, decode(a[2]!)])),
  }));
}

describe('pictureHtml', () => {
  it('offers each alternate in order in a <source>, then the primary in the <img>', () => {
    const html = pictureHtml(LADYBIRD);
    expect(html).toBe(
      [
        '<picture>',
        `  <source type="image/avif" srcset="${LADYBIRD.alternates![0]!.srcset}" sizes="auto, 100vw">`,
        `  <source type="image/webp" srcset="${LADYBIRD.alternates![1]!.srcset}" sizes="auto, 100vw">`,
        '  <img src="/media/ladybird.max-1200x1200.jpg" srcset="/media/ladybird.max-300x300.jpg 300w, ' +
          '/media/ladybird.max-600x600.jpg 600w, /media/ladybird.max-1200x1200.jpg 1200w, ' +
          '/media/ladybird.max-2400x2400.jpg 2400w, /media/ladybird.max-4800x4800.jpg 2560w" sizes="auto, 100vw" ' +
          'width="1200" height="750" alt="A ladybird on a leaf" loading="lazy" decoding="async">',
        '</picture>',
      ].join('\n'),
    );
    // The string is whole: every tag parsed, nothing between them but indentation.
    expect(tags(html).map((t) => t.name)).toEqual(['picture', 'source', 'source', 'img', '/picture']);
    expect(html.replace(/<[^>]*>/g, '').trim()).toBe('');
  });

  it('is the <img> alone without alternates, or with an empty list', () => {
    const alone = pictureHtml({ image: LADYBIRD.image });
    expect(alone).toMatch(/^<img [^<>]*>$/);
    expect(pictureHtml({ image: LADYBIRD.image, alternates: [] })).toBe(alone);
    expect(tags(alone)[0]!.attributes).toEqual({
      src: '/media/ladybird.max-1200x1200.jpg',
      srcset: LADYBIRD.image.srcset,
      sizes: 'auto, 100vw',
      width: '1200',
      height: '750',
      alt: 'A ladybird on a leaf',
      loading: 'lazy',
      decoding: 'async',
    });
  });

  it("takes src, width and height from md: its URL and the rendition's real pixel size", () => {
    // A portrait original: md is 800x1200, its relative size 0.666667 x 1.
    const image = structuredClone(LADYBIRD.image);
    image.sizes.md = { width: 800, height: 1200, url: 'https://cdn.example.org/p.max-1200x1200.jpg' };
    const img = tags(pictureHtml({ image }))[0]!.attributes;
    expect([img.src, img.width, img.height]).toEqual(['https://cdn.example.org/p.max-1200x1200.jpg', '800', '1200']);
  });

  it('gives alt="" for a null alt text (decorative), and the alt text as it is otherwise', () => {
    expect(tags(pictureHtml({ image: imageOf('a', 'jpg', null) }))[0]!.attributes.alt).toBe('');
    expect(pictureHtml({ image: imageOf('a', 'jpg', null) })).toContain(' alt="" ');
    expect(tags(pictureHtml({ image: imageOf('a', 'jpg', '') }))[0]!.attributes.alt).toBe('');
    expect(tags(pictureHtml({ image: imageOf('a', 'jpg', 'Évening — light') }))[0]!.attributes.alt).toBe(
      'Évening — light',
    );
  });

  it('takes sizes and loading from the options, on every <source> and the <img>', () => {
    const sizes = '(min-width: 1200px) 800px, 100vw';
    const parsed = tags(pictureHtml(LADYBIRD, { sizes, loading: 'eager' }));
    expect(parsed.filter((t) => t.name === 'source' || t.name === 'img').map((t) => t.attributes.sizes)).toEqual([
      sizes,
      sizes,
      sizes,
    ]);
    expect(parsed.find((t) => t.name === 'img')!.attributes.loading).toBe('eager');
  });

  it('defaults sizes to auto, 100vw for a lazy image, to 100vw for an eager one (auto is for lazy ones only)', () => {
    expect(DEFAULT_SIZES).toEqual({ lazy: 'auto, 100vw', eager: '100vw' });
    expect(sizesOf(pictureHtml(LADYBIRD))).toEqual([undefined, 'auto, 100vw', 'auto, 100vw', 'auto, 100vw', undefined]);
    expect(sizesOf(pictureHtml(LADYBIRD, { loading: 'eager' }))).toEqual([
      undefined,
      '100vw',
      '100vw',
      '100vw',
      undefined,
    ]);
    expect(sizesOf(pictureHtml(LADYBIRD, { loading: 'lazy', sizes: ' 50vw ' }))).toContain('50vw');
  });

  it('refuses options it cannot honour, naming them', () => {
    expect(() => pictureHtml(LADYBIRD, { sizes: ' ' })).toThrow(InvalidArgumentError);
    expect(() => pictureHtml(LADYBIRD, { sizes: '' })).toThrow("Expected a sizes value such as '100vw' but got ''");
    expect(() => pictureHtml(LADYBIRD, { loading: 'auto' as 'lazy' })).toThrow(
      "Expected lazy or eager for loading but got 'auto'",
    );
    expect(() => pictureHtml(LADYBIRD, { sizes: 'AUTO, 100vw', loading: 'eager' })).toThrow(
      "Expected a sizes value without auto for an eager image but got 'AUTO, 100vw'",
    );
    expect(() => pictureHtml(LADYBIRD, { sizes: '100vw, auto' })).toThrow(
      "Expected auto only as the first entry of sizes, on its own (a browser skips it anywhere else) but got '100vw, auto'",
    );
    expect(() => pictureHtml(LADYBIRD, { sizes: '(min-width: 900px) 50vw, Auto ' })).toThrow(/auto only as the first/);
    expect(() => pictureHtml(LADYBIRD, { sizes: '(min-width: 600px) auto, 100vw' })).toThrow(/on its own/);
    expect(() => pictureHtml(LADYBIRD, { sizes: '50vw, auto', loading: 'eager' })).toThrow(/without auto/);
    // A comma inside a CSS function is not an entry's end, and auto first is the lazy default's form.
    expect(sizesOf(pictureHtml(LADYBIRD, { sizes: 'auto, min(100vw, 600px)' }))).toContain('auto, min(100vw, 600px)');
    expect(() => picturesHtml([], { loading: 'soon' as 'lazy' })).toThrow(InvalidArgumentError);
  });

  it('offers AVIF first, then WebP, then any other type in order, whatever order the alternates come in', () => {
    const [avif, webp] = LADYBIRD.alternates!;
    const png = { type: 'image/png', srcset: '/media/ladybird.max-300x300.png 300w' };
    const gif = { type: 'image/gif', srcset: '/media/ladybird.max-300x300.gif 300w' };
    const types = (html: string) => tags(html).flatMap((t) => (t.name === 'source' ? [t.attributes.type] : []));
    expect(types(pictureHtml({ ...LADYBIRD, alternates: [png, webp!, gif, avif!] }))).toEqual([
      'image/avif',
      'image/webp',
      'image/png',
      'image/gif',
    ]);
    expect(types(pictureHtml({ ...LADYBIRD, alternates: [webp!, avif!] }))).toEqual(['image/avif', 'image/webp']);
  });

  it('leaves out an alternate whose files weigh more than the primary; keeps one of unknown weight', () => {
    const [avif, webp] = LADYBIRD.alternates!;
    const types = (html: string) => tags(html).flatMap((t) => (t.name === 'source' ? [t.attributes.type] : []));
    const item = {
      ...LADYBIRD,
      bytes: 1000,
      alternates: [
        { ...avif!, bytes: 600 },
        { ...webp!, bytes: 1001 },
      ],
    };
    expect(types(pictureHtml(item))).toEqual(['image/avif']);
    expect(types(pictureHtml({ ...item, bytes: null }))).toEqual(['image/avif', 'image/webp']);
    expect(pictureHtml({ ...item, alternates: [{ ...webp!, bytes: 2000 }] })).toMatch(/^<img /);
  });

  it('paints no placeholder under a transparent image: it would stay visible through it', () => {
    const preview = 'data:image/webp;base64,UklGRkIAAABXRUJQVlA4IDYAAAA=';
    const placeholder = { color: '#ffffff', preview, transparent: true };
    const img = tags(pictureHtml({ ...LADYBIRD, placeholder })).find((t) => t.name === 'img')!;
    expect(img.attributes.style).toBeUndefined();
  });

  it('offers no JPEG alternate of a transparent image: a browser would show it flattened onto white', () => {
    const [avif] = LADYBIRD.alternates!;
    const jpeg = { ...avif!, type: 'image/jpeg', srcset: avif!.srcset.replaceAll('.avif', '.jpg') };
    const preview = 'data:image/webp;base64,UklGRkIAAABXRUJQVlA4IDYAAAA=';
    const types = (html: string) => tags(html).flatMap((t) => (t.name === 'source' ? [t.attributes.type] : []));
    const item = { ...LADYBIRD, alternates: [jpeg, avif!] };
    expect(types(pictureHtml({ ...item, placeholder: { color: '#ffffff', preview, transparent: true } }))).toEqual([
      'image/avif',
    ]);
    expect(types(pictureHtml({ ...item, placeholder: { color: '#ffffff', preview } }))).toEqual([
      'image/avif',
      'image/jpeg',
    ]);
  });

  it('paints the placeholder in the <img> box: its colour, and its preview stretched to cover', () => {
    const preview = 'data:image/webp;base64,UklGRkIAAABXRUJQVlA4IDYAAAA=';
    const img = tags(pictureHtml({ ...LADYBIRD, placeholder: { color: '#a1b2c3', preview } })).find(
      (t) => t.name === 'img',
    )!;
    expect(img.attributes.style).toBe(`background: #a1b2c3 url(${preview}) center / cover no-repeat`);
    expect(tags(pictureHtml(LADYBIRD)).find((t) => t.name === 'img')!.attributes.style).toBeUndefined();
  });

  it.each([
    ['a colour that ends the declaration', { color: 'red; background-image: url(//tracker.example)' }],
    ['a named colour', { color: 'red' }],
    ['a preview that is a remote URL', { preview: 'https://tracker.example/p.webp' }],
    ['a preview that ends the url()', { preview: 'data:image/webp;base64,AA==) ; x: url(//tracker.example' }],
    ['a preview of another type', { preview: 'data:text/html;base64,PHNjcmlwdD4=' }],
  ])('refuses a placeholder that could do more than paint: %s', (_, change) => {
    const placeholder = { color: '#000000', preview: 'data:image/webp;base64,AAAA', ...change };
    expect(() => pictureHtml({ ...LADYBIRD, placeholder })).toThrow(InvalidArgumentError);
  });

  it('escapes every attribute value: a hostile alt text, URL or type cannot leave its attribute', () => {
    const hostile = `"><script>alert(1)</script><img src=x onerror="alert(2)" a='&amp;`;
    const image = imageOf('x', 'jpg', hostile);
    image.sizes.md.url = `/media/a.jpg" onerror="alert(3)`;
    image.srcset = `/media/a.jpg'><svg onload=alert(4)> 300w`;
    const item = {
      image,
      alternates: [{ type: `image/avif" onload="alert(5)`, srcset: `</picture><script>x</script>` }],
    };
    const sizes = `100vw" onmouseover="alert(6)`;
    const html = pictureHtml(item, { sizes });
    expect(html).not.toMatch(/<script|<svg|<img src=x|<\/picture>.*<\/picture>| on\w+="/s);
    // Parsed back: the same tags, the same attributes, and each value exactly as it was given.
    const parsed = tags(html);
    expect(parsed.map((t) => t.name)).toEqual(['picture', 'source', 'img', '/picture']);
    expect(parsed[1]!.attributes).toEqual({
      type: item.alternates[0]!.type,
      srcset: item.alternates[0]!.srcset,
      sizes,
    });
    expect(parsed[2]!.attributes).toEqual({
      src: image.sizes.md.url,
      srcset: image.srcset,
      sizes,
      width: '1200',
      height: '750',
      alt: hostile,
      loading: 'lazy',
      decoding: 'async',
    });
  });
});

describe('picturesHtml', () => {
  it('is each image in turn, a line apart', () => {
    const other = { image: imageOf('other', 'png') };
    expect(picturesHtml([LADYBIRD, other], { sizes: '50vw' })).toBe(
      `${pictureHtml(LADYBIRD, { sizes: '50vw' })}\n${pictureHtml(other, { sizes: '50vw' })}`,
    );
    expect(picturesHtml([])).toBe('');
  });
});

describe('a small original', () => {
  it('lists each width once: lg and xl of a 1000 px original are one file, and HTML allows one candidate a width', () => {
    const sizes = renditionSizes({ width: 1000, height: 700 });
    const files = Object.fromEntries(
      RENDITION_KEYS.map((key) => [
        key,
        {
          ...sizes[key],
          path: `small.max-${Math.min(RENDITION_BOXES[key], 1200)}x${Math.min(RENDITION_BOXES[key], 1200)}.jpg`,
        },
      ]),
    ) as Record<RenditionKey, RenditionFile>;
    const image = buildImageObject({ width: 1000, height: 700 }, files, { mediaUrl: '/media/' });
    expect(image.srcset.match(/ 1000w/g)).toHaveLength(3); // the Image object keeps the spec's five entries
    const html = pictureHtml({
      image,
      alternates: [{ type: 'image/webp', srcset: image.srcset.replace(/\.jpg/g, '.webp') }],
    });
    for (const srcset of html.match(/srcset="[^"]*"/g)!) {
      const widths = srcset.match(/\d+w/g)!;
      expect(widths).toEqual(['300w', '600w', '1000w']);
    }
  });
});
