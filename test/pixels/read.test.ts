/** rawPixels: files and buffers decoded with real sharp to the 8-bit sRGB pixels the metrics take. */
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { SourceError } from '../../src/errors.js';
import { rawPixels } from '../../src/pixels/read.js';
import { orientedImage } from '../fixtures/images.js';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/quality');

describe('rawPixels', () => {
  it('decodes a file to interleaved 8-bit RGB', async () => {
    const { data, info } = await rawPixels(path.join(FIXTURES, 'tank-301x199.png'));
    expect(info).toEqual({ width: 301, height: 199, channels: 3 });
    expect(data.length).toBe(301 * 199 * 3);
  });

  it('keeps alpha', async () => {
    const { info } = await rawPixels(path.join(FIXTURES, 'marigold-240x200-alpha-q60.webp'));
    expect(info).toEqual({ width: 240, height: 200, channels: 4 });
  });

  it('applies EXIF orientation (pixels as displayed)', async () => {
    const { data, info } = await rawPixels(await (await orientedImage(6)).toBuffer());
    expect([info.width, info.height]).toEqual([20, 40]);
    // Red in the displayed top-left quarter.
    expect(data[0]).toBeGreaterThan(200);
    expect(data[2]).toBeLessThan(60);
  });

  it('turns grey into RGB', async () => {
    const grey = await sharp({ create: { width: 9, height: 9, channels: 3, background: '#808080' } })
      .toColourspace('b-w')
      .png()
      .toBuffer();
    const { data, info } = await rawPixels(grey);
    expect(info.channels).toBe(3);
    expect([...data.subarray(0, 3)]).toEqual([128, 128, 128]);
  });

  it('throws SourceError naming the input when it is missing or not an image', async () => {
    const missing = path.join(FIXTURES, 'no-such-file.png');
    await expect(rawPixels(missing)).rejects.toMatchObject({
      name: 'SourceError',
      code: 'CONTENT_API_UNREADABLE',
      message: `${missing}: no such file`,
    });
    await expect(rawPixels(Buffer.from('not an image'), 'upload.png')).rejects.toThrow(SourceError);
    await expect(rawPixels(Buffer.from('not an image'), 'upload.png')).rejects.toMatchObject({
      code: 'CONTENT_API_UNSUPPORTED_FORMAT',
      message: 'upload.png: not an image in a supported format',
    });
  });
});
