/**
 * Butteraugli, a second opinion beside SSIMULACRA2: libjxl's `butteraugli_main`, which Debian ships
 * in `libjxl-devtools`. `findButteraugli()` looks for it on PATH and, when it is missing, installs
 * the package with apt-get (as root, or with passwordless sudo), saying so on stderr; where it
 * cannot, it returns null and the reason, and the bench prints that and leaves Butteraugli out.
 *
 * `butteraugli(tool, reference, distorted)` runs it on two files of the same size (PNG; JPEG
 * where the tool reads it) and returns { max, pnorm }: the largest local distance and the 3-norm
 * (lower is better; about 1 is the threshold of a visible difference at 1:1).
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PROGRAM = 'butteraugli_main';
const PACKAGE = 'libjxl-devtools';

const onPath = () => spawnSync('sh', ['-c', `command -v ${PROGRAM}`], { encoding: 'utf8' }).stdout.trim() || null;

/** Runs apt-get as root, or through `sudo -n`; false when neither can. */
function aptGet(args) {
  const root = process.getuid?.() === 0;
  if (!root && spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status !== 0) return false;
  const [command, prefix] = root ? ['apt-get', []] : ['sudo', ['-n', 'apt-get']];
  execFileSync(command, [...prefix, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return true;
}

/** { path } of butteraugli_main, installing it if need be; or { path: null, reason } saying what to install. */
export function findButteraugli() {
  const found = onPath();
  if (found) return { path: found };
  const reason = `Butteraugli skipped: ${PROGRAM} not found; install Debian's ${PACKAGE} (apt-get install ${PACKAGE})`;
  console.error(`bench: ${PROGRAM} not found: installing ${PACKAGE} with apt-get`);
  try {
    if (!aptGet(['install', '-y', '-q', PACKAGE]))
      return { path: null, reason: `${reason}, as root or with passwordless sudo` };
  } catch {
    // The package lists may be stale: update them once, then try again.
    try {
      aptGet(['update', '-q']);
      aptGet(['install', '-y', '-q', PACKAGE]);
    } catch (error) {
      return { path: null, reason: `${reason} (apt-get failed: ${error.message.split('\n')[0]})` };
    }
  }
  const installed = onPath();
  return installed ? { path: installed } : { path: null, reason };
}

/** { max, pnorm } of `distorted` against `reference` (both files), by the tool at `tool`. */
export async function butteraugli(tool, reference, distorted) {
  const { stdout } = await run(tool, [reference, distorted], { maxBuffer: 1 << 20 });
  const numbers = stdout
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const max = Number.parseFloat(numbers[0]);
  const pnorm = Number.parseFloat(/3-norm:\s*([\d.eE+-]+)/.exec(stdout)?.[1] ?? 'NaN');
  if (!Number.isFinite(max) || !Number.isFinite(pnorm)) throw new Error(`${PROGRAM}: unexpected output: ${stdout}`);
  return { max, pnorm };
}
