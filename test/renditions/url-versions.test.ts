/**
 * URLs that change when the picture does: each URL of an Image object (and of its alternates'
 * srcset) carries `?v=`, the first 8 hex digits of its file's SHA-256, recorded in the manifest, so
 * an unchanged original's URLs never change and a changed one's always do. Real files, real sharp;
 * versions computed here from the bytes on disk (test/fixtures/versions.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pictureHtml } from '../../src/markup/picture.js';
import { type RenderResult, renderOriginal } from '../../src/renditions/render.js';
import { RENDITION_KEYS, type RenditionKey } from '../../src/renditions/rules.js';
import { resolveSettings } from '../../src/renditions/settings.js';
import { settingsKey } from '../../src/renditions/settings-key.js';
import { photo, writeImage } from '../fixtures/images.js';
import { recordFile } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';
import { versioned, versionOfFile } from '../fixtures/versions.js';

/** Each size's URL as it must be: `/media/<path>?v=<version of the file written>`. */
async function expectedUrls(out: string, files: RenderResult['files']): Promise<Record<RenditionKey, string>> {
  const urls = await Promise.all(
    RENDITION_KEYS.map(async (key) => [
      key,
      await versioned(`/media/${files[key].path}`, path.join(out, files[key].path)),
    ]),
  );
  return Object.fromEntries(urls);
}

const urlsOf = (result: RenderResult) => RENDITION_KEYS.map((key) => result.image.sizes[key].url);

const manifestEntry = async (out: string, key: string) =>
  JSON.parse(await readFile(recordFile(out, key), 'utf8')).entry;

describe('URL versions', () => {
  it("each URL and srcset entry carries its file's version, which the manifest records", async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'lake.jpg', photo(1000, 700).jpeg());
    const out = path.join(dir, 'media');
    const result = await renderOriginal(source, { outDir: out });
    const urls = await expectedUrls(out, result.files);
    for (const key of RENDITION_KEYS) expect(result.image.sizes[key].url).toBe(urls[key]);
    expect(result.image.srcset).toBe(
      RENDITION_KEYS.map((key) => `${urls[key]} ${result.image.sizes[key].width}w`).join(', '),
    );
    // lg and xl are the same pixels (the original is under 2400 px), written once each: one version.
    expect(urls.lg.split('?')[1]).toBe(urls.xl.split('?')[1]);
    const entry = await manifestEntry(out, 'lake.jpg');
    for (const key of RENDITION_KEYS) {
      expect(entry.renditions[key].version).toBe(await versionOfFile(path.join(out, result.files[key].path)));
      expect(result.files[key].version).toBe(entry.renditions[key].version);
    }
  });

  it('an unchanged original keeps its URLs; replaced by another picture, every URL changes', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'lake.jpg', photo(1000, 700).jpeg());
    const out = path.join(dir, 'media');
    const first = await renderOriginal(source, { outDir: out });
    const again = await renderOriginal(source, { outDir: out });
    expect(again.status).toBe('skipped');
    expect(again.image).toEqual(first.image);

    await writeImage(dir, 'lake.jpg', photo(1000, 700).negate().jpeg());
    const replaced = await renderOriginal(source, { outDir: out });
    expect(replaced.status).toBe('rendered');
    // The same file names, each with a new version: the new file's.
    expect(replaced.files).toMatchObject(
      Object.fromEntries(RENDITION_KEYS.map((key) => [key, { path: first.files[key].path }])),
    );
    expect(Object.values(await expectedUrls(out, replaced.files))).toEqual(urlsOf(replaced));
    for (const [index, url] of urlsOf(replaced).entries()) expect(url).not.toBe(urlsOf(first)[index]);
  });

  it('a record from before versions gets them from its files, once, and keeps them', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'lake.jpg', photo(1000, 700).jpeg());
    const out = path.join(dir, 'media');
    const first = await renderOriginal(source, { outDir: out, formats: ['keep', 'webp'] });
    // The records as a version without URL versions wrote them.
    for (const key of ['lake.jpg', 'lake.webp']) {
      const record = JSON.parse(await readFile(recordFile(out, key), 'utf8'));
      for (const rendition of Object.values(record.entry.renditions))
        delete (rendition as { version?: string }).version;
      await writeFile(recordFile(out, key), JSON.stringify(record));
    }

    const older = await renderOriginal(source, { outDir: out, formats: ['keep', 'webp'] });
    expect(older.status).toBe('skipped');
    expect(older.image).toEqual(first.image);
    expect(older.alternates[0]!.srcset).toBe(first.alternates[0]!.srcset);
    for (const key of ['lake.jpg', 'lake.webp'])
      for (const rendition of RENDITION_KEYS)
        expect((await manifestEntry(out, key)).renditions[rendition].version).toMatch(/^[0-9a-f]{8}$/);

    // Recorded now: the next run reads no rendition. (Its bytes replaced at the same size, a file
    // still counts as there; its URL keeps the version recorded.)
    const xs = path.join(out, first.files.xs.path);
    await writeFile(xs, Buffer.alloc((await readFile(xs)).length, 0x20));
    const next = await renderOriginal(source, { outDir: out, formats: ['keep', 'webp'] });
    expect(next.status).toBe('skipped');
    expect(next.image).toEqual(first.image);
  });

  it('--no-url-versions: plain URLs over the same files, which are not rendered again for it', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'lake.jpg', photo(1000, 700).jpeg());
    const out = path.join(dir, 'media');
    const plain = await renderOriginal(source, { outDir: out, urlVersions: false, formats: ['keep', 'webp'] });
    expect(urlsOf(plain)).toEqual(RENDITION_KEYS.map((key) => `/media/${plain.files[key].path}`));
    expect(plain.image.srcset).toBe(
      RENDITION_KEYS.map((key) => `/media/${plain.files[key].path} ${plain.files[key].width}w`).join(', '),
    );
    expect(plain.alternates[0]!.srcset).toBe(
      RENDITION_KEYS.map(
        (key) => `/media/${plain.alternates[0]!.files[key].path} ${plain.alternates[0]!.files[key].width}w`,
      ).join(', '),
    );
    // It changes URLs, not bytes: not in the manifest's settings key, so turning it on renders nothing.
    expect(settingsKey(resolveSettings({ urlVersions: false }), 'jpeg')).toBe(settingsKey(resolveSettings({}), 'jpeg'));
    const on = await renderOriginal(source, { outDir: out, formats: ['keep', 'webp'] });
    expect(on.status).toBe('skipped');
    expect(urlsOf(on)).toEqual(Object.values(await expectedUrls(out, on.files)));
  });

  it('markup: <source srcset> and <img> carry the versions of their own files', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'lake.jpg', photo(1500, 1000).jpeg());
    const out = path.join(dir, 'media');
    const result = await renderOriginal(source, { outDir: out, formats: ['keep', 'webp'] });
    const webp = result.alternates[0]!;
    const webpUrls = await expectedUrls(out, webp.files);
    const jpegUrls = await expectedUrls(out, result.files);
    const html = pictureHtml(result);
    // lg and xl are one width (1500): listed once.
    const srcset = (urls: Record<RenditionKey, string>) =>
      (['xs', 'sm', 'md', 'lg'] as const).map((key) => `${urls[key]} ${result.files[key].width}w`).join(', ');
    expect(html).toContain(`<source type="image/webp" srcset="${srcset(webpUrls)}"`);
    expect(html).toContain(`<img src="${jpegUrls.md}" srcset="${srcset(jpegUrls)}"`);
  });

  it('a dry run plans URLs without versions for files not yet written, with them for files up to date', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'lake.jpg', photo(1000, 700).jpeg());
    const out = path.join(dir, 'media');
    const planned = await renderOriginal(source, { outDir: out, dryRun: true });
    expect(planned.status).toBe('planned');
    expect(urlsOf(planned)).toEqual(RENDITION_KEYS.map((key) => `/media/${planned.files[key].path}`));
    const rendered = await renderOriginal(source, { outDir: out });
    const upToDate = await renderOriginal(source, { outDir: out, dryRun: true });
    expect(upToDate.image).toEqual(rendered.image);
    expect(urlsOf(upToDate)).toEqual(Object.values(await expectedUrls(out, upToDate.files)));
  });
});
