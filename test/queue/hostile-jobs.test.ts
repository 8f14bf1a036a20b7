/**
 * Job data is anyone's who can write to Redis (issue #22): a job is enqueued by `render --queue
 * --detach`, then its data is rewritten in BullMQ's key as a hostile or faulty submitter would,
 * and a real worker (the built binary) takes it, against a real redis-server started here.
 * Each case: one line naming the job and the reason, nothing raw on the terminal, the batch
 * ends with the reason in its report, and nothing of the tool's own files is touched.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JOB_DATA_BYTES } from '../../src/queue/protocol.js';
import { MANIFEST_FILE } from '../../src/renditions/manifest.js';
import { type CliResult, runCli, startCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { type RedisServer, startRedis } from '../fixtures/redis.js';
import { tempDir } from '../fixtures/tmp.js';

let redis: RedisServer;
let client: Redis;
let queueRun = 0;
let name: string;
const stops: Array<() => void> = [];

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
});
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

const queueArgs = () => ['--queue', redis.url, '--queue-name', name];

/**
 * One original enqueued with --detach, on a queue of its own (or on the last one's, `again`): the batch,
 * the job's id and key, the folders.
 */
async function enqueued({ again = false } = {}) {
  if (!again) name = `hostile-${++queueRun}`;
  const dir = await tempDir();
  const original = await writeImage(dir, 'in/photo.jpg', photo(400, 300).jpeg());
  const out = path.join(dir, 'out');
  const run = await runCli(['render', path.join(dir, 'in'), '--out', out, ...queueArgs(), '--detach']);
  expect(run.code, run.stderr).toBe(0);
  const [id] = await client.lrange(`bull:${name}:wait`, 0, -1);
  const key = `bull:${name}:${id}`;
  const data = JSON.parse((await client.hget(key, 'data'))!);
  return { batch: run.stdout.trim(), id: id!, key, data, original, out };
}

/** A worker (the built binary) until the test ends; its log as it comes. */
function startWorker() {
  const worker = startCli(['worker', ...queueArgs(), '-j', '1']);
  stops.push(() => worker.child.kill('SIGKILL'));
  const log = () => worker.output().stderr;
  return {
    log,
    /** Waits until the log has a line matching `pattern`: awaited as the log comes, not polled. */
    said(pattern: RegExp): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(log())) return false;
          done();
          resolve();
          return true;
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the worker never said ${pattern}:\n${log().slice(-2_000)}`));
        }, 30_000);
        const done = () => {
          clearTimeout(timer);
          worker.child.stderr!.off('data', check);
        };
        if (!check()) worker.child.stderr!.on('data', check);
      });
    },
  };
}

/** A worker started on the queue, once it has refused `count` jobs: its `refused` lines (exactly `count`), its log. */
async function refusing(count: number): Promise<{ refused: string[]; log: string }> {
  const worker = startWorker();
  await worker.said(new RegExp(`(^refused\t[^]*){${count}}`, 'm'));
  const log = worker.log();
  const refused = log.split('\n').filter((line) => line.startsWith('refused\t'));
  expect(refused, log).toHaveLength(count);
  return { refused, log };
}

/**
 * `queue results` of a batch, in this process (runCli), which must end within 30 s: past that,
 * the test fails (the command is left to end, or not, by itself).
 */
async function results(batch: string, json = false): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`queue results ${batch} never ended (30 s)`)), 30_000);
  });
  const result = await Promise.race([
    runCli(['queue', 'results', batch, ...queueArgs(), ...(json ? ['--json'] : [])]),
    hung,
  ]);
  clearTimeout(timer);
  expect(result.signal, `queue results never ended:\n${result.stderr}`).toBeNull();
  return result;
}

describe('job data from a hostile or faulty submitter', () => {
  it('a job of many originals that collide makes short lines and a bounded result, not the square of its size', async () => {
    const job = await enqueued();
    // 400 originals, one file, one stem: each fails naming the others (within the 64 KiB of job data).
    job.data.originals = Array.from({ length: 400 }, () => job.data.originals[0]);
    await client.hset(job.key, 'data', JSON.stringify(job.data));
    const worker = startWorker();
    await worker.said(/^failed\t/m);
    const failed = worker
      .log()
      .split('\n')
      .filter((line) => line.startsWith('failed\t'));
    expect(failed).toHaveLength(1);
    expect(failed[0]!.length).toBeLessThan(4_000);
    expect(failed[0]).toMatch(/and 397 more \(queue results lists them all\)/);
    const report = await results(job.batch, true);
    const failures = JSON.parse(report.stdout).failures as Array<{ error: string }>;
    expect(failures).toHaveLength(400);
    for (const failure of failures) expect(failure.error.length).toBeLessThan(2_000);
    const stored = await client.memory('USAGE', `content-api:${name}:result:${job.id}`);
    expect(stored).toBeLessThan(2_000_000);
  });

  it(
    "control characters in job data are escaped in the worker's log and in queue results: " +
      'no forged lines, no escape sequences',
    async () => {
      const job = await enqueued();
      // A path with a line break forges a `rendered` line; an OSC sequence retitles the terminal.
      const evil = `${path.dirname(job.original)}/evil\nrendered\tforged.jpg\t0.1 s\x1b]0;pwned\x07.jpg`;
      job.data.originals[0].source = evil;
      await client.hset(job.key, 'data', JSON.stringify(job.data));
      const worker = startWorker();
      await worker.said(/^failed\t/m);
      const report = await results(job.batch);
      expect(report.code).toBe(1);
      for (const output of [worker.log(), report.stderr]) {
        expect(output).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/); // tabs and line breaks only, no raw controls
        expect(output).not.toMatch(/^rendered/m);
      }
      const shown = `${path.dirname(job.original)}/evil\\nrendered\\tforged.jpg\\t0.1 s\\u001b]0;pwned\\u0007.jpg`;
      expect(
        worker
          .log()
          .split('\n')
          .filter((line) => line.startsWith('failed\t')),
      ).toEqual([
        expect.stringMatching(
          `^failed\t${escapeRegExp(`${shown}\t${shown}`)}: cannot read \\(ENOENT\\)\t\\d+\\.\\d s$`,
        ),
      ]);
      expect(report.stderr.split('\n').filter((line) => line.startsWith('failed: '))).toEqual([
        `failed: ${shown}: cannot read (ENOENT)`,
      ]);
    },
  );

  it(
    'job data the worker refuses (a stem with .., a relative source) is said in one line naming the job and ' +
      'the reason, and its batch reports its original failed for it',
    async () => {
      const cases: Array<{ reason: string; job: Awaited<ReturnType<typeof enqueued>> }> = [];
      for (const [patch, reason] of [
        [{ stem: '../up' }, "$.originals[0].stem: a stem render makes: '/'-separated names"],
        [{ source: 'relative/photo.jpg' }, '$.originals[0].source: an absolute path or s3://bucket/key'],
      ] as const) {
        // The cases on one queue, each a batch of its own: one worker refuses them in turn.
        const job = await enqueued({ again: cases.length > 0 });
        Object.assign(job.data.originals[0], patch);
        await client.hset(job.key, 'data', JSON.stringify(job.data));
        cases.push({ reason, job });
      }
      const { refused } = await refusing(cases.length);
      for (const { reason, job } of cases) {
        const said = `job ${job.id}\tnot a render job of content-api protocol ${job.data.protocol}: ${reason}`;
        expect(refused.filter((line) => line.startsWith(`refused\tjob ${job.id}\t`))).toEqual([
          expect.stringContaining(`refused\t${said}`),
        ]);
        const report = await results(job.batch, true);
        expect(report.code).toBe(1);
        const { results: rendered, failures } = JSON.parse(report.stdout);
        expect(rendered).toEqual([]);
        expect(failures).toEqual([
          {
            source: job.original,
            code: 'CONTENT_API_RENDER_FAILED',
            error: expect.stringContaining(`${job.original}: its job ${job.id} was refused by a worker: not a render`),
          },
        ]);
        expect(failures[0].error).toContain(reason);
      }
    },
  );

  it(
    'job data that is not JSON fails its job, said in one line naming it; the batch ends, ' +
      'its original failed with the reason',
    async () => {
      const job = await enqueued();
      await client.hset(job.key, 'data', '{"protocol":');
      const worker = startWorker();
      await worker.said(/^refused\t/m);
      expect(worker.log()).toContain(`refused\tjob ${job.id}\tnot a render job of content-api protocol `);
      expect(worker.log()).toMatch(/: not JSON \(Unexpected end of JSON input\)\n/);
      expect(worker.log()).not.toContain('warning');
      const report = await results(job.batch);
      expect(report.code).toBe(1);
      expect(report.stderr).toContain(
        `failed: ${job.original}: its job ${job.id} was refused by a worker: not a render job of content-api ` +
          'protocol ',
      );
      expect(report.stderr).toMatch(/0 rendered, 0 up to date, 1 failed in/);
      // Failed, not left active, waiting or retrying.
      for (const list of ['active', 'wait']) expect(await client.llen(`bull:${name}:${list}`)).toBe(0);
      expect(await client.exists(job.key)).toBe(0);
    },
  );

  it(
    'a job hash BullMQ cannot read (opts or progress not JSON, parent not an object) is taken out of active ' +
      'and refused, in one line naming the job and the field; the batch ends, its original failed with the reason',
    async () => {
      const cases: Array<{ field: string; job: Awaited<ReturnType<typeof enqueued>> }> = [];
      for (const [field, value] of [
        ['opts', 'not json'],
        ['opts', 'null'],
        ['progress', '{'],
        ['parent', '{"id":'],
        ['parent', '5'],
      ] as const) {
        // The cases on one queue, each a batch of its own: one worker refuses them in turn.
        const job = await enqueued({ again: cases.length > 0 });
        await client.hset(job.key, field, value);
        cases.push({ field, job });
      }
      const { refused, log } = await refusing(cases.length);
      expect(log).not.toMatch(/warning|Redis:/);
      for (const { field, job } of cases) {
        expect(refused.filter((line) => line.startsWith(`refused\tjob ${job.id}\t`))).toEqual([
          expect.stringMatching(`^refused\tjob ${job.id}\ta job hash BullMQ cannot read: its field '${field}' `),
        ]);
        const report = await results(job.batch);
        expect(report.code).toBe(1);
        expect(report.stderr).toContain(
          `failed: ${job.original}: its job ${job.id} was refused by a worker: a job hash BullMQ cannot read: ` +
            `its field '${field}' `,
        );
        expect(report.stderr).toMatch(/0 rendered, 0 up to date, 1 failed in/);
        // Failed, not left active, waiting or retrying, and never fetched again.
        for (const list of ['active', 'wait']) expect(await client.llen(`bull:${name}:${list}`)).toBe(0);
        expect(await client.exists(job.key)).toBe(0);
      }
    },
  );

  it(
    'a job hash BullMQ cannot read, fetched as the next job when another finishes, ' + 'is refused the same way',
    async () => {
      name = `hostile-${++queueRun}`;
      const dir = await tempDir();
      for (const file of ['first', 'second']) await writeImage(dir, `in/${file}.jpg`, photo(400, 300).jpeg());
      const run = await runCli([
        'render',
        path.join(dir, 'in'),
        '--out',
        path.join(dir, 'out'),
        ...queueArgs(),
        '--detach',
      ]);
      expect(run.code, run.stderr).toBe(0);
      // BullMQ takes the wait list's last first: the first id is fetched by the job before it, as that one finishes.
      const [id] = await client.lrange(`bull:${name}:wait`, 0, -1);
      const source = JSON.parse((await client.hget(`bull:${name}:${id}`, 'data'))!).originals[0].source;
      await client.hset(`bull:${name}:${id}`, 'opts', '{"attempts":');
      const worker = startWorker();
      await worker.said(/^refused\t/m);
      expect(worker.log()).toMatch(
        new RegExp(`^refused\tjob ${id}\ta job hash BullMQ cannot read: its field 'opts' `, 'm'),
      );
      expect(worker.log()).not.toMatch(/warning|Redis:/);
      expect(worker.log().indexOf('\nrendered\t')).toBeLessThan(worker.log().indexOf('\nrefused\t'));
      const report = await results(run.stdout.trim());
      expect(report.code, report.stderr).toBe(1);
      expect(report.stderr).toContain(
        `failed: ${source}: its job ${id} was refused by a worker: a job hash BullMQ cannot`,
      );
      expect(report.stderr).toMatch(/^1 rendered, 0 up to date, 1 failed in/m);
      for (const list of ['active', 'wait']) expect(await client.llen(`bull:${name}:${list}`)).toBe(0);
    },
  );

  it(
    "a stem naming the tool's own files (the manifest's lock) is refused: " +
      'nothing is written there, and renders into that output go on',
    async () => {
      const job = await enqueued();
      job.data.originals[0].stem = `${MANIFEST_FILE}.lock/x`;
      await client.hset(job.key, 'data', JSON.stringify(job.data));
      const worker = startWorker();
      await worker.said(/^refused\t/m);
      expect(worker.log()).toContain(`$.originals[0].stem: a stem render makes`);
      await expect(stat(path.join(job.out, `${MANIFEST_FILE}.lock`))).rejects.toThrow(/ENOENT/);
      const local = await runCli(['render', path.dirname(job.original), '--out', job.out]);
      expect(local.code, local.stderr).toBe(0);
      expect(local.stderr).toMatch(/^1 rendered/);
    },
  );

  it(
    `job data over ${MAX_JOB_DATA_BYTES} bytes is refused without being parsed: one short line; ` +
      'nothing of it is echoed or written back to Redis',
    async () => {
      const job = await enqueued();
      job.data.originals[0].source = `/${'a'.repeat(2 * 1024 * 1024)}.jpg`;
      const text = JSON.stringify(job.data);
      await client.hset(job.key, 'data', text);
      const worker = startWorker();
      await worker.said(/^refused\t/m);
      const bytes = Buffer.byteLength(text);
      expect(worker.log()).toContain(
        `refused\tjob ${job.id}\tjob data of ${bytes} bytes, over the limit of ${MAX_JOB_DATA_BYTES}\n`,
      );
      expect(worker.log().length).toBeLessThan(1_000);
      const report = await results(job.batch);
      expect(report.code).toBe(1);
      expect(report.stderr).toContain(`over the limit of ${MAX_JOB_DATA_BYTES}`);
      expect(report.stderr.length).toBeLessThan(1_000);
      // What Redis holds of this queue's, content-api's and BullMQ's (its event stream too), is small again.
      const big: string[] = [];
      for (const key of await client.keys(`*:${name}:*`)) {
        const usage = (await client.memory('USAGE', key)) ?? 0;
        if (usage > 64 * 1024) big.push(`${key}: ${usage} bytes`);
      }
      expect(big).toEqual([]);
    },
  );
});

describe('a result rewritten by someone who can write to Redis', () => {
  it('a placeholder that could do more than paint is left out and said: in queue results --json, and in render --queue --html, which no longer crashes', async () => {
    const job = await enqueued();
    startWorker();
    const resultKey = `content-api:${name}:result:${job.id}`;
    expect((await results(job.batch)).code).toBe(0);
    for (const stop of stops.splice(0)) stop(); // no worker from here on
    const [field, value] = Object.entries(await client.hgetall(resultKey))[0]!;
    const space = value.indexOf(' ');
    const record = JSON.parse(value.slice(space + 1));
    record.results[0].placeholder.color = 'red;background:url(//evil.example/x)';
    await client.hset(resultKey, field, `${value.slice(0, space)} ${JSON.stringify(record)}`);
    const said =
      `${job.original}: the placeholder in job ${job.id}'s result is not a hex colour and a base64 image data URI ` +
      'of at most 1024 characters: left out';
    const json = await results(job.batch, true);
    expect(json.code).toBe(0);
    expect(json.stdout).not.toContain('evil.example');
    expect(JSON.parse(json.stdout).warnings).toContain(said);

    // A batch waiting for it: the same job's result, written for that batch as a worker would, the job gone.
    const render = startCli(['render', path.dirname(job.original), '--out', job.out, ...queueArgs(), '--html']);
    stops.push(() => render.child.kill('SIGKILL'));
    await new Promise<void>((resolve) => {
      const check = () => /no worker is connected yet/.test(render.output().stderr) && resolve();
      render.child.stderr!.on('data', check);
    });
    const batch = /^batch (\S+):/m.exec(render.output().stderr)![1]!;
    const [seconds] = await client.time();
    await client.hset(resultKey, batch, `${Number(seconds) * 1000 + 999} ${JSON.stringify(record)}`);
    await client.lrem(`bull:${name}:wait`, 0, job.id);
    await client.del(`bull:${name}:${job.id}`);
    const html = await render.done;
    expect([html.code, html.stderr]).toEqual([0, expect.stringContaining(`warning: ${said}\n`)]);
    expect(html.stdout).toMatch(/^<img src="[^"]+" /);
    expect(html.stdout).not.toContain('evil.example');
    expect(html.stdout).not.toContain('style=');
  });
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
