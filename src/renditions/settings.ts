/**
 * A batch's settings, checked once: everything that shapes the files, and how the batch runs.
 */
import { availableParallelism } from 'node:os';
import { InvalidArgumentError } from '../errors.js';
import { DEFAULT_QUALITY, type ForceableFormat, type OutputFormat, type QualitySettings } from './formats.js';
import { DEFAULT_PIXEL_LIMIT } from './pipeline.js';
import { DEFAULT_MEDIA_URL, type NamingStyle } from './rules.js';

/** Bumped when the pipeline's output changes for the same settings, so old files are redone. */
const PIPELINE_VERSION = 1;

/** The options `resolveSettings` reads (a subset of `RenderOptions`). */
export interface SettingsOptions {
  mediaUrl?: string | undefined;
  naming?: NamingStyle | undefined;
  format?: ForceableFormat | undefined;
  quality?: Partial<QualitySettings> | undefined;
  keepMetadata?: boolean | undefined;
  pixelLimit?: number | undefined;
  concurrency?: number | undefined;
}

export interface Settings {
  concurrency: number;
  naming: NamingStyle;
  mediaUrl: string;
  quality: QualitySettings;
  keepMetadata: boolean;
  pixelLimit: number;
  format: ForceableFormat | undefined;
}

/** The settings, each checked: throws `InvalidArgumentError` naming a bad one. */
export function resolveSettings(options: SettingsOptions): Settings {
  const quality = { ...DEFAULT_QUALITY, ...options.quality };
  for (const [format, value] of Object.entries(quality)) {
    if (!Number.isInteger(value) || value < 1 || value > 100) {
      throw new InvalidArgumentError(`Expected an integer from 1 to 100 for the ${format} quality but got ${value}`);
    }
  }
  const concurrency = options.concurrency ?? availableParallelism();
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new InvalidArgumentError(`Expected a positive integer for concurrency but got ${concurrency}`);
  }
  const pixelLimit = options.pixelLimit ?? DEFAULT_PIXEL_LIMIT;
  if (!Number.isInteger(pixelLimit) || pixelLimit < 0) {
    throw new InvalidArgumentError(`Expected a non-negative integer for the pixel limit but got ${pixelLimit}`);
  }
  const mediaUrl = options.mediaUrl ?? DEFAULT_MEDIA_URL;
  if (!mediaUrl.startsWith('/') && !/^https?:\/\/[^/]/i.test(mediaUrl)) {
    throw new InvalidArgumentError(
      `Expected a path starting with / or an absolute http(s) URL for the media URL but got '${mediaUrl}'`,
    );
  }
  return {
    concurrency,
    naming: options.naming ?? 'max',
    mediaUrl,
    quality,
    keepMetadata: options.keepMetadata ?? false,
    pixelLimit,
    format: options.format,
  };
}

/**
 * Everything that changes the bytes written for an original. (`keep-metadata srgb`: kept
 * metadata once meant the original's own profile, unconverted; those files are redone.)
 */
export function settingsKey(settings: Settings, format: OutputFormat): string {
  const quality = format === 'jpeg' || format === 'webp' || format === 'avif' ? settings.quality[format] : '-';
  return `v${PIPELINE_VERSION} ${format} q${quality} ${settings.naming}${settings.keepMetadata ? ' keep-metadata srgb' : ''}`;
}
