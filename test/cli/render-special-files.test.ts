/**
 * `render` in hostile surroundings, issue #22 round 3: files that are not regular files where
 * it reads JSON (a FIFO as `--alt-text` or as the output's manifest, a manifest linked to
 * /dev/zero: one line naming it, exit 2, before a byte is read), an output folder whose links
 * loop or that is /proc (the temporary-file sweep ends), an input that is not there. Each run is
 * killed after a while, so a hang fails the test instead of stalling the suite.
 */
import { mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFEST_FILE } from '../../src/renditions/manifest.js';
import { photo, writeImage } from '../fixtures/images.js';
import { mkfifo } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';
import { runWithin } from './run-cli.js';

async function oneOriginal() {
  const dir = await tempDir();
  await writeImage(dir, 'in/photo.jpg', photo(400, 300).jpeg());
  return { dir, inDir: path.join(dir, 'in'), out: path.join(dir, 'out') };
}

describe('render and files that are not regular files', () => {
  it('a FIFO as --alt-text: one line naming it, exit 2', async () => {
    const { dir, inDir, out } = await oneOriginal();
    const fifo = path.join(dir, 'alt.json');
    await mkfifo(fifo);
    const result = await runWithin(['render', inDir, '--out', out, '--alt-text', fifo]);
    expect(result.signal).toBe(null);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: --alt-text ${fifo}: a FIFO (named pipe), not a file\n`);
  });

  it('--alt-text JSON with a leading byte-order mark is read', async () => {
    const { dir, inDir, out } = await oneOriginal();
    const map = path.join(dir, 'alt.json');
    await writeFile(map, `\ufeff${JSON.stringify({ 'photo.jpg': 'A photo' })}`);
    const result = await runWithin(['render', inDir, '--out', out, '--json', '--alt-text', map]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).results[0].image.alt_text).toBe('A photo');
  });

  it('a FIFO standing as the manifest: one line naming it, exit 2', async () => {
    const { inDir, out } = await oneOriginal();
    await mkdir(out);
    const manifest = path.join(out, MANIFEST_FILE);
    await mkfifo(manifest);
    const result = await runWithin(['render', inDir, '--out', out]);
    expect(result.signal).toBe(null);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: .*${MANIFEST_FILE}: a FIFO \\(named pipe\\), not a file\\n$`));
  });

  it('a manifest symlinked to /dev/zero: one line naming it, exit 2, nothing read', async () => {
    const { inDir, out } = await oneOriginal();
    await mkdir(out);
    await symlink('/dev/zero', path.join(out, MANIFEST_FILE));
    const result = await runWithin(['render', inDir, '--out', out]);
    expect(result.signal).toBe(null);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: .*${MANIFEST_FILE}: a device, not a file\\n$`));
  });
});

describe('render and the output folder around it', () => {
  it('an output folder holding x/up1 -> .. and x/up2 -> ..: the sweep walks each real folder once, and ends', async () => {
    const { inDir, out } = await oneOriginal();
    await mkdir(path.join(out, 'x'), { recursive: true });
    await symlink('..', path.join(out, 'x', 'up1'));
    await symlink('..', path.join(out, 'x', 'up2'));
    const result = await runWithin(['render', inDir, '--out', out]);
    expect(result.signal).toBe(null);
    expect(result.code, result.stderr).toBe(0);
    expect((await readdir(out)).filter((name) => name.startsWith('photo.'))).toHaveLength(5);
  });

  it('/proc as the output folder: the sweep looks only where render writes, and the run ends', async () => {
    const { inDir } = await oneOriginal();
    const result = await runWithin(['render', inDir, '--out', '/proc'], 30_000);
    expect(result.signal).toBe(null);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/\/proc/);
  });

  it('an original that is a FIFO, a device or a link to one: one failed line saying what it is; the rest render', async () => {
    const { dir, inDir, out } = await oneOriginal();
    const fifo = path.join(dir, 'pipe.jpg');
    await mkfifo(fifo);
    const zero = path.join(dir, 'zero.jpg');
    await symlink('/dev/zero', zero);
    const result = await runWithin(['render', inDir, fifo, zero, '/dev/zero', '--out', out]);
    expect(result.signal).toBe(null);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr.split('\n').filter((line) => line.startsWith('failed: '))).toEqual([
      `failed: /dev/zero: a device, not a file`,
      `failed: ${fifo}: a FIFO (named pipe), not a file`,
      `failed: ${zero}: a device, not a file`,
    ]);
    expect(result.stderr).toMatch(/^1 rendered, 0 up to date, 3 failed/m);
  });

  it('an input that is not there: one line naming it, exit 2, nothing made', async () => {
    const { dir } = await oneOriginal();
    const out = path.join(dir, 'x');
    const missing = path.join(dir, 'nosuchdir');
    const result = await runWithin(['render', missing, '--out', out]);
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: `error: ${missing}: no such file or folder\n` });
    await expect(stat(out)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
