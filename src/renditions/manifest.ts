/**
 * The manifest in the output folder: for each original, its content hash, the settings it
 * was rendered with and the files written, so an unchanged original is skipped next time.
 *
 * It is one JSON file, always replaced atomically. Each run reads it once, then merges its
 * own changes into the current file under a lock, so two runs into one folder at once
 * neither corrupt it nor lose each other's entries.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ManifestError } from '../errors.js';
import { writeFileAtomic } from '../fs/atomic.js';
import { withLock } from '../fs/lock.js';
import { RENDITION_KEYS } from './rules.js';

export const MANIFEST_FILE = '.content-api-manifest.json';
const MANIFEST_VERSION = 1;

const pixelSize = { width: z.number().int().positive(), height: z.number().int().positive() };
const renditionRecord = z.object({ path: z.string().min(1), ...pixelSize, bytes: z.number().int().nonnegative() });

/** What `stat` said of the original when it was hashed: while all of it holds, the hash does. */
const fileStamp = z.object({ size: z.number().int().nonnegative(), mtimeMs: z.number(), ctimeMs: z.number(), ino: z.number() });

const entrySchema = z.object({
  /**
   * The original: in memory its absolute path (or the URL of a downloaded rendition); in
   * the file, a path relative to the output folder, so the folder can move with its originals.
   */
  source: z.string(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The original file's stamp when hashed (absent for bytes downloaded, and in older manifests). */
  stamp: fileStamp.optional(),
  /** Everything that changes the files' bytes; see `settingsKey`. */
  settings: z.string(),
  original: z.object(pixelSize),
  renditions: z.object(Object.fromEntries(RENDITION_KEYS.map((k) => [k, renditionRecord])) as Record<
    (typeof RENDITION_KEYS)[number],
    typeof renditionRecord
  >),
});

const manifestSchema = z.object({
  version: z.literal(MANIFEST_VERSION),
  entries: z.record(z.string(), entrySchema),
});

export type ManifestEntry = z.infer<typeof entrySchema>;
export type FileStamp = z.infer<typeof fileStamp>;
type Entries = Record<string, ManifestEntry>;

/** Reads the manifest; a missing one is empty, an unreadable one is reported and ignored. */
export async function readManifest(outDir: string): Promise<{ entries: Entries; warning?: string }> {
  const file = path.join(path.resolve(outDir), MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: {} };
    throw new ManifestError(file, `cannot read (${(error as Error).message})`, { cause: error });
  }
  try {
    const { entries } = manifestSchema.parse(JSON.parse(text));
    for (const entry of Object.values(entries)) entry.source = fromStored(path.dirname(file), entry.source);
    return { entries };
  } catch {
    return { entries: {}, warning: `${file}: not a valid manifest; every original will be rendered again` };
  }
}

/** A URL (a downloaded rendition) is kept as it is; an absolute path becomes one relative to the output folder. */
const isUrl = (source: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(source);
const toStored = (outDir: string, source: string) => (isUrl(source) || !path.isAbsolute(source) ? source : path.relative(outDir, source));
/** The other way; an absolute path (manifests written before relative paths) is kept. */
const fromStored = (outDir: string, source: string) => (isUrl(source) || path.isAbsolute(source) ? source : path.resolve(outDir, source));

/** True when every file the entry records is still there with its recorded byte size. */
export async function isIntact(outDir: string, entry: ManifestEntry): Promise<boolean> {
  for (const rendition of Object.values(entry.renditions)) {
    const info = await stat(path.join(outDir, rendition.path)).catch(() => null);
    if (!info?.isFile() || info.size !== rendition.bytes) return false;
  }
  return true;
}

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
        await writeFileAtomic(this.#file, `${JSON.stringify({ version: MANIFEST_VERSION, entries: sorted }, null, 2)}\n`);
      });
    } catch (error) {
      if (error instanceof ManifestError) throw error;
      throw new ManifestError(this.#file, `cannot update (${(error as Error).message})`, { cause: error });
    }
  }
}
