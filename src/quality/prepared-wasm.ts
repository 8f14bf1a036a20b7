/**
 * A prepared SSIMULACRA2 reference in WebAssembly (wasm/ssimulacra2.c): the hot loops of a prepared
 * score (linear light, downsampling, XYB, both blur passes, the products and the error sums) with
 * 128-bit SIMD and relaxed SIMD's fused multiply-add, about 3.5 times the TypeScript's speed
 * (docs/performance.md). Same operations, same order, same rounding: its scores are the TypeScript's.
 *
 * It is used where it can be: relaxed SIMD compiles (Node 21 and later; Node 20 behind V8's
 * `--experimental-wasm-relaxed-simd`, RELAXED_SIMD_FLAG, which an application sets at its start, as
 * the CLI does: this library never changes V8's flags), and the CPU fuses its multiply-adds (FMA;
 * without it the rounding would not be the reference's). Elsewhere, or with CONTENT_API_WASM=0 in
 * the environment, `wasmEngine()` is undefined and the TypeScript runs.
 */
import { type LinearImage, linearTable, type RawPixels } from './linear.js';
import type { RecursiveGaussian } from './recursive-gaussian.js';
import { norms } from './scale.js';
import type { ScaleNorms } from './score.js';
import { SSIMULACRA2_WASM } from './wasm/module.js';
import { NEG_BIAS_CBRT } from './xyb.js';

/** The WebAssembly API used here (@types/node 20 does not declare it). */
interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: object) => { exports: object };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}
/** A compiled module: instantiated once per prepared side. */
export type WasmModule = { readonly compiled: unique symbol };
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
/** Undefined where V8 runs without it (`node --jitless`). */
const WebAssembly = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;

interface Exports {
  readonly __heap_base: { readonly value: number };
  fused(): number;
  set_gaussian(mulIn: number, mulPrev: number, mulPrev2: number, n2: number, d1: number, radius: number): void;
  set_xyb(negBiasCbrt: number): void;
  linear_planes(data: number, pixels: number, channels: number, table: number, r: number, g: number, b: number): void;
  downsample(input: number, width: number, height: number, output: number): void;
  scratch_floats(width: number): number;
  prepare_scale(rgb: number, width: number, height: number, prepared: number, scratch: number): void;
  prepared_norms(prepared: number, rgb: number, width: number, height: number, sums: number, scratch: number): void;
}

const PAGE = 65536;
/**
 * The most memory one prepared side takes (about 67 bytes a pixel: some 30 MP); a larger image is
 * prepared in TypeScript, whose planes need no single block of memory (wasm32 stops at 4 GiB).
 */
const MAX_BYTES = 2 ** 31;

let engine: WasmModule | null | undefined;

/** The V8 flag that gives Node 20 relaxed SIMD; Node 21 and later have it on. */
export const RELAXED_SIMD_FLAG = '--experimental-wasm-relaxed-simd';

/** Whether the environment asks for the TypeScript alone (CONTENT_API_WASM=0). */
export const wasmTurnedOff = (): boolean => process.env.CONTENT_API_WASM === '0';

/** Whether this runtime compiles the metric's WebAssembly (relaxed SIMD on, the JIT on). */
export const wasmCompiles = (): boolean => WebAssembly?.validate(Buffer.from(SSIMULACRA2_WASM, 'base64')) ?? false;

/** The compiled module where it can run with the reference's rounding, else undefined (see above). */
export function wasmEngine(): WasmModule | undefined {
  if (engine === undefined) engine = compile();
  return engine ?? undefined;
}

function compile(): WasmModule | null {
  if (wasmTurnedOff() || !WebAssembly) return null;
  const bytes = Buffer.from(SSIMULACRA2_WASM, 'base64');
  // Node 20 without RELAXED_SIMD_FLAG: the TypeScript (the pool says so once).
  if (!WebAssembly.validate(bytes)) return null;
  try {
    const module = new WebAssembly.Module(bytes);
    return instantiate(module).exports.fused() === 1 ? module : null;
  } catch {
    // A CPU without the SIMD V8 needs, or no address space for a memory (`ulimit -v`): TypeScript.
    return null;
  }
}

/** An instance of the module in a memory of its own. */
interface Instance {
  memory: WasmMemory;
  exports: Exports;
}

/** An instance in a memory of its own, of a few pages: its stack and statics, and some room above. */
function instantiate(module: WasmModule): Instance {
  const memory = new WebAssembly!.Memory({ initial: 4 });
  return { memory, exports: new WebAssembly!.Instance(module, { env: { memory } }).exports as unknown as Exports };
}

/** The most memory a thread keeps of the references it has released (WasmMemories): two samples' sides. */
const KEEP_BYTES = 96 * 2 ** 20;

/**
 * The memories of released references, kept for the next references a thread prepares. A new
 * memory's pages are the kernel's to find and zero, a page fault each, the first time they are
 * written: for a search's reference (67 bytes a pixel), about a third of the CPU of its preparation
 * and scores (docs/performance.md, The metric). A memory kept has its pages already. Kept while
 * their total is at most KEEP_BYTES (a memory larger than that is left to the garbage collector, as
 * without these); they go with their owner, a thread of the score pool.
 */
export class WasmMemories {
  /** Instances whose references were released, smallest memory first. */
  readonly #free: Instance[] = [];

  /** An instance for `bytes`: the smallest kept memory that holds them, else the largest (to grow), else a new one. */
  take(module: WasmModule, bytes: number): Instance {
    const fits = this.#free.findIndex((instance) => instance.memory.buffer.byteLength >= bytes);
    const [instance] = this.#free.splice(fits >= 0 ? fits : this.#free.length - 1, 1);
    return instance ?? instantiate(module);
  }

  /** Keeps `instance` for a later reference, within KEEP_BYTES (the largest ones go first). */
  give(instance: Instance): void {
    this.#free.push(instance);
    this.#free.sort((a, b) => a.memory.buffer.byteLength - b.memory.buffer.byteLength);
    let total = this.#free.reduce((sum, kept) => sum + kept.memory.buffer.byteLength, 0);
    while (total > KEEP_BYTES) total -= this.#free.pop()!.memory.buffer.byteLength;
  }
}

/** A reference's side of one background, prepared in its own WebAssembly memory (`bytes` of it). */
export interface WasmSide {
  readonly bytes: number;
  /** The norms of `distorted` blended over `background` at every scale. */
  norms(distorted: RawPixels, background: number): ScaleNorms[];
  /** Gives its memory back to the WasmMemories it came from, if any; the side is not used after. */
  release(): void;
}

/**
 * `reference` over a grey of level `background` prepared at `sizes` (each scale's, as ssimulacra2.ts's
 * scale loop makes them), blurred with `rg`, in a memory of `memories` if given (else a new one);
 * undefined when it would take more than MAX_BYTES.
 *
 * @throws RangeError when a memory cannot be had (`ulimit -v`: V8 reserves some 10 GiB of address
 *   space for each).
 */
export function prepareWasmSide(
  module: WasmModule,
  reference: RawPixels,
  background: number,
  sizes: ReadonlyArray<Pick<LinearImage, 'width' | 'height'>>,
  rg: RecursiveGaussian,
  memories?: WasmMemories,
): WasmSide | undefined {
  const { width, height } = reference.info;
  // The layout, in bytes from __heap_base, each part 16-byte aligned; the filter's constants first.
  let end = 0;
  const take = (bytes: number) => {
    const offset = end;
    end += Math.ceil(bytes / 16) * 16;
    return offset;
  };
  const constants = take(48 * 4);
  const table = take(256 * 256 * 4);
  const raw = take(width * height * 4); // any image of this size: 1 to 4 channels
  const half = (n: number) => (n + 1) >> 1;
  const linear = [take(3 * width * height * 4), take(3 * half(width) * half(height) * 4)];
  const prepared = sizes.map((size) => take(9 * size.width * size.height * 4));
  const sums = take(18 * 8);
  const instance = memories?.take(module, end) ?? instantiate(module);
  const { memory, exports: wasm } = instance;
  const base = wasm.__heap_base.value;
  const at = (offset: number) => base + offset;
  const tooLarge = () => {
    memories?.give(instance);
    return undefined;
  };
  // The filter's constants, in the memory's first pages, which any memory has: the scratch depends on them.
  const gaussian = at(constants);
  const floats = new Float32Array(memory.buffer, gaussian, 48);
  floats.set(rg.mulIn, 0);
  floats.set(rg.mulPrev, 12);
  floats.set(rg.mulPrev2, 24);
  floats.set(rg.n2, 36);
  floats.set(rg.d1, 40);
  wasm.set_gaussian(gaussian, gaussian + 48, gaussian + 96, gaussian + 144, gaussian + 160, rg.radius);
  wasm.set_xyb(NEG_BIAS_CBRT);
  if (base + end > MAX_BYTES) return tooLarge(); // before the rows' scratch, whose size is an int32
  const scratch = at(take(4 * wasm.scratch_floats(width)));
  if (base + end > MAX_BYTES) return tooLarge();
  const pages = Math.ceil((base + end) / PAGE) - memory.buffer.byteLength / PAGE;
  if (pages > 0) memory.grow(pages);
  let tableOf: number | undefined;
  const useTable = (over: number) => {
    if (over !== tableOf) new Float32Array(memory.buffer, at(table), 256 * 256).set(linearTable(over));
    tableOf = over;
  };

  /** Linear planes of `pixels` at every scale, each handed to `each` with its scale's index. */
  const scales = (pixels: RawPixels, over: number, each: (scale: number, rgb: number) => void) => {
    useTable(over);
    new Uint8Array(memory.buffer, at(raw), pixels.data.length).set(pixels.data);
    const planes = linear.map(at);
    wasm.linear_planes(
      at(raw),
      width * height,
      pixels.info.channels,
      at(table),
      planes[0]!,
      ...thirds(planes[0]!, width * height),
    );
    for (let scale = 0; scale < sizes.length; scale++) {
      if (scale > 0) {
        const { width: w, height: h } = sizes[scale - 1]!;
        wasm.downsample(planes[(scale - 1) & 1]!, w, h, planes[scale & 1]!);
      }
      each(scale, planes[scale & 1]!);
    }
  };
  scales(reference, background, (scale, rgb) => {
    const { width: w, height: h } = sizes[scale]!;
    wasm.prepare_scale(rgb, w, h, at(prepared[scale]!), scratch);
  });
  let released = false;
  return {
    bytes: memory.buffer.byteLength,
    release() {
      if (!released) memories?.give(instance);
      released = true;
    },
    norms(distorted, over) {
      if (released) throw new Error('a released SSIMULACRA2 reference cannot score');
      const result: ScaleNorms[] = [];
      scales(distorted, over, (scale, rgb) => {
        const { width: w, height: h } = sizes[scale]!;
        wasm.prepared_norms(at(prepared[scale]!), rgb, w, h, at(sums), scratch);
        result.push(norms(new Float64Array(memory.buffer, at(sums), 18), w * h));
      });
      return result;
    },
  };
}

/** The g and b planes after the r plane at `r`, of `pixels` floats each. */
const thirds = (r: number, pixels: number): [number, number] => [r + 4 * pixels, r + 8 * pixels];
