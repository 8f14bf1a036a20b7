/**
 * The scans batches: originals far larger in bytes than in the pixels rendered from them,
 * made by the bench itself from the corpus photographs (native-resolution crops, tiled, never
 * resampled) and cached in `.bench/scans-v1/`:
 *   tiff16: two 16-bit RGB TIFF scans, 12000x9000, uncompressed (648 MB each);
 *   mp100: two 100 MP JPEGs (q92) and two 100 MP PNGs, 12000x8400.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

/** Crops `width` x `height` from the centre of each photograph in turn, tiled `columns` across. */
async function tiled(photos, width, height, columns, rows) {
  const [tw, th] = [width / columns, height / rows];
  const tiles = [];
  for (let i = 0; i < columns * rows; i++) {
    const file = photos[i % photos.length];
    const { width: w, height: h } = await sharp(file).metadata();
    const input = await sharp(file)
      .extract({ left: (w - tw) >> 1, top: (h - th) >> 1, width: tw, height: th })
      .raw()
      .toBuffer();
    tiles.push({
      input,
      raw: { width: tw, height: th, channels: 3 },
      left: (i % columns) * tw,
      top: Math.floor(i / columns) * th,
    });
  }
  const canvas = await sharp({ create: { width, height, channels: 3, background: '#000' }, limitInputPixels: false })
    .composite(tiles)
    .raw()
    .toBuffer();
  return sharp(canvas, { raw: { width, height, channels: 3 }, limitInputPixels: false });
}

/** Builds (or reuses) the scans batches from the photographs in the corpus' `mixed` folder. */
export async function buildScans(root, mixed) {
  const scans = path.join(root, 'scans-v1');
  const tiff16 = path.join(scans, 'tiff16');
  const mp100 = path.join(scans, 'mp100');
  if (existsSync(path.join(scans, 'SOURCES.txt'))) return { tiff16, mp100 };
  rmSync(scans, { recursive: true, force: true });
  mkdirSync(tiff16, { recursive: true });
  mkdirSync(mp100, { recursive: true });
  const photos = readdirSync(mixed)
    .filter((name) => /^(kleiber|seeding|elephants|mosaic-[abc])\.jpg$/.test(name))
    .sort()
    .map((name) => path.join(mixed, name));
  const plan = [
    [tiff16, 'scan-a.tif', 12000, 9000, 3, 4, (image) => image.toColourspace('rgb16').tiff({ compression: 'none' })],
    [tiff16, 'scan-b.tif', 12000, 9000, 4, 4, (image) => image.toColourspace('rgb16').tiff({ compression: 'none' })],
    [mp100, 'plate-a.jpg', 12000, 8400, 3, 3, (image) => image.jpeg({ quality: 92 })],
    [mp100, 'plate-b.jpg', 12000, 8400, 4, 3, (image) => image.jpeg({ quality: 92 })],
    [mp100, 'plate-c.png', 12000, 8400, 3, 3, (image) => image.png({ compressionLevel: 6 })],
    [mp100, 'plate-d.png', 12000, 8400, 4, 3, (image) => image.png({ compressionLevel: 6 })],
  ];
  const sources = [];
  for (const [dir, name, width, height, columns, rows, encode] of plan) {
    const target = path.join(dir, name);
    console.error(`scans: ${name} (${width}x${height})`);
    const rotated = [
      ...photos.slice(sources.length % photos.length),
      ...photos.slice(0, sources.length % photos.length),
    ];
    await encode(await tiled(rotated, width, height, columns, rows)).toFile(`${target}.partial`);
    renameSync(`${target}.partial`, target);
    sources.push(
      `${name}: ${width}x${height}, ${columns}x${rows} native-resolution crops of the corpus photographs ` +
        '(see corpus SOURCES.txt)',
    );
  }
  writeFileSync(path.join(scans, 'SOURCES.txt'), `${sources.join('\n')}\n`);
  return { tiff16, mp100 };
}
