/**
 * The one part of the fingerprints that decodes a file, with sharp (through `rawPixels`): the rest
 * of src/picture never imports it.
 */
import { rawPixels } from '../pixels/read.js';
import { fingerprint } from './fingerprint.js';

/**
 * The fingerprint of an image file or encoded bytes, decoded as displayed (EXIF orientation applied,
 * converted to sRGB) with sharp.
 *
 * @param name what to call the input in an error (defaults to the path, or "image buffer").
 * @throws SourceError naming the input when it is missing or cannot be decoded.
 */
export async function fingerprintFile(input: string | Uint8Array, name?: string): Promise<string> {
  return fingerprint(await rawPixels(input, name));
}
