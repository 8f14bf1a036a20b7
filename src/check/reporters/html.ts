/**
 * The HTML reporter: a contact sheet a person opens in a browser, later and elsewhere (a CI
 * artifact). One self-contained file: every rendition shown by a small thumbnail made with
 * sharp from the file that was read and embedded as a data URI, its sizes beside it, each
 * finding next to its image, full-size links resolved against the API's base URL. A finding on
 * an alternate (another format of a rendition, known from the manifest) sits with thumbnails of
 * the alternate's own files, apart from the Image's.
 *
 * It bounds itself instead of streaming: images with findings first, up to a number of
 * cards and a byte budget for thumbnails; pages past that are listed in one line each.
 */
import { BASE_STYLE, htmlDocument } from '../../html/document.js';
import { escapeHtml as html } from '../../html/escape.js';
import {
  DEFAULT_THUMBNAIL_BUDGET,
  type Embed,
  embedder,
  MAX_THUMB_SOURCE,
  makeThumbnails,
  THUMB_HEIGHT,
  type Thumbnails,
} from '../../html/thumbnails.js';
import { RENDITION_KEYS, type RenditionKey } from '../../renditions/rules.js';
import type { CheckedImage, CheckedPage, Finding } from '../check.js';
import { type FileSource, readMedia } from '../probe.js';
import type { Reporter, RunEnd } from './reporter.js';

export interface HtmlOptions {
  title?: string;
  /** Where the renditions were read (`--verify-files`): thumbnails are made from there. */
  files?: FileSource | undefined;
  /** The API base URL (`--base-url`), for full-size links of root-relative URLs. */
  baseUrl?: string | undefined;
  /** Image cards with findings shown at most (default 2,000). */
  maxFlaggedCards?: number;
  /** Image cards without findings shown at most (default 300). */
  maxCleanCards?: number;
  /** Bytes of embedded thumbnails at most (default 5 MB). */
  thumbnailBudget?: number;
  /** Pages listed in one line each at most, past the detailed ones (default 20,000). */
  maxListed?: number;
}

interface Card {
  image: CheckedImage;
  findings: Finding[];
}

interface ShownPage {
  source: string;
  base: string | null;
  pageFindings: Finding[];
  cards: Card[];
  hiddenCards: number;
  images: number;
}

interface ListedPage {
  source: string;
  images: number;
  errors: number;
  warnings: number;
}

const STYLE = `${BASE_STYLE}
.image { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: .8rem 1rem; margin: 1rem 0; }
.image.has-findings { border-color: #d93025; }
figcaption code.url { display: block; max-width: 24em; word-break: break-all; color: #b3261e; }
ul.findings { margin: .6rem 0 0; padding-left: 1.2rem; }
.alternate { margin-top: .8rem; padding-top: .6rem; border-top: 1px dashed #ddd; }
`;

export function htmlReporter(options: HtmlOptions = {}): Reporter {
  const maxFlagged = options.maxFlaggedCards ?? 2000;
  const maxClean = options.maxCleanCards ?? 300;
  const maxListed = options.maxListed ?? 20_000;
  const shown: ShownPage[] = [];
  const listed: ListedPage[] = [];
  let unlisted = 0;
  let flaggedCards = 0;
  let cleanCards = 0;

  return {
    start: () => '',
    page(page) {
      const isOf = (image: CheckedImage) => (p: Finding) =>
        p.path === image.path || p.path.startsWith(`${image.path}.`);
      const cards = page.images.map((image) => ({ image, findings: page.problems.filter(isOf(image)) }));
      const pageFindings = page.problems.filter((p) => !page.images.some((image) => isOf(image)(p)));
      const kept: Card[] = [];
      for (const card of cards) {
        if (card.findings.length > 0 && flaggedCards < maxFlagged) {
          flaggedCards++;
          kept.push(card);
        } else if (card.findings.length === 0 && cleanCards < maxClean) {
          cleanCards++;
          kept.push(card);
        }
      }
      const errors = page.problems.filter((p) => p.severity === 'error').length;
      if (
        kept.length > 0 ||
        (pageFindings.length > 0 && shown.length < maxFlagged) ||
        (page.images.length === 0 && shown.length < maxClean)
      ) {
        shown.push({
          source: page.source,
          base: baseFor(page, options.baseUrl),
          pageFindings: pageFindings.slice(0, 100),
          cards: kept,
          hiddenCards: cards.length - kept.length,
          images: page.images.length,
        });
      } else if (listed.length < maxListed) {
        listed.push({
          source: page.source,
          images: page.images.length,
          errors,
          warnings: page.problems.length - errors,
        });
      } else {
        unlisted++;
      }
      return '';
    },
    async end(end) {
      const budget = options.thumbnailBudget ?? DEFAULT_THUMBNAIL_BUDGET;
      const thumbnails = options.files ? await thumbnailsOf(shown, options.files, budget) : null;
      return document(
        options.title ?? 'content-api check',
        end,
        shown,
        listed,
        unlisted,
        embedder(thumbnails, budget),
        Boolean(options.files),
      );
    },
  };
}

/** The base for full-size links: the page's API, the origin of a fetched page, or `--base-url`. */
function baseFor(page: CheckedPage, baseUrl: string | undefined): string | null {
  if (page.baseUrl) return page.baseUrl;
  if (/^https?:\/\//i.test(page.source)) return new URL(page.source).origin;
  return baseUrl ?? null;
}

/**
 * A small WebP of each rendition shown, images with findings first, until their bytes pass
 * the budget; a file that cannot be read or decoded gets its reason instead.
 */
function thumbnailsOf(pages: ShownPage[], files: FileSource, budget: number): Promise<Thumbnails> {
  const cards = pages
    .flatMap((page) => page.cards)
    .sort((a, b) => Number(b.findings.length > 0) - Number(a.findings.length > 0));
  const urls = cards.flatMap((card) => [
    ...RENDITION_KEYS.flatMap((key) => (card.image.sizes[key] ? [card.image.sizes[key].url] : [])),
    ...card.findings.flatMap((finding) => (finding.alternate ? [finding.alternate.url] : [])),
  ]);
  return makeThumbnails(
    urls,
    async (url) => {
      const read = await readMedia(url, files, MAX_THUMB_SOURCE);
      if (!read.ok) return { reason: read.reason === 'missing' ? 'file missing' : 'cannot read the file' };
      if (!read.complete) return { reason: 'file too large to read for a thumbnail' };
      return read.bytes;
    },
    budget,
  );
}

function document(
  title: string,
  { summary, fixed, baseline }: RunEnd,
  shown: ShownPage[],
  listed: ListedPage[],
  unlisted: number,
  embed: Embed,
  hasFiles: boolean,
): string {
  const total = summary.errors + summary.warnings;
  const counts = total === 0 ? 'no findings' : `${summary.errors} error(s), ${summary.warnings} warning(s)`;
  const extra = [
    summary.baselined > 0 && `${summary.baselined} in the baseline`,
    summary.ignored > 0 && `${summary.ignored} ignored by the config`,
  ].filter(Boolean);
  const notes: string[] = [];
  if (!hasFiles)
    notes.push(
      'No thumbnails: the rendition files were not read (give <code>--verify-files</code> a folder or base URL ' +
        'where they are). Boxes show each rendition at its proportions.',
    );
  const hidden = shown.reduce((n, page) => n + page.hiddenCards, 0);
  if (hidden > 0 || listed.length > 0 || unlisted > 0)
    notes.push(
      `The report bounds itself: images with findings come first; ${hidden} image(s) without findings, ` +
        'and the pages listed at the end, are not shown in detail.',
    );
  if (fixed.length > 0)
    notes.push(
      `${fixed.length} finding(s) in the baseline ${html(String(baseline))} are fixed ` +
        'and can be removed (--update-baseline).',
    );
  const ordered = [...shown].sort(
    (a, b) =>
      Number(b.cards.some((c) => c.findings.length) || b.pageFindings.length > 0) -
      Number(a.cards.some((c) => c.findings.length) || a.pageFindings.length > 0),
  );
  const sections = ordered.map((page) => {
    const cards = [...page.cards].sort((a, b) => Number(b.findings.length > 0) - Number(a.findings.length > 0));
    const pageFindings = page.pageFindings.length
      ? `<ul class="findings page-findings">${page.pageFindings.map(findingItem).join('')}</ul>`
      : '';
    return `<section class="page" data-source="${html(page.source)}">
<h2>${html(page.source)}</h2>
${pageFindings}
${cards.map((card) => imageCard(card, page.base, embed)).join('\n') || (page.images === 0 ? '<p>No images.</p>' : '')}
${page.hiddenCards ? `<p class="note">${page.hiddenCards} more image(s) not shown.</p>` : ''}
</section>`;
  });
  const rows = listed.map((p) => {
    const findings = p.errors + p.warnings === 0 ? 'no findings' : `${p.errors} error(s), ${p.warnings} warning(s)`;
    return `<tr><td><code>${html(p.source)}</code></td><td>${p.images} image(s)</td><td>${findings}</td></tr>`;
  });
  const extraNote = extra.length ? ` (${extra.join(', ')})` : '';
  const summaryLine =
    `<p class="summary${total ? ' bad' : ''}" data-errors="${summary.errors}" data-warnings="${summary.warnings}">` +
    `${summary.pages} page(s), ${summary.images} image(s): ${counts}${extraNote}</p>`;
  return htmlDocument(
    title,
    STYLE,
    `${summaryLine}
${notes.map((note) => `<p class="note">${note}</p>`).join('\n')}
${sections.join('\n')}
${rows.length ? `<h2>Other pages</h2>\n<table class="listed">${rows.join('\n')}</table>` : ''}
${unlisted ? `<p class="note">and ${unlisted} more page(s).</p>` : ''}`,
  );
}

function imageCard({ image, findings }: Card, base: string | null, embed: Embed): string {
  const figures = RENDITION_KEYS.map((key) => {
    const size = image.sizes[key];
    if (!size) return `<figure data-key="${key}"><figcaption>${key}: missing</figcaption></figure>`;
    return renditionFigure(key, size, size.url, `${key} ${size.width}x${size.height}`, base, embed);
  }).join('');
  const own = findings.filter((finding) => !finding.alternate);
  return `<div class="image${findings.length ? ' has-findings' : ''}" data-path="${html(image.path)}">
<div class="path">${html(image.path)}</div>
<div class="renditions">${figures}</div>
${own.length ? `<ul class="findings">${own.map(findingItem).join('')}</ul>` : ''}
${alternateGroups(image, findings, base, embed)}
</div>`;
}

/**
 * The findings on alternates, a group per format: the thumbnails of the alternate files they are
 * about (each in place of the rendition it stands beside, at the size the JSON gives that
 * rendition), then the findings.
 */
function alternateGroups(image: CheckedImage, findings: Finding[], base: string | null, embed: Embed): string {
  const groups = new Map<string, Array<Finding & Required<Pick<Finding, 'alternate'>>>>();
  for (const finding of findings) {
    const { alternate } = finding;
    if (alternate) groups.set(alternate.format, [...(groups.get(alternate.format) ?? []), { ...finding, alternate }]);
  }
  return [...groups]
    .map(([format, about]) => {
      // Each file once, in rendition order (xs first), under the key of the rendition it stands beside.
      const files = new Map<string, RenditionKey | undefined>();
      for (const finding of about)
        if (!files.has(finding.alternate.url)) files.set(finding.alternate.url, keyOf(image, finding));
      const order = (key: RenditionKey | undefined) => (key ? RENDITION_KEYS.indexOf(key) : RENDITION_KEYS.length);
      const figures = [...files]
        .sort(([, a], [, b]) => order(a) - order(b))
        .map(([url, key]) =>
          renditionFigure(key, key && image.sizes[key], url, `${key ?? ''} ${format}`.trim(), base, embed),
        )
        .join('');
      return `<div class="alternate" data-format="${html(format)}">
<div class="path">${html(format)} alternate</div>
<div class="renditions">${figures}</div>
<ul class="findings">${about.map(findingItem).join('')}</ul>
</div>`;
    })
    .join('\n');
}

/** The rendition a finding's JSON path is at (`$.images[0].sizes.md.url`), if it is one of `image`'s. */
function keyOf(image: CheckedImage, finding: Finding): RenditionKey | undefined {
  return RENDITION_KEYS.find(
    (key) => finding.path === `${image.path}.sizes.${key}.url` || finding.path === `${image.path}.sizes.${key}`,
  );
}

/**
 * One file as a thumbnail (or a box saying why there is none) at the proportions of `size`, the
 * rendition's as the JSON gives it (a square without one), captioned with a link to it full size.
 */
function renditionFigure(
  key: RenditionKey | undefined,
  size: { width: number; height: number } | undefined,
  url: string,
  caption: string,
  base: string | null,
  embed: Embed,
): string {
  const width = size
    ? Math.max(1, Math.min(THUMB_HEIGHT * 8, Math.round((THUMB_HEIGHT * size.width) / size.height)))
    : THUMB_HEIGHT;
  const thumbnail = embed(url);
  const picture =
    typeof thumbnail === 'string'
      ? `<img src="${thumbnail}" width="${width}" height="${THUMB_HEIGHT}" alt="${key ?? ''} rendition">`
      : `<div class="placeholder" style="width:${width}px;height:${THUMB_HEIGHT}px" ` +
        `title="${html(thumbnail?.reason ?? 'not read')}">${html(thumbnail?.reason ?? '')}</div>`;
  const target = fullSize(url, base);
  const text = html(caption);
  const link =
    target === null
      ? text
      : 'href' in target
        ? `<a href="${html(target.href)}">${text}</a>`
        : `${text} <code class="url">${html(target.text)}</code>`;
  const data =
    (key ? ` data-key="${key}"` : '') + (size ? ` data-width="${size.width}" data-height="${size.height}"` : '');
  return `<figure${data}>${picture}<figcaption>${link}</figcaption></figure>`;
}

/** Longest URL shown as text (a `data:` URL may be megabytes long). */
const MAX_URL_TEXT = 200;

/**
 * The rendition's URL as a link, only when it is http(s): absolute, or relative against the
 * base (nothing without one). A page is someone else's text: a URL of any other scheme
 * (`javascript:`, `data:`, `file:`) never becomes a link, and is shown as text instead.
 */
function fullSize(url: string, base: string | null): { href: string } | { text: string } | null {
  let resolved: URL;
  try {
    resolved = base ? new URL(url, base.endsWith('/') ? base : `${base}/`) : new URL(url);
  } catch {
    return null;
  }
  if (resolved.protocol === 'http:' || resolved.protocol === 'https:') return { href: resolved.href };
  return { text: url.length > MAX_URL_TEXT ? `${url.slice(0, MAX_URL_TEXT - 1)}…` : url };
}

function findingItem(finding: Finding): string {
  return (
    `<li class="${finding.severity}" data-rule="${html(finding.rule)}">` +
    `<code>${html(finding.path)}</code> [${html(finding.rule)}] ${html(finding.message)}</li>`
  );
}
