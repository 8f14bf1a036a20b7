/**
 * The text format of a fingerprint: `f1:` and 92 base64url characters, 95 in all, holding 69 bytes:
 * the size (two 16-bit words, each clamped to 65535), the hash's energy (one byte, on a log scale),
 * 64 sign bits, 64 "strong" bits (hash.ts) and 16 CIELAB cells of 3 bytes each (colour.ts), L*
 * linear, a* and b* companded.
 */
import { ContentApiError } from '../errors.js';
import { CELLS } from './colour.js';

/** The version prefix of the fingerprints this module writes and reads. */
export const FINGERPRINT_VERSION = 'f1';

/** A fingerprint that cannot be read: malformed, or of another version. */
export class FingerprintError extends ContentApiError {
  override name = 'FingerprintError';
  constructor(message: string) {
    super('CONTENT_API_FINGERPRINT', message);
  }
}

/** What a fingerprint holds, decoded (`parseFingerprint`). */
export interface Fingerprint {
  /** The pixel size it was taken at (each clamped to 65535). */
  readonly width: number;
  readonly height: number;
  /** RMS of the 63 low AC DCT coefficients of the 32x32 luma (8-bit units): ~0 for a flat picture. */
  readonly energy: number;
  /** Bit `v * 8 + u`: the sign (set: positive) of DCT coefficient (u, v); bit 0 (DC) unused. */
  readonly signs: bigint;
  /** Bit `v * 8 + u`: coefficient (u, v) is among the stronger half of the 63 AC coefficients. */
  readonly strong: bigint;
  /** 4x4 cells, row by row, of [L*, a*, b*] (CIELAB, D65), as stored (quantised). */
  readonly lab: readonly (readonly [number, number, number])[];
}

/** What a fingerprint is written from, before quantising (`encodeFingerprint`). */
export interface FingerprintParts {
  /** The pixel size of the picture. */
  readonly width: number;
  readonly height: number;
  /** The hash (`perceptualHash`): the RMS of its 63 AC coefficients, their signs and the strong ones. */
  readonly rms: number;
  readonly signs: bigint;
  readonly strong: bigint;
  /** The 4x4 cells' colours (`colourCells`), row by row, in CIELAB. */
  readonly cells: ReadonlyArray<readonly [number, number, number]>;
}

const BYTES = 4 + 1 + 8 + 8 + CELLS * CELLS * 3;

/** The fingerprint string of `parts`, quantised. */
export function encodeFingerprint(parts: FingerprintParts): string {
  const { width, height, rms, signs, strong, cells } = parts;
  const bytes = new Uint8Array(BYTES);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, Math.min(width, 65535));
  view.setUint16(2, Math.min(height, 65535));
  bytes[4] = quantiseEnergy(rms);
  view.setBigUint64(5, signs);
  view.setBigUint64(13, strong);
  for (let i = 0; i < CELLS * CELLS; i++) {
    const [l, a, b] = cells[i]!;
    bytes[21 + 3 * i] = Math.round(Math.min(100, Math.max(0, l)) * 2.55);
    bytes[22 + 3 * i] = encodeChroma(a);
    bytes[23 + 3 * i] = encodeChroma(b);
  }
  return `${FINGERPRINT_VERSION}:${Buffer.from(bytes).toString('base64url')}`;
}

/**
 * Decodes a fingerprint string.
 *
 * @throws FingerprintError when it is not a fingerprint, or one of another version.
 */
export function parseFingerprint(text: string): Fingerprint {
  const shown = JSON.stringify(text.length > 24 ? `${text.slice(0, 24)}…` : text);
  const colon = text.indexOf(':');
  const version = colon < 0 ? '' : text.slice(0, colon);
  if (!/^f\d+$/.test(version)) throw new FingerprintError(`${shown} is not a picture fingerprint`);
  if (version !== FINGERPRINT_VERSION) {
    throw new FingerprintError(
      `${shown}: fingerprint version ${version} cannot be read (this version reads ${FINGERPRINT_VERSION})`,
    );
  }
  const body = text.slice(colon + 1);
  const bytes = /^[A-Za-z0-9_-]*$/.test(body) ? Buffer.from(body, 'base64url') : Buffer.alloc(0);
  if (bytes.length !== BYTES) throw new FingerprintError(`${shown}: malformed fingerprint`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lab: Array<[number, number, number]> = [];
  for (let i = 0; i < CELLS * CELLS; i++) {
    lab.push([bytes[21 + 3 * i]! / 2.55, decodeChroma(bytes[22 + 3 * i]!), decodeChroma(bytes[23 + 3 * i]!)]);
  }
  return {
    width: view.getUint16(0),
    height: view.getUint16(2),
    energy: 2 ** (bytes[4]! / 16) - 1,
    signs: view.getBigUint64(5),
    strong: view.getBigUint64(13),
    lab,
  };
}

function quantiseEnergy(rms: number): number {
  return Math.min(255, Math.round(16 * Math.log2(1 + rms)));
}

/** Stored a* and b*: companded (finer near grey), 128 for 0. */
const CHROMA_SCALE = 127 / Math.sqrt(128);

function encodeChroma(value: number): number {
  const code = Math.round(Math.sign(value) * Math.sqrt(Math.min(128, Math.abs(value))) * CHROMA_SCALE);
  return Math.min(255, Math.max(1, 128 + code));
}

function decodeChroma(code: number): number {
  const scaled = (code - 128) / CHROMA_SCALE;
  return Math.sign(scaled) * scaled * scaled;
}
