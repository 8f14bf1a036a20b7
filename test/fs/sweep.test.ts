/**
 * The sweep of temporary files left by killed runs (issue #22, round 3): it walks each real
 * folder once and never through a symlink, stops when aborted, and a render session sweeps the
 * folders each batch writes (a worker killed mid-job leaves nothing for good), never a live
 * writer's temporary file.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepStaleTemps, sweepStaleTempsIn } from '../../src/fs/atomic.js';
import { discoverOriginals } from '../../src/renditions/discover.js';
import { openRenderSession } from '../../src/renditions/session.js';
import { photo, writeImage } from '../fixtures/images.js';
import { execFile, type LaunchedProcess, spawn } from '../fixtures/launcher.js';
import { tempDir } from '../fixtures/tmp.js';

const HOST = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
/** A temporary name for `target` as a process with this pid writes it. */
const tempName = (target: string, pid: number) => `.${target}.tmp-${HOST}-${pid}-0badcafe`;
/** The pid of a process that has ended. */
const deadPid = async () =>
  Number((await execFile(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])).stdout);

const live: LaunchedProcess[] = [];
afterEach(() => {
  for (const child of live.splice(0)) child.kill('SIGKILL');
});

describe('sweepStaleTemps', () => {
  it('walks each real folder once, never through a symlink (x/up1 -> .., x/up2 -> .., a link out)', async () => {
    const dir = await tempDir();
    const out = path.join(dir, 'out');
    await mkdir(path.join(out, 'x'), { recursive: true });
    await mkdir(path.join(dir, 'elsewhere'));
    await symlink('..', path.join(out, 'x', 'up1'));
    await symlink('..', path.join(out, 'x', 'up2'));
    await symlink(path.join(dir, 'elsewhere'), path.join(out, 'out-link'));
    const pid = await deadPid();
    await writeFile(path.join(out, 'x', tempName('a.jpg', pid)), 'x');
    await writeFile(path.join(dir, 'elsewhere', tempName('b.jpg', pid)), 'x');
    expect(await sweepStaleTemps(out)).toEqual([path.join(out, 'x', tempName('a.jpg', pid))]);
    expect(await readdir(path.join(dir, 'elsewhere'))).toEqual([tempName('b.jpg', pid)]);
  });

  it('stops once aborted', async () => {
    const dir = await tempDir();
    await writeFile(path.join(dir, tempName('a.jpg', await deadPid())), 'x');
    expect(await sweepStaleTemps(dir, { signal: AbortSignal.abort() })).toEqual([]);
    expect(await sweepStaleTempsIn([dir], { signal: AbortSignal.abort() })).toEqual([]);
    expect(await sweepStaleTempsIn([dir])).toHaveLength(1);
  });

  it('sweepStaleTempsIn looks only in the folders named, not below them (/proc ends at once)', async () => {
    const dir = await tempDir();
    await mkdir(path.join(dir, 'below'));
    const pid = await deadPid();
    await writeFile(path.join(dir, 'below', tempName('a.jpg', pid)), 'x');
    expect(await sweepStaleTempsIn([dir, path.join(dir, 'missing')])).toEqual([]);
    expect(await sweepStaleTempsIn(['/proc', '/'])).toEqual([]);
  });
});

describe('a render session', () => {
  it('sweeps the temporary files of a writer killed since it opened, on the next batch; a live one stays', async () => {
    const dir = await tempDir();
    await writeImage(dir, 'in/landscapes/photo.jpg', photo(400, 300).jpeg());
    const out = path.join(dir, 'out');
    const { originals } = await discoverOriginals([path.join(dir, 'in')], out);
    const session = await openRenderSession({ outDir: out });
    try {
      expect((await session.render(originals)).errors).toEqual([]);
      // Since the session opened: a worker SIGKILLed while it staged a rendition, and one still writing.
      const sleeper = spawn('sleep', ['60']);
      live.push(sleeper);
      await once(sleeper, 'spawn');
      const folder = path.join(out, 'landscapes');
      const dead = tempName('photo.max-600x600.jpg', await deadPid());
      const writing = tempName('photo.max-300x300.jpg', sleeper.pid!);
      await writeFile(path.join(folder, dead), 'half a rendition');
      await writeFile(path.join(folder, writing), 'half a rendition');
      await writeFile(path.join(out, tempName('.content-api-manifest.json', await deadPid())), '{');
      const rerun = await session.render(originals);
      expect(rerun.warnings).toContain('removed 2 temporary file(s) left by an interrupted run');
      expect((await readdir(folder)).filter((name) => name.includes('.tmp-'))).toEqual([writing]);
      expect((await readdir(out)).filter((name) => name.includes('.tmp-'))).toEqual([]);
    } finally {
      await session.close();
    }
  });
});
