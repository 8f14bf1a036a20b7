/**
 * Collisions between runs at once, in a local output folder. Before an image's files are put
 * in place, its run claims the image's key with a file created exclusively
 * (`.content-api-claims/<key>.claim`, holding the pid, host, source and hash), then reads the
 * manifest as it is now: another run's claim, or a recorded entry, for a different picture
 * is a collision, decided before any file is overwritten. A claim is removed once the
 * manifest records the entry; a claim whose process is gone (killed) is taken over, under the
 * manifest's lock so that two runs never both take over one claim.
 */
import { rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withLock } from '../fs/lock.js';
import { makeFolder } from '../fs/make-folder.js';
import { createOwned, isDead, type Owner, readOwned, self } from '../fs/owned-file.js';
import { walkFiles } from '../fs/walk.js';
import { MANIFEST_FILE, type ManifestEntry } from './manifest.js';

export const CLAIMS_FOLDER = '.content-api-claims';

interface Claim extends Owner {
  source: string;
  sha256: string;
}

export type ClaimOutcome = { ok: true; release: () => Promise<void> } | { ok: false; holder: string };

export class Claims {
  readonly #outDir: string;
  readonly #root: string;
  /** The entry the manifest records under a key now (manifest.ts `entry`). */
  readonly #recorded: (key: string) => Promise<ManifestEntry | undefined>;

  constructor(outDir: string, recorded: (key: string) => Promise<ManifestEntry | undefined>) {
    this.#outDir = outDir;
    this.#root = path.join(outDir, CLAIMS_FOLDER);
    this.#recorded = recorded;
  }

  /**
   * Claims `key` for `source` (content `sha256`). Not ok when another run holds or has
   * recorded the key for a different picture; `holder` names it. Throws when the claim cannot
   * be written (a full disk).
   */
  async claim(
    key: string,
    source: string,
    sha256: string,
    stillThere: (source: string) => Promise<boolean>,
  ): Promise<ClaimOutcome> {
    const file = path.join(this.#root, `${key}.claim`);
    const mine: Claim = { ...self(), source, sha256 };
    let races = 0;
    for (let attempt = 0; attempt < 500; attempt++) {
      // One level at a time: Node's recursive mkdir spins where a folder cannot be made (/proc).
      const made = await makeFolder(path.dirname(file))
        .then(() => createOwned(file, mine))
        .catch((error: NodeJS.ErrnoException) => {
          // Its folder was removed by another claim's release meanwhile: after the mkdir, or
          // during it (a folder found, then gone as the next level is made, says ENOENT, or
          // ENOTDIR when there are folders left to make below it). A
          // file in the folder's place says the same every time: after some tries, it is named.
          if ((error.code === 'ENOENT' || error.code === 'ENOTDIR') && ++races < 50) return null;
          throw error;
        });
      if (made === null) continue;
      if (!made) {
        const other = await readOwned<Claim>(file);
        if (other === 'gone') continue; // released meanwhile
        if (other === 'being written') {
          await sleep(10);
          continue;
        }
        if (isDead(other)) {
          await this.#takeOver(file);
          continue;
        }
        if (samePicture(other, mine)) return { ok: true, release: async () => {} };
        return { ok: false, holder: `${other.source} (being rendered by process ${other.pid})` };
      }
      const recorded = await this.#recorded(key);
      if (recorded && !samePicture(recorded, mine) && (await stillThere(recorded.source))) {
        await this.#release(file);
        return { ok: false, holder: recorded.source };
      }
      return { ok: true, release: () => this.#release(file) };
    }
    return { ok: false, holder: 'another run (its claim keeps changing)' };
  }

  /** Removes the claims of runs that were killed (on this host); returns how many. */
  async sweep(): Promise<number> {
    let removed = 0;
    for await (const name of walkFiles(this.#root)) {
      const file = path.join(this.#root, name);
      const owner = await readOwned<Claim>(file);
      if (owner !== 'gone' && owner !== 'being written' && isDead(owner) && (await this.#takeOver(file))) removed++;
    }
    return removed;
  }

  /** Removes a dead run's claim if it still is one: another run may have taken it over meanwhile. */
  #takeOver(file: string): Promise<boolean> {
    return withLock(`${path.join(this.#outDir, MANIFEST_FILE)}.lock`, async () => {
      const owner = await readOwned<Claim>(file);
      if (owner === 'gone' || owner === 'being written' || !isDead(owner)) return false;
      await this.#release(file);
      return true;
    });
  }

  /** Removes a claim, and the folders it leaves empty (another run's claims keep theirs). */
  async #release(file: string): Promise<void> {
    await rm(file, { force: true });
    for (let dir = path.dirname(file); dir.startsWith(this.#root); dir = path.dirname(dir)) {
      if (
        !(await rmdir(dir).then(
          () => true,
          () => false,
        ))
      )
        break;
    }
  }
}

const samePicture = (a: { source: string; sha256: string }, b: { source: string; sha256: string }) =>
  a.source === b.source || a.sha256 === b.sha256;
