/**
 * What a page shows while a rendition loads: the image's dominant colour and a tiny preview, made
 * from its smallest rendition (at most 300 px, a few milliseconds to decode), so the layout keeps
 * the picture's colours instead of a blank box.
 */
import { sharp } from '../packages/sharp.js';
import { PREVIEW_MAX_CHARS } from './rules.js';

export { PREVIEW_MAX_CHARS };

export interface Placeholder {
  /** The dominant colour, as CSS takes it: `#5a7d3c`. */
  color: string;
  /** A preview of at most 32 px a side, as a `data:image/webp;base64,...` URI of at most PREVIEW_MAX_CHARS. */
  preview: string;
  /**
   * The image lets what is beneath it show through (pixels not fully opaque): a placeholder painted
   * under it would stay visible once it loads, so markup leaves it out.
   */
  transparent: boolean;
}

/** Preview sizes and qualities tried, in order, until the URI fits: a busy picture needs the smaller ones. */
const ATTEMPTS: Array<[box: number, quality: number]> = [
  [32, 50],
  [24, 45],
  [16, 40],
  [8, 30],
];

const hex = (value: number) => Math.round(value).toString(16).padStart(2, '0');

/**
 * The dominant colour of RGBA pixels as the eye sees them: sharp's histogram (16 levels a channel),
 * each pixel counted by its opacity, so the invisible colour of transparent pixels never wins; the
 * colour is the mean of the fullest bin's pixels. Fully transparent pixels: white.
 */
function visibleDominant(rgba: Buffer): { r: number; g: number; b: number } {
  const weights = new Float64Array(4096);
  const sums = new Float64Array(4096 * 3);
  for (let i = 0; i < rgba.length; i += 4) {
    const alpha = rgba[i + 3]!;
    if (alpha === 0) continue;
    const bin = ((rgba[i]! >> 4) << 8) | ((rgba[i + 1]! >> 4) << 4) | (rgba[i + 2]! >> 4);
    weights[bin]! += alpha;
    for (let c = 0; c < 3; c++) sums[bin * 3 + c]! += rgba[i + c]! * alpha;
  }
  let best = -1;
  for (let bin = 0; bin < 4096; bin++)
    if (weights[bin]! > 0 && (best < 0 || weights[bin]! > weights[best]!)) best = bin;
  if (best < 0) return { r: 255, g: 255, b: 255 };
  const [r, g, b] = [0, 1, 2].map((c) => sums[best * 3 + c]! / weights[best]!);
  return { r: r!, g: g!, b: b! };
}

/**
 * The placeholder of an image from the bytes of its smallest rendition (any format sharp reads), one
 * that keeps transparency where any of its formats does (`keepsAlpha`), so `transparent` is true to it.
 * The dominant colour is sharp's (the fullest bin of a 4096-colour histogram), its visible pixels'
 * where it has transparency; the preview keeps
 * the aspect ratio, and its alpha where there is one. Browsers scale it up smoothly: the blur comes free.
 */
export async function placeholderOf(rendition: Buffer): Promise<Placeholder> {
  const image = () => sharp(rendition, { failOn: 'none' });
  const { dominant, isOpaque } = await image().stats();
  const { r, g, b } = isOpaque ? dominant : visibleDominant(await image().ensureAlpha().raw().toBuffer());
  const color = `#${hex(r)}${hex(g)}${hex(b)}`;
  let preview = '';
  for (const [box, quality] of ATTEMPTS) {
    const data = await image().resize(box, box, { fit: 'inside' }).webp({ quality, effort: 6 }).toBuffer();
    preview = `data:image/webp;base64,${data.toString('base64')}`;
    if (preview.length <= PREVIEW_MAX_CHARS) break;
  }
  return { color, preview, transparent: !isOpaque };
}
