/**
 * The manifest in the output folder: for each original, its content hash, the settings it
 * was rendered with and the files written, so an unchanged original is skipped next time.
 *
 * In a local folder it is one JSON file, always replaced atomically. Each run reads it once,
 * then merges its own changes into the current file under a lock, so two runs into one
 * folder at once neither corrupt it nor lose each other's entries. In a bucket, where there
 * is no lock, it is one small object per original (`.content-api-manifest/<key>.json`), so
 * machines rendering into one prefix at once never overwrite each other's records.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import pLimit from 'p-limit';
import { z } from 'zod';
import { ManifestError, oneLine, STORE_WIDE, StorageError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { withLock } from '../fs/lock.js';
import { parseJsonAs, parseJsonOrUndefined } from '../json.js';
import { readFileWithin } from '../page/json-file.js';
import { LocalStore } from '../storage/local.js';
import type { MediaStore } from '../storage/store.js';
import { RENDITION_KEYS } from './rules.js';

export const MANIFEST_FILE = '.content-api-manifest.json';
const MANIFEST_VERSION = 1;

const pixelSize = { width: z.number().int().positive(), height: z.number().int().positive() };
const renditionRecord = z.object({
  path: z.string().min(1),
  ...pixelSize,
  bytes: z.number().int().nonnegative(),
  /** With `--quality auto`: the encoder quality chosen, its SSIMULACRA2 score, and what was scored. */
  quality: z.number().int().optional(),
  score: z.number().optional(),
  scored: z.enum(['rendition', 'tiles']).optional(),
  /** What it shows (src/quality/fingerprint.ts), for `check`'s same-picture rule; absent in older manifests. */
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
  /** What a page shows while a rendition loads (placeholder.ts); absent in older manifests. */
  placeholder: z.object({ color: z.string(), preview: z.string() }).optional(),
  renditions: z.object(
    Object.fromEntries(RENDITION_KEYS.map((k) => [k, renditionRecord])) as Record<
      (typeof RENDITION_KEYS)[number],
      typeof renditionRecord
    >,
  ),
});

const manifestSchema = z.object({
  version: z.literal(MANIFEST_VERSION),
  entries: z.record(z.string(), entrySchema),
});

export type ManifestEntry = z.infer<typeof entrySchema>;
type Entries = Record<string, ManifestEntry>;

/** The largest manifest file read (about a million entries): V8's longest string is about 512 MiB. */
const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

/**
 * The manifest file's entries as last read or written by this process, by file, with the
 * stamp of the file they came from: while the file keeps that stamp (size, mtime, inode; an
 * atomic replace always changes the inode) it is not parsed again. Manifests of 100,000
 * entries are tens of MB, and the writer and every claim would otherwise parse one a second.
 */
const known = new Map<string, { stamp: string; entries: Entries }>();

const stampOfFile = (file: string) =>
  stat(file).then(
    (info) => `${info.size} ${info.mtimeMs} ${info.ino}`,
    () => null,
  );

/** Reads the manifest; a missing one is empty, an unreadable one is reported and ignored. */
export async function readManifest(outDir: string): Promise<{ entries: Entries; warning?: string }> {
  const file = path.join(path.resolve(outDir), MANIFEST_FILE);
  const { entries, warning } = await current(file);
  return { entries: { ...entries }, ...(warning && { warning }) };
}

/** The entry recorded under `key` in the manifest as it is now (read again only if it changed). */
export async function recordedEntry(outDir: string, key: string): Promise<ManifestEntry | undefined> {
  return (await current(path.join(path.resolve(outDir), MANIFEST_FILE))).entries[key];
}

async function current(file: string): Promise<{ entries: Entries; warning?: string }> {
  const stamp = await stampOfFile(file);
  const cached = known.get(file);
  if (stamp !== null && cached?.stamp === stamp) return cached;
  // Only a regular file is read (a FIFO or /dev/zero in its place would hang or fill memory).
  const read = await readFileWithin(file, MAX_MANIFEST_BYTES, 'the cap on a manifest');
  if (!read.ok) {
    if (read.missing) return { entries: {} };
    throw new ManifestError(file, read.reason);
  }
  const parsed = parseJsonAs(manifestSchema, read.bytes);
  const manifest = parsed.ok ? parsed.data : undefined;
  if (!manifest) {
    return { entries: {}, warning: `${file}: not a valid manifest; every original will be rendered again` };
  }
  const { entries } = manifest;
  for (const entry of Object.values(entries)) entry.source = fromStored(path.dirname(file), entry.source);
  // Stamped as before the read: if the file changed meanwhile, the next read parses it again.
  if (stamp !== null) known.set(file, { stamp, entries });
  return { entries };
}

/** A URL (a downloaded rendition) is kept as it is; an absolute path becomes one relative to the output folder. */
const isUrl = (source: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(source);
const toStored = (outDir: string, source: string) =>
  isUrl(source) || !path.isAbsolute(source) ? source : path.relative(outDir, source);
/** The other way; an absolute path (manifests written before relative paths) is kept. */
const fromStored = (outDir: string, source: string) =>
  isUrl(source) || path.isAbsolute(source) ? source : path.resolve(outDir, source);

/** True when every file the entry records is still there with its recorded byte size. */
export async function isIntact(store: MediaStore, entry: ManifestEntry): Promise<boolean> {
  for (const rendition of Object.values(entry.renditions)) {
    const found = await store.stat(rendition.path).catch(() => null);
    if (found?.size !== rendition.bytes) return false;
  }
  return true;
}

/** The manifest of one output store, as a run uses it. */
export interface Manifest {
  /** Set when the manifest could not be read: every original is rendered again. */
  readonly warning?: string | undefined;
  /** The entries of images with these stems (`landscapes/dune`), under any key (`.jpg`, `.webp`...). */
  entriesFor(stems: string[]): Promise<Entries>;
  /** Records `entry` under `key`, once the files it names are written. */
  set(key: string, entry: ManifestEntry): Promise<void>;
  delete(key: string): Promise<void>;
  /** Writes whatever is pending; throws `ManifestError` when it cannot (the changes stay pending). */
  flush(): Promise<void>;
  /** The keys whose changes are not written yet. */
  unwritten(): string[];
}

/** The manifest of `store`: one file in a folder, one object per original in a bucket. */
export async function openManifest(store: MediaStore): Promise<Manifest> {
  if (store instanceof LocalStore) {
    const outDir = path.resolve(store.location);
    const { warning } = await readManifest(outDir);
    const writer = new ManifestWriter(outDir);
    return {
      warning,
      // As the file is now (parsed again only if it changed): a worker renders job after job in one session.
      entriesFor: async () => (await readManifest(outDir)).entries,
      // Written in batches: a batch that cannot be written stays pending, for `flush` to report.
      set: (key, entry) => writer.set(key, entry).catch(() => undefined),
      delete: (key) => writer.delete(key).catch(() => undefined),
      flush: () => writer.flush(),
      unwritten: () => [...writer.unwritten.keys()],
    };
  }
  return new ObjectManifest(store);
}

/** The folder of per-original records in a bucket. */
export const MANIFEST_RECORDS = '.content-api-manifest/';

/**
 * One object per original: written (one PUT, whole) only after its renditions, removed when
 * the original's files are. Reads list the records' folders, then fetch only the records of
 * the images a run renders.
 */
class ObjectManifest implements Manifest {
  readonly #store: MediaStore;
  readonly #limit = pLimit(16);
  readonly #problems: string[] = [];

  /** The records that could not be read, in one line. */
  get warning(): string | undefined {
    if (this.#problems.length === 0) return undefined;
    const more = this.#problems.length > 1 ? ` (and ${this.#problems.length - 1} more record(s) like it)` : '';
    return `${this.#problems[0]}${more}`;
  }

  #warn(problem: string): void {
    this.#problems.push(problem);
  }

  constructor(store: MediaStore) {
    this.#store = store;
  }

  async entriesFor(stemList: string[]): Promise<Entries> {
    this.#problems.length = 0; // the warning is about this call's records: a worker asks job after job
    const stems = new Set(stemList);
    const folders = new Set(stemList.map((stem) => stem.slice(0, stem.lastIndexOf('/') + 1)));
    const records: string[] = [];
    for (const folder of folders) {
      for await (const found of this.#store.list(MANIFEST_RECORDS + folder, { shallow: true })) {
        const key = found.key.slice(MANIFEST_RECORDS.length, -'.json'.length);
        if (found.key.endsWith('.json') && stems.has(key.replace(/\.[^./]+$/, ''))) records.push(key);
      }
    }
    return this.#read(records);
  }

  async set(key: string, entry: ManifestEntry): Promise<void> {
    const record = `${JSON.stringify({ version: MANIFEST_VERSION, entry }, null, 2)}\n`;
    await this.#store.put(`${MANIFEST_RECORDS}${key}.json`, Buffer.from(record), { contentType: 'application/json' });
  }

  async delete(key: string): Promise<void> {
    await this.#store.remove(`${MANIFEST_RECORDS}${key}.json`);
  }

  async flush(): Promise<void> {}

  unwritten(): string[] {
    return []; // each record is written at once, or its original fails
  }

  async #read(keys: string[]): Promise<Entries> {
    const entries: Entries = {};
    await Promise.all(
      keys.map((key) =>
        this.#limit(async () => {
          const name = `${MANIFEST_RECORDS}${key}.json`;
          let text: string;
          try {
            const { body } = await this.#store.read(name);
            const chunks: Buffer[] = [];
            for await (const chunk of body) chunks.push(chunk as Buffer);
            text = Buffer.concat(chunks).toString('utf8');
          } catch (error) {
            // Removed since it was listed (another machine changed that image), or unreadable:
            // no record, so the original is rendered again; a bucket gone as a whole fails the run.
            if (error instanceof StorageError && STORE_WIDE.has(error.kind)) throw error;
            if (!(error instanceof StorageError && error.kind === 'missing'))
              this.#warn(`${oneLine(error)}; its original will be rendered again`);
            return;
          }
          const record = parseJsonOrUndefined(recordSchema, text);
          if (record) entries[key] = record.entry;
          else
            this.#warn(
              `${this.#store.describe(name)}: not a valid manifest record; its original will be rendered again`,
            );
        }),
      ),
    );
    return entries;
  }
}

const recordSchema = z.object({ version: z.literal(MANIFEST_VERSION), entry: entrySchema });

/**
 * Collects a run's changes and merges them into the manifest file, at most every
 * `intervalMs` while the run goes on (so a killed run keeps what it finished), and on `close`.
 */
export class ManifestWriter {
  readonly #file: string;
  readonly #pending = new Map<string, ManifestEntry | null>();
  readonly #intervalMs: number;
  #lastFlush = Date.now();
  #flushing: Promise<void> = Promise.resolve();

  constructor(outDir: string, intervalMs = 1_000) {
    this.#file = path.join(outDir, MANIFEST_FILE);
    this.#intervalMs = intervalMs;
  }

  /** Records `entry` under `key` (the image's path under the output folder, `<folders>/<name>.<ext>`). */
  async set(key: string, entry: ManifestEntry): Promise<void> {
    this.#pending.set(key, entry);
    if (Date.now() - this.#lastFlush >= this.#intervalMs) await this.flush();
  }

  /** Removes the entry under `key`. */
  async delete(key: string): Promise<void> {
    this.#pending.set(key, null);
    if (Date.now() - this.#lastFlush >= this.#intervalMs) await this.flush();
  }

  /** Writes the pending changes now. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.catch(() => undefined).then(() => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    this.#lastFlush = Date.now();
    if (this.#pending.size === 0) return;
    const changes = new Map(this.#pending);
    this.#pending.clear();
    const keep = () => {
      // Not written: the changes wait for the next flush, unless newer ones replaced them.
      for (const [key, entry] of changes) if (!this.#pending.has(key)) this.#pending.set(key, entry);
    };
    try {
      await withLock(`${this.#file}.lock`, async () => {
        const { entries } = await readManifest(path.dirname(this.#file));
        for (const [key, entry] of changes) {
          if (entry) entries[key] = entry;
          else delete entries[key];
        }
        const dir = path.dirname(this.#file);
        const sorted = Object.fromEntries(
          Object.entries(entries)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([key, entry]) => [key, { ...entry, source: toStored(dir, entry.source) }]),
        );
        await writeFileAtomic(
          this.#file,
          `${JSON.stringify({ version: MANIFEST_VERSION, entries: sorted }, null, 2)}\n`,
        );
        // Still under the lock: nobody else has written since, so these are the file's entries.
        const stamp = await stampOfFile(this.#file);
        if (stamp !== null) known.set(this.#file, { stamp, entries });
      });
    } catch (error) {
      keep();
      if (error instanceof ManifestError) throw error;
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new ManifestError(this.#file, `cannot update (${reason})`, { cause: error });
    }
  }

  /** The entries recorded since the last successful write, by key. */
  get unwritten(): ReadonlyMap<string, ManifestEntry | null> {
    return this.#pending;
  }
}
