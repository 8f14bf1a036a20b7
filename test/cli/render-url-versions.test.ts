/**
 * The built binary: `--json`, `--html` and `render --page --write-page` give the same versioned
 * URLs for the same files (`?v=`, the first 8 hex digits of each file's SHA-256, computed here
 * from the files written), and `--no-url-versions` none.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findImages } from '../../src/page/walk.js';
import { tempDir } from '../fixtures/tmp.js';
import { versionedIn } from '../fixtures/versions.js';
import { PAGES } from '../page/variants.js';
import { runCli } from './run-cli.js';

const ORIGINALS = path.resolve(PAGES, '../originals');
const PAGE = path.resolve(PAGES, '../content/pages/101.json');

interface Image {
  sizes: Record<string, { url: string }>;
  srcset?: string;
}

/** Every URL an Image names, in `sizes` and in `srcset`. */
const urlsOf = (image: Image) => [
  ...Object.values(image.sizes).map((size) => size.url),
  ...(image.srcset ?? '').split(', ').flatMap((entry) => (entry ? [entry.split(' ')[0]!] : [])),
];

describe('render: the same versioned URLs in --json, --html and --write-page', () => {
  it('each names its file with its version; an up-to-date rerun, --html and a page rendered into the folder agree', async () => {
    const dir = await tempDir();
    const out = path.join(dir, 'media');
    const json = await runCli(['render', ORIGINALS, '--out', out, '--json']);
    expect(json.code, json.stderr).toBe(0);
    const results = JSON.parse(json.stdout).results as Array<{ source: string; image: Image }>;
    const urls = results.flatMap((result) => urlsOf(result.image));
    expect(urls.length).toBe(results.length * 10);
    for (const url of urls) expect(url).toBe(await versionedIn(out, url.split('?')[0]!));

    // Up to date: --html names the very same URLs: md's as src, each srcset entry of a width not
    // listed before it (an original under a box repeats a width, which HTML allows once).
    const html = await runCli(['render', ORIGINALS, '--out', out, '--html']);
    expect(html.code, html.stderr).toBe(0);
    const inHtml = [...html.stdout.matchAll(/(?:src|srcset)="([^"]*)"/g)].flatMap((match) =>
      match[1]!.split(', ').map((entry) => entry.split(' ')[0]!),
    );
    const expected = results.flatMap(({ image }) => {
      const widths = new Set<string>();
      const entries = image
        .srcset!.split(', ')
        .filter((entry) => !widths.has(entry.split(' ')[1]!) && widths.add(entry.split(' ')[1]!));
      return [image.sizes.md!.url, ...entries.map((entry) => entry.split(' ')[0]!)];
    });
    expect(new Set(inHtml)).toEqual(new Set(expected));

    // A page whose Images these originals make, rendered into the same folder: nothing rendered
    // again, and its Images name the same URLs.
    const written = path.join(dir, 'page.json');
    const page = await runCli([
      'render',
      '--page',
      PAGE,
      '--originals',
      ORIGINALS,
      '--out',
      out,
      '--write-page',
      written,
      '--json',
    ]);
    expect(page.code, page.stderr).toBe(0);
    expect(JSON.parse(page.stdout).results.map((r: { status: string }) => r.status)).toEqual(Array(6).fill('skipped'));
    const images = [...findImages(JSON.parse(await readFile(written, 'utf8')))];
    expect(images).toHaveLength(18);
    for (const { image } of images) for (const url of urlsOf(image as unknown as Image)) expect(urls).toContain(url);
  });

  it('--no-url-versions: the same files, URLs without a query', async () => {
    const dir = await tempDir();
    const out = path.join(dir, 'media');
    const run = await runCli(['render', path.join(ORIGINALS, 'ladybird.jpg'), '--out', out, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const plain = await runCli([
      'render',
      path.join(ORIGINALS, 'ladybird.jpg'),
      '--out',
      out,
      '--json',
      '--no-url-versions',
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    const [before, after] = [run, plain].map((r) => JSON.parse(r.stdout).results[0]);
    expect(after.status).toBe('skipped');
    expect(urlsOf(after.image)).toEqual(urlsOf(before.image).map((url) => url.split('?')[0]));
  });
});
