/**
 * The quality cost of deriving each rendition from the previous one: PSNR of content-api's
 * written renditions, and of a direct single-step resize encoded the same way, both against
 * the direct resize's unencoded pixels.
 */
import path from 'node:path';
import sharp from 'sharp';
import { RENDITION_KEYS } from '../dist/index.js';

function psnr(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  const mse = sum / a.length;
  return mse === 0 ? Infinity : 10 * Math.log10((255 * 255) / mse);
}

const rgb = (input) => sharp(input).removeAlpha().toColourspace('srgb').raw().toBuffer();

/** For each result (from renderOriginals), PSNR per rendition key: { ours, direct }. */
export async function cascadeQuality(results, outDir) {
  const rows = [];
  for (const result of results) {
    const row = { source: path.basename(result.source) };
    for (const key of RENDITION_KEYS) {
      const { width, height, path: file } = result.files[key];
      const directPipeline = () => sharp(result.source).autoOrient().resize(width, height, { fit: 'fill' });
      const reference = await rgb(await directPipeline().png({ compressionLevel: 0 }).toBuffer());
      const ours = await rgb(path.join(outDir, file));
      const options = result.format === 'png' || result.format === 'gif' ? {} : { quality: 80 };
      const direct = await rgb(await directPipeline().toFormat(result.format, options).toBuffer());
      row[key] = { ours: psnr(ours, reference), direct: psnr(direct, reference) };
    }
    rows.push(row);
  }
  return rows;
}
