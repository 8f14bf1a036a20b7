/**
 * An Image's alternates, for `check --verify-files`: `render --formats keep,avif,webp` writes each
 * rendition in several formats, and the Image object names only the first. The others are known
 * from the manifest beside the files (one entry per format, `ladybird.jpg`, `ladybird.avif`, with
 * the same original): each must exist, be in its extension's format, and have the pixel size the
 * Image gives its rendition. Over HTTP there is no manifest, so no alternate is known.
 */
import { FILE_EXTENSIONS, OUTPUT_FORMATS } from '../renditions/formats.js';
import { mediaUrl, parseRenditionFileName, RENDITION_KEYS } from '../renditions/rules.js';
import type { RecordedRenditions } from './recorded.js';

/** One Image as `check` read it: JSON path, and each rendition's size and URL. */
export interface AlternateImage {
  path: string;
  sizes: Partial<Record<(typeof RENDITION_KEYS)[number], { width: number; height: number; url: string }>>;
}

/** One alternate file, to be probed as the rendition it stands beside. */
export interface AlternateReference {
  /** JSON path of the rendition it is an alternate of (`...sizes.md.url`). */
  path: string;
  /** The media URL of the alternate file. */
  url: string;
  /** The pixel size it must have: the rendition's. */
  size: { width: number; height: number };
  /** Its format, as its extension names it (`webp`). */
  format: string;
}

const FORMAT_OF_EXTENSION = new Map(OUTPUT_FORMATS.map((format) => [FILE_EXTENSIONS[format], format]));

/**
 * The alternates the manifest records for `image`: the renditions of every other entry of the same
 * stem and the same original, each at the JSON path of the rendition it stands beside. None when
 * the manifest does not record the Image's renditions.
 */
export async function alternatesOf(
  image: AlternateImage,
  recorded: RecordedRenditions,
  mediaPrefix: string,
): Promise<AlternateReference[]> {
  let primary: Awaited<ReturnType<RecordedRenditions['lookup']>>;
  for (const key of RENDITION_KEYS) {
    const url = image.sizes[key]?.url;
    primary = url === undefined ? undefined : await recorded.lookup(url);
    if (primary) break;
  }
  if (!primary) return [];
  const own = parseRenditionFileName(primary.entry.renditions[primary.rendition].path)!;
  const folderOf = (file: string) => file.slice(0, file.lastIndexOf('/') + 1);
  const folder = folderOf(primary.entry.renditions[primary.rendition].path);
  const references: AlternateReference[] = [];
  for (const [key, entry] of Object.entries(primary.stem)) {
    if (key === primary.key || entry.source !== primary.entry.source) continue;
    const extension = key.slice(key.lastIndexOf('.') + 1).toLowerCase();
    for (const rendition of RENDITION_KEYS) {
      const file = entry.renditions[rendition].path;
      const parsed = parseRenditionFileName(file);
      // Only the Image's own five names with another extension: a manifest never sends a read elsewhere.
      if (!parsed || parsed.name !== own.name || folderOf(file) !== folder || parsed.ext.toLowerCase() !== extension)
        continue;
      const given = image.sizes[rendition];
      const { width, height } = given ?? primary.entry.renditions[rendition];
      references.push({
        path: `${image.path}.sizes.${rendition}${given ? '.url' : ''}`,
        url: mediaUrl(mediaPrefix, file),
        size: { width, height },
        format: FORMAT_OF_EXTENSION.get(extension) ?? extension,
      });
    }
  }
  return references;
}
