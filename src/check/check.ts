/**
 * `check`: every page's schema and rendition rules, and with a file source every media file
 * the page names: its real pixel size and format against the JSON.
 *
 * Pages stream through: each is checked and handed on as it comes, a few at a time, so
 * memory does not grow with the number of pages; only counts, a bounded cache of probed
 * files and the baseline are kept for the whole run.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { BASE_URL_PLACEHOLDER } from '../page/common.js';
import { type Problem, validatePage } from '../page/validate.js';
import { findImages, formatPath } from '../page/walk.js';
import { RENDITION_KEYS, type RenditionKey } from '../renditions/rules.js';
import { type AlternateReference, alternatesOf } from './alternates.js';
import type { Baseline, BaselineRecorder } from './baseline.js';
import { type MediaReference, mediaReferences } from './media.js';
import { PictureCheck, type PictureFinding } from './picture.js';
import type { Policy } from './policy.js';
import { type FileFormat, type FileSource, type ProbeResult, probe, urlPath } from './probe.js';
import { RecordedRenditions } from './recorded.js';
import { FILE_RULES, type FileRule } from './rules.js';
import type { LoadedPage } from './targets.js';

export { FILE_RULES, type FileRule };

/** A problem found by `check`: a page problem, or a rule of `check` itself broken. */
export interface Finding extends Omit<Problem, 'rule'> {
  rule: Problem['rule'] | FileRule;
  /**
   * The file it is about when the JSON does not name it: an alternate of the rendition at `path`
   * (another format, known from the manifest), its format and media URL.
   */
  alternate?: { format: string; url: string };
}

export interface CheckedImage {
  path: string;
  /** Each rendition: its size and URL as the JSON gives them, and where its file was read (`src`). */
  sizes: Partial<Record<RenditionKey, { width: number; height: number; url: string; src: string }>>;
}

export interface CheckedPage {
  /**
   * The page file or URL; for a manifest record (the archive checked whole), the image it records,
   * `media/dune.jpg`.
   */
  source: string;
  /** A manifest record's key (`dune.jpg`), when what was checked is one (`--verify-files` without pages). */
  record?: string;
  /** The API base URL the page was fetched from or filled with, if any. */
  baseUrl?: string | undefined;
  /** Findings that count (not ignored, not in the baseline). */
  problems: Finding[];
  /** Findings the baseline holds: reported apart, never failing the check. */
  baselined: Finding[];
  images: CheckedImage[];
  /** The page's text, kept only when a reporter needs line numbers (`keepText`). */
  text?: string;
}

export interface CheckSummary {
  /** Pages checked; with no pages (the archive checked whole), the records, each reported as one. */
  pages: number;
  /** Manifest records checked, when the archive is checked whole (`--verify-files` without pages). */
  records?: number;
  images: number;
  files: { probed: number; bytesRead: number } | null;
  errors: number;
  warnings: number;
  /** Findings dropped by the config file (rules off, ignored paths); pages it ignores are not read at all. */
  ignored: number;
  /** Findings the baseline holds. */
  baselined: number;
}

export interface CheckOptions {
  /** Where media files are read (`openFileSource`); none: no file rules. */
  files?: FileSource | undefined;
  /** Media files read at once (default 16). */
  concurrency?: number;
  /** URL path prefix of media files (default `/media/`): strings under it are verified. */
  mediaPrefix?: string;
  /** Severities and ignores from the config file. */
  policy?: Policy | undefined;
  baseline?: Baseline | undefined;
  record?: BaselineRecorder | undefined;
  /** Keep each page's text on its result, for reporters that give line numbers. */
  keepText?: boolean;
}

/** Probed files remembered, so a file many pages share is read once; bounded, so memory is. */
const PROBE_CACHE = 20_000;

/** The rule a file that cannot be probed breaks, by why. */
const FILE_REASON_RULES: Record<Extract<ProbeResult, { ok: false }>['reason'], FileRule> = {
  missing: 'file-missing',
  unreadable: 'file-unreadable',
  outside: 'file-outside',
};
/** Pages checked at once: enough to keep the file reads busy while the next page is parsed. */
const PAGES_IN_FLIGHT = 4;

const EXTENSION_FORMATS: Record<string, FileFormat> = {
  jpg: 'jpeg',
  jpeg: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  avif: 'avif',
};

/** One check run: pages in, checked pages out (in order), counts in `summary`. */
export class CheckRun {
  readonly summary: CheckSummary;
  readonly #options: CheckOptions;
  readonly #limit: LimitFunction;
  readonly #probes = new Map<string, Promise<ProbeResult>>();
  /**
   * Files read whole: for the same-picture rule (every rendition) and the version rule (the files
   * whose URL carries a version), unless the config turns both off.
   */
  readonly #pictures: PictureCheck | null;
  /** Whether the config keeps `file-picture` and `file-version` on. */
  readonly #wholeRules: { picture: boolean; version: boolean };
  /** The manifest beside the files (a folder or bucket): fingerprints and alternates. */
  readonly #recorded: RecordedRenditions | null;

  constructor(options: CheckOptions = {}) {
    this.#options = options;
    this.#limit = pLimit(options.concurrency ?? 16);
    const on = (rule: FileRule) => options.policy?.severity(rule, 'error') !== null;
    const whole = { picture: on('file-picture'), version: on('file-version') };
    this.#wholeRules = whole;
    this.#recorded = options.files?.kind === 'store' ? new RecordedRenditions(options.files) : null;
    this.#pictures =
      options.files && (whole.picture || whole.version)
        ? new PictureCheck(options.files, {
            onRead: (bytes) => {
              this.summary.files!.bytesRead += bytes;
            },
            ...(this.#recorded && { recorded: this.#recorded }),
            fingerprints: whole.picture,
          })
        : null;
    this.summary = {
      pages: 0,
      images: 0,
      files: options.files ? { probed: 0, bytesRead: 0 } : null,
      errors: 0,
      warnings: 0,
      ignored: 0,
      baselined: 0,
    };
  }

  /** Each page checked, in the order given, a few at a time. */
  async *run(pages: AsyncIterable<LoadedPage> | Iterable<LoadedPage>): AsyncGenerator<CheckedPage> {
    const queue: Array<Promise<CheckedPage>> = [];
    for await (const page of pages) {
      queue.push(this.check(page));
      // Keep a settled rejection from being reported as unhandled while it waits its turn.
      queue.at(-1)!.catch(() => {});
      if (queue.length >= PAGES_IN_FLIGHT) yield await queue.shift()!;
    }
    while (queue.length > 0) yield await queue.shift()!;
  }

  /** One page: its problems after the config and the baseline, its images, counted in `summary`. */
  async check(page: LoadedPage): Promise<CheckedPage> {
    const found = pageProblems(page);
    const images = page.json === undefined ? [] : imagesOf(page.json);
    if (this.#options.files && page.json !== undefined) found.push(...(await this.#fileProblems(page, images)));
    const checked = this.#sort(page, found, images);
    this.summary.pages++;
    this.summary.images += images.length;
    return checked;
  }

  #sort(page: LoadedPage, found: Finding[], images: CheckedImage[]): CheckedPage {
    return {
      source: page.source,
      ...(page.baseUrl && { baseUrl: page.baseUrl }),
      ...sortFindings(page.source, found, this.#options, this.summary),
      images,
      ...(this.#options.keepText && { text: page.text }),
    };
  }

  #probe(url: string, files: FileSource): Promise<ProbeResult> {
    const known = this.#probes.get(url);
    if (known) {
      // Most recently used last, so the oldest entry is the one dropped.
      this.#probes.delete(url);
      this.#probes.set(url, known);
      return known;
    }
    const result = this.#limit(() => probe(url, files)).then((probed) => {
      this.summary.files!.probed++;
      this.summary.files!.bytesRead += probed.bytesRead;
      return probed;
    });
    this.#probes.set(url, result);
    if (this.#probes.size > PROBE_CACHE) this.#probes.delete(this.#probes.keys().next().value!);
    return result;
  }

  async #fileProblems(page: LoadedPage, images: CheckedImage[]): Promise<Finding[]> {
    const files = this.#options.files!;
    const references = mediaReferences(page.json, this.#options.mediaPrefix ?? '/media/');
    const results = await Promise.all(references.map((reference) => this.#probe(reference.url, files)));
    const problems: Finding[] = [];
    const locations = new Map<string, string>();
    // Files whose header cannot be read: the file rules said so, and the picture rule says no more.
    const failed = new Set<string>();
    references.forEach((reference, i) => {
      const result = results[i]!;
      locations.set(reference.url, result.location);
      if (!result.ok) failed.add(reference.url);
      problems.push(...fileFindings(reference, result));
    });
    let alternates: AlternateReference[] = [];
    if (this.#recorded && files.kind === 'store') {
      const recorded = this.#recorded;
      alternates = (await Promise.all(images.map((image) => alternatesOf(image, recorded, files.mediaPrefix)))).flat();
      const probed = await Promise.all(alternates.map((alternate) => this.#probe(alternate.url, files)));
      alternates.forEach((alternate, i) => {
        if (!probed[i]!.ok) failed.add(alternate.url);
        const about = { alternate: { format: alternate.format, url: alternate.url } };
        problems.push(
          ...fileFindings(alternate, probed[i]!, `${alternate.format} alternate `).map((f) => ({ ...f, ...about })),
        );
      });
      problems.push(...(await Promise.all(images.map((image) => unreadableRecords(image, recorded)))).flat());
    }
    for (const image of images)
      for (const size of Object.values(image.sizes)) size.src = locations.get(size.url) ?? size.src;
    if (this.#pictures) {
      const pictures = this.#pictures;
      const { picture, version } = this.#wholeRules;
      const formats = new Map(alternates.map(({ url, format }) => [url, format]));
      const ofAlternates = async () =>
        (await pictures.alternates(alternates)).map((f) => ({
          ...f,
          alternate: { format: formats.get(f.url)!, url: f.url },
        }));
      const found: Array<PictureFinding & Pick<Finding, 'alternate'>>[] = await Promise.all([
        ...(picture ? [...images.map((image) => pictures.problems(image)), ofAlternates()] : []),
        ...(version ? [pictures.versions(references)] : []),
      ]);
      for (const { path, rule, url, message, alternate } of found.flat())
        if (!failed.has(url))
          problems.push({ severity: 'error', path, rule, message, ...(alternate && { alternate }) });
    }
    return problems;
  }
}

/**
 * A finding for each record of `image` (any format) the manifest holds but that cannot be read: its
 * files cannot be compared with the picture recorded, nor its alternates found (`file-picture`).
 */
async function unreadableRecords(image: CheckedImage, recorded: RecordedRenditions): Promise<Finding[]> {
  const url = RENDITION_KEYS.map((key) => image.sizes[key]?.url).find((each) => each !== undefined);
  if (url === undefined) return [];
  return (await recorded.unreadable(url)).map(({ key, file, reason }) => ({
    severity: 'error' as const,
    path: image.path,
    rule: 'file-picture' as const,
    message:
      `its manifest record ${file} cannot be read (${reason}): the files of ${key} are not compared with ` +
      'the picture render recorded; render records it again',
  }));
}

/**
 * `found` after the config (severities, rules off, ignored paths) and the baseline: the findings
 * that count and those the baseline holds, each counted in `summary` and recorded for
 * `--update-baseline`. `source` names the page (or record) in the baseline.
 */
export function sortFindings(
  source: string,
  found: Finding[],
  { policy, baseline, record }: Pick<CheckOptions, 'policy' | 'baseline' | 'record'>,
  summary: CheckSummary,
): { problems: Finding[]; baselined: Finding[] } {
  const problems: Finding[] = [];
  const baselined: Finding[] = [];
  const key = baseline?.checked(source);
  for (const finding of found) {
    const severity = policy ? policy.severity(finding.rule, finding.severity) : finding.severity;
    if (severity === null || policy?.ignoresPath(finding.path)) {
      summary.ignored++;
      continue;
    }
    const kept = severity === finding.severity ? finding : { ...finding, severity };
    record?.add(source, kept.rule, kept.path);
    if (key !== undefined && baseline!.take(key, kept.rule, kept.path)) {
      baselined.push(kept);
      summary.baselined++;
      continue;
    }
    problems.push(kept);
    if (kept.severity === 'error') summary.errors++;
    else summary.warnings++;
  }
  return { problems, baselined };
}

/**
 * What one probed file breaks: it cannot be read, or its real size or format is not the one the
 * JSON and its name give. `label` starts each message (`webp alternate `) for a file the JSON does
 * not name; `says` names what gives the size (`the manifest records` for a record's file).
 */
export function fileFindings(
  reference: MediaReference,
  result: ProbeResult,
  label = '',
  says = 'the JSON says',
): Finding[] {
  const at = reference.path;
  if (!result.ok)
    return [{ severity: 'error', path: at, rule: FILE_REASON_RULES[result.reason], message: label + result.message }];
  const problems: Finding[] = [];
  const { size } = reference;
  if (size && (result.width !== size.width || result.height !== size.height)) {
    const real = `${result.width}x${result.height}`;
    problems.push({
      severity: 'error',
      path: at,
      rule: 'file-size',
      message: `${label}${result.location} is ${real}, ${says} ${size.width}x${size.height}`,
    });
  }
  const extension = /\.([A-Za-z0-9]+)$/.exec(urlPath(reference.url))?.[1]?.toLowerCase() ?? '';
  const expected = EXTENSION_FORMATS[extension];
  if (expected && result.format !== expected) {
    problems.push({
      severity: 'error',
      path: at,
      rule: 'file-format',
      message: `${label}${result.location} is ${result.format}, its name says ${expected}`,
    });
  }
  return problems;
}

/** Every result and the counts (the page count is `pages.length`). */
export type CheckReport = Omit<CheckSummary, 'pages'> & { pages: CheckedPage[] };

/** Checks pages and returns every result at once: for a library caller with few pages (the CLI streams them). */
export async function checkPages(
  pages: Iterable<LoadedPage> | AsyncIterable<LoadedPage>,
  options: CheckOptions = {},
): Promise<CheckReport> {
  const run = new CheckRun(options);
  const results: CheckedPage[] = [];
  for await (const page of run.run(pages)) results.push(page);
  return { ...run.summary, pages: results };
}

function pageProblems(page: LoadedPage): Finding[] {
  if (page.fetchError !== undefined)
    return [{ severity: 'error', path: '$', rule: 'page-fetch', message: `cannot fetch: ${page.fetchError}` }];
  if (page.parseError !== undefined)
    return [{ severity: 'error', path: '$', rule: 'page-json', message: `not JSON (${page.parseError})` }];
  const problems: Finding[] = validatePage(page.json, page.baseUrl ? { baseUrl: page.baseUrl } : {}).problems;
  if (!page.baseUrl && page.text.includes(BASE_URL_PLACEHOLDER)) {
    problems.unshift({
      severity: 'error',
      path: '$',
      rule: 'base-url-placeholder',
      message:
        `the page holds ${BASE_URL_PLACEHOLDER} placeholders (a serve content folder): ` +
        'give --base-url to fill them',
    });
  }
  return problems;
}

function imagesOf(json: unknown): CheckedImage[] {
  return [...findImages(json)].map(({ path, image }) => {
    const sizes = (typeof image.sizes === 'object' && image.sizes ? image.sizes : {}) as Record<
      string,
      { width?: unknown; height?: unknown; url?: unknown }
    >;
    const entries = RENDITION_KEYS.flatMap((key) => {
      const { width, height, url } = sizes[key] ?? {};
      return typeof width === 'number' && typeof height === 'number' && typeof url === 'string'
        ? [[key, { width, height, url, src: url }] as const]
        : [];
    });
    return { path: formatPath(path), sizes: Object.fromEntries(entries) };
  });
}
