/**
 * The render benchmark: the corpus rendered by content-api, the naive approach and
 * @11ty/eleventy-img, each in its own process at the same concurrency, side by side; the
 * incremental rerun; the quality of the cascade.
 */
import { mkdtempSync } from 'node:fs';
import path from 'node:path';
import { buildBaseline } from './baseline.js';
import { buildCorpus } from './corpus.js';
import { pipelineFloor } from './floor.js';
import { cascadeQuality } from './quality.js';
import { bestOf, runContender } from './run-contender.js';

const fmt = (n, digits = 2) => n.toFixed(digits);

/** content-api before fingerprints and placeholders (issue #35's item 11): render's CPU is held to 1.05x of it. */
export const PLACEHOLDER_BASELINE_COMMIT = '18a7ccc';
/** The most CPU render may take against that commit's, at the same settings. */
const CPU_GOAL = 1.05;

export async function renderBench(root, scratch, { concurrency, runs }) {
  const corpus = await buildCorpus(path.join(root, '.bench'));

  const run = (contender, input, outDir, mode) =>
    runContender(root, scratch, contender, input, { concurrency, outDir, mode });
  const measure = (contender, input) => bestOf(runs, () => run(contender, input));

  const table = [];
  const floors = [];
  for (const [label, input] of [
    ['mixed: 6 JPEG, 3 PNG, 3 WebP at 5120x2880 + 3 JPEG at 6000x4000', corpus.mixed],
    ['24 MP JPEGs only: 6 at 6000x4000', corpus.mp24],
    ['artwork photograph: 4 x 16 MB JPEG at 5640x3172, as published', corpus.artwork],
  ]) {
    const results = {};
    for (const contender of ['content-api', 'naive', 'eleventy-img']) {
      console.error(`bench: ${contender} over ${label}`);
      results[contender] = measure(contender, input);
    }
    for (const [contender, r] of Object.entries(results)) {
      const throughput = r.images / r.seconds;
      const vsNaive = throughput / (results.naive.images / results.naive.seconds);
      table.push([
        label,
        contender,
        r.images,
        fmt(r.seconds),
        fmt(throughput),
        fmt(r.cpuSeconds),
        fmt(r.peakRssMb, 0),
        `${fmt(vsNaive)}x`,
      ]);
    }
    console.error(`bench: the floor under any pipeline for ${label}`);
    const floor = await pipelineFloor(input);
    const floorCpu = floor.xlSeconds + floor.smallerSeconds;
    const naiveCpu = results.naive.cpuSeconds;
    const oursCpu = results['content-api'].cpuSeconds;
    const withResizes = floorCpu + floor.resizeSeconds;
    floors.push([
      label,
      fmt(floor.xlSeconds),
      fmt(floor.smallerSeconds),
      fmt(floorCpu),
      fmt(naiveCpu),
      fmt(oursCpu),
      `${fmt(naiveCpu / floorCpu)}x`,
      fmt(floor.resizeSeconds),
      `${fmt(naiveCpu / withResizes)}x`,
      `${fmt(naiveCpu / oursCpu)}x`,
    ]);
  }

  // Incremental: a second run over the unchanged folder, into the same output folder.
  const incrementalOut = mkdtempSync(path.join(scratch, 'incremental-'));
  const first = run('content-api', corpus.mixed, incrementalOut, 'force');
  const second = run('content-api', corpus.mixed, incrementalOut, 'incremental');

  console.log('\n## Render throughput\n');
  console.log('| batch | contender | images | seconds | images/s | CPU s | peak RSS MB | vs naive |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const row of table) console.log(`| ${row.join(' | ')} |`);
  console.log('\n## The floor under any pipeline\n');
  console.log(
    'CPU seconds no pipeline can avoid, measured op by op: the xl file made from the original in one ' +
      'decode -> resize -> encode stream, and the four smaller files encoded from ready pixels. With the cores ' +
      "busy, naive CPU / floor CPU bounds any pipeline's speed-up over naive at these encoder settings. " +
      'The smaller sizes must also be resized from something; the cheapest way measured (each from the next ' +
      "larger one's pixels) is shown beside it, with the ceiling it leaves.\n",
  );
  console.log(
    '| batch | xl: decode, resize, encode | four smaller encodes | floor CPU s | naive CPU s | content-api CPU s ' +
      '| ceiling vs naive | + four resizes (cascade) | ceiling with them | content-api vs naive (CPU) |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of floors) console.log(`| ${row.join(' | ')} |`);
  console.log(
    `\nincremental: first run ${fmt(first.seconds)} s, second run over the unchanged folder ${fmt(second.seconds)} s ` +
      `(${fmt((100 * second.seconds) / first.seconds, 1)}% of the first)`,
  );

  await cpuAgainstBaseline(root, scratch, corpus, { concurrency, runs });

  console.error('bench: quality of the cascade');
  const quality = await cascadeQuality(
    ['elephants.webp', 'mosaic-24mp-a.jpg', 'kleiber.jpg'].map((name) => path.join(corpus.mixed, name)),
  );
  console.log('\n## Quality of the cascade: PSNR in dB (higher is closer; above ~45 dB differences are invisible)\n');
  console.log(
    'Each cell: cascade vs direct sharp resize | cascade vs exact Lanczos-3 | ' +
      'direct sharp resize vs exact Lanczos-3 (pixels before encoding).\n',
  );
  console.log('| original | xs | sm | md | lg | xl |');
  console.log('|---|---|---|---|---|---|');
  for (const row of quality) {
    const cells = ['xs', 'sm', 'md', 'lg', 'xl'].map((key) =>
      [row[key].vsDirect, row[key].cascadeVsExact, row[key].directVsExact].map((v) => fmt(v, 1)).join(' \\| '),
    );
    console.log(`| ${row.source} | ${cells.join(' | ')} |`);
  }
  console.log("\n(eleventy-img 6 bundles its own sharp 0.33 / libvips 8.15; the others use this project's sharp.)");
}

/**
 * render's CPU against the same batches rendered by the library at PLACEHOLDER_BASELINE_COMMIT, at the
 * same settings (PNG unfiltered as sharp writes it, libvips' threads as render sets them), in
 * alternating runs (at least three pairs): a machine's speed drifts within a run of the bench, and
 * alternating puts the drift on both sides.
 */
export async function cpuAgainstBaseline(root, scratch, corpus, { concurrency, runs }) {
  const env = { BENCH_BASELINE_DIR: buildBaseline(root, PLACEHOLDER_BASELINE_COMMIT) };
  const pairs = Math.max(3, runs);
  const rows = [];
  for (const [label, input] of [
    ['mixed', corpus.mixed],
    ['24 MP JPEGs', corpus.mp24],
    ['artwork photographs', corpus.artwork],
  ]) {
    const cpu = { before: [], after: [] };
    for (let pair = 0; pair < pairs; pair++) {
      console.error(`bench: CPU against ${PLACEHOLDER_BASELINE_COMMIT} over ${label}, pair ${pair + 1} of ${pairs}`);
      cpu.before.push(runContender(root, scratch, 'content-api-before', input, { concurrency, env }).cpuSeconds);
      cpu.after.push(runContender(root, scratch, 'content-api', input, { concurrency }).cpuSeconds);
    }
    const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
    const ratio = mean(cpu.after) / mean(cpu.before);
    rows.push([label, cpu.before.map((v) => fmt(v)).join(', '), cpu.after.map((v) => fmt(v)).join(', '), ratio]);
  }
  console.log(`\n## CPU against ${PLACEHOLDER_BASELINE_COMMIT} (before fingerprints and placeholders)\n`);
  console.log(
    `The same batches through the library at ${PLACEHOLDER_BASELINE_COMMIT} and now, at the same settings, in ` +
      `${pairs} alternating pairs; the goal is at most ${CPU_GOAL}x of its CPU (mean against mean).\n`,
  );
  console.log(`| batch | CPU s, ${PLACEHOLDER_BASELINE_COMMIT} | CPU s, content-api | ratio | goal |`);
  console.log('|---|---|---|---:|---|');
  for (const [label, before, after, ratio] of rows) {
    const verdict = ratio <= CPU_GOAL ? 'met' : '**not met**';
    console.log(`| ${label} | ${before} | ${after} | ${fmt(ratio)}x | ${verdict} |`);
  }
}
