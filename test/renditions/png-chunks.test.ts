/**
 * A PNG's chunks before its pixels are bounded (PNG_HEADER_LIMIT): libspng holds them all in memory
 * when the header is read. The same bytes after the pixels, or a large but reasonable profile, are fine.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { pngHeaderExcess } from '../../src/renditions/png-chunks.js';
import { renderOriginal } from '../../src/renditions/render.js';
import { pngChunk } from '../fixtures/png.js';
import { tempDir } from '../fixtures/tmp.js';

/** A 1x1 PNG with `count` tEXt chunks of `size` bytes each, before its pixels or after them. */
async function textPng(count: number, size: number, where: 'before' | 'after'): Promise<Buffer> {
  const png = await sharp({ create: { width: 1, height: 1, channels: 3, background: '#c03' } })
    .png()
    .toBuffer();
  const text = pngChunk('tEXt', Buffer.concat([Buffer.from('Comment\0'), Buffer.alloc(size, 65)]));
  const chunks = Array.from({ length: count }, () => text);
  // The signature and IHDR take 33 bytes; IEND the last 12.
  const at = where === 'before' ? 33 : png.length - 12;
  return Buffer.concat([png.subarray(0, at), ...chunks, png.subarray(at)]);
}

describe("a PNG's chunks before its pixels", () => {
  it('over 16 MiB: the original fails in one line naming the chunks, before any decoder reads them', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'bomb.png');
    await writeFile(file, await textPng(20, 1 << 20, 'before'));
    expect(await pngHeaderExcess(file)).toMatchObject({ types: ['tEXt'] });
    const result = renderOriginal(file, { outDir: path.join(dir, 'out') });
    await expect(result).rejects.toMatchObject({ code: 'CONTENT_API_METADATA_LIMIT' });
    await expect(result).rejects.toThrow(
      /bomb\.png: PNG holds over 16 MiB of chunks before its pixels \(mostly tEXt\)/,
    );
  });

  it('the same bytes after the pixels, or 12 MiB before them, render', async () => {
    const dir = await tempDir();
    const after = path.join(dir, 'after.png');
    await writeFile(after, await textPng(20, 1 << 20, 'after'));
    const within = path.join(dir, 'within.png');
    await writeFile(within, await textPng(12, 1 << 20, 'before'));
    for (const file of [after, within]) {
      expect(await pngHeaderExcess(file)).toBeUndefined();
      expect((await renderOriginal(file, { outDir: path.join(dir, 'out') })).status).toBe('rendered');
    }
    // Bytes in memory are walked the same way; what is not a PNG is not looked at.
    expect(await pngHeaderExcess(await textPng(20, 1 << 20, 'before'))).toMatchObject({ types: ['tEXt'] });
    expect(await pngHeaderExcess(Buffer.from('GIF89a'))).toBeUndefined();
  });
});
