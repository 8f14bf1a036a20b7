/**
 * The contact sheet of a render (`render --report report.html`): what a batch made, for an
 * editor to look at. One self-contained HTML file, like `check`'s HTML report: the counts
 * and the bytes per format, failures and warnings first, then a card per original with its
 * five renditions as thumbnails made from the files as written, embedded as data URIs.
 *
 * It bounds itself: a byte budget for thumbnails (past it, boxes at each rendition's
 * proportions and a note), a number of cards past which originals are listed in one line
 * each, and a number of lines past which only a count is given.
 */
import { realpath, stat } from 'node:fs/promises';
import pLimit from 'p-limit';
import { isInside } from '../fs/paths.js';
import { BASE_STYLE, htmlDocument } from '../html/document.js';
import { escapeHtml as html } from '../html/escape.js';
import {
  DEFAULT_THUMBNAIL_BUDGET,
  embedder,
  MAX_THUMB_SOURCE,
  makeThumbnails,
  type ThumbnailSource,
} from '../html/thumbnails.js';
import type { RenderReport } from '../renditions/render.js';
import { RENDITION_KEYS } from '../renditions/rules.js';
import { openStore } from '../storage/location.js';
import { isKey, type MediaStore } from '../storage/store.js';
import { count, formatBytes } from '../units.js';
import { bytesCell, type CardTally, card, type FileBytes, listedRow } from './cards.js';

export interface ContactSheetOptions {
  /**
   * Where the renditions are: the output store the render wrote (its `files` paths are keys
   * in it), or its location, a folder or `s3://bucket/prefix/`, opened and closed here.
   */
  store: MediaStore | string;
  /** The document's title and heading (default `content-api render`). */
  title?: string;
  /** Characters of embedded thumbnails at most (default 5,000,000: about 5 MB of file). */
  thumbnailBudget?: number;
  /** Originals shown as cards at most, in the report's order (default 500); the next are listed a line each. */
  maxCards?: number;
  /** Lines listed at most in each list (failures, warnings, not started, other originals; default 20,000). */
  maxListed?: number;
}

const STYLE = `${BASE_STYLE}
.summary.warned { background: #fff4e5; }
.totals, .formats { border-collapse: collapse; font-size: 13px; margin-top: .6rem; }
.totals td, .totals th, .formats td, .formats th { padding: 2px 12px 2px 0; text-align: left; }
.totals th, .formats th { font-weight: 600; color: #555; }
.card { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .8rem 1rem; margin: 1rem 0; }
.card h2 { margin: 0 0 .3rem; font-size: 1rem; font-family: ui-monospace, monospace; }
.facts { margin: 0 0 .6rem; color: #555; }
.problems li { word-break: break-word; }
.swatch { display: block; width: 48px; height: 48px; border: 1px solid #ccc; }
figure.placeholder-of img { display: block; image-rendering: auto; border: 1px solid #ccc; }
`;

/**
 * The contact sheet of `report` as one HTML document. Thumbnails are read from `store`
 * (a file that cannot be read or decoded shows why instead); nothing in the document
 * makes a request or runs a script.
 */
export async function contactSheetHtml(report: RenderReport, options: ContactSheetOptions): Promise<string> {
  const owned = typeof options.store === 'string' ? await openStore(options.store) : null;
  const store = owned ?? (options.store as MediaStore);
  try {
    return await sheet(report, store, options);
  } finally {
    await owned?.close();
  }
}

async function sheet(report: RenderReport, store: MediaStore, options: ContactSheetOptions): Promise<string> {
  const maxCards = options.maxCards ?? 500;
  const maxListed = options.maxListed ?? 20_000;
  const budget = options.thumbnailBudget ?? DEFAULT_THUMBNAIL_BUDGET;
  const carded = report.results.slice(0, maxCards);
  const written = carded.filter((result) => result.status !== 'planned' && result.files);
  const keys = written.flatMap((result) => RENDITION_KEYS.flatMap((key) => result.files[key]?.path ?? []));
  const everyFormat = written.flatMap((result) =>
    [result, ...(result.alternates ?? [])].flatMap(({ files }) =>
      RENDITION_KEYS.flatMap((key) => files?.[key]?.path ?? []),
    ),
  );
  const [thumbnails, sizes] = await Promise.all([
    makeThumbnails(keys, (key) => readRendition(store, key), budget),
    fileBytes(store, everyFormat),
  ]);
  const tally: CardTally = { spent: 0 };
  const embed = embedder(thumbnails, budget);
  const cards = carded.map((result) => card(result, embed, tally, sizes));

  const notes: string[] = [];
  if (report.results.length > 0 && written.length === 0)
    notes.push("A dry run: nothing was written, so the cards show each rendition's size without a thumbnail.");
  if (tally.spent > 0)
    notes.push(
      `${tally.spent} thumbnail(s) not embedded: the sheet's thumbnail budget (${formatBytes(budget)}) is spent. ` +
        'Boxes show those renditions at their proportions.',
    );
  const rest = report.results.slice(maxCards);
  if (rest.length > 0)
    notes.push(`Past ${maxCards} cards, the other ${rest.length} original(s) are listed in one line each.`);

  const body = [
    summary(report),
    totals(report),
    ...notes.map((note) => `<p class="note">${note}</p>`),
    list('Failures', 'failures', report.failures, maxListed, (failure) => {
      const code = html(failure.code);
      const source = `<code>${html(failure.source)}</code>`;
      return `<li class="error" data-code="${code}">${source} [${code}] ${html(failure.error)}</li>`;
    }),
    list('Warnings', 'warnings', report.warnings, maxListed, (warning) => `<li class="warning">${html(warning)}</li>`),
    list(
      'Not started',
      'not-started',
      report.notStarted,
      maxListed,
      (source) => `<li><code>${html(source)}</code></li>`,
    ),
    cards.join('\n'),
    rest.length > 0
      ? `<h2>Other originals</h2>\n<table class="listed">${rest.slice(0, maxListed).map(listedRow).join('\n')}</table>`
      : '',
    rest.length > maxListed ? `<p class="note">and ${rest.length - maxListed} more original(s).</p>` : '',
  ];
  return htmlDocument(options.title ?? 'content-api render', STYLE, body.filter(Boolean).join('\n'));
}

function summary({ results, failures, warnings, notStarted }: RenderReport): string {
  const of = (status: string) => results.filter((result) => result.status === status).length;
  const counts = {
    rendered: of('rendered'),
    'up-to-date': of('skipped'),
    planned: of('planned'),
    failed: failures.length,
    'not-started': notStarted.length,
    warnings: warnings.length,
  };
  const data = Object.entries(counts)
    .map(([name, value]) => `data-${name}="${value}"`)
    .join(' ');
  const text =
    `${counts.rendered} rendered, ${counts['up-to-date']} up to date, ${counts.planned} planned, ` +
    `${counts.failed} failed, ${counts['not-started']} not started, ${counts.warnings} warning(s)`;
  const bad = failures.length > 0 || notStarted.length > 0;
  return `<p class="summary${bad ? ' bad' : warnings.length > 0 ? ' warned' : ''}" ${data}>${text}</p>`;
}

/**
 * Bytes of the renditions per format over the whole report, the primary and the alternates alike,
 * written or up to date.
 */
function totals({ results }: RenderReport): string {
  const byFormat = new Map<string, { bytes: number; originals: number }>();
  for (const result of results) {
    const outputs = [{ format: result.format, bytes: result.bytes }, ...(result.alternates ?? [])];
    for (const { format, bytes } of outputs) {
      if (typeof bytes !== 'number' || !Number.isFinite(bytes)) continue;
      const total = byFormat.get(format) ?? { bytes: 0, originals: 0 };
      byFormat.set(format, { bytes: total.bytes + bytes, originals: total.originals + 1 });
    }
  }
  if (byFormat.size === 0) return '';
  const rows = [...byFormat].map(
    ([format, { bytes, originals }]) =>
      `<tr data-format="${html(format)}"><td>${html(format)}</td>${bytesCell(bytes)}` +
      `<td>${originals} original(s)</td></tr>`,
  );
  return `<table class="totals"><tr><th>format</th><th>bytes</th><th></th></tr>${rows.join('')}</table>`;
}

function list<T>(title: string, name: string, items: T[], max: number, item: (value: T) => string): string {
  if (items.length === 0) return '';
  const more = items.length > max ? `<p class="note">and ${count(items.length - max)} more.</p>` : '';
  return (
    `<section class="problems ${name}"><h2>${title} (${items.length})</h2>\n` +
    `<ul>${items.slice(0, max).map(item).join('\n')}</ul>${more}</section>`
  );
}

/**
 * A rendition file to make a thumbnail of. In a folder, libvips reads the file itself, once
 * it is known to be a regular file inside the folder (a symlink out is never read); in a
 * bucket, up to `MAX_THUMB_SOURCE` bytes of it.
 */
async function readRendition(store: MediaStore, key: string): Promise<ThumbnailSource> {
  try {
    const local = await localFile(store, key);
    if (local !== null) {
      if ('reason' in local) return local;
      if (local.size > MAX_THUMB_SOURCE) return { reason: 'file too large to read for a thumbnail' };
      return { path: local.path };
    }
    const head = await store.readHead(key, MAX_THUMB_SOURCE + 1);
    if (head === null) return { reason: 'file missing' };
    if (head.length > MAX_THUMB_SOURCE) return { reason: 'file too large to read for a thumbnail' };
    return head;
  } catch (error) {
    return { reason: unreadable(error) };
  }
}

/**
 * The bytes of each rendition file, every format's, as the output holds it now: in a folder, of a
 * regular file inside it (as for its thumbnail, a symlink out is never followed); in a bucket, as
 * its listing or a HEAD gives them (`MediaStore.stat`). The budget does not bound these: no file is read.
 */
async function fileBytes(store: MediaStore, keys: string[]): Promise<FileBytes> {
  const limit = pLimit(8);
  const unique = [...new Set(keys)];
  const sizes = await Promise.all(
    unique.map((key) =>
      limit(async (): Promise<number | { reason: string }> => {
        try {
          const local = await localFile(store, key);
          if (local !== null) return 'reason' in local ? local : local.size;
          return (await store.stat(key))?.size ?? { reason: 'file missing' };
        } catch (error) {
          return { reason: unreadable(error) };
        }
      }),
    ),
  );
  return new Map(unique.map((key, i) => [key, sizes[i]!]));
}

/**
 * In a folder, the file under `key` when it is a regular file inside the folder (its real path and
 * size), or why it is not; null in a bucket. Throws what the file system throws.
 */
async function localFile(
  store: MediaStore,
  key: string,
): Promise<{ path: string; size: number } | { reason: string } | null> {
  if (!isKey(key)) return { reason: 'not a path below the output folder' };
  const local = store.localPath(key);
  if (local === null) return null;
  const real = await realpath(local);
  if (!isInside(real, await realpath(store.location))) return { reason: 'the file is outside the output folder' };
  const info = await stat(real);
  if (!info.isFile()) return { reason: 'not a file' };
  return { path: real, size: info.size };
}

function unreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR' ? 'file missing' : 'cannot read the file';
}
