/**
 * Reaching the queue: `--queue redis://[user:password@]host[:port][/db]` (or `rediss://` for
 * TLS) and `--queue-name`. Before any work, one short-lived connection checks that Redis
 * answers, that it keeps jobs (`maxmemory-policy noeviction`, as BullMQ requires) and that the
 * queue name is content-api's; then the long-lived connection rides out Redis restarts.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { escapeText, InvalidArgumentError, oneLine, QueueError } from '../errors.js';
import { bullmq } from '../packages/bullmq.js';
import { ioredis } from '../packages/ioredis.js';
import { DEFAULT_QUEUE_NAME, JOB_ID, keysFor, PROTOCOL, type QueueKeys } from './protocol.js';

export interface QueueOptions {
  /** `redis://host:6379`, `rediss://...` with TLS. */
  url: string;
  /** The BullMQ queue's name (default `content-api`): one Redis can hold several. */
  name?: string | undefined;
  /** Connecting to Redis at start, in ms (default 10,000). */
  timeoutMs?: number | undefined;
  /** The environment variable `url` came from (`CONTENT_API_QUEUE`), named in messages beside the URL. */
  urlFrom?: string | undefined;
  /** The environment variable `name` came from (`CONTENT_API_QUEUE_NAME`), named in messages about it. */
  nameFrom?: string | undefined;
}

/** A queue reached: its connection (shared by BullMQ's queue and workers), keys, and what the check found. */
export interface QueueConnection {
  redis: Redis;
  name: string;
  keys: QueueKeys;
  /** The URL without its password. */
  where: string;
  /** How messages name the Redis: `where`, and the environment variable it came from, if it did. */
  label: string;
  /** Said once: an eviction policy that can drop jobs, or one that could not be checked. */
  warnings: string[];
  close(): Promise<void>;
}

/** Checks `--queue`: throws `InvalidArgumentError` for anything but a redis:// or rediss:// URL. */
export function parseQueueUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('--queue: expected a Redis URL, redis://[user:password@]host[:port][/db]');
  }
  const shown = `--queue ${escapeText(redact(value))}`;
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new InvalidArgumentError(`${shown}: expected redis:// or rediss://, not ${escapeText(url.protocol)}//`);
  }
  if (url.hostname === '') throw new InvalidArgumentError(`${shown}: no host`);
  if (url.pathname.length > 1 && !/^\/\d+$/.test(url.pathname)) {
    throw new InvalidArgumentError(`${shown}: the path can only be a database number (/0)`);
  }
  // ioredis would take each parameter for an option (a key prefix BullMQ refuses, a password in clear).
  if (url.search !== '')
    throw new InvalidArgumentError(`${shown}: no ?parameters; user and password go before the host`);
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
  } catch {
    throw new InvalidArgumentError(`${shown}: the user or password has a % not followed by two hex digits (% is %25)`);
  }
  return value;
}

/**
 * A queue name is part of Redis keys: letters, digits, `-`, `_`, `.`. `from`: the environment
 * variable it came from.
 */
export function parseQueueName(value: string, from?: string): string {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(value)) {
    throw new InvalidArgumentError(
      `${from ?? '--queue-name'} ${escapeText(value)}: use letters, digits, '.', '_' and '-' (at most 100)`,
    );
  }
  return value;
}

/**
 * Connects to the queue. `claim`: `true`, a submitter or a worker marks the name as content-api's
 * if it is new; `false`, a reader (`queue results`) needs a queue content-api made there; `'look'`
 * (`queue status`): a name never used is an empty queue. Throws `QueueError` (one line) when Redis
 * cannot be reached or the name is another application's.
 */
export async function connectQueue(options: QueueOptions, claim: boolean | 'look'): Promise<QueueConnection> {
  const url = parseQueueUrl(options.url);
  const name = parseQueueName(options.name ?? DEFAULT_QUEUE_NAME, options.nameFrom);
  const where = redact(url);
  const label = options.urlFrom ? `${where} (${options.urlFrom})` : where;
  const keys = keysFor(name);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const probe = new ioredis.Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    enableReadyCheck: false,
  });
  let failure: Error | undefined;
  probe.on('error', (error: Error) => (failure ??= error));
  const warnings: string[] = [];
  let deadline: NodeJS.Timeout | undefined;
  try {
    // One bound for the whole check: a server that accepts connections and never answers.
    const silent = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    await Promise.race([
      silent,
      (async () => {
        await speaksRedis(url, timeoutMs);
        await probe.connect();
        await probe.ping();
        // ioredis selects the URL's database as it connects, and goes on in database 0 if that
        // fails. (Database 0 is where a connection begins: no SELECT, which an ACL may forbid.)
        const db = Number(new URL(url).pathname.slice(1));
        if (db > 0) await probe.select(db);
        warnings.push(...(await versionWarning(probe, label)), ...(await evictionWarning(probe, label)));
        const named = options.nameFrom ? `'${name}' (${options.nameFrom})` : `'${name}'`;
        await checkName(probe, keys, named, label, claim);
      })(),
    ]);
  } catch (error) {
    if (error instanceof QueueError) throw error;
    throw new QueueError(`${label}: cannot use Redis (${reason(failure ?? error)})`, { cause: error });
  } finally {
    clearTimeout(deadline);
    probe.disconnect();
  }
  // From here on, Redis going away is waited out: commands queue up and resume on reconnect
  // (BullMQ reports the trouble on its objects; this connection's own errors say nothing more).
  const redis = new ioredis.Redis(url, {
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: null,
    keepAlive: 30_000,
    retryStrategy: (times) => Math.min(250 * times, 2_000),
  });
  redis.on('error', () => undefined);
  return {
    redis,
    name,
    keys,
    where,
    label,
    warnings,
    // QUIT waits for a Redis that is away (commands queue until it is back): then just hang up.
    close: async () =>
      void (redis.status === 'ready' ? await redis.quit().catch(() => redis.disconnect()) : redis.disconnect()),
  };
}

/**
 * A BullMQ queue object on `queue`'s connection, for `use`, then closed (the connection stays
 * open: BullMQ leaves a connection it was given to its owner). Redis was checked by `connectQueue`.
 * `look`: only read (`queue status`), so that looking at a name never used leaves no key behind.
 */
export async function withBull<T>(queue: QueueConnection, use: (bull: Queue) => Promise<T>, look = false): Promise<T> {
  const bull = new bullmq.Queue(queue.name, { connection: queue.redis, ...BULL_OPTIONS, skipMetasUpdate: look });
  bull.on('error', () => undefined); // the connection retries on its own
  try {
    return await use(bull);
  } finally {
    await bull.close();
  }
}

/** Redis's clock, ms: what batches, results and rate windows are stamped with, whichever machine asks. */
export async function redisNow(queue: QueueConnection): Promise<number> {
  const [seconds, micros] = await queue.redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** For every BullMQ object: `connectQueue` has checked Redis's version and eviction policy, once, in one line each. */
export const BULL_OPTIONS = { skipVersionCheck: true } as const;

/** BullMQ needs Redis 5 and recommends 6.2. */
async function versionWarning(redis: Redis, where: string): Promise<string[]> {
  const info = await redis.info('server');
  const version = /^redis_version:([\d.]+)/m.exec(info)?.[1];
  if (version === undefined) return [];
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major < 5)
    throw new QueueError(`${where}: Redis ${version} is too old for BullMQ (5.0 or later; 6.2 or later recommended)`);
  return major < 6 || (major === 6 && minor < 2) ? [`${where}: Redis ${version}: BullMQ recommends 6.2 or later`] : [];
}

/** BullMQ needs Redis never to evict keys: a job evicted is lost without a trace. */
async function evictionWarning(redis: Redis, where: string): Promise<string[]> {
  const answer = await redis.config('GET', 'maxmemory-policy').catch(() => null);
  const policy = Array.isArray(answer) ? (answer[1] as string | undefined) : undefined;
  if (policy === undefined) {
    return [
      `${where}: cannot read maxmemory-policy (CONFIG is not allowed here); ` +
        'make sure it is noeviction, or Redis may drop jobs',
    ];
  }
  if (policy === 'noeviction') return [];
  return [
    `${where}: maxmemory-policy is ${policy}: Redis may drop jobs when memory runs short; ` +
      'set it to noeviction (BullMQ requires it)',
  ];
}

/** The queue name must be content-api's, of this protocol, or unused. `name` as messages say it, quoted. */
async function checkName(
  redis: Redis,
  keys: QueueKeys,
  name: string,
  where: string,
  claim: boolean | 'look',
): Promise<void> {
  const marker = await redis.get(keys.marker);
  if (marker === null) {
    if (await foreignJobs(redis, keys)) {
      throw new QueueError(
        `${where}: queue ${name} belongs to another application (it holds jobs content-api did not make); ` +
          'choose another --queue-name',
      );
    }
    if (claim === 'look') return; // nothing enqueued yet: an empty queue
    if (!claim) throw new QueueError(`${where}: no content-api queue named ${name} (nothing was ever enqueued there)`);
    await redis.set(keys.marker, JSON.stringify({ protocol: PROTOCOL }), 'NX');
    return;
  }
  let protocol: unknown;
  try {
    protocol = (JSON.parse(marker) as { protocol?: unknown }).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== PROTOCOL) {
    throw new QueueError(
      `${where}: queue ${name} was made by a content-api of another protocol ` +
        `(${escapeText(String(protocol))}, this one speaks ${PROTOCOL}); ` +
        'use another --queue-name, or the same version everywhere',
    );
  }
}

/**
 * Whether a queue without content-api's mark holds another application's jobs. A queue that
 * only has BullMQ's bookkeeping (a dashboard looked at it) or content-api's own jobs (Redis
 * lost the mark) is not another application's.
 */
async function foreignJobs(redis: Redis, keys: QueueKeys): Promise<boolean> {
  const ids: string[] = [];
  try {
    for (const list of ['wait', 'paused', 'active'])
      ids.push(...(await redis.lrange(`${keys.bullPrefix}${list}`, 0, 9)));
    for (const set of ['delayed', 'prioritized', 'completed', 'failed']) {
      ids.push(...(await redis.zrange(`${keys.bullPrefix}${set}`, 0, 9)));
    }
  } catch {
    return true; // keys of another shape: not a BullMQ queue content-api knows
  }
  return ids.some((id) => !JOB_ID.test(id));
}

/** What a Redis server's first answer to `PING` may take, at most: `+PONG`, `-NOAUTH ...`, `-DENIED ...`. */
const GREETING_LIMIT = 4096;

/**
 * Whether the server at `url` answers as Redis does, read within a bound: the first line of its
 * answer to an inline `PING` must be a RESP status or error (`+...` or `-...`) within
 * `GREETING_LIMIT` bytes. ioredis would read any reply whole (a server that streams a gigabyte
 * costs gigabytes before it is found out). A server that closes without a word is left to ioredis.
 */
async function speaksRedis(url: string, timeoutMs: number): Promise<void> {
  const { hostname, port, protocol } = new URL(url);
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const options = { host, port: Number(port || 6379), timeout: timeoutMs };
  const socket =
    protocol === 'rediss:'
      ? tls.connect({ ...options, servername: net.isIP(host) ? undefined : host })
      : net.connect(options);
  await new Promise<void>((resolve, reject) => {
    let answer = Buffer.alloc(0);
    const done = (error?: Error) => {
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    socket.once(protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.on('data', (data: Buffer) => {
      answer = Buffer.concat([answer, data]).subarray(0, GREETING_LIMIT);
      const end = answer.indexOf('\r\n');
      const first = answer[0];
      if (first !== 0x2b && first !== 0x2d) done(new Error('Protocol error: not a RESP status or error'));
      else if (end >= 0) done();
      else if (answer.length >= GREETING_LIMIT) done(new Error('Protocol error: no line break within the limit'));
    });
    socket.on('timeout', () => done(new Error(`no answer within ${timeoutMs} ms`)));
    socket.on('error', (error) => done(error));
    socket.on('close', () => done());
  });
}

/** The URL with its password (and any parameters) hidden, however malformed the URL. */
export function redact(given: string): string {
  const url = given.replace(/:[^:@/]*@/, ':***@');
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  if (parsed.search) parsed.search = '?...';
  return parsed.toString().replace(/\/$/, '');
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const text = oneLine(error);
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(text))
    return `authentication failed: ${escapeText(text)}`;
  if (/Protocol error/i.test(text)) return 'not a Redis server: it answered something else';
  // Nothing listens there: most often a Redis not started yet.
  if (code === 'ECONNREFUSED') return 'ECONNREFUSED: is redis-server running? start it with `redis-server`';
  if (code) return code;
  if (/Connection is closed|connect ETIMEDOUT|timed out/i.test(text)) return 'no answer';
  return escapeText(text);
}
