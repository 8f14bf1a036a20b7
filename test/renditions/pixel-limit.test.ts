/**
 * `--pixel-limit` counts the pixels an original's decode makes: every frame of an animation, and
 * only the first page of a TIFF (a pyramid's smaller copies are never decoded).
 */
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { readSourceInfo } from '../../src/renditions/decode.js';
import { renderOriginal } from '../../src/renditions/render.js';
import { animatedGif, writeImage } from '../fixtures/images.js';
import { tempDir } from '../fixtures/tmp.js';

describe('the pixel limit', () => {
  it("counts a pyramidal TIFF's first page only, and renders it within the limit", async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'pyramid.tif');
    await sharp({ create: { width: 3000, height: 3000, channels: 3, background: '#808080' } })
      .tiff({ pyramid: true, tile: true })
      .toFile(file);
    expect((await sharp(file).metadata()).pages).toBe(5);
    // 9 M pixels decoded, though five pages hold 12 M.
    expect((await readSourceInfo(file, file, 10_000_000)).size).toEqual({ width: 3000, height: 3000 });
    await expect(readSourceInfo(file, file, 8_000_000)).rejects.toThrow(/3000x3000 exceeds the pixel limit of 8000000/);
    const result = await renderOriginal(file, { outDir: path.join(dir, 'out'), pixelLimit: 10_000_000 });
    expect(result.status).toBe('rendered');
  });

  it('counts every frame of an animation', async () => {
    const animated = await writeImage(await tempDir(), 'frames.gif', await animatedGif(100, 100, 4));
    expect((await sharp(animated).metadata()).pages).toBe(4);
    await expect(readSourceInfo(animated, animated, 30_000)).rejects.toThrow(
      /100x100 x 4 frames exceeds the pixel limit of 30000/,
    );
    expect((await readSourceInfo(animated, animated, 50_000)).pages).toBe(4);
  });
});
