/**
 * `check --verify-files`' same-picture rule (`file-picture`): the renditions of one Image show one
 * picture, the one `render` recorded when the media folder or bucket has its manifest. A swapped,
 * stale, wrongly rotated or wrongly colour-converted rendition is a finding naming the file and what
 * differs; a re-encode of the same picture at another quality is not (src/picture/).
 *
 * Each rendition is read whole and decoded shrunk (JPEG decodes at 1/8 scale, so a 15 MP rendition
 * costs a few milliseconds), once per run however many pages name it. CI needs only the renditions
 * and the manifest beside them, never the originals. sharp, the fingerprints and the manifest are
 * loaded on first use: a `check` without `--verify-files` never pays for them.
 *
 * Reading every rendition whole, it also finds the files whose header reads but whose pixels do not
 * decode (truncated, corrupt): `file-unreadable`, which the header rules cannot see. An Image's
 * alternates (other formats, known from the manifest) are held to their own records the same way.
 *
 * The same read gives each file's version (the first 8 hex digits of its SHA-256), for
 * `file-version`: a URL's `?v=` must be its file's. With `file-picture` off, files are still read
 * whole for that rule (those whose URL carries a version), but not decoded.
 */
import pLimit, { type LimitFunction } from 'p-limit';
import { oneLine } from '../errors.js';
import type { FingerprintComparison } from '../picture/index.js';
import { RENDITION_KEYS, renditionVersion, urlVersion } from '../renditions/rules.js';
import type { AlternateReference } from './alternates.js';
import { type FileSource, readMedia } from './probe.js';
import { RecordedRenditions } from './recorded.js';

/** Where the record of a file is looked up: the manifest's entries, or the records being checked. */
export type RecordLookup = Pick<RecordedRenditions, 'lookup'>;

/** One Image's renditions as `check` read them: JSON path of each URL, the URL, where it was read. */
export interface PictureImage {
  path: string;
  sizes: Partial<Record<(typeof RENDITION_KEYS)[number], { url: string; src: string }>>;
}

export interface PictureFinding {
  path: string;
  /** `file-unreadable`: the file's pixels do not decode; `file-version`: its URL's version is not its own. */
  rule: 'file-picture' | 'file-unreadable' | 'file-version';
  /** The media URL of the file it is about. */
  url: string;
  message: string;
}

/** Renditions larger than this are not read for the rule (the header rules still cover them). */
const MAX_BYTES = 64 * 1024 * 1024;
/** Decoded with its shorter side no longer than this: the fingerprint's 32x32 grid needs no more. */
const DECODE_SIDE = 256;
/**
 * A rendition with a side shorter than this (a 1 px panorama's 300x1, a tall picture's 60x1200) is
 * not compared: under two pixels per cell of the fingerprint's 32x32 grid, its box averages move
 * with the encoder's noise as much as with the picture.
 */
const MIN_SIDE = 64;
/** Fingerprints remembered, so a file many pages share is read once; bounded, so memory is. */
const CACHE = 20_000;

/**
 * A file read and fingerprinted; not ok without a picture to compare, with `error` when its pixels
 * do not decode; with its `version` whenever it was read whole.
 */
type Read = ({ ok: true; location: string; print: string } | { ok: false; location?: string; error?: string }) & {
  version?: string;
};

export interface PictureCheckOptions {
  /** Told the bytes of each file read, for the run's summary. */
  onRead?: (bytes: number) => void;
  /**
   * The run's view of the manifest, shared with the other rules that read it (or, for the archive
   * checked whole, the records being checked).
   */
  recorded?: RecordLookup;
  /** Files read at once (default 4). */
  concurrency?: number;
  /** Decode and fingerprint each file read (default true); off when only `file-version` is on. */
  fingerprints?: boolean;
}

/** What the rule needs beyond reading files, loaded on first use. */
const load = async () => {
  const [{ sharp }, { compareFingerprints, fingerprint, FingerprintError }] = await Promise.all([
    import('../packages/sharp.js'),
    import('../picture/index.js'),
  ]);
  return { sharp, compareFingerprints, fingerprint, FingerprintError };
};
let loaded: ReturnType<typeof load> | undefined;
const tools = () => {
  loaded ??= load();
  return loaded;
};

export class PictureCheck {
  readonly #files: FileSource;
  readonly #limit: LimitFunction;
  readonly #prints = new Map<string, Promise<Read>>();
  /** An Image's renditions (their URLs, by size) -> what comparing them found. */
  readonly #compared = new Map<string, Promise<PictureFinding[]>>();
  readonly #recorded: RecordLookup;
  readonly #onRead: (bytes: number) => void;
  readonly #fingerprints: boolean;

  constructor(files: FileSource, options: PictureCheckOptions = {}) {
    this.#files = files;
    this.#onRead = options.onRead ?? (() => {});
    this.#recorded = options.recorded ?? new RecordedRenditions(files);
    this.#limit = pLimit(options.concurrency ?? 4);
    this.#fingerprints = options.fingerprints ?? true;
  }

  /**
   * `file-version`: each media URL that carries a version (`?v=`), or whose `version` the manifest
   * records, against its file's. A file that cannot be read whole (missing, unreadable, over 64 MiB)
   * is not compared: the file rules say why.
   */
  async versions(
    references: ReadonlyArray<{ path: string; url: string; version?: string | undefined }>,
  ): Promise<PictureFinding[]> {
    const found = await Promise.all(
      references.map(async ({ path, url, version }): Promise<PictureFinding[]> => {
        const given = version ?? urlVersion(url);
        if (given === null) return [];
        const read = await this.#read(url);
        if (read.version === undefined || read.version === given) return [];
        const said = version === undefined ? `its URL says v=${given}` : `the manifest records ${given}`;
        const message = `${read.location} is version ${read.version} (its SHA-256's first 8 hex digits), ${said}`;
        return [{ path, rule: 'file-version', url, message }];
      }),
    );
    return found.flat();
  }

  /**
   * The findings of one Image: each rendition against the recorded picture, or against the others.
   * Compared once per run for a set of renditions, however many pages show it (a site's thumbnails).
   */
  async problems(image: PictureImage): Promise<PictureFinding[]> {
    const key = RENDITION_KEYS.map((size) => image.sizes[size]?.url ?? '').join('\n');
    let compared = this.#compared.get(key);
    if (!compared) {
      compared = this.#compare(image);
      this.#compared.set(key, compared);
      if (this.#compared.size > CACHE) this.#compared.delete(this.#compared.keys().next().value!);
    }
    return (await compared).map(({ path, ...finding }) => ({ ...finding, path: `${image.path}${path}` }));
  }

  /** `problems`, each path below the Image's (`.sizes.md.url`). */
  async #compare(image: PictureImage): Promise<PictureFinding[]> {
    const urls = [...new Set(RENDITION_KEYS.flatMap((key) => (image.sizes[key] ? [image.sizes[key].url] : [])))];
    const pathOf = (url: string) => `.sizes.${RENDITION_KEYS.find((k) => image.sizes[k]?.url === url)!}.url`;
    const { compareFingerprints } = await tools();
    const reads = await Promise.all(urls.map((url) => this.#read(url)));
    const seen = urls.flatMap((url, i) =>
      reads[i]!.ok ? [{ url, ...(reads[i] as Extract<Read, { ok: true }>) }] : [],
    );
    const findings: PictureFinding[] = urls.flatMap((url, i) => unreadable(url, pathOf(url), reads[i]!));
    const unrecorded: typeof seen = [];
    for (const file of seen) {
      const against = await this.#againstRecord(file.url, file.print);
      if (against === undefined) unrecorded.push(file);
      else if (against.differs) {
        findings.push({ path: pathOf(file.url), rule: 'file-picture', url: file.url, message: against.differs(file) });
      }
    }
    // Without a record: each rendition against the largest one the others agree with.
    const others = odd(unrecorded.length === seen.length ? seen : unrecorded, seen, compareFingerprints);
    for (const { file, against, differences } of others) {
      findings.push({
        path: pathOf(file.url),
        rule: 'file-picture',
        url: file.url,
        message: `${file.location} shows another picture than ${against.location}: ${differences.join('; ')}`,
      });
    }
    return findings;
  }

  /**
   * The findings of an Image's alternates (known only from the manifest): each must decode and show
   * the picture recorded for it, as a rendition the JSON names must.
   */
  async alternates(alternates: AlternateReference[]): Promise<PictureFinding[]> {
    // One finding per file, at its first rendition's path (a manifest may name one file for two
    // renditions), as for the Image's own renditions.
    const seen = new Set<string>();
    const once = alternates.filter(({ url }) => !seen.has(url) && seen.add(url));
    const found = await Promise.all(
      once.map(async ({ path, url, format }): Promise<PictureFinding[]> => {
        const read = await this.#read(url);
        const label = `${format} alternate `;
        if (!read.ok) return unreadable(url, path, read, label);
        const against = await this.#againstRecord(url, read.print);
        if (!against?.differs) return [];
        return [{ path, rule: 'file-picture', url, message: `${label}${against.differs(read)}` }];
      }),
    );
    return found.flat();
  }

  /**
   * The file `url` names against the picture recorded for it: undefined when none is recorded; else
   * what a finding says of it (`differs`), when it differs or the record's fingerprint cannot be
   * read (a record edited or damaged: a finding on that file, not the end of the run).
   */
  async #againstRecord(
    url: string,
    print: string,
  ): Promise<{ differs?: (file: { location: string }) => string } | undefined> {
    const record = await this.#recorded.lookup(url);
    const expected = record?.entry.renditions[record.rendition].fingerprint;
    if (expected === undefined) return undefined;
    const { compareFingerprints, FingerprintError } = await tools();
    try {
      const comparison = compareFingerprints(expected, print);
      if (comparison.same) return {};
      return {
        differs: (file) => `${file.location} is not the picture render recorded: ${comparison.differences.join('; ')}`,
      };
    } catch (error) {
      if (!(error instanceof FingerprintError)) throw error;
      const reason = `the fingerprint its manifest record (${record!.key}) holds cannot be read: ${error.message}`;
      return {
        differs: (file) =>
          `${file.location} cannot be compared with its record: ${reason}; render --force records it again`,
      };
    }
  }

  /** The fingerprint of the file `url` names, read whole and decoded shrunk; not ok when it cannot be. */
  #read(url: string): Promise<Read> {
    const known = this.#prints.get(url);
    if (known) return known;
    const read = this.#limit(async (): Promise<Read> => {
      const file = await readMedia(url, this.#files, MAX_BYTES);
      if (file.ok) this.#onRead(file.bytes.length);
      // Missing, unreadable or too large: the file rules say so; there is no picture to compare.
      if (!file.ok || !file.complete) return { ok: false };
      const version = renditionVersion(file.bytes);
      if (!this.#fingerprints) return { ok: false, location: file.location, version };
      if (cutGif(file.bytes)) return { ok: false, location: file.location, error: GIF_CUT, version };
      const { sharp, fingerprint } = await tools();
      try {
        // A truncated file is an error (its missing rows would be decoded as grey); any other
        // decoder warning is not a finding of this rule.
        const pixels = await sharp(file.bytes, { failOn: 'truncated', animated: false })
          .rotate()
          .resize(DECODE_SIDE, DECODE_SIDE, { fit: 'outside', withoutEnlargement: true })
          .toColourspace('srgb')
          .raw()
          .toBuffer({ resolveWithObject: true });
        if (Math.min(pixels.info.width, pixels.info.height) < MIN_SIDE)
          return { ok: false, location: file.location, version };
        return { ok: true, location: file.location, print: fingerprint(pixels), version };
      } catch (error) {
        return { ok: false, location: file.location, error: oneLine(error), version };
      }
    });
    this.#prints.set(url, read);
    if (this.#prints.size > CACHE) this.#prints.delete(this.#prints.keys().next().value!);
    return read;
  }
}

/** A GIF's last byte (`;`): libvips decodes a GIF cut short without a word, its last frames dropped. */
const GIF_TRAILER = 0x3b;
const GIF_CUT = 'the GIF ends before its trailer (cut short)';
const cutGif = (bytes: Buffer) => bytes.subarray(0, 4).toString('latin1') === 'GIF8' && bytes.at(-1) !== GIF_TRAILER;

type Seen = { url: string; location: string; print: string };

/** The finding of a file whose pixels do not decode, if `read` is one. */
function unreadable(url: string, path: string, read: Read, label = ''): PictureFinding[] {
  if (read.ok || read.error === undefined) return [];
  return [{ path, rule: 'file-unreadable', url, message: `${label}${read.location} does not decode: ${read.error}` }];
}

/**
 * The renditions among `files` that show another picture than the largest one most of `all` agree
 * with (the first in `all`, largest first, when no picture has a majority), and what differs.
 */
function odd(
  files: Seen[],
  all: Seen[],
  compareFingerprints: (expected: string, actual: string) => FingerprintComparison,
): Array<{ file: Seen; against: Seen; differences: string[] }> {
  if (files.length === 0 || all.length < 2) return [];
  const largestFirst = [...all].reverse();
  const agreeing = (candidate: Seen) =>
    largestFirst.filter((other) => other === candidate || compareFingerprints(candidate.print, other.print).same)
      .length;
  let reference = largestFirst[0]!;
  let most = agreeing(reference);
  for (const candidate of largestFirst.slice(1)) {
    const count = agreeing(candidate);
    if (count > most) [reference, most] = [candidate, count];
  }
  return files.flatMap((file) => {
    if (file === reference) return [];
    const comparison = compareFingerprints(reference.print, file.print);
    return comparison.same ? [] : [{ file, against: reference, differences: comparison.differences }];
  });
}
