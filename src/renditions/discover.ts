/**
 * Turns the command line's files and folders into the list of originals to render, each
 * with the path its renditions take under the output folder.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, SourceError } from '../errors.js';
import { kindOf } from '../fs/kind.js';
import { isInside } from '../fs/paths.js';
import { walkFiles } from '../fs/walk.js';
import { openStore } from '../storage/location.js';
import { isBelow, isS3Url, type S3Options } from '../storage/s3-url.js';
import type { MediaStore, Stamp } from '../storage/store.js';
import { safeName } from './rules.js';

/** Extensions picked up when a folder is recursed; a file named explicitly is always tried. */
export const IMAGE_EXTENSIONS = new Set([
  '.jpg',
  '.jpeg',
  '.jpe',
  '.png',
  '.webp',
  '.gif',
  '.avif',
  '.tif',
  '.tiff',
  '.heic',
  '.heif',
  '.jp2',
  '.jxl',
]);

export interface Original {
  /**
   * The original's path as found (input path joined with the path inside a folder), or its URL
   * when `data` is given.
   */
  source: string;
  /** Where its renditions go under the output folder: safe folder names and safe `<name>`, no extension. */
  stem: string;
  /** The original's bytes, when it is not a file here (a rendition downloaded by `render --page`). */
  data?: Buffer;
  /** The original, when it is an object in a bucket (`source` is then its `s3://` URL), as listed. */
  object?: { store: MediaStore; key: string; stamp: Stamp };
}

export interface Discovery {
  originals: Original[];
  failures: SourceError[];
  /** Folders that held no image to render. */
  warnings: string[];
  /** The buckets the originals are in, to close when the run is over. */
  stores: MediaStore[];
}

/**
 * Lists the originals under `inputs`. Folders are recursed (hidden entries and the output
 * folder itself are left out); the path below the folder is kept, made URL-safe segment by
 * segment. A file given directly goes to the top of the output folder. A file named twice
 * (directly and in a folder, or in two inputs) is listed once, where it is first found.
 * Throws `InvalidArgumentError` for an input that is not there and a folder inside the output folder.
 */
export async function discoverOriginals(inputs: string[], outDir: string, s3: S3Options = {}): Promise<Discovery> {
  const discovery: Discovery = { originals: [], failures: [], warnings: [], stores: [] };
  try {
    return await discover(discovery, inputs, outDir, s3);
  } catch (error) {
    await Promise.all(discovery.stores.map((store) => store.close())); // the caller closes them only on success
    throw error;
  }
}

async function discover(discovery: Discovery, inputs: string[], outDir: string, s3: S3Options): Promise<Discovery> {
  const outAbsolute = isS3Url(outDir) ? null : path.resolve(outDir);
  const seen = new Set<string>();
  const add = (
    source: string,
    stem: string,
    object?: Original['object'],
    id = object ? source : path.resolve(source),
  ) => {
    if (seen.has(id)) return;
    seen.add(id);
    discovery.originals.push({ source, stem, ...(object && { object }) });
  };
  for (const input of inputs) {
    if (isS3Url(input)) {
      const store = await openStore(input, s3);
      discovery.stores.push(store);
      if (isS3Url(outDir) && isBelow(input, outDir)) {
        throw new InvalidArgumentError(
          `${input}: is inside the output folder ${outAbsolute ?? outDir}, ` +
            'whose files are never taken as originals; keep originals elsewhere',
        );
      }
      await store.open({ write: false, create: false });
      let found = 0;
      const skipped: string[] = [];
      for await (const object of store.list()) {
        const parts = object.key.split('/');
        if (isS3Url(outDir) && isBelow(store.describe(object.key), outDir)) continue;
        if (parts.some((part) => part.startsWith('.'))) continue;
        if (!IMAGE_EXTENSIONS.has(path.posix.extname(object.key).toLowerCase())) {
          skipped.push(object.key);
          continue;
        }
        found++;
        add(store.describe(object.key), stemFor(...parts), { store, key: object.key, stamp: object.stamp });
      }
      if (found === 0 && skipped.length === 0 && !input.endsWith('/')) {
        // Not a prefix with objects below it: maybe one object, named as a file is.
        const single = await singleObject(input, s3);
        if (single) {
          discovery.stores.push(single.store);
          add(single.store.describe(single.object.key), stemFor(single.object.key), {
            ...single.object,
            store: single.store,
          });
          continue;
        }
      }
      if (found === 0 && skipped.length === 0) {
        discovery.failures.push(
          new SourceError('CONTENT_API_UNREADABLE', input, 'no such object, and no objects below this prefix'),
        );
      } else if (found === 0) {
        discovery.warnings.push(`${input}: no images found (objects ending in ${[...IMAGE_EXTENSIONS].join(' ')})`);
      } else if (unsaid(skipped).length > 0) discovery.warnings.push(notRendered(input, unsaid(skipped)));
      continue;
    }
    const info = await stat(input).catch((error: NodeJS.ErrnoException) => error);
    if (info instanceof Error) {
      // An input that is not there is a mistyped argument: the run cannot start (as for check
      // and inspect), before anything, the output folder included, is made.
      if (info.code === 'ENOENT' || info.code === 'ENOTDIR')
        throw new InvalidArgumentError(`${input}: no such file or folder`);
      const reason = `cannot read (${info.code ?? info.message})`;
      discovery.failures.push(new SourceError('CONTENT_API_UNREADABLE', input, reason));
      continue;
    }
    if (info.isFile()) {
      add(input, stemFor(path.basename(input)));
      continue;
    }
    if (!info.isDirectory()) {
      // A FIFO would hang the read, a device (/dev/zero) never end: neither is read.
      discovery.failures.push(new SourceError('CONTENT_API_UNREADABLE', input, `${kindOf(info)}, not a file`));
      continue;
    }
    if (outAbsolute && isInside(path.resolve(input), outAbsolute)) {
      throw new InvalidArgumentError(
        `${input}: is inside the output folder ${outAbsolute ?? outDir}, ` +
          'whose files are never taken as originals; keep originals elsewhere',
      );
    }
    let found = 0;
    const skipped: string[] = [];
    const walk = walkFiles(input, {
      include: (name) => !name.startsWith('.'),
      onUnreadable: (folder, error) => {
        const reason = `cannot read this folder (${error.code ?? error.message}); its originals are left out`;
        discovery.failures.push(new SourceError('CONTENT_API_UNREADABLE', folder, reason));
      },
    });
    // Per file, only what a file costs: the input resolved once, a folder's stem made once (a walk
    // lists a folder's files together).
    const root = path.resolve(input);
    const outBelow = outAbsolute !== null && isInside(outAbsolute, root);
    const [inInput, inRoot] = [folderPrefix(input), folderPrefix(root)];
    let current = { folder: '', stem: '' };
    for await (const name of walk) {
      const source = inInput + name;
      const absolute = inRoot + name;
      if (outBelow && isInside(absolute, outAbsolute)) continue;
      if (!IMAGE_EXTENSIONS.has(path.extname(name).toLowerCase())) {
        skipped.push(name);
        continue;
      }
      found++;
      const parts = name.split(path.sep);
      const folder = parts.slice(0, -1).join('/');
      if (folder !== current.folder) current = { folder, stem: folderStem(parts.slice(0, -1)) };
      add(source, stemIn(current.stem, parts.at(-1)!), undefined, absolute);
    }
    if (found === 0)
      discovery.warnings.push(`${input}: no images found (files ending in ${[...IMAGE_EXTENSIONS].join(' ')})`);
    else if (unsaid(skipped).length > 0) discovery.warnings.push(notRendered(input, unsaid(skipped)));
  }
  return discovery;
}

/**
 * What `path.join(folder, name)` puts before a walk's `name` (`photos/`, or nothing for `.`): the
 * same path, joined without normalizing, which would make each original's path hold on to its parts.
 */
const folderPrefix = (folder: string) => path.join(folder, '_').slice(0, -1);

/** `s3://bucket/folder/photo.jpg` as one object, when it is there (its store is returned, to close). */
async function singleObject(
  url: string,
  s3: S3Options,
): Promise<{ store: MediaStore; object: { key: string; stamp: Stamp } } | null> {
  const slash = url.lastIndexOf('/');
  const store = await openStore(url.slice(0, slash + 1), s3);
  const found = await store.stat(url.slice(slash + 1)).catch(() => null);
  if (found) return { store, object: { key: found.key, stamp: found.stamp } };
  await store.close();
  return null;
}

/**
 * Notes and sidecars that live beside originals, and files with no extension at all (`COPYRIGHT`,
 * `README`: text, as a picture always has one); any other file left out is named in a warning.
 */
const NOT_PICTURES = new Set(['', '.md', '.txt', '.json', '.csv', '.html', '.xmp', '.yaml', '.yml']);
const unsaid = (names: string[]) => names.filter((name) => !NOT_PICTURES.has(path.extname(name).toLowerCase()));

/** A folder's files that are not rendered (an SVG, a PDF, a camera raw), named, so none is left out unsaid. */
function notRendered(input: string, names: string[]): string {
  const shown = names.slice(0, 5).join(', ');
  const more = names.length > 5 ? ` and ${names.length - 5} more` : '';
  return `${input}: ${names.length} file(s) not rendered, not an image type render takes (${shown}${more})`;
}

/** `stemFor('Old Works', 'Évening Light.JPG')` is `old-works/evening-light`. */
export function stemFor(...segments: string[]): string {
  return stemIn(folderStem(segments.slice(0, -1)), segments.at(-1) ?? '');
}

/** The stem of folders' files: `folderStem(['Old Works'])` is `old-works/`. */
const folderStem = (folders: string[]) => folders.map((folder) => `${safeName(folder)}/`).join('');

/** The stem of `file` in the folder of `stem` (from `folderStem`). */
const stemIn = (stem: string, file: string) => stem + safeName(path.parse(file).name);
