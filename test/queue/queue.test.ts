/**
 * Rendering through the queue, with real servers on loopback: redis-server (started here) and
 * s3rver; workers are the built binary in processes of their own, killed the way machines die
 * (SIGKILL to the whole process group). `render --queue` and `queue` run in the test's process
 * (runCli) but where a signal is sent to them or a terminal draws them.
 */

import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectQueue } from '../../src/queue/connection.js';
import { enqueueRender } from '../../src/queue/enqueue.js';
import { keysFor, PROTOCOL, RESULT_TTL_SECONDS } from '../../src/queue/protocol.js';
import { BIN, runCli, runInTerminal, startCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { type LaunchedProcess, spawn } from '../fixtures/launcher.js';
import { type RedisServer, startRedis } from '../fixtures/redis.js';
import { startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';

/** A worker process, in a process group of its own; its stderr (one line per job) as it comes. */
interface WorkerProcess {
  child: LaunchedProcess;
  log: () => string;
  /** Resolves once the log has `count` lines naming a finished job (rendered, skipped or failed). */
  finished(count: number): Promise<void>;
  /** Resolves once the log contains `text`: awaited as it comes, not polled. */
  said(text: string): Promise<void>;
  exited: Promise<number | null>;
}

const workers: WorkerProcess[] = [];

function startWorker(args: string[], env: Record<string, string | undefined> = {}): WorkerProcess {
  const child = spawn(process.execPath, [BIN, 'worker', ...args], {
    env: { ...process.env, NO_COLOR: '1', CI: '1', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let log = '';
  const waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const jobLines = () => log.split('\n').filter((line) => /^(rendered|skipped|failed)\t/.test(line)).length;
  const until = (done: () => boolean) =>
    done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ done, resolve }));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
    for (const waiter of [...waiters]) {
      if (waiter.done()) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const worker: WorkerProcess = {
    child,
    log: () => log,
    finished: (count) => until(() => jobLines() >= count),
    said: (text) => until(() => log.includes(text)),
    exited,
  };
  workers.push(worker);
  return worker;
}

/** Resolves once a command started with `startCli` has written `text` to stderr: awaited, not polled. */
function stderrSays(run: ReturnType<typeof startCli>, text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!run.output().stderr.includes(text)) return false;
      run.child.stderr!.off('data', check);
      resolve();
      return true;
    };
    if (!check()) run.child.stderr!.on('data', check);
  });
}

/** SIGTERM and wait: the worker finishes what it has under way. */
async function stopWorker(worker: WorkerProcess): Promise<number | null> {
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
  return worker.exited;
}

afterEach(async () => {
  for (const worker of workers.splice(0)) {
    try {
      process.kill(-worker.child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  }
});

/**
 * The local originals the tests render, each set in a folder of its own under one temporary root
 * (its `-out` folders beside it), made once for the file. Files changed in the last 2 s have no
 * settled stamp yet (see render's RACY_MS): they are let settle once, together, not once a test.
 */
const ORIGINALS = {
  twice: { count: 3, size: 600, corrupt: ['broken.jpg'] },
  terminal: { count: 2, size: 600 },
  restarted: { count: 6, size: 2400 },
  forgetful: { count: 4, size: 1600 },
  interrupted: { count: 3, size: 300 },
  noOutput: { count: 1, size: 400 },
  enqueueAborted: { count: 2, size: 300 },
  sigterm: { count: 2, size: 3000 },
  sigtermStarting: { count: 2, size: 3000 },
  unreachable: { count: 1, size: 300 },
  full: { count: 40, size: 300 },
  evicting: { count: 1, size: 300 },
} satisfies Record<string, { count: number; size: number; corrupt?: string[] }>;
type OriginalsSet = keyof typeof ORIGINALS;

/** `count` tiny originals with long names (about 100 characters) in a folder of their own: a batch of large jobs. */
async function longNamedOriginals(count: number): Promise<string> {
  const dir = path.join(await tempDir(), 'many');
  const pixel = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer();
  await mkdir(dir);
  const fileName = (i: number) => `${'a-long-name-'.repeat(8)}${i}.jpg`;
  await Promise.all([...Array(count).keys()].map((i) => writeFile(path.join(dir, fileName(i)), pixel)));
  return dir;
}

let originalsRoot: string | undefined;

async function makeOriginals(): Promise<void> {
  originalsRoot = await mkdtemp(path.join(tmpdir(), 'content-api-queue-'));
  const root = originalsRoot;
  await Promise.all(
    Object.entries(ORIGINALS).map(async ([set, spec]) => {
      const dir = path.join(root, set);
      await mkdir(dir);
      for (let i = 0; i < spec.count; i++)
        await writeImage(dir, `photo-${i}.jpg`, photo(spec.size + i * 10, Math.round(spec.size * 0.7)).jpeg());
      for (const name of 'corrupt' in spec ? spec.corrupt : []) {
        await writeFile(path.join(dir, name), Buffer.from('not a picture at all, just bytes'));
      }
    }),
  );
  await new Promise((resolve) => setTimeout(resolve, 2_100));
}

/** The folder of a set of settled originals (see ORIGINALS); each test takes a set of its own. */
function originals(set: OriginalsSet): string {
  return path.join(originalsRoot!, set);
}

describe('the queue commands without Redis', () => {
  it('worker, queue status and queue results have --help with examples and exit codes', async () => {
    for (const [command, flag] of [
      [['worker'], '--concurrency'],
      [['queue', 'status'], '--json'],
      [['queue', 'results'], '--no-wait'],
    ] as const) {
      const result = await runCli([...command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Usage: content-api ${command.join(' ')}`);
      for (const option of ['--queue <redis-url>', '--queue-name', flag]) expect(result.stdout).toContain(option);
      expect(result.stdout.split('Examples:\n')[1]).toContain(`  $ content-api ${command.join(' ')} `);
      expect(result.stdout).toMatch(/Exit codes:\n {2}0 /);
    }
    const render = await runCli(['render', '--help']);
    expect(render.stdout).toContain('--queue <redis-url>');
    expect(render.stdout).toContain('--detach');
  });

  it('flags that do not go with --queue are refused before anything is enqueued', async () => {
    const cases: Array<[string[], string]> = [
      [['render', 'samples/originals', '--queue', 'redis://127.0.0.1:1', '--dry-run'], '--dry-run plans here'],
      [['render', 'samples/originals', '--queue', 'redis://127.0.0.1:1', '-j', '2'], "--concurrency is the workers'"],
      [['render', '--page', '101', '--queue', 'redis://127.0.0.1:1'], '--queue does not apply to --page'],
      [['render', 'samples/originals', '--detach'], '--detach applies only with --queue'],
      [['worker', '--queue', 'redis://127.0.0.1:1', '--queue-name', 'a:b'], '--queue-name a:b: use letters'],
      [['worker'], "required option '--queue <redis-url>' not specified (or set CONTENT_API_QUEUE)"],
      [['worker', '--queue', 'redis://127.0.0.1:1', '--lock-ms', '1999'], '--lock-ms'],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
    }
  });
});

describe('a server that is not Redis (#22)', () => {
  it('one streaming a 1 GiB reply is told apart after a bounded read: one line, exit 2', async () => {
    let written = 0;
    const chunk = Buffer.alloc(1 << 20, 0x61);
    const server = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.write(`$${2 ** 30}\r\n`);
      const more = () => {
        while (written < 2 ** 30 && !socket.destroyed && socket.write(chunk)) written += chunk.length;
        if (written >= 2 ** 30) socket.end();
      };
      socket.on('drain', more);
      more();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    try {
      const result = await runCli(['queue', 'status', '--queue', url]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        `error: ${url}: cannot use Redis (not a Redis server: it answered something else)`,
      ]);
      // What the server could write before the client hung up: kernel buffers, not the gigabyte.
      expect(written).toBeLessThan(64 << 20);
    } finally {
      server.close();
    }
  }, 60_000);
});

describe('content-api render --queue, worker, queue', () => {
  let redis: RedisServer;
  let s3: TestS3;
  let queueRun = 0;
  let name: string;
  beforeAll(async () => {
    [redis, s3] = await Promise.all([startRedis(), startS3(['media', 'originals']), makeOriginals()]);
  });
  afterAll(async () => {
    await Promise.all([
      redis?.stop(),
      s3?.close(),
      originalsRoot && rm(originalsRoot, { recursive: true, force: true }),
    ]);
  });
  const nextQueue = () => (name = `test-${++queueRun}`);
  const queueArgs = (server = redis) => ['--queue', server.url, '--queue-name', name];

  it('three workers, one killed with SIGKILL mid-job: ' +
    'every original rendered once, whole, the report a local run gives', async () => {
    nextQueue();
    const count = 8;
    // The workers start (a process each) while the originals are made; their locks last 3 s, not 10.
    const pool = [0, 1, 2].map(() => startWorker([...queueArgs(), '-j', '1', '--lock-ms', '3000'], s3.env));
    await Promise.all(
      [...Array(count).keys()].map(async (i) => {
        const image = await photo(2400 + i * 16, 1700)
          .jpeg()
          .toBuffer();
        await s3.put('originals', `q1/photo-${i}.jpg`, image);
      }),
    );
    const events = new QueueEvents(name, { connection: { host: '127.0.0.1', port: redis.port } });
    const stalled: string[] = [];
    events.on('stalled', ({ jobId }) => stalled.push(jobId));
    await events.waitUntilReady();
    try {
      const run = runCli(['render', 's3://originals/q1/', '--out', 's3://media/queued/', ...queueArgs(), '--json'], {
        env: s3.env,
      });
      // Killed once it has finished one job and taken the next: mid-job.
      await pool[0]!.finished(1);
      await new Promise((resolve) => setTimeout(resolve, 150));
      process.kill(-pool[0]!.child.pid!, 'SIGKILL');
      await pool[0]!.exited;
      // A single machine's run over the same originals, into another prefix: a process of its own,
      // run while the queue waits for the killed worker's lock to lapse (3 s or more).
      const localRun = startCli(['render', 's3://originals/q1/', '--out', 's3://media/local/', '--json'], {
        env: s3.env,
      }).done;
      const result = await run;
      expect(result.code, result.stderr).toBe(0);
      expect(stalled.length, 'the killed worker had a job under way').toBeGreaterThan(0);

      const queued = JSON.parse(result.stdout);
      const sources = queued.results.map((entry: { source: string }) => entry.source);
      expect(sources).toEqual([...Array(count).keys()].map((i) => `s3://originals/q1/photo-${i}.jpg`));
      expect(queued.results.every((entry: { status: string }) => entry.status === 'rendered')).toBe(true);
      expect(queued.failures).toEqual([]);

      // The single machine's run reports the same.
      const local = await localRun;
      expect(local.code, local.stderr).toBe(0);
      // But for one warning: whichever run next opens a bucket's originals on this machine (a
      // worker after the kill, or the local run) finds the killed worker's temporary copy of an
      // original, removes it, and says so.
      const swept = 'removed 1 temporary file(s) left by an interrupted run';
      const withoutSweep = (report: { warnings: string[] }) => {
        expect(report.warnings.filter((warning) => warning !== swept)).toEqual([]);
        return { ...report, warnings: [] };
      };
      const single = JSON.parse(local.stdout.replaceAll('s3://media/local/', 's3://media/queued/'));
      expect(withoutSweep(single)).toEqual(withoutSweep(queued));

      // Every object whole, one record per original, identical to the local run's objects.
      const objects = await s3.objects('media', 'queued/');
      const records = [...objects.keys()].filter((key) => key.includes('.content-api-manifest/'));
      expect(records).toHaveLength(count);
      for (const key of records) {
        const { entry } = JSON.parse((await s3.get('media', key)).toString('utf8'));
        for (const rendition of Object.values(entry.renditions) as Array<{
          path: string;
          width: number;
          bytes: number;
        }>) {
          const bytes = await s3.get('media', `queued/${rendition.path}`);
          expect(bytes.length).toBe(rendition.bytes);
          expect((await sharp(bytes).metadata()).width).toBe(rendition.width);
          expect(bytes.equals(await s3.get('media', `local/${rendition.path}`))).toBe(true);
        }
      }
      for (const worker of pool.slice(1)) expect(await stopWorker(worker)).toBe(0);
    } finally {
      await events.close();
    }
  }, 120_000);

  it('the same batch enqueued twice adds nothing; a corrupt original fails once, not retried', async () => {
    nextQueue();
    const dir = originals('twice');
    const out = await tempDir();
    const first = await runCli(['render', dir, '--out', out, ...queueArgs(), '--detach']);
    const second = await runCli(['render', dir, '--out', out, ...queueArgs(), '--detach']);
    expect(first.code, first.stderr).toBe(0);
    expect(second.code, second.stderr).toBe(0);
    const status = await runCli(['queue', 'status', ...queueArgs(), '--json']);
    expect(JSON.parse(status.stdout).jobs.waiting).toBe(4);

    // Nothing has run yet: without waiting, every original is still queued.
    const early = await runCli(['queue', 'results', first.stdout.trim(), ...queueArgs(), '--no-wait', '--json']);
    expect(early.code).toBe(1);
    expect(JSON.parse(early.stdout)).toMatchObject({ results: [], failures: [], pending: expect.any(Array) });
    expect(JSON.parse(early.stdout).pending).toHaveLength(4);
    const said = await runCli(['queue', 'results', first.stdout.trim(), ...queueArgs(), '--no-wait']);
    expect(said.stderr).toContain('0 rendered, 0 up to date, 4 still queued');

    const worker = startWorker([...queueArgs(), '-j', '2']);
    for (const batch of [first.stdout.trim(), second.stdout.trim()]) {
      const results = await runCli(['queue', 'results', batch, ...queueArgs(), '--json']);
      expect(results.code, results.stderr).toBe(1);
      const report = JSON.parse(results.stdout);
      expect(
        report.results.map((entry: { status: string }) => entry.status),
        results.stdout + worker.log(),
      ).toEqual(['rendered', 'rendered', 'rendered']);
      expect(report.failures).toHaveLength(1);
      expect(report.failures[0].source).toBe(path.join(dir, 'broken.jpg'));
      expect(report.failures[0].code).toBe('CONTENT_API_UNSUPPORTED_FORMAT');
    }
    expect(await stopWorker(worker)).toBe(0);
    // Each original ran once: one line each in the worker's log, none retried.
    const lines = worker
      .log()
      .split('\n')
      .filter((line) => /^(rendered|skipped|failed|retrying)\t/.test(line));
    expect(lines.filter((line) => line.startsWith('rendered'))).toHaveLength(3);
    expect(lines.filter((line) => line.startsWith('failed'))).toHaveLength(1);
    expect(lines).toHaveLength(4);
    const after = JSON.parse((await runCli(['queue', 'status', ...queueArgs(), '--json'])).stdout);
    expect(after.finished).toEqual({ rendered: 3, skipped: 0, failed: 1, retried: 0 });
    expect(after.jobs).toEqual({ waiting: 0, active: 0, delayed: 0 });
    // Finished jobs are removed from Redis, not kept as completed or failed.
    const client = new Redis(redis.url);
    expect(await client.keys(`bull:${name}:r*`)).toEqual([]);
    expect(await client.zcard(`bull:${name}:completed`)).toBe(0);
    expect(await client.zcard(`bull:${name}:failed`)).toBe(0);
    client.disconnect();
    // The first batch added the jobs and counts them; the second shared them.
    expect(after.batches.map((batch: { id: string; finished: number }) => [batch.id, batch.finished])).toEqual([
      [second.stdout.trim(), 0],
      [first.stdout.trim(), 4],
    ]);
  }, 60_000);

  it("--quality auto travels with the job: the worker searches, and each rendition's quality and score come back " +
    "in queue results and in the bucket's records", async () => {
    nextQueue();
    await s3.put('originals', 'qa/dandelion.jpg', await readFile(path.resolve('samples/originals/dandelion.jpg')));
    const worker = startWorker([...queueArgs(), '-j', '1'], s3.env);
    const args = ['render', 's3://originals/qa/', '--out', 's3://media/qa/', '--quality', 'auto:70'];
    const run = await runCli([...args, ...queueArgs(), '--json'], { env: s3.env });
    expect(run.code, run.stderr + worker.log()).toBe(0);
    const [result] = JSON.parse(run.stdout).results;
    expect(result.status).toBe('rendered');
    const keys = ['xs', 'sm', 'md', 'lg', 'xl'];
    expect(Object.keys(result.measured)).toEqual(keys);
    for (const key of keys) expect(result.measured[key].score).toBeGreaterThanOrEqual(70);
    const objects = [...(await s3.objects('media', 'qa/')).keys()];
    const [record] = objects.filter((key) => key.includes('.content-api-manifest/'));
    const { entry } = JSON.parse((await s3.get('media', record!)).toString('utf8'));
    for (const key of keys) expect(entry.renditions[key]).toMatchObject(result.measured[key]);
    expect(entry.settings).toContain('quality.mode="auto:70"');
    expect(await stopWorker(worker)).toBe(0);
  }, 90_000);

  it('on a terminal, render --queue draws the progress line a local render draws', async () => {
    nextQueue();
    const dir = originals('terminal');
    const worker = startWorker([...queueArgs(), '-j', '1']);
    const tty = await runInTerminal(['render', dir, '--out', `${dir}-out`, ...queueArgs()]);
    expect(tty.code, tty.stdout).toBe(0);
    expect(tty.stdout).toMatch(/\r\x1b\[2K\[#{24}\] 2\/2 \S+/);
    expect(tty.stdout).toMatch(/\r\x1b\[2K2 rendered, 0 up to date in \d+\.\d s/);
    expect(await stopWorker(worker)).toBe(0);
  }, 60_000);

  it('Redis restarted mid-run: the run completes, every original rendered', async () => {
    nextQueue();
    const dir = originals('restarted');
    const out = await tempDir();
    const worker = startWorker([...queueArgs(), '-j', '1']);
    const run = runCli(['render', dir, '--out', out, ...queueArgs(), '--json']);
    await worker.finished(1);
    await redis.restart(1_000);
    const finishedBefore = worker
      .log()
      .split('\n')
      .filter((line) => line.startsWith('rendered\t')).length;
    expect(finishedBefore, 'Redis went down with jobs left').toBeLessThan(6);
    const result = await run;
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.results).toHaveLength(6);
    expect(report.results.every((entry: { status: string }) => entry.status === 'rendered')).toBe(true);
    expect(await stopWorker(worker)).toBe(0);
  }, 90_000);

  it('a Redis that restarts empty (no persistence): ' +
    'jobs gone without a result are put back, and the run completes', async () => {
    nextQueue();
    const forgetful = await startRedis({ persist: false });
    try {
      const dir = originals('forgetful');
      const out = await tempDir();
      const args = ['--queue', forgetful.url, '--queue-name', name];
      const worker = startWorker([...args, '-j', '1']);
      const run = runCli(['render', dir, '--out', out, ...args, '--json']);
      await worker.finished(1);
      await forgetful.restart(200);
      const result = await run;
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(report.results.map((entry: { source: string }) => entry.source)).toEqual(
        [0, 1, 2, 3].map((i) => path.join(dir, `photo-${i}.jpg`)),
      );
      expect(report.failures).toEqual([]);
      expect(await stopWorker(worker)).toBe(0);
      // The queue is still recognisably content-api's for the next command.
      const again = await runCli(['render', dir, '--out', out, ...args, '--detach']);
      expect(again.code, again.stderr).toBe(0);
    } finally {
      await forgetful.stop();
    }
  }, 90_000);

  it('S3 unreachable for a while: ' +
    'the worker pauses, the job waits without spending attempts, then renders', async () => {
    nextQueue();
    for (let i = 0; i < 2; i++) await s3.put('originals', `q7/photo-${i}.jpg`, await photo(800, 600).jpeg().toBuffer());
    // The worker reaches S3 through a proxy that drops every connection until it is opened.
    const target = new URL(s3.endpoint);
    let open = false;
    const proxy = net.createServer((socket) => {
      if (!open) return socket.destroy();
      const upstream = net.connect(Number(target.port), target.hostname);
      socket.pipe(upstream).pipe(socket);
      upstream.on('error', () => socket.destroy());
      socket.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as net.AddressInfo;
    try {
      const env = { ...s3.env, AWS_ENDPOINT_URL_S3: `http://127.0.0.1:${port}` };
      const worker = startWorker([...queueArgs(), '-j', '1'], env);
      const run = runCli(['render', 's3://originals/q7/', '--out', 's3://media/q7/', ...queueArgs(), '--json'], {
        env: s3.env,
      });
      await worker.said('paused\t');
      open = true;
      const result = await run;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout).results.map((entry: { status: string }) => entry.status)).toEqual([
        'rendered',
        'rendered',
      ]);
      expect(worker.log()).toMatch(
        /^paused\ts3:\/\/originals\/q7\/photo-\d\.jpg\t.*endpoint http:\/\/\S+ unreachable.*taking jobs again in 2 s/m,
      );
      // Put back, not failed: no attempt spent, so the rendered lines say nothing of attempts.
      expect(worker.log()).not.toMatch(/attempt \d/);
      expect(await stopWorker(worker)).toBe(0);
      const status = JSON.parse((await runCli(['queue', 'status', ...queueArgs(), '--json'])).stdout);
      expect(status.finished).toMatchObject({ rendered: 2, failed: 0 });
      expect(status.finished.retried).toBeGreaterThan(0);
    } finally {
      proxy.close();
    }
  }, 90_000);

  /** An S3 endpoint in front of s3rver that answers 403 AccessDenied to requests `deny` picks. */
  async function denyingProxy(deny: (url: string) => boolean): Promise<{ endpoint: string; close: () => void }> {
    const target = new URL(s3.endpoint);
    const proxy = http.createServer((request, response) => {
      if (deny(request.url ?? '')) {
        response.writeHead(403, { 'content-type': 'application/xml' });
        response.end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
        return;
      }
      const upstream = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: request.url,
          method: request.method,
          headers: request.headers,
        },
        (answer) => {
          response.writeHead(answer.statusCode!, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as net.AddressInfo;
    return { endpoint: `http://127.0.0.1:${port}`, close: () => proxy.close() };
  }

  it('one object denied to every worker: put back twice, then it fails once, "access denied"; ' +
    'the batch ends', async () => {
    nextQueue();
    for (const name of ['open', 'secret']) {
      await s3.put('originals', `q9/${name}.jpg`, await photo(800, 600).jpeg().toBuffer());
    }
    // A bucket policy on one prefix, or a KMS key no worker may use, denies this object alone.
    const proxy = await denyingProxy((url) => url.includes('secret'));
    try {
      const worker = startWorker([...queueArgs(), '-j', '1'], { ...s3.env, AWS_ENDPOINT_URL_S3: proxy.endpoint });
      const result = await runCli(
        ['render', 's3://originals/q9/', '--out', 's3://media/q9/', ...queueArgs(), '--json'],
        {
          env: s3.env,
        },
      );
      expect(result.code, result.stderr + worker.log()).toBe(1);
      const report = JSON.parse(result.stdout);
      expect(report.results.map((entry: { source: string }) => entry.source)).toEqual(['s3://originals/q9/open.jpg']);
      expect(report.failures).toHaveLength(1);
      expect(report.failures[0].error).toMatch(/^s3:\/\/originals\/q9\/secret\.jpg: .*access denied/);
      expect(worker.log().match(/^paused\ts3:\/\/originals\/q9\/secret\.jpg\t.*access denied/gm)).toHaveLength(2);
      expect(worker.log()).not.toMatch(/^retrying\t/m);
      expect(await stopWorker(worker)).toBe(0);
      // The count of put-backs goes with the result.
      const client = new Redis(redis.url);
      expect(await client.keys(`content-api:${name}:denied:*`)).toEqual([]);
      client.disconnect();
    } finally {
      proxy.close();
    }
  }, 60_000);

  it('a worker that may list the bucket but not read its objects leaves the jobs to a worker that may', async () => {
    nextQueue();
    for (let i = 0; i < 4; i++) {
      await s3.put(
        'originals',
        `q10/photo-${i}.jpg`,
        await photo(400 + i, 300)
          .jpeg()
          .toBuffer(),
      );
    }
    // Objects under q10/ are denied to this worker (no kms:Decrypt, say); listings and writes are not.
    const proxy = await denyingProxy((url) => url.startsWith('/originals/q10/'));
    try {
      const denied = startWorker([...queueArgs(), '-j', '1'], { ...s3.env, AWS_ENDPOINT_URL_S3: proxy.endpoint });
      const run = runCli(['render', 's3://originals/q10/', '--out', 's3://media/q10/', ...queueArgs(), '--json'], {
        env: s3.env,
      });
      await denied.said('paused\t');
      const allowed = startWorker([...queueArgs(), '-j', '1'], s3.env);
      const result = await run;
      expect(result.code, result.stderr + denied.log() + allowed.log()).toBe(0);
      expect(JSON.parse(result.stdout).results.map((entry: { status: string }) => entry.status)).toEqual(
        Array(4).fill('rendered'),
      );
      expect(denied.log()).not.toMatch(/^(rendered|failed)\t/m);
      expect(await stopWorker(denied)).toBe(0);
      expect(await stopWorker(allowed)).toBe(0);
    } finally {
      proxy.close();
    }
  }, 60_000);

  it('one worker over batches sees what changed in the bucket between them; ' +
    'each batch keeps its own results', async () => {
    nextQueue();
    const picture = (width: number) => photo(width, 500).jpeg().toBuffer();
    await s3.put('originals', 'q8/a.jpg', await picture(700));
    await s3.put('originals', 'q8/b.jpg', await picture(710));
    const worker = startWorker([...queueArgs(), '-j', '1'], s3.env);
    const batches: string[] = [];
    const statuses = (report: { results: Array<{ source: string; status: string }> }) =>
      Object.fromEntries(report.results.map((entry) => [entry.source, entry.status]));
    const render = async () => {
      const run = await runCli(['render', 's3://originals/q8/', '--out', 's3://media/q8/', ...queueArgs(), '--json'], {
        env: s3.env,
      });
      expect(run.code, run.stderr).toBe(0);
      batches.push(run.stderr.match(/^batch (\S+): /m)![1]!);
      return statuses(JSON.parse(run.stdout));
    };
    expect(await render()).toEqual({ 's3://originals/q8/a.jpg': 'rendered', 's3://originals/q8/b.jpg': 'rendered' });
    await s3.put('originals', 'q8/b.jpg', await picture(720)); // replaced
    await s3.put('originals', 'q8/c.jpg', await picture(730)); // new
    await s3.remove('media', 'q8/a.max-300x300.jpg'); // a rendition lost
    expect(await render()).toEqual({
      's3://originals/q8/a.jpg': 'rendered',
      's3://originals/q8/b.jpg': 'rendered',
      's3://originals/q8/c.jpg': 'rendered',
    });
    // A result of a batch over a week old, beside the others: the next write removes it.
    const client = new Redis(redis.url);
    const resultKeys = await client.keys(`content-api:${name}:result:*`);
    expect(resultKeys).toHaveLength(3);
    for (const key of resultKeys) await client.hset(key, '20200101-000000-abcdef', '1577836800000 {}');
    expect(await render()).toEqual({
      's3://originals/q8/a.jpg': 'skipped',
      's3://originals/q8/b.jpg': 'skipped',
      's3://originals/q8/c.jpg': 'skipped',
    });
    for (const key of resultKeys) {
      const runs = Object.keys(await client.hgetall(key)).sort();
      expect(runs).not.toContain('20200101-000000-abcdef');
      expect(runs.length).toBeGreaterThanOrEqual(2); // c.jpg ran for the last two batches, a and b for all three
    }
    client.disconnect();
    // The same jobs ran again for later batches: the first batch's report is still its own.
    const first = await runCli(['queue', 'results', batches[0]!, ...queueArgs(), '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(statuses(JSON.parse(first.stdout))).toEqual({
      's3://originals/q8/a.jpg': 'rendered',
      's3://originals/q8/b.jpg': 'rendered',
    });
    expect(await stopWorker(worker)).toBe(0);
  }, 90_000);

  it('names that fold together fail as in a local run, named as the command line gave them', async () => {
    nextQueue();
    // The originals' folder and the two outputs side by side in one temporary folder, the working one.
    const root = await tempDir();
    const dir = path.join(root, 'originals');
    await writeImage(dir, 'Photo.jpg', photo(400, 300).jpeg());
    await writeImage(dir, 'photo.jpeg', photo(410, 300).jpeg());
    await writeImage(dir, 'other.jpg', photo(420, 300).jpeg());
    const worker = startWorker([...queueArgs(), '-j', '1']);
    // Given relative to the working folder: workers get absolute paths, the report must not.
    const input = path.basename(dir);
    const queued = await runCli(['render', input, '--out', 'queued-out', ...queueArgs(), '--json'], { cwd: root });
    const local = await runCli(['render', input, '--out', 'local-out', '--json'], { cwd: root });
    expect(queued.code).toBe(1);
    expect(local.code).toBe(1);
    const report = JSON.parse(queued.stdout);
    expect(report.failures.map((failure: { code: string }) => failure.code)).toEqual([
      'CONTENT_API_NAME_COLLISION',
      'CONTENT_API_NAME_COLLISION',
    ]);
    expect(report.failures[0].error).toContain(path.join(input, 'photo.jpeg'));
    expect(queued.stdout).not.toContain(dir);
    expect(JSON.parse(local.stdout.replaceAll('local-out', 'queued-out'))).toEqual(report);
    expect(await stopWorker(worker)).toBe(0);
  }, 60_000);

  it('Ctrl-C on render --queue takes its waiting jobs out of the queue, reported as not started', async () => {
    nextQueue();
    const dir = originals('interrupted');
    const run = startCli(['render', dir, '--out', `${dir}-out`, ...queueArgs(), '--json']);
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const bull = new Queue(name, { connection });
    try {
      // Said once the command listens for Ctrl-C (before, Ctrl-C stops it as any command).
      await stderrSays(run, 'no worker is connected yet');
      expect(await bull.getWaitingCount()).toBe(3);
      run.child.kill('SIGINT');
      const result = await run.done;
      expect(result.code, result.stderr).toBe(1);
      const notStarted = [0, 1, 2].map((i) => path.join(dir, `photo-${i}.jpg`));
      expect(JSON.parse(result.stdout).notStarted).toEqual(notStarted);
      expect(await bull.getWaitingCount()).toBe(0);
      // Reading the batch later says the same, at once, and puts nothing back in the queue.
      const batch = /batch (\S+):/.exec(result.stderr)![1]!;
      const later = await runCli(['queue', 'results', batch, ...queueArgs(), '--json']);
      expect(later.code).toBe(1);
      expect(JSON.parse(later.stdout)).toMatchObject({ results: [], notStarted });
      expect(await bull.getWaitingCount()).toBe(0);
      // queue status says the batch was interrupted, not only how little of it finished.
      const status = await runCli(['queue', 'status', ...queueArgs(), '--json']);
      expect(JSON.parse(status.stdout).batches).toMatchObject([{ id: batch, finished: 0, cancelled: 3 }]);
      const text = (await runCli(['queue', 'status', ...queueArgs()])).stdout;
      expect(text).toContain(
        `0 of 3 original(s) finished; interrupted: 3 image(s) taken out of the queue unstarted ` +
          `(queue results ${batch} names them)`,
      );
    } finally {
      await bull.close();
      connection.disconnect();
    }
  }, 60_000);

  it('a worker without the output folder waits for it instead of making its own', async () => {
    nextQueue();
    const dir = originals('noOutput');
    const out = path.join(await tempDir(), 'media');
    const run = await runCli(['render', dir, '--out', out, ...queueArgs(), '--detach']);
    expect(run.code, run.stderr).toBe(0);
    // The submitter made the folder; on this "machine" it is not there (not shared, a mount missing).
    await rm(out, { recursive: true });
    const worker = startWorker([...queueArgs(), '-j', '1']);
    await worker.said('paused\t');
    expect(worker.log()).toContain(`${out}: output folder is not writable (no such folder); taking jobs again in 2 s`);
    await expect(stat(out)).rejects.toThrow(/ENOENT/);
    await mkdir(out); // the mount is back
    const results = await runCli(['queue', 'results', run.stdout.trim(), ...queueArgs()]);
    expect(results.code, results.stderr + worker.log()).toBe(0);
    expect(await readdir(out)).toContain('photo-0.max-300x300.jpg');
    expect(await stopWorker(worker)).toBe(0);
  }, 60_000);

  it(
    'enqueueing interrupted: before any write it throws, nothing in Redis; ' + 'after, the rest are cancelled',
    async () => {
      nextQueue();
      const dir = originals('enqueueAborted');
      const queue = await connectQueue({ url: redis.url, name }, true);
      try {
        const before = new AbortController();
        before.abort();
        await expect(enqueueRender([dir], { outDir: await tempDir() }, queue, before.signal)).rejects.toThrow(/abort/i);
        expect(await queue.redis.keys(`content-api:${name}:batch*`)).toEqual([]);
        // Aborted as the batch is written: the batch is recorded, its jobs are not added.
        const during = new AbortController();
        const record = await enqueueRender([dir], { outDir: await tempDir() }, queue, {
          get aborted() {
            return during.signal.aborted;
          },
          throwIfAborted: () => during.abort(), // passes the check before writing, then aborts
        } as AbortSignal);
        expect(record.jobs).toBe(2);
        expect(await queue.redis.llen(`bull:${name}:wait`)).toBe(0);
        // Never added, they are cancelled: the report says not started, and never puts them back.
        expect(await queue.redis.scard(`content-api:${name}:batch:${record.id}:cancelled`)).toBe(2);
        const report = await runCli(['queue', 'results', record.id, ...queueArgs(), '--json']);
        expect(report.code, report.stderr).toBe(1);
        expect(JSON.parse(report.stdout)).toMatchObject({ results: [], failures: [] });
        expect(JSON.parse(report.stdout).notStarted).toHaveLength(2);
      } finally {
        await queue.close();
      }
    },
  );

  it('SIGTERM lets a worker finish the job under way, then it exits 0', async () => {
    nextQueue();
    const dir = originals('sigterm');
    const out = await tempDir();
    const worker = startWorker([...queueArgs(), '-j', '1']);
    const run = await runCli(['render', dir, '--out', out, ...queueArgs(), '--detach']);
    expect(run.code).toBe(0);
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const bull = new Queue(name, { connection });
    try {
      while ((await bull.getActiveCount()) === 0) await new Promise((resolve) => setTimeout(resolve, 25));
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      // The job under way when the signal came is finished after it; the worker takes no other.
      const [, after = ''] = worker.log().split('stopping: finishing the jobs under way');
      expect(after.split('\n').filter((line) => line.startsWith('rendered\t'))).toHaveLength(1);
      const rendered = worker
        .log()
        .split('\n')
        .filter((line) => line.startsWith('rendered\t')).length;
      expect(rendered + (await bull.getWaitingCount())).toBe(2);
    } finally {
      await bull.close();
      connection.disconnect();
    }
  }, 60_000);

  it('SIGTERM as a starting worker takes its first job (queued before it started): that job is finished', async () => {
    nextQueue();
    const dir = originals('sigtermStarting');
    const out = await tempDir();
    const run = await runCli(['render', dir, '--out', out, ...queueArgs(), '--detach']);
    expect(run.code).toBe(0);
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const bull = new Queue(name, { connection });
    try {
      const worker = startWorker([...queueArgs(), '-j', '1']);
      // The job is taken as the worker starts, before it says it is ready: the signal must not end it.
      while ((await bull.getActiveCount()) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      worker.child.kill('SIGTERM');
      expect(await worker.exited, worker.log()).toBe(0);
      const rendered = worker
        .log()
        .split('\n')
        .filter((line) => line.startsWith('rendered\t')).length;
      expect(rendered).toBe(1);
      expect(await bull.getWaitingCount()).toBe(1);
    } finally {
      await bull.close();
      connection.disconnect();
    }
  }, 60_000);

  it('SIGTERM while Redis is away: a worker with nothing under way exits 0 at once', async () => {
    const own = await startRedis({ persist: false });
    try {
      const worker = startWorker(['--queue', own.url, '-j', '2']);
      await worker.said('SIGTERM or Ctrl-C to stop');
      await own.kill();
      await worker.said('ECONNREFUSED');
      const asked = Date.now();
      worker.child.kill('SIGTERM');
      expect(await worker.exited, worker.log()).toBe(0);
      // It waited for nothing: BullMQ's close alone waits for Redis to come back.
      expect(Date.now() - asked, worker.log()).toBeLessThan(5_000);
      expect(worker.log()).toContain('worker stopped');
    } finally {
      await own.stop();
    }
  }, 60_000);

  it('Redis unreachable, a URL that is not Redis, a queue name of another application: exit 2, one line', async () => {
    nextQueue();
    const dir = originals('unreachable');
    const closed = 'redis://127.0.0.1:1';
    for (const args of [
      ['render', dir, '--out', `${dir}-out`, '--queue', closed],
      ['worker', '--queue', closed],
      ['queue', 'status', '--queue', closed],
    ]) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toEqual([
        `error: ${closed}: cannot use Redis (ECONNREFUSED: is redis-server running? start it with \`redis-server\`)`,
      ]);
    }
    for (const url of ['redis:/user:secret@127.0.0.1', 'redis://user:secret@127.0.0.1:1', 'http://user:secret@h/']) {
      const said = await runCli(['queue', 'status', '--queue', url, '--timeout', '2000']);
      expect(said.code, url).toBe(2);
      expect(said.stderr, url).toContain(':***@');
      expect(said.stderr, url).not.toContain('secret');
    }
    // A password with a stray %, and a database Redis does not have (ioredis went on in database 0).
    const stray = await runCli(['queue', 'status', '--queue', 'redis://:s3%cr3t@127.0.0.1:1']);
    expect(stray.code).toBe(2);
    expect(stray.stderr.trim().split('\n')).toEqual([
      'error: --queue redis://:***@127.0.0.1:1: the user or password has a % not followed by two hex digits (% is %25)',
    ]);
    for (const args of [['queue', 'status'], ['render', dir, '--out', `${dir}-out`, '--detach'], ['worker']]) {
      const db = await runCli([...args, '--queue', `${redis.url}/99`, '--queue-name', name]);
      expect(db.code, args.join(' ')).toBe(2);
      const said = `error: ${redis.url}/99: cannot use Redis (ERR DB index is out of range)`;
      expect(db.stderr.trim().split('\n')).toEqual([said]);
    }
    const wrong = await runCli(['worker', '--queue', 'http://127.0.0.1:6379']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('expected redis:// or rediss://');

    const other = new Redis(redis.url);
    await other.hset(`bull:${name}:meta`, 'version', 'bullmq:5.0.0');
    await other.rpush(`bull:${name}:wait`, '17');
    await other.hset(`bull:${name}:17`, 'name', 'send-email', 'data', '{}');
    other.disconnect();
    const clash = await runCli(['render', dir, '--out', `${dir}-out`, ...queueArgs(), '--detach']);
    expect(clash.code).toBe(2);
    expect(clash.stderr.trim().split('\n')).toHaveLength(1);
    expect(clash.stderr).toContain(`queue '${name}' belongs to another application`);

    const missing = await runCli([
      'queue',
      'results',
      '20260101-000000-abcdef',
      '--queue',
      redis.url,
      '--queue-name',
      'never-used',
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no content-api queue named 'never-used'");
  }, 60_000);

  it('a Redis full (maxmemory, noeviction) while a batch is enqueued: one line, what was enqueued taken out (#22)', async () => {
    nextQueue();
    const full = await startRedis({ persist: false });
    const redis = new Redis(full.url);
    try {
      const dir = originals('full');
      await redis.set(`content-api:${name}:queue`, JSON.stringify({ protocol: PROTOCOL }));
      // A job of an earlier batch, still queued: the one the new batch shares is not taken out with it.
      const earlier = await runCli(
        ['render', path.join(dir, 'photo-0.jpg'), '--out', `${dir}-out`, ...queueArgs(full)].concat('--detach'),
      );
      expect(earlier.code, earlier.stderr).toBe(0);
      const before = (await redis.keys('*')).sort();
      // Room for the batch's record and its list of jobs, not for the jobs themselves.
      const used = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
      await redis.config('SET', 'maxmemory', String(used + 60_000));
      const result = await runCli(['render', dir, '--out', `${dir}-out`, ...queueArgs(full), '--detach']);
      await redis.config('SET', 'maxmemory', '0');
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `^error: ${full.url}: Redis refused to enqueue the batch \\(OOM command not allowed .*\\); ` +
              'what was enqueued was taken out again$',
          ),
        ),
      ]);
      expect((await redis.keys('*')).sort()).toEqual(before);
    } finally {
      redis.disconnect();
      await full.stop();
    }
  }, 60_000);

  it('a Redis the batch leaves over maxmemory, which refuses a MULTI even to delete: all of it taken out', async () => {
    nextQueue();
    const full = await startRedis({ persist: false });
    // Connected before the limit is set, so what decides where Redis refuses is the batch, not a connection.
    const queue = await connectQueue({ url: full.url, name }, true);
    try {
      // The batch's list of jobs is written 1,000 entries (about 400 KB) at a time.
      const dir = await longNamedOriginals(2_500);
      const before = (await queue.redis.keys('*')).sort();
      // Room for the batch's record, not for its jobs: Redis refuses a write once over its limit, and then
      // every command of a MULTI too, DEL included; taking the batch out must do without one.
      const used = Number(/used_memory:(\d+)/.exec(await queue.redis.info('memory'))![1]);
      await queue.redis.config('SET', 'maxmemory', String(used + 100_000));
      const refused = await enqueueRender([dir], { outDir: await tempDir() }, queue).catch((error: Error) => error);
      await queue.redis.config('SET', 'maxmemory', '0');
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toMatch(
        /Redis refused to enqueue the batch \(OOM .*\); what was enqueued was taken out again$/,
      );
      expect((await queue.redis.keys('*')).sort()).toEqual(before);
    } finally {
      await queue.close();
      await full.stop();
    }
  }, 60_000);

  it('a Redis that refuses the batch and then its deletes: said, and what stays expires with the batch', async () => {
    nextQueue();
    const full = await startRedis({ persist: false });
    // A user that may do all but DEL: what the batch wrote cannot all be taken out once Redis refuses its jobs.
    const admin = new Redis(full.url);
    await admin.acl('SETUSER', 'nodel', 'on', '>secret', '~*', '&*', '+@all', '-del');
    const url = new URL(full.url);
    url.username = 'nodel';
    url.password = 'secret';
    const queue = await connectQueue({ url: url.href, name }, true);
    try {
      const dir = await longNamedOriginals(1_500);
      // Room for the batch's record, not for its list of jobs (as in the test above).
      const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
      await admin.config('SET', 'maxmemory', String(used + 100_000));
      const refused = await enqueueRender([dir], { outDir: await tempDir() }, queue).catch((error: Error) => error);
      await admin.config('SET', 'maxmemory', '0');
      expect(refused).toBeInstanceOf(Error);
      expect((refused as Error).message).toMatch(
        new RegExp(
          /^.*Redis refused to enqueue the batch \(OOM .*\); /.source +
            /what was enqueued could not all be taken out \(NOPERM .*'del'.*\): it expires with the batch$/.source,
        ),
      );
      // The batch's record stays, no longer listed among the batches, and expires as a batch does (7 days).
      const keys = keysFor(name);
      const left = (await admin.keys(keys.batch('*'))).filter((key) => !key.endsWith(':jobs'));
      expect(left).toHaveLength(1);
      expect(await admin.ttl(left[0]!)).toBeGreaterThan(RESULT_TTL_SECONDS - 60);
      expect(await admin.zcard(keys.batches)).toBe(0);
    } finally {
      await queue.close();
      admin.disconnect();
      await full.stop();
    }
  }, 60_000);

  it('a Redis that may evict keys is named in one clear warning', async () => {
    nextQueue();
    const evicting = await startRedis({ persist: false, maxmemoryPolicy: 'allkeys-lru' });
    try {
      const dir = originals('evicting');
      const result = await runCli([
        'render',
        dir,
        '--out',
        `${dir}-out`,
        '--queue',
        evicting.url,
        '--queue-name',
        name,
        '--detach',
      ]);
      expect(result.code, result.stderr).toBe(0);
      const warnings = result.stderr.split('\n').filter((line) => /evict|noeviction/i.test(line));
      expect(warnings).toEqual([
        `warning: ${evicting.url}: maxmemory-policy is allkeys-lru: Redis may drop jobs when memory runs short; ` +
          'set it to noeviction (BullMQ requires it)',
      ]);
    } finally {
      await evicting.stop();
    }
  }, 30_000);
});
