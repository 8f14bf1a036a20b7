/**
 * An original decoded once and its five renditions derived from it, each resized from the previous
 * (larger) one's pixels and encoded in every format as soon as its pixels exist; with
 * `--quality auto`, the lossy formats' qualities searched (quality/search.ts) over those pixels.
 */

import { sourceErrorFromSharp } from '../errors.js';
import { fingerprint } from '../picture/index.js';
import { jpegProbe } from '../pixels/read.js';
import type { Measured } from '../quality/auto.js';
import type { RawPixels } from '../quality/linear.js';
import type { ScorePool } from '../quality/score-pool.js';
import {
  type ReferenceOptions,
  References,
  type Searched,
  type SearchGoal,
  searchAlone,
  searchRendition,
} from '../quality/search.js';
import { isScorable } from '../quality/ssimulacra2.js';
import { type Decode, flattenRaw, fromRaw, isRgb16, open, rawOf, type SourceInfo, WHITE } from './decode.js';
import { type EncodeSettings, encode, paletteFor, paletteOfImage, searchEncoder, withQuality } from './encode.js';
import { isLossy, keepsAnimation, type OutputFormat } from './formats.js';
import { type PixelSize, RENDITION_KEYS, type RenditionKey, renditionSizes } from './rules.js';
import { qualityTarget, type RenderSettings } from './settings.js';

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

/**
 * Decodes `input` (a file libvips reads itself, or bytes) once and yields the renditions in
 * each of `formats`, each encoded once per distinct size (an original smaller than 2400 px gives
 * one file content for lg and xl). Animated outputs, and `keepMetadata`, go through one pipeline
 * per size and format instead, since raw pixels carry neither frames' timing nor metadata.
 * `scores`: where `--quality auto` scores its trials (the caller's pool), needed when it searches;
 * `rgb16`: whether the pixels are 16-bit RGB, when the caller read the header already (`readSourceHeader`).
 */
export async function* encodeRenditions(
  source: string,
  input: Buffer | string,
  info: SourceInfo,
  settings: Omit<RenderSettings, 'formats'>,
  formats: readonly OutputFormat[],
  scores?: ScorePool,
  rgb16?: boolean,
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
    const decode: Decode = { input, rgb16: rgb16 ?? (await isRgb16(input)) };
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
      open(decode, settings.pixelLimit, frames)
        .resize(group.size.width, group.size.height, { fit: 'fill' })
        .flatten(settings.format === 'jpeg' ? { background: WHITE } : false);
    const pipeline = sized(animated);
    const search = !animated && searches(settings, group.size);
    // The pixels to fingerprint and score: an animation's first frame.
    const own = isSmall(group.size) || search ? await rawOf(sized(false)) : undefined;
    // A PNG's palette as the cascade chooses it (kept metadata once left every PNG truecolour).
    const palette =
      settings.format === 'png' &&
      (own
        ? paletteFor(settings.png.palette, own)
        : await paletteOfImage(settings.png.palette, () => sized(false), group.size));
    prints.push(own && isSmall(group.size) ? fingerprint(own) : undefined);
    // Frames are not scored: an animation keeps the fixed quality.
    const auto = search
      ? await searchAlone(own!, goalOf(settings), searchEncoder(settings), referenceOptions(settings, scores), searched)
      : undefined;
    searched = auto ?? searched;
    // EXIF, XMP and IPTC kept; pixels converted to sRGB and tagged with its profile, as without.
    if (settings.keepMetadata) pipeline.withMetadata();
    const data = await encode(pipeline, withQuality(settings, auto?.measured.quality), palette).toBuffer();
    done.push({ ...group, format: settings.format, data, ...(auto && { measured: auto.measured }) });
  }
  const filled = fillFingerprints(prints);
  for (const [index, rendition] of done.entries()) yield { ...rendition, fingerprint: filled[index]! };
}

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
  let pixels = await open(decode, settings.pixelLimit, false)
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
        const palette = format.format === 'png' && paletteFor(format.png.palette, own);
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
    const searchedAny = formats.some((format) => searches(format));
    const references = searchedAny ? new References(searched.flat(), referenceOptions(settings, scores)) : undefined;
    for (const [at, format] of formats.entries()) {
      if (!references || !searches(format)) continue;
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
  const goal = goalOf(settings);
  const encoder = searchEncoder(settings);
  let below: Promise<Searched> | undefined;
  for (let index = groups.length - 1; index >= 0; index--) {
    const before = below;
    const lease = references.lease(pixels[index]!);
    const search = (async () => searchRendition(lease, goal, encoder, await before))();
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

/**
 * Whether `--quality` searches these renditions' quality: a lossy format, and (given) a size SSIMULACRA2
 * can score; a smaller one (a thumbnail of a 7x3 original, a panorama's 300x1) keeps the fixed quality.
 */
const searches = (settings: EncodeSettings, size?: PixelSize) =>
  qualityTarget(settings.quality.mode) !== null && isLossy(settings.format) && (size === undefined || isScorable(size));

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

/** What `settings`' searches aim at: its target, from its format's fixed quality. */
function goalOf(settings: EncodeSettings): SearchGoal {
  const target = qualityTarget(settings.quality.mode);
  if (target === null || !isLossy(settings.format)) throw new Error(`no quality to search for ${settings.format}`);
  return { target, start: settings.quality[settings.format] };
}

/** How a render's references are made: sampled or not as `settings` say, in the caller's pool. */
function referenceOptions(settings: EncodeSettings, scores: ScorePool | undefined): ReferenceOptions {
  if (!scores) throw new Error('--quality auto searches here, and no score pool was given');
  return { sample: settings.quality.sample, scores, probe: jpegProbe };
}
