/**
 * Where `check`'s flags come from: the command line (or the environment) first, then the
 * config file, then the defaults.
 */
import path from 'node:path';
import type { LoadedConfig } from '../../../check/config.js';

/** Flags given on the command line (or in the environment) win; then the config file; then the defaults. */
export function withConfigDefaults<T extends Record<string, unknown>>(
  flags: T,
  given: (name: string) => boolean,
  loaded: LoadedConfig,
): T {
  const { config, file } = loaded;
  const dir = file ? path.dirname(file) : process.cwd();
  const relative = (value: string | undefined) =>
    value === undefined || /^https?:\/\//i.test(value) ? value : path.resolve(dir, value);
  const defaults: Record<string, unknown> = {
    baseUrl: config.baseUrl,
    mediaPrefix: config.mediaPrefix,
    verifyFiles: relative(config.verifyFiles),
    reporter: config.reporter,
    output: relative(config.output),
    maxWarnings: config.maxWarnings,
    baseline: relative(config.baseline),
  };
  const merged: Record<string, unknown> = { ...flags };
  for (const [name, value] of Object.entries(defaults)) if (value !== undefined && !given(name)) merged[name] = value;
  return merged as T;
}
