/**
 * The queue benchmark (issue #12), on a redis-server of its own on loopback
 * (bench/redis-server.js):
 * 1. the queue's overhead per job: 2,000 jobs with a no-op render, enqueued, run by a worker
 *    in this process (concurrency 1, then 8) and collected, timed end to end;
 * 2. throughput: one batch rendered locally (`render -j 2`), then through the queue with one
 *    worker process (`worker -j 2`) and with two (`worker -j 1` each), each run into a fresh
 *    folder and a fresh queue, so that nothing is skipped;
 * 3. recovery: a worker process SIGKILLed in the middle of a job; when the job runs again on
 *    the other worker, and what the kill costs the batch.
 * Every render is the real CLI in its own process, timed from the outside (start-up included).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import sharp from 'sharp';
import { collectBatch, connectQueue, enqueueRender, startWorker } from '../dist/index.js';
import { buildCorpus } from './corpus.js';
import { redisVersion, startRedis } from './redis-server.js';

const fmt = (n, digits = 2) => n.toFixed(digits);
const JOBS = 2_000;
const OVERHEAD_TARGET_MS = 5;
const THROUGHPUT_TARGET = 0.95;
/** protocol.ts: LOCK_MS + STALLED_INTERVAL_MS. */
const RECOVERY_BOUND_S = 15;
/** How long worker A has been on its job when it is killed. */
const KILL_AFTER_MS = 1_500;
const noop = async () => ({ results: [], errors: [], warnings: [], notStarted: [] });

export async function queueBench(root, scratch, { runs }) {
  const cli = path.join(root, 'bin', 'content-api.js');
  const corpus = await buildCorpus(path.join(root, '.bench'));
  const work = mkdtempSync(path.join(scratch, 'queue-'));
  const redis = await startRedis(work);
  const workers = new Set();
  let queues = 0;
  const freshQueue = (what) => `bench-${what}-${++queues}`;
  const freshOut = (what) => mkdtempSync(path.join(work, `out-${what}-`));
  try {
    // 1. Overhead per job.
    console.error(`bench: queue overhead, ${JOBS} jobs with a no-op render`);
    const tiny = await tinyOriginals(path.join(work, 'tiny'), JOBS);
    const overhead = [];
    for (const concurrency of [1, 8]) {
      let best;
      for (let i = 0; i < runs; i++) {
        const result = await queueOverhead(redis.url, freshQueue(`overhead-c${concurrency}`), tiny, freshOut('tiny'), concurrency);
        console.error(`bench: queue overhead, concurrency ${concurrency}: ${fmt((1000 * result.seconds) / JOBS)} ms per job (enqueue ${fmt(result.enqueueSeconds)} s)`);
        if (!best || result.seconds < best.seconds) best = result;
      }
      overhead.push({ concurrency, ...best });
    }

    // 2. Throughput: local, 1 worker x 2, 2 workers x 1, in rounds (drift hits all three alike).
    const batch = twice(corpus.mixed, path.join(work, 'batch'));
    const originals = countFiles(batch);
    const contenders = [
      { label: 'local: `render -j 2`', workers: [] },
      { label: '`render --queue`, 1 worker `-j 2`', workers: [2] },
      { label: '`render --queue`, 2 workers `-j 1` each', workers: [1, 1] },
    ];
    for (let i = 0; i < runs; i++) {
      for (const contender of contenders) {
        console.error(`bench: queue throughput, ${contender.label}, run ${i + 1} of ${runs}`);
        const seconds = contender.workers.length === 0
          ? (await render(cli, batch, freshOut('local'), ['-j', '2'], originals)).seconds
          : await queued(cli, redis.url, freshQueue('throughput'), contender.workers, batch, freshOut('queue'), originals, workers);
        console.error(`bench: ${fmt(seconds)} s`);
        contender.seconds = Math.min(contender.seconds ?? Infinity, seconds);
      }
    }

    // 3. Recovery after SIGKILL, and the same batch without a kill.
    const slow = twice(corpus.mp24, path.join(work, 'slow'));
    const slowCount = countFiles(slow);
    console.error(`bench: queue recovery, ${slowCount} originals, 2 workers -j 1, no kill`);
    const calm = await queued(cli, redis.url, freshQueue('calm'), [1, 1], slow, freshOut('calm'), slowCount, workers);
    console.error(`bench: queue recovery, ${slowCount} originals, worker A SIGKILLed ${KILL_AFTER_MS / 1000} s into its first job`);
    console.error(`bench: ${fmt(calm)} s`);
    const recovery = await killedWorker(cli, redis, freshQueue('kill'), slow, freshOut('kill'), slowCount, workers);
    console.error(`bench: ${fmt(recovery.seconds)} s, exit code ${recovery.code}; killed job back in the queue after ${fmt(recovery.waitingAfter, 1)} s, on a worker after ${fmt(recovery.backAfter, 1)} s`);

    const local = contenders[0].seconds;
    const perSecond = (seconds) => originals / seconds;
    console.log(`\n## Queue: BullMQ on redis-server ${redisVersion()} (loopback, no persistence)\n`);
    console.log(`### Overhead per job: ${JOBS} jobs (one 1 KB JPEG each), a no-op render, the worker in this process\n`);
    console.log(`Timed from enqueueRender's start (discovery included) to collectBatch's end. Target: under ${OVERHEAD_TARGET_MS} ms per job.\n`);
    console.log('| worker concurrency | enqueue s | enqueue to last result s | ms per job | jobs done |');
    console.log('|---:|---:|---:|---:|---:|');
    for (const r of overhead) console.log(`| ${r.concurrency} | ${fmt(r.enqueueSeconds)} | ${fmt(r.seconds)} | ${fmt((1000 * r.seconds) / JOBS)} | ${r.done} |`);
    console.log(`\n### Throughput: ${originals} originals (the mixed batch, twice), each run into a fresh folder and queue\n`);
    console.log(`Workers started before the render command and stopped after. Target: 2 workers \`-j 1\` at least ${THROUGHPUT_TARGET}x local.\n`);
    console.log('| run | seconds | originals/s | vs local |');
    console.log('|---|---:|---:|---:|');
    for (const c of contenders) console.log(`| ${c.label} | ${fmt(c.seconds)} | ${fmt(perSecond(c.seconds))} | ${fmt(local / c.seconds)}x |`);
    console.log(`\n### Recovery: worker A SIGKILLed ${fmt(KILL_AFTER_MS / 1000, 1)} s into a job; ${slowCount} originals at 6000x4000, 2 workers \`-j 1\`\n`);
    console.log(`killed job ${recovery.job}: back in the queue after ${fmt(recovery.waitingAfter, 1)} s, on a worker after ${fmt(recovery.backAfter, 1)} s (lock ${RECOVERY_BOUND_S - 5} s + stalled check every 5 s: at most ${RECOVERY_BOUND_S} s); its result written by ${recovery.writtenBy}`);
    console.log(`batch: ${fmt(recovery.seconds)} s with the kill, ${fmt(calm)} s without (+${fmt(recovery.seconds - calm)} s); report: ${recovery.rendered} of ${slowCount} rendered, ${recovery.failures} failed, exit code ${recovery.code}`);

    const verdict = (ok) => (ok ? 'met' : 'NOT MET');
    const worst = Math.max(...overhead.map((r) => (1000 * r.seconds) / JOBS));
    const two = local / contenders[2].seconds;
    console.log('');
    console.log(`queue overhead: ${overhead.map((r) => `${fmt((1000 * r.seconds) / JOBS)} ms/job at concurrency ${r.concurrency}`).join(', ')} (target under ${OVERHEAD_TARGET_MS} ms): ${verdict(worst < OVERHEAD_TARGET_MS)}`);
    console.log(`queue throughput: 1 worker -j 2 at ${fmt(local / contenders[1].seconds)}x local, 2 workers -j 1 at ${fmt(two)}x local (target at least ${THROUGHPUT_TARGET}x): ${verdict(two >= THROUGHPUT_TARGET)}`);
    console.log(`queue recovery: the killed job on a worker again ${fmt(recovery.backAfter, 1)} s after SIGKILL (at most ${RECOVERY_BOUND_S} s): ${verdict(recovery.backAfter <= RECOVERY_BOUND_S)}; every original rendered, exit 0: ${verdict(recovery.code === 0 && recovery.rendered === slowCount && recovery.failures === 0)}`);
  } finally {
    for (const worker of workers) worker.kill();
    await redis.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/** `count` copies of one 1 KB JPEG, `tiny-0000.jpg`...: discovery lists them, the no-op render never opens them. */
async function tinyOriginals(dir, count) {
  mkdirSync(dir, { recursive: true });
  const noise = Buffer.from(Array.from({ length: 24 * 24 * 3 }, (_, i) => (i * 7919) % 251));
  const jpeg = await sharp(noise, { raw: { width: 24, height: 24, channels: 3 } }).jpeg({ quality: 90 }).toBuffer();
  for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `tiny-${String(i).padStart(4, '0')}.jpg`), jpeg);
  return dir;
}

/** Enqueue to last result for `input`'s originals, with a no-op worker of `concurrency` in this process. */
async function queueOverhead(url, name, input, outDir, concurrency) {
  let done = 0;
  const worker = await startWorker({ url, name, concurrency, render: noop, onJob: (event) => event.status === 'done' && done++ });
  const queue = await connectQueue({ url, name }, true);
  try {
    const started = performance.now();
    const batch = await enqueueRender([input], { outDir }, queue);
    const enqueued = performance.now();
    const report = await collectBatch(queue, batch.id, { wait: true });
    const seconds = (performance.now() - started) / 1000;
    if (batch.jobs !== JOBS || report.pending.length > 0 || report.failures.length > 0) {
      throw new Error(`queue overhead: ${batch.jobs} job(s) enqueued, ${report.pending.length} pending, ${report.failures.length} failed`);
    }
    return { seconds, enqueueSeconds: (enqueued - started) / 1000, done };
  } finally {
    await worker.close();
    await queue.close();
  }
}

/** `source`'s files twice, as `<dir>/a/` and `<dir>/b/` (hard links where the file system allows). */
function twice(source, dir) {
  for (const half of ['a', 'b']) {
    mkdirSync(path.join(dir, half), { recursive: true });
    for (const file of readdirSync(source).filter((f) => !f.startsWith('.') && f !== 'SOURCES.txt')) {
      const [from, to] = [path.join(source, file), path.join(dir, half, file)];
      try {
        linkSync(from, to);
      } catch {
        copyFileSync(from, to);
      }
    }
  }
  return dir;
}

const countFiles = (dir) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).length;

/** `content-api render <input> --out <outDir> <args> --json`, timed; throws unless all `originals` were rendered. */
async function render(cli, input, outDir, args, originals, { check = true } = {}) {
  const child = spawn(process.execPath, [cli, 'render', input, '--out', outDir, ...args, '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const started = performance.now();
  let [stdout, stderr] = ['', ''];
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'exit');
  const seconds = (performance.now() - started) / 1000;
  let report;
  try {
    report = JSON.parse(stdout);
  } catch {
    report = { results: [], failures: [] };
  }
  const rendered = report.results.filter((result) => result.status === 'rendered').length;
  const outcome = { seconds, code, rendered, failures: report.failures.length, stderr };
  if (check && (code !== 0 || rendered !== originals)) {
    throw new Error(`render ${args.join(' ')}: exit code ${code}, ${rendered} of ${originals} rendered; stderr:\n${stderr.slice(-4_000)}`);
  }
  return outcome;
}

/** A `content-api worker` process, in a process group of its own; `ready` once it takes jobs. */
function workerProcess(cli, url, name, concurrency, all, { quiet = true } = {}) {
  const args = [cli, 'worker', '--queue', url, '--queue-name', name, '-j', String(concurrency), ...(quiet ? ['-q'] : [])];
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (log += chunk));
  const exited = once(child, 'exit');
  const worker = {
    pid: child.pid,
    log: () => log,
    ready: (async () => {
      while (!log.includes(`worker ${child.pid}:`)) {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`worker exited (${child.exitCode ?? child.signalCode}) before taking jobs:\n${log}`);
        await sleep(20);
      }
    })(),
    /** SIGKILL to its process group, as a crash. */
    kill() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
      all.delete(worker);
    },
    /** SIGTERM (finishes the jobs under way), SIGKILL after 15 s. */
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const timer = setTimeout(() => worker.kill(), 15_000);
        child.kill('SIGTERM');
        await exited;
        clearTimeout(timer);
      }
      all.delete(worker);
    },
    exited,
  };
  worker.ready.catch(() => undefined);
  all.add(worker);
  return worker;
}

/** `render --queue` of `input` with worker processes of these concurrencies, started before and stopped after; its seconds. */
async function queued(cli, url, name, concurrencies, input, outDir, originals, all) {
  const started = concurrencies.map((concurrency) => workerProcess(cli, url, name, concurrency, all));
  try {
    await Promise.all(started.map((worker) => worker.ready));
    return (await render(cli, input, outDir, ['--queue', url, '--queue-name', name], originals)).seconds;
  } finally {
    await Promise.all(started.map((worker) => worker.stop()));
  }
}

/**
 * Worker A alone takes the batch's first job; 1.5 s into it, worker B starts and A is
 * SIGKILLed. The killed job is watched in BullMQ every 100 ms: back to waiting once its lock
 * lapsed and a stalled check saw it, then active again on B.
 */
async function killedWorker(cli, redis, name, input, outDir, originals, all) {
  const a = workerProcess(cli, redis.url, name, 1, all, { quiet: false });
  let b;
  let bull;
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  try {
    await a.ready;
    // Only now: a BullMQ Queue writes its keys at once, and a name with BullMQ keys but no mark
    // of content-api's is another application's (workers refuse it).
    bull = new Queue(name, { connection: client });
    bull.on('error', () => undefined);
    const rendering = render(cli, input, outDir, ['--queue', redis.url, '--queue-name', name], originals, { check: false });
    let job;
    while (!job) {
      [job] = await bull.getActive();
      if (!job) await sleep(100);
    }
    await sleep(Math.max(0, job.processedOn + KILL_AFTER_MS - Date.now()));
    b = workerProcess(cli, redis.url, name, 1, all, { quiet: false });
    a.kill();
    const killed = performance.now();
    let waitingAfter = NaN;
    let backAfter = NaN;
    for (;;) {
      const now = await bull.getJob(job.id);
      const at = (performance.now() - killed) / 1000;
      if (!now) {
        // Finished (and removed) between two looks.
        if (Number.isNaN(backAfter)) backAfter = at;
        break;
      }
      const state = await now.getState();
      if (Number.isNaN(waitingAfter) && state !== 'active') waitingAfter = at;
      if (now.processedOn !== job.processedOn) {
        if (Number.isNaN(waitingAfter)) waitingAfter = at;
        backAfter = at;
        break;
      }
      if (at > 120) break;
      await sleep(100);
    }
    const outcome = await rendering;
    const result = await client.get(`content-api:${name}:result:${job.id}`);
    const record = result && JSON.parse(result.slice(result.indexOf(' ') + 1));
    const pid = record ? Number(record.worker.split(':').at(-1)) : NaN;
    const writer = pid === b.pid ? 'worker B' : pid === a.pid ? 'worker A (killed!)' : `another process (${record?.worker ?? 'no result'})`;
    return {
      job: job.id.slice(0, 9),
      waitingAfter,
      backAfter,
      writtenBy: record ? `${writer}, attempt ${record.attempt}` : 'nobody (no result)',
      ...outcome,
    };
  } finally {
    await bull?.close();
    client.disconnect();
    a.kill();
    await b?.stop();
  }
}
