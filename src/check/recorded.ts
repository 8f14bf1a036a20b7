/**
 * What the manifest `render` wrote beside the renditions says of the file a media URL names, for
 * `check --verify-files` in a folder or bucket: the entry that records it (its picture's fingerprint,
 * for `file-picture`) and the entries of the same original in other formats (its alternates).
 *
 * The manifest is opened on first use, so a `check` that never asks never loads it; each image's
 * entries are read once per run however many renditions and pages ask. Over HTTP there is no
 * manifest to read, and nothing is recorded.
 */
import type { Manifest, ManifestEntry, UnreadableRecord } from '../renditions/manifest.js';
import { mediaPath, parseRenditionFileName, RENDITION_KEYS, type RenditionKey } from '../renditions/rules.js';
import type { FileSource } from './probe.js';

/** The record of one rendition file. */
export interface RecordedRendition {
  /** The entry's manifest key, `<folders>/<name>.<ext>` (`landscapes/dune.jpg`). */
  key: string;
  entry: ManifestEntry;
  /** Which of the entry's renditions the file is. */
  rendition: RenditionKey;
  /** Every entry of the same stem (`landscapes/dune`), this one too, by key. */
  stem: Record<string, ManifestEntry>;
}

type Entries = Record<string, ManifestEntry>;

/** A stem's records: the entries read, and the records that could not be. */
interface StemRecords {
  entries: Entries;
  unreadable: UnreadableRecord[];
}

/** Stems remembered, so an image many pages name is looked up once; bounded, so memory is. */
const CACHE = 20_000;

const stemOfKey = (key: string) => key.replace(/\.[^./]+$/, '');

export class RecordedRenditions {
  readonly #files: FileSource;
  #manifest: Promise<Manifest | null> | undefined;
  readonly #stems = new Map<string, Promise<StemRecords>>();

  constructor(files: FileSource) {
    this.#files = files;
  }

  /**
   * The record of the file `url` names; none over HTTP, without a manifest, or for a file it lacks.
   * Throws `ManifestError` when the manifest cannot be read at all (a one-file manifest that is a
   * FIFO, cut short, over its cap): `check` cannot say what it recorded, and must not pass for it.
   */
  async lookup(url: string): Promise<RecordedRendition | undefined> {
    const path = this.#pathOf(url);
    if (path === null) return undefined;
    const stem = (await this.#records(path)).entries;
    for (const [key, entry] of Object.entries(stem)) {
      const rendition = RENDITION_KEYS.find((k) => entry.renditions[k].path === path);
      if (rendition) return { key, entry, rendition, stem };
    }
    return undefined;
  }

  /** The records of the image of the file `url` names (any format) that cannot be read: each a finding. */
  async unreadable(url: string): Promise<UnreadableRecord[]> {
    const path = this.#pathOf(url);
    return path === null ? [] : (await this.#records(path)).unreadable;
  }

  /** The path of the rendition file `url` names below the folder or bucket, if it names one. */
  #pathOf(url: string): string | null {
    const files = this.#files;
    if (files.kind !== 'store') return null;
    const path = mediaPath(url, files.mediaPrefix);
    return path !== null && parseRenditionFileName(path) ? path : null;
  }

  #records(path: string): Promise<StemRecords> {
    const folder = path.slice(0, path.lastIndexOf('/') + 1);
    const stem = `${folder}${parseRenditionFileName(path)!.name}`;
    const known = this.#stems.get(stem);
    if (known) return known;
    const found = this.#read(stem);
    this.#stems.set(stem, found);
    if (this.#stems.size > CACHE) this.#stems.delete(this.#stems.keys().next().value!);
    return found;
  }

  async #read(stem: string): Promise<StemRecords> {
    const manifest = await this.#open();
    const unreadable: UnreadableRecord[] = [];
    if (!manifest) return { entries: {}, unreadable };
    const entries = await manifest.entriesFor([stem], (record) => {
      if (stemOfKey(record.key) === stem) unreadable.push(record);
    });
    return {
      entries: Object.fromEntries(Object.entries(entries).filter(([key]) => stemOfKey(key) === stem)),
      unreadable,
    };
  }

  #open(): Promise<Manifest | null> {
    this.#manifest ??= (async () => {
      if (this.#files.kind !== 'store') return null;
      const { openManifest } = await import('../renditions/manifest.js');
      const manifest = await openManifest(this.#files.store);
      manifest.assertReadable();
      return manifest;
    })();
    return this.#manifest;
  }
}
