/**
 * `render`'s flag for each render setting (src/renditions/settings.ts), by the setting's path:
 * how commander takes it, its help, and what the CLI says beside it. `addSettingOptions`
 * (options.ts) makes each flag from its entry here and the setting's schema (its check, its
 * default); a setting without an entry is refused there, not silently left out of the flags.
 * What a value is and the setting's name in messages are the schema's (`settingMeta`): the
 * library's messages say them too.
 */
import { FORCEABLE_FORMATS, FORMAT_SPELLINGS, spelledOut } from '../renditions/formats.js';
import { DEFAULT_QUALITY_TARGET, type SettingPath, TARGET_RANGE } from '../renditions/settings.js';

/** What the CLI needs to know of a setting, beside its definition. */
export interface SettingFlag {
  /** Its `render` flag, as commander takes it (`--jpeg-quality <1-100>`). */
  flag: string;
  /** The flag's help. */
  description: string;
  /** Said after the flag's message when a value is refused, where users reach for the wrong flag. */
  flagHint?: string;
  /** A second flag that sets it, with a value of its own (`--format webp` for `--formats webp`). */
  alias?: { flag: string; description: string; choices: readonly string[]; value: (given: string) => unknown };
}

/** How the help spells each format whose encoder has flags of its own. */
const NAMES = { jpeg: 'JPEG', webp: 'WebP', avif: 'AVIF' } as const;

const quality = (format: 'jpeg' | 'webp' | 'avif'): SettingFlag => ({
  flag: `--${format}-quality <1-100>`,
  description: `${NAMES[format]} quality`,
});

const effort = (format: 'webp' | 'avif', max: number): SettingFlag => ({
  flag: `--${format}-effort <0-${max}>`,
  description: `${NAMES[format]} encoder effort: ${max} is smallest and slowest`,
});

const chroma = (format: 'jpeg' | 'avif'): SettingFlag => ({
  flag: `--${format}-chroma <subsampling>`,
  description: `${NAMES[format]} chroma subsampling: 4:2:0 halves colour resolution, 4:4:4 keeps it`,
});

/** The flag of each setting of `renderSettingsSchema`, by its path, in the schema's order. */
export const SETTING_FLAGS: Readonly<Record<SettingPath, SettingFlag>> = {
  mediaUrl: {
    flag: '--media-url <prefix>',
    description: 'URL prefix of the output folder in Image objects',
  },
  urlVersions: {
    flag: '--no-url-versions',
    description:
      "URLs without ?v=<version of the file's content> (for a CDN purged on publishing; " +
      'then every cache must revalidate)',
  },
  naming: {
    flag: '--naming <style>',
    description: 'file names: max = <name>.max-<n>x<n>.<ext>, underscore = <name>_<n>x<n>.<ext>',
  },
  formats: {
    flag: '--formats <list>',
    description:
      'the formats written, comma-separated, the first described by the Image object, the rest its alternates: ' +
      "keep (the original's own web format), jpeg (or jpg), png, webp, avif (default: keep)",
    alias: {
      flag: '--format <format>',
      description: 'write every rendition in this one format: the same as --formats <format>',
      choices: [...FORCEABLE_FORMATS, ...Object.keys(FORMAT_SPELLINGS)],
      value: (format) => [spelledOut(format)],
    },
  },
  'quality.mode': {
    flag: '--quality <mode>',
    description:
      `fixed: each format's --<format>-quality; auto: per rendition, the lowest quality (within a step) whose ` +
      `SSIMULACRA2 score reaches ${DEFAULT_QUALITY_TARGET}; auto:<score>: reaches <score> ` +
      `(${TARGET_RANGE[0]}-${TARGET_RANGE[1]}; slower than fixed)`,
    flagHint: "a fixed quality is each format's own flag: --jpeg-quality, --webp-quality, --avif-quality",
  },
  'quality.sample': {
    flag: '--no-quality-sample',
    description:
      'with --quality auto: score every rendition whole instead of a sample of tiles above 512 K pixels ' +
      "(smaller files, 5-9 times auto's time, about 1 GB more memory per 24 MP original rendered at once)",
  },
  'quality.jpeg': quality('jpeg'),
  'quality.webp': quality('webp'),
  'quality.avif': quality('avif'),
  'jpeg.mozjpeg': {
    flag: '--jpeg-mozjpeg',
    description: "mozjpeg's trellis quantisation, deringing and scan optimisation: smaller JPEGs, slower encodes",
  },
  'jpeg.chroma': chroma('jpeg'),
  'jpeg.table': {
    flag: '--jpeg-quant-table <0-8>',
    description:
      "JPEG quantisation table, as mozjpeg numbers them: 0 the JPEG standard's, 3 ImageMagick's, 5 Klein's, " +
      "1, 2, 4, 6-8 others (default: the encoder's own, 0, or 3 with --jpeg-mozjpeg); with --quality auto, " +
      '5 makes the smallest files at the same SSIMULACRA2, though Butteraugli finds them worse for their bytes',
  },
  'png.palette': {
    flag: '--png-palette <mode>',
    description:
      'auto: a palette (8-bit PNG) when the rendition has at most 256 colours, so no pixel changes; ' +
      'lossy: always, quantised to 256 colours; off: never',
  },
  'png.compression': {
    flag: '--png-compression <0-9>',
    description: "zlib's compression level: 9 is smallest and slowest",
  },
  'png.filtering': {
    flag: '--no-png-filtering',
    description: 'no adaptive row filtering (filtering makes photographic PNGs far smaller, encodes slower)',
  },
  'webp.effort': effort('webp', 6),
  'avif.effort': effort('avif', 9),
  'avif.chroma': chroma('avif'),
  keepMetadata: {
    flag: '--keep-metadata',
    description: 'keep EXIF, XMP and IPTC metadata (default: stripped)',
  },
  pixelLimit: {
    flag: '--pixel-limit <pixels>',
    description: 'refuse originals larger than this many pixels; 0 for no limit',
  },
};
