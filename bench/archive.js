/**
 * The archive benchmark (issue #34): what each original costs beyond its pixels as an archive
 * grows. Small distinct JPEG originals (64x48, in folders of 1,000), so that what is measured is
 * the bookkeeping, the walks and the per-original work, not the encoders. At each size, through
 * the CLI as a user runs it: the first render, a no-op rerun, 10 originals added, 1 changed, and
 * the whole archive checked (`check --verify-files <folder>`); seconds, seconds per original
 * past start-up, peak RSS and the bookkeeping's bytes per original, side by side with content-api
 * before the issue (BASELINE_COMMIT, its one-file manifest) at the sizes it can run in reasonable
 * time.
 *
 * ARCHIVE_SIZES (default 1000,10000,100000) and ARCHIVE_BASELINE_SIZES (default 1000,10000)
 * choose the sizes; ARCHIVE_CHECK_MAX (default: none) the largest size whose archive is checked
 * whole (a check decodes every rendition: 13 ms an original here, 22 minutes at 100,000). The
 * corpora are made once, in .bench/archive/<size>/. Each row is printed as it ends.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { buildBaseline } from './baseline.js';

/** content-api as it was before the archive issue: one JSON manifest, stale files removed unasked. */
export const ARCHIVE_BASELINE_COMMIT = '6535698';

const sizesOf = (variable, fallback) =>
  (process.env[variable] ?? fallback)
    .split(',')
    .filter(Boolean)
    .map((size) => Number(size));

export async function archiveBench(root, scratch, { concurrency, runs }) {
  const sizes = sizesOf('ARCHIVE_SIZES', '1000,10000,100000');
  const baselineSizes = new Set(sizesOf('ARCHIVE_BASELINE_SIZES', '1000,10000'));
  const checkMax = Number(process.env.ARCHIVE_CHECK_MAX ?? Number.POSITIVE_INFINITY);
  const contenders = [['content-api', path.join(root, 'bin', 'content-api.js')]];
  if (baselineSizes.size > 0) {
    const before = buildBaseline(root, ARCHIVE_BASELINE_COMMIT);
    contenders.unshift([`before (${ARCHIVE_BASELINE_COMMIT})`, path.join(before, 'bin', 'content-api.js')]);
  }
  const bases = await baseImages();
  const rows = [];
  printHeader();
  for (const size of sizes) {
    const corpus = await buildArchive(path.join(root, '.bench', 'archive', String(size)), size, bases);
    for (const [name, bin] of contenders) {
      if (name !== 'content-api' && !baselineSizes.has(size)) continue;
      console.error(`bench: archive of ${size} originals, ${name}`);
      const check = size <= checkMax;
      const options = { concurrency, runs, check };
      const row = { size, name, ...(await archiveRuns(root, scratch, bin, corpus, size, bases, options)) };
      rows.push(row);
      printRow(row);
    }
  }
  printGoals(rows);
}

/**
 * Runs the five steps in a fresh output folder; the corpus is left as it was found. Start-up and the
 * no-op rerun, each a few seconds at most, are the best of `runs` (start-up of three at least).
 */
async function archiveRuns(root, scratch, bin, corpus, size, bases, { concurrency, runs, check: checked }) {
  const work = mkdtempSync(path.join(scratch, 'archive-'));
  const out = path.join(work, 'media');
  const extra = path.join(work, 'extra');
  mkdirSync(extra);
  const cli = (args) => runCli(root, bin, args, work);
  const render = () => cli(['render', corpus, extra, '--out', out, '-j', String(concurrency)]);
  const best = (times, run) => Array.from({ length: times }, run).reduce((a, b) => (b.seconds < a.seconds ? b : a));
  const startup = best(Math.max(3, runs), () => cli(['render', extra, '--out', path.join(work, 'empty')]));
  const first = render();
  const noop = best(runs, render);
  for (let i = 0; i < 10; i++) writeFileSync(path.join(extra, `added-${i}.jpg`), original(bases, size + i));
  const added = render();
  writeFileSync(path.join(extra, 'added-0.jpg'), original(bases, size + 100));
  const changed = render();
  const skipped = { seconds: Number.NaN, peakRssMb: Number.NaN, status: null };
  const check = checked ? cli(['check', '--verify-files', out]) : skipped;
  const bookkeeping = bookkeepingBytes(out);
  rmSync(work, { recursive: true, force: true });
  return { startup, first, noop, added, changed, check, bookkeeping };
}

/** One CLI run: wall seconds, peak RSS in MB, exit code. */
function runCli(root, bin, args, work) {
  const rssFile = path.join(work, 'peak-rss');
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', path.join(root, 'bench', 'peak-rss.js'), bin, ...args], {
    env: { ...process.env, BENCH_PEAK_RSS_FILE: rssFile, NO_COLOR: '1' },
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const seconds = (performance.now() - started) / 1000;
  const peakRssMb = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : Number.NaN;
  rmSync(rssFile, { force: true });
  const last = run.stderr.trim().split('\n').at(-1) ?? '';
  if (run.status !== 0 && args[0] === 'render') console.error(`bench: render exited ${run.status}: ${last}`);
  return { seconds, peakRssMb, status: run.status, last };
}

/** The manifest's bytes on disk (blocks) and in its files, whichever form it has. */
function bookkeepingBytes(out) {
  let disk = 0;
  let apparent = 0;
  const add = (file) => {
    const info = statSync(file);
    disk += info.blocks * 512;
    apparent += info.size;
  };
  const records = path.join(out, '.content-api-manifest');
  if (existsSync(records)) {
    for (const entry of readdirSync(records, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      if (entry.isFile() || entry.isDirectory()) add(file);
    }
  }
  if (existsSync(path.join(out, '.content-api-manifest.json'))) add(path.join(out, '.content-api-manifest.json'));
  return { disk, apparent };
}

/** Sixteen small pictures, each a disc of its own colour and place. */
async function baseImages() {
  const bases = [];
  for (let i = 0; i < 16; i++) {
    const svg = `<svg width="64" height="48"><rect width="64" height="48" fill="hsl(${i * 22},40%,70%)"/>
      <circle cx="${12 + i * 2.5}" cy="${14 + (i % 5) * 4}" r="${6 + (i % 7)}" fill="hsl(${(i * 47) % 360},60%,35%)"/></svg>`;
    bases.push(await sharp(Buffer.from(svg)).jpeg({ quality: 85 }).toBuffer());
  }
  return bases;
}

/** Original number `n`: one of the base pictures, with a comment (COM segment) that makes its bytes its own. */
function original(bases, n) {
  const base = bases[n % bases.length];
  const text = Buffer.from(`archive bench original ${n}`);
  const com = Buffer.from([0xff, 0xfe, (text.length + 2) >> 8, (text.length + 2) & 0xff]);
  return Buffer.concat([base.subarray(0, 2), com, text, base.subarray(2)]);
}

/** `size` originals in folders of 1,000 (`f000/art-0.jpg` ...), made once. */
async function buildArchive(dir, size, bases) {
  const done = path.join(dir, '.complete');
  if (existsSync(done)) return dir;
  console.error(`bench: making an archive of ${size} originals in ${dir}`);
  rmSync(dir, { recursive: true, force: true });
  for (let n = 0; n < size; n++) {
    const folder = path.join(dir, `f${String(Math.floor(n / 1000)).padStart(3, '0')}`);
    if (n % 1000 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(path.join(folder, `art-${n}.jpg`), original(bases, n));
  }
  // Settled: files changed within 2 s of a render are hashed again by the next (source-bytes.ts RACY_MS).
  const past = new Date(Date.now() - 60_000);
  execFileSync('find', [dir, '-type', 'f', '-exec', 'touch', '-d', past.toISOString(), '{}', '+']);
  writeFileSync(done, '');
  return dir;
}

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
/** Milliseconds per original past start-up (a render of an empty folder). */
const perOriginal = (run, row) => ((run.seconds - row.startup.seconds) / row.size) * 1000;
const steps = (row) => [row.first, row.noop, row.added, row.changed, row.check];

function printHeader() {
  console.log('\n## Archive: per-original cost as it grows (small JPEG originals, CLI, -j = cores)\n');
  console.log(
    '| originals | contender | first render s | ms/original | no-op rerun s | ms/original | +10 added s | ' +
      '1 changed s | check whole s | peak RSS MB | bookkeeping bytes/original (disk, files) |',
  );
  console.log('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
}

function printRow(row) {
  const peak = Math.max(
    ...steps(row)
      .map((run) => run.peakRssMb)
      .filter(Number.isFinite),
  );
  const check = row.check.status === 0 || row.check.status === 1 ? fmt(row.check.seconds) : 'n/a';
  console.log(
    `| ${row.size.toLocaleString('en')} | ${row.name} | ${fmt(row.first.seconds)} | ${fmt(perOriginal(row.first, row), 2)} | ` +
      `${fmt(row.noop.seconds)} | ${fmt(perOriginal(row.noop, row), 3)} | ${fmt(row.added.seconds)} | ` +
      `${fmt(row.changed.seconds)} | ${check} | ${fmt(peak, 0)} | ` +
      `${fmt(row.bookkeeping.disk / row.size, 0)}, ${fmt(row.bookkeeping.apparent / row.size, 0)} |`,
  );
}

function printGoals(rows) {
  const ours = rows.filter((row) => row.name === 'content-api');
  const smallest = ours[0];
  const largest = ours.at(-1);
  if (!smallest || !largest) return;
  const ratio = (step) => perOriginal(largest[step], largest) / perOriginal(smallest[step], smallest);
  const peak = Math.max(...ours.flatMap((row) => steps(row).map((run) => run.peakRssMb)).filter(Number.isFinite));
  console.log(`\nstart-up (a render of an empty folder): ${fmt(smallest.startup.seconds, 2)} s`);
  console.log(
    `goals at ${largest.size.toLocaleString('en')} against ${smallest.size.toLocaleString('en')}: ` +
      `first render per original ${fmt(ratio('first'), 2)}x (goal <= 1.2x), ` +
      `no-op per original ${fmt(ratio('noop'), 2)}x (goal <= 1.2x); ` +
      `no-op ${fmt(largest.noop.seconds)} s (goal < 10 s); ` +
      `10 added ${fmt(largest.added.seconds - largest.noop.seconds)} s over the no-op (goal <= 3 s); ` +
      `peak RSS ${fmt(peak, 0)} MB (goal < 300 MB)`,
  );
}
