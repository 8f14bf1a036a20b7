/**
 * What the CLI sets for its whole process, once, before any other module is loaded (bin/): V8's
 * flags, which Node's docs say may crash or do nothing when changed later. The library never sets
 * them; a program that imports it sets its own.
 */
import { setFlagsFromString } from 'node:v8';
import { RELAXED_SIMD_FLAG, wasmCompiles } from '../quality/prepared-wasm.js';

/** Turns on what this Node has behind a flag and the CLI uses: relaxed SIMD for the metric's WebAssembly. */
export function setRuntimeFlags(): void {
  // Node 20 (V8 11.3) has it behind the flag; later versions have it on. Worker threads started
  // after this share the process's flags.
  if ('WebAssembly' in globalThis && !wasmCompiles()) setFlagsFromString(RELAXED_SIMD_FLAG);
}
