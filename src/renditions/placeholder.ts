/**
 * What a page shows while a rendition loads: the image's dominant colour and a tiny preview, made
 * from its smallest rendition (at most 300 px, a few milliseconds to decode), so the layout keeps
 * the picture's colours instead of a blank box.
 */
import sharp from 'sharp';

export interface Placeholder {
  /** The dominant colour, as CSS takes it: `#5a7d3c`. */
  color: string;
  /** A preview of at most 32 px a side, as a `data:image/webp;base64,...` URI of at most PREVIEW_MAX_CHARS. */
  preview: string;
}

/** The longest preview URI: small enough for an inline `style` on every image of a page. */
export const PREVIEW_MAX_CHARS = 1024;

/** Preview sizes and qualities tried, in order, until the URI fits: a busy picture needs the smaller ones. */
const ATTEMPTS: Array<[box: number, quality: number]> = [
  [32, 50],
  [24, 45],
  [16, 40],
  [8, 30],
];

const hex = (value: number) => Math.round(value).toString(16).padStart(2, '0');

/**
 * The placeholder of an image from the bytes of its smallest rendition (any format sharp reads).
 * The dominant colour is sharp's (the fullest bin of a 4096-colour histogram); the preview keeps
 * the aspect ratio, and its alpha where there is one. Browsers scale it up smoothly: the blur comes free.
 */
export async function placeholderOf(rendition: Buffer): Promise<Placeholder> {
  const image = () => sharp(rendition, { failOn: 'none' });
  const { dominant } = await image().stats();
  const color = `#${hex(dominant.r)}${hex(dominant.g)}${hex(dominant.b)}`;
  let preview = '';
  for (const [box, quality] of ATTEMPTS) {
    const data = await image().resize(box, box, { fit: 'inside' }).webp({ quality, effort: 6 }).toBuffer();
    preview = `data:image/webp;base64,${data.toString('base64')}`;
    if (preview.length <= PREVIEW_MAX_CHARS) break;
  }
  return { color, preview };
}
