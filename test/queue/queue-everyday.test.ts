/**
 * Everyday use of the queue commands (issue #22, round 3), against a real redis-server started
 * here: the time `queue results` says, `queue status` on a queue nothing was enqueued to yet,
 * messages that name the environment variable the queue came from, and a Redis not running.
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { redisForFile, WITHOUT_QUEUE_ENV } from '../fixtures/redis.js';
import { tempDir } from '../fixtures/tmp.js';

const redis = redisForFile();

const clean = WITHOUT_QUEUE_ENV;

/** Keeps Redis busy for `ms` (a script that loops on TIME): every other client waits for it. */
function busy(ms: number): Promise<unknown> {
  const client = new Redis(redis.url);
  const script = `local t = redis.call('TIME'); local start = t[1] * 1000000 + t[2]
    while true do
      local n = redis.call('TIME')
      if n[1] * 1000000 + n[2] - start > ${ms * 1000} then break end
    end
    return 1`;
  return client.eval(script, 0).finally(() => client.disconnect());
}

describe('queue results', () => {
  it('says the time the command took, a Redis slow to answer included', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'one.jpg', photo(400, 300).jpeg());
    const queue = ['--queue', redis.url, '--queue-name', 'timed'];
    const out = path.join(await tempDir(), 'media');
    const detached = await runCli(['render', dir, '--out', out, ...queue, '--detach'], { env: clean });
    expect(detached.code, detached.stderr).toBe(0);
    const blocked = busy(3_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    // A process of its own: the time said is the process's, from its start (loading and connecting included).
    const started = Date.now();
    const result = await startCli(['queue', 'results', detached.stdout.trim(), ...queue, '--no-wait'], { env: clean })
      .done;
    const took = (Date.now() - started) / 1000;
    await blocked;
    expect(result.code, result.stderr).toBe(1);
    const said = Number(/ in ([\d.]+) s/.exec(result.stderr)?.[1]);
    expect(took, 'Redis was busy').toBeGreaterThan(2.5);
    expect(said, result.stderr).toBeGreaterThan(2.5);
    expect(said).toBeLessThanOrEqual(took + 0.05);
  }, 30_000);
});

describe('queue status', () => {
  it('on a Redis where nothing was enqueued yet: an empty status, exit 0, with --json too', async () => {
    const queue = ['--queue', redis.url, '--queue-name', 'never-used'];
    const text = await runCli(['queue', 'status', ...queue], { env: clean });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toContain("queue 'never-used' on");
    expect(text.stdout).toContain('jobs:      0 waiting, 0 active, 0 retrying later');
    expect(text.stdout).toContain('finished:  0 rendered, 0 up to date, 0 failed (0 retries)');
    const json = await runCli(['queue', 'status', ...queue, '--json'], { env: clean });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      queue: 'never-used',
      redis: redis.url,
      jobs: { waiting: 0, active: 0, delayed: 0 },
      finished: { rendered: 0, skipped: 0, failed: 0, retried: 0 },
      rate: 0,
      eta: 0,
      batches: [],
    });
    // Looking made nothing: the name is still free for any application.
    const client = new Redis(redis.url);
    expect(await client.keys('*never-used*')).toEqual([]);
    client.disconnect();
  });

  it('without --queue, the messages name CONTENT_API_QUEUE (and CONTENT_API_QUEUE_NAME)', async () => {
    for (const command of [['queue', 'status'], ['queue', 'results', '20260101-000000-abcdef'], ['worker']]) {
      const missing = await runCli(command, { env: clean });
      expect(missing.code, command.join(' ')).toBe(2);
      expect(missing.stderr.trim().split('\n')).toEqual([
        "error: required option '--queue <redis-url>' not specified (or set CONTENT_API_QUEUE)",
      ]);
    }
    const fromEnv = { CONTENT_API_QUEUE: redis.url, CONTENT_API_QUEUE_NAME: undefined };
    const batch = await runCli(['queue', 'results', '20260101-000000-abcdef', '--queue-name', 'nothing-here'], {
      env: fromEnv,
    });
    expect(batch.code).toBe(2);
    expect(batch.stderr.trim().split('\n')).toEqual([
      `error: ${redis.url} (CONTENT_API_QUEUE): no content-api queue named 'nothing-here' ` +
        '(nothing was ever enqueued there)',
    ]);
    const named = await runCli(['queue', 'results', '20260101-000000-abcdef'], {
      env: { CONTENT_API_QUEUE: redis.url, CONTENT_API_QUEUE_NAME: 'nothing-here' },
    });
    expect(named.stderr.trim().split('\n')).toEqual([
      `error: ${redis.url} (CONTENT_API_QUEUE): no content-api queue named 'nothing-here' ` +
        '(CONTENT_API_QUEUE_NAME) (nothing was ever enqueued there)',
    ]);
    const bad = await runCli(['queue', 'status'], {
      env: { CONTENT_API_QUEUE: redis.url, CONTENT_API_QUEUE_NAME: 'a:b' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toEqual([
      "error: CONTENT_API_QUEUE_NAME a:b: use letters, digits, '.', '_' and '-' (at most 100)",
    ]);
    // Given on the command line, the flag is what messages name, as before.
    const flag = await runCli(['queue', 'status', '--queue', redis.url, '--queue-name', 'a:b'], { env: clean });
    expect(flag.stderr).toContain('error: --queue-name a:b: use letters');
  });
});

describe('Redis not running', () => {
  it('one line naming the URL tried and how to start Redis', async () => {
    const closed = 'redis://127.0.0.1:1';
    for (const args of [
      ['queue', 'status', '--queue', closed],
      ['queue', 'results', '20260101-000000-abcdef', '--queue', closed],
      ['worker', '--queue', closed],
    ]) {
      const result = await runCli(args, { env: clean });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        `error: ${closed}: cannot use Redis (ECONNREFUSED: is redis-server running? start it with \`redis-server\`)`,
      ]);
    }
    const fromEnv = await runCli(['queue', 'status'], { env: { ...clean, CONTENT_API_QUEUE: closed } });
    expect(fromEnv.stderr.trim()).toBe(
      `error: ${closed} (CONTENT_API_QUEUE): cannot use Redis ` +
        '(ECONNREFUSED: is redis-server running? start it with `redis-server`)',
    );
  });
});
