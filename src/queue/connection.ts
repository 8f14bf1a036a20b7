/**
 * Reaching the queue: `--queue redis://[user:password@]host[:port][/db]` (or `rediss://` for
 * TLS) and `--queue-name`. Before any work, one short-lived connection checks that Redis
 * answers, that it keeps jobs (`maxmemory-policy noeviction`, as BullMQ requires) and that the
 * queue name is content-api's; then the long-lived connection rides out Redis restarts.
 */
import { Redis } from 'ioredis';
import { InvalidArgumentError, QueueError, escapeText, oneLine } from '../errors.js';
import { DEFAULT_QUEUE_NAME, keysFor, PROTOCOL, type QueueKeys } from './protocol.js';

export interface QueueOptions {
  /** `redis://host:6379`, `rediss://...` with TLS. */
  url: string;
  /** The BullMQ queue's name (default `content-api`): one Redis can hold several. */
  name?: string | undefined;
  /** Connecting to Redis at start, in ms (default 10,000). */
  timeoutMs?: number | undefined;
}

/** A queue reached: its connection (shared by BullMQ's queue and workers), keys, and what the check found. */
export interface QueueConnection {
  redis: Redis;
  name: string;
  keys: QueueKeys;
  /** The URL without its password, for messages. */
  where: string;
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
    throw new InvalidArgumentError(`--queue ${escapeText(value)}: expected a Redis URL, redis://host:6379`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new InvalidArgumentError(`--queue ${escapeText(value)}: expected redis:// or rediss://, not ${url.protocol}//`);
  }
  if (url.hostname === '') throw new InvalidArgumentError(`--queue ${escapeText(value)}: no host`);
  if (url.pathname.length > 1 && !/^\/\d+$/.test(url.pathname)) {
    throw new InvalidArgumentError(`--queue ${escapeText(value)}: the path can only be a database number (/0)`);
  }
  return value;
}

/** A queue name is part of Redis keys: letters, digits, `-`, `_`, `.`. */
export function parseQueueName(value: string): string {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(value)) {
    throw new InvalidArgumentError(`--queue-name ${escapeText(value)}: use letters, digits, '.', '_' and '-' (at most 100)`);
  }
  return value;
}

/**
 * Connects to the queue. `claim`: a submitter or a worker marks the name as content-api's if
 * it is new; a reader (`queue status`) only looks. Throws `QueueError` (one line) when Redis
 * cannot be reached or the name is another application's.
 */
export async function connectQueue(options: QueueOptions, claim: boolean): Promise<QueueConnection> {
  const url = parseQueueUrl(options.url);
  const name = parseQueueName(options.name ?? DEFAULT_QUEUE_NAME);
  const where = redact(url);
  const keys = keysFor(name);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const probe = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let failure: Error | undefined;
  probe.on('error', (error: Error) => (failure ??= error));
  const warnings: string[] = [];
  try {
    await probe.connect();
    await probe.ping();
    warnings.push(...(await evictionWarning(probe, where)));
    await checkName(probe, keys, name, where, claim);
  } catch (error) {
    if (error instanceof QueueError) throw error;
    throw new QueueError(`${where}: cannot use Redis (${reason(failure ?? error)})`, { cause: error });
  } finally {
    probe.disconnect();
  }
  // From here on, Redis going away is waited out: commands queue up and resume on reconnect.
  const redis = new Redis(url, {
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(250 * times, 2_000),
  });
  return { redis, name, keys, where, warnings, close: async () => void (await redis.quit().catch(() => redis.disconnect())) };
}

/** BullMQ needs Redis never to evict keys: a job evicted is lost without a trace. */
async function evictionWarning(redis: Redis, where: string): Promise<string[]> {
  const answer = await redis.config('GET', 'maxmemory-policy').catch(() => null);
  const policy = Array.isArray(answer) ? (answer[1] as string | undefined) : undefined;
  if (policy === undefined) {
    return [`${where}: cannot read maxmemory-policy (CONFIG is not allowed here); make sure it is noeviction, or Redis may drop jobs`];
  }
  if (policy === 'noeviction') return [];
  return [`${where}: maxmemory-policy is ${policy}: Redis may drop jobs when memory runs short; set it to noeviction (BullMQ requires it)`];
}

/** The queue name must be content-api's, of this protocol, or unused. */
async function checkName(redis: Redis, keys: QueueKeys, name: string, where: string, claim: boolean): Promise<void> {
  const marker = await redis.get(keys.marker);
  if (marker === null) {
    const used = ['meta', 'id', 'events', 'wait', 'active', 'delayed', 'completed', 'failed'];
    if ((await redis.exists(...used.map((key) => `${keys.bullPrefix}${key}`))) > 0) {
      throw new QueueError(`${where}: queue '${name}' belongs to another application (BullMQ keys without content-api's mark); choose another --queue-name`);
    }
    if (!claim) throw new QueueError(`${where}: no content-api queue named '${name}' (nothing was ever enqueued there)`);
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
    throw new QueueError(`${where}: queue '${name}' was made by a content-api of another protocol (${escapeText(String(protocol))}, this one speaks ${PROTOCOL}); use another --queue-name, or the same version everywhere`);
  }
}

/** The URL with its password hidden. */
export function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString().replace(/\/$/, '');
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const text = oneLine(error);
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(text)) return `authentication failed: ${escapeText(text)}`;
  if (code) return code;
  if (/Connection is closed|connect ETIMEDOUT|timed out/i.test(text)) return 'no answer';
  return escapeText(text);
}
