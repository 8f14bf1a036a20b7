/**
 * The storage benchmark (issue #11): streamed originals against the library as it was before
 * them (bench/baseline.js), on the existing batches and on scans far larger in bytes than in
 * pixels, peak RSS and time side by side; then the same batch rendered into a bucket (s3rver
 * on loopback, in its own process) and into a local folder.
 */
import { execFileSync, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildBaseline } from './baseline.js';
import { buildCorpus } from './corpus.js';
import { bestOf, runContender } from './run-contender.js';
import { buildScans } from './scans.js';

const fmt = (n, digits = 2) => n.toFixed(digits);
const timed = (run) => {
  const started = performance.now();
  run();
  return (performance.now() - started) / 1000;
};
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];
const megabytes = (dir) =>
  readdirSync(dir)
    .filter((f) => f !== 'SOURCES.txt')
    .reduce((sum, f) => sum + statSync(path.join(dir, f)).size, 0) / 1048576;

export async function storageBench(root, scratch, { concurrency, runs }) {
  const corpus = await buildCorpus(path.join(root, '.bench'));
  const scans = await buildScans(path.join(root, '.bench'), corpus.mixed);
  const env = { BENCH_BASELINE_DIR: buildBaseline(root) };
  // glibc's default of up to 8 malloc arenas per core fragments the memory libvips' threads
  // free; MALLOC_ARENA_MAX=2 (what sharp's docs suggest) shows how much of a peak that is.
  const arenas = { MALLOC_ARENA_MAX: '2' };
  const batches = [
    ['mixed: 15 at 5120x2880 and 6000x4000', corpus.mixed, runs],
    ['mixed, with MALLOC_ARENA_MAX=2', corpus.mixed, runs, arenas],
    ['24 MP JPEGs: 6 at 6000x4000', corpus.mp24, runs],
    ['artwork photograph: 4 x 16 MB JPEG', corpus.artwork, runs],
    ['scans: 2 x 16-bit TIFF 12000x9000, uncompressed', scans.tiff16, 1],
    ['100 MP: 2 JPEG + 2 PNG at 12000x8400', scans.mp100, 1],
  ];
  const rows = [];
  for (const [label, input, times, extra = {}] of batches) {
    const results = {};
    for (const contender of ['content-api-before', 'content-api']) {
      console.error(`bench: ${contender} over ${label}`);
      results[contender] = bestOf(times, () =>
        runContender(root, scratch, contender, input, { concurrency, env: { ...env, ...extra } }),
      );
    }
    const [before, after] = [results['content-api-before'], results['content-api']];
    rows.push([
      label,
      before.images,
      fmt(megabytes(input), 0),
      fmt(before.seconds),
      fmt(after.seconds),
      `${fmt(before.seconds / after.seconds)}x`,
      fmt(before.peakRssMb, 0),
      fmt(after.peakRssMb, 0),
    ]);
  }

  console.error('bench: start-up, render --help, before and after');
  const startup = (dir) =>
    median(
      Array.from({ length: 15 }, () =>
        timed(() =>
          execFileSync(process.execPath, [path.join(dir, 'bin/content-api.js'), 'render', '--help'], {
            stdio: 'ignore',
          }),
        ),
      ),
    );
  const [helpBefore, helpAfter] = [startup(env.BENCH_BASELINE_DIR), startup(root)];

  console.error('bench: the mixed batch into a bucket (s3rver on loopback) and into a local folder');
  const s3 = await startS3rver(mkdtempSync(path.join(scratch, 's3rver-')));
  let bucketRun = 0;
  const s3env = {
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_S3: s3.endpoint,
  };
  const toFolder = bestOf(runs, () => runContender(root, scratch, 'content-api', corpus.mixed, { concurrency }));
  const toBucket = bestOf(runs, () =>
    runContender(root, scratch, 'content-api', corpus.mixed, {
      concurrency,
      outDir: `s3://bench/run-${++bucketRun}/media/`,
      env: s3env,
    }),
  );
  const rerun = runContender(root, scratch, 'content-api', corpus.mixed, {
    concurrency,
    outDir: `s3://bench/run-${bucketRun}/media/`,
    mode: 'incremental',
    env: s3env,
  });
  await s3.close();

  console.log(
    `\n## Streamed originals: before (${path.basename(env.BENCH_BASELINE_DIR)}) and after, ` +
      `concurrency ${concurrency}\n`,
  );
  console.log(
    'Peak RSS target: under 700 MB for every batch at concurrency 2, whatever the file sizes; ' +
      'time not higher than before.\n',
  );
  console.log(
    '| batch | originals | MB on disk | before s | after s | speed after/before ' +
      '| before peak RSS MB | after peak RSS MB |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  console.log(
    `\n\`render --help\`, median of 15: before ${fmt(helpBefore * 1000, 0)} ms, after ${fmt(helpAfter * 1000, 0)} ms ` +
      '(the AWS SDK is loaded only for s3:// locations)',
  );
  console.log('\n## Render into a bucket vs a local folder (the mixed batch; s3rver on loopback, its own process)\n');
  console.log('| output | seconds | images/s | peak RSS MB |');
  console.log('|---|---:|---:|---:|');
  for (const [label, r] of [
    ['local folder', toFolder],
    ['s3:// bucket', toBucket],
  ])
    console.log(`| ${label} | ${fmt(r.seconds)} | ${fmt(r.images / r.seconds)} | ${fmt(r.peakRssMb, 0)} |`);
  console.log(
    `\nrerun into the bucket, nothing changed: ${fmt(rerun.seconds)} s ` +
      `(${fmt((100 * rerun.seconds) / toBucket.seconds, 1)}% of the first)`,
  );
}

/** s3rver from the test fixtures, in a process of its own (it needs OpenSSL's legacy provider). */
async function startS3rver(directory) {
  const script = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../test/fixtures/s3rver-process.js');
  const child = fork(script, [directory, 'bench'], {
    execArgv: ['--openssl-legacy-provider'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const [message] = await once(child, 'message');
  return {
    endpoint: `http://127.0.0.1:${message.port}`,
    async close() {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}
