/**
 * The sharp side of rendering: read an original's header, decode it once, and derive the
 * five renditions from it, each resized from the previous (larger) one's pixels.
 */
import pLimit from 'p-limit';
import sharp, { type Metadata, type Sharp, type SharpOptions } from 'sharp';
import { SourceError, sourceErrorFromSharp } from '../errors.js';
import { fingerprint } from '../picture/index.js';
import { aimOf, isSampled, type Measured, SLOPE, samplePixels, searchQuality, slopeOf } from '../quality/auto.js';
import type { RawPixels } from '../quality/linear.js';
import { jpegProbe } from '../quality/read.js';
import type { PooledReference, ScorePool } from '../quality/score-pool.js';
import { isScorable } from '../quality/ssimulacra2.js';
import { isAnimationFormat, isLossy, keepsAnimation, type OutputFormat, type SourceFormatInfo } from './formats.js';
import { PNG_HEADER_LIMIT, pngHeaderExcess } from './png-chunks.js';
import { type PixelSize, RENDITION_KEYS, type RenditionKey, renditionSizes } from './rules.js';
import { qualityTarget, type RenderSettings } from './settings.js';

/** What an original's header says, with its size as displayed (EXIF orientation applied). */
export interface SourceInfo extends SourceFormatInfo {
  size: PixelSize;
}

/** A batch's settings, with the format of the renditions being encoded. */
export type EncodeSettings = Omit<RenderSettings, 'formats'> & { format: OutputFormat };

/** One encoded rendition, shared by every key whose size is the same. */
export interface EncodedRendition {
  format: OutputFormat;
  keys: RenditionKey[];
  size: PixelSize;
  data: Buffer;
  /** With `--quality auto`: the quality chosen and its score. */
  measured?: Measured;
  /** What the rendition shows (`fingerprint`), from its pixels before encoding. */
  fingerprint?: string;
}

/** A rendition's size, and the keys that share it. */
type SizeGroup = Pick<EncodedRendition, 'keys' | 'size'>;

/** Reads an original's header (no pixel decoding) and checks it against the pixel limit. */
export async function readSourceInfo(source: string, input: Buffer | string, pixelLimit: number): Promise<SourceInfo> {
  if (typeof input !== 'string' && input.length === 0)
    throw new SourceError('CONTENT_API_EMPTY_FILE', source, 'file is empty');
  const excess = await pngHeaderExcess(input);
  if (excess) {
    throw new SourceError(
      'CONTENT_API_METADATA_LIMIT',
      source,
      `PNG holds over ${PNG_HEADER_LIMIT / 2 ** 20} MiB of chunks before its pixels (mostly ` +
        `${excess.types.slice(0, 3).join(', ')}), more than is read: their memory would follow bytes, not pixels`,
    );
  }
  let meta: Metadata;
  try {
    // No limit on the header read: the check below says by how much an original is over.
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw sourceErrorFromSharp(source, error);
  }
  const pages = meta.pages ?? 1;
  const frameHeight = pages > 1 ? (meta.pageHeight ?? meta.height) : meta.height;
  // What may be decoded: an animation's frames, all of them; a TIFF's other pages (a pyramid's
  // smaller copies, a scan's next page) never, only the first.
  const frames = isAnimationFormat(meta.format) ? pages : 1;
  if (pixelLimit > 0 && meta.width * frameHeight * frames > pixelLimit) {
    throw new SourceError(
      'CONTENT_API_PIXEL_LIMIT',
      source,
      `${meta.width}x${frameHeight}${frames > 1 ? ` x ${frames} frames` : ''} ` +
        `exceeds the pixel limit of ${pixelLimit} (see --pixel-limit)`,
    );
  }
  const swap = (meta.orientation ?? 1) >= 5;
  return {
    format: meta.format,
    compression: meta.compression,
    hasAlpha: meta.hasAlpha,
    pages,
    size: swap ? { width: frameHeight, height: meta.width } : { width: meta.width, height: frameHeight },
  };
}

/**
 * Decodes `input` (a file libvips reads itself, or bytes) once and yields the renditions in
 * each of `formats`, each encoded once per distinct size (an original smaller than 2400 px gives
 * one file content for lg and xl). Animated outputs, and `keepMetadata`, go through one pipeline
 * per size and format instead, since raw pixels carry neither frames' timing nor metadata.
 * `scores`: where `--quality auto` scores its trials (the caller's pool), needed when it searches.
 */
export async function* encodeRenditions(
  source: string,
  input: Buffer | string,
  info: SourceInfo,
  settings: Omit<RenderSettings, 'formats'>,
  formats: readonly OutputFormat[],
  scores?: ScorePool,
): AsyncGenerator<EncodedRendition> {
  const groups = groupBySize(renditionSizes(info.size));
  const withFormat = (format: OutputFormat): EncodeSettings => ({ ...settings, format });
  const alone = formats.filter((format) => keepsAnimation(info, format) || settings.keepMetadata);
  // With --quality auto, the metric's threads start while the original decodes (frames are not scored).
  const largest = groups[0]?.size;
  if (formats.some((format) => !keepsAnimation(info, format) && searches(withFormat(format), largest))) {
    if (!scores) throw new Error('--quality auto searches here, and no score pool was given');
    scores.warm();
  }
  try {
    const decode: Decode = { input, rgb16: await isRgb16(input) };
    for (const format of alone) yield* sizeBySize(decode, info, groups, withFormat(format), scores);
    const shared = formats.filter((format) => !alone.includes(format));
    if (shared.length > 0) yield* cascade(decode, groups, shared.map(withFormat), scores);
  } catch (error) {
    throw sourceErrorFromSharp(source, error);
  }
}

/** Each size decoded from the original on its own: for an animation's frames, or with `keepMetadata`. */
async function* sizeBySize(
  decode: Decode,
  info: SourceInfo,
  groups: SizeGroup[],
  settings: EncodeSettings,
  scores: ScorePool | undefined,
): AsyncGenerator<EncodedRendition> {
  const animated = keepsAnimation(info, settings.format);
  const done: EncodedRendition[] = [];
  const prints: Array<string | undefined> = [];
  let searched: Searched | undefined;
  for (const group of groups) {
    const sized = (frames: boolean) =>
      open(decode, settings, frames)
        .resize(group.size.width, group.size.height, { fit: 'fill' })
        .flatten(settings.format === 'jpeg' ? { background: WHITE } : false);
    const pipeline = sized(animated);
    const search = !animated && searches(settings, group.size);
    // The pixels to fingerprint and score: an animation's first frame.
    const own = isSmall(group.size) || search ? await rawOf(sized(false)) : undefined;
    prints.push(own && isSmall(group.size) ? fingerprint(own) : undefined);
    // Frames are not scored: an animation keeps the fixed quality.
    const auto = search ? await searchAlone(own!, settings, scores!, searched) : undefined;
    searched = auto ?? searched;
    // EXIF, XMP and IPTC kept; pixels converted to sRGB and tagged with its profile, as without.
    if (settings.keepMetadata) pipeline.withMetadata();
    const data = await encode(pipeline, withQuality(settings, auto?.measured.quality)).toBuffer();
    done.push({ ...group, format: settings.format, data, ...(auto && { measured: auto.measured }) });
  }
  const filled = fillFingerprints(prints);
  for (const [index, rendition] of done.entries()) yield { ...rendition, fingerprint: filled[index]! };
}

const WHITE = '#ffffff';

/**
 * Decode (with shrink-on-load where the largest rendition allows it) straight to the largest
 * rendition's pixels, then derive each smaller one from the one before it, and encode each size
 * in every format from the same pixels. Each encode starts as soon as its pixels exist and runs
 * alongside the rest of the chain, so a lone original keeps more than one core busy.
 */
async function* cascade(
  decode: Decode,
  groups: SizeGroup[],
  formats: EncodeSettings[],
  scores: ScorePool | undefined,
): AsyncGenerator<EncodedRendition> {
  const [first] = groups;
  const [settings] = formats;
  if (!first || !settings) return;
  // JPEG has no alpha: flattened onto white before resizing when it is the only format (as
  // always), else each size is flattened for it alone and the others keep their alpha.
  const onlyJpeg = formats.every((format) => format.format === 'jpeg');
  let pixels = await open(decode, settings, false)
    .resize(first.size.width, first.size.height, { fit: 'fill' })
    .flatten(onlyJpeg ? { background: WHITE } : false)
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const encodes: Array<Promise<EncodedRendition>> = [];
  // Per format, each size's fingerprint (small sizes) and, with --quality auto, its pixels,
  // searched once all exist (`searchSmallestFirst`).
  const prints = formats.map(() => [] as Array<string | undefined>);
  const searched = formats.map(() => [] as RawPixels[]);
  // Which format and size each encode is, in the order of `encodes`.
  const tags: Array<{ format: number; index: number }> = [];
  const flattens = !onlyJpeg && formats.some((format) => format.format === 'jpeg');
  try {
    for (const [index, group] of groups.entries()) {
      const flattened = flattens && pixels.info.channels % 2 === 0 ? await flattenRaw(pixels) : pixels;
      const fingerprints = new Map<RawPixels, string>();
      for (const [at, format] of formats.entries()) {
        const own = format.format === 'jpeg' ? flattened : pixels;
        const print = isSmall(group.size) ? (fingerprints.get(own) ?? fingerprint(own)) : undefined;
        if (print) fingerprints.set(own, print);
        prints[at]!.push(print);
        if (searches(format, group.size)) {
          searched[at]!.push(own);
          continue;
        }
        const palette = format.format === 'png' && paletteFor(format.png.palette, own.data, own.info);
        const encoded = encode(fromRaw(own.data, own.info), format, palette)
          .toBuffer()
          .then((data) => ({ ...group, format: format.format, data }));
        encodes.push(encoded);
        tags.push({ format: at, index });
        encoded.catch(() => undefined); // awaited below, in order; this only marks it handled meanwhile
      }
      const next = groups[index + 1];
      if (next) {
        pixels = await fromRaw(pixels.data, pixels.info)
          .resize(next.size.width, next.size.height, { fit: 'fill' })
          .raw()
          .toBuffer({ resolveWithObject: true });
      }
    }
    // Formats searched on the same pixels (all but a flattened JPEG's) share each size's reference.
    const references = new References(searched.flat(), settings.quality.sample, scores!);
    for (const [at, format] of formats.entries()) {
      if (!searches(format)) continue;
      // The sizes searched: the largest, down to the smallest SSIMULACRA2 can score (groups go largest first).
      const sizes = groups.slice(0, searched[at]!.length);
      for (const [index, found] of searchSmallestFirst(sizes, searched[at]!, format, references).entries()) {
        encodes.push(found);
        tags.push({ format: at, index });
      }
    }
  } finally {
    // Whatever happened, let every encode under way finish before the caller moves on.
    await Promise.allSettled(encodes);
  }
  const filled = prints.map(fillFingerprints);
  for (const [at, encoded] of encodes.entries()) {
    const { format, index } = tags[at]!;
    yield { ...(await encoded), fingerprint: filled[format]![index]! };
  }
}

/** Pixels with alpha, flattened onto white: what a JPEG shows of them. */
const flattenRaw = (pixels: RawPixels): Promise<RawPixels> =>
  fromRaw(pixels.data, pixels.info).flatten({ background: WHITE }).raw().toBuffer({ resolveWithObject: true });

/**
 * `--quality auto` over each size's pixels: the sizes scored whole, cheaply, one after another from
 * the smallest, then the sizes scored on tiles, the costly searches, all at once (they share the
 * cores). With `--no-quality-sample` every size is scored whole, so all go one after another: one
 * large reference held at a time. Each starts where the largest size scored whole before it ended
 * (its quality, moved by the difference in target at its score's slope) and assumes that slope: a
 * larger size needs about the same quality, so every search starts next to its answer.
 */
function searchSmallestFirst(
  groups: SizeGroup[],
  pixels: RawPixels[],
  settings: EncodeSettings,
  references: References,
): Array<Promise<EncodedRendition>> {
  const found: Array<Promise<EncodedRendition>> = [];
  let below: Promise<Searched> | undefined;
  for (let index = groups.length - 1; index >= 0; index--) {
    const before = below;
    const lease = references.lease(pixels[index]!);
    const search = (async () => chooseQuality(lease, settings, await before))();
    // Done with these pixels however the search ended (a smaller size's failure too), if not before.
    search.then(lease.done, lease.done);
    if (!references.sampled(pixels[index]!)) below = search;
    const rendition = search.then(({ data, measured }) => ({
      ...groups[index]!,
      format: settings.format,
      data,
      measured,
    }));
    rendition.catch(() => undefined); // awaited by the caller, in order; this only marks it handled meanwhile
    found[index] = rendition;
  }
  return found;
}

/**
 * Renditions up to this many pixels are fingerprinted from their own pixels; a larger one takes the
 * fingerprint of the largest rendition under it, whose pixels were resized from its own: the same
 * picture, at a fiftieth of the cost for a 15 MP rendition.
 */
const FINGERPRINT_PIXELS = 1 << 20;
const isSmall = (size: PixelSize) => size.width * size.height <= FINGERPRINT_PIXELS;

/** Each missing fingerprint (a large rendition's) taken from the next smaller rendition that has one. */
function fillFingerprints(prints: Array<string | undefined>): string[] {
  const filled: string[] = [];
  let smaller: string | undefined;
  for (let index = prints.length - 1; index >= 0; index--) {
    smaller = prints[index] ?? smaller;
    filled[index] = smaller!;
  }
  return filled;
}

/** True when `--quality auto` searches this format's quality. */
/**
 * Whether `--quality` searches these renditions' quality: a lossy format, and (given) a size SSIMULACRA2
 * can score; a smaller one (a thumbnail of a 7x3 original, a panorama's 300x1) keeps the fixed quality.
 */
const searches = (settings: EncodeSettings, size?: PixelSize) =>
  qualityTarget(settings.quality.mode) !== null && isLossy(settings.format) && (size === undefined || isScorable(size));
/** Each lossy encoder's quality range, for the search. */
const QUALITY_RANGE = { min: 10, max: 100 };

/** A rendition's search: its file and what was measured, and what a neighbouring size's search starts from. */
interface Searched {
  data: Buffer;
  measured: Measured;
  /** The score aimed at (`aimOf` the target). */
  aim: number;
  /** Score points per quality step between its trials, when they measured one. */
  slope: number | undefined;
}

/** What every search on one size's pixels scores against: the pixels or their sample, prepared in the pool. */
interface Reference {
  sample: RawPixels;
  sampled: boolean;
  pooled: PooledReference;
}

/** One search's hold on a size's pixels and their reference: `done` (once or more) when it needs them no more. */
interface Lease {
  pixels: RawPixels;
  /** The pool its reference is prepared in. */
  scores: ScorePool;
  take(): Promise<Reference>;
  done(): void;
  /** Runs `work` when no other lease of the same render runs work this way (`searchWhole`). */
  alone<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * The references of a render's pixels, each made once (the sample chosen, the metric's reference
 * half done in the pool) for every format searched on the same pixels, and released when the last
 * of those searches is done with it. `searched` lists the pixels once per search that will lease them.
 */
class References {
  /** Per pixels: the searches counted, those not done yet, and the reference once one asked for it. */
  readonly #entries = new Map<RawPixels, { searches: number; users: number; made?: Promise<Reference> }>();

  /** Whether a rendition over WHOLE_PIXELS is scored on a sample of its tiles (`--no-quality-sample`: never). */
  readonly #sample: boolean;

  /** Work its leases run one at a time (`Lease.alone`). */
  readonly #alone = pLimit(1);

  readonly #scores: ScorePool;

  constructor(searched: readonly RawPixels[], sample: boolean, scores: ScorePool) {
    this.#sample = sample;
    this.#scores = scores;
    for (const pixels of searched) {
      const entry = this.#entries.get(pixels) ?? { searches: 0, users: 0 };
      entry.searches++;
      entry.users++;
      this.#entries.set(pixels, entry);
    }
  }

  /** True when `pixels` are scored on a sample of their tiles. */
  sampled(pixels: RawPixels): boolean {
    return this.#sample && isSampled(pixels.info);
  }

  lease(pixels: RawPixels): Lease {
    const entry = this.#entries.get(pixels);
    if (!entry) throw new Error('pixels leased that no search was counted for');
    let held = true;
    return {
      pixels,
      scores: this.#scores,
      alone: (work) => this.#alone(work),
      take: () => {
        entry.made ??= makeReference(this.#scores, pixels, entry.searches, this.sampled(pixels));
        return entry.made;
      },
      done: () => {
        if (!held) return;
        held = false;
        if (--entry.users > 0) return;
        entry.made?.then(
          (reference) => reference.pooled.release(),
          () => undefined,
        );
      },
    };
  }
}

async function makeReference(
  scores: ScorePool,
  pixels: RawPixels,
  searches: number,
  sampled: boolean,
): Promise<Reference> {
  const sample = sampled ? samplePixels(pixels, await jpegProbe(pixels)) : pixels;
  return { sample, sampled, pooled: await scores.prepare(sample, searches) };
}

/** `chooseQuality` for one search on pixels of its own (each size decoded for one format). */
async function searchAlone(
  pixels: RawPixels,
  settings: EncodeSettings,
  scores: ScorePool,
  neighbour?: Searched,
): Promise<Searched> {
  const lease = new References([pixels], settings.quality.sample, scores).lease(pixels);
  return chooseQuality(lease, settings, neighbour).finally(lease.done);
}

/**
 * With `--quality auto` and a lossy format: the lowest quality whose SSIMULACRA2 score against the
 * leased pixels reaches the target, searched from where a neighbouring size's search ended, else
 * from the format's fixed quality, with the rendition encoded at it. Done with the lease once the
 * search ends (the caller makes sure of it should this throw first).
 */
async function chooseQuality(lease: Lease, settings: EncodeSettings, neighbour?: Searched): Promise<Searched> {
  const target = qualityTarget(settings.quality.mode);
  const format = settings.format;
  if (target === null || !isLossy(format)) throw new Error(`no quality to search for ${format}`);
  const { pixels } = lease;
  // The sample and the reference's half of the metric, done once for every quality (and format) tried.
  const { sample, sampled, pooled } = await lease.take();
  const scored = sampled ? 'tiles' : 'rendition';
  const aim = aimOf(target, scored);
  const slope = neighbour?.slope ?? SLOPE;
  const start = neighbour ? neighbour.measured.quality + (aim - neighbour.aim) / slope : settings.quality[format];
  const { best, trials } = await searchQuality(
    trialOn(sample, pooled, settings),
    // Scored whole by choice (--no-quality-sample): the lowest quality reaching the target, the one below tried.
    { target: aim, start, slope, exact: !settings.quality.sample, ...QUALITY_RANGE },
  ).finally(lease.done);
  // A sample far above what the picture needed where it was scored whole says more of its tiles than of
  // the picture (a few that no quality brings to the aim, say): the whole rendition decides.
  const whole = neighbour?.measured.scored === 'rendition' ? neighbour.measured.quality : undefined;
  if (sampled && whole !== undefined && best.quality > whole + SAMPLE_DOUBT) {
    // One such search at a time for an original: each holds the reference of a whole large rendition.
    return lease.alone(() => searchWhole(lease.scores, pixels, settings, target, { start: whole, slope }));
  }
  // A sample's encode is not the rendition's: encode the whole of it at the quality found.
  const data = sampled
    ? await encode(fromRaw(pixels.data, pixels.info), withQuality(settings, best.quality)).toBuffer()
    : best.result;
  const measured: Measured = {
    quality: best.quality,
    score: round(best.score),
    scored,
  };
  return { data, measured, aim, slope: slopeOf(trials) ?? neighbour?.slope };
}

/**
 * Qualities a sample's search may end above the quality the largest size scored whole needed, before
 * the whole rendition is searched instead. A sample aims TILE_MARGIN over the target, about 3 steps at
 * the usual slope, and a larger size needs a few more or fewer. On the bundled samples and the bench
 * corpus (the md, lg and xl of 28 JPEG and WebP originals), searches on tiles ended from 12 below to 15
 * above it, and three ended more than 10 above (ladybird's lg by 11, kleiber's lg and xl by 12 and 15):
 * searched whole, they took 4, 4 and 2 qualities less. A picture whose tiles no quality brings to the
 * aim (fine saturated stripes under 4:2:0; the test's) ended 16 above, 5 over what its whole needs.
 */
export const SAMPLE_DOUBT = 10;

/**
 * The lowest quality whose score, on the whole rendition, reaches `target` (an exact search from
 * `start`): what a sample that disagrees too much with the sizes scored whole is replaced by. Its
 * reference is the whole rendition's, held for this search alone.
 */
async function searchWhole(
  scores: ScorePool,
  pixels: RawPixels,
  settings: EncodeSettings,
  target: number,
  { start, slope }: { start: number; slope: number },
): Promise<Searched> {
  const pooled = await scores.prepare(pixels, 1);
  try {
    const { best, trials } = await searchQuality(trialOn(pixels, pooled, settings), {
      target,
      start,
      slope,
      exact: true,
      ...QUALITY_RANGE,
    });
    const measured: Measured = { quality: best.quality, score: round(best.score), scored: 'rendition' };
    return { data: best.result, measured, aim: target, slope: slopeOf(trials) ?? slope };
  } finally {
    pooled.release();
  }
}

/** A search's trial: `pixels` encoded at a quality, and scored against their reference, `pooled`. */
const trialOn =
  (pixels: RawPixels, pooled: PooledReference, settings: EncodeSettings) =>
  async (quality: number): Promise<{ score: number; result: Buffer }> => {
    const data = await encode(fromRaw(pixels.data, pixels.info), withQuality(settings, quality)).toBuffer();
    return { score: await pooled.score(await rawOf(sharp(data))), result: data };
  };

const round = (score: number) => Math.round(score * 100) / 100;

/** The settings with `format`'s quality set to `quality` (unchanged when undefined). */
function withQuality(settings: EncodeSettings, quality: number | undefined): EncodeSettings {
  if (quality === undefined) return settings;
  return { ...settings, quality: { ...settings.quality, [settings.format]: quality } };
}

/** 8-bit sRGB pixels of `image`, as scored. */
const rawOf = (image: Sharp): Promise<RawPixels> =>
  image.toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });

/** An original to decode: a file libvips reads itself, or bytes, and whether its pixels are 16-bit RGB. */
interface Decode {
  input: Buffer | string;
  rgb16: boolean;
}

/** Whether `input` decodes to 16-bit RGB (a 16-bit PNG or TIFF, a 10-bit AVIF), from its header. */
async function isRgb16(input: Buffer | string): Promise<boolean> {
  return (await sharp(input, { limitInputPixels: false }).metadata()).space === 'rgb16';
}

function open({ input, rgb16 }: Decode, settings: EncodeSettings, animated: boolean): Sharp {
  const options: SharpOptions = {
    limitInputPixels: settings.pixelLimit > 0 ? settings.pixelLimit : false,
    failOn: 'warning',
    autoOrient: true,
    animated,
  };
  // sharp works on 16-bit RGB in Display P3 (sRGB for everything else): it converts an embedded
  // profile to P3, and `withMetadata()`'s sRGB profile from P3, also for untagged pixels, which are
  // sRGB; but `toColourspace('srgb')` only drops the low bytes. Untagged 16-bit RGB came out more
  // saturated with `keepMetadata`, a tagged one less saturated without. As 8-bit sRGB from the start
  // it goes the way 8-bit originals do, which stay as they were.
  return rgb16 ? sharp(input, options).pipelineColourspace('srgb') : sharp(input, options);
}

function fromRaw(data: Uint8Array, info: RawPixels['info']): Sharp {
  const channels = info.channels as 1 | 2 | 3 | 4;
  return sharp(data, { raw: { width: info.width, height: info.height, channels } });
}

/**
 * The encoder for `settings.format`, with its settings. `palette`: a PNG is written as an 8-bit
 * palette image, exactly (every colour kept: there are at most 256) or quantised (`lossy`).
 */
function encode(pipeline: Sharp, settings: EncodeSettings, palette: PaletteMode = false): Sharp {
  const { quality, jpeg, png, webp, avif } = settings;
  switch (settings.format) {
    case 'jpeg':
      return pipeline.jpeg({
        quality: quality.jpeg,
        mozjpeg: jpeg.mozjpeg,
        chromaSubsampling: jpeg.chroma,
        quantisationTable: jpeg.table,
      });
    case 'png': {
      const common = { compressionLevel: png.compression, adaptiveFiltering: png.filtering };
      if (palette === 'exact') return pipeline.png({ ...common, palette: true, colours: 256, dither: 0, quality: 100 });
      return pipeline.png(palette === 'lossy' ? { ...common, palette: true } : common);
    }
    case 'webp':
      return pipeline.webp({ quality: quality.webp, effort: webp.effort });
    case 'avif':
      return pipeline.avif({ quality: quality.avif, effort: avif.effort, chromaSubsampling: avif.chroma });
    case 'gif':
      return pipeline.gif();
  }
}

/** How a PNG rendition is written: truecolour (false), a palette of its own colours, or quantised. */
type PaletteMode = false | 'exact' | 'lossy';

/** `--png-palette` for these pixels: `auto` takes a palette only where it holds every colour. */
function paletteFor(setting: 'auto' | 'lossy' | 'off', data: Uint8Array, info: { channels: number }): PaletteMode {
  if (setting === 'off') return false;
  if (setting === 'lossy') return 'lossy';
  return countColours(data, info.channels, 256) <= 256 ? 'exact' : false;
}

/**
 * The number of distinct colours (alpha included) in raw 8-bit pixels, counted up to `limit + 1`:
 * a photograph stops after a few hundred pixels, a flat artwork is read to the end.
 */
export function countColours(data: Uint8Array, channels: number, limit: number): number {
  const seen = new Set<number>();
  for (let i = 0; i < data.length; i += channels) {
    let colour = 0;
    for (let c = 0; c < channels; c++) colour = colour * 256 + data[i + c]!;
    seen.add(colour);
    if (seen.size > limit) break;
  }
  return seen.size;
}

/** Distinct sizes, largest first, each with the keys that share it. */
function groupBySize(sizes: Record<RenditionKey, PixelSize>): SizeGroup[] {
  const groups: SizeGroup[] = [];
  for (const key of [...RENDITION_KEYS].reverse()) {
    const size = sizes[key];
    const same = groups.find((g) => g.size.width === size.width && g.size.height === size.height);
    if (same) same.keys.push(key);
    else groups.push({ keys: [key], size });
  }
  return groups;
}
