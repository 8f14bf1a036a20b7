/**
 * `check --verify-files <folder | s3://bucket/prefix/>` with no pages: the archive checked whole.
 * Every record of the manifest `render` wrote beside the renditions (`Manifest.records()`, nothing
 * else of it) has its five files held to the rules a page's files are held to: each exists and is
 * an image inside the place (`file-missing`, `file-unreadable`, `file-outside`), has the pixel size
 * its record gives (`file-size`) and the format its extension names (`file-format`), and decodes to
 * the picture recorded for it (`file-picture`, which reads each file whole) and, when that is all so,
 * is the file recorded, byte for byte (`file-version`, from the same read). Records of one stem
 * and one original (its formats: `dune.jpg`, `dune.webp`) are alternates of one another: each file
 * must also have the size the others record for its rendition.
 *
 * Records stream through. They are grouped by stem as they come (the manifest yields them in key
 * order where it can, so a stem's records arrive together; however they come, the groups held back
 * are bounded), a few groups are checked at once, and each record is handed on as it is done, as
 * one checked "page". Memory holds the groups in flight, never the archive or its findings.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { InvalidArgumentError } from '../errors.js';
import type { ManifestEntry } from '../renditions/manifest.js';
import { mediaUrl, RENDITION_KEYS, type RenditionKey } from '../renditions/rules.js';
import {
  type CheckedImage,
  type CheckedPage,
  type CheckOptions,
  type CheckSummary,
  type Finding,
  fileFindings,
  sortFindings,
} from './check.js';
import { PictureCheck } from './picture.js';
import { type FileSource, type ProbeResult, probe } from './probe.js';
import type { RecordedRendition } from './recorded.js';

/** One record of the manifest: its key (`landscapes/dune.jpg`) and entry. */
export type ArchiveRecord = [key: string, entry: ManifestEntry];

/** A folder or bucket prefix: the only places that hold a manifest. */
export type StoreSource = Extract<FileSource, { kind: 'store' }>;

export type ArchiveOptions = Pick<CheckOptions, 'concurrency' | 'policy' | 'baseline' | 'record'> & {
  files: StoreSource;
};

/** Stems held back at most while their records may still come (a bound whatever the order). */
const MAX_PENDING = 256;
/** Records of one stem checked together at most (a stem has one record per format). */
const MAX_GROUP = 64;

const stemOfKey = (key: string) => key.replace(/\.[^./]+$/, '');
const extensionOfKey = (key: string) => key.slice(key.lastIndexOf('.') + 1).toLowerCase();

/**
 * The manifest's records in the folder or bucket prefix, from the first: throws before any is
 * checked when there is no manifest (or one with no record), or it cannot be read (exit 2).
 */
export async function archiveRecords(files: StoreSource): Promise<AsyncIterable<ArchiveRecord>> {
  const { openManifest } = await import('../renditions/manifest.js');
  const manifest = await openManifest(files.store);
  const iterator = manifest.records()[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done)
    throw new InvalidArgumentError(
      `--verify-files ${files.store.location}: holds no manifest (render writes one beside the renditions), ` +
        'so there is no archive to check; give page targets to check the files pages name',
    );
  return (async function* () {
    yield first.value;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  })();
}

/** One archive check: records in, one checked page per record out, counts in `summary`. */
export class ArchiveRun {
  readonly summary: CheckSummary & { records: number };
  readonly #options: ArchiveOptions;
  readonly #limit: LimitFunction;
  readonly #pictures: PictureCheck | null;
  /** The records of the groups in flight, by the media URL of each of their files, for `file-picture`. */
  readonly #inFlight = new Map<string, RecordedRendition>();

  constructor(options: ArchiveOptions) {
    this.#options = options;
    this.#limit = pLimit(options.concurrency ?? 16);
    this.summary = {
      pages: 0,
      records: 0,
      images: 0,
      files: { probed: 0, bytesRead: 0 },
      errors: 0,
      warnings: 0,
      ignored: 0,
      baselined: 0,
    };
    const off = options.policy?.severity('file-picture', 'error') === null;
    const files = this.summary.files!;
    this.#pictures = off
      ? null
      : new PictureCheck(options.files, {
          onRead: (bytes) => {
            files.bytesRead += bytes;
          },
          recorded: { lookup: async (url) => this.#inFlight.get(url) },
        });
  }

  /** Each record checked, a few stems at a time, reported in the order its stem's group was formed. */
  async *run(records: AsyncIterable<ArchiveRecord>): AsyncGenerator<CheckedPage> {
    const { policy, files } = this.#options;
    const kept = (async function* () {
      for await (const record of records) if (!policy?.ignoresPage(files.store.describe(record[0]))) yield record;
    })();
    // Enough groups at once to keep the file reads busy (a group has five files per format).
    const inFlight = Math.max(2, Math.ceil((this.#options.concurrency ?? 16) / 5));
    const queue: Array<Promise<CheckedPage[]>> = [];
    for await (const group of byStem(kept)) {
      queue.push(this.#check(group));
      queue.at(-1)!.catch(() => {});
      if (queue.length >= inFlight) yield* await queue.shift()!;
    }
    while (queue.length > 0) yield* await queue.shift()!;
  }

  /** The records of one stem: their files, their alternates' sizes, their pictures. */
  async #check(group: ArchiveRecord[]): Promise<CheckedPage[]> {
    const { files } = this.#options;
    // Registered for `file-picture`'s lookups while the group is checked (the first record naming a file wins).
    const stem = Object.fromEntries(group);
    const mine: string[] = [];
    for (const [key, entry] of group) {
      for (const rendition of RENDITION_KEYS) {
        const url = mediaUrl(files.mediaPrefix, entry.renditions[rendition].path);
        if (this.#inFlight.has(url)) continue;
        this.#inFlight.set(url, { key, entry, rendition, stem });
        mine.push(url);
      }
    }
    try {
      // Each file probed once, however many renditions or records name it.
      const probes = new Map<string, Promise<ProbeResult>>();
      const probeOnce = (url: string) => {
        const known = probes.get(url);
        if (known) return known;
        const result = this.#limit(() => probe(url, files)).then((probed) => {
          this.summary.files!.probed++;
          this.summary.files!.bytesRead += probed.bytesRead;
          return probed;
        });
        probes.set(url, result);
        return result;
      };
      const references = referencesOf(group);
      const checked = await Promise.all(group.map((record) => this.#record(record, probeOnce, references)));
      return checked.map(({ key, image, findings }) => {
        const source = files.store.describe(key);
        this.summary.pages++;
        this.summary.records++;
        this.summary.images++;
        return { source, record: key, ...sortFindings(source, findings, this.#options, this.summary), images: [image] };
      });
    } finally {
      for (const url of mine) this.#inFlight.delete(url);
    }
  }

  /** One record's findings (before the config and the baseline), and its five files as an image for the reporters. */
  async #record(
    [key, entry]: ArchiveRecord,
    probeOnce: (url: string) => Promise<ProbeResult>,
    references: Map<string, ArchiveRecord>,
  ): Promise<{ key: string; image: CheckedImage; findings: Finding[] }> {
    const renditions = RENDITION_KEYS.map((rendition) => ({
      rendition,
      url: mediaUrl(this.#options.files.mediaPrefix, entry.renditions[rendition].path),
      path: `$.renditions.${rendition}.path`,
    }));
    const results = await Promise.all(renditions.map(({ url }) => probeOnce(url)));
    const findings: Finding[] = [];
    // Files whose header cannot be read: the file rules said so, and the picture rule says no more.
    const failed = new Set<string>();
    // The JSON path of each file: its first rendition's (a record may name one file twice).
    const pathOf = new Map<string, string>();
    renditions.forEach(({ rendition, url, path }, i) => {
      const result = results[i]!;
      if (!result.ok) failed.add(url);
      if (pathOf.has(url)) return;
      pathOf.set(url, path);
      const { width, height } = entry.renditions[rendition];
      const own = fileFindings({ path, url, size: { width, height } }, result, '', 'the manifest records');
      findings.push(...own, ...againstAlternate(key, rendition, path, result, own, references));
    });
    const sizes = renditions.map(({ rendition, url }, i) => {
      const { width, height } = entry.renditions[rendition];
      return [rendition, { width, height, url, src: results[i]!.location }] as const;
    });
    const image: CheckedImage = { path: '$.renditions', sizes: Object.fromEntries(sizes) };
    if (this.#pictures) {
      for (const { rule, url, message } of await this.#pictures.problems(image))
        if (!failed.has(url)) findings.push({ severity: 'error', path: pathOf.get(url)!, rule, message });
      // A file that passed every rule above but is not the bytes recorded (encoded again, or another
      // file of the same picture put in its place): the versions in published URLs are no longer its own.
      const flagged = new Set(findings.map((finding) => finding.path));
      const recorded = renditions.flatMap(({ rendition, url, path }) => {
        const { version } = entry.renditions[rendition];
        const once = pathOf.get(url) === path && !failed.has(url) && !flagged.has(path);
        return version !== undefined && once ? [{ path, url, version }] : [];
      });
      for (const { rule, path, message } of await this.#pictures.versions(recorded))
        findings.push({ severity: 'error', path, rule, message });
    }
    return { key, image, findings };
  }
}

/**
 * For each record that has alternates (other records of its stem rendered from the same original),
 * the record whose sizes it must share: the one whose sizes most of them record, the first by key
 * when no sizes have a majority. A record without alternates is its own.
 */
function referencesOf(group: ArchiveRecord[]): Map<string, ArchiveRecord> {
  const sizes = ([, entry]: ArchiveRecord) =>
    RENDITION_KEYS.map((k) => `${entry.renditions[k].width}x${entry.renditions[k].height}`).join(' ');
  const byOriginal = new Map<string, ArchiveRecord[]>();
  for (const record of group) {
    const same = byOriginal.get(record[1].source) ?? [];
    same.push(record);
    byOriginal.set(record[1].source, same);
  }
  const references = new Map<string, ArchiveRecord>();
  for (const same of byOriginal.values()) {
    const sorted = [...same].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const count = (record: ArchiveRecord) => sorted.filter((other) => sizes(other) === sizes(record)).length;
    let reference = sorted[0]!;
    for (const candidate of sorted) if (count(candidate) > count(reference)) reference = candidate;
    for (const [key] of same) references.set(key, reference);
  }
  return references;
}

/**
 * A file whose record's size is right for it but not the one its alternate records for that
 * rendition: one finding, only when its own size is right (each wrong size is reported once).
 */
function againstAlternate(
  key: string,
  rendition: RenditionKey,
  path: string,
  result: ProbeResult,
  own: Finding[],
  references: Map<string, ArchiveRecord>,
): Finding[] {
  const reference = references.get(key);
  if (!result.ok || own.some((f) => f.rule === 'file-size') || !reference || reference[0] === key) return [];
  const { width, height } = reference[1].renditions[rendition];
  if (result.width === width && result.height === height) return [];
  const format = extensionOfKey(reference[0]);
  return [
    {
      severity: 'error',
      path,
      rule: 'file-size',
      message:
        `${result.location} is ${result.width}x${result.height}, its ${format} alternate ` +
        `${reference[0]} records ${width}x${height}`,
    },
  ];
}

/**
 * Records grouped by stem, each group once all of its records have come: in key order a stem's
 * keys (`dune.avif` ... `dune.webp`) all start with `dune.`, so once a key past them comes, the
 * group is complete. However the records come, at most `MAX_PENDING` groups are held back (the
 * oldest is checked as it is), so memory stays bounded; out of order, a stem's records may be
 * checked in two groups, and only the sizes of its alternates go unchecked between them.
 */
export async function* byStem(records: AsyncIterable<ArchiveRecord>): AsyncGenerator<ArchiveRecord[]> {
  const pending = new Map<string, ArchiveRecord[]>();
  for await (const record of records) {
    const [key] = record;
    for (const [stem, group] of pending) {
      const prefix = `${stem}.`;
      if (key > prefix && !key.startsWith(prefix)) {
        pending.delete(stem);
        yield group;
      }
    }
    const stem = stemOfKey(key);
    const group = pending.get(stem);
    if (group && group.length < MAX_GROUP) group.push(record);
    else {
      if (group) yield group;
      pending.delete(stem);
      pending.set(stem, [record]);
    }
    if (pending.size > MAX_PENDING) {
      const [oldest, held] = pending.entries().next().value!;
      pending.delete(oldest);
      yield held;
    }
  }
  yield* pending.values();
}
