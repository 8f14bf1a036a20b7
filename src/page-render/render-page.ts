/**
 * `render --page`: every image of a page rendered again, each source once, and the page's
 * JSON text with each Image's `sizes` and `srcset` replaced by the new renditions, and each
 * sized reference (`meta.thumb`) by the rendition it names.
 */

import type { HttpOptions } from '../client/http.js';
import type { LoadedPage } from '../client/pages.js';
import { escapeText, InvalidArgumentError } from '../errors.js';
import { validatePage } from '../page/validate.js';
import { type FoundImage, findObjects, formatPath, type JsonPath } from '../page/walk.js';
import type { ImageObject } from '../renditions/image-object.js';
import {
  type RenderCounts,
  type RenderFailure,
  type RenderOptions,
  type RenderResult,
  renderSources,
} from '../renditions/render.js';
import { DEFAULT_MEDIA_URL, type RenditionKey } from '../renditions/rules.js';
import { verifyImage } from '../renditions/verify.js';
import { groupPageImages, groupPaths, type ImageGroup, insidePaths, type SizedReference } from './images.js';
import { diffEdits, duplicateKeys, replaceValues, type ValueEdit } from './rewrite.js';
import { resolveSources, type SourceKind } from './sources.js';

export interface RenderPageOptions extends Omit<RenderOptions, 'altText'>, HttpOptions {
  /** A folder of originals, matched to images by name; images without one use their largest rendition. */
  originals?: string | undefined;
  /** Base of root-relative rendition URLs, for downloads (default: the page's own base URL, when fetched by id). */
  baseUrl?: string | undefined;
  /** Download the largest rendition of images without an original (default true). */
  download?: boolean;
  /** Origins besides the base URL's that renditions may be downloaded from (`https://cdn.example.org`). */
  downloadFrom?: string[] | undefined;
  /** Called after each download, done or failed. */
  onDownload?: (event: { done: number; total: number; url: string }) => void;
}

/** A source rendered (or skipped, or planned), with the page's images that show it. */
export interface PageRenderResult extends RenderResult {
  /** JSON paths of every Image that shows this source, then of every sized reference that names it. */
  paths: string[];
  /** `original`: a file from the originals folder; `rendition`: the page's largest rendition, downloaded. */
  origin: SourceKind;
}

/** A source that could not be found or rendered; its images are left as they were. */
export interface PageRenderFailure extends RenderFailure {
  paths: string[];
  origin: SourceKind | null;
}

export interface PageRenderReport {
  /** The file, URL or `stdin` the page came from. */
  page: string;
  results: PageRenderResult[];
  /** The page's originals by how they ended, and files of earlier renderings removed and kept. */
  counts: RenderCounts;
  failures: PageRenderFailure[];
  /** Sources never started because the run was interrupted. */
  notStarted: string[];
  warnings: string[];
  /**
   * The page's text with the new `sizes` and `srcset` (and `width`/`height` where the aspect
   * changed), and each sized reference's new `url`, `width` and `height`.
   */
  text: string;
  /** JSON paths of the Images and sized references whose text changed. */
  updated: string[];
}

export async function renderPage(page: LoadedPage, options: RenderPageOptions): Promise<PageRenderReport> {
  if (page.parseError !== undefined) throw new InvalidArgumentError(`${page.source}: not JSON (${page.parseError})`);
  if (typeof page.json !== 'object' || page.json === null || Array.isArray(page.json)) {
    throw new InvalidArgumentError(`${page.source}: not a page (expected a JSON object)`);
  }
  // JSON.parse keeps a duplicate key's last value, the text editor would change the first:
  // the written page would silently keep the stale value.
  const [duplicate, ...more] = duplicateKeys(page.text);
  if (duplicate) {
    const others = more.length > 0 ? ` (and ${more.length} more)` : '';
    const why = 'parsers disagree on which counts, so the page cannot be rewritten faithfully: remove the duplicates';
    throw new InvalidArgumentError(
      `${page.source}: ${duplicate.path}: ` +
        `the key '${escapeText(duplicate.key)}' appears twice in one object${others}; ${why}`,
    );
  }
  const mediaUrl = options.mediaUrl ?? DEFAULT_MEDIA_URL;
  const { groups, unusable, unusableReferences } = groupPageImages(page.json, mediaUrl);
  const warnings = pageWarnings(page, groups);
  for (const { path, reason } of unusableReferences) warnings.push(`${formatPath(path)}: ${reason}`);
  const failures: PageRenderFailure[] = unusable.map(({ path, reason }) => {
    const at = formatPath(path);
    return { source: at, paths: [at], origin: null, code: 'CONTENT_API_NO_SOURCE', error: `${at}: ${reason}` };
  });

  const baseUrl = options.baseUrl ?? page.baseUrl;
  const { resolved, unresolved, stores } = await resolveSources(groups, { ...options, baseUrl });
  for (const { group, source, reason } of unresolved) {
    const error = `${describe(group)}: ${source === group.stem ? '' : `${source}: `}${reason}`;
    failures.push({ source, paths: groupPaths(group), origin: null, code: 'CONTENT_API_NO_SOURCE', error });
  }

  const bySource = new Map(resolved.map((entry) => [entry.original.source, entry]));
  const rendered = await renderSources(
    resolved.map((entry) => entry.original),
    { ...options, altText: (original) => altTextOf(bySource.get(original.source)!.group) },
  ).finally(() => Promise.all(stores.map((store) => store.close())));
  warnings.push(...rendered.warnings);
  const results: PageRenderResult[] = [];
  const edits: ValueEdit[] = [];
  const updated: string[] = [];
  const replaced = new Map<string, string>();
  for (const result of rendered.results) {
    const entry = bySource.get(result.source)!;
    const groups = [entry.group, ...entry.merged];
    const images = groups.flatMap((group) => group.images);
    const references = groups.flatMap((group) => group.references);
    results.push({ ...result, paths: groups.flatMap(groupPaths), origin: entry.kind });
    for (const image of images) {
      const imageEdits = editsFor(image, result.image, warnings);
      if (imageEdits.length > 0) updated.push(formatPath(image.path));
      edits.push(...imageEdits);
    }
    for (const reference of references) {
      const referenceEdits = referenceEditsFor(reference, result.image);
      if (referenceEdits.length > 0) updated.push(formatPath(reference.path));
      edits.push(...referenceEdits);
    }
    for (const [old, now] of urlChanges(images, references, result.image)) replaced.set(old, now);
    for (const group of groups) {
      const moved = movedFolder(group, result.image);
      if (moved)
        warnings.push(
          `${describe(group)}: its URLs move from ${moved.from} to ${moved.to} ` +
            `(new URLs are --media-url ${mediaUrl} and the path below it)`,
        );
    }
    if (entry.kind === 'rendition' && result.status !== 'skipped') {
      const { width, height } = entry.group.largest;
      const verb = result.status === 'planned' ? 'would be rendered' : 'rendered';
      warnings.push(
        `${describe(entry.group)}: no original found, ${verb} from ${result.source} (${width}x${height}); ` +
          'the renditions are no sharper than it',
      );
    }
  }
  const sized = [...groups.flatMap((group) => group.references), ...unusableReferences];
  warnings.push(...staleReferences(page.json, groups, sized, replaced));
  if (groups.length === 0 && unusable.length === 0)
    warnings.push(`${page.source}: no Images in the page; nothing to render`);
  for (const failure of rendered.failures) {
    const entry = bySource.get(failure.source)!;
    failures.push({
      ...failure,
      paths: [entry.group, ...entry.merged].flatMap(groupPaths),
      origin: entry.kind,
      error: `${describe(entry.group)}: ${failure.error}`,
    });
  }
  return {
    page: page.source,
    results,
    counts: rendered.counts,
    failures,
    notStarted: rendered.notStarted,
    warnings,
    text: replaceValues(page.text, edits),
    updated,
  };
}

/**
 * The edits that bring one of the page's Image objects in line with `image`: its `sizes`,
 * its `srcset` where it has one or must have one (page- and block-level images), and its
 * `width`/`height` where the new renditions' aspect ratio is another. Only values that
 * differ are edited, so the key order within each size (`url, width, height` on inquiry
 * artwork images) stays the page's own.
 */
function editsFor(found: FoundImage, image: ImageObject, warnings: string[]): ValueEdit[] {
  const target: Record<string, unknown> = { sizes: image.sizes };
  if ('srcset' in found.image || found.srcsetRequired) target.srcset = image.srcset;
  if (verifyImage({ ...found.image, ...target }).some((finding) => finding.rule === 'image-relative-size')) {
    Object.assign(target, { width: image.width, height: image.height });
    warnings.push(
      `${formatPath(found.path)}: width/height ${String(found.image.width)}/${String(found.image.height)} ` +
        `became ${image.width}/${image.height}, the new original's aspect ratio`,
    );
  }
  return diffEdits(found.path, found.image, target);
}

/**
 * The edits that bring a sized reference in line with the rendition of its key: its `url`,
 * `width` and `height`, each only where it differs, so its key order and the rest stay.
 */
function referenceEditsFor(reference: SizedReference, image: ImageObject): ValueEdit[] {
  const { url, width, height } = image.sizes[reference.key];
  return diffEdits(reference.path, reference.value, { url, width, height });
}

/**
 * Each URL the page's Images and sized references named, and the URL of the same key's new
 * rendition, where they differ.
 */
function urlChanges(images: FoundImage[], references: SizedReference[], image: ImageObject): Array<[string, string]> {
  const named = [
    ...images.flatMap((found) => Object.entries((found.image.sizes ?? {}) as Record<string, { url?: unknown }>)),
    ...references.map((reference): [string, { url: string }] => [reference.key, reference]),
  ];
  return named.flatMap(([key, size]) => {
    const now = image.sizes[key as RenditionKey]?.url;
    return typeof size?.url === 'string' && now !== undefined && size.url !== now
      ? [[size.url, now] as [string, string]]
      : [];
  });
}

/** The folder part of the largest rendition's URL, before and after, when it changed. */
function movedFolder(group: ImageGroup, image: ImageObject): { from: string; to: string } | null {
  const folder = (url: string) => url.slice(0, url.lastIndexOf('/') + 1);
  const from = folder(group.largest.url);
  const to = folder(image.sizes.xl.url);
  return from === to ? null : { from, to };
}

/**
 * Plain strings elsewhere in the page (not the `url` of a sized reference, which is rewritten
 * or warned about on its own) that name a rendition whose URL changed: reported, never edited.
 */
function staleReferences(
  json: unknown,
  groups: ImageGroup[],
  sized: Array<{ path: JsonPath }>,
  replaced: Map<string, string>,
): string[] {
  if (replaced.size === 0) return [];
  const inImage = insideImages(groups);
  const referenceUrls = new Set(sized.map((reference) => formatPath([...reference.path, 'url'])));
  const warnings: string[] = [];
  for (const { path, value } of findObjects(json)) {
    if (inImage(formatPath(path))) continue;
    for (const [key, field] of Object.entries(value)) {
      const at = formatPath([...path, key]);
      const now = typeof field === 'string' && !referenceUrls.has(at) ? replaced.get(field) : undefined;
      if (now)
        warnings.push(
          `${at}: still names ${String(field)}; the re-rendered file is ${now} ` +
            '(only Images and {url, width, height} objects under the media URL are rewritten)',
        );
    }
  }
  return warnings;
}

/** Page problems that re-rendering does not fix (anything outside the images' renditions) are worth a warning. */
function pageWarnings(page: LoadedPage, groups: ImageGroup[]): string[] {
  const inImage = insideImages(groups);
  const { problems } = validatePage(page.json, { baseUrl: page.baseUrl });
  const others = problems.filter(
    (problem) => problem.severity === 'error' && !(problem.rule.startsWith('image-') || inImage(problem.path)),
  );
  if (others.length === 0) return [];
  const first = others[0]!;
  return [
    `${page.source}: ${others.length} problem(s) that re-rendering does not fix, ` +
      `first ${first.path}: ${first.message} [${first.rule}] (see content-api check)`,
  ];
}

/** Whether a formatted JSON path is one of the groups' Images or inside one. */
function insideImages(groups: ImageGroup[]): (at: string) => boolean {
  return insidePaths(groups.flatMap((group) => group.images.map((image) => formatPath(image.path))));
}

function altTextOf(group: ImageGroup): string | null {
  const alt = group.images[0]?.image.alt_text;
  return typeof alt === 'string' ? alt : null;
}

/** `$.presentation_stage.thumbnail and 2 more ('landscapes/storm')`. */
function describe(group: ImageGroup): string {
  const [first, ...rest] = groupPaths(group);
  return `${first}${rest.length > 0 ? ` and ${rest.length} more` : ''} ('${group.stem}')`;
}
