/**
 * `check --config` and `--baseline` naming something that is not a regular file (issue #22,
 * round 3): a FIFO, /dev/zero, either through a committed symlink. Each is one line naming it,
 * exit 2, before a byte is read. Each run is killed after a while, so a hang fails the test.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWithin } from '../cli/run-cli.js';
import { mkfifo } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { loadPage } from '../page/variants.js';

async function project() {
  const dir = await tempDir();
  await mkdir(path.join(dir, 'pages'));
  await writeFile(path.join(dir, 'pages', 'aspect.json'), JSON.stringify(loadPage('presentation-every-block.json')));
  await mkfifo(path.join(dir, 'fifo.json'));
  await symlink('/dev/zero', path.join(dir, 'zero.json'));
  return dir;
}

describe('check --config and --baseline that are not regular files', () => {
  it('--config: a FIFO, /dev/zero, a committed content-api.config.json linked to either', async () => {
    const dir = await project();
    const fifo = await runWithin(['check', 'pages', '--config', 'fifo.json'], 20_000, { cwd: dir });
    expect(fifo).toMatchObject({
      signal: null,
      code: 2,
      stderr: 'error: fifo.json: a FIFO (named pipe), not a file\n',
    });
    const zero = await runWithin(['check', 'pages', '--config', 'zero.json'], 20_000, { cwd: dir });
    expect(zero).toMatchObject({ signal: null, code: 2, stderr: 'error: zero.json: a device, not a file\n' });
    const config = path.join(dir, 'content-api.config.json');
    await symlink('fifo.json', config);
    const found = await runWithin(['check', 'pages'], 20_000, { cwd: dir });
    expect(found).toMatchObject({
      signal: null,
      code: 2,
      stderr: `error: ${config}: a FIFO (named pipe), not a file\n`,
    });
  });

  it('--baseline: a FIFO, /dev/zero, a committed symlink to either', async () => {
    const dir = await project();
    await symlink('zero.json', path.join(dir, 'baseline.json'));
    const cases: Array<[string, string]> = [
      ['fifo.json', 'a FIFO (named pipe), not a file'],
      ['zero.json', 'a device, not a file'],
      ['baseline.json', 'a device, not a file'],
    ];
    for (const [file, reason] of cases) {
      const result = await runWithin(['check', 'pages', '--baseline', file], 20_000, { cwd: dir });
      expect(result).toMatchObject({ signal: null, code: 2, stderr: `error: --baseline ${file}: ${reason}\n` });
    }
  });
});
