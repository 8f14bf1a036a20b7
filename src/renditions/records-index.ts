/**
 * The index of a local records folder (`.content-api-manifest/<folder>/.index`): for each record
 * there, the stat of its file when it was read (size, times, inode) beside a summary of what it
 * holds. While a record's stat is still the one indexed, so is its content, and the summary stands
 * for it: a rerun over an unchanged archive stats each record instead of reading, parsing and
 * checking it, as git's index spares reading a work tree's files. Records are never written in
 * place (a new file is renamed over the old: a new inode and new times), so a record rewritten,
 * by this tool or by hand, shows in its stat.
 *
 * A cache, and only that: records stay what the manifest is. An index missing, stale, cut short or
 * not one is passed over (its records are read, as without it) and written again; a line is used
 * only while its record's stat matches. What a summary holds is the manifest's to say (manifest.ts).
 *
 * JSON Lines: a first line `{"version":1}`, then one line a record, `[name, size, mtimeMs, ctimeMs,
 * ino, summary]`, each parsed and checked alone (a line that is not one costs its record a read).
 */
import { statSync } from 'node:fs';
import { z } from 'zod';
import { readSmallFileSync } from '../fs/read-within.js';
import { parseJsonAs } from '../json.js';

/** Each records folder's index: a name no record has (records end in `.json`, safe names never begin with `.`). */
export const INDEX_FILE = '.index';
const HEADER = JSON.stringify({ version: 1 });
/**
 * Records a folder's index holds at most: past it, the folder has none and its records are read on
 * every rerun. A folder's lines are held while a batch renders it (about 1 KB each in memory).
 */
export const INDEX_MAX_LINES = 20_000;
/** The largest index read (a line is about 700 bytes). */
const MAX_INDEX_BYTES = 32 * 1024 * 1024;

/** A record file's stat, as indexed. */
export interface RecordStat {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

type Line<T> = [size: number, mtimeMs: number, ctimeMs: number, ino: number, summary: T];
type Stored<T> = [name: string, ...Line<T>];

const sameStat = (line: Line<unknown>, info: RecordStat) =>
  line[0] === info.size && line[1] === info.mtimeMs && line[2] === info.ctimeMs && line[3] === info.ino;

/** One folder's index as a batch sees it: the lines read, the lines learned since, and whether it is to be written. */
interface Folder<T> {
  read: Map<string, Line<T>>;
  learned: Map<string, Line<T>>;
  /** Names in `read` or `learned`, each counted once: the lines its index would hold. */
  size: number;
  /** Past `INDEX_MAX_LINES`: no index is written for it, and nothing more is learned. */
  tooLarge: boolean;
}

/**
 * The indexes of the records folders a batch reads, each loaded once and written when the batch has
 * learned lines for it (records read or written, and so their stat known).
 */
export class RecordsIndex<T> {
  readonly #folders = new Map<string, Folder<T>>();
  readonly #lineSchema: z.ZodType<Stored<T>>;
  readonly #root: string;
  readonly #maxLines: number;

  /**
   * `schema`: a summary's, checked on every line read (an index is as hostile as the records it sums
   * up); `root`: the folder of records folders, which are named relative to it (`landscapes/`, ``).
   */
  constructor(schema: z.ZodType<T>, root: string, maxLines = INDEX_MAX_LINES) {
    this.#root = root.endsWith('/') ? root : `${root}/`;
    this.#maxLines = maxLines;
    const count = z.number().int().nonnegative();
    this.#lineSchema = z.tuple([z.string(), count, z.number(), z.number(), count, schema]) as z.ZodType<Stored<T>>;
  }

  /**
   * The summary of the record `name` in the records folder `folder`, while the record's stat is the
   * one indexed; undefined when it is not, or the folder has no usable index.
   */
  summary(folder: string, name: string): T | undefined {
    const line = this.#folder(folder).read.get(name);
    if (!line) return undefined;
    const info = statOrNull(this.#root + folder + name);
    return info && sameStat(line, info) ? line[4] : undefined;
  }

  /** The record `name` in `folder` was read (or written and read back) as `info`, holding what `summary` says. */
  learn(folder: string, name: string, info: RecordStat, summary: T): void {
    const known = this.#folder(folder);
    if (known.tooLarge) return;
    if (!known.read.has(name) && !known.learned.has(name)) known.size++;
    known.learned.set(name, [info.size, info.mtimeMs, info.ctimeMs, info.ino, summary]);
    if (known.size > this.#maxLines) {
      known.tooLarge = true;
      known.learned.clear();
    }
  }

  /** What was learned of `name` no longer holds (its record was removed, or written and not read back). */
  unlearn(folder: string, name: string): void {
    const known = this.#folders.get(folder);
    if (known?.learned.delete(name) && !known.read.has(name)) known.size--;
  }

  /**
   * Writes the index of each folder `done` says the batch is through with that it learned lines for,
   * and forgets those folders: their lines and the ones read before, each kept only while its record's
   * stat still matches. `write` puts the bytes in place whole (a temporary name renamed over it).
   */
  async flush(done: (folder: string) => boolean, write: (folder: string, bytes: Buffer) => Promise<void>) {
    for (const [folder, known] of this.#folders) {
      if (!done(folder)) continue;
      this.#folders.delete(folder);
      if (known.tooLarge || known.learned.size === 0) continue;
      const lines = new Map(known.read);
      for (const [name, line] of known.learned) lines.set(name, line);
      const text = [HEADER];
      for (const [name, line] of lines) {
        const info = statOrNull(this.#root + folder + name);
        if (info && sameStat(line, info)) text.push(JSON.stringify([name, ...line]));
      }
      await write(folder, Buffer.from(`${text.join('\n')}\n`));
    }
  }

  /** A folder's index, loaded the first time it is asked for: empty when there is none or it is not one. */
  #folder(folder: string): Folder<T> {
    let known = this.#folders.get(folder);
    if (!known) {
      const read = this.#load(folder);
      known = { read, learned: new Map(), size: read.size, tooLarge: false };
      this.#folders.set(folder, known);
    }
    return known;
  }

  #load(folder: string): Map<string, Line<T>> {
    const read = readSmallFileSync(this.#root + folder + INDEX_FILE, MAX_INDEX_BYTES, 'the cap on a records index');
    const found = new Map<string, Line<T>>();
    if (!read.ok) return found;
    const { bytes } = read;
    let start = bytes.indexOf(10) + 1;
    if (start === 0 || bytes.toString('latin1', 0, start - 1) !== HEADER) return found;
    // Each line alone (its UTF-8 checked, parsed, checked by the schema): one that is not a line costs its record.
    while (start < bytes.length) {
      const end = bytes.indexOf(10, start);
      const parsed = parseJsonAs(this.#lineSchema, bytes.subarray(start, end === -1 ? bytes.length : end));
      if (parsed.ok) found.set(parsed.data[0], parsed.data.slice(1) as Line<T>);
      if (found.size > this.#maxLines) return new Map();
      start = end === -1 ? bytes.length : end + 1;
    }
    return found;
  }
}

function statOrNull(file: string): RecordStat | null {
  try {
    return statSync(file, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
