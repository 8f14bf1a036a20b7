/**
 * The render settings: everything that shapes the files an original becomes, defined once.
 *
 * `renderSettingsSchema` is the one definition. The library's `RenderOptions`, the CLI's
 * `render` flags, the queue's job data and batch records, and the manifest's settings key are
 * all derived from it, so a new setting is one entry here (and the code that uses it): its flag,
 * its check, its default, its place in a job and whether files made before it are redone come
 * with it. Pure: no sharp, no I/O (`render --help` reads it).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../errors.js';
import { FORCEABLE_FORMATS, FORMAT_CHOICES, OUTPUT_FORMATS, type OutputFormat } from './formats.js';
import { DEFAULT_MEDIA_URL, NAMING_STYLES } from './rules.js';

/** sharp's own default pixel limit (0x3FFF * 0x3FFF), the guard against decompression bombs. */
export const DEFAULT_PIXEL_LIMIT = 268_402_689;

/**
 * The pipeline's version for each output format, the first word of its settings key: bumped when
 * what it writes in that format changes for the same settings (a new setting whose default is not
 * what was done before, included), so that format's files made before are redone and no other's.
 * PNG 2: adaptive row filtering, and a palette wherever one loses nothing. AVIF 2: effort 0 by default;
 * AVIF 3: effort 1.
 */
const PIPELINE_VERSIONS: Readonly<Record<OutputFormat, number>> = { jpeg: 1, png: 2, webp: 1, avif: 3, gif: 1 };

/**
 * The libvips threads per pipeline (`sharp.concurrency`) the CLI renders with, and the only count
 * an AVIF's key does not name. libvips gives its thread count to the AV1 encoder, which cuts a
 * picture into up to that many tiles: the same settings on other threads write other AVIF bytes
 * (docs/guides/shards.md#the-same-bytes-everywhere). JPEG, PNG, WebP and GIF do not depend on it.
 */
export const AVIF_THREADS = 1;

/** What the CLI and messages need to know of a setting, beside its definition. */
export interface SettingMeta {
  /** Its `render` flag, as commander takes it (`--jpeg-quality <1-100>`). */
  flag: string;
  /** The flag's help. */
  description: string;
  /** How messages name it (`the jpeg quality`). */
  label: string;
  /** What a valid value is, where the schema cannot say it in words (`a path starting with /`). */
  expected?: string;
  /**
   * How it enters the manifest's settings key, which decides whether files made earlier are
   * redone: `none` (it does not change the bytes), `v1` (spelled out in the key since the first
   * version), or, left out, by name and value whenever it differs from its default, so a setting
   * added later redoes no file made before it until someone changes it (one whose default changes
   * the bytes bumps its format's pipeline version instead: PIPELINE_VERSIONS).
   */
  key?: 'none' | 'v1';
  /** The formats whose files it shapes, where its path does not name one (`quality.mode`: the lossy ones). */
  formats?: readonly OutputFormat[];
  /**
   * The value the key records, where one setting has several spellings (`auto:80` is `auto`) or,
   * with the other settings, does not change the bytes (`quality.sample` with fixed quality).
   */
  canonical?: (value: unknown, settings: { quality: { mode: string } }) => unknown;
  /** Said after the flag's message when a value is refused, where users reach for the wrong flag. */
  flagHint?: string;
  /** A second flag that sets it, with a value of its own (`--format webp` for `--formats webp`). */
  alias?: { flag: string; description: string; choices: readonly string[]; value: (given: string) => unknown };
}

/** Other names of formats, as file extensions spell them: `--format jpg` is `--format jpeg`. */
const FORMAT_SPELLINGS: Readonly<Record<string, string>> = { jpg: 'jpeg' };
const spelledOut = (format: unknown) =>
  typeof format === 'string' ? (FORMAT_SPELLINGS[format.toLowerCase()] ?? format.toLowerCase()) : format;

/** The registry of settings' metadata: `settingMeta.get(schema)` for each leaf of the settings schema. */
export const settingMeta = z.registry<SettingMeta>();

const quality = (format: 'jpeg' | 'webp' | 'avif', fallback: number) =>
  z
    .int()
    .min(1)
    .max(100)
    .default(fallback)
    .register(settingMeta, {
      flag: `--${format}-quality <1-100>`,
      description: `${format === 'jpeg' ? 'JPEG' : format === 'webp' ? 'WebP' : 'AVIF'} quality`,
      label: `the ${format} quality`,
      key: 'v1',
    });

const effort = (format: 'webp' | 'avif', max: number, fallback: number) =>
  z
    .int()
    .min(0)
    .max(max)
    .default(fallback)
    .register(settingMeta, {
      flag: `--${format}-effort <0-${max}>`,
      description: `${format === 'webp' ? 'WebP' : 'AVIF'} encoder effort: ${max} is smallest and slowest`,
      label: `the ${format} effort`,
    });

const chroma = (format: 'jpeg' | 'avif', fallback: '4:2:0' | '4:4:4') =>
  z
    .enum(['4:2:0', '4:4:4'])
    .default(fallback)
    .register(settingMeta, {
      flag: `--${format}-chroma <subsampling>`,
      description:
        `${format === 'jpeg' ? 'JPEG' : 'AVIF'} chroma subsampling: ` +
        '4:2:0 halves colour resolution, 4:4:4 keeps it',
      label: `the ${format} chroma subsampling`,
    });

/**
 * `--quality auto`'s target when no score is given: SSIMULACRA2 80, between "high quality" (70) and
 * "visually lossless" (90) on the metric's own scale. JPEG at quality 80 gives 76-80 on photographs
 * (docs/performance.md), so the default asks a little more than today's fixed quality gives at its
 * worst, where an artwork's fidelity is the point of the site, and far less where a picture allows it.
 */
export const DEFAULT_QUALITY_TARGET = 80;
/** `quality.sample`'s default: renditions over WHOLE_PIXELS scored on a sample of their tiles. */
const SAMPLE = true;
/** The lowest and highest target `auto:<score>` takes. */
const TARGET_RANGE = [30, 99] as const;

/** The SSIMULACRA2 score `mode` asks every rendition to reach, or null for fixed quality. */
export function qualityTarget(mode: string): number | null {
  if (mode === 'fixed') return null;
  if (mode === 'auto') return DEFAULT_QUALITY_TARGET;
  const match = /^auto:(\d{1,2}(?:\.\d+)?)$/.exec(mode);
  const score = match ? Number(match[1]) : Number.NaN;
  if (!(score >= TARGET_RANGE[0] && score <= TARGET_RANGE[1])) throw new RangeError(`not a quality mode: ${mode}`);
  return score;
}

/** `mode` as the key records it: `auto` for the default target (`auto:80`), `auto:70` for `auto:70.0`. */
function canonicalQualityMode(mode: string): string {
  const target = qualityTarget(mode);
  if (target === null) return 'fixed';
  return target === DEFAULT_QUALITY_TARGET ? 'auto' : `auto:${target}`;
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
    flag: '--media-url <prefix>',
    description: 'URL prefix of the output folder in Image objects',
    label: 'the media URL',
    expected: 'a path starting with / or an absolute http(s) URL, without spaces, quotes, <, >, \\ or commas',
    key: 'none',
  }),
  /**
   * Each URL of an Image object carries its file's version, `?v=<first 8 hex of its SHA-256>`: a
   * changed file is a new URL, so a cache may keep each one forever (`immutable`). Off for a site
   * that purges its CDN when it publishes instead. URLs only: the files' bytes are the same.
   */
  urlVersions: z
    .boolean()
    .default(true)
    .register(settingMeta, {
      flag: '--no-url-versions',
      description:
        "URLs without ?v=<version of the file's content> (for a CDN purged on publishing; " +
        'then every cache must revalidate)',
      label: 'URL versions',
      key: 'none',
    }),
  /** `max`: `<name>.max-<n>x<n>.<ext>`; `underscore`: `<name>_<n>x<n>.<ext>`. */
  naming: z.enum(NAMING_STYLES).default('max').register(settingMeta, {
    flag: '--naming <style>',
    description: 'file names: max = <name>.max-<n>x<n>.<ext>, underscore = <name>_<n>x<n>.<ext>',
    label: 'the naming style',
    key: 'v1',
  }),
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
      flag: '--formats <list>',
      description:
        'the formats written, comma-separated, the first described by the Image object, the rest its alternates: ' +
        "keep (the original's own web format), jpeg (or jpg), png, webp, avif (default: keep)",
      label: 'the formats',
      expected: `a comma-separated list of ${FORMAT_CHOICES.join(', ')}, each at most once`,
      // Each output format is its own manifest key, its format the key's second word.
      key: 'none',
      alias: {
        flag: '--format <format>',
        description: 'write every rendition in this one format: the same as --formats <format>',
        choices: [...FORCEABLE_FORMATS, ...Object.keys(FORMAT_SPELLINGS)],
        value: (format) => [spelledOut(format)],
      },
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
          flag: '--quality <mode>',
          description:
            `fixed: each format's --<format>-quality; auto: per rendition, the lowest quality (within a step) whose ` +
            `SSIMULACRA2 score reaches ${DEFAULT_QUALITY_TARGET}; auto:<score>: reaches <score> ` +
            `(${TARGET_RANGE[0]}-${TARGET_RANGE[1]}; slower than fixed)`,
          label: 'the quality mode',
          expected: `fixed, auto, or auto:<score> with a score from ${TARGET_RANGE[0]} to ${TARGET_RANGE[1]}`,
          flagHint: "a fixed quality is each format's own flag: --jpeg-quality, --webp-quality, --avif-quality",
          formats: ['jpeg', 'webp', 'avif'],
          canonical: (mode) => canonicalQualityMode(mode as string),
        }),
      /**
       * With `auto`, renditions over WHOLE_PIXELS are scored on a sample of their tiles, aimed TILE_MARGIN
       * over the target (quality/auto.ts); off, every rendition is scored whole, one size after another:
       * each score recorded is the rendition's own, each quality the lowest reaching the target (the one
       * below it tried and short: an exact search), for 5 to 9 times auto's time and, while a 15 MP
       * rendition is searched, about 1 GB for the metric's reference (docs/commands/render.md#quality).
       */
      sample: z
        .boolean()
        .default(SAMPLE)
        .register(settingMeta, {
          flag: '--no-quality-sample',
          description:
            'with --quality auto: score every rendition whole instead of a sample of tiles above 512 K pixels ' +
            "(smaller files, 5-9 times auto's time, about 1 GB more memory per 24 MP original rendered at once)",
          label: 'quality sampling',
          formats: ['jpeg', 'webp', 'avif'],
          // Fixed quality scores nothing: its files are the same either way, so its key says the default.
          canonical: (sample, settings) => (qualityTarget(settings.quality.mode) === null ? SAMPLE : sample),
        }),
      jpeg: quality('jpeg', 80),
      webp: quality('webp', 80),
      avif: quality('avif', 50),
    })
    .prefault({}),
  /** JPEG's encoder: mozjpeg's trellis quantisation and scan optimisation, chroma subsampling, quantisation table. */
  jpeg: z
    .object({
      mozjpeg: z.boolean().default(false).register(settingMeta, {
        flag: '--jpeg-mozjpeg',
        description: "mozjpeg's trellis quantisation, deringing and scan optimisation: smaller JPEGs, slower encodes",
        label: 'jpeg mozjpeg',
      }),
      chroma: chroma('jpeg', '4:2:0'),
      /**
       * The quantisation table (sharp's `quantisationTable`), or the encoder's own. Table 5 (Klein, Silverstein
       * and Carney's) reaches an SSIMULACRA2 target with 6-14% fewer bytes than libjpeg's own, but at equal
       * bytes Butteraugli prefers libjpeg's on every rendition compared: the metrics disagree, so no default
       * changes (docs/quality.md#jpegs-quantisation-table-where-two-metrics-disagree).
       */
      table: z
        .int()
        .min(0)
        .max(8)
        .optional()
        .register(settingMeta, {
          flag: '--jpeg-quant-table <0-8>',
          description:
            "JPEG quantisation table, as mozjpeg numbers them: 0 the JPEG standard's, 3 ImageMagick's, 5 Klein's, " +
            "1, 2, 4, 6-8 others (default: the encoder's own, 0, or 3 with --jpeg-mozjpeg); with --quality auto, " +
            '5 makes the smallest files at the same SSIMULACRA2, though Butteraugli finds them worse for their bytes',
          label: 'the jpeg quantisation table',
        }),
    })
    .prefault({}),
  /** PNG's encoder: a palette where it loses nothing, zlib's level, row filters. */
  png: z
    .object({
      palette: z
        .enum(['auto', 'lossy', 'off'])
        .default('auto')
        .register(settingMeta, {
          flag: '--png-palette <mode>',
          description:
            'auto: a palette (8-bit PNG) when the rendition has at most 256 colours, so no pixel changes; ' +
            'lossy: always, quantised to 256 colours; off: never',
          label: 'the png palette',
        }),
      compression: z.int().min(0).max(9).default(6).register(settingMeta, {
        flag: '--png-compression <0-9>',
        description: "zlib's compression level: 9 is smallest and slowest",
        label: 'the png compression',
      }),
      filtering: z.boolean().default(true).register(settingMeta, {
        flag: '--no-png-filtering',
        description: 'no adaptive row filtering (filtering makes photographic PNGs far smaller, encodes slower)',
        label: 'png filtering',
      }),
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
  keepMetadata: z.boolean().default(false).register(settingMeta, {
    flag: '--keep-metadata',
    description: 'keep EXIF, XMP and IPTC metadata (default: stripped)',
    label: 'keep-metadata',
    key: 'v1',
  }),
  /** Largest original, in pixels (width x height x frames), that will be decoded; 0 for no limit. */
  pixelLimit: z.int().min(0).default(DEFAULT_PIXEL_LIMIT).register(settingMeta, {
    flag: '--pixel-limit <pixels>',
    description: 'refuse originals larger than this many pixels; 0 for no limit',
    label: 'the pixel limit',
    key: 'none',
  }),
});

/** The settings of a batch, every one resolved. */
export type RenderSettings = z.output<typeof renderSettingsSchema>;
/** The settings as a caller gives them: any may be left out for its default. */
export type RenderSettingsInput = z.input<typeof renderSettingsSchema>;
/** The quality mode and the fixed encoder quality (1-100) per lossy format. */
export type QualitySettings = RenderSettings['quality'];

/** Any schema of settings shaped like `renderSettingsSchema` (a test extends it with a setting of its own). */
export type SettingsSchema = z.ZodObject<z.ZodRawShape>;

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

/**
 * Everything that changes the bytes written for an original in `format`: the manifest records
 * it, and an original whose key changed is rendered again. The first words are the key's first
 * version (`v1 jpeg q80 max`; `keep-metadata srgb`: kept metadata once meant the original's own
 * profile, unconverted, and those files were redone); every setting added since follows as
 * `path=value`, only where it differs from its default and, for a setting of one format
 * (`quality.jpeg`), only in that format's key. An AVIF's key also names libvips' threads when
 * they are not AVIF_THREADS (`avif.threads=4`): its bytes follow them.
 */
export function settingsKey(settings: RenderSettings, format: OutputFormat, options: SettingsKeyOptions = {}): string {
  const { schema = renderSettingsSchema, threads = AVIF_THREADS } = options;
  // Asked for every output of every original of a batch, of settings that never change meanwhile.
  const known = schema === renderSettingsSchema ? (keys.get(settings) ?? new Map<string, string>()) : null;
  const cached = known?.get(`${format} ${threads}`);
  if (cached !== undefined) return cached;
  const key = computeKey(settings, format, schema, threads);
  if (known) keys.set(settings, known.set(`${format} ${threads}`, key));
  return key;
}

/** `settingsKey` of the default schema, by settings object, then format and threads. */
const keys = new WeakMap<RenderSettings, Map<string, string>>();

function computeKey(settings: RenderSettings, format: OutputFormat, schema: SettingsSchema, threads: number): string {
  const quality = format === 'jpeg' || format === 'webp' || format === 'avif' ? settings.quality[format] : '-';
  const first = `v${PIPELINE_VERSIONS[format]} ${format} q${quality} ${settings.naming}`;
  const added = settingLeaves(schema)
    .filter((leaf) => leaf.meta.key === undefined && appliesTo(leaf, format))
    .map((leaf) => {
      const value = valueAt(settings, leaf.path);
      return {
        name: leaf.path.join('.'),
        value: leaf.meta.canonical?.(value, settings) ?? value,
        fallback: leaf.fallback,
      };
    })
    .filter(({ value, fallback }) => JSON.stringify(value) !== JSON.stringify(fallback))
    .map(({ name, value }) => `${name}=${JSON.stringify(value)}`);
  // Not a setting but the host's: what the AV1 encoder's output follows besides them (AVIF_THREADS).
  if (format === 'avif' && threads !== AVIF_THREADS) added.push(`avif.threads=${threads}`);
  return [first, ...(settings.keepMetadata ? ['keep-metadata srgb'] : []), ...added].join(' ');
}

export interface SettingsKeyOptions {
  /** libvips' threads per pipeline as the files are encoded, `sharp.concurrency()` (default: AVIF_THREADS). */
  threads?: number;
  /** The settings' schema (default: renderSettingsSchema). */
  schema?: SettingsSchema;
}

/** A setting under a format's name (`quality.jpeg`, `jpeg.chroma`) shapes that format's files only. */
function appliesTo(leaf: SettingLeaf, format: OutputFormat): boolean {
  if (leaf.meta.formats) return leaf.meta.formats.includes(format);
  const formats = leaf.path.filter((name) => (OUTPUT_FORMATS as readonly string[]).includes(name));
  return formats.length === 0 || formats.includes(format);
}
