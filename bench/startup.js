/**
 * What a start of the CLI costs (#36): the CPU (user + system, every thread) and the wall time of one
 * fresh process for small jobs, where loading the code is most of the work, now and at the commit
 * before the CommonJS packages were required (src/packages/require.ts), in alternating runs; the
 * median of `runs` each. A worker is timed from its start to its exit on SIGTERM once it is ready,
 * on a redis-server of its own (the tests' launcher), when the machine has one.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { startRedis } from '../test/fixtures/redis-server.js';
import { buildBaseline } from './baseline.js';

/** The commit before. */
const BEFORE = 'fe4d725';

/** Prints the process's CPU as it exits: every thread's user and system time (getrusage). */
const METER = `data:text/javascript,${encodeURIComponent(
  `process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    process.stderr.write('cpu-ms ' + (user + system) / 1000 + '\\n');
  });`,
)}`;

/**
 * Runs the CLI of `root` with `args`; when `ready` is given, sends SIGTERM once stderr matches it.
 * Resolves `{ cpu, wall }` in ms.
 */
function run(root, args, ready) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', METER, path.join(root, 'bin/content-api.js'), ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let stopping = false;
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      // Once: a second SIGTERM stops a worker at once.
      if (!stopping && ready?.test(stderr)) stopping = child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const cpu = /cpu-ms ([\d.]+)/.exec(stderr);
      if (!cpu || code !== 0) reject(new Error(`${root}: content-api ${args.join(' ')}: exit code ${code}\n${stderr}`));
      else resolve({ cpu: Number(cpu[1]), wall: performance.now() - started });
    });
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * This checkout's CLI where the baseline's is, in `.bench/`, its node_modules the same link to this
 * checkout's: Node resolves each module's real path, so both sides pay the same for the link.
 */
function besideBaseline(root) {
  const dir = path.join(root, '.bench', 'startup-now');
  rmSync(dir, { recursive: true, force: true });
  for (const part of ['bin', 'dist', 'package.json'])
    cpSync(path.join(root, part), path.join(dir, part), { recursive: true });
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  return dir;
}

export async function startupBench(root, { runs = 7 } = {}) {
  const before = buildBaseline(root, BEFORE);
  const now = besideBaseline(root);
  const work = mkdtempSync(path.join(tmpdir(), 'content-api-startup-'));
  const redis = await startRedis({ persist: false, parent: work }).catch(() => null);
  try {
    const originals = path.join(work, 'originals');
    mkdirSync(originals);
    await sharp({ create: { width: 64, height: 48, channels: 3, background: '#823' } })
      .jpeg()
      .toFile(path.join(originals, 'one.jpg'));
    const page = path.join(root, 'samples/pages/presentation-every-block.json');
    let out = 0;
    const jobs = [
      ['render (one 64x48 JPEG)', () => ['render', originals, '--out', path.join(work, `out-${out++}`)]],
      ['check (the sample page)', () => ['check', page]],
      ['inspect (the sample page)', () => ['inspect', page]],
      ['--help', () => ['--help']],
      ...(redis
        ? [
            [
              'worker (start, stop)',
              () => ['worker', '--queue', redis.url, '--queue-name', 'startup'],
              /SIGTERM or Ctrl-C/,
            ],
          ]
        : []),
    ];
    console.log(`\nstart-up: one fresh CLI process, median of ${runs}, alternating; CPU is user + system`);
    console.log(
      `${'command'.padEnd(28)}${`CPU ${BEFORE}`.padStart(14)}${'CPU now'.padStart(10)}` +
        `${`wall ${BEFORE}`.padStart(15)}${'wall now'.padStart(10)}`,
    );
    for (const [name, args, ready] of jobs) {
      const times = { old: [], now: [] };
      for (let i = 0; i < runs; i++) {
        times.old.push(await run(before, args(), ready));
        times.now.push(await run(now, args(), ready));
      }
      const ms = (list, key) => `${median(list.map((t) => t[key])).toFixed(0)} ms`;
      console.log(
        `${name.padEnd(28)}${ms(times.old, 'cpu').padStart(14)}${ms(times.now, 'cpu').padStart(10)}` +
          `${ms(times.old, 'wall').padStart(15)}${ms(times.now, 'wall').padStart(10)}`,
      );
    }
    if (!redis) console.log('(no redis-server here: the worker row is left out)');
  } finally {
    await redis?.stop();
    rmSync(work, { recursive: true, force: true });
    rmSync(now, { recursive: true, force: true });
  }
}
