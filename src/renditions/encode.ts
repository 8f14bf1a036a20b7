/**
 * The sharp side of writing a rendition: each format's encoder with the batch's settings, a PNG's
 * palette chosen from its pixels, and the encoder `--quality auto` searches with.
 */
import type { Sharp } from 'sharp';
import { sharp } from '../packages/sharp.js';
import type { RawPixels } from '../quality/linear.js';
import type { SearchEncoder } from '../quality/search.js';
import { fromRaw, rawOf } from './decode.js';
import type { OutputFormat } from './formats.js';
import type { PixelSize } from './rules.js';
import type { RenderSettings } from './settings.js';

/** A batch's settings, with the format of the renditions being encoded. */
export type EncodeSettings = Omit<RenderSettings, 'formats'> & { format: OutputFormat };

/** The settings with `format`'s quality set to `quality` (unchanged when undefined). */
export function withQuality(settings: EncodeSettings, quality: number | undefined): EncodeSettings {
  if (quality === undefined) return settings;
  return { ...settings, quality: { ...settings.quality, [settings.format]: quality } };
}

/**
 * The encoder for `settings.format`, with its settings. `palette`: a PNG is written as an 8-bit
 * palette image, exactly (every colour kept: there are at most 256) or quantised (`lossy`).
 */
export function encode(pipeline: Sharp, settings: EncodeSettings, palette: PaletteMode = false): Sharp {
  const { quality, jpeg, png, webp, avif } = settings;
  switch (settings.format) {
    case 'jpeg':
      return pipeline.jpeg({
        quality: quality.jpeg,
        mozjpeg: jpeg.mozjpeg,
        chromaSubsampling: jpeg.chroma,
        quantisationTable: jpeg.table,
      });
    case 'png': {
      const common = { compressionLevel: png.compression, adaptiveFiltering: png.filtering };
      if (palette === 'exact') return pipeline.png({ ...common, palette: true, colours: 256, dither: 0, quality: 100 });
      return pipeline.png(palette === 'lossy' ? { ...common, palette: true } : common);
    }
    case 'webp':
      return pipeline.webp({ quality: quality.webp, effort: webp.effort });
    case 'avif':
      return pipeline.avif({ quality: quality.avif, effort: avif.effort, chromaSubsampling: avif.chroma });
    case 'gif':
      return pipeline.gif();
  }
}

/** How a PNG rendition is written: truecolour (false), a palette of its own colours, or quantised. */
export type PaletteMode = false | 'exact' | 'lossy';

/**
 * `--png-palette` for these pixels: `auto` takes a palette only where it holds every colour (and so
 * needs the pixels, 8-bit sRGB as encoded; the other settings do not look).
 */
export function paletteFor(
  setting: 'auto' | 'lossy' | 'off',
  pixels: { data: Uint8Array; info: { channels: number } } | undefined,
): PaletteMode {
  if (setting === 'off') return false;
  if (setting === 'lossy') return 'lossy';
  if (!pixels) throw new Error('--png-palette auto counts the colours of the pixels, and none were given');
  return countColours(pixels.data, pixels.info.channels, 256) <= 256 ? 'exact' : false;
}

/**
 * `paletteFor` a size not decoded yet (one decoded from the original on its own): `auto` reads its
 * first rows, and the whole of it only where those hold 256 colours or fewer, so that a photograph
 * is told from 8 rows instead of a second decode of the size.
 */
export async function paletteOfImage(
  setting: 'auto' | 'lossy' | 'off',
  image: () => Sharp,
  size: PixelSize,
): Promise<PaletteMode> {
  if (setting !== 'auto') return paletteFor(setting, undefined);
  const rows = Math.min(size.height, 8);
  const strip = await rawOf(image().extract({ left: 0, top: 0, width: size.width, height: rows }));
  if (rows === size.height || countColours(strip.data, strip.info.channels, 256) > 256) {
    return paletteFor(setting, strip);
  }
  return paletteFor(setting, await rawOf(image()));
}

/**
 * The number of distinct colours (alpha included) in raw 8-bit pixels, counted up to `limit + 1`:
 * a photograph stops after a few hundred pixels, a flat artwork is read to the end.
 */
export function countColours(data: Uint8Array, channels: number, limit: number): number {
  const seen = new Set<number>();
  for (let i = 0; i < data.length; i += channels) {
    let colour = 0;
    for (let c = 0; c < channels; c++) colour = colour * 256 + data[i + c]!;
    seen.add(colour);
    if (seen.size > limit) break;
  }
  return seen.size;
}

/** `settings`' encoder at any quality, its files decoded as the metric scores them: what a search tries. */
export function searchEncoder(settings: EncodeSettings): SearchEncoder {
  return {
    encode: (pixels: RawPixels, quality: number) =>
      encode(fromRaw(pixels.data, pixels.info), withQuality(settings, quality)).toBuffer(),
    decode: (data: Buffer) => rawOf(sharp(data)),
  };
}
