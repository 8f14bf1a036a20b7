/**
 * Thumbnails for the HTML reports: a small WebP of an image file, made with sharp and
 * embedded as a data URI, so the report is one file that opens offline, later, elsewhere.
 * A byte budget bounds them: past it an image gets a reason instead of its thumbnail.
 */
import pLimit from 'p-limit';

/** Thumbnails share one height; each is as wide as its real aspect ratio makes it. */
export const THUMB_HEIGHT = 96;

/** Largest file read whole to make a thumbnail from. */
export const MAX_THUMB_SOURCE = 32 * 1024 * 1024;

/** Bytes of embedded thumbnails in a report, unless it says otherwise. */
export const DEFAULT_THUMBNAIL_BUDGET = 5_000_000;

/** A `data:image/webp;base64,...` URI, or why there is none. */
export type Thumbnail = string | { reason: string };

/** Thumbnails by the id the caller gave each file (a URL, a key in a store). */
export type Thumbnails = Map<string, Thumbnail>;

export const BUDGET_SPENT = { reason: "not embedded: the report's thumbnail budget is spent" };

/** A file to make a thumbnail of: its bytes, its path on this machine (libvips reads it), or why neither. */
export type ThumbnailSource = Buffer | { path: string } | { reason: string };

/**
 * A thumbnail of each id, in the order given (the first get the budget), read with `read`,
 * until the URIs made pass `budget` characters; an id that cannot be read or decoded gets its
 * reason instead. Each use is counted again when the document is written (`embedder`).
 */
export async function makeThumbnails(
  ids: Iterable<string>,
  read: (id: string) => Promise<ThumbnailSource>,
  budget: number,
): Promise<Thumbnails> {
  const { sharp } = await import('../packages/sharp.js');
  const thumbnails: Thumbnails = new Map();
  const limit = pLimit(4);
  let made = 0;
  await Promise.all(
    [...new Set(ids)].map((id) =>
      limit(async () => {
        if (made >= budget) return thumbnails.set(id, BUDGET_SPENT);
        const source = await read(id);
        if ('reason' in source) return thumbnails.set(id, { reason: source.reason });
        try {
          const input = Buffer.isBuffer(source) ? source : source.path;
          const webp = await sharp(input, { animated: false, failOn: 'none' })
            .rotate()
            .resize({ height: THUMB_HEIGHT * 2, width: THUMB_HEIGHT * 8, fit: 'inside', withoutEnlargement: true })
            .webp({ quality: 45, effort: 2 })
            .toBuffer();
          const uri = `data:image/webp;base64,${webp.toString('base64')}`;
          made += uri.length;
          return thumbnails.set(id, uri);
        } catch {
          return thumbnails.set(id, { reason: 'cannot decode the file' });
        }
      }),
    ),
  );
  return thumbnails;
}

/** Hands out a thumbnail for each use while the budget lasts: every use is written out, so every use counts. */
export type Embed = (id: string) => Thumbnail | undefined;

export function embedder(thumbnails: Thumbnails | null, budget: number): Embed {
  let spent = 0;
  return (id) => {
    const thumbnail = thumbnails?.get(id);
    if (typeof thumbnail !== 'string') return thumbnail;
    if (spent + thumbnail.length > budget) return BUDGET_SPENT;
    spent += thumbnail.length;
    return thumbnail;
  };
}
