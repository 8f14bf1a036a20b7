/**
 * Claims on images' keys in one output folder (claims.ts), by jobs at once in one process, as a
 * queue worker with `--concurrency 2` runs them.
 */
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAIMS_FOLDER, Claims } from '../../src/renditions/claims.js';
import { tempDir } from '../fixtures/tmp.js';

const stillThere = async () => true;

describe('claims', () => {
  it('images claimed and released at once never fail for the claims folder their releases remove', async () => {
    const out = await tempDir();
    const claims = new Claims(out, async () => undefined);
    // Each release of the last claim removes the claims folder; the other image's claim is
    // made meanwhile. Node's recursive mkdir, racing that removal, said ENOENT (it failed the
    // image, "cannot write renditions (ENOENT)", in one full-suite run of four), or ENOTDIR for
    // a nested key (one run of this test in three).
    const cycle = async (key: string) => {
      for (let i = 0; i < 300; i++) {
        const outcome = await claims.claim(key, `/originals/${key}.jpg`, `sha-${key}`, stillThere);
        expect(outcome.ok).toBe(true);
        if (outcome.ok) await outcome.release();
      }
    };
    await Promise.all(['photo-0', 'photo-1', 'deep/photo-2'].map(cycle));
    // Released: nothing is left, not even the folder.
    expect(await readdir(out)).toEqual([]);
  });

  it('a file where the claims folder goes is named, not tried forever', async () => {
    const out = await tempDir();
    await writeFile(path.join(out, CLAIMS_FOLDER), 'not a folder');
    const claims = new Claims(out, async () => undefined);
    for (const key of ['photo', 'deep/photo']) {
      await expect(claims.claim(key, '/originals/photo.jpg', 'sha', stillThere)).rejects.toThrow(
        /^E(EXIST|NOTDIR): .*\.content-api-claims/,
      );
    }
  });

  it('a claim on the same key for another picture is refused while it is held', async () => {
    const out = await tempDir();
    const claims = new Claims(out, async () => undefined);
    const first = await claims.claim('photo', '/originals/a/photo.jpg', 'sha-a', stillThere);
    expect(first.ok).toBe(true);
    const second = await claims.claim('photo', '/originals/b/photo.jpg', 'sha-b', stillThere);
    expect(second).toEqual({ ok: false, holder: `/originals/a/photo.jpg (being rendered by process ${process.pid})` });
    if (first.ok) await first.release();
    expect((await claims.claim('photo', '/originals/b/photo.jpg', 'sha-b', stillThere)).ok).toBe(true);
  });
});
