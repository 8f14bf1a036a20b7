/**
 * `check` and versioned URLs (`?v=<first 8 hex of the file's SHA-256>`, as `render` writes them):
 * accepted by every rule of the Image object; with `--verify-files` (a folder, or a base URL over
 * real HTTP), a version that is not its file's is a `file-version` finding naming both, also
 * with `file-picture` off; `"file-version": "off"` drops it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderOriginals } from '../../src/renditions/render.js';
import { runCli } from '../cli/run-cli.js';
import { photo, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionOfFile } from '../fixtures/versions.js';
import { startMediaServer } from './media-server.js';

/** Two originals rendered, and a page holding their Image objects and a meta.thumb naming one rendition. */
async function rendered() {
  const dir = await tempDir();
  await writeImage(dir, 'in/lake.jpg', photo(1600, 1000).jpeg());
  await writeImage(dir, 'in/dune.png', photo(700, 500).png());
  const media = path.join(dir, 'media');
  const report = await renderOriginals([path.join(dir, 'in')], { outDir: media });
  expect(report.failures).toEqual([]);
  const [dune, lake] = report.results;
  const page = { id: 1, images: [lake!.image, dune!.image], meta: { thumb: { ...lake!.image.sizes.sm } } };
  const file = path.join(dir, 'page.json');
  await writeFile(file, JSON.stringify(page, null, 2));
  return { dir, media, file, at: (name: string) => path.join(media, name) };
}

/** The findings of the Image and file rules (the page is no Content API page: its schema's are not the point). */
async function check(file: string, args: string[] = [], cwd?: string) {
  const result = await runCli(['check', file, ...args, '--reporter', 'json'], cwd ? { cwd } : {});
  const problems = JSON.parse(result.stdout).pages[0].problems as Array<{
    rule: string;
    path: string;
    message: string;
  }>;
  return problems.filter((p) => /^(image|file)-/.test(p.rule));
}

describe('check and URL versions', () => {
  it('accepts versioned URLs: no finding without --verify-files, nor with it on the files render wrote', async () => {
    const { file, media, at } = await rendered();
    // The page names each file with its version.
    const text = await readFile(file, 'utf8');
    expect(text).toContain(`/media/lake.max-600x600.jpg?v=${await versionOfFile(at('lake.max-600x600.jpg'))}"`);
    expect(text).toContain(`/media/dune.max-300x300.png?v=${await versionOfFile(at('dune.max-300x300.png'))} 300w`);
    expect(await check(file)).toEqual([]);
    expect(await check(file, ['--verify-files', media])).toEqual([]);
  });

  it("a version that is not its file's is a file-version finding, at each URL naming the file", async () => {
    const { file, media, at } = await rendered();
    // lake's 600 px rendition replaced by another encode of the same size: another version.
    await writeImage(media, 'lake.max-600x600.jpg', photo(600, 375).jpeg({ quality: 40 }));
    const version = await versionOfFile(at('lake.max-600x600.jpg'));
    const given = /lake\.max-600x600\.jpg\?v=([0-9a-f]{8})/.exec(await readFile(file, 'utf8'))![1];
    expect(given).not.toBe(version);
    const message =
      `${at('lake.max-600x600.jpg')} is version ${version} (its SHA-256's first 8 hex digits), ` +
      `its URL says v=${given}`;
    expect(await check(file, ['--verify-files', media])).toEqual([
      { severity: 'error', rule: 'file-version', path: '$.images[0].sizes.sm.url', message },
      { severity: 'error', rule: 'file-version', path: '$.meta.thumb.url', message },
    ]);
  });

  it('over HTTP too, and with file-picture off; "file-version": "off" drops it', async () => {
    const { dir, file, media } = await rendered();
    await writeImage(media, 'dune.max-300x300.png', photo(300, 214).png({ compressionLevel: 1 }));
    const server = await startMediaServer(media);
    try {
      const http = await check(file, ['--verify-files', server.base]);
      expect(http.map((p) => `${p.rule} ${p.path}`)).toEqual(['file-version $.images[1].sizes.xs.url']);
      expect(http[0]!.message).toMatch(
        new RegExp(`^${server.base}/media/dune\\.max-300x300\\.png is version [0-9a-f]{8} `),
      );

      await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify({ rules: { 'file-picture': 'off' } }));
      const noPicture = await check(file, ['--verify-files', media], dir);
      expect(noPicture.map((p) => `${p.rule} ${p.path}`)).toEqual(['file-version $.images[1].sizes.xs.url']);

      await writeFile(path.join(dir, 'content-api.config.json'), JSON.stringify({ rules: { 'file-version': 'off' } }));
      expect(await check(file, ['--verify-files', media], dir)).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
