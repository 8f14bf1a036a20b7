/**
 * The markup of one original on the contact sheet: its card (its pixel size, thumbnails of the
 * five renditions, their sizes, the bytes of each file and the measured quality per format, its
 * placeholder), or its line past the card limit. Everything that comes from outside is escaped;
 * numbers are written only as numbers, and only a `data:image/...;base64` preview becomes a `src`.
 */
import { escapeHtml as html } from '../html/escape.js';
import { BUDGET_SPENT, type Embed, THUMB_HEIGHT } from '../html/thumbnails.js';
import type { Measured } from '../quality/auto.js';
import type { RenditionFile } from '../renditions/image-object.js';
import type { RenderResult, RenderStatus } from '../renditions/render.js';
import { PLACEHOLDER_COLOR, PLACEHOLDER_PREVIEW, RENDITION_KEYS, type RenditionKey } from '../renditions/rules.js';
import { count, formatBytes } from '../units.js';

/** Widest thumbnail box, for a panorama: eight times the height. */
const MAX_THUMB_WIDTH = THUMB_HEIGHT * 8;

const STATUS: Record<RenderStatus, string> = {
  rendered: 'rendered',
  skipped: 'up to date',
  planned: 'planned (dry run)',
};

/** How the sheet names a status (an unknown one, from a report read back, as itself). */
export const statusLabel = (status: string): string => STATUS[status as RenderStatus] ?? status;

/**
 * Bytes as an element: readable text, the exact number in `data-bytes` and as a tooltip (with
 * `note` after it); `key` names the rendition of a file's cell. Without a number, `missing` says why.
 */
export function bytesCell(
  bytes: number | null | undefined,
  { key, note = '', missing = 'not written' }: { key?: RenditionKey; note?: string; missing?: string } = {},
): string {
  const keyed = key ? ` data-key="${key}"` : '';
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return `<td class="bytes"${keyed}>${html(missing)}</td>`;
  const exact = `${bytes.toLocaleString('en-US')} bytes${note}`;
  return `<td class="bytes"${keyed} data-bytes="${count(bytes)}" title="${html(exact)}">${formatBytes(bytes)}</td>`;
}

/** The bytes of each rendition file the sheet shows, by its path in the output; or why there are none. */
export type FileBytes = ReadonlyMap<string, number | { reason: string }>;

/** A thumbnail box of the rendition's proportions: `THUMB_HEIGHT` high, or narrower than `MAX_THUMB_WIDTH`. */
function box({ width, height }: { width: number; height: number }): { width: number; height: number } {
  if (!(width > 0 && height > 0)) return { width: THUMB_HEIGHT, height: THUMB_HEIGHT };
  const scale = Math.min(THUMB_HEIGHT / height, MAX_THUMB_WIDTH / width);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/** Counts what `card` hands out, for the notes above the cards. */
export interface CardTally {
  spent: number;
}

export function card(result: RenderResult, embed: Embed, tally: CardTally, sizes: FileBytes): string {
  const planned = result.status === 'planned';
  const figures = RENDITION_KEYS.map((key) => figure(key, result.files?.[key], planned, embed, tally)).join('');
  const removed = result.removed?.length
    ? ` · ${planned ? 'would remove' : 'removed'} ${count(result.removed.length)} earlier file(s)`
    : '';
  const [width, height] = [count(result.original?.width), count(result.original?.height)];
  const facts = [
    html(statusLabel(result.status)),
    `<span class="original" data-width="${width}" data-height="${height}">original ${width}x${height} px</span>`,
    html(result.format),
  ];
  return `<section class="card" data-source="${html(result.source)}" data-status="${html(result.status)}">
<h2>${html(result.source)}</h2>
<p class="facts">${facts.join(' · ')}${removed}</p>
<div class="renditions">${figures}${placeholder(result)}</div>
${formatTable(result, sizes)}
</section>`;
}

function figure(
  key: RenditionKey,
  file: RenditionFile | undefined,
  planned: boolean,
  embed: Embed,
  tally: CardTally,
): string {
  if (!file) return `<figure data-key="${key}"><figcaption>${key}: missing</figcaption></figure>`;
  const { width, height } = box(file);
  const thumbnail = planned ? { reason: 'planned: not written' } : embed(file.path);
  if (thumbnail === BUDGET_SPENT) tally.spent++;
  const picture =
    typeof thumbnail === 'string'
      ? `<img src="${thumbnail}" width="${width}" height="${height}" alt="${key} rendition">`
      : `<div class="placeholder" style="width:${width}px;height:${height}px" ` +
        `title="${html(thumbnail?.reason ?? 'not read')}">${html(thumbnail?.reason ?? '')}</div>`;
  return (
    `<figure data-key="${key}" data-width="${count(file.width)}" data-height="${count(file.height)}">` +
    `${picture}<figcaption>${key} ${count(file.width)}x${count(file.height)}</figcaption></figure>`
  );
}

/** The colour and preview a page shows while the image loads: only a colour and a data URI, never a URL. */
function placeholder({ placeholder }: RenderResult): string {
  if (!placeholder) return '';
  const colour = PLACEHOLDER_COLOR.test(placeholder.color) ? placeholder.color : null;
  const swatch = colour ? `<span class="swatch" style="background:${colour}"></span>` : '';
  const preview = PLACEHOLDER_PREVIEW.test(placeholder.preview)
    ? `<img class="preview" src="${placeholder.preview}" height="${THUMB_HEIGHT / 2}" alt="placeholder preview">`
    : '';
  if (!swatch && !preview) return '';
  const caption = `<figcaption>placeholder${colour ? ` ${colour}` : ''}</figcaption>`;
  return `<figure class="placeholder-of" data-color="${colour ?? ''}">${preview}${swatch}${caption}</figure>`;
}

/**
 * One row per format, the primary first: the bytes of its files, then a column per rendition with
 * the bytes of its file (once written) and, with `--quality auto`, its encoder quality and score.
 */
function formatTable(result: RenderResult, sizes: FileBytes): string {
  const formats = [
    { format: result.format, files: result.files, bytes: result.bytes, measured: result.measured, primary: true },
    ...(result.alternates ?? []).map((alternate) => ({ ...alternate, primary: false })),
  ];
  const written = result.status !== 'planned';
  const scored = formats.some((format) => format.measured);
  const span = written && scored ? ' colspan="2"' : '';
  const keys = written || scored ? RENDITION_KEYS.map((key) => `<th${span}>${key}</th>`).join('') : '';
  const head = `<tr><th>format</th><th>bytes</th>${keys}</tr>`;
  const rows = formats.map(({ format, files, bytes, measured, primary }) => {
    const cells = RENDITION_KEYS.map(
      (key) => (written ? fileBytesCell(key, files, sizes) : '') + (scored ? measuredCell(measured?.[key]) : ''),
    ).join('');
    return (
      `<tr data-format="${html(format)}"${primary ? ' class="primary"' : ''}>` +
      `<td>${html(format)}${primary ? ' (primary)' : ''}</td>${bytesCell(bytes)}${cells}</tr>`
    );
  });
  return `<table class="formats">${head}${rows.join('')}</table>`;
}

/** The bytes of one rendition's file, as the output holds it (a file two keys share is said to be one). */
function fileBytesCell(
  key: RenditionKey,
  files: Partial<Record<RenditionKey, RenditionFile>> | undefined,
  sizes: FileBytes,
) {
  const path = files?.[key]?.path;
  const size = path === undefined ? undefined : sizes.get(path);
  if (typeof size !== 'number') return bytesCell(null, { key, missing: size?.reason ?? 'not read' });
  const first = RENDITION_KEYS.find((other) => files?.[other]?.path === path);
  return bytesCell(size, { key, note: first && first !== key ? `, the same file as ${first}` : '' });
}

function measuredCell(measured: Measured | undefined): string {
  if (!measured || !Number.isFinite(measured.quality) || !Number.isFinite(measured.score)) return '<td></td>';
  const scored = measured.scored === 'tiles' ? ', scored on a sample of tiles' : '';
  return (
    `<td class="measured" data-quality="${count(measured.quality)}" data-score="${measured.score.toFixed(2)}" ` +
    `title="encoder quality ${count(measured.quality)}, SSIMULACRA2 ${measured.score.toFixed(2)}${scored}">` +
    `q${count(measured.quality)} · ${measured.score.toFixed(1)}</td>`
  );
}

/** An original past the card limit: one line. */
export function listedRow(result: RenderResult): string {
  const formats = [
    { format: result.format, bytes: result.bytes },
    ...(result.alternates ?? []).map(({ format, bytes }) => ({ format, bytes })),
  ];
  const bytes = formats
    .map(({ format, bytes }) => `${html(format)} ${typeof bytes === 'number' ? formatBytes(bytes) : 'not written'}`)
    .join(', ');
  return (
    `<tr data-source="${html(result.source)}"><td><code>${html(result.source)}</code></td>` +
    `<td>${html(statusLabel(result.status))}</td>` +
    `<td>${count(result.original?.width)}x${count(result.original?.height)}</td><td>${bytes}</td></tr>`
  );
}
