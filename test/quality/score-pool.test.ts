/**
 * The score pool: SSIMULACRA2 in worker threads (the compiled worker, which `npm test` builds before
 * the tests run), and in the calling thread when there is no compiled worker (the TypeScript sources).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { rawPixels } from '../../src/quality/read.js';
import { ScorePool } from '../../src/quality/score-pool.js';
import { ssimulacra2 } from '../../src/quality/ssimulacra2.js';

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
    ['worker threads', WORKER],
    ['the calling thread (no compiled worker)', new URL('./no-such-worker.js', import.meta.url)],
  ])('in %s, scores are ssimulacra2 to the bit, for references scored at once', async (_, worker) => {
    const reference = await fixture('ladybird-320x240.png');
    const distorted = await Promise.all(['q10.jpg', 'q30.jpg', 'q70.jpg'].map((q) => fixture(`ladybird-320x240-${q}`)));
    const scores = pool({ threads: 2, worker });
    const [a, b] = await Promise.all([scores.prepare(reference), scores.prepare(distorted[2]!)]);
    const got = await Promise.all([...distorted.map((d) => a.score(d)), b.score(distorted[0]!)]);
    expect(got).toEqual([
      ...distorted.map((d) => ssimulacra2(reference, d)),
      ssimulacra2(distorted[2]!, distorted[0]!),
    ]);
    a.release();
    b.release();
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
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk;
    });
    const started = Date.now();
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: '100' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
