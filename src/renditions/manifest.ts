/**
 * The manifest beside the renditions: for each image (its key, `<folders>/<name>.<ext>`), the
 * original's content hash, the settings it was rendered with and the files written, so an
 * unchanged original is skipped next time.
 *
 * One small record per key, `.content-api-manifest/<key>.json`, in a folder and in a bucket
 * alike: reading, checking or updating one original reads or writes its own record and no other,
 * whatever the size of the archive, and nothing of the whole archive is held at once. A record is
 * written whole (a temporary name renamed over it, or one PUT) as soon as its original's files
 * are in place: a killed run loses nothing it finished, and runs or machines writing into one
 * place at once never overwrite each other's records. The one-file manifest of earlier versions
 * (`.content-api-manifest.json`) is migrated to records on the first run that writes.
 */
import { type Dirent, statSync } from 'node:fs';
import { readdir, rename } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { ManifestError, oneLine, STORE_WIDE, StorageError } from '../errors.js';
import { withLock } from '../fs/lock.js';
import { readFileWithin, readSmallFileSync, readStreamWithin } from '../fs/read-within.js';
import { parseJsonAs } from '../json.js';
import { LocalStore } from '../storage/local.js';
import { isKey, type MediaStore } from '../storage/store.js';
import { FILE_EXTENSIONS } from './formats.js';
import { INDEX_FILE, type RecordStat, RecordsIndex } from './records-index.js';
import {
  isStem,
  PLACEHOLDER_COLOR,
  PLACEHOLDER_PREVIEW,
  PREVIEW_MAX_CHARS,
  parseRenditionFileName,
  RENDITION_KEYS,
  type RenditionKey,
} from './rules.js';

/** The one-file manifest of earlier versions, migrated to records (`MANIFEST_RECORDS`). */
export const MANIFEST_FILE = '.content-api-manifest.json';
/** What the one-file manifest is renamed to once migrated (kept: an older content-api reads nothing else). */
export const MIGRATED_MANIFEST_FILE = '.content-api-manifest.migrated.json';
/**
 * What a one-file manifest that is not one is renamed to by the first run that writes (its originals
 * are rendered again).
 */
export const INVALID_MANIFEST_FILE = '.content-api-manifest.invalid.json';
/** The folder of per-key records, in a folder and in a bucket. */
export const MANIFEST_RECORDS = '.content-api-manifest/';
const MANIFEST_VERSION = 1;
const pixelSize = { width: z.number().int().positive(), height: z.number().int().positive() };
/** A file a record names: a path below the output folder, never one out of it (`../x`, `/etc/x`). */
const recordedFile = z.string().refine(isKey, 'expected a path below the output folder');

const renditionRecord = z.object({
  path: recordedFile,
  ...pixelSize,
  bytes: z.number().int().nonnegative(),
  /** With `--quality auto`: the encoder quality chosen, its SSIMULACRA2 score, and what was scored. */
  quality: z.number().int().optional(),
  score: z.number().optional(),
  scored: z.enum(['rendition', 'tiles']).optional(),
  /** What it shows (src/picture/), for `check`'s same-picture rule; absent in older manifests. */
  fingerprint: z.string().optional(),
  /** The file's version, its URL's `?v=` (rules.ts `renditionVersion`); absent in older manifests. */
  version: z
    .string()
    .regex(/^[0-9a-f]{8}$/)
    .optional(),
});

/**
 * What `stat` (a file) or the bucket listing (an object) said of the original when it was
 * hashed: while all of it holds, the hash does.
 */
const stampSchema = z.union([
  z
    .object({ size: z.number().int().nonnegative(), mtimeMs: z.number(), ctimeMs: z.number(), ino: z.number() })
    .strict(),
  z.object({ size: z.number().int().nonnegative(), etag: z.string().min(1), lastModifiedMs: z.number() }).strict(),
]);

const entrySchema = z.object({
  /**
   * The original: in memory its absolute path (or the URL of a downloaded rendition); in
   * the file, a path relative to the output folder, so the folder can move with its originals.
   */
  source: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The original file's stamp when hashed (absent for bytes downloaded, and in older manifests). */
  stamp: stampSchema.optional(),
  /** Everything that changes the files' bytes; see `settingsKey`. */
  settings: z.string(),
  original: z.object(pixelSize),
  /**
   * What the original's header said besides its size (absent in older manifests): while the
   * stamp holds, an object in a bucket is planned from it without a read.
   */
  info: z
    .object({
      format: z.string(),
      compression: z.string().optional(),
      hasAlpha: z.boolean(),
      pages: z.number().int().positive(),
    })
    .optional(),
  /**
   * What a page shows while a rendition loads (placeholder.ts); absent in older manifests. A record
   * holding another value is not one: named, and its original rendered again.
   */
  placeholder: z
    .object({
      color: z.string().regex(PLACEHOLDER_COLOR),
      preview: z.string().max(PREVIEW_MAX_CHARS).regex(PLACEHOLDER_PREVIEW),
      /** Absent in records from before it: then known opaque unless the original has alpha. */
      transparent: z.boolean().optional(),
    })
    .optional(),
  /**
   * Files an earlier rendering under this key wrote (another naming) that its renditions no longer
   * are, kept because nothing is removed without `--prune`: named here so a later prune finds them.
   */
  kept: z.array(recordedFile).optional(),
  renditions: z.object(
    Object.fromEntries(RENDITION_KEYS.map((k) => [k, renditionRecord])) as Record<
      (typeof RENDITION_KEYS)[number],
      typeof renditionRecord
    >,
  ),
});

export type ManifestEntry = z.infer<typeof entrySchema>;
type Entries = Record<string, ManifestEntry>;

/**
 * What a rerun needs of a record to find its original up to date with nothing to write: the original
 * and its stamp, the settings, each file's path, size and version, whether a placeholder is recorded
 * (and its `transparent`). A record is one too (`ManifestEntry` has every field of it).
 */
export type RecordSummary = Pick<
  ManifestEntry,
  'source' | 'sha256' | 'stamp' | 'settings' | 'original' | 'info' | 'kept'
> & {
  placeholder?: { transparent?: boolean | undefined } | undefined;
  renditions: Record<RenditionKey, { path: string; bytes: number; version?: string | undefined }>;
};

const count = z.number().int().nonnegative();
/** A record's placeholder as its summary line says it: none, without `transparent`, or with it. */
const PLACEHOLDER_STATES = ['none', 'unsaid', 'opaque', 'transparent'] as const;

/**
 * A summary as its line in a records folder's index holds it (records-index.ts): one flat tuple of a
 * few hundred bytes, parsed and checked in microseconds, where the record is kilobytes of objects.
 * The original's stamp when it is a file's (an original in a bucket is never planned from an index),
 * its header, its placeholder's state, then each rendition's path, size and version, xs to xl.
 */
const summaryItems: z.ZodType[] = [
  z.string(),
  entrySchema.shape.sha256,
  z.string(),
  pixelSize.width,
  pixelSize.height,
  ...[count, z.number(), z.number(), count].map((each) => each.nullable()),
  z.string().nullable(),
  z.string().nullable(),
  z.boolean().nullable(),
  z.number().int().positive().nullable(),
  z.enum(PLACEHOLDER_STATES),
  z.array(z.string()).nullable(),
  ...RENDITION_KEYS.flatMap(() => [z.string(), count, z.string().nullable()]),
];
const summaryLine = z.tuple(summaryItems as [z.ZodType, ...z.ZodType[]]) as unknown as z.ZodType<SummaryLine>;
type SummaryLine = [
  source: string,
  sha256: string,
  settings: string,
  width: number,
  height: number,
  ...stamp: [number, number, number, number] | [null, null, null, null],
  format: string | null,
  compression: string | null,
  hasAlpha: boolean | null,
  pages: number | null,
  placeholder: (typeof PLACEHOLDER_STATES)[number],
  kept: string[] | null,
  ...renditions: Array<string | number | null>,
];
/** Where the renditions begin in a summary line. */
const RENDITIONS_AT = 15;

/** A record's summary line, its source as the file has it (relative to the output folder). */
function lineOf(entry: ManifestEntry): SummaryLine {
  const { source, sha256, stamp, settings, original, info, kept, placeholder, renditions } = entry;
  const transparent = placeholder?.transparent;
  const file = stamp && 'ino' in stamp ? stamp : undefined;
  return [
    source,
    sha256,
    settings,
    original.width,
    original.height,
    ...(file ? ([file.size, file.mtimeMs, file.ctimeMs, file.ino] as const) : ([null, null, null, null] as const)),
    info?.format ?? null,
    info?.compression ?? null,
    info?.hasAlpha ?? null,
    info?.pages ?? null,
    !placeholder ? 'none' : transparent === undefined ? 'unsaid' : transparent ? 'transparent' : 'opaque',
    kept ?? null,
    ...RENDITION_KEYS.flatMap((key) => [renditions[key].path, renditions[key].bytes, renditions[key].version ?? null]),
  ];
}

/** The summary a line holds, its source resolved against the output folder `root`. */
function summaryFrom(line: SummaryLine, root: string): RecordSummary {
  const [source, sha256, settings, width, height, size, mtimeMs, ctimeMs, ino] = line;
  const [format, compression, hasAlpha, pages, placeholder, kept] = line.slice(9) as [
    string | null,
    string | null,
    boolean | null,
    number | null,
    (typeof PLACEHOLDER_STATES)[number],
    string[] | null,
  ];
  const renditions = {} as RecordSummary['renditions'];
  for (const [index, key] of RENDITION_KEYS.entries()) {
    const at = RENDITIONS_AT + 3 * index;
    const [path, bytes, version] = line.slice(at, at + 3) as [string, number, string | null];
    renditions[key] = version === null ? { path, bytes } : { path, bytes, version };
  }
  return {
    source: fromStored(root, source),
    sha256,
    ...(size !== null && { stamp: { size, mtimeMs: mtimeMs!, ctimeMs: ctimeMs!, ino: ino! } }),
    settings,
    original: { width, height },
    ...(format !== null &&
      hasAlpha !== null &&
      pages !== null && { info: { format, ...(compression !== null && { compression }), hasAlpha, pages } }),
    ...(placeholder !== 'none' && {
      placeholder: placeholder === 'unsaid' ? {} : { transparent: placeholder === 'transparent' },
    }),
    ...(kept && { kept }),
    renditions,
  };
}

/** The largest one-file manifest migrated (about a million entries): V8's longest string is about 512 MiB. */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;
/** The largest record read: one is about 2 KB. */
const MAX_RECORD_BYTES = 1024 * 1024;

/** A URL (a downloaded rendition) is kept as it is; an absolute path becomes one relative to the output folder. */
const isUrl = (source: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(source);
const toStored = (outDir: string, source: string) =>
  isUrl(source) || !path.isAbsolute(source) ? source : path.relative(outDir, source);
/** The other way; an absolute path (manifests written before relative paths) is kept. */
const fromStored = (outDir: string, source: string) =>
  isUrl(source) || path.isAbsolute(source) ? source : path.resolve(outDir, source);

/** True when every file the entry records is still there with its recorded byte size. */
export async function isIntact(store: MediaStore, entry: Pick<RecordSummary, 'renditions'>): Promise<boolean> {
  for (const rendition of Object.values(entry.renditions)) {
    const found = await store.stat(rendition.path).catch(() => null);
    if (found?.size !== rendition.bytes) return false;
  }
  return true;
}

/** The manifest of one output store, as a run uses it. */
export interface Manifest {
  /** Records that could not be read (their originals are rendered again), in one line; none when all could. */
  readonly warning?: string | undefined;
  /**
   * The entries of images with these stems (`landscapes/dune`), under any key (`.jpg`, `.webp`...);
   * a record that cannot be read is left out, said in `warning` and told to `onUnreadable`.
   */
  entriesFor(stems: string[], onUnreadable?: (record: UnreadableRecord) => void): Promise<Entries>;
  /** The entry recorded under `key` now (read again, never remembered). */
  entry(key: string): Promise<ManifestEntry | undefined>;
  /**
   * Every record, one at a time, in key order: nothing of the whole archive is held at once. A record
   * (or a one-file manifest) that cannot be read or is not one throws `ManifestError` naming it,
   * where `entriesFor` warns: a reader of the whole archive must never take it for empty.
   */
  records(): AsyncIterable<[key: string, entry: ManifestEntry]>;
  /**
   * Throws `ManifestError` when the folder's one-file manifest is not one: what it recorded is lost,
   * which a reader that must not take it for empty (`check`) says instead of going on.
   */
  assertReadable(): void;
  /** Records `entry` under `key`, once the files it names are written; throws when it cannot. */
  set(key: string, entry: ManifestEntry): Promise<void>;
  delete(key: string): Promise<void>;
  /** A new batch begins: what a bucket's listing said may have changed since (another machine). */
  refresh(): void;
  /**
   * The summaries of the records of images with these stems, by stem, where a records folder's index
   * (records-index.ts) sums up every record the stem has, each unchanged since (a stat each, no read);
   * a stem missing here has its records read (`entriesFor`). None in a bucket, or a manifest opened
   * without `index`.
   */
  summariesFor(stems: string[]): Promise<Map<string, Record<string, RecordSummary>>>;
  /**
   * The batch is through with every records folder the stem `next` is not in (all, without one): the
   * index of each it learned records of is written, and its listing and index forgotten.
   */
  settle(next?: string): Promise<void>;
}

/** A record that cannot be read: its key, the file or object, and why. */
export interface UnreadableRecord {
  key: string;
  file: string;
  reason: string;
}

export interface OpenManifestOptions {
  /** Migrate a one-file manifest to records now (a run that writes); else it is read as it is. */
  migrate?: boolean;
  /** Use and keep the records folders' indexes (records-index.ts: a local folder, a run that writes). */
  index?: boolean;
}

/** The stem of a key: `landscapes/dune.jpg` -> `landscapes/dune`. */
export const stemOfKey = (key: string) => key.replace(/\.[^./]+$/, '');

/** Every extension a key can end in: an image's records looked up by name are looked up under these. */
const KEY_EXTENSIONS = [...new Set(Object.values(FILE_EXTENSIONS))];

/** The manifest of `store`: records, with a one-file manifest of an earlier version migrated or read. */
export async function openManifest(store: MediaStore, options: OpenManifestOptions = {}): Promise<Manifest> {
  const manifest = new RecordManifest(store, options.index ?? false);
  if (store instanceof LocalStore) await manifest.adopt(options.migrate ?? false);
  return manifest;
}

/**
 * Records, one object or file per key: written (whole) only after its renditions, removed when
 * the original's files are. A render lists each records folder once a batch (a folder's names, a
 * bucket's objects), a `check` of a few images in a folder looks their records up by name, and
 * only the records found are read: in a folder synchronously, microseconds each; in a bucket,
 * where each request is a round trip, a bounded number at once.
 */
class RecordManifest implements Manifest {
  readonly #store: MediaStore;
  readonly #local: LocalStore | null;
  readonly #limit = pLimit(16);
  /** The first record this batch could not read, and how many there were (however many, one line). */
  #problem: { first: string; count: number; files: Set<string> } | undefined;
  /** Record keys, by records folder, as listed this batch (the latest, up to `LISTED_KEYS_KEPT` keys). */
  readonly #listed = new Map<string, Promise<Set<string>>>();
  /** How many keys each listing in `#listed` holds, once listed. */
  readonly #listedSizes = new Map<string, number>();
  /** A one-file manifest not migrated (a dry run, a check): read as it is, under the records, by stem. */
  #legacy: Map<string, Entries> | undefined;
  /** A one-file manifest that is not one: `records()` cannot say what the folder holds. */
  #invalidLegacy: { file: string; reason: string } | undefined;

  /** A folder's absolute path (records name originals relative to it). */
  readonly #root: string;
  /** The records folders' indexes, in a local folder a run writes. */
  readonly #index: RecordsIndex<SummaryLine> | null;

  constructor(store: MediaStore, index: boolean) {
    this.#store = store;
    this.#local = store instanceof LocalStore ? store : null;
    this.#root = path.resolve(store.location);
    this.#index = this.#local && index ? new RecordsIndex(summaryLine, path.join(this.#root, MANIFEST_RECORDS)) : null;
  }

  /** The records that could not be read, in one line. */
  get warning(): string | undefined {
    if (!this.#problem) return undefined;
    const { first, count } = this.#problem;
    return `${first}${count > 1 ? ` (and ${count - 1} more record(s) like it)` : ''}`;
  }

  /** Counts `problem` once per file it is about, however often the file is read (a claim reads it again). */
  #warn(problem: string, file: string): void {
    if (this.#problem?.files.has(file)) return;
    if (this.#problem) {
      this.#problem.count++;
      this.#problem.files.add(file);
    } else this.#problem = { first: problem, count: 1, files: new Set([file]) };
  }

  refresh(): void {
    this.#listed.clear();
    this.#listedSizes.clear();
    this.#problem = undefined; // the warning is about this batch's records: a worker renders job after job
  }

  async entriesFor(stemList: string[], onUnreadable?: (record: UnreadableRecord) => void): Promise<Entries> {
    const entries: Entries = {};
    const keys = await this.#keysOf(stemList);
    const take = (key: string, loaded: Loaded) => {
      if (loaded.problem) onUnreadable?.({ key, ...loaded.problem });
      const entry = this.#said(loaded);
      if (entry) entries[key] = entry;
    };
    if (this.#local) {
      // Read in turn, without a promise each: microseconds a record.
      for (const key of keys) take(key, this.#loadFile(key));
    } else {
      await Promise.all(keys.map((key) => this.#limit(async () => take(key, await this.#load(key)))));
    }
    for (const stem of this.#legacy ? stemList : []) {
      for (const [key, entry] of Object.entries(this.#legacy!.get(stem) ?? {})) entries[key] ??= entry;
    }
    return entries;
  }

  async summariesFor(stems: string[]): Promise<Map<string, Record<string, RecordSummary>>> {
    const found = new Map<string, Record<string, RecordSummary>>();
    const index = this.#index;
    if (!index || this.#legacy) return found;
    const byStem = new Map<string, Record<string, RecordSummary> | null>();
    for (const key of await this.#keysOf(stems)) {
      const stem = stemOfKey(key);
      let summaries = byStem.get(stem);
      if (summaries === null) continue;
      const { folder, name } = recordOf(key);
      const line = index.summary(folder, name);
      if (!line) {
        byStem.set(stem, null);
        continue;
      }
      if (!summaries) {
        summaries = {};
        byStem.set(stem, summaries);
      }
      summaries[key] = summaryFrom(line, this.#root);
    }
    for (const stem of stems) {
      const summaries = byStem.get(stem);
      if (summaries !== null) found.set(stem, summaries ?? {});
    }
    return found;
  }

  async settle(next?: string): Promise<void> {
    const done = (folder: string) => next === undefined || !next.startsWith(folder);
    // Its listing too: a batch in stem order never comes back to a folder it is through with.
    for (const folder of this.#listed.keys()) {
      if (!done(folder)) continue;
      this.#listed.delete(folder);
      this.#listedSizes.delete(folder);
    }
    await this.#index?.flush(done, (folder, bytes) =>
      this.#store.put(`${MANIFEST_RECORDS}${folder}${INDEX_FILE}`, bytes).catch(() => {}),
    );
  }

  async entry(key: string): Promise<ManifestEntry | undefined> {
    return (await this.#read(key)) ?? this.#legacy?.get(stemOfKey(key))?.[key];
  }

  assertReadable(): void {
    if (this.#invalidLegacy) throw new ManifestError(this.#invalidLegacy.file, this.#invalidLegacy.reason);
  }

  async *records(): AsyncIterable<[string, ManifestEntry]> {
    this.assertReadable();
    const seen = this.#legacy ? new Set<string>() : null;
    // Read ahead, a bounded number at once (a bucket's records are a round trip each), yielded in order.
    const queue: Array<Promise<[string, Loaded]>> = [];
    const next = async function* (this: RecordManifest, all: boolean) {
      while (queue.length > (all ? 0 : RECORDS_IN_FLIGHT - 1)) {
        const [key, loaded] = await queue.shift()!;
        if (loaded.problem) throw new ManifestError(loaded.problem.file, loaded.problem.reason);
        seen?.add(key);
        if (loaded.entry) yield [key, loaded.entry] as [string, ManifestEntry];
      }
    }.bind(this);
    const names = this.#local ? localRecordNames(path.join(this.#root, MANIFEST_RECORDS)) : this.#recordNames();
    for await (const name of names) {
      if (!name.endsWith('.json')) continue;
      const key = name.slice(0, -'.json'.length);
      const loading = this.#limit(async () => [key, await this.#load(key)] as [string, Loaded]);
      loading.catch(() => {}); // a rejection waiting its turn is not unhandled
      queue.push(loading);
      yield* next(false);
    }
    yield* next(true);
    if (this.#legacy && seen) {
      const legacy = [...this.#legacy.values()].flatMap((entries) => Object.entries(entries));
      for (const [key, entry] of legacy.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        if (!seen.has(key)) yield [key, entry];
    }
  }

  async set(key: string, entry: ManifestEntry): Promise<void> {
    const stored = this.#local ? { ...entry, source: toStored(this.#root, entry.source) } : entry;
    // Compact: a rerun parses every record (`jq . <record>` shows one indented).
    const record = Buffer.from(`${JSON.stringify({ version: MANIFEST_VERSION, entry: stored })}\n`);
    const { folder, name } = recordOf(key);
    this.#index?.unlearn(folder, name);
    await this.#store.put(`${MANIFEST_RECORDS}${key}.json`, record, { contentType: 'application/json' });
    if (this.#index) {
      // Read back, for its stat: the index learns it only as the file that holds these bytes.
      const back = readSmallFileSync(this.#local!.localPath(`${MANIFEST_RECORDS}${key}.json`), record.length, '');
      if (back.ok && back.info && back.bytes.equals(record)) this.#index.learn(folder, name, back.info, lineOf(stored));
    }
  }

  async delete(key: string): Promise<void> {
    const { folder, name } = recordOf(key);
    this.#index?.unlearn(folder, name);
    await this.#store.remove(`${MANIFEST_RECORDS}${key}.json`);
    delete this.#legacy?.get(stemOfKey(key))?.[key];
  }

  /**
   * A folder's one-file manifest, if it has one: migrated to records (`migrate`: a record already
   * there is newer and kept), then renamed to `MIGRATED_MANIFEST_FILE`; else read, to be looked up
   * under the records. One that is not a manifest is reported and left where it is; one that cannot
   * be read (a FIFO, a device) stops the run, as it always has.
   */
  async adopt(migrate: boolean): Promise<void> {
    const root = this.#root;
    const file = path.join(root, MANIFEST_FILE);
    const run = async () => {
      const read = await readFileWithin(file, MAX_MANIFEST_BYTES, 'the cap on a manifest');
      if (!read.ok) {
        if (read.missing) return;
        throw new ManifestError(file, read.reason);
      }
      const parsed = parseJsonAs(legacySchema, read.bytes);
      if (!parsed.ok) {
        this.#invalidLegacy = { file, reason: `not a valid manifest (${parsed.problems[0]})` };
        // Set aside by a run that writes, so it is said once; its originals are rendered again.
        const aside = migrate ? ` (kept as ${INVALID_MANIFEST_FILE})` : '';
        if (migrate) await rename(file, path.join(root, INVALID_MANIFEST_FILE));
        this.#warn(`${file}: not a valid manifest${aside}; every original it recorded will be rendered again`, file);
        return;
      }
      const entries = parsed.data.entries;
      for (const entry of Object.values(entries)) entry.source = fromStored(root, entry.source);
      if (!migrate) {
        this.#legacy = new Map();
        for (const [key, entry] of Object.entries(entries)) {
          const stem = stemOfKey(key);
          this.#legacy.set(stem, { ...this.#legacy.get(stem), [key]: entry });
        }
        return;
      }
      await Promise.all(
        Object.entries(entries).map(([key, entry]) =>
          this.#limit(async () => {
            if (!(await this.#read(key))) await this.set(key, entry);
          }),
        ),
      );
      await rename(file, path.join(root, MIGRATED_MANIFEST_FILE));
    };
    try {
      await (migrate ? withLock(`${file}.lock`, run) : run());
    } catch (error) {
      if (error instanceof ManifestError) throw error;
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new ManifestError(file, `cannot migrate to ${MANIFEST_RECORDS} (${reason})`, { cause: error });
    }
  }

  /** The names of a bucket's records, below MANIFEST_RECORDS, in key order. */
  async *#recordNames(): AsyncIterable<string> {
    for await (const found of this.#store.list(MANIFEST_RECORDS)) yield found.key.slice(MANIFEST_RECORDS.length);
  }

  /**
   * The keys with these stems that have records. Where a batch asks for many stems of one records
   * folder (a render's chunk), or in a bucket (where each request is a round trip), from a listing
   * of the folder, kept while the batch goes on; else (a `check` asking for one image, from any
   * folder) by name, a stat for each of the extensions a key can end in.
   */
  async #keysOf(stemList: string[]): Promise<string[]> {
    const byFolder = new Map<string, string[]>();
    for (const stem of stemList) {
      const folder = stem.slice(0, stem.lastIndexOf('/') + 1);
      const stems = byFolder.get(folder);
      if (stems) stems.push(stem);
      else byFolder.set(folder, [stem]);
    }
    const keys: string[] = [];
    for (const [folder, stems] of byFolder) {
      // By name, too, for a folder that is not one render makes (safe names): the lookup refuses `..`.
      const byName = stems.length < LISTED_FROM || (folder !== '' && !isStem(folder.slice(0, -1)));
      if (this.#local && byName && !this.#listed.has(folder)) {
        for (const stem of stems) {
          for (const ext of KEY_EXTENSIONS) {
            const key = `${stem}.${ext}`;
            if (existsWithoutThrowing(this.#local.localPath(`${MANIFEST_RECORDS}${key}.json`))) keys.push(key);
          }
        }
        continue;
      }
      let listed = this.#listed.get(folder);
      if (!listed) {
        listed = this.#listFolder(folder).then((found) => {
          this.#listedSizes.set(folder, found.size);
          this.#forgetListings(folder);
          return found;
        });
        this.#listed.set(folder, listed);
      }
      const wanted = new Set(stems);
      for (const key of await listed) if (wanted.has(stemOfKey(key))) keys.push(key);
    }
    return keys;
  }

  /**
   * The oldest listings but `kept`'s, while they hold more than `LISTED_KEYS_KEPT` keys: chunks come
   * by stem, so a render lists each folder once, and memory stays bounded whatever the archive.
   */
  #forgetListings(kept: string): void {
    let held = [...this.#listedSizes.values()].reduce((sum, size) => sum + size, 0);
    for (const [folder, size] of this.#listedSizes) {
      if (held <= LISTED_KEYS_KEPT) break;
      if (folder === kept) continue;
      this.#listed.delete(folder);
      this.#listedSizes.delete(folder);
      held -= size;
    }
  }

  /** The keys recorded in one records folder (`landscapes/`, or `` for the top). */
  async #listFolder(folder: string): Promise<Set<string>> {
    const found = new Set<string>();
    if (this.#local) {
      const local = path.join(this.#root, MANIFEST_RECORDS, folder); // safe names (`#keysOf`)
      const names = await readdir(local).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') {
          this.#warn(
            `${local}: cannot list (${error.code ?? error.message}); its originals will be rendered again`,
            local,
          );
        }
        return [];
      });
      for (const name of names) if (name.endsWith('.json')) found.add(folder + name.slice(0, -'.json'.length));
      return found;
    }
    for await (const object of this.#store.list(MANIFEST_RECORDS + folder, { shallow: true })) {
      if (object.key.endsWith('.json')) found.add(object.key.slice(MANIFEST_RECORDS.length, -'.json'.length));
    }
    return found;
  }

  /** The record under `key`; none when there is none, or it cannot be read (said in `warning`). */
  async #read(key: string): Promise<ManifestEntry | undefined> {
    return this.#said(await this.#load(key));
  }

  /** A record's entry, or none, what could not be read said in `warning`. */
  #said({ entry, problem }: Loaded): ManifestEntry | undefined {
    if (problem) this.#warn(`${problem.file}: ${problem.reason}; its original will be rendered again`, problem.file);
    return entry;
  }

  /** The record under `key`: its entry, nothing when there is none, or why it cannot be read. */
  async #load(key: string): Promise<Loaded> {
    return this.#local ? this.#loadFile(key) : this.#loadObject(key);
  }

  /** A folder's record, read synchronously: a few microseconds, for every original of a rerun. */
  #loadFile(key: string): Loaded {
    const name = `${MANIFEST_RECORDS}${key}.json`;
    const read = readSmallFileSync(this.#local!.localPath(name), MAX_RECORD_BYTES, 'the cap on a manifest record');
    if (!read.ok) return read.missing ? {} : { problem: { file: this.#store.describe(name), reason: read.reason } };
    const loaded = this.#parse(name, read.bytes);
    if (loaded.entry && this.#index) this.#learn(key, read.info!, loaded.entry);
    return loaded;
  }

  /** A record read as `info`: its folder's index learns it (its source as the file has it). */
  #learn(key: string, info: RecordStat, entry: ManifestEntry): void {
    const { folder, name } = recordOf(key);
    this.#index!.learn(folder, name, info, lineOf({ ...entry, source: toStored(this.#root, entry.source) }));
  }

  async #loadObject(key: string): Promise<Loaded> {
    const name = `${MANIFEST_RECORDS}${key}.json`;
    const file = this.#store.describe(name);
    try {
      const read = await readStreamWithin((await this.#store.read(name)).body, MAX_RECORD_BYTES);
      if (read.ok) return this.#parse(name, read.bytes);
      const reason = read.tooLarge
        ? `larger than ${MAX_RECORD_BYTES} bytes, the cap on a manifest record`
        : read.reason;
      return { problem: { file, reason } };
    } catch (error) {
      // Removed since it was listed (another machine changed that image): no record. A bucket gone
      // as a whole fails the run.
      if (error instanceof StorageError && STORE_WIDE.has(error.kind)) throw error;
      if (error instanceof StorageError && error.kind === 'missing') return {};
      return { problem: { file, reason: `cannot read (${oneLine(error).replace(`${file}: `, '')})` } };
    }
  }

  #parse(name: string, bytes: Buffer): Loaded {
    const parsed = parseJsonAs(recordSchema, bytes);
    if (!parsed.ok) {
      const reason = `not a valid manifest record (${parsed.problems[0]})`;
      return { problem: { file: this.#store.describe(name), reason } };
    }
    const { entry } = parsed.data;
    const key = name.slice(MANIFEST_RECORDS.length, -'.json'.length);
    const foreign = foreignFile(key, entry);
    if (foreign) {
      const reason = `not a valid manifest record (${foreign})`;
      return { problem: { file: this.#store.describe(name), reason } };
    }
    if (this.#local) entry.source = fromStored(this.#root, entry.source);
    return { entry };
  }
}

/** Where a key's record is: its records folder (`landscapes/`, or `` for the top) and its name there. */
function recordOf(key: string): { folder: string; name: string } {
  const slash = key.lastIndexOf('/') + 1;
  return { folder: key.slice(0, slash), name: `${key.slice(slash)}.json` };
}

/**
 * The first file a record names that is not a rendition of its key's stem (`photos/dune.jpg` names
 * `photos/dune.max-300x300.jpg` or `photos/dune_300x300.jpg`, in any format), in words; null when
 * there is none. Such a record is someone else's: `--prune` removes what it names, and another
 * image's files, the records beside it or a page of the site must never be among them.
 */
function foreignFile(key: string, entry: ManifestEntry): string | null {
  const stem = stemOfKey(key);
  const ours = (file: string) => {
    const parsed = parseRenditionFileName(file);
    return parsed !== null && `${file.slice(0, file.lastIndexOf('/') + 1)}${parsed.name}` === stem;
  };
  for (const [rendition, { path: file }] of Object.entries(entry.renditions))
    if (!ours(file)) return `$.entry.renditions.${rendition}.path: '${file}' is not a rendition of ${stem}`;
  for (const [index, file] of (entry.kept ?? []).entries())
    if (!ours(file)) return `$.entry.kept[${index}]: '${file}' is not a rendition of ${stem}`;
  return null;
}

/** A record read: its entry, nothing (no record), or why it cannot be read. */
interface Loaded {
  entry?: ManifestEntry;
  problem?: { file: string; reason: string };
}

/** Keys of records folders' listings a batch keeps (about 100 bytes each; see `#keysOf`). */
const LISTED_KEYS_KEPT = 100_000;
/** Stems of one records folder from which a local folder is listed rather than looked up by name. */
const LISTED_FROM = 16;

/** Records read ahead of the one `records()` yields next. */
const RECORDS_IN_FLIGHT = 16;

/**
 * The names below a folder's records folder, in key order: every entry that is not a folder, so that
 * one that is not a regular file (a FIFO, a link to a device) is read, and named, not passed over.
 * Folders are not followed through symlinks: the walk stays in the tree.
 */
async function* localRecordNames(root: string, below = ''): AsyncIterable<string> {
  const entries = await readdir(path.join(root, below), { withFileTypes: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (below === '' && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) return [];
      throw new ManifestError(path.join(root, below), `cannot list (${error.code ?? error.message})`);
    },
  );
  // A folder sorts as `name/`, so the order is that of the full paths, as keys compare.
  const sortKey = (entry: Dirent) => (entry.isDirectory() ? `${entry.name}/` : entry.name);
  for (const entry of entries.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0))) {
    const name = below === '' ? entry.name : `${below}/${entry.name}`;
    if (entry.isDirectory()) yield* localRecordNames(root, name);
    else yield name;
  }
}

function existsWithoutThrowing(file: string): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true; // there, but not to be stat'ed (EACCES): the read says why
  }
}

const legacySchema = z.object({
  version: z.literal(MANIFEST_VERSION),
  entries: z.record(z.string(), entrySchema),
});
const recordSchema = z.object({ version: z.literal(MANIFEST_VERSION), entry: entrySchema });
