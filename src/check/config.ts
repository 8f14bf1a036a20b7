/**
 * `content-api.config.json`: rule severities, ignored JSON paths and pages, and defaults for
 * `check`'s flags. Found upward from the working folder (as ESLint and knip find theirs) or
 * named with `--config FILE`; validated with zod, every problem reported with its path.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ContentApiError } from '../errors.js';
import { readFileWithin } from '../fs/read-within.js';
import { issuePath, parseJsonAs } from '../json.js';
import { policySchema } from './policy.js';
import { REPORTER_NAMES } from './reporters/index.js';

export const CONFIG_FILE = 'content-api.config.json';

export const configSchema = z
  .strictObject({
    $schema: z.string().optional().describe('the JSON Schema of this file (content-api schema --config), for editors'),
    ...policySchema.shape,
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('default for --base-url'),
    mediaPrefix: z.string().startsWith('/').optional().describe('default for --media-prefix'),
    verifyFiles: z
      .string()
      .min(1)
      .optional()
      .describe('default for --verify-files: a folder (relative to this file) or an http(s) base URL'),
    reporter: z.enum(REPORTER_NAMES).optional().describe('default for --reporter'),
    output: z.string().min(1).optional().describe('default for --output (relative to this file)'),
    maxWarnings: z.int().min(0).optional().describe('default for --max-warnings'),
    baseline: z.string().min(1).optional().describe('default for --baseline (relative to this file)'),
  })
  .describe('content-api configuration (content-api.config.json)');

export type Config = z.infer<typeof configSchema>;

export interface LoadedConfig {
  /** The file it came from, or null when there is none. */
  file: string | null;
  config: Config;
}

/** The config file cannot be read, is not JSON, or breaks the schema: exit 2, every problem listed. */
export class ConfigError extends ContentApiError {
  override name = 'ConfigError';
  readonly problems: string[];
  constructor(file: string, problems: string[]) {
    // The first line names the file; each problem follows on its own line, as `path: message`.
    super(
      'CONTENT_API_INVALID_CONFIG',
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file}: ${problems.length} problems\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.problems = problems;
  }
}

/** The JSON Schema of the config file, generated from the zod schema. */
export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
}

/** The largest config file read. */
const MAX_CONFIG_BYTES = 16 * 1024 * 1024;

/** The nearest `content-api.config.json` from `cwd` upward, or null. */
export async function findConfig(cwd: string = process.cwd()): Promise<string | null> {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const file = path.join(dir, CONFIG_FILE);
    // Anything there but a regular file (a FIFO, a link to /dev/zero) is found, and refused when loaded.
    if (await stat(file).catch(() => null)) return file;
    if (path.dirname(dir) === dir) return null;
  }
}

/** `file` (from `--config`), else the one found upward from `cwd`, else an empty config. */
export async function loadConfig(file?: string, cwd?: string): Promise<LoadedConfig> {
  const found = file ?? (await findConfig(cwd));
  if (found === null) return { file: null, config: {} };
  // Only a regular file is read: a FIFO or /dev/zero is refused before a byte is read.
  const read = await readFileWithin(found, MAX_CONFIG_BYTES, 'the cap on a config file');
  if (!read.ok) throw new ConfigError(found, [read.reason]);
  return { file: found, config: parseConfig(read.bytes, found) };
}

/**
 * Parses and validates a config, its text or its file's bytes (UTF-8, a leading byte-order
 * mark dropped); throws `ConfigError` with every problem as `path: message`.
 */
export function parseConfig(input: string | Uint8Array, file: string): Config {
  const result = parseJsonAs(configSchema, input, (issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => {
          const problem = issue.path.at(-1) === 'rules' ? 'not a rule id' : 'not a key the config file takes';
          return `${issuePath([...issue.path, key])}: ${problem}`;
        })
      : undefined,
  );
  if (result.ok) return result.data;
  throw new ConfigError(file, result.problems);
}
