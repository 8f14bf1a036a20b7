/**
 * Placeholders: each result carries the image's dominant colour and a tiny preview, recorded in
 * the manifest so an up-to-date original has the same one without a decode.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { pictureHtml } from '../../src/markup/picture.js';
import { PREVIEW_MAX_CHARS, placeholderOf } from '../../src/renditions/placeholder.js';
import { renderOriginal } from '../../src/renditions/render.js';
import { photo, writeImage } from '../fixtures/images.js';
import { recordFile } from '../fixtures/manifest.js';
import { tempDir } from '../fixtures/tmp.js';

const previewOf = (uri: string) => Buffer.from(uri.replace(/^data:image\/webp;base64,/, ''), 'base64');

describe('placeholders', () => {
  it('a flat picture: its colour, and a preview of its shape', async () => {
    const dir = await tempDir();
    const source = await writeImage(
      dir,
      'red.png',
      sharp({ create: { width: 900, height: 300, channels: 3, background: '#c81e1e' } }),
    );
    const result = await renderOriginal(source, { outDir: path.join(dir, 'media') });
    // The fullest bin of sharp's 16-level histogram, at its low edge: within 16 of the colour.
    const [r, g, b] = [1, 3, 5].map((at) => Number.parseInt(result.placeholder!.color.slice(at, at + 2), 16));
    expect(result.placeholder!.color).toMatch(/^#[0-9a-f]{6}$/);
    expect(Math.abs(r! - 0xc8) <= 16 && Math.abs(g! - 0x1e) <= 16 && Math.abs(b! - 0x1e) <= 16).toBe(true);
    const meta = await sharp(previewOf(result.placeholder!.preview)).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['webp', 32, 11]);
  });

  it('a cut-out: the colour of what shows, never of its transparent pixels', async () => {
    const dir = await tempDir();
    const source = await writeImage(
      dir,
      'cut-out.png',
      sharp({ create: { width: 600, height: 600, channels: 4, background: { r: 76, g: 105, b: 113, alpha: 0 } } })
        .composite([
          { input: { create: { width: 150, height: 150, channels: 4, background: '#c81414' } }, left: 200, top: 200 },
        ])
        .png(),
    );
    const result = await renderOriginal(source, { outDir: path.join(dir, 'media') });
    expect(result.placeholder!.color).toBe('#c81414');
    expect(result.placeholder!.transparent).toBe(true);
    expect((await sharp(previewOf(result.placeholder!.preview)).metadata()).hasAlpha).toBe(true);
  });

  it('is never painted under a transparent image, whichever format a browser picks; is under an opaque one', async () => {
    const dir = await tempDir();
    const cutOut = await writeImage(
      dir,
      'waves.png',
      sharp({ create: { width: 400, height: 300, channels: 4, background: { r: 255, g: 255, b: 255, alpha: 0 } } })
        .composite([{ input: { create: { width: 100, height: 100, channels: 4, background: '#ffffff' } } }])
        .png(),
    );
    const opaque = await writeImage(dir, 'photo.png', photo(400, 300));
    // A JPEG primary is flattened onto white; its WebP alternate, which browsers pick, keeps the transparency.
    const formats = ['jpeg', 'webp'] as const;
    const transparent = await renderOriginal(cutOut, { outDir: path.join(dir, 'media'), formats: [...formats] });
    expect(transparent.placeholder!.transparent).toBe(true);
    const html = pictureHtml(transparent);
    expect(html).toContain('<source type="image/webp"');
    expect(html).not.toContain('style=');
    const plain = await renderOriginal(opaque, { outDir: path.join(dir, 'media'), formats: [...formats] });
    expect(plain.placeholder!.transparent).toBe(false);
    expect(pictureHtml(plain)).toContain(`style="background: ${plain.placeholder!.color} url(data:image/webp;base64,`);
    // Up to date: the same, from the record.
    const again = await renderOriginal(cutOut, { outDir: path.join(dir, 'media'), formats: [...formats] });
    expect(again.status).toBe('skipped');
    expect(again.placeholder).toEqual(transparent.placeholder);
  });

  it('a record from before transparency was recorded: made again once for an original with alpha', async () => {
    const dir = await tempDir();
    const source = await writeImage(
      dir,
      'cut-out.png',
      sharp({ create: { width: 300, height: 300, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png(),
    );
    const out = path.join(dir, 'media');
    const first = await renderOriginal(source, { outDir: out });
    const file = recordFile(out, 'cut-out.png');
    const record = JSON.parse(await readFile(file, 'utf8'));
    delete record.entry.placeholder.transparent;
    await writeFile(file, JSON.stringify(record));
    const again = await renderOriginal(source, { outDir: out });
    expect(again.status).toBe('skipped');
    expect(again.placeholder).toEqual(first.placeholder);
    expect(JSON.parse(await readFile(file, 'utf8')).entry.placeholder.transparent).toBe(true);
  });

  it('a busy picture fits in the URI bound, and an up-to-date original keeps its placeholder', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'noise.png', photo(1200, 1200));
    const out = path.join(dir, 'media');
    const first = await renderOriginal(source, { outDir: out });
    expect(first.placeholder!.preview.length).toBeLessThanOrEqual(PREVIEW_MAX_CHARS);
    expect(first.placeholder!.preview).toMatch(/^data:image\/webp;base64,[A-Za-z0-9+/]+=*$/);
    const again = await renderOriginal(source, { outDir: out });
    expect(again.status).toBe('skipped');
    expect(again.placeholder).toEqual(first.placeholder);
  });

  it('a manifest from before placeholders: made from the smallest rendition, then recorded', async () => {
    const dir = await tempDir();
    const source = await writeImage(dir, 'photo.jpg', photo(640, 480));
    const out = path.join(dir, 'media');
    const first = await renderOriginal(source, { outDir: out });
    const file = recordFile(out, 'photo.jpg');
    const record = JSON.parse(await readFile(file, 'utf8'));
    delete record.entry.placeholder;
    await writeFile(file, JSON.stringify(record));
    const again = await renderOriginal(source, { outDir: out });
    expect(again.status).toBe('skipped');
    expect(again.placeholder).toEqual(await placeholderOf(await readFile(path.join(out, first.files.xs.path))));
    expect(JSON.parse(await readFile(file, 'utf8')).entry.placeholder).toEqual(again.placeholder);
  });
});
