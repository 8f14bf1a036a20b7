/**
 * The score pool under what a user's runtime imposes on its worker threads (#35 items 13 and 14),
 * in the built code: Node options that Node refuses in a worker's `execArgv` (`node --jitless`,
 * which also takes WebAssembly away, and `--max-old-space-size`), and an address-space limit
 * (`ulimit -v`), under which a worker's V8 code range at V8's default size (512 MB on Node 20 x64)
 * cannot be reserved: a fatal OOM of the whole process, not an error. `render --quality auto` must
 * measure its original as it does without them, or say once why it scores on one core.
 */
import { once } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, runWithin } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { execFile, spawn } from '../fixtures/launcher.js';
import { readEntries } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';

/** A photograph of `width` x `height` in a folder of its own, and an output folder beside it. */
async function original(width: number, height: number): Promise<{ input: string; out: string }> {
  const dir = await tempDir();
  const input = await writeImage(dir, 'in/meadow.jpg', photo(width, height).jpeg({ quality: 95 }));
  return { input, out: path.join(dir, 'out') };
}

/** `render <input> --out <out> --quality auto`, as `node <options> bin/content-api.js` after the bash line `shell`. */
function renderAuto(input: string, out: string, { shell = 'true', options = [] as string[] } = {}): Promise<CliResult> {
  // run-cli's wrapper runs `bash -c <script> node bin/content-api.js <args>`: "$0" is node.
  const script = `${shell} && exec "$0" ${options.join(' ')} "$@"`;
  return runWithin(['render', input, '--out', out, '--quality', 'auto'], 20_000, { wrapper: ['bash', '-c', script] });
}

/** The run rendered its one original, every rendition measured up to the target, and failed nothing. */
async function expectMeasured(result: CliResult, out: string) {
  expect({ code: result.code, signal: result.signal }, result.stderr).toEqual({ code: 0, signal: null });
  expect(result.stderr).toMatch(/^1 rendered, 0 up to date in /m);
  expect(result.stderr).not.toMatch(/cannot write renditions|ERR_WORKER|Fatal process OOM/);
  const { 'meadow.jpg': entry } = await readEntries(out);
  for (const rendition of Object.values(entry!.renditions)) {
    expect(rendition.score).toBeGreaterThanOrEqual(80);
    expect(rendition.quality).toBeGreaterThan(0);
  }
}

const lines = (text: string, pattern: RegExp) => text.split('\n').filter((line) => pattern.test(line));

describe('render --quality auto under the runtime', () => {
  it('node --jitless --max-old-space-size: the threads start and score, and the slowness is said once', async () => {
    // Small: without a JIT the metric takes over a minute of CPU a megapixel on a busy machine.
    const { input, out } = await original(96, 64);
    const result = await renderAuto(input, out, {
      options: ['--jitless', '--max-old-space-size=512', '--enable-source-maps'],
    });
    await expectMeasured(result, out);
    expect(lines(result.stderr, /SSIMULACRA2/)).toEqual([
      expect.stringMatching(
        /^warning: node --jitless turns off the JIT and WebAssembly: SSIMULACRA2 scores in interpreted TypeScript/,
      ),
    ]);
  });

  it.each([2_000_000, 2_500_000])(
    'ulimit -v %i (KiB): the threads start, with a small code range each, and score',
    async (limit) => {
      const { input, out } = await original(320, 240);
      await expectMeasured(await renderAuto(input, out, { shell: `ulimit -v ${limit}` }), out);
    },
  );
});

describe('the score pool under an address-space limit', () => {
  it('too little left for a worker thread: scores in the calling thread, said once', async () => {
    // A process that loads the built pool, then waits while its address space is limited to what it
    // maps now and 256 MB more (prlimit, util-linux), then scores: a worker must not start there.
    const pool = path.resolve(import.meta.dirname, '../../dist/quality/score-pool.js');
    // Flags set as the CLI sets them, so that the only notice is the one about threads.
    const runtime = path.resolve(import.meta.dirname, '../../dist/cli/runtime.js');
    const script = `
      import { readFileSync } from 'node:fs';
      (await import(${JSON.stringify(runtime)})).setRuntimeFlags();
      const { ScorePool } = await import(${JSON.stringify(pool)});
      console.log(/VmSize:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
      process.stdin.once('data', async () => {
        const pixels = { data: Buffer.alloc(64 * 64 * 3, 128), info: { width: 64, height: 64, channels: 3 } };
        const pool = new ScorePool({ threads: 2 });
        pool.warm();
        const scores = await Promise.all([pool.prepare(pixels), pool.prepare(pixels)]);
        console.log(await scores[0].score(pixels), await scores[1].score(pixels));
        console.log(JSON.stringify([pool.takeNotices(), pool.takeNotices()]));
        process.stdin.destroy();
      });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const closed = once(child, 'close');
    while (!stdout.includes('\n')) await once(child.stdout!, 'data');
    const limit = Number(stdout.trim()) * 1024 + 256 * 2 ** 20;
    await execFile('prlimit', [`--pid=${child.pid}`, `--as=${limit}`]);
    child.stdin!.write('go\n');
    const [code, signal] = await closed;
    const [, scores, notices] = stdout.trim().split('\n');
    expect({ code, signal, scores }, stderr).toEqual({ code: 0, signal: null, scores: '100 100' });
    // Said once: taken again, there is nothing more.
    const [first, again] = JSON.parse(notices!);
    expect(first).toEqual([
      expect.stringMatching(
        /^SSIMULACRA2 scores in the calling thread, on one core: the address-space limit \(ulimit -v\) leaves \d+ MB, too little for a worker thread/,
      ),
    ]);
    expect(again).toEqual([]);
  });
});
