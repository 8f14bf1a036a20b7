/**
 * `npm run bench -- quality`: `render --quality auto` (#20) against fixed quality, on the bench corpus,
 * everything as JPEG so that the contenders compare like with like. Per corpus, eight contenders and two bounds:
 *
 * - fixed: today's default, quality 80;
 * - auto: `quality: { mode: 'auto' }`, target DEFAULT_QUALITY_TARGET (80);
 * - auto, mozjpeg: the same with `jpeg: { mozjpeg: true }` (`--jpeg-mozjpeg`);
 * - auto, whole (and with mozjpeg): `quality: { sample: false }` (`--no-quality-sample`), every rendition
 *   scored whole, no sample and no margin;
 * - auto, whole, mozjpeg, table 5: the same with `jpeg: { table: 5 }` (`--jpeg-quant-table 5`);
 * - uniform: the lowest `--jpeg-quality` at which every rendition of the corpus reaches the target by
 *   the full-image score, found by a bracketing search from fixed's render (quality 80): a level's
 *   renditions scored lowest first, and the level stopped at its first failure; the goal's baseline;
 * - uniform, table 5: the uniform search with that table, from its own render at quality 80: what the table
 *   alone saves;
 * - lowest per rendition: each rendition at the lowest `--jpeg-quality` (50-100) at which it reaches the
 *   target by its own full-image score, stepped to one quality at a time from the choice of "auto, whole":
 *   the most that choosing a quality per rendition can save with this encoder and its own table (scores are
 *   not strictly monotone in the quality, so a lower one might pass too); not a render, not timed;
 * - lowest per rendition, mozjpeg: the same with mozjpeg, stepped to from "auto, whole, mozjpeg"'s choice;
 * - eleventy-img 6 with its defaults (sharp 0.33, quality 80), JPEG, our five rendition widths, in a
 *   process of its own (this file run as `node bench/auto-quality.js eleventy <job.json>`).
 *
 * Each rendition is scored whole with SSIMULACRA2 against its contender's own pixels before encoding:
 * for content-api, the same render as lossless PNG; for eleventy-img, a direct sharp 0.33 resize of the
 * original to that width written as PNG (what eleventy-img does before encoding). Scoring runs on two
 * worker threads (this file again), each holding the prepared references (`prepareSsimulacra2`, when
 * dist has it) of half the renditions. Then Butteraugli's 3-norm (bench/butteraugli.js) on the same
 * pairs, and the CLI's wall time with and without `--quality auto` on the 24 MP originals.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import pLimit from 'p-limit';
import { RENDITION_KEYS, renditionSizes } from '../dist/api/model.js';
import { DEFAULT_QUALITY_TARGET, renderOriginals } from '../dist/index.js';
import { rawPixels } from '../dist/pixels/read.js';
import { LARGE_PIXELS, SAMPLE_PIXELS, TILE_MARGIN, WHOLE_PIXELS } from '../dist/quality/auto.js';
import * as metric from '../dist/quality/ssimulacra2.js';
import { butteraugli, findButteraugli } from './butteraugli.js';

const TARGET = DEFAULT_QUALITY_TARGET;
/** The uniform quality's search range: below LOWEST it is reported as `<= LOWEST`. */
const [LOWEST, HIGHEST] = [50, 100];
/** Butteraugli leaves out the xl renditions when they would take longer than this on both cores. */
const BUTTERAUGLI_XL_BUDGET_S = 120;
/** Runs of each CLI render for the time goal, alternating fixed and auto. */
const CLI_RUNS = 3;
const LOSSLESS = { png: { palette: 'off', compression: 1 } };
/** The quantisation table measured beside the encoder's own (`--jpeg-quant-table 5`): Klein et al.'s. */
const TABLE = 5;
/** The goal's options' contenders and the table alone: in the options' goal table and in Butteraugli's. */
const GOAL_OPTIONS = ['auto, whole, mozjpeg', `auto, whole, mozjpeg, table ${TABLE}`, `uniform, table ${TABLE}`];

const fmt = (n, digits = 2) => n.toFixed(digits);
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const seconds = (since) => (performance.now() - since) / 1000;
let started = performance.now();
const log = (message) => console.error(`bench: quality: [${fmt(seconds(started), 0)} s] ${message}`);

// ---- scoring on worker threads -------------------------------------------------------------------

/** The prepared-reference API when dist has it, else the same interface over `ssimulacra2`. */
const prepare =
  metric.prepareSsimulacra2 ?? ((reference) => ({ score: (distorted) => metric.ssimulacra2(reference, distorted) }));

if (!isMainThread && workerData?.role === 'scorer') {
  const prepared = new Map();
  const handle = async (message) => {
    if (message.type === 'prepare') prepared.set(message.id, prepare(await rawPixels(message.reference)));
    else if (message.type === 'score') return prepared.get(message.id).score(await rawPixels(message.distorted));
    else if (message.type === 'full') {
      return metric.ssimulacra2(await rawPixels(message.reference), await rawPixels(message.distorted));
    } else if (message.type === 'drop') prepared.clear();
    return null;
  };
  // One message at a time, in order: a worker holds one decoded pair at most.
  let chain = Promise.resolve();
  parentPort.on('message', (message) => {
    chain = chain
      .then(() => handle(message))
      .then(
        (result) => parentPort.postMessage({ n: message.n, result }),
        (error) => parentPort.postMessage({ n: message.n, error: String(error?.stack ?? error) }),
      );
  });
}

/** A scorer thread: `call(message)` resolves with its answer; `pixels` counts what it holds. */
function scorer() {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'scorer' } });
  const pending = new Map();
  let next = 0;
  worker.on('message', ({ n, result, error }) => {
    const waiting = pending.get(n);
    pending.delete(n);
    if (error) waiting.reject(new Error(error));
    else waiting.resolve(result);
  });
  worker.on('error', (error) => {
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
  });
  return {
    worker,
    pixels: 0,
    call(message) {
      return new Promise((resolve, reject) => {
        const n = next++;
        pending.set(n, { resolve, reject });
        worker.postMessage({ ...message, n });
      });
    },
  };
}

/**
 * Two (or `size`) scorer threads. `prepare(renditions)` gives each rendition an owner thread (the
 * pixels balanced) that prepares its reference; `score(jobs, { stopBelow })` scores each
 * { rendition, distorted } on its owner, in the given order per thread, and with `stopBelow` starts
 * no further job once a score is under it; `full(pairs)` scores { reference, distorted } pairs on
 * whichever thread is free.
 */
function scorerPool(size) {
  const threads = Array.from({ length: size }, scorer);
  const owner = new Map();
  return {
    async prepare(renditions) {
      for (const r of [...renditions].sort((a, b) => b.pixels - a.pixels)) {
        const thread = threads.reduce((a, b) => (b.pixels < a.pixels ? b : a));
        thread.pixels += r.pixels;
        owner.set(r.id, thread);
      }
      await Promise.all(
        renditions.map((r) => owner.get(r.id).call({ type: 'prepare', id: r.id, reference: r.reference })),
      );
    },
    async score(jobs, { stopBelow = -Infinity } = {}) {
      const scores = new Map();
      let failed = false;
      await Promise.all(
        threads.map(async (thread) => {
          for (const job of jobs.filter((j) => owner.get(j.rendition.id) === thread)) {
            if (failed) return;
            const score = await thread.call({ type: 'score', id: job.rendition.id, distorted: job.distorted });
            scores.set(job.rendition.id, score);
            if (score < stopBelow) failed = true;
          }
        }),
      );
      return scores;
    },
    async full(pairs) {
      const scores = new Array(pairs.length);
      let next = 0;
      await Promise.all(
        threads.map(async (thread) => {
          while (next < pairs.length) {
            const i = next++;
            scores[i] = await thread.call({ type: 'full', ...pairs[i] });
          }
        }),
      );
      return scores;
    },
    async drop() {
      await Promise.all(threads.map((t) => t.call({ type: 'drop' })));
      for (const t of threads) t.pixels = 0;
      owner.clear();
    },
    close: () => Promise.all(threads.map((t) => t.worker.terminate())),
  };
}

// ---- the contenders -----------------------------------------------------------------------------

/** Renders `files` into a new folder `label` under `scratch`: { outDir, results, seconds }. */
async function render(scratch, label, files, format, settings = {}) {
  const outDir = path.join(scratch, label);
  mkdirSync(outDir, { recursive: true });
  const since = performance.now();
  const report = await renderOriginals(files, {
    outDir,
    formats: format ? [format] : undefined,
    force: true,
    ...settings,
  });
  if (report.failures.length > 0) throw new Error(report.failures.map((f) => f.error).join('\n'));
  return { outDir, results: report.results, seconds: seconds(since) };
}

/** The JPEG files of a content-api run, by rendition id. */
function filesOf(run, corpus) {
  const files = new Map();
  for (const result of run.results) {
    for (const key of RENDITION_KEYS) {
      files.set(idOf(corpus, result.source, key), path.join(run.outDir, result.files[key].path));
    }
  }
  return files;
}

/** The corpus rendered as JPEG at one `--jpeg-quality` (with `jpeg`'s settings): { run, jpegs }. */
async function renderAt(scratch, corpus, files, quality, jpeg = {}) {
  const name = `${corpus}-q${quality}${jpeg.mozjpeg ? '-mozjpeg' : ''}${tableOf(jpeg, '-t')}`;
  const run = await render(scratch, name, files, 'jpeg', { quality: { jpeg: quality }, jpeg });
  return { run, jpegs: filesOf(run, corpus) };
}

/** `prefix` and the quantisation table `jpeg` names, or nothing for the encoder's own. */
const tableOf = (jpeg, prefix) => (jpeg.table === undefined ? '' : `${prefix}${jpeg.table}`);
const idOf = (corpus, source, key) => `${corpus}/${path.basename(source)}/${key}`;
const bytesOf = (paths) => paths.reduce((sum, file) => sum + statSync(file).size, 0);

/** eleventy-img in a process of its own; its files and references: [{ id, file, reference, pixels }]. */
async function eleventy(scratch, corpus, files) {
  const outDir = path.join(scratch, `${corpus}-eleventy`);
  const job = path.join(scratch, `${corpus}-eleventy.json`);
  writeFileSync(job, JSON.stringify({ outDir, referenceDir: path.join(outDir, 'reference'), corpus, files }));
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'eleventy', job], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`eleventy-img exited with ${code}`);
  return JSON.parse(stdout);
}

/** The child's side: renders with eleventy-img, then writes each rendition's pixels before encoding as PNG. */
async function eleventyChild(jobFile) {
  const { outDir, referenceDir, corpus, files } = JSON.parse(readFileSync(jobFile, 'utf8'));
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const Image = require('@11ty/eleventy-img');
  // Its own sharp (0.33), for the references: the same decode and resize as its renditions.
  const sharp = createRequire(require.resolve('@11ty/eleventy-img'))('sharp');
  Image.concurrency = availableParallelism();
  const plans = await Promise.all(
    files.map(async (file) => {
      const meta = await sharp(file).metadata();
      const swap = meta.orientation >= 5 && meta.orientation <= 8;
      const sizes = renditionSizes(swap ? { width: meta.height, height: meta.width } : meta);
      return { file, meta, widths: RENDITION_KEYS.map((key) => sizes[key].width) };
    }),
  );
  const since = performance.now();
  const stats = await Promise.all(
    plans.map(({ file, widths }) =>
      Image(file, { widths, formats: ['jpeg'], outputDir: outDir, useCache: false, sharpJpegOptions: {} }),
    ),
  );
  const wall = seconds(since);
  mkdirSync(referenceDir, { recursive: true });
  const renditions = [];
  for (const [i, { file, meta, widths }] of plans.entries()) {
    for (const [k, key] of RENDITION_KEYS.entries()) {
      const stat = stats[i].jpeg.find((s) => s.width === widths[k]);
      const reference = path.join(referenceDir, `${path.basename(file)}.${key}.png`);
      const image = sharp(file, { failOnError: false }).keepIccProfile();
      if (meta.orientation >= 5 && meta.orientation <= 8) image.rotate();
      if (stat.width < meta.width) image.resize({ width: stat.width, withoutEnlargement: true });
      await image.png({ compressionLevel: 1 }).toFile(reference);
      renditions.push({
        id: idOf(corpus, file, key),
        file: stat.outputPath,
        reference,
        pixels: stat.width * stat.height,
      });
    }
  }
  process.stdout.write(JSON.stringify({ seconds: wall, renditions }));
}

// ---- the bench ----------------------------------------------------------------------------------

/** How much a JPEG rendition's score moves per quality step, about (src/quality/auto.ts): for a first guess. */
const POINTS_PER_STEP = 0.5;

/**
 * The lowest quality in LOWEST..HIGHEST at which every rendition scores at least TARGET, `known` (quality
 * 80's run, fully scored) to start from. A bracketing search: a level that fails costs little (the
 * renditions likeliest to fail are scored first and the level stops at its first failure), one that
 * passes costs every rendition's score, so each guess is interpolated from the lowest scores of the
 * levels around it (at first, POINTS_PER_STEP per step) and rounded down. Returns the chosen level
 * ({ quality, run, scores, jpegs }), whether the target was `reached`, the qualities `tried`, and every
 * level rendered (`levels`, by quality).
 */
async function uniformSearch(scratch, corpus, files, renditions, pool, known, jpeg = {}) {
  const levels = new Map();
  // Each rendition's score at the highest quality it was scored at: the lowest are scored first.
  const latest = new Map();
  const pass = (level) =>
    level.scores.size === renditions.length && [...level.scores.values()].every((s) => s >= TARGET);
  const record = (level) => {
    level.min = Math.min(...level.scores.values());
    level.pass = pass(level);
    levels.set(level.quality, level);
    for (const [id, score] of level.scores) {
      if (!(latest.get(id)?.quality > level.quality)) latest.set(id, { quality: level.quality, score });
    }
  };
  const tryLevel = async (quality) => {
    const { run, jpegs } = await renderAt(scratch, corpus, files, quality, jpeg);
    const order = [...renditions].sort(
      (a, b) => (latest.get(a.id)?.score ?? Infinity) - (latest.get(b.id)?.score ?? Infinity) || a.pixels - b.pixels,
    );
    const scores = await pool.score(
      order.map((rendition) => ({ rendition, distorted: jpegs.get(rendition.id) })),
      { stopBelow: TARGET },
    );
    const level = { quality, run, scores, jpegs };
    record(level);
    log(
      `${corpus}: uniform${tableOf(jpeg, ', table ')} q${quality}: ` +
        `${level.pass ? 'passes' : `fails (lowest ${fmt(level.min)})`}, ${scores.size} of ${renditions.length} scored`,
    );
  };
  record(known);
  let [low, high] = known.pass ? [LOWEST - 1, known.quality] : [known.quality, HIGHEST + 1];
  while (high - low > 1) {
    const [below, above] = [levels.get(low), levels.get(high)];
    let guess;
    if (below && above) guess = low + ((TARGET - below.min) / (above.min - below.min)) * (high - low);
    else if (below) guess = low + (TARGET - below.min) / POINTS_PER_STEP;
    else guess = high - (above.min - TARGET) / POINTS_PER_STEP;
    // Scores that do not grow with the quality give no slope: halve the bracket instead.
    if (!Number.isFinite(guess)) guess = (low + high) / 2;
    const quality = Math.min(high - 1, Math.max(low + 1, Math.floor(guess)));
    await tryLevel(quality);
    if (levels.get(quality).pass) high = quality;
    else low = quality;
  }
  const chosen = levels.get(Math.min(high, HIGHEST));
  return { ...chosen, reached: high <= HIGHEST, tried: [...levels.keys()].sort((a, b) => a - b), levels };
}

/**
 * About the most any choice of quality per rendition can save: for each rendition, the lowest quality
 * whose full-image score reaches TARGET (no sample, no margin), found by stepping one quality at a
 * time from the choice of "auto, whole" (down while it passes, up until it does; a lower quality that passes past
 * one that fails is not looked for). `known` holds the corpus's
 * renders at uniform qualities ({ quality, jpegs, scores }), reused; a quality not rendered yet is
 * rendered whole, with `jpeg`'s settings (mozjpeg's bound: `{ mozjpeg: true }`, nothing known).
 * Returns the jpegs chosen (by id) and the qualities (by id).
 */
async function perRenditionBound(scratch, corpus, files, renditions, pool, known, start, jpeg = {}) {
  const levels = new Map(known.map((level) => [level.quality, level]));
  const scored = new Map();
  for (const level of known) for (const [id, score] of level.scores) scored.set(`${id}@${level.quality}`, score);
  const levelAt = async (quality) => {
    if (!levels.has(quality))
      levels.set(quality, { quality, ...(await renderAt(scratch, corpus, files, quality, jpeg)) });
    return levels.get(quality);
  };
  // Per rendition: the lowest passing quality seen, the highest failing one, and the next to try.
  const state = new Map(renditions.map((r) => [r.id, { pass: Infinity, fail: -Infinity, next: start.get(r.id) }]));
  for (;;) {
    const open = renditions.filter((r) => state.get(r.id).next !== undefined);
    if (open.length === 0) break;
    const jobs = [];
    for (const r of open) {
      const quality = state.get(r.id).next;
      if (!scored.has(`${r.id}@${quality}`))
        jobs.push({ rendition: r, quality, distorted: (await levelAt(quality)).jpegs.get(r.id) });
    }
    const scores = await pool.score(jobs);
    for (const job of jobs) scored.set(`${job.rendition.id}@${job.quality}`, scores.get(job.rendition.id));
    for (const r of open) {
      const at = state.get(r.id);
      if (scored.get(`${r.id}@${at.next}`) >= TARGET) at.pass = Math.min(at.pass, at.next);
      else at.fail = Math.max(at.fail, at.next);
      // Done once a pass sits one step over a fail, or at (or past: auto goes down to 10) either end of the range.
      if (at.pass - at.fail === 1 || at.pass <= LOWEST || at.fail >= HIGHEST) at.next = undefined;
      else at.next = at.pass === Infinity ? at.fail + 1 : at.pass - 1;
    }
  }
  const chosen = new Map();
  const qualities = new Map();
  for (const r of renditions) {
    const { pass } = state.get(r.id);
    const quality = Math.min(pass, HIGHEST);
    qualities.set(r.id, quality);
    chosen.set(r.id, (await levelAt(quality)).jpegs.get(r.id));
  }
  return {
    jpegs: chosen,
    qualities,
    scores: new Map(renditions.map((r) => [r.id, scored.get(`${r.id}@${qualities.get(r.id)}`)])),
  };
}

/** Per contender: { label, quality, bytes, seconds, scores (by id) }, and the pairs Butteraugli needs. */
async function corpusBench(scratch, corpus, files, pool) {
  log(`${corpus}: lossless references (${files.map((f) => path.basename(f)).join(', ')})`);
  const reference = await render(scratch, `${corpus}-png`, files, 'png', LOSSLESS);
  const renditions = reference.results.flatMap((result) =>
    RENDITION_KEYS.map((key) => {
      const file = result.files[key];
      return {
        id: idOf(corpus, result.source, key),
        key,
        reference: path.join(reference.outDir, file.path),
        pixels: file.width * file.height,
      };
    }),
  );
  log(`${corpus}: fixed`);
  const fixed = await render(scratch, `${corpus}-fixed`, files, 'jpeg');
  log(`${corpus}: auto`);
  const auto = await render(scratch, `${corpus}-auto`, files, 'jpeg', { quality: { mode: 'auto' } });
  log(`${corpus}: auto with mozjpeg`);
  const autoMoz = await render(scratch, `${corpus}-auto-mozjpeg`, files, 'jpeg', {
    quality: { mode: 'auto' },
    jpeg: { mozjpeg: true },
  });
  log(`${corpus}: auto, every rendition scored whole`);
  const autoWhole = await render(scratch, `${corpus}-auto-whole`, files, 'jpeg', {
    quality: { mode: 'auto', sample: false },
  });
  log(`${corpus}: auto, scored whole, with mozjpeg`);
  const autoWholeMoz = await render(scratch, `${corpus}-auto-whole-mozjpeg`, files, 'jpeg', {
    quality: { mode: 'auto', sample: false },
    jpeg: { mozjpeg: true },
  });
  log(`${corpus}: auto, scored whole, with mozjpeg and quantisation table ${TABLE}`);
  const autoWholeMozTable = await render(scratch, `${corpus}-auto-whole-mozjpeg-t${TABLE}`, files, 'jpeg', {
    quality: { mode: 'auto', sample: false },
    jpeg: { mozjpeg: true, table: TABLE },
  });
  log(`${corpus}: eleventy-img`);
  const eleventyRun = await eleventy(scratch, corpus, files);

  log(`${corpus}: preparing ${renditions.length} references`);
  await pool.prepare(renditions);
  const scoreAll = async (jpegs) => pool.score(renditions.map((r) => ({ rendition: r, distorted: jpegs.get(r.id) })));
  log(`${corpus}: scoring fixed`);
  const fixedJpegs = filesOf(fixed, corpus);
  const fixedScores = await scoreAll(fixedJpegs);
  log(`${corpus}: scoring auto`);
  const autoJpegs = filesOf(auto, corpus);
  const autoScores = await scoreAll(autoJpegs);
  log(`${corpus}: scoring auto with mozjpeg`);
  const autoMozJpegs = filesOf(autoMoz, corpus);
  const autoMozScores = await scoreAll(autoMozJpegs);
  log(`${corpus}: scoring auto, scored whole (with and without mozjpeg, and with table ${TABLE})`);
  const autoWholeJpegs = filesOf(autoWhole, corpus);
  const autoWholeScores = await scoreAll(autoWholeJpegs);
  const autoWholeMozJpegs = filesOf(autoWholeMoz, corpus);
  const autoWholeMozScores = await scoreAll(autoWholeMozJpegs);
  const autoWholeMozTableJpegs = filesOf(autoWholeMozTable, corpus);
  const autoWholeMozTableScores = await scoreAll(autoWholeMozTableJpegs);
  const uniform = await uniformSearch(scratch, corpus, files, renditions, pool, {
    quality: 80,
    run: fixed,
    scores: fixedScores,
    jpegs: fixedJpegs,
  });
  log(`${corpus}: uniform with quantisation table ${TABLE}, from quality 80`);
  const table = { table: TABLE };
  const start = await renderAt(scratch, corpus, files, 80, table);
  const uniformTable = await uniformSearch(
    scratch,
    corpus,
    files,
    renditions,
    pool,
    { quality: 80, ...start, scores: await scoreAll(start.jpegs) },
    table,
  );
  log(`${corpus}: the lowest quality per rendition by the full-image score, from the choice of auto, whole`);
  const qualitiesOf = (run) =>
    new Map(
      run.results.flatMap((result) =>
        RENDITION_KEYS.map((key) => [idOf(corpus, result.source, key), result.measured[key].quality]),
      ),
    );
  const bound = await perRenditionBound(
    scratch,
    corpus,
    files,
    renditions,
    pool,
    [...uniform.levels.values()],
    qualitiesOf(autoWhole),
  );
  log(`${corpus}: the same with mozjpeg, from the choice of auto, whole, mozjpeg`);
  const mozBound = await perRenditionBound(scratch, corpus, files, renditions, pool, [], qualitiesOf(autoWholeMoz), {
    mozjpeg: true,
  });
  await pool.drop();
  log(`${corpus}: scoring eleventy-img`);
  const eleventyScores = new Map();
  const full = await pool.full(eleventyRun.renditions.map((r) => ({ reference: r.reference, distorted: r.file })));
  for (const [i, r] of eleventyRun.renditions.entries()) eleventyScores.set(r.id, full[i]);

  const measured = new Map();
  for (const result of auto.results) {
    for (const key of RENDITION_KEYS) measured.set(idOf(corpus, result.source, key), result.measured[key]);
  }
  const span = (chosen) => `${Math.min(...chosen)}-${Math.max(...chosen)}, median ${median(chosen)}`;
  /** A bound as a contender: not a render, so not timed. */
  const boundContender = (label, { qualities, jpegs, scores }) => ({
    label,
    quality: span([...qualities.values()]),
    qualities,
    run: { seconds: Number.NaN },
    jpegs,
    scores,
  });
  /** A render with --quality auto as a contender: the qualities it chose, by id. */
  const autoContender = (label, run, jpegs, scores) => {
    const chosen = qualitiesOf(run);
    return { label, quality: span([...chosen.values()]), qualities: chosen, run, jpegs, scores };
  };
  /** A uniform search's choice as a contender. */
  const uniformContender = (label, { reached, quality, tried, run, jpegs, scores }) => ({
    label,
    quality: reached ? `${quality}` : `none up to ${HIGHEST}`,
    qualities: new Map(renditions.map((r) => [r.id, quality])),
    note: tried.join(', '),
    run,
    jpegs,
    scores,
  });
  const contenders = [
    { label: 'fixed', quality: '80', run: fixed, jpegs: fixedJpegs, scores: fixedScores },
    autoContender('auto', auto, autoJpegs, autoScores),
    autoContender('auto, mozjpeg', autoMoz, autoMozJpegs, autoMozScores),
    autoContender('auto, whole', autoWhole, autoWholeJpegs, autoWholeScores),
    autoContender('auto, whole, mozjpeg', autoWholeMoz, autoWholeMozJpegs, autoWholeMozScores),
    autoContender(
      `auto, whole, mozjpeg, table ${TABLE}`,
      autoWholeMozTable,
      autoWholeMozTableJpegs,
      autoWholeMozTableScores,
    ),
    uniformContender('uniform', uniform),
    uniformContender(`uniform, table ${TABLE}`, uniformTable),
    boundContender('lowest per rendition', bound),
    boundContender('lowest per rendition, mozjpeg', mozBound),
    {
      label: 'eleventy-img',
      quality: '80 (sharp 0.33)',
      run: { seconds: eleventyRun.seconds },
      jpegs: new Map(eleventyRun.renditions.map((r) => [r.id, r.file])),
      scores: eleventyScores,
    },
  ].map((c) => ({ ...c, bytes: bytesOf([...c.jpegs.values()]), seconds: c.run.seconds }));
  return { corpus, files, renditions, contenders, measured };
}

/** The contender of a corpus's results by its label. */
const contender = ({ contenders }, label) => contenders.find((c) => c.label === label);

function printScores(results) {
  console.log(
    `\n## --quality auto: ${results
      .map((r) => `${r.corpus} ${r.files.map((f) => path.basename(f)).join(', ')}`)
      .join('; ')}\n`,
  );
  console.log(
    `Every rendition as JPEG. MB: the five renditions of every original; seconds: the render (both cores; ` +
      `eleventy-img in its own process); SSIMULACRA2 of each rendition, whole, against its own pixels before ` +
      `encoding; under ${TARGET}: renditions scoring under the target (${TARGET}). Uniform: the lowest ` +
      `--jpeg-quality at which every rendition of the corpus reaches ${TARGET} (the goal's baseline); with table ` +
      `${TABLE}, the same with --jpeg-quant-table ${TABLE}. Lowest per rendition: each rendition at the lowest ` +
      `--jpeg-quality at which it reaches ${TARGET} by itself, stepped to from the choice of "auto, whole": about ` +
      'the most a choice of quality per rendition can save with this encoder (not timed); with mozjpeg, the same ' +
      'with mozjpeg. Auto, whole: --no-quality-sample, every rendition scored whole.\n',
  );
  console.log(
    `| corpus | contender | quality | MB | vs uniform | seconds | SSIMULACRA2 min | median | under ${TARGET} |`,
  );
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|');
  for (const { corpus, files, contenders } of results) {
    const uniform = contenders.find((c) => c.label === 'uniform');
    for (const [i, c] of contenders.entries()) {
      const scores = [...c.scores.values()];
      console.log(
        `| ${i === 0 ? `${corpus} (${files.length})` : ''} | ${c.label} | ${c.quality} | ${fmt(c.bytes / 1e6)} | ` +
          `${fmt(c.bytes / uniform.bytes)}x | ${Number.isNaN(c.seconds) ? '-' : fmt(c.seconds)} | ` +
          `${fmt(Math.min(...scores))} | ` +
          `${fmt(median(scores))} | ${scores.filter((s) => s < TARGET).length} of ${scores.length} |`,
      );
    }
  }
  const tried = (label) => results.map((r) => `${r.corpus}: ${contender(r, label).note}`).join('; ');
  console.log(
    `\nUniform: the qualities tried, ${tried('uniform')}; with table ${TABLE}, ` +
      `${tried(`uniform, table ${TABLE}`)}.`,
  );

  console.log(
    `\nAuto against the goals: its bytes at most 0.75x uniform's, every rendition at least ${TARGET} by the ` +
      `full-image score. Auto records the score it searched with: of the whole rendition up to ${WHOLE_PIXELS >> 10} ` +
      `K pixels, of a sample of its 256 px tiles above (${SAMPLE_PIXELS >> 10} K pixels, ` +
      `${(2 * SAMPLE_PIXELS) >> 10} K over ${LARGE_PIXELS >> 20} MP; chosen by a JPEG probe, aimed ${TILE_MARGIN} ` +
      'points over); full - recorded ' +
      'compares the two on the renditions scored on tiles.\n',
  );
  console.log(
    `| corpus | auto / uniform bytes | goal <= 0.75x | auto under ${TARGET} | lowest | ` +
      `under ${TARGET}: scored whole | ` +
      'scored on tiles | full - recorded (tiles), min | max | auto quality per size, xs..xl (median) |',
  );
  console.log('|---|---:|---|---:|---:|---:|---:|---:|---:|---|');
  for (const { corpus, contenders, measured, renditions } of results) {
    const [auto, uniform] = [contender({ contenders }, 'auto'), contender({ contenders }, 'uniform')];
    const scores = [...auto.scores.values()];
    const ratio = auto.bytes / uniform.bytes;
    const under = (scored) => {
      const mine = renditions.filter((r) => measured.get(r.id).scored === scored);
      return `${mine.filter((r) => auto.scores.get(r.id) < TARGET).length} of ${mine.length}`;
    };
    const gaps = renditions
      .filter((r) => measured.get(r.id).scored === 'tiles')
      .map((r) => auto.scores.get(r.id) - measured.get(r.id).score);
    console.log(
      `| ${corpus} | ${fmt(ratio)}x | ${ratio <= 0.75 ? 'met' : 'not met'} | ` +
        `${scores.filter((s) => s < TARGET).length} of ${scores.length} | ${fmt(Math.min(...scores))} | ` +
        `${under('rendition')} | ${under('tiles')} | ` +
        `${gaps.length ? fmt(Math.min(...gaps)) : '-'} | ${gaps.length ? fmt(Math.max(...gaps)) : '-'} | ` +
        `${perSize(contender({ contenders }, 'auto'))} |`,
    );
  }

  console.log(
    `\nThe same goal for auto's options and the bounds: bytes against uniform's, renditions under ${TARGET} by the ` +
      'full-image score, and the quality chosen per size (median over the originals).\n',
  );
  const labels = [
    'auto',
    'auto, mozjpeg',
    'auto, whole',
    ...GOAL_OPTIONS,
    'lowest per rendition',
    'lowest per rendition, mozjpeg',
  ];
  console.log(
    `| corpus | contender | / uniform bytes | <= 0.75x | under ${TARGET} | quality per size, xs..xl (median) |`,
  );
  console.log('|---|---|---:|---|---:|---|');
  for (const { corpus, contenders } of results) {
    const uniform = contender({ contenders }, 'uniform');
    for (const [i, label] of labels.entries()) {
      const c = contender({ contenders }, label);
      const scores = [...c.scores.values()];
      const ratio = c.bytes / uniform.bytes;
      console.log(
        `| ${i === 0 ? corpus : ''} | ${label} | ${fmt(ratio)}x | ${ratio <= 0.75 ? 'met' : 'not met'} | ` +
          `${scores.filter((score) => score < TARGET).length} of ${scores.length} | ${perSize(c)} |`,
      );
    }
  }
}

/** A contender's quality per size, xs..xl, each the median over the originals. */
const perSize = ({ qualities }) =>
  RENDITION_KEYS.map((key) =>
    median([...qualities].filter(([id]) => id.endsWith(`/${key}`)).map(([, quality]) => quality)),
  ).join(', ');

/**
 * Butteraugli's 3-norm on the renditions of fixed, auto, uniform, and the goal's options (scored whole, mozjpeg,
 * with and without table 5, and uniform with table 5), against the same references.
 */
async function butteraugliTable(results) {
  const tool = findButteraugli();
  if (!tool.path) {
    console.log(`\n${tool.reason}.`);
    return;
  }
  const labels = ['fixed', 'auto', 'uniform', ...GOAL_OPTIONS];
  const pairs = results.flatMap(({ corpus, renditions, contenders }) =>
    renditions.flatMap((r) =>
      labels.map((label) => ({
        corpus,
        label,
        rendition: r,
        reference: r.reference,
        distorted: contenders.find((c) => c.label === label).jpegs.get(r.id),
      })),
    ),
  );
  // Time one xl pair alone; leave the xl renditions out when all of them would take too long.
  const xl = pairs.filter((p) => p.rendition.key === 'xl');
  const since = performance.now();
  const first = await butteraugli(tool.path, xl[0].reference, xl[0].distorted);
  const perPixel = seconds(since) / xl[0].rendition.pixels;
  const xlEstimate = (perPixel * xl.reduce((sum, p) => sum + p.rendition.pixels, 0)) / 2;
  const withXl = xlEstimate <= BUTTERAUGLI_XL_BUDGET_S;
  const chosen = pairs.filter((p) => withXl || p.rendition.key !== 'xl');
  log(`Butteraugli: ${chosen.length} pairs${withXl ? '' : ' (xs..lg)'} on two processes`);
  const limit = pLimit(2);
  const scores = await Promise.all(
    chosen.map((p) => (p === xl[0] ? first : limit(() => butteraugli(tool.path, p.reference, p.distorted)))),
  );
  const sizes = withXl ? 'xs..xl' : 'xs..lg';
  console.log(
    `\nButteraugli (${path.basename(tool.path)}, libjxl), 3-norm of each rendition against the same reference ` +
      `(lower is better; about 1 is a just-visible difference), renditions ${sizes}` +
      (withXl
        ? '.'
        : `: the xl renditions are left out, one (${fmt(xl[0].rendition.pixels / 1e6, 1)} MP) took ` +
          `${fmt(perPixel * xl[0].rendition.pixels, 1)} s and all ${xl.length} would take about ` +
          `${fmt(xlEstimate / 60, 1)} min on both cores.`) +
      '\n',
  );
  console.log('| corpus | contender | 3-norm median | 3-norm max | max distance, median |');
  console.log('|---|---|---:|---:|---:|');
  for (const { corpus } of results) {
    for (const label of labels) {
      const mine = chosen.map((p, i) => [p, scores[i]]).filter(([p]) => p.corpus === corpus && p.label === label);
      const norms = mine.map(([, s]) => s.pnorm);
      console.log(
        `| ${label === 'fixed' ? corpus : ''} | ${label} | ` +
          `${fmt(median(norms), 3)} | ${fmt(Math.max(...norms), 3)} | ` +
          `${fmt(median(mine.map(([, s]) => s.max)), 3)} |`,
      );
    }
  }
}

/**
 * The CLI's wall time, fixed against `--quality auto` (the time goal) and against auto scoring every rendition
 * whole (`--no-quality-sample`), alternating, on `files`.
 */
function cliTimes(root, scratch, files) {
  const bin = path.join(root, 'bin', 'content-api.js');
  const modes = {
    fixed: [],
    auto: ['--quality', 'auto'],
    'auto, whole': ['--quality', 'auto', '--no-quality-sample'],
  };
  const once = (mode) => {
    const out = mkdtempSync(path.join(scratch, 'cli-'));
    const args = [bin, 'render', ...files, '--out', out, '--format', 'jpeg', '-j', '2', '--force', ...modes[mode]];
    const since = performance.now();
    const done = spawnSync(process.execPath, args, { encoding: 'utf8' });
    const wall = seconds(since);
    if (done.status !== 0) throw new Error(`content-api render exited with ${done.status}: ${done.stderr}`);
    return wall;
  };
  const times = Object.fromEntries(Object.keys(modes).map((mode) => [mode, []]));
  for (let run = 0; run < CLI_RUNS; run++) {
    log(`CLI run ${run + 1} of ${CLI_RUNS}: ${Object.keys(modes).join(', then ')}`);
    for (const mode of Object.keys(modes)) times[mode].push(once(mode));
  }
  const ratio = (mode) => median(times[mode]) / median(times.fixed);
  console.log(
    `\nThe CLI, \`content-api render <${files.length} originals> --out <dir> --format jpeg -j 2 --force\`, ` +
      `with \`--quality auto\` and with \`--quality auto --no-quality-sample\`, ${CLI_RUNS} runs each alternating, ` +
      "wall seconds (the goal is auto's):\n",
  );
  console.log(
    '| originals | fixed runs | auto runs | auto, whole runs | fixed median | auto median | auto / fixed | ' +
      'goal <= 2.0x | auto, whole median | auto, whole / fixed |',
  );
  console.log('|---|---|---|---|---:|---:|---:|---|---:|---:|');
  const runs = (mode) => times[mode].map((t) => fmt(t)).join(', ');
  console.log(
    `| ${files.map((f) => path.basename(f)).join(', ')} | ${runs('fixed')} | ${runs('auto')} | ` +
      `${runs('auto, whole')} | ${fmt(median(times.fixed))} | ${fmt(median(times.auto))} | ${fmt(ratio('auto'))}x | ` +
      `${ratio('auto') <= 2 ? 'met' : 'not met'} | ${fmt(median(times['auto, whole']))} | ` +
      `${fmt(ratio('auto, whole'))}x |`,
  );
}

/** The whole part: `corpus` is bench/corpus.js `buildCorpus`'s folders. */
export async function autoQualityBench(root, scratchRoot, corpus, { corpora = ['mp24', 'artwork', 'mixed'] } = {}) {
  started = performance.now();
  const scratch = mkdtempSync(path.join(scratchRoot, 'quality-'));
  const sets = {
    mp24: [path.join(corpus.mp24, 'mosaic-24mp-a.jpg'), path.join(corpus.mp24, 'mosaic-24mp-b.jpg')],
    artwork: [path.join(corpus.artwork, 'elephants-1.jpg')],
    mixed: ['kleiber.png', 'seeding.jpg', 'mosaic-b.webp'].map((name) => path.join(corpus.mixed, name)),
  };
  const uptimeLoad = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(
    `\nquality: SSIMULACRA2 by ${metric.prepareSsimulacra2 ? 'prepareSsimulacra2(reference).score' : 'ssimulacra2'} ` +
      `on 2 worker threads; target ${TARGET}; load average ${uptimeLoad} at the start`,
  );
  const pool = scorerPool(2);
  const results = [];
  try {
    for (const name of corpora) results.push(await corpusBench(scratch, name, sets[name], pool));
  } finally {
    await pool.close();
  }
  printScores(results);
  await butteraugliTable(results);
  cliTimes(root, scratch, sets.mp24);
  console.log(`\nquality: the whole part took ${fmt(seconds(started) / 60, 1)} min`);
}

if (isMainThread && process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'eleventy') {
  await eleventyChild(process.argv[3]);
}
