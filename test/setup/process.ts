/**
 * Each test file leaves the process as it found it. vitest runs the files of one worker in one
 * process, one after another, without reloading the modules they share (`isolate: false`): the
 * environment, the working folder and the exit code a file changed go back as they were, and the
 * temporary folders of its tests go after each of them.
 */
import { afterAll, afterEach } from 'vitest';
import { removeTempDirs } from '../fixtures/tmp.js';

const env = { ...process.env };
const cwd = process.cwd();

afterEach(removeTempDirs);

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
  process.chdir(cwd);
  process.exitCode = undefined;
});
