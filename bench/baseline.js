/**
 * "Before" in the same run: content-api as it was at a given commit, checked out into
 * `.bench/baseline-<commit>/` and built there with this checkout's node_modules, so a
 * contender can run the old library side by side with the new one.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import path from 'node:path';

/** The last commit before the storage boundary and streamed originals (issue #11). */
export const BASELINE_COMMIT = '3d1337d';

/** Returns the folder whose `dist/index.js` is the library at `commit`. */
export function buildBaseline(root, commit = BASELINE_COMMIT) {
  const dir = path.join(root, '.bench', `baseline-${commit}`);
  if (existsSync(path.join(dir, 'dist', 'index.js'))) return dir;
  console.error(`baseline: building content-api at ${commit}`);
  if (!existsSync(dir))
    execFileSync('git', ['worktree', 'add', '--detach', '--force', dir, commit], { cwd: root, stdio: 'ignore' });
  if (!existsSync(path.join(dir, 'node_modules')))
    symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: dir,
    stdio: 'inherit',
  });
  // The rest of `npm run build` where the commit has it: the queue's Lua beside its modules.
  const copy = path.join(dir, 'scripts/copy-commands.js');
  if (existsSync(copy)) execFileSync(process.execPath, [copy], { cwd: dir, stdio: 'inherit' });
  return dir;
}
