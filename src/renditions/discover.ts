/**
 * Turns the command line's files and folders into the list of originals to render, each
 * with the path its renditions take under the output folder.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, SourceError } from '../errors.js';
import { safeName } from './rules.js';

/** Extensions picked up when a folder is recursed; a file named explicitly is always tried. */
export const IMAGE_EXTENSIONS = new Set([
  '.jpg', '.jpeg', '.jpe', '.png', '.webp', '.gif', '.avif', '.tif', '.tiff', '.heic', '.heif', '.jp2', '.jxl',
]);

export interface Original {
  /** The original's path as found (input path joined with the path inside a folder), or its URL when `data` is given. */
  source: string;
  /** Where its renditions go under the output folder: safe folder names and safe `<name>`, no extension. */
  stem: string;
  /** The original's bytes, when it is not a file here (a rendition downloaded by `render --page`). */
  data?: Buffer;
}

export interface Discovery {
  originals: Original[];
  failures: SourceError[];
  /** Folders that held no image to render. */
  warnings: string[];
}

/**
 * Lists the originals under `inputs`. Folders are recursed (hidden entries and the output
 * folder itself are left out); the path below the folder is kept, made URL-safe segment by
 * segment. A file given directly goes to the top of the output folder. A file named twice
 * (directly and in a folder, or in two inputs) is listed once, where it is first found.
 * Throws `InvalidArgumentError` for a folder inside the output folder.
 */
export async function discoverOriginals(inputs: string[], outDir: string): Promise<Discovery> {
  const discovery: Discovery = { originals: [], failures: [], warnings: [] };
  const outAbsolute = path.resolve(outDir);
  const seen = new Set<string>();
  const add = (source: string, stem: string) => {
    if (seen.has(path.resolve(source))) return;
    seen.add(path.resolve(source));
    discovery.originals.push({ source, stem });
  };
  for (const input of inputs) {
    const info = await stat(input).catch((error: NodeJS.ErrnoException) => error);
    if (info instanceof Error) {
      const reason = info.code === 'ENOENT' ? 'no such file or folder' : `cannot read (${info.code ?? info.message})`;
      discovery.failures.push(new SourceError('CONTENT_API_UNREADABLE', input, reason));
      continue;
    }
    if (!info.isDirectory()) {
      add(input, stemFor(path.basename(input)));
      continue;
    }
    if (isInside(path.resolve(input), outAbsolute)) {
      throw new InvalidArgumentError(`${input}: is inside the output folder ${outDir}, whose files are never taken as originals; keep originals elsewhere`);
    }
    let found = 0;
    for (const name of (await readdir(input, { recursive: true })).sort()) {
      const source = path.join(input, name);
      const parts = name.split(path.sep);
      if (parts.some((part) => part.startsWith('.'))) continue;
      if (isInside(path.resolve(source), outAbsolute)) continue;
      if (!IMAGE_EXTENSIONS.has(path.extname(name).toLowerCase())) continue;
      if (!(await stat(source).catch(() => null))?.isFile()) continue;
      found++;
      add(source, stemFor(...parts));
    }
    if (found === 0) discovery.warnings.push(`${input}: no images found (files ending in ${[...IMAGE_EXTENSIONS].join(' ')})`);
  }
  return discovery;
}

/** `stemFor('Old Works', 'Évening Light.JPG')` is `old-works/evening-light`. */
export function stemFor(...segments: string[]): string {
  const file = segments.at(-1) ?? '';
  const folders = segments.slice(0, -1).map(safeName);
  return [...folders, safeName(path.parse(file).name)].join('/');
}

/** True when `child` is `parent` or below it (both absolute). */
export function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
