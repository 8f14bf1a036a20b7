/**
 * The floor under any pipeline: CPU time that no way of making the five files can avoid,
 * measured op by op in this process. Any pipeline must make the xl file from the original,
 * which costs at least one fused decode -> resize -> encode stream (what the naive approach
 * does for xl), and must encode the four smaller files, which costs at least their encodes
 * from ready pixels. Nothing else is counted, so this is a lower bound on CPU seconds, and
 * naive CPU / floor CPU bounds any pipeline's speed-up over naive while the cores are busy
 * (as they are at concurrency = cores). The four smaller sizes must also be resized from
 * something: `resizeSeconds` is the cheapest way measured, each from the next larger one's
 * pixels (the cascade), reported beside the floor, not in it.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { RENDITION_KEYS, renditionSizes } from '../dist/api/model.js';

const QUALITY = { jpeg: { quality: 80 }, webp: { quality: 80 }, png: {} };

async function cpu(op) {
  const before = process.cpuUsage();
  const result = await op();
  const used = process.cpuUsage(before);
  return { result, seconds: (used.user + used.system) / 1e6 };
}

/** { xlSeconds, smallerSeconds, resizeSeconds } summed over the originals in `folder`. */
export async function pipelineFloor(folder) {
  let xlSeconds = 0;
  let smallerSeconds = 0;
  let resizeSeconds = 0;
  for (const name of readdirSync(folder)
    .filter((f) => !f.startsWith('.'))
    .sort()) {
    const file = path.join(folder, name);
    const meta = await sharp(file).metadata();
    const { format } = meta;
    const sizes = renditionSizes({ width: meta.width, height: meta.height });
    const fit = (key) => ({ width: sizes[key].width, height: sizes[key].height, fit: 'fill' });
    xlSeconds += (
      await cpu(() => sharp(file).autoOrient().resize(fit('xl')).toFormat(format, QUALITY[format]).toBuffer())
    ).seconds;
    // Pixels for the smaller files, each resized from the next larger one's.
    let pixels = await sharp(file).autoOrient().resize(fit('xl')).raw().toBuffer({ resolveWithObject: true });
    for (const key of RENDITION_KEYS.filter((k) => k !== 'xl').reverse()) {
      const larger = pixels;
      const resized = await cpu(() =>
        sharp(larger.data, { raw: larger.info }).resize(fit(key)).raw().toBuffer({ resolveWithObject: true }),
      );
      resizeSeconds += resized.seconds;
      pixels = resized.result;
      smallerSeconds += (
        await cpu(() => sharp(pixels.data, { raw: pixels.info }).toFormat(format, QUALITY[format]).toBuffer())
      ).seconds;
    }
  }
  return { xlSeconds, smallerSeconds, resizeSeconds };
}
