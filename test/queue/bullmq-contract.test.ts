/**
 * What the queue relies on of BullMQ beyond its documented API (#36), checked without Redis, in
 * milliseconds: an upgrade that changes any of it fails here, by name, before a queue test runs.
 * bull-worker.ts gives BullMQ's `Worker` a `backendFactory` that makes BullMQ's Redis backend and
 * wraps two things of it: the IQueueBackend methods through which the worker gets each job (its data
 * handed on as text, which `Job.fromJSON` must give back as it was), and `execCommand` for the
 * scripts that fetch a job (by their names), whose answer it reads as BullMQ will (`raw2NextJobData`,
 * `Job.fromJSON`); it drops a job by BullMQ's key names, with a script of its own (commands/*.lua,
 * read beside the module); connection.ts and collect.ts read BullMQ's keys of a queue.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createRedisBackend,
  type IQueueBackend,
  type JobJson,
  QueueKeys,
  RedisQueueBackend,
  raw2NextJobData,
  Worker,
} from 'bullmq';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FETCHES, keepDataText, NEXT_JOB_METHODS, unreadable } from '../../src/queue/bull-worker.js';
import { COMMAND_NAMES, commandFile, commandsOn } from '../../src/queue/commands.js';
import { keysFor } from '../../src/queue/protocol.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BULLMQ = path.join(ROOT, 'node_modules/bullmq');
/** BullMQ's compiled classes, as the worker runs them: the CommonJS build (src/packages/bullmq.ts). */
const compiled = (file: string) => readFileSync(path.join(BULLMQ, 'dist/cjs/classes', file), 'utf8');
const classes = () =>
  readdirSync(path.join(BULLMQ, 'dist/cjs/classes'))
    .filter((file) => file.endsWith('.js'))
    .map(compiled)
    .join('\n');
/** BullMQ's Lua scripts and their includes. */
const bullScripts = () =>
  ['commands', 'commands/includes']
    .map((dir) => path.join(BULLMQ, 'dist/cjs', dir))
    .flatMap((dir) =>
      readdirSync(dir)
        .filter((file) => file.endsWith('.lua'))
        .map((file) => path.join(dir, file)),
    )
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');

/** A job's JSON as a backend answers it, its data the text Redis holds (here not JSON at all). */
const JOB = {
  id: 'r1',
  name: 'render',
  data: '{"protocol": not json',
  opts: { attempts: 3 },
  progress: 0,
  delay: 0,
  timestamp: 5,
  attemptsMade: 0,
  attemptsStarted: 0,
  stalledCounter: 0,
} satisfies Partial<JobJson>;

/** A worker that takes no job by itself; its connection, never used, is its backend's. */
const NO_RUN = { connection: {}, autorun: false };

/**
 * A backend of no datastore, as a backendFactory may make: what a Worker uses as it is made and
 * fetches without blocking; moveToActive answers `JOB` once, then nothing.
 */
function fakeBackend(): IQueueBackend {
  const keys = new QueueKeys('bull').getKeys('content-api');
  let fetched = false;
  const backend = {
    keys,
    qualifiedName: 'bull:content-api',
    toKey: (type: string) => `bull:content-api:${type}`,
    closing: undefined,
    on: () => backend,
    once: () => backend,
    removeListener: () => backend,
    waitUntilReady: async () => undefined,
    close: async () => undefined,
    moveToActive: async () => {
      if (fetched) return [];
      fetched = true;
      return [JOB, 'r1', 0, 0];
    },
    moveToDelayed: async () => undefined,
    moveToCompleted: async () => ({ result: undefined, finishedOn: 0 }),
    moveToFailed: async () => ({ result: undefined, finishedOn: 0 }),
  };
  return backend as unknown as IQueueBackend;
}

describe("BullMQ's surface the queue relies on", () => {
  it('is the version package.json pins, exactly', () => {
    const pinned = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).dependencies.bullmq;
    const installed = JSON.parse(readFileSync(path.join(BULLMQ, 'package.json'), 'utf8')).version;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    expect(installed).toBe(pinned);
  });

  it('raw2NextJobData reads a fetched hash as the worker does, and throws on a field it cannot read', () => {
    const hash = ['name', 'render', 'data', '{"a":1}', 'opts', '{"attempts":3}', 'timestamp', '5'];
    const [json, id] = raw2NextJobData([hash, '7', 0, 0]) as [Record<string, unknown>, string];
    expect(id).toBe('7');
    // The data stays the text Redis holds: readJobData parses it, bounded.
    expect(json).toMatchObject({ name: 'render', data: '{"a":1}', opts: { attempts: 3 }, timestamp: 5 });
    expect(() => raw2NextJobData([['opts', '{'], '7', 0, 0])).toThrow(SyntaxError);
  });

  it("Worker's public constructor takes a backendFactory and calls it once as it constructs, for a worker", () => {
    const backend = fakeBackend();
    const calls: unknown[][] = [];
    const options = { connection: {}, autorun: false, lockDuration: 10_000 };
    const worker = new Worker('content-api', null, options, (...args) => {
      calls.push(args);
      return backend;
    });
    expect(calls).toHaveLength(1);
    const [name, opts, what] = calls[0]!;
    expect(name).toBe('content-api');
    // The worker's options as given, for createRedisBackend to make its connections from.
    expect(opts).toMatchObject(options);
    expect(what).toEqual({ withBlockingConnection: true });
    expect(worker.getBackend()).toBe(backend);
    // What the factory bull-worker.ts gives makes, and wraps the execCommand of.
    expect(typeof createRedisBackend).toBe('function');
    expect(typeof RedisQueueBackend.prototype.execCommand).toBe('function');
  });

  it('hands on a job through the backend methods keepDataText wraps, its data the text as it was', async () => {
    // Every backend method the worker and its jobs call that may answer a job to run next is wrapped.
    const called = new Set(
      [...`${compiled('worker.js')}\n${compiled('job.js')}`.matchAll(/backend\.(moveTo\w+)\(/g)].map((m) => m[1]),
    );
    // moveToWaitingChildren answers whether the job moved, never a job.
    expect([...called].filter((name) => name !== 'moveToWaitingChildren').sort()).toEqual([...NEXT_JOB_METHODS].sort());
    const backend = fakeBackend();
    keepDataText(backend);
    const worker = new Worker<string, unknown, string, IQueueBackend>('content-api', null, NO_RUN, () => backend);
    const job = await worker.getNextJob('token', { block: false });
    expect(job?.id).toBe('r1');
    expect(job?.data).toBe(JOB.data);
    expect(job?.opts).toMatchObject({ attempts: 3 });
    // Nothing fetched: nothing wrapped.
    expect(await backend.moveToActive('token')).toEqual([]);
  });

  it('fetches jobs through execCommand with the script names bull-worker.ts intercepts', () => {
    const called = new Set([...classes().matchAll(/execCommand\(\w+, '(\w+)'/g)].map((match) => match[1]));
    expect([...FETCHES].filter((name) => !called.has(name))).toEqual([]);
    const scripts = readdirSync(path.join(BULLMQ, 'dist/cjs/commands')).map((file) => file.replace(/-\d+\.lua$/, ''));
    expect([...FETCHES].filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it('makes a job of a hash as bull-worker.ts reads it: the field it cannot read is named, data is not read', () => {
    const worker = new Worker<string, unknown, string, IQueueBackend>('content-api', null, NO_RUN, fakeBackend);
    const hash = ['name', 'render', 'data', 'not json', 'opts', '{"attempts":3}', 'timestamp', '5'];
    expect(unreadable(worker, hash, 'r1')).toBeUndefined();
    for (const [field, value, reason] of [
      ['opts', 'null', /Cannot convert undefined or null to object/],
      ['opts', 'not json', /is not valid JSON/],
      ['progress', '{', /JSON/],
      ['parent', '{"id":', /JSON/],
      ['parent', '5', /^not a JSON object$/],
    ] as const) {
      const said = unreadable(worker, [...hash, field, value], 'r1');
      expect(said, `${field} ${value}`).toMatch(`a job hash BullMQ cannot read: its field '${field}' is unreadable (`);
      expect(said?.replace(/^[^(]*\((.*)\)$/, '$1'), `${field} ${value}`).toMatch(reason);
    }
  });

  it("names a queue's keys as protocol.ts's bullPrefix and commands/dropJob-3.lua assume", () => {
    const queueKeys = new QueueKeys('bull');
    const keys = queueKeys.getKeys('content-api');
    const prefix = keysFor('content-api').bullPrefix;
    for (const name of ['wait', 'paused', 'active', 'stalled', 'delayed', 'prioritized', 'completed', 'failed']) {
      expect(keys[name], name).toBe(`${prefix}${name}`);
    }
    expect(queueKeys.toKey('content-api', 'r1')).toBe(`${prefix}r1`);
    // A job's lock and logs, which dropJob-3.lua deletes with its hash.
    expect(bullScripts()).toContain("jobKey .. ':lock'");
    expect(bullScripts()).toContain("jobKey .. ':logs'");
  });
});

describe("the queue's own Redis scripts", () => {
  const folder = path.join(ROOT, 'src/queue/commands');

  it('are the files in src/queue/commands, each named for its number of keys, and the ones commandsOn loads', () => {
    const files = readdirSync(folder).sort();
    expect(COMMAND_NAMES.map((name) => fileURLToPath(commandFile(name))).sort()).toEqual(
      files.map((file) => path.join(folder, file)),
    );
    const defined = new Map<string, { numberOfKeys: number; lua: string }>();
    const redis = {
      defineCommand: (name: string, definition: { numberOfKeys: number; lua: string }) => {
        defined.set(name, definition);
      },
    };
    commandsOn(redis as unknown as Redis);
    expect(defined.size).toBe(files.length);
    for (const file of files) {
      const lua = readFileSync(path.join(folder, file), 'utf8');
      const loaded = [...defined.values()].find((definition) => definition.lua === lua);
      expect(loaded, file).toBeDefined();
      // The number in its name is the keys it reads, and the keys ioredis is told it takes.
      const keys = Math.max(...[...lua.matchAll(/KEYS\[(\d+)\]/g)].map((match) => Number(match[1])));
      expect(file).toBe(`${file.replace(/-\d+\.lua$/, '')}-${keys}.lua`);
      expect(loaded?.numberOfKeys, file).toBe(keys);
    }
  });

  it('are copied by the build beside the compiled module that reads them (npm run build)', () => {
    const built = path.join(ROOT, 'dist/queue/commands');
    expect(readdirSync(built).sort()).toEqual(readdirSync(folder).sort());
    for (const file of readdirSync(folder)) {
      expect(readFileSync(path.join(built, file), 'utf8'), file).toBe(readFileSync(path.join(folder, file), 'utf8'));
    }
  });
});
