/**
 * Collisions between runs at once, in a local output folder. Before an image's files are put
 * in place, its run claims the image's key with a file created exclusively
 * (`.content-api-claims/<key>`, holding the pid, host, source and hash), then reads the
 * manifest as it is now: another run's claim, or a recorded entry, for a different picture
 * is a collision, decided before any file is overwritten. A claim is removed once the
 * manifest records the entry; a claim whose process is gone (killed) is taken over.
 */
import { hostname } from 'node:os';
import { mkdir, open, readFile, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { isProcessAlive } from '../fs/atomic.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { MANIFEST_FILE, readManifest, type ManifestEntry } from './manifest.js';

export const CLAIMS_FOLDER = '.content-api-claims';

interface Claim {
  pid: number;
  host: string;
  source: string;
  sha256: string;
}

export type ClaimOutcome = { ok: true; release: () => Promise<void> } | { ok: false; holder: string };

export class Claims {
  readonly #outDir: string;
  /** The manifest as last read, and the stamp of the file it was read from. */
  #manifest: { stamp: string; entries: Record<string, ManifestEntry> } | null = null;

  constructor(outDir: string) {
    this.#outDir = outDir;
  }

  /**
   * Claims `key` for `source` (content `sha256`). Not ok when another run holds or has
   * recorded the key for a different picture; `holder` names it.
   */
  async claim(key: string, source: string, sha256: string, stillThere: (source: string) => Promise<boolean>): Promise<ClaimOutcome> {
    const file = path.join(this.#outDir, CLAIMS_FOLDER, `${key}.claim`);
    await mkdir(path.dirname(file), { recursive: true });
    const mine: Claim = { pid: process.pid, host: hostname(), source, sha256 };
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        const handle = await open(file, 'wx');
        try {
          await handle.writeFile(JSON.stringify(mine));
        } finally {
          await handle.close();
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const other = await readClaim(file);
        if (other === 'being written') {
          await sleep(10);
          continue;
        }
        if (other === null) continue; // released meanwhile
        if (other.host === mine.host && !isProcessAlive(other.pid)) {
          await rm(file, { force: true }); // left by a killed run
          continue;
        }
        if (samePicture(other, mine)) return { ok: true, release: async () => {} };
        return { ok: false, holder: `${other.source} (being rendered by process ${other.pid})` };
      }
      const recorded = (await this.#entries())[key];
      if (recorded && !samePicture(recorded, mine) && (await stillThere(recorded.source))) {
        await rm(file, { force: true });
        return { ok: false, holder: recorded.source };
      }
      return { ok: true, release: () => this.#release(file) };
    }
    return { ok: false, holder: 'another run (its claim keeps changing)' };
  }

  /** Removes a claim, and the folders it leaves empty (another run's claims keep theirs). */
  async #release(file: string): Promise<void> {
    await rm(file, { force: true });
    const root = path.join(this.#outDir, CLAIMS_FOLDER);
    for (let dir = path.dirname(file); dir.startsWith(root); dir = path.dirname(dir)) {
      if (!(await rmdir(dir).then(() => true, () => false))) break;
    }
  }

  /** The manifest's entries as the file is now, read again only when it changed. */
  async #entries(): Promise<Record<string, ManifestEntry>> {
    const info = await stat(path.join(this.#outDir, MANIFEST_FILE)).catch(() => null);
    const stamp = info ? `${info.size} ${info.mtimeMs} ${info.ino}` : 'none';
    if (this.#manifest?.stamp !== stamp) this.#manifest = { stamp, entries: (await readManifest(this.#outDir)).entries };
    return this.#manifest.entries;
  }
}

const samePicture = (a: { source: string; sha256: string }, b: { source: string; sha256: string }) => a.source === b.source || a.sha256 === b.sha256;

/** The claim in `file`; null when it is gone; 'being written' while it is empty (unless left so for 5 s). */
async function readClaim(file: string): Promise<Claim | null | 'being written'> {
  const text = await readFile(file, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as Claim;
  } catch {
    const age = Date.now() - ((await stat(file).catch(() => null))?.mtimeMs ?? 0);
    if (age < 5_000) return 'being written';
    await rm(file, { force: true }); // its writer died before writing it
    return null;
  }
}
