/**
 * The first step of `npm test`: the two programs the tests drive, from Debian. Chromium (at
 * CHROMIUM_PATH, by default /usr/bin/chromium: the HTML-report tests run it with playwright-core)
 * and redis-server (on PATH: the queue tests start their own on loopback, test/fixtures/redis-server.js).
 *
 * Both there: nothing else happens (no apt call). Some missing: they are installed with apt-get when
 * this process may (root, or passwordless `sudo -n`), with one line on stderr saying so; else, or if
 * apt-get fails, one line naming the packages and the command to run, and exit code 2.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Debian package, and whether what the tests use of it is here. */
const NEEDED = [
  { name: 'chromium', present: () => executable(CHROMIUM) },
  { name: 'redis-server', present: () => onPath('redis-server') },
];
/** How long apt-get waits for another apt or dpkg to finish (two test runs at once) before failing. */
const LOCK_TIMEOUT_S = 600;

function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name) {
  return (process.env.PATH ?? '').split(path.delimiter).some((folder) => folder && executable(path.join(folder, name)));
}

/** The one line printed when the packages are still missing, and the end of the run (exit code 2). */
function fail(packages, reason) {
  const plural = packages.length > 1 ? 's' : '';
  const list = packages.join(' ');
  const why = reason ? ` (${reason})` : '';
  process.stderr.write(`npm test needs Debian package${plural} ${list}: run sudo apt-get install ${list}${why}\n`);
  process.exit(2);
}

/** The last line apt-get printed that says what went wrong (its `E:` lines first). */
function aptError(result) {
  if (result.error) return result.error.message;
  const lines = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return lines.findLast((line) => line.startsWith('E:')) ?? lines.at(-1) ?? `exit code ${result.status}`;
}

const missing = NEEDED.filter((need) => !need.present()).map((need) => need.name);
if (missing.length === 0) process.exit(0);

/** The command prefix that runs apt-get as root: none when we are root, `sudo -n` when it needs no password. */
let asRoot;
if (process.getuid?.() === 0) asRoot = [];
else if (spawnSync('sudo', ['-n', 'true'], { stdio: 'ignore' }).status === 0) asRoot = ['sudo', '-n'];
if (!asRoot || !onPath('apt-get')) fail(missing);

process.stderr.write(
  `npm test: installing Debian package${missing.length > 1 ? 's' : ''} ${missing.join(' ')} ` +
    `(apt-get update && apt-get install${asRoot.length ? ', with sudo -n' : ''})\n`,
);
const apt = (...args) => {
  const [command, ...rest] = [...asRoot, 'env', 'DEBIAN_FRONTEND=noninteractive', 'apt-get', '-qq', ...args];
  return spawnSync(command, rest, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
};
const lock = ['-o', `DPkg::Lock::Timeout=${LOCK_TIMEOUT_S}`];
const update = apt(...lock, 'update');
if (update.status !== 0) fail(missing, `apt-get update failed: ${aptError(update)}`);
const install = apt(...lock, 'install', '-y', '--no-install-recommends', ...missing);
if (install.status !== 0) fail(missing, `apt-get install failed: ${aptError(install)}`);
const still = NEEDED.filter((need) => !need.present()).map((need) => need.name);
if (still.length > 0) {
  const what = still.map((name) => (name === 'chromium' ? CHROMIUM : `${name} on PATH`)).join(' and ');
  fail(still, `installed, but ${what} still missing`);
}
