/**
 * `Manifest.records()`, one contract for a folder and a bucket prefix (on a real s3rver), each holding
 * a record per image: every record once, in key order,
 * as `entriesFor` gives it; nothing for a place with no manifest; a manifest or record that is
 * there but broken throws `ManifestError` naming it, never passes for an empty one. In a bucket,
 * records are read a bounded number at a time, however many there are.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManifestError } from '../../src/errors.js';
import { MANIFEST_FILE, MANIFEST_RECORDS, type ManifestEntry, openManifest } from '../../src/renditions/manifest.js';
import { renderOriginals } from '../../src/renditions/render.js';
import { openStore } from '../../src/storage/location.js';
import type { MediaStore } from '../../src/storage/store.js';
import { photo, writeImage } from '../fixtures/images.js';
import { applyEnv, startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';

let s3: TestS3;
let prefixes = 0;

beforeAll(async () => {
  s3 = await startS3(['records']);
  applyEnv(s3.env);
});

afterAll(async () => {
  await s3.close();
});

/** A place `render` writes to, and how a test breaks its manifest. */
interface Place {
  location: string;
  /** Cuts one record short; returns how messages name it. */
  cut(key: string): Promise<string>;
}

const places: Array<[string, () => Promise<Place>]> = [
  [
    'folder',
    async () => {
      const media = path.join(await tempDir(), 'media');
      return {
        location: media,
        async cut(key) {
          const file = path.join(media, MANIFEST_RECORDS, `${key}.json`);
          const text = await readFile(file);
          await writeFile(file, text.subarray(0, Math.floor(text.length / 2)));
          return file;
        },
      };
    },
  ],
  [
    'bucket',
    async () => {
      const prefix = `run-${++prefixes}/media/`;
      return {
        location: `s3://records/${prefix}`,
        async cut(key) {
          const name = `${prefix}${MANIFEST_RECORDS}${key}.json`;
          const bytes = await s3.get('records', name);
          await s3.put('records', name, bytes.subarray(0, Math.floor(bytes.length / 2)));
          return `s3://records/${name}`;
        },
      };
    },
  ],
];

/** Three small originals, two of them in a folder, rendered as JPEG and WebP into `location`. */
async function rendered(location: string): Promise<void> {
  const originals = await tempDir();
  await writeImage(originals, 'dune.jpg', photo(120, 80).jpeg());
  await writeImage(originals, 'dune-2.jpg', photo(90, 80).jpeg());
  await writeImage(originals, 'coast/reef.png', photo(80, 120).png());
  const report = await renderOriginals([originals], { outDir: location, formats: ['keep', 'webp'] });
  expect(report.failures).toEqual([]);
}

async function collect(store: MediaStore): Promise<Array<[string, ManifestEntry]>> {
  const manifest = await openManifest(store);
  const found: Array<[string, ManifestEntry]> = [];
  for await (const record of manifest.records()) found.push(record);
  return found;
}

describe.each(places)('Manifest.records() (%s)', (_, open) => {
  it('yields every record once, in key order, as entriesFor gives it', async () => {
    const place = await open();
    await rendered(place.location);
    const store = await openStore(place.location);
    try {
      const found = await collect(store);
      expect(found.map(([key]) => key)).toEqual([
        'coast/reef.png',
        'coast/reef.webp',
        'dune-2.jpg',
        'dune-2.webp',
        'dune.jpg',
        'dune.webp',
      ]);
      const manifest = await openManifest(store);
      const entries = await manifest.entriesFor(['coast/reef', 'dune', 'dune-2']);
      expect(Object.fromEntries(found)).toEqual(entries);
    } finally {
      await store.close();
    }
  });

  it('yields nothing where there is no manifest', async () => {
    const place = await open();
    const store = await openStore(place.location);
    try {
      expect(await collect(store)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('throws ManifestError naming a manifest or record cut short, never yields nothing', async () => {
    const place = await open();
    await rendered(place.location);
    const named = await place.cut('dune.webp');
    const store = await openStore(place.location);
    try {
      const error = await collect(store).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ManifestError);
      expect((error as Error).message).toMatch(
        new RegExp(`^${named.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not a valid manifest`),
      );
    } finally {
      await store.close();
    }
  });
});

describe('Manifest.entriesFor in a folder', () => {
  it('finds the same records from a listing of the folder (a chunk of many stems) as by name (one stem)', async () => {
    const place = await places[0]![1]();
    await rendered(place.location);
    const store = await openStore(place.location);
    try {
      const writer = await openManifest(store);
      const entry = (await writer.entry('dune.jpg'))!;
      // 20 stems in one records folder, under the extensions a key can end in, one stem with none.
      const stems = Array.from({ length: 20 }, (_, index) => `many/s${String(index).padStart(2, '0')}`);
      const extensions = ['jpg', 'png', 'webp', 'avif', 'gif'];
      // Each stem's record names its own files: a record naming another image's is not one.
      const entryOf = (stem: string) => ({
        ...entry,
        renditions: Object.fromEntries(
          Object.entries(entry.renditions).map(([key, file]) => [
            key,
            { ...file, path: file.path.replace('dune', stem) },
          ]),
        ) as typeof entry.renditions,
      });
      for (const [index, stem] of stems.entries()) {
        if (index === 7) continue;
        await writer.set(`${stem}.${extensions[index % 5]}`, entryOf(stem));
        if (index % 4 === 0) await writer.set(`${stem}.webp`, entryOf(stem));
      }
      const listed = await (await openManifest(store)).entriesFor([...stems, 'many/absent']);
      const byName = await openManifest(store);
      const oneByOne = {};
      for (const stem of stems) Object.assign(oneByOne, await byName.entriesFor([stem]));
      expect(Object.keys(listed).sort()).toEqual(Object.keys(oneByOne).sort());
      expect(Object.keys(listed)).toHaveLength(19 + 4);
      expect(listed).toEqual(oneByOne);
    } finally {
      await store.close();
    }
  });
});

describe('Manifest.records() in a bucket: memory bounded', () => {
  it('reads at most 16 records ahead of the one it yields', async () => {
    const prefix = `run-${++prefixes}/media/`;
    const location = `s3://records/${prefix}`;
    const originals = await tempDir();
    await writeImage(originals, 'one.jpg', photo(64, 48).jpeg());
    await renderOriginals([originals], { outDir: location });
    const record = await s3.get('records', `${prefix}${MANIFEST_RECORDS}one.jpg.json`);
    // Each copy names its own files: a record naming another image's is not one.
    for (let i = 0; i < 40; i++) {
      const copy = record.toString().replaceAll('"one.max-', `"copy-${i}.max-`);
      await s3.put('records', `${prefix}${MANIFEST_RECORDS}copy-${i}.jpg.json`, Buffer.from(copy));
    }
    const store = await openStore(location);
    let reads = 0;
    // The real store, its reads counted.
    const counted = new Proxy(store, {
      get(target, name) {
        if (name === 'read')
          return (key: string) => {
            reads++;
            return target.read(key);
          };
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    try {
      const iterator = (await openManifest(counted)).records()[Symbol.asyncIterator]();
      expect((await iterator.next()).value?.[0]).toBe('copy-0.jpg');
      expect(reads).toBeLessThanOrEqual(16);
      let count = 1;
      while (!(await iterator.next()).done) count++;
      expect(count).toBe(41);
      expect(reads).toBe(41);
    } finally {
      await store.close();
    }
  });
});

// A folder with a one-file manifest of an earlier version, not migrated yet, holding no entry.
it('a folder whose one-file manifest holds no entry yields nothing', async () => {
  const media = path.join(await tempDir(), 'media');
  await mkdir(media);
  await writeFile(path.join(media, MANIFEST_FILE), `${JSON.stringify({ version: 1, entries: {} })}\n`);
  const store = await openStore(media);
  expect(await collect(store)).toEqual([]);
  await store.close();
});
