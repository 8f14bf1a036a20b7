/**
 * The manifest's settings key (manifest.ts records it for each file): which settings, at which
 * values, decide that files made earlier are redone. The pipeline's version of each format, and
 * how each setting of settings.ts enters the key, one policy a setting by its path
 * (`KEY_POLICIES`): a setting without one is refused by the first key asked for. Pure.
 */
import { OUTPUT_FORMATS, type OutputFormat } from './formats.js';
import {
  AVIF_THREADS,
  DEFAULT_QUALITY_TARGET,
  qualityTarget,
  type RenderSettings,
  renderSettingsSchema,
  SAMPLE,
  type SettingLeaf,
  type SettingPath,
  type SettingsSchema,
  settingLeaves,
  valueAt,
} from './settings.js';

/**
 * The pipeline's version for each output format, the first word of its settings key: bumped when
 * what it writes in that format changes for the same settings (a new setting whose default is not
 * what was done before, included), so that format's files made before are redone and no other's.
 * PNG 2: adaptive row filtering, and a palette wherever one loses nothing. AVIF 2: effort 0 by default;
 * AVIF 3: effort 1.
 */
const PIPELINE_VERSIONS: Readonly<Record<OutputFormat, number>> = { jpeg: 1, png: 2, webp: 1, avif: 3, gif: 1 };

/**
 * The pipeline's version for `format` with `settings`: PIPELINE_VERSIONS', but where a change touched
 * only the files of some settings, whose files alone are redone. PNG 3: with kept metadata, a palette
 * too (`--png-palette` did nothing there, every such PNG was truecolour).
 */
function pipelineVersion(format: OutputFormat, settings: RenderSettings): number {
  if (format === 'png' && settings.keepMetadata) return 3;
  return PIPELINE_VERSIONS[format];
}

/** How a setting enters the manifest's settings key, which decides whether files made earlier are redone. */
export interface KeyPolicy {
  /**
   * `none` (it does not change the bytes), `v1` (spelled out in the key since the first version),
   * or `path=value`: by name and value whenever it differs from its default, so a setting added
   * later redoes no file made before it until someone changes it (one whose default changes the
   * bytes bumps its format's pipeline version instead: PIPELINE_VERSIONS).
   */
  key: 'none' | 'v1' | 'path=value';
  /** The formats whose files it shapes, where its path does not name one (`quality.mode`: the lossy ones). */
  formats?: readonly OutputFormat[];
  /**
   * The value the key records, where one setting has several spellings (`auto:80` is `auto`) or,
   * with the other settings, does not change the bytes (`quality.sample` with fixed quality).
   */
  canonical?: (value: unknown, settings: { quality: { mode: string } }) => unknown;
}

/** `mode` as the key records it: `auto` for the default target (`auto:80`), `auto:70` for `auto:70.0`. */
function canonicalQualityMode(mode: string): string {
  const target = qualityTarget(mode);
  if (target === null) return 'fixed';
  return target === DEFAULT_QUALITY_TARGET ? 'auto' : `auto:${target}`;
}

/** How each setting of `renderSettingsSchema` enters the key, by its path. */
export const KEY_POLICIES: Readonly<Record<SettingPath, KeyPolicy>> = {
  mediaUrl: { key: 'none' },
  urlVersions: { key: 'none' },
  naming: { key: 'v1' },
  // Each output format is its own manifest key, its format the key's second word.
  formats: { key: 'none' },
  'quality.mode': {
    key: 'path=value',
    formats: ['jpeg', 'webp', 'avif'],
    canonical: (mode) => canonicalQualityMode(mode as string),
  },
  'quality.sample': {
    key: 'path=value',
    formats: ['jpeg', 'webp', 'avif'],
    // Fixed quality scores nothing: its files are the same either way, so its key says the default.
    canonical: (sample, settings) => (qualityTarget(settings.quality.mode) === null ? SAMPLE : sample),
  },
  'quality.jpeg': { key: 'v1' },
  'quality.webp': { key: 'v1' },
  'quality.avif': { key: 'v1' },
  'jpeg.mozjpeg': { key: 'path=value' },
  'jpeg.chroma': { key: 'path=value' },
  'jpeg.table': { key: 'path=value' },
  'png.palette': { key: 'path=value' },
  'png.compression': { key: 'path=value' },
  'png.filtering': { key: 'path=value' },
  'webp.effort': { key: 'path=value' },
  'avif.effort': { key: 'path=value' },
  'avif.chroma': { key: 'path=value' },
  keepMetadata: { key: 'v1' },
  pixelLimit: { key: 'none' },
};

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
  const { schema = renderSettingsSchema, policies = KEY_POLICIES, threads = AVIF_THREADS } = options;
  // Asked for every output of every original of a batch, of settings that never change meanwhile.
  const usual = schema === renderSettingsSchema && policies === KEY_POLICIES;
  const known = usual ? (keys.get(settings) ?? new Map<string, string>()) : null;
  const cached = known?.get(`${format} ${threads}`);
  if (cached !== undefined) return cached;
  const key = computeKey(settings, format, schema, policies, threads);
  if (known) keys.set(settings, known.set(`${format} ${threads}`, key));
  return key;
}

/** `settingsKey` of the default schema, by settings object, then format and threads. */
const keys = new WeakMap<RenderSettings, Map<string, string>>();

function computeKey(
  settings: RenderSettings,
  format: OutputFormat,
  schema: SettingsSchema,
  policies: KeyPolicies,
  threads: number,
): string {
  const quality = format === 'jpeg' || format === 'webp' || format === 'avif' ? settings.quality[format] : '-';
  const first = `v${pipelineVersion(format, settings)} ${format} q${quality} ${settings.naming}`;
  const added = settingLeaves(schema)
    .map((leaf) => ({ leaf, policy: policyOf(leaf, policies) }))
    .filter(({ leaf, policy }) => policy.key === 'path=value' && appliesTo(leaf, policy, format))
    .map(({ leaf, policy }) => {
      const value = valueAt(settings, leaf.path);
      return {
        name: leaf.path.join('.'),
        value: policy.canonical?.(value, settings) ?? value,
        fallback: leaf.fallback,
      };
    })
    .filter(({ value, fallback }) => JSON.stringify(value) !== JSON.stringify(fallback))
    .map(({ name, value }) => `${name}=${JSON.stringify(value)}`);
  // Not a setting but the host's: what the AV1 encoder's output follows besides them (AVIF_THREADS).
  if (format === 'avif' && threads !== AVIF_THREADS) added.push(`avif.threads=${threads}`);
  return [first, ...(settings.keepMetadata ? ['keep-metadata srgb'] : []), ...added].join(' ');
}

/** Key policies by setting path, of any settings schema. */
type KeyPolicies = Readonly<Record<string, KeyPolicy>>;

export interface SettingsKeyOptions {
  /** libvips' threads per pipeline as the files are encoded, `sharp.concurrency()` (default: AVIF_THREADS). */
  threads?: number;
  /** The settings' schema (default: renderSettingsSchema). */
  schema?: SettingsSchema;
  /** How each setting of `schema` enters the key, by its path (default: KEY_POLICIES). */
  policies?: KeyPolicies;
}

/** `leaf`'s key policy: a setting without one is refused, not silently left out of the key. */
function policyOf(leaf: SettingLeaf, policies: KeyPolicies): KeyPolicy {
  const name = leaf.path.join('.');
  const policy = policies[name];
  if (!policy) throw new Error(`setting ${name} has no key policy (add it to KEY_POLICIES, settings-key.ts)`);
  return policy;
}

/** A setting under a format's name (`quality.jpeg`, `jpeg.chroma`) shapes that format's files only. */
function appliesTo(leaf: SettingLeaf, policy: KeyPolicy, format: OutputFormat): boolean {
  if (policy.formats) return policy.formats.includes(format);
  const formats = leaf.path.filter((name) => (OUTPUT_FORMATS as readonly string[]).includes(name));
  return formats.length === 0 || formats.includes(format);
}
