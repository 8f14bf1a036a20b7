/**
 * The score pool: SSIMULACRA2 in worker threads (the compiled worker, which `npm test` builds before
 * the tests run), or in the calling thread when asked (`threads: 0`, as the TypeScript sources,
 * which have no compiled worker, are tested); a compiled worker missing is an error.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { rawPixels } from '../../src/pixels/read.js';
import { ScorePool } from '../../src/quality/score-pool.js';
import { ssimulacra2 } from '../../src/quality/ssimulacra2.js';
import { execFile, spawn } from '../fixtures/launcher.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/quality');
const WORKER = new URL('../../dist/quality/score-worker.js', import.meta.url);
const fixture = (name: string) => rawPixels(path.join(FIXTURES, name));

describe('ScorePool', () => {
  const pools: ScorePool[] = [];
  const pool = (options: ConstructorParameters<typeof ScorePool>[0]) => {
    const made = new ScorePool(options);
    pools.push(made);
    return made;
  };
  afterAll(() => Promise.all(pools.map((made) => made.close())));

  it.each([
    ['worker threads', 2],
    ['the calling thread (threads: 0)', 0],
  ])('in %s, scores are ssimulacra2 to the bit, for references scored at once', async (_, threads) => {
    const reference = await fixture('ladybird-320x240.png');
    const distorted = await Promise.all(['q10.jpg', 'q30.jpg', 'q70.jpg'].map((q) => fixture(`ladybird-320x240-${q}`)));
    const scores = pool({ threads, worker: WORKER });
    const [a, b] = await Promise.all([scores.prepare(reference), scores.prepare(distorted[2]!)]);
    const got = await Promise.all([...distorted.map((d) => a.score(d)), b.score(distorted[0]!)]);
    expect(got).toEqual([
      ...distorted.map((d) => ssimulacra2(reference, d)),
      ssimulacra2(distorted[2]!, distorted[0]!),
    ]);
    a.release();
    b.release();
  });

  it('a compiled worker that is not there is an error naming it, not a quiet fall back to one core', () => {
    const missing = new URL('./no-such-worker.js', import.meta.url);
    expect(() => new ScorePool({ worker: missing })).toThrow(
      `the SSIMULACRA2 worker ${fileURLToPath(missing)} is not there: build the package (npm run build), ` +
        'or score in the calling thread (a ScorePool of threads: 0)',
    );
    expect(() => new ScorePool({ threads: 0, worker: missing })).not.toThrow();
    expect(() => new ScorePool({ threads: -1 })).toThrow(InvalidArgumentError);
    expect(() => new ScorePool({ threads: 1.5 })).toThrow('0 or more, but got 1.5');
  });

  it("without relaxed SIMD's flag on Node 20, the metric runs in TypeScript and a batch is told so once", async () => {
    // A program that imports the library and sets no flag; then one that sets them as the CLI does.
    const dist = (file: string) => JSON.stringify(fileURLToPath(new URL(`../../dist/${file}`, import.meta.url)));
    const script = (setFlags: boolean) => `
      ${setFlags ? `(await import(${dist('cli/runtime.js')})).setRuntimeFlags();` : ''}
      const { wasmCompiles } = await import(${dist('quality/prepared-wasm.js')});
      const { ScorePool } = await import(${dist('quality/score-pool.js')});
      const pixels = { data: Buffer.alloc(64 * 64 * 3, 128), info: { width: 64, height: 64, channels: 3 } };
      const pool = new ScorePool({ threads: 0 });
      await pool.prepare(pixels);
      await pool.prepare(pixels);
      console.log(JSON.stringify({ wasm: wasmCompiles(), notices: [pool.takeNotices(), pool.takeNotices()] }));`;
    const run = async (setFlags: boolean): Promise<{ wasm: boolean; notices: string[][] }> =>
      JSON.parse((await execFile(process.execPath, ['--input-type=module', '-e', script(setFlags)])).stdout);
    const [bare, flagged] = await Promise.all([run(false), run(true)]);
    const notice =
      'SSIMULACRA2 scores in TypeScript, about 3.5 times slower than its WebAssembly: this Node needs ' +
      '--experimental-wasm-relaxed-simd for it (node --experimental-wasm-relaxed-simd, as the content-api command sets)';
    // Node 20 has relaxed SIMD behind the flag; later versions have it on, and nothing is said.
    const node20 = process.versions.node.startsWith('20.');
    expect(bare).toEqual({ wasm: !node20, notices: [node20 ? [notice] : [], []] });
    expect(flagged).toEqual({ wasm: true, notices: [[], []] });
  });

  it("a batch closes the pool it made, and leaves the caller's open", async () => {
    const dist = (file: string) => JSON.stringify(fileURLToPath(new URL(`../../dist/${file}`, import.meta.url)));
    const ladybird = JSON.stringify(path.join(FIXTURES, 'ladybird-320x240.png'));
    const script = `
      const { mkdtemp, rm } = await import('node:fs/promises');
      const { join } = await import('node:path');
      const { tmpdir } = await import('node:os');
      const { ScorePool } = await import(${dist('quality/score-pool.js')});
      const { renderOriginals } = await import(${dist('renditions/render.js')});
      let closed = 0;
      const close = ScorePool.prototype.close;
      ScorePool.prototype.close = function () { closed++; return close.call(this); };
      const render = async (scorePool) => {
        const outDir = await mkdtemp(join(tmpdir(), 'pool-'));
        const report = await renderOriginals([${ladybird}], { outDir, quality: { mode: 'auto' }, scorePool });
        await rm(outDir, { recursive: true });
        return report.counts.rendered;
      };
      const own = await render(undefined);
      const ownClosed = closed;
      const mine = new ScorePool({ threads: 1 });
      const given = await render(mine);
      const givenClosed = closed - ownClosed;
      // The caller's pool still scores after the batch.
      const grey = { data: Buffer.alloc(8 * 8 * 3, 128), info: { width: 8, height: 8, channels: 3 } };
      const open = await (await mine.prepare(grey)).score(grey);
      console.log(JSON.stringify({ own, ownClosed, given, givenClosed, open }));
      await mine.close();`;
    const { stdout } = await execFile(process.execPath, ['--input-type=module', '-e', script]);
    expect(JSON.parse(stdout)).toEqual({ own: 1, ownClosed: 1, given: 1, givenClosed: 0, open: 100 });
  });

  it("a bad image is the library's own error, and the pool goes on", async () => {
    const scores = pool({ threads: 1, worker: WORKER });
    const tiny = { data: Buffer.alloc(4 * 4 * 3), info: { width: 4, height: 4, channels: 3 } };
    await expect(scores.prepare(tiny)).rejects.toThrow(InvalidArgumentError);
    await expect(scores.prepare(tiny)).rejects.toThrow('at least 8x8');
    const reference = await fixture('ladybird-320x240.png');
    const prepared = await scores.prepare(reference);
    await expect(prepared.score(tiny)).rejects.toThrow('the distorted image 4x4');
    expect(await prepared.score(reference)).toBe(100);
  });

  it('idle threads, started ahead or after a score, do not keep a process alive', async () => {
    // A script that starts the compiled pool's threads ahead (warm), scores through one and never
    // closes the pool: it must end by itself.
    const pool = fileURLToPath(new URL('../../dist/quality/score-pool.js', import.meta.url));
    const script = `
      const { ScorePool } = await import(${JSON.stringify(pool)});
      const pixels = { data: Buffer.alloc(64 * 64 * 3, 128), info: { width: 64, height: 64, channels: 3 } };
      const pool = new ScorePool({ threads: 2 });
      pool.warm();
      const reference = await pool.prepare(pixels);
      console.log(await reference.score(pixels));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    const started = Date.now();
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: '100' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
