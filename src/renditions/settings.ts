/**
 * The render settings: everything that shapes the files an original becomes, defined once.
 *
 * `renderSettingsSchema` is the one definition. The library's `RenderOptions`, the CLI's
 * `render` flags, the queue's job data and batch records, and the manifest's settings key are
 * all derived from it, so a new setting is one entry here (and the code that uses it): its
 * check, its default, its label in messages and its place in a job come with it. Beside it, by
 * its path, its flag and help (src/cli/setting-flags.ts) and whether files made before it are
 * redone (settings-key.ts); a setting missing from either is refused at once, and
 * test/renditions/settings.test.ts looks for every one. Pure: no sharp, no I/O (`render --help`
 * reads it).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../errors.js';
import { FORMAT_CHOICES, spelledOut } from './formats.js';
import { DEFAULT_MEDIA_URL, NAMING_STYLES } from './rules.js';

/** sharp's own default pixel limit (0x3FFF * 0x3FFF), the guard against decompression bombs. */
export const DEFAULT_PIXEL_LIMIT = 268_402_689;

/**
 * The libvips threads per pipeline (`sharp.concurrency`) the CLI renders with, and the only count
 * an AVIF's key does not name. libvips gives its thread count to the AV1 encoder, which cuts a
 * picture into up to that many tiles: the same settings on other threads write other AVIF bytes
 * (docs/guides/shards.md#the-same-bytes-everywhere). JPEG, PNG, WebP and GIF do not depend on it.
 */
export const AVIF_THREADS = 1;

/**
 * What messages need to know of a setting, beside its definition: the library's own (`resolveSettings`)
 * and the CLI's, which names its flag instead of its label.
 */
export interface SettingMeta {
  /** How messages name it (`the jpeg quality`). */
  label: string;
  /** What a valid value is, where the schema cannot say it in words (`a path starting with /`). */
  expected?: string;
}

/** The registry of settings' metadata: `settingMeta.get(schema)` for each leaf of the settings schema. */
export const settingMeta = z.registry<SettingMeta>();

const quality = (format: 'jpeg' | 'webp' | 'avif', fallback: number) =>
  z
    .int()
    .min(1)
    .max(100)
    .default(fallback)
    .register(settingMeta, { label: `the ${format} quality` });

const effort = (format: 'webp' | 'avif', max: number, fallback: number) =>
  z
    .int()
    .min(0)
    .max(max)
    .default(fallback)
    .register(settingMeta, { label: `the ${format} effort` });

const chroma = (format: 'jpeg' | 'avif', fallback: '4:2:0' | '4:4:4') =>
  z
    .enum(['4:2:0', '4:4:4'])
    .default(fallback)
    .register(settingMeta, { label: `the ${format} chroma subsampling` });

/**
 * `--quality auto`'s target when no score is given: SSIMULACRA2 80, between "high quality" (70) and
 * "visually lossless" (90) on the metric's own scale. JPEG at quality 80 gives 76-80 on photographs
 * (docs/performance.md), so the default asks a little more than today's fixed quality gives at its
 * worst, where an artwork's fidelity is the point of the site, and far less where a picture allows it.
 */
export const DEFAULT_QUALITY_TARGET = 80;
/** `quality.sample`'s default: renditions over WHOLE_PIXELS scored on a sample of their tiles. */
export const SAMPLE = true;
/** The lowest and highest target `auto:<score>` takes. */
export const TARGET_RANGE = [30, 99] as const;

/** The SSIMULACRA2 score `mode` asks every rendition to reach, or null for fixed quality. */
export function qualityTarget(mode: string): number | null {
  if (mode === 'fixed') return null;
  if (mode === 'auto') return DEFAULT_QUALITY_TARGET;
  const match = /^auto:(\d{1,2}(?:\.\d+)?)$/.exec(mode);
  const score = match ? Number(match[1]) : Number.NaN;
  if (!(score >= TARGET_RANGE[0] && score <= TARGET_RANGE[1])) throw new RangeError(`not a quality mode: ${mode}`);
  return score;
}

const isQualityMode = (mode: string) => {
  try {
    qualityTarget(mode);
    return true;
  } catch {
    return false;
  }
};

/** A path or an http(s) URL, with nothing a `srcset` or an HTML attribute would split or end at. */
const isMediaUrl = (value: string) =>
  (value.startsWith('/') || /^https?:\/\/[^/]/i.test(value)) && !/[\s"'<>\\,]/.test(value);

export const renderSettingsSchema = z.object({
  /** URL prefix of the output folder in Image objects: a path (`/media/`) or an absolute http(s) URL. */
  mediaUrl: z.string().refine(isMediaUrl).default(DEFAULT_MEDIA_URL).register(settingMeta, {
    label: 'the media URL',
    expected: 'a path starting with / or an absolute http(s) URL, without spaces, quotes, <, >, \\ or commas',
  }),
  /**
   * Each URL of an Image object carries its file's version, `?v=<first 8 hex of its SHA-256>`: a
   * changed file is a new URL, so a cache may keep each one forever (`immutable`). Off for a site
   * that purges its CDN when it publishes instead. URLs only: the files' bytes are the same.
   */
  urlVersions: z.boolean().default(true).register(settingMeta, { label: 'URL versions' }),
  /** `max`: `<name>.max-<n>x<n>.<ext>`; `underscore`: `<name>_<n>x<n>.<ext>`. */
  naming: z.enum(NAMING_STYLES).default('max').register(settingMeta, { label: 'the naming style' }),
  /**
   * The formats every rendition is written in, each from the same decoded pixels: the first is the
   * primary, the one the Image object describes; the others are its alternates. `keep`: the
   * original's own web format (JPEG for formats browsers do not show, PNG where they have alpha).
   */
  formats: z
    .array(z.preprocess(spelledOut, z.enum(FORMAT_CHOICES)))
    .min(1)
    .refine((list) => new Set(list).size === list.length)
    .default(['keep'])
    .register(settingMeta, {
      label: 'the formats',
      expected: `a comma-separated list of ${FORMAT_CHOICES.join(', ')}, each at most once`,
    }),
  /** Encoder quality (1-100) of the lossy formats; PNG and GIF are lossless here. Defaults: sharp's own. */
  quality: z
    .object({
      /**
       * `fixed`: each format's quality below. `auto`: each rendition encoded at the lowest quality
       * whose SSIMULACRA2 score, against its pixels before encoding, reaches DEFAULT_QUALITY_TARGET;
       * `auto:<score>`, that score. JPEG, WebP and AVIF (PNG and GIF are lossless).
       */
      mode: z
        .string()
        .refine(isQualityMode)
        .default('fixed')
        .register(settingMeta, {
          label: 'the quality mode',
          expected: `fixed, auto, or auto:<score> with a score from ${TARGET_RANGE[0]} to ${TARGET_RANGE[1]}`,
        }),
      /**
       * With `auto`, renditions over WHOLE_PIXELS are scored on a sample of their tiles, aimed TILE_MARGIN
       * over the target (quality/auto.ts); off, every rendition is scored whole, one size after another:
       * each score recorded is the rendition's own, each quality the lowest reaching the target (the one
       * below it tried and short: an exact search), for 5 to 9 times auto's time and, while a 15 MP
       * rendition is searched, about 1 GB for the metric's reference (docs/commands/render.md#quality).
       */
      sample: z.boolean().default(SAMPLE).register(settingMeta, { label: 'quality sampling' }),
      jpeg: quality('jpeg', 80),
      webp: quality('webp', 80),
      avif: quality('avif', 50),
    })
    .prefault({}),
  /** JPEG's encoder: mozjpeg's trellis quantisation and scan optimisation, chroma subsampling, quantisation table. */
  jpeg: z
    .object({
      mozjpeg: z.boolean().default(false).register(settingMeta, { label: 'jpeg mozjpeg' }),
      chroma: chroma('jpeg', '4:2:0'),
      /**
       * The quantisation table (sharp's `quantisationTable`), or the encoder's own. Table 5 (Klein, Silverstein
       * and Carney's) reaches an SSIMULACRA2 target with 6-14% fewer bytes than libjpeg's own, but at equal
       * bytes Butteraugli prefers libjpeg's on every rendition compared: the metrics disagree, so no default
       * changes (docs/quality.md#jpegs-quantisation-table-where-two-metrics-disagree).
       */
      table: z.int().min(0).max(8).optional().register(settingMeta, { label: 'the jpeg quantisation table' }),
    })
    .prefault({}),
  /** PNG's encoder: a palette where it loses nothing, zlib's level, row filters. */
  png: z
    .object({
      palette: z.enum(['auto', 'lossy', 'off']).default('auto').register(settingMeta, { label: 'the png palette' }),
      compression: z.int().min(0).max(9).default(6).register(settingMeta, { label: 'the png compression' }),
      filtering: z.boolean().default(true).register(settingMeta, { label: 'png filtering' }),
    })
    .prefault({}),
  /** WebP's encoder effort. */
  webp: z.object({ effort: effort('webp', 6, 4) }).prefault({}),
  /**
   * AVIF's encoder effort and chroma subsampling. Effort 1: a 24 MP original's five renditions in
   * 2.4-5.3 s instead of 38-57, for 7.5% more bytes than effort 4 over the corpus (docs/performance.md#formats).
   */
  avif: z.object({ effort: effort('avif', 9, 1), chroma: chroma('avif', '4:4:4') }).prefault({}),
  /** Keep EXIF, XMP and IPTC (with an sRGB ICC profile) instead of stripping them. */
  keepMetadata: z.boolean().default(false).register(settingMeta, { label: 'keep-metadata' }),
  /** Largest original, in pixels (width x height x frames), that will be decoded; 0 for no limit. */
  pixelLimit: z.int().min(0).default(DEFAULT_PIXEL_LIMIT).register(settingMeta, { label: 'the pixel limit' }),
});

/** The settings of a batch, every one resolved. */
export type RenderSettings = z.output<typeof renderSettingsSchema>;
/** The settings as a caller gives them: any may be left out for its default. */
export type RenderSettingsInput = z.input<typeof renderSettingsSchema>;
/** The quality mode and the fixed encoder quality (1-100) per lossy format. */
export type QualitySettings = RenderSettings['quality'];

/** Any schema of settings shaped like `renderSettingsSchema` (a test extends it with a setting of its own). */
export type SettingsSchema = z.ZodObject<z.ZodRawShape>;

/**
 * Each setting's path, dotted (`quality.jpeg`): what the tables beside the schema are keyed by, its
 * flags (src/cli/setting-flags.ts) and its key policy (settings-key.ts), so that the compiler asks
 * each of them for every setting.
 */
export type SettingPath = LeafPaths<RenderSettings>;
type LeafPaths<T> = {
  [K in keyof T & string]-?: T[K] extends readonly unknown[]
    ? K
    : NonNullable<T[K]> extends object
      ? `${K}.${LeafPaths<NonNullable<T[K]>>}`
      : K;
}[keyof T & string];

/** One setting: where it sits in the settings object, its schema, its metadata. */
export interface SettingLeaf {
  /** Its path in the settings object: `['quality', 'jpeg']`. */
  path: string[];
  /** Its schema, without its default or optional wrapper. */
  type: z.ZodType;
  meta: SettingMeta;
  /** Its default, or undefined when it has none (`format`). */
  fallback: unknown;
}

/** Every setting of `schema`, in order, nested objects (`quality`) walked. */
export function settingLeaves(schema: SettingsSchema = renderSettingsSchema): SettingLeaf[] {
  const leaves: SettingLeaf[] = [];
  const walk = (shape: z.ZodRawShape, at: string[]) => {
    for (const [name, field] of Object.entries(shape)) {
      const inner = unwrap(field as z.ZodType);
      if (inner instanceof z.ZodObject) {
        walk(inner.shape, [...at, name]);
        continue;
      }
      const meta = settingMeta.get(field as z.ZodType);
      if (!meta) throw new Error(`setting ${[...at, name].join('.')} has no metadata (register it with settingMeta)`);
      const fallback = field instanceof z.ZodDefault ? (field.def.defaultValue as unknown) : undefined;
      leaves.push({ path: [...at, name], type: inner, meta, fallback });
    }
  };
  walk(schema.shape, []);
  return leaves;
}

function unwrap(type: z.ZodType): z.ZodType {
  if (type instanceof z.ZodDefault || type instanceof z.ZodPrefault || type instanceof z.ZodOptional) {
    return unwrap(type.unwrap() as z.ZodType);
  }
  return type;
}

/** The value of a setting in a settings object. */
export function valueAt(settings: object, path: string[]): unknown {
  let value: unknown = settings;
  for (const name of path) value = (value as Record<string, unknown> | undefined)?.[name];
  return value;
}

/** What a valid value of `leaf` is, in words: `an integer from 1 to 100`. */
export function expectedValue(leaf: Pick<SettingLeaf, 'type' | 'meta'>): string {
  if (leaf.meta.expected) return leaf.meta.expected;
  const { type } = leaf;
  if (type instanceof z.ZodNumber) {
    const { minValue: min, maxValue: max } = type;
    if (min !== null && max !== null && max < Number.MAX_SAFE_INTEGER) return `an integer from ${min} to ${max}`;
    return min === 0 ? 'a non-negative integer' : min === 1 ? 'a positive integer' : `an integer >= ${min}`;
  }
  if (type instanceof z.ZodEnum) return `one of ${type.options.join(', ')}`;
  if (type instanceof z.ZodBoolean) return 'true or false';
  return 'a valid value';
}

/**
 * The settings, each checked and defaulted: throws `InvalidArgumentError` naming the first bad
 * one (`Expected an integer from 1 to 100 for the jpeg quality but got 0`). Keys that are not
 * settings (a batch's other options) are ignored.
 */
export function resolveSettings(options: object, schema: SettingsSchema = renderSettingsSchema): RenderSettings {
  const result = schema.safeParse(options);
  if (result.success) return result.data as RenderSettings;
  const issue = result.error.issues[0]!;
  // A list's item is a setting's too (`formats.0`).
  const at = (leaf: SettingLeaf) => issue.path.slice(0, leaf.path.length).join('.') === leaf.path.join('.');
  const leaf = settingLeaves(schema).find(at);
  if (!leaf) throw new InvalidArgumentError(`Invalid settings: ${issue.path.join('.')}: ${issue.message}`);
  const value = valueAt(options, leaf.path);
  const text = Array.isArray(value) ? value.join(',') : value;
  const shown = typeof text === 'string' ? `'${text}'` : String(text);
  throw new InvalidArgumentError(`Expected ${expectedValue(leaf)} for ${leaf.meta.label} but got ${shown}`);
}
