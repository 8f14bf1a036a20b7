/**
 * The render settings are defined once (src/renditions/settings.ts): the CLI's flags, the
 * library's checks, the queue's job data and the manifest's key all come from that schema, so
 * a setting added there is one change. Shown here with a setting the schema does not have.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { addSettingOptions, settingsFrom } from '../../src/cli/options.js';
import { InvalidArgumentError } from '../../src/errors.js';
import { jobDataSchema } from '../../src/queue/protocol.js';
import {
  DEFAULT_PIXEL_LIMIT,
  renderSettingsSchema,
  resolveSettings,
  settingLeaves,
  settingMeta,
  settingsKey,
} from '../../src/renditions/settings.js';
import { runCli } from '../cli/run-cli.js';

/** The schema with one more setting, as the next issue might add it: AVIF encoder effort. */
const withEffort = renderSettingsSchema.extend({
  effort: z
    .object({
      avif: z
        .int()
        .min(0)
        .max(9)
        .default(4)
        .register(settingMeta, { flag: '--avif-effort <0-9>', description: 'AVIF effort', label: 'the avif effort' }),
    })
    .prefault({}),
});

/** Parses `args` as render's setting flags from `schema`, as the CLI does. */
function flags(args: string[], schema = renderSettingsSchema) {
  const command = addSettingOptions(new Command('render').exitOverride(), schema);
  command.parse(args, { from: 'user' });
  return settingsFrom(command.opts(), schema);
}

describe('one definition of the render settings', () => {
  it('the queue protocol carries the settings schema itself, not a copy', () => {
    expect(jobDataSchema.shape.settings).toBe(renderSettingsSchema);
  });

  it('every setting is a render flag, with its default and check from the schema', async () => {
    const help = (await runCli(['render', '--help'])).stdout;
    for (const leaf of settingLeaves()) expect(help).toContain(leaf.meta.flag);
    expect(help).toContain('--pixel-limit <pixels>    refuse originals larger than this many pixels; 0 for');
    expect(flags([])).toEqual({
      mediaUrl: '/media/',
      naming: 'max',
      quality: { jpeg: 80, webp: 80, avif: 50 },
      pixelLimit: DEFAULT_PIXEL_LIMIT,
    });
    expect(flags(['--jpeg-quality', '60', '--keep-metadata', '--format', 'webp'])).toMatchObject({
      quality: { jpeg: 60 },
      keepMetadata: true,
      format: 'webp',
    });
    expect(() => flags(['--jpeg-quality', '0'])).toThrow(
      "Expected an integer from 1 to 100 for --jpeg-quality but got '0'.",
    );
    expect(() => flags(['--naming', 'dots'])).toThrow(/Allowed choices are max, underscore/);
  });

  it('the library checks each setting and names the bad one', () => {
    expect(resolveSettings({})).toEqual({
      mediaUrl: '/media/',
      naming: 'max',
      quality: { jpeg: 80, webp: 80, avif: 50 },
      keepMetadata: false,
      pixelLimit: DEFAULT_PIXEL_LIMIT,
    });
    expect(resolveSettings({ quality: { webp: 70 }, outDir: 'media' }).quality).toEqual({
      jpeg: 80,
      webp: 70,
      avif: 50,
    });
    const cases: Array<[object, string]> = [
      [{ quality: { jpeg: 0 } }, 'Expected an integer from 1 to 100 for the jpeg quality but got 0'],
      [{ pixelLimit: -1 }, 'Expected a non-negative integer for the pixel limit but got -1'],
      [
        { mediaUrl: 'media' },
        "Expected a path starting with / or an absolute http(s) URL for the media URL but got 'media'",
      ],
      [{ naming: 'dots' }, "Expected one of max, underscore for the naming style but got 'dots'"],
      [{ format: 'tiff' }, "Expected one of jpeg, png, webp, avif for the format but got 'tiff'"],
    ];
    for (const [options, message] of cases) {
      expect(() => resolveSettings(options)).toThrow(new InvalidArgumentError(message));
    }
  });

  it("the manifest's key is the first version's for today's settings: nothing made before is redone", () => {
    const settings = resolveSettings({});
    expect(settingsKey(settings, 'jpeg')).toBe('v1 jpeg q80 max');
    expect(settingsKey(settings, 'png')).toBe('v1 png q- max');
    expect(
      settingsKey(resolveSettings({ naming: 'underscore', keepMetadata: true, quality: { avif: 40 } }), 'avif'),
    ).toBe('v1 avif q40 underscore keep-metadata srgb');
    // Settings that do not change the bytes are not in it.
    expect(settingsKey(resolveSettings({ mediaUrl: 'https://cdn.example.org/', pixelLimit: 0 }), 'jpeg')).toBe(
      'v1 jpeg q80 max',
    );
  });

  it('a setting added to the schema is a flag, a checked option and part of the key, with nothing else written', () => {
    expect(flags(['--avif-effort', '7'], withEffort)).toMatchObject({ effort: { avif: 7 } });
    expect(() => flags(['--avif-effort', '10'], withEffort)).toThrow(
      "Expected an integer from 0 to 9 for --avif-effort but got '10'.",
    );
    expect(() => resolveSettings({ effort: { avif: 12 } }, withEffort)).toThrow(
      'Expected an integer from 0 to 9 for the avif effort but got 12',
    );
    const changed = resolveSettings(flags(['--avif-effort', '7'], withEffort), withEffort);
    expect(settingsKey(changed, 'avif', withEffort)).toBe('v1 avif q50 max effort.avif=7');
    // Only the format it names: a JPEG's files are not redone for an AVIF setting.
    expect(settingsKey(changed, 'jpeg', withEffort)).toBe('v1 jpeg q80 max');
    // At its default, the key is what it was before the setting existed.
    expect(settingsKey(resolveSettings({}, withEffort), 'avif', withEffort)).toBe('v1 avif q50 max');
  });

  it('a setting without its metadata is refused at once, not silently left out of the flags', () => {
    const bare = renderSettingsSchema.extend({ dither: z.boolean().default(false) });
    expect(() => settingLeaves(bare)).toThrow('setting dither has no metadata (register it with settingMeta)');
  });
});
