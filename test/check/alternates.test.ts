/**
 * `check --verify-files` knows alternates: after `render --formats keep,webp` the Image object names
 * only the JPEG renditions, and the manifest beside them records the WebP ones. Each alternate must
 * exist, be WebP, and have its rendition's pixel size; findings name the alternate's file. The same
 * contract in a folder and in a bucket; over HTTP (no manifest) no alternate is known.
 */
import { symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CheckReport, checkPages } from '../../src/check/check.js';
import { openFileSource } from '../../src/check/probe.js';
import { renderOriginal } from '../../src/renditions/render.js';
import { animatedGif, photo, writeImage } from '../fixtures/images.js';
import { type Place, places } from '../fixtures/places.js';
import { applyEnv, startS3, type TestS3 } from '../fixtures/s3.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionOfBytes } from '../fixtures/versions.js';
import { startMediaServer } from './media-server.js';

const MD = 'meadow.max-1200x1200';

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

let s3: TestS3;

beforeAll(async () => {
  s3 = await startS3(['alternates']);
  applyEnv(s3.env);
});

afterAll(async () => {
  await s3.close();
});

const kinds = places(() => s3, 'alternates');

/** A 1600x1000 photograph rendered as JPEG with WebP alternates into `place`, and its page. */
async function rendered(place: Place) {
  const original = await writeImage(await tempDir(), 'meadow.jpg', photo(1600, 1000).jpeg());
  const result = await renderOriginal(original, { outDir: place.location, formats: ['keep', 'webp'] });
  expect(result.alternates.map((alternate) => alternate.format)).toEqual(['webp']);
  const json = { id: 1, images: [result.image] };
  return { source: 'page.json', text: JSON.stringify(json), json };
}

async function check(place: Place, page: Awaited<ReturnType<typeof rendered>>, at = place.location) {
  const files = await openFileSource(at);
  try {
    return await checkPages([page], { files });
  } finally {
    await files.close();
  }
}

/** The file rules' findings (the page is a bare list of images: the page model has its own to say). */
const findings = (report: CheckReport) =>
  report.pages[0]!.problems.flatMap((p) =>
    p.rule.startsWith('file-') ? [{ rule: p.rule, path: p.path, message: p.message }] : [],
  );

describe.each(kinds)('alternates the manifest records (%s)', (_, open) => {
  it('a clean render has no findings, and its alternates are probed with the renditions', async () => {
    const place = await open();
    const report = await check(place, await rendered(place));
    expect(findings(report)).toEqual([]);
    // Five JPEG renditions and five WebP alternates, each read once.
    expect(report.files!.probed).toBe(10);
  });

  it('a deleted alternate is file-missing, naming it', async () => {
    const place = await open();
    const page = await rendered(place);
    await place.remove(`${MD}.webp`);
    expect(findings(await check(place, page))).toEqual([
      {
        rule: 'file-missing',
        path: '$.images[0].sizes.md.url',
        message: expect.stringMatching(/^webp alternate .*meadow\.max-1200x1200\.webp does not exist$/),
      },
    ]);
    expect(findings(await check(place, page))[0]!.message).toContain(place.named(`${MD}.webp`));
  });

  it("a JPEG under an alternate's .webp name is file-format; a resized alternate is file-size", async () => {
    const place = await open();
    const page = await rendered(place);
    await place.write(
      `${MD}.webp`,
      await sharp(await place.read(`${MD}.jpg`))
        .jpeg()
        .toBuffer(),
    );
    const small = 'meadow.max-300x300.webp';
    await place.write(
      small,
      await sharp(await place.read(small))
        .resize(150)
        .webp()
        .toBuffer(),
    );
    expect(findings(await check(place, page))).toEqual([
      {
        rule: 'file-size',
        path: '$.images[0].sizes.xs.url',
        message: `webp alternate ${place.named(small)} is 150x94, the JSON says 300x188`,
      },
      {
        rule: 'file-format',
        path: '$.images[0].sizes.md.url',
        message: `webp alternate ${place.named(`${MD}.webp`)} is jpeg, its name says webp`,
      },
    ]);
  });

  it('a truncated alternate or rendition is file-unreadable: its header reads, its pixels do not decode', async () => {
    const place = await open();
    const page = await rendered(place);
    const cut = async (file: string) => {
      const bytes = await place.read(file);
      await place.write(file, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    };
    await cut(`${MD}.webp`);
    await cut('meadow.max-600x600.jpg');
    const found = findings(await check(place, page));
    // The rendition the Image names is also not the bytes its URL's version names (an alternate has no URL).
    expect(found.map((f) => `${f.rule} ${f.path}`)).toEqual([
      'file-unreadable $.images[0].sizes.sm.url',
      'file-unreadable $.images[0].sizes.md.url',
      'file-version $.images[0].sizes.sm.url',
    ]);
    expect(found[0]!.message).toMatch(
      new RegExp(`^${literal(place.named('meadow.max-600x600.jpg'))} does not decode: `),
    );
    expect(found[1]!.message).toMatch(
      new RegExp(`^webp alternate ${literal(place.named(`${MD}.webp`))} does not decode: `),
    );
  });

  it('an alternate that shows another picture than its record is file-picture', async () => {
    const place = await open();
    const page = await rendered(place);
    await place.write(
      `${MD}.webp`,
      await sharp(await place.read(`${MD}.webp`))
        .rotate(180)
        .webp()
        .toBuffer(),
    );
    const found = findings(await check(place, page));
    expect(found.map((f) => `${f.rule} ${f.path}`)).toEqual(['file-picture $.images[0].sizes.md.url']);
    expect(found[0]!.message).toMatch(
      new RegExp(`^webp alternate ${literal(place.named(`${MD}.webp`))} is not the picture render recorded: `),
    );
  });

  it('an alternate that is not an image is file-unreadable', async () => {
    const place = await open();
    const page = await rendered(place);
    await place.write(`${MD}.webp`, Buffer.from('not an image'));
    expect(findings(await check(place, page)).map((f) => `${f.rule} ${f.path}`)).toEqual([
      'file-unreadable $.images[0].sizes.md.url',
    ]);
  });
});

describe('alternates: the guards of every media file, and no manifest', () => {
  it('an alternate that is a symlink out of the folder is file-outside, never read', async () => {
    const place = (await kinds[0]![1]()) as Place;
    const page = await rendered(place);
    const elsewhere = path.join(await tempDir(), 'elsewhere.webp');
    await writeFile(elsewhere, await place.read(`${MD}.webp`));
    await place.remove(`${MD}.webp`);
    await symlink(elsewhere, place.named(`${MD}.webp`));
    const found = findings(await check(place, page));
    expect(found.map((f) => `${f.rule} ${f.path}`)).toEqual(['file-outside $.images[0].sizes.md.url']);
    expect(found[0]!.message).toMatch(/^webp alternate .* is a symlink to .*elsewhere\.webp, outside /);
  });

  it('an animated GIF cut short is file-unreadable (libvips would decode what is left without a word)', async () => {
    const place = (await kinds[0]![1]()) as Place;
    const original = await writeImage(await tempDir(), 'flicker.gif', await animatedGif(400, 300, 4));
    const result = await renderOriginal(original, { outDir: place.location, formats: ['keep', 'webp'] });
    const page = { source: 'page.json', text: '', json: { id: 1, images: [result.image] } };
    page.text = JSON.stringify(page.json);
    expect(findings(await check(place, page))).toEqual([]);
    const md = result.files.md.path;
    const bytes = await place.read(md);
    await place.write(md, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    expect(findings(await check(place, page))).toEqual([
      {
        rule: 'file-unreadable',
        path: '$.images[0].sizes.md.url',
        message: `${place.named(md)} does not decode: the GIF ends before its trailer (cut short)`,
      },
      {
        rule: 'file-version',
        path: '$.images[0].sizes.md.url',
        message:
          `${place.named(md)} is version ${versionOfBytes(bytes.subarray(0, Math.floor(bytes.length * 0.6)))} ` +
          `(its SHA-256's first 8 hex digits), its URL says v=${versionOfBytes(bytes)}`,
      },
    ]);
  });

  it('over HTTP there is no manifest: only the renditions the Image names are probed', async () => {
    const place = (await kinds[0]![1]()) as Place;
    const page = await rendered(place);
    await place.remove(`${MD}.webp`);
    const server = await startMediaServer(place.location);
    try {
      const report = await check(place, page, server.base);
      expect(findings(report)).toEqual([]);
      expect(report.files!.probed).toBe(5);
    } finally {
      await server.close();
    }
  });
});
