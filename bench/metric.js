/**
 * The SSIMULACRA2 benchmark: milliseconds per megapixel of `ssimulacra2` (dist/quality) on real
 * photographs, a 24 MP pair and a 2.4 MP pair, each a photograph against its JPEG at quality 70.
 * Photographs come from the bench corpus (bench/corpus.js) when it has been built, otherwise from
 * samples/originals (scaled up to 24 MP: the metric's work does not depend on the pixels' content).
 * Decoding and encoding are done beforehand and not timed; the metric runs on one core (it is
 * synchronous), timed by wall clock and by CPU time, best of `runs`.
 *
 * Each pair is timed three times: `ssimulacra2(reference, distorted)` (plain), and `score(distorted)`
 * of a reference prepared (what each further distorted image of a search costs) in TypeScript and
 * in WebAssembly (`prepareWith`; the second where `wasmEngine()` runs), each preparation timed on
 * its own; every score must equal the plain one to the bit.
 *
 * Then a search's references (`keptMemories`): 24 of 512x512, each prepared, scored and released, in a
 * new WebAssembly memory each and in the memories the ones before released (WasmMemories), alternating.
 *
 * `node bench/metric.js` after `npm run build`, or `metricBench(root, { runs })` from bench/run.js.
 * `METRIC_BASELINE=<path of another build's quality/ssimulacra2.js>` times that build's plain
 * `ssimulacra2` too, in the same run (a before and after: build the other commit into a folder of
 * its own); its score must be equal as well.
 */
import { existsSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { WasmMemories, wasmEngine } from '../dist/quality/prepared-wasm.js';
import { prepareWith, ssimulacra2 } from '../dist/quality/ssimulacra2.js';

const raw = (image) => image.toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });

/** A { name, reference, distorted } pair of raw pixels: `width` x `height` of `file`, and its JPEG q70. */
async function pair(name, file, width, height) {
  const { width: w, height: h } = await sharp(file).metadata();
  // A native crop when the photograph is large enough, else the photograph scaled to cover the size.
  const image =
    w >= width && h >= height
      ? sharp(file).extract({ left: (w - width) >> 1, top: (h - height) >> 1, width, height })
      : sharp(file).resize(width, height, { fit: 'cover' });
  const reference = await raw(image);
  const jpeg = await sharp(reference.data, { raw: reference.info }).jpeg({ quality: 70 }).toBuffer();
  return { name, reference, distorted: await raw(sharp(jpeg)) };
}

/** The photographs to use: the corpus's 24 MP mosaics if built, else the project's sample originals. */
function photographs(root) {
  const corpus = path.join(root, '.bench', 'corpus-v4', '24mp');
  if (existsSync(corpus)) {
    const [first] = readdirSync(corpus).sort();
    if (first) return { source: `corpus ${first}`, large: path.join(corpus, first), small: path.join(corpus, first) };
  }
  const originals = path.join(root, 'samples', 'originals');
  return {
    source: 'samples/originals ladybird.jpg (scaled up to 24 MP), storm.jpg',
    large: path.join(originals, 'ladybird.jpg'),
    small: path.join(originals, 'landscapes', 'storm.jpg'),
  };
}

function time(op) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = op();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { result, wall, cpu: (used.user + used.system) / 1000 };
}

/** The best (least) wall and CPU times of `runs` calls of `op`, and its last result. */
function best(runs, op) {
  let result = { wall: Infinity, cpu: Infinity, result: undefined };
  for (let run = 0; run < runs; run++) {
    const t = time(op);
    result = { wall: Math.min(result.wall, t.wall), cpu: Math.min(result.cpu, t.cpu), result: t.result };
  }
  return result;
}

const perMp = (t, megapixels) =>
  `${(t.wall / megapixels).toFixed(0)} ms/MP wall, ${(t.cpu / megapixels).toFixed(0)} CPU`;

/**
 * Prints and returns [{ name, megapixels, score, msPerMp, cpuMsPerMp, prepared: { typescript, wasm? },
 * baselineMsPerMp? }] for the two pairs, each engine's { msPerMp, cpuMsPerMp, prepareMs, bytes }.
 */
export async function metricBench(root, { runs = 3, baseline = process.env.METRIC_BASELINE } = {}) {
  const photos = photographs(root);
  console.log(`metric: SSIMULACRA2 on one core (${cpus()[0]?.model.trim()}); photographs: ${photos.source}`);
  const before = baseline ? (await import(pathToFileURL(path.resolve(baseline)).href)).ssimulacra2 : undefined;
  const pairs = [await pair('24 MP', photos.large, 6000, 4000), await pair('2.4 MP', photos.small, 1920, 1250)];
  // Warm the JIT on a small pair so the first timed run is not the interpreter's.
  const warm = await pair('warm-up', photos.small, 256, 256);
  const engines = wasmEngine() ? ['typescript', 'wasm'] : ['typescript'];
  if (engines.length === 1) console.log('metric: no WebAssembly engine here (relaxed SIMD with FMA): TypeScript only');
  for (let i = 0; i < 3; i++) {
    ssimulacra2(warm.reference, warm.distorted);
    for (const engine of engines) prepareWith(warm.reference, engine).score(warm.distorted);
    before?.(warm.reference, warm.distorted);
  }
  const rows = [];
  for (const { name, reference, distorted } of pairs) {
    const megapixels = (reference.info.width * reference.info.height) / 1e6;
    const plain = best(runs, () => ssimulacra2(reference, distorted));
    const prepared = {};
    for (const engine of engines) {
      const preparation = best(runs, () => prepareWith(reference, engine));
      const scored = best(runs, () => preparation.result.score(distorted));
      if (scored.result !== plain.result) {
        throw new Error(`the ${engine} prepared score ${scored.result} differs from the plain one, ${plain.result}`);
      }
      prepared[engine] = { ...scored, prepareMs: preparation.wall, bytes: preparation.result.bytes };
    }
    const old = before ? best(runs, () => before(reference, distorted)) : undefined;
    if (old && old.result !== plain.result) {
      throw new Error(`the baseline's score ${old.result} differs from this build's, ${plain.result}`);
    }
    const row = {
      name,
      megapixels,
      score: plain.result,
      msPerMp: plain.wall / megapixels,
      cpuMsPerMp: plain.cpu / megapixels,
      prepared: Object.fromEntries(
        Object.entries(prepared).map(([engine, p]) => [
          engine,
          { msPerMp: p.wall / megapixels, cpuMsPerMp: p.cpu / megapixels, prepareMs: p.prepareMs, bytes: p.bytes },
        ]),
      ),
      ...(old ? { baselineMsPerMp: old.wall / megapixels, baselineCpuMsPerMp: old.cpu / megapixels } : {}),
    };
    rows.push(row);
    const label = { typescript: 'TypeScript', wasm: 'WebAssembly' };
    console.log(
      `metric: ${name} (${reference.info.width}x${reference.info.height}, JPEG q70, score ${row.score.toFixed(2)}), ` +
        `best of ${runs}:\n` +
        (old ? `  baseline plain:  ${perMp(old, megapixels)} (${(old.wall / 1000).toFixed(2)} s)\n` : '') +
        `  plain:           ${perMp(plain, megapixels)} (${(plain.wall / 1000).toFixed(2)} s)\n` +
        Object.entries(prepared)
          .map(
            ([engine, p]) =>
              `  prepared score, ${label[engine]}: ${perMp(p, megapixels)} (${(p.wall / 1000).toFixed(2)} s) ` +
              `per distorted image; the reference prepared once in ${(p.prepareMs / 1000).toFixed(2)} s, ` +
              `holding ${(p.bytes / 2 ** 20).toFixed(0)} MiB (${(p.bytes / (megapixels * 1e6)).toFixed(1)} B/pixel)`,
          )
          .join('\n'),
    );
  }
  if (engines.includes('wasm')) rows.push(await keptMemories(photos.small, runs));
  return rows;
}

/** A search's references: as many as, and the size of, the samples of a batch of originals. */
const SEARCHES = 24;
/** The scores of a search: about what `--quality auto` takes for a rendition. */
const TRIALS = 5;

/**
 * What a score pool thread's kept memories (WasmMemories) save: SEARCHES references of a search's
 * sample size (512x512, `--quality auto`'s), each prepared, scored TRIALS times and released, in a new
 * memory each (as before) and in the memories the references before it released, alternating, best
 * of `runs`; user and system CPU apart (a new memory's pages cost the kernel a fault each).
 */
async function keptMemories(file, runs) {
  const samples = [];
  for (let i = 0; i < SEARCHES; i++) {
    const { reference, distorted } = await pair(`sample ${i}`, file, 512 - (i % 3) * 16, 512);
    samples.push({ reference, distorted });
  }
  const search = (memories) => {
    for (const { reference, distorted } of samples) {
      const prepared = prepareWith(reference, 'wasm', memories);
      for (let trial = 0; trial < TRIALS; trial++) prepared.score(distorted);
      prepared.release();
    }
  };
  const cpu = (op) => {
    const before = process.cpuUsage();
    op();
    const used = process.cpuUsage(before);
    return { user: used.user / 1000, system: used.system / 1000 };
  };
  const times = { fresh: [], kept: [] };
  for (let run = 0; run < runs; run++) {
    times.fresh.push(cpu(() => search(undefined)));
    times.kept.push(cpu(() => search(new WasmMemories())));
  }
  const total = ({ user, system }) => user + system;
  const least = (list) => list.reduce((a, b) => (total(a) <= total(b) ? a : b));
  const [fresh, kept] = [least(times.fresh), least(times.kept)];
  const show = ({ user, system }) =>
    `${(total({ user, system }) / SEARCHES).toFixed(1)} ms CPU a reference ` +
    `(user ${user.toFixed(0)} ms, system ${system.toFixed(0)} ms)`;
  console.log(
    `metric: ${SEARCHES} search references of 512x512 in WebAssembly, each prepared, scored ${TRIALS} times and ` +
      `released, best of ${runs} alternating:\n` +
      `  a new memory each:       ${show(fresh)}\n` +
      `  the memories kept:       ${show(kept)}: ${(total(fresh) / total(kept)).toFixed(2)}x`,
  );
  return { name: 'kept memories', fresh, kept };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await metricBench(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), {
    runs: Number(process.env.BENCH_RUNS ?? 3),
  });
}
