/**
 * An exact Lanczos-3 downscale in plain JavaScript, as a quality reference: a separable
 * convolution whose kernel is stretched by the scale factor (no box pre-shrink, no
 * intermediate sizes), in float, rounded once at the end. Slow, and only for the benchmark.
 */
const sinc = (x) => (x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x));
const lanczos3 = (x) => (Math.abs(x) < 3 ? sinc(x) * sinc(x / 3) : 0);

/** For each output index, the first input index and normalised weights. */
function weights(inSize, outSize) {
  const scale = inSize / outSize;
  const support = 3 * Math.max(1, scale);
  const table = [];
  for (let o = 0; o < outSize; o++) {
    const center = (o + 0.5) * scale - 0.5;
    const first = Math.max(0, Math.ceil(center - support));
    const last = Math.min(inSize - 1, Math.floor(center + support));
    const w = [];
    let sum = 0;
    for (let i = first; i <= last; i++) {
      const v = lanczos3((i - center) / Math.max(1, scale));
      w.push(v);
      sum += v;
    }
    table.push({ first, w: Float64Array.from(w, (v) => v / sum) });
  }
  return table;
}

/** Resizes interleaved 8-bit `channels`-band pixels from `width` x `height` to `outW` x `outH`. */
export function lanczosResize(data, width, height, channels, outW, outH) {
  const horizontal = new Float32Array(outW * height * channels);
  const wx = weights(width, outW);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < outW; x++) {
      const { first, w } = wx[x];
      for (let c = 0; c < channels; c++) {
        let acc = 0;
        for (let k = 0; k < w.length; k++) acc += w[k] * data[(y * width + first + k) * channels + c];
        horizontal[(y * outW + x) * channels + c] = acc;
      }
    }
  }
  const out = Buffer.alloc(outW * outH * channels);
  const wy = weights(height, outH);
  for (let y = 0; y < outH; y++) {
    const { first, w } = wy[y];
    for (let x = 0; x < outW; x++) {
      for (let c = 0; c < channels; c++) {
        let acc = 0;
        for (let k = 0; k < w.length; k++) acc += w[k] * horizontal[((first + k) * outW + x) * channels + c];
        out[(y * outW + x) * channels + c] = Math.min(255, Math.max(0, Math.round(acc)));
      }
    }
  }
  return out;
}
