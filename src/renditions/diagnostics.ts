/**
 * What an original's rendering has to say besides its files, each a pure function of what was
 * planned and written, in words for the batch's warnings (null: nothing to say).
 */
import { aimOf } from '../quality/auto.js';
import { isScorable, SCORABLE_SIZE } from '../quality/ssimulacra2.js';
import { count, formatBytes } from '../units.js';
import type { SourceInfo } from './decode.js';
import {
  isAnimationFormat,
  isLossy,
  keepsAlpha,
  keepsAnimation,
  type OutputFormat,
  stillOfAnimation,
} from './formats.js';
import type { ManifestEntry } from './manifest.js';
import type { Placeholder } from './placeholder.js';
import type { Output } from './plan.js';
import { RENDITION_KEYS, type RenditionKey } from './rules.js';
import { qualityTarget, type RenderSettings } from './settings.js';

type Renditions = ManifestEntry['renditions'];

/**
 * The renditions of an animation in formats that keep only its first frame, in words, if any; where
 * the primary (`primary`) keeps the animation, that markup leaves them out (`stillOfAnimation`).
 */
export function firstFrameOnly(info: SourceInfo, outputs: readonly Output[], primary: OutputFormat): string | null {
  const still = outputs.filter(
    (output) => info.pages > 1 && isAnimationFormat(info.format) && !keepsAnimation(info, output.format),
  );
  if (still.length === 0) return null;
  const formats = still.map((output) => output.format).join(', ');
  // Either the primary keeps the animation, and every still is an alternate markup leaves out, or none is.
  const markup = still.some((output) => stillOfAnimation(info, primary, output.format))
    ? `: markup leaves them out, as a browser would show them instead of its animated ${primary} ones`
    : '';
  return `animated (${info.pages} frames); its ${formats} renditions show the first frame only${markup}`;
}

/**
 * With `--quality auto`, what an animation's lossy renditions were encoded at instead, if any kept
 * the animation: the search scores still pictures.
 */
export function animatedUnsearched(
  settings: RenderSettings,
  info: SourceInfo,
  outputs: readonly Output[],
): string | null {
  if (qualityTarget(settings.quality.mode) === null) return null;
  const kept = outputs
    .map((output) => output.format)
    .filter(isLossy)
    .filter((format) => keepsAnimation(info, format));
  if (kept.length === 0) return null;
  const fixed = kept.map((format) => `--${format}-quality ${settings.quality[format]}`).join(', ');
  return (
    `animated (${info.pages} frames): --quality ${settings.quality.mode} scores still pictures, ` +
    `so its ${kept.join(', ')} renditions are at ${fixed}`
  );
}

/**
 * With `--quality auto`, the still renditions too small for SSIMULACRA2 to score (under 8x8: a tiny or
 * a thin original), if any, in words: they keep the fixed quality.
 */
export function tooSmallToScore(settings: RenderSettings, info: SourceInfo, outputs: readonly Output[]): string | null {
  if (qualityTarget(settings.quality.mode) === null) return null;
  const lossy = outputs.filter((output) => isLossy(output.format) && !keepsAnimation(info, output.format));
  const keys = RENDITION_KEYS.filter((key) => lossy.some((output) => !isScorable(output.files[key])));
  if (keys.length === 0) return null;
  const formats = [...new Set(lossy.map((output) => output.format))].filter(isLossy);
  const fixed = formats.map((format) => `--${format}-quality ${settings.quality[format]}`).join(', ');
  const sizes = [...new Set(keys.map((key) => `${lossy[0]!.files[key].width}x${lossy[0]!.files[key].height}`))];
  const which = keys.length === RENDITION_KEYS.length ? 'all its renditions' : `its ${keys.join(', ')} renditions`;
  return (
    `${which} (${sizes.length > 1 ? `${sizes[0]} to ${sizes.at(-1)}` : sizes[0]}) are too small for ` +
    `--quality ${settings.quality.mode} to score (SSIMULACRA2 needs ${SCORABLE_SIZE} pixels): at ${fixed}`
  );
}

/**
 * With `--quality auto`, the renditions whose highest quality stays under the score aimed at (the
 * target, TILE_MARGIN over it on a sample of tiles), if any, in words, with why where a setting says.
 */
export function underTarget(settings: RenderSettings, format: OutputFormat, written: Renditions) {
  const target = qualityTarget(settings.quality.mode);
  if (target === null) return null;
  const aim = (key: RenditionKey) => aimOf(target, written[key].scored ?? 'rendition');
  const under = RENDITION_KEYS.filter((key) => (written[key].score ?? Number.POSITIVE_INFINITY) < aim(key));
  if (under.length === 0) return null;
  const scores = under
    .map((key) => {
      const { score, quality, scored } = written[key];
      return `${key} ${score}${scored === 'tiles' ? ` on tiles (aiming at ${aim(key)})` : ''} at quality ${quality}`;
    })
    .join(', ');
  let hint = '';
  if (format === 'webp') hint = ' (lossy WebP always halves colour resolution)';
  if (format === 'jpeg' && settings.jpeg.chroma === '4:2:0') {
    hint = ' (4:2:0 chroma halves colour resolution; --jpeg-chroma 4:4:4 keeps it)';
  }
  return `SSIMULACRA2 ${target} not reached by ${format}${hint}: ${scores}; kept at the highest quality tried`;
}

/** The bytes of an output's files, each file once (lg and xl of a small original are one file). */
const totalBytes = (renditions: Renditions) =>
  [...new Map(Object.values(renditions).map((file) => [file.path, file.bytes])).values()].reduce((a, b) => a + b, 0);

/**
 * The alternates whose files weigh more than the primary's (a WebP of a flat PNG, a JPEG of line art),
 * in words, if any: offering them would make a browser download more for the same picture, so
 * markup (`pictureHtml`) leaves them out.
 */
export function largerAlternates(outputs: Output[], renditions: Array<Renditions | undefined>): string | null {
  const [primary, ...alternates] = renditions.map((each) => (each ? totalBytes(each) : undefined));
  if (primary === undefined) return null;
  const heavier = alternates.flatMap((bytes, index) =>
    bytes !== undefined && bytes > primary ? [{ format: outputs[index + 1]!.format, bytes }] : [],
  );
  if (heavier.length === 0) return null;
  // Exact where rounding would say the same figure twice: "avif (1.6 kB) ... larger than its jpeg ones (1.6 kB)".
  const exact = heavier.some(({ bytes }) => formatBytes(bytes) === formatBytes(primary));
  const size = (bytes: number) => (exact ? `${count(bytes)} bytes` : formatBytes(bytes));
  const larger = heavier.map(({ format, bytes }) => `${format} (${size(bytes)})`);
  return (
    `its ${larger.join(', ')} alternate renditions are larger than its ${outputs[0]!.format} ones ` +
    `(${size(primary)}): markup leaves them out, as a browser would download more for the same picture`
  );
}

/**
 * The alternates in a format without transparency (JPEG, flattened onto white) of a picture that has
 * some, beside a primary that keeps it, in words, if any: a browser would take them and show the
 * picture on white, so markup (`pictureHtml`) leaves them out.
 */
export function flattenedAlternates(outputs: Output[], placeholder: Placeholder | undefined): string | null {
  const [primary, ...alternates] = outputs.map((output) => output.format);
  if (!placeholder?.transparent || primary === undefined || !keepsAlpha(primary)) return null;
  const flattened = alternates.filter((format) => !keepsAlpha(format));
  if (flattened.length === 0) return null;
  return (
    `its ${flattened.join(', ')} alternate renditions are flattened onto white, where its ${primary} ones keep ` +
    'its transparency: markup leaves them out, as a browser would show them instead'
  );
}

/**
 * Why a PNG rendition at its PNG original's own pixel size came out larger than the original file,
 * if it did: the original was compressed harder than libpng does at these settings, or, with
 * `keepMetadata`, the rendition carries metadata the original did not (an sRGB profile at least).
 */
export function largerPng(
  info: SourceInfo,
  format: OutputFormat,
  written: ManifestEntry['renditions'],
  originalBytes: number | undefined,
  keepMetadata: boolean,
): string | null {
  if (format !== 'png' || info.format !== 'png' || originalBytes === undefined) return null;
  const same = Object.values(written).find((f) => f.width === info.size.width && f.height === info.size.height);
  if (!same || same.bytes <= originalBytes) return null;
  const why = keepMetadata
    ? 'the metadata --keep-metadata keeps (its EXIF, and an sRGB profile whether the original had one or not) ' +
      'or the original compressed harder than libpng at these settings; try without --keep-metadata, '
    : 'the original is compressed harder than libpng at these settings; try ';
  return (
    `its ${same.width}x${same.height} PNG rendition (${same.bytes} bytes) is larger than the original file ` +
    `(${originalBytes} bytes) at the same size: ${why}--png-compression 9, --png-palette lossy, or --format webp`
  );
}
