/**
 * The render settings are defined once (src/renditions/settings.ts): the CLI's flags, the
 * library's checks, the queue's job data and the manifest's key all come from that schema, so
 * a setting added there is one change, with its flag (src/cli/setting-flags.ts) and its key
 * policy (src/renditions/settings-key.ts) beside it. Shown here with a setting the schema does
 * not have.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addSettingOptions, type SettingFlags, settingsFrom } from '../../src/cli/options.js';
import { SETTING_FLAGS } from '../../src/cli/setting-flags.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { jobDataSchema, PROTOCOL, protocolOf } from '../../src/queue/protocol.js';
import {
  DEFAULT_PIXEL_LIMIT,
  renderSettingsSchema,
  resolveSettings,
  settingLeaves,
  settingMeta,
} from '../../src/renditions/settings.js';
import { KEY_POLICIES, settingsKey } from '../../src/renditions/settings-key.js';
import { runCli } from '../cli/run-cli.js';

/** The schema with one more setting, as a later change might add it: GIF encoder effort. */
const withEffort = renderSettingsSchema.extend({
  gif: z
    .object({
      effort: z.int().min(1).max(10).default(7).register(settingMeta, { label: 'the gif effort' }),
    })
    .prefault({}),
});
/** Its flag, beside the others. */
const withEffortFlags = { ...SETTING_FLAGS, 'gif.effort': { flag: '--gif-effort <1-10>', description: 'GIF effort' } };
/** Its key policy: by name and value when off its default, as every setting added since the first version. */
const withEffortKeys = { ...KEY_POLICIES, 'gif.effort': { key: 'path=value' as const } };

/** Parses `args` as render's setting flags from `schema`, as the CLI does. */
function flags(args: string[], schema = renderSettingsSchema, settingFlags: SettingFlags = SETTING_FLAGS) {
  const quiet = new Command('render').exitOverride().configureOutput({ writeErr: () => {} });
  const command = addSettingOptions(quiet, schema, settingFlags);
  command.parse(args, { from: 'user' });
  return settingsFrom(command.opts(), schema, settingFlags);
}

/** A setting's path, as the tables beside the schema are keyed. */
const pathOf = (leaf: { path: string[] }) => leaf.path.join('.') as keyof typeof SETTING_FLAGS;

describe('one definition of the render settings', () => {
  it('the queue protocol carries the settings schema itself, not a copy, and changes with it', () => {
    expect(jobDataSchema.shape.settings).toBe(renderSettingsSchema);
    expect(PROTOCOL).toBe(protocolOf(renderSettingsSchema));
    expect(PROTOCOL).toMatch(/^2\.[0-9a-f]{8}$/);
    // A setting added: submitters and workers of the two versions refuse each other, nobody bumping a number.
    expect(protocolOf(withEffort)).not.toBe(PROTOCOL);
  });

  it('every setting is a render flag, with its default and check from the schema', async () => {
    const help = (await runCli(['render', '--help'])).stdout;
    for (const leaf of settingLeaves()) expect(help).toContain(SETTING_FLAGS[pathOf(leaf)].flag);
    expect(help).toMatch(/--pixel-limit <pixels> +refuse originals larger than/);
    // The flags' own defaults are the schema's (a switch is left out: off).
    expect(resolveSettings(flags([]))).toEqual(resolveSettings({}));
    expect(flags([])).toMatchObject({ quality: { jpeg: 80, webp: 80, avif: 50 }, pixelLimit: DEFAULT_PIXEL_LIMIT });
    expect(
      flags(['--jpeg-quality', '60', '--keep-metadata', '--format', 'webp', '--jpeg-mozjpeg', '--no-png-filtering']),
    ).toMatchObject({
      quality: { jpeg: 60 },
      keepMetadata: true,
      formats: ['webp'],
      jpeg: { mozjpeg: true },
      png: { filtering: false },
    });
    expect(() => flags(['--jpeg-quality', '0'])).toThrow(
      "Expected an integer from 1 to 100 for --jpeg-quality but got '0'.",
    );
    expect(() => flags(['--naming', 'dots'])).toThrow(/Allowed choices are max, underscore/);
    // A setting without a default (the JPEG table: the encoder's own) is absent unless given.
    expect(flags([]).jpeg).not.toHaveProperty('table');
    expect(flags(['--jpeg-quant-table', '3'])).toMatchObject({ jpeg: { table: 3 } });
    expect(() => flags(['--jpeg-quant-table', '9'])).toThrow(
      "Expected an integer from 0 to 8 for --jpeg-quant-table but got '9'.",
    );
    // A list is comma-separated; --format is --formats with one format.
    expect(flags(['--formats', 'keep,avif,webp'])).toMatchObject({ formats: ['keep', 'avif', 'webp'] });
    expect(flags(['--format', 'avif'])).toMatchObject({ formats: ['avif'] });
    expect(flags(['--formats', 'keep, avif'])).toMatchObject({ formats: ['keep', 'avif'] });
    expect(() => flags(['--format', 'avif', '--formats', 'webp'])).toThrow(
      '--format and --formats do not go together: give one',
    );
    expect(() => resolveSettings(flags(['--formats', 'webp,webp']))).toThrow(
      "Expected a comma-separated list of keep, jpeg, png, webp, avif, each at most once for the formats but got 'webp,webp'",
    );
    // jpg is jpeg, as file extensions spell it, in either flag and in the library; case does not matter.
    expect(resolveSettings(flags(['--format', 'jpg'])).formats).toEqual(['jpeg']);
    expect(resolveSettings(flags(['--format', 'JPG'])).formats).toEqual(['jpeg']);
    expect(resolveSettings(flags(['--format', 'WebP'])).formats).toEqual(['webp']);
    expect(resolveSettings(flags(['--formats', 'keep,JPG,WebP'])).formats).toEqual(['keep', 'jpeg', 'webp']);
    expect(resolveSettings({ formats: ['jpg' as 'jpeg'] }).formats).toEqual(['jpeg']);
    expect(() => resolveSettings(flags(['--formats', 'jpg,jpeg']))).toThrow('each at most once');
    // A number for --quality: the message points at the formats' own flags.
    expect(() => flags(['--quality', '75'])).toThrow(
      "for --quality but got '75' (a fixed quality is each format's own flag: --jpeg-quality, --webp-quality, " +
        '--avif-quality).',
    );
  });

  it('the library checks each setting and names the bad one', () => {
    expect(resolveSettings({})).toEqual({
      mediaUrl: '/media/',
      urlVersions: true,
      naming: 'max',
      formats: ['keep'],
      quality: { mode: 'fixed', sample: true, jpeg: 80, webp: 80, avif: 50 },
      jpeg: { mozjpeg: false, chroma: '4:2:0' },
      png: { palette: 'auto', compression: 6, filtering: true },
      webp: { effort: 4 },
      avif: { effort: 1, chroma: '4:4:4' },
      keepMetadata: false,
      pixelLimit: DEFAULT_PIXEL_LIMIT,
    });
    expect(resolveSettings({ quality: { webp: 70 }, outDir: 'media' }).quality).toEqual({
      mode: 'fixed',
      sample: true,
      jpeg: 80,
      webp: 70,
      avif: 50,
    });
    const cases: Array<[object, string]> = [
      [{ quality: { jpeg: 0 } }, 'Expected an integer from 1 to 100 for the jpeg quality but got 0'],
      [{ pixelLimit: -1 }, 'Expected a non-negative integer for the pixel limit but got -1'],
      [
        { mediaUrl: 'media' },
        'Expected a path starting with / or an absolute http(s) URL, without spaces, quotes, <, >, \\ or commas ' +
          "for the media URL but got 'media'",
      ],
      [{ naming: 'dots' }, "Expected one of max, underscore for the naming style but got 'dots'"],
      [{ jpeg: { table: 9 } }, 'Expected an integer from 0 to 8 for the jpeg quantisation table but got 9'],
      [
        { mediaUrl: '/me dia/' },
        'Expected a path starting with / or an absolute http(s) URL, without spaces, quotes, <, >, \\ or commas ' +
          "for the media URL but got '/me dia/'",
      ],
      [
        { formats: ['tiff'] },
        "Expected a comma-separated list of keep, jpeg, png, webp, avif, each at most once for the formats but got 'tiff'",
      ],
      [
        { quality: { mode: 'auto:100' } },
        "Expected fixed, auto, or auto:<score> with a score from 30 to 99 for the quality mode but got 'auto:100'",
      ],
      [
        { quality: { mode: 'best' } },
        "Expected fixed, auto, or auto:<score> with a score from 30 to 99 for the quality mode but got 'best'",
      ],
    ];
    for (const [options, message] of cases) {
      expect(() => resolveSettings(options)).toThrow(new InvalidArgumentError(message));
    }
  });

  it("the manifest's key: the first version's words, a format's pipeline version, and settings off default", () => {
    const settings = resolveSettings({});
    expect(settingsKey(settings, 'jpeg')).toBe('v1 jpeg q80 max');
    // PNG's pipeline changed (row filtering, exact palettes): its files made before are redone, no other's.
    expect(settingsKey(settings, 'png')).toBe('v2 png q- max');
    expect(settingsKey(resolveSettings({ png: { compression: 9 }, jpeg: { mozjpeg: true } }), 'png')).toBe(
      'v2 png q- max png.compression=9',
    );
    expect(settingsKey(resolveSettings({ jpeg: { mozjpeg: true, chroma: '4:4:4' } }), 'jpeg')).toBe(
      'v1 jpeg q80 max jpeg.mozjpeg=true jpeg.chroma="4:4:4"',
    );
    expect(
      settingsKey(resolveSettings({ naming: 'underscore', keepMetadata: true, quality: { avif: 40 } }), 'avif'),
    ).toBe('v3 avif q40 underscore keep-metadata srgb');
    // A kept-metadata PNG once ignored --png-palette: those files alone are redone, no other PNG's.
    expect(settingsKey(resolveSettings({ keepMetadata: true }), 'png')).toBe('v3 png q- max keep-metadata srgb');
    expect(settingsKey(resolveSettings({ keepMetadata: true }), 'jpeg')).toBe('v1 jpeg q80 max keep-metadata srgb');
    // AVIF's default effort became 0, then 1: its files made before are redone; one asking for 4 says so.
    expect(settingsKey(resolveSettings({ avif: { effort: 4 } }), 'avif')).toBe('v3 avif q50 max avif.effort=4');
    expect(settingsKey(resolveSettings({ avif: { effort: 0 } }), 'avif')).toBe('v3 avif q50 max avif.effort=0');
    // The formats listed are not in a key: each output format is a key of its own.
    expect(settingsKey(resolveSettings({ formats: ['keep', 'avif'] }), 'jpeg')).toBe('v1 jpeg q80 max');
    // The quality mode shapes the lossy formats' files, not PNG's or GIF's.
    const auto = resolveSettings({ quality: { mode: 'auto:85' } });
    expect(settingsKey(auto, 'webp')).toBe('v1 webp q80 max quality.mode="auto:85"');
    expect(settingsKey(auto, 'png')).toBe('v2 png q- max');
    // One target, however spelled, is one key: auto is auto:80, auto:70.0 is auto:70.
    const key = (mode: string) => settingsKey(resolveSettings({ quality: { mode } }), 'jpeg');
    expect(key('auto:80')).toBe('v1 jpeg q80 max quality.mode="auto"');
    expect(key('auto:80.0')).toBe(key('auto'));
    expect(key('auto:70.0')).toBe('v1 jpeg q80 max quality.mode="auto:70"');
    expect(key('auto:72.5')).toBe('v1 jpeg q80 max quality.mode="auto:72.5"');
    // The JPEG quantisation table, when one is given (none: the encoder's own), in JPEG's key only.
    const table = resolveSettings({ quality: { mode: 'auto' }, jpeg: { table: 5 } });
    expect(settingsKey(table, 'jpeg')).toBe('v1 jpeg q80 max quality.mode="auto" jpeg.table=5');
    expect(settingsKey(table, 'webp')).toBe('v1 webp q80 max quality.mode="auto"');
    // Scoring whole changes an auto render's files, not a fixed one's.
    const whole = (mode: string) => resolveSettings({ quality: { mode, sample: false } });
    expect(settingsKey(whole('auto'), 'jpeg')).toBe('v1 jpeg q80 max quality.mode="auto" quality.sample=false');
    expect(settingsKey(whole('auto'), 'png')).toBe('v2 png q- max');
    expect(settingsKey(whole('fixed'), 'jpeg')).toBe('v1 jpeg q80 max');
    // libvips' threads, the host's, shape an AVIF's bytes (its tiles): named when not the CLI's one, in AVIF's key only.
    expect(settingsKey(settings, 'avif', { threads: 1 })).toBe('v3 avif q50 max');
    expect(settingsKey(settings, 'avif', { threads: 4 })).toBe('v3 avif q50 max avif.threads=4');
    expect(settingsKey(resolveSettings({ avif: { effort: 4 } }), 'avif', { threads: 2 })).toBe(
      'v3 avif q50 max avif.effort=4 avif.threads=2',
    );
    for (const format of ['jpeg', 'png', 'webp', 'gif'] as const)
      expect(settingsKey(settings, format, { threads: 4 })).toBe(settingsKey(settings, format));
    // Settings that do not change the bytes are not in it.
    expect(settingsKey(resolveSettings({ mediaUrl: 'https://cdn.example.org/', pixelLimit: 0 }), 'jpeg')).toBe(
      'v1 jpeg q80 max',
    );
  });

  it('a setting added to the schema is a flag, a checked option and part of the key, with its flag and policy', () => {
    expect(flags(['--gif-effort', '9'], withEffort, withEffortFlags)).toMatchObject({ gif: { effort: 9 } });
    expect(() => flags(['--gif-effort', '11'], withEffort, withEffortFlags)).toThrow(
      "Expected an integer from 1 to 10 for --gif-effort but got '11'.",
    );
    expect(() => resolveSettings({ gif: { effort: 12 } }, withEffort)).toThrow(
      'Expected an integer from 1 to 10 for the gif effort but got 12',
    );
    const changed = resolveSettings(flags(['--gif-effort', '9'], withEffort, withEffortFlags), withEffort);
    const options = { schema: withEffort, policies: withEffortKeys };
    expect(settingsKey(changed, 'gif', options)).toBe('v1 gif q- max gif.effort=9');
    // Only the format it names: a JPEG's files are not redone for a GIF setting.
    expect(settingsKey(changed, 'jpeg', options)).toBe('v1 jpeg q80 max');
    // At its default, the key is what it was before the setting existed.
    expect(settingsKey(resolveSettings({}, withEffort), 'gif', options)).toBe('v1 gif q- max');
  });

  it('every setting has its flag and its key policy, and neither table names a setting the schema lacks', () => {
    const paths = settingLeaves().map(pathOf);
    expect(Object.keys(SETTING_FLAGS).sort()).toEqual([...paths].sort());
    expect(Object.keys(KEY_POLICIES).sort()).toEqual([...paths].sort());
    // A number's flag says its range as the schema checks it (`--avif-effort <0-9>`).
    for (const leaf of settingLeaves()) {
      const range = /<(\d+)-(\d+)>$/.exec(SETTING_FLAGS[pathOf(leaf)].flag);
      if (!(leaf.type instanceof z.ZodNumber) || !range) continue;
      expect([leaf.type.minValue, leaf.type.maxValue], pathOf(leaf)).toEqual([Number(range[1]), Number(range[2])]);
    }
  });

  it('a setting without its metadata, its flag or its key policy is refused at once, not silently left out', () => {
    const bare = renderSettingsSchema.extend({ dither: z.boolean().default(false) });
    expect(() => settingLeaves(bare)).toThrow('setting dither has no metadata (register it with settingMeta)');
    // Its label given, but no flag: render's flags are not made without it.
    expect(() => flags([], withEffort)).toThrow('setting gif.effort has no flag (add it to SETTING_FLAGS');
    // Its flag given, but no key policy: no key is made without it, whatever the format.
    const settings = resolveSettings({}, withEffort);
    expect(() => settingsKey(settings, 'jpeg', { schema: withEffort })).toThrow(
      'setting gif.effort has no key policy (add it to KEY_POLICIES',
    );
  });
});
