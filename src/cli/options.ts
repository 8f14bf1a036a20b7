/**
 * Option groups that more than one command takes, each defined once with the reader that
 * turns parsed flags into the library's options: the HTTP client's bounds, S3, the queue, the
 * render settings (derived from their schema), and the API's base URL.
 */
import { type Command, InvalidArgumentError as InvalidChoice, Option } from 'commander';
import { z } from 'zod';
import { HTTP_DEFAULTS } from '../client/defaults.js';
import type { SiteQuery } from '../client/listing.js';
import { InvalidArgumentError } from '../errors.js';
import type { QueueOptions } from '../queue/connection.js';
import {
  expectedValue,
  type RenderSettingsInput,
  renderSettingsSchema,
  type SettingLeaf,
  type SettingsSchema,
  settingLeaves,
} from '../renditions/settings.js';
import type { S3Options } from '../storage/s3-url.js';
import { checkedBy, httpUrl, integerIn } from './parse.js';
import { SETTING_FLAGS, type SettingFlag } from './setting-flags.js';

/** Parsed flags, as commander hands them to an action. */
export type Flags = Record<string, unknown>;

/** `-j, --concurrency <n>`: how many things at once (`what`); without a default, the cores. */
export function concurrencyOption(what: string, fallback?: number): Option {
  const option = new Option('-j, --concurrency <n>', what).argParser(integerIn('--concurrency', 1));
  return fallback === undefined ? option : option.default(fallback);
}

/** What the HTTP flags say in a command's help: what the timeout, retries and size bound apply to. */
export interface HttpHelp {
  timeout: string;
  retries?: string;
  deadline?: string;
  maxBytes?: { what: string; default: number };
}

/** `--timeout`, and where the command fetches over HTTP `--retries`, `--deadline` and `--max-bytes`. */
export function addHttpOptions(command: Command, help: HttpHelp): Command {
  command.option('--timeout <ms>', help.timeout, integerIn('--timeout', 1), HTTP_DEFAULTS.timeoutMs);
  if (help.retries) command.option('--retries <n>', help.retries, integerIn('--retries', 0), HTTP_DEFAULTS.retries);
  if (help.deadline) {
    command.option('--deadline <ms>', help.deadline, integerIn('--deadline', 1), HTTP_DEFAULTS.deadlineMs);
  }
  if (help.maxBytes) {
    command.option('--max-bytes <n>', help.maxBytes.what, integerIn('--max-bytes', 1), help.maxBytes.default);
  }
  return command;
}

/** The HTTP client's options from the flags `addHttpOptions` added. */
export const httpFrom = (flags: Flags) => ({
  timeoutMs: flags.timeout as number,
  deadlineMs: flags.deadline as number,
  retries: flags.retries as number,
  maxBytes: flags.maxBytes as number,
});

/** `--base-url`: the API's base URL, from `CONTENT_API_BASE_URL` where `env`; checked where `check`. */
export function baseUrlOption(description: string, { env = true, check = false } = {}): Option {
  const option = new Option('--base-url <url>', description);
  if (env) option.env('CONTENT_API_BASE_URL');
  return check ? option.argParser(httpUrl('--base-url')) : option;
}

/** `--all-pages` and the listing's filters that narrow it: every page of a site, walked from its listing. */
export function addSiteOptions(command: Command): Command {
  return command
    .optionsGroup('A whole site (its Wagtail API v2 listing, walked page by page from --base-url):')
    .option('--all-pages', 'every published page the listing at --base-url gives, each in turn (no targets)')
    .option('--type <types>', 'with --all-pages: only pages of these types (site.PresentationPage[,...])')
    .option('--child-of <id|root>', 'with --all-pages: only the children of this page')
    .option('--descendant-of <id|root>', 'with --all-pages: only the pages below this one');
}

/** The site to walk (`addSiteOptions`), or undefined without `--all-pages`; refuses targets beside it. */
export function siteFrom(flags: Flags, targets: readonly string[]): SiteQuery | undefined {
  const filters = { type: '--type', childOf: '--child-of', descendantOf: '--descendant-of' } as const;
  if (!flags.allPages) {
    const given = Object.entries(filters).find(([key]) => flags[key] !== undefined);
    if (given) throw new InvalidArgumentError(`${given[1]} narrows --all-pages; give --all-pages too`);
    return undefined;
  }
  if (targets.length > 0)
    throw new InvalidArgumentError(`--all-pages takes no targets (got ${targets.length}): the listing names the pages`);
  return {
    type: flags.type as string | undefined,
    childOf: flags.childOf as string | undefined,
    descendantOf: flags.descendantOf as string | undefined,
  };
}

/** `--s3-endpoint` and `--s3-path-style`, in a group of their own in the help. */
export function addS3Options(command: Command): Command {
  return command
    .optionsGroup('S3 (s3:// locations; credentials, region and endpoint as every AWS tool reads them):')
    .addOption(
      new Option(
        '--s3-endpoint <url>',
        'an S3-compatible service (default: AWS, or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)',
      ).argParser(httpUrl('--s3-endpoint')),
    )
    .option(
      '--s3-path-style',
      'address buckets as https://host/bucket/ (S3-compatible services; always on for IP addresses and localhost)',
    );
}

/** How to reach S3, from `addS3Options`' flags and `--timeout`. */
export const s3From = (flags: Flags): S3Options => ({
  endpoint: flags.s3Endpoint as string | undefined,
  pathStyle: Boolean(flags.s3PathStyle),
  timeoutMs: flags.timeout as number,
});

/**
 * `--queue` and `--queue-name`. `--queue` comes from `CONTENT_API_QUEUE` too for the queue's own
 * commands (`fromEnvironment`), never for render: a worker's setting must not turn renders into
 * queue renders.
 */
export function addQueueOptions(command: Command, what: string, fromEnvironment = true): Command {
  const queue = new Option('--queue <redis-url>', `${what}: redis://[user:password@]host[:port][/db] or rediss://`);
  return command
    .addOption(fromEnvironment ? queue.env('CONTENT_API_QUEUE') : queue)
    .addOption(
      new Option('--queue-name <name>', 'the queue in that Redis').env('CONTENT_API_QUEUE_NAME').default('content-api'),
    );
}

/**
 * The queue to reach, from `addQueueOptions`' flags and `--timeout`; `command` tells whether the
 * URL and name came from the environment, which messages then name. `--queue` is required
 * (commander's own message would not say that `CONTENT_API_QUEUE` gives it too).
 */
export function queueFrom(flags: Flags, command?: Command): QueueOptions {
  if (typeof flags.queue !== 'string') {
    throw new InvalidArgumentError("required option '--queue <redis-url>' not specified (or set CONTENT_API_QUEUE)");
  }
  const fromEnv = (key: string, variable: string) =>
    command?.getOptionValueSource(key) === 'env' ? variable : undefined;
  return {
    url: flags.queue,
    name: flags.queueName as string,
    timeoutMs: flags.timeout as number | undefined,
    urlFrom: fromEnv('queue', 'CONTENT_API_QUEUE'),
    nameFrom: fromEnv('queueName', 'CONTENT_API_QUEUE_NAME'),
  };
}

/** Flags by setting path, of any settings schema (`SETTING_FLAGS`, for every setting of `renderSettingsSchema`). */
export type SettingFlags = Readonly<Record<string, SettingFlag>>;

/**
 * A flag for every render setting, derived from the settings schema: its name and help from
 * its entry in `settingFlags` (setting-flags.ts), its check (an integer's range, an enum's
 * choices) and default from its schema. A setting added to the schema is a flag of `render`
 * with its entry in SETTING_FLAGS and nothing written here; without an entry, it is refused at once.
 */
export function addSettingOptions(
  command: Command,
  schema: SettingsSchema = renderSettingsSchema,
  settingFlags: SettingFlags = SETTING_FLAGS,
): Command {
  for (const leaf of settingLeaves(schema)) {
    const flag = flagOf(leaf, settingFlags);
    command.addOption(settingOption(leaf, flag));
    const { alias } = flag;
    if (alias) {
      // Its choices listed in --help; a value in another case (`--format JPG`) is the same choice.
      const option = new Option(alias.flag, alias.description).choices(alias.choices);
      const choice = (value: string) => {
        // Commander's own error and words for a choice refused, as every other flag with choices says it.
        if (!alias.choices.includes(value.toLowerCase()))
          throw new InvalidChoice(`Allowed choices are ${alias.choices.join(', ')}.`);
        return value.toLowerCase();
      };
      command.addOption(option.argParser(choice));
    }
  }
  return command;
}

function settingOption(leaf: SettingLeaf, { flag, description, flagHint }: SettingFlag): Option {
  const { type, fallback } = leaf;
  const option = new Option(flag, description);
  const name = option.long ?? flag;
  if (type instanceof z.ZodNumber) {
    option.argParser(integerIn(name, type.minValue ?? 0, type.maxValue ?? Number.MAX_SAFE_INTEGER));
  } else if (type instanceof z.ZodString) {
    // Checked as it is parsed, so that the message names the flag (the library's names the setting).
    option.argParser(checkedBy(name, expectedValue(leaf), (value) => type.safeParse(value).success, flagHint));
  } else if (type instanceof z.ZodEnum) {
    option.choices(type.options.map(String));
  } else if (type instanceof z.ZodArray) {
    // A list is comma-separated (spaces around items allowed); its items are checked with the rest of the settings.
    option.argParser((value: string) => value.split(',').map((item) => item.trim()));
  }
  // A boolean setting is a switch: off unless given, as its default says. A list's default is
  // left to the schema, so that a flag given can be told from one not given.
  if (fallback !== undefined && !(type instanceof z.ZodBoolean) && !(type instanceof z.ZodArray)) {
    option.default(fallback);
  }
  return option;
}

/** The render settings the flags give, as the library takes them (nested where the schema nests). */
export function settingsFrom(
  flags: Flags,
  schema: SettingsSchema = renderSettingsSchema,
  settingFlags: SettingFlags = SETTING_FLAGS,
): RenderSettingsInput {
  const settings: Record<string, unknown> = {};
  for (const leaf of settingLeaves(schema)) {
    const { flag, alias } = flagOf(leaf, settingFlags);
    let value = flags[new Option(flag).attributeName()];
    const aliased = alias && flags[new Option(alias.flag).attributeName()];
    if (alias && typeof aliased === 'string') {
      if (value !== undefined) {
        throw new InvalidArgumentError(`${longName(alias.flag)} and ${longName(flag)} do not go together: give one`);
      }
      value = alias.value(aliased);
    }
    if (value === undefined) continue;
    let at = settings;
    for (const name of leaf.path.slice(0, -1)) {
      at[name] ??= {};
      at = at[name] as Record<string, unknown>;
    }
    at[leaf.path.at(-1)!] = value;
  }
  return settings as RenderSettingsInput;
}

const longName = (flag: string) => new Option(flag).long ?? flag;

/** `leaf`'s flag: a setting without one is refused, not silently left out of the flags. */
function flagOf(leaf: SettingLeaf, flags: SettingFlags): SettingFlag {
  const name = leaf.path.join('.');
  const flag = flags[name];
  if (!flag) throw new Error(`setting ${name} has no flag (add it to SETTING_FLAGS, src/cli/setting-flags.ts)`);
  return flag;
}
