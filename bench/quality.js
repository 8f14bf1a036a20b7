/**
 * The quality cost of deriving each rendition from the previous one's pixels.
 *
 * Renditions are rendered as PNG (lossless, so the files hold exactly the pipeline's pixels)
 * and compared, as PSNR in dB, with (a) a direct single-step sharp resize of the original,
 * as the issue asks, and (b) an exact Lanczos-3 downscale (bench/lanczos.js), against which
 * both the cascade and sharp's direct resize are measured.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { RENDITION_KEYS } from '../dist/api/model.js';
import { renderOriginals } from '../dist/index.js';
import { lanczosResize } from './lanczos.js';

function psnr(a, b) {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  return sum === 0 ? Infinity : 10 * Math.log10((255 * 255) / (sum / a.length));
}

const rgb = (input) => sharp(input).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });

/** Rows of { source, key: { vsDirect, cascadeVsExact, directVsExact } } for each original file. */
export async function cascadeQuality(files) {
  const outDir = mkdtempSync(path.join(tmpdir(), 'content-api-quality-'));
  const rows = [];
  for (const file of files) {
    const [result] = (await renderOriginals([file], { outDir, formats: ['png'], force: true })).results;
    const original = await rgb(file);
    const row = { source: path.basename(file) };
    for (const key of RENDITION_KEYS) {
      const { width, height, path: rendition } = result.files[key];
      const ours = (await rgb(path.join(outDir, rendition))).data;
      const direct = (await rgb(await sharp(file).autoOrient().resize(width, height, { fit: 'fill' }).png().toBuffer()))
        .data;
      const exact = lanczosResize(original.data, original.info.width, original.info.height, 3, width, height);
      row[key] = {
        vsDirect: psnr(ours, direct),
        cascadeVsExact: psnr(ours, exact),
        directVsExact: psnr(direct, exact),
      };
    }
    rows.push(row);
  }
  return rows;
}
