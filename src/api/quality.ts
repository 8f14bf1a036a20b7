/**
 * content-api/quality: SSIMULACRA2 2.1 over raw pixels, the worker threads `--quality auto` scores
 * in, and what it found. Every name here is documented in docs/library.md, and
 * test/public-api.test.ts pins the list.
 */
// biome-ignore-all assist/source/organizeImports: grouped by part of the tool, in the order of docs/library.md

// Measured quality: SSIMULACRA2 2.1 over raw pixels, and what --quality auto found.
export type { Measured } from '../quality/auto.js';
export { RELAXED_SIMD_FLAG } from '../quality/prepared-wasm.js';
export { rawPixels } from '../pixels/read.js';
export { ScorePool, type ScorePoolOptions } from '../quality/score-pool.js';
export { type PreparedSsimulacra2, prepareSsimulacra2, type RawPixels, ssimulacra2 } from '../quality/ssimulacra2.js';
