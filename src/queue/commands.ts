/**
 * content-api's own Redis scripts. Each is a file, `commands/<name>-<number of keys>.lua`, as
 * BullMQ keeps its own; its keys, arguments and reply are typed here, in `Commands`, and nowhere
 * else. The build copies the files beside the compiled module (scripts/copy-commands.js): they are
 * read from where this module is, in src/ under the tests and in dist/ once built.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** Each command's keys, arguments (after the keys) and reply, as its script reads and answers them. */
export interface Commands {
  /** Takes a job BullMQ cannot read out of the queue, if still active: 1, else 0 (a stalled check put it back). */
  dropJob: {
    keys: [active: string, stalled: string, job: string];
    args: [id: string];
    reply: 0 | 1;
  };
  /**
   * A job's result for its batch, the queue's counters, the rate window and the batch's count, in one
   * step; a result the batch already has is kept and counted once. Answers Redis's clock, ms.
   */
  writeResult: {
    keys: [result: string, stats: string, tick: string, batchDone: string, marker: string, denied: string];
    args: [
      record: string,
      ttlSeconds: number,
      tickMs: number,
      marker: string,
      rendered: number,
      skipped: number,
      failed: number,
      finished: number,
      batch: string,
      unknownBatch: string,
    ];
    reply: number;
  };
}
export type CommandName = keyof Commands;

/** Each command's number of keys, as its file is named: the type makes it its key tuple's length. */
const KEY_COUNTS: { [N in CommandName]: Commands[N]['keys']['length'] } = { dropJob: 3, writeResult: 6 };

export const COMMAND_NAMES = Object.keys(KEY_COUNTS) as CommandName[];

/** Where `name`'s script is read from: beside this module. */
export function commandFile(name: CommandName): URL {
  return new URL(`./commands/${name}-${KEY_COUNTS[name]}.lua`, import.meta.url);
}

/** A command as ioredis names it on a connection (`contentApiDropJob`): beside BullMQ's, never one of them. */
const methodOf = (name: CommandName) => `contentApi${name[0]!.toUpperCase()}${name.slice(1)}`;

/**
 * Each command's script, read once, as this module loads: a build without them fails as the worker's
 * modules are imported, before any connection is made.
 */
const SCRIPTS = Object.fromEntries(
  COMMAND_NAMES.map((name) => [name, readFileSync(commandFile(name), 'utf8')]),
) as Record<CommandName, string>;

/** Runs a command: its keys, then its arguments; answers its reply. */
export type RunCommand = <N extends CommandName>(
  name: N,
  keys: Commands[N]['keys'],
  args: Commands[N]['args'],
) => Promise<Commands[N]['reply']>;

/**
 * Defines every command on `redis` (ioredis runs each by its SHA, and sends the script again to a
 * Redis that lost it) and answers a runner.
 */
export function commandsOn(redis: Redis): RunCommand {
  for (const name of COMMAND_NAMES) {
    redis.defineCommand(methodOf(name), { numberOfKeys: KEY_COUNTS[name], lua: SCRIPTS[name] });
  }
  // ioredis adds a defined command as a method of the connection, which its types cannot name.
  const methods = redis as unknown as Record<string, (...args: Array<string | number>) => Promise<unknown>>;
  return (name, keys, args) =>
    methods[methodOf(name)]!.call(redis, ...keys, ...args) as Promise<Commands[typeof name]['reply']>;
}
