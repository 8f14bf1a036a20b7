/*
 * The hot loops of SSIMULACRA2 (src/quality/scale.ts, blur.ts, xyb.ts, linear.ts) in WebAssembly with
 * 128-bit SIMD and relaxed SIMD's fused multiply-add: the same operations in the same order, each
 * fused step of the TypeScript (`fround(a * b + c)`) a `relaxed_madd`, each separate one a separate
 * instruction. Where the CPU fuses (`fused()`), that is what the reference's FMA builds compute, and
 * the scores are the TypeScript's. The TypeScript stays the readable version and the fallback; the
 * comments there say why each step is as it is. Built by build.sh into module.ts.
 *
 * Memory is the caller's (imported): it passes offsets of float planes it laid out (prepared-wasm.ts).
 * Planes are `width * height` floats, rows `width` apart; vectors are loaded unaligned.
 */
#include <stdint.h>
#include <wasm_simd128.h>

typedef float v4f __attribute__((vector_size(16)));
typedef v128_t V;
#define EXPORT(name) __attribute__((export_name(#name)))
/* a * b + c, and c - a * b, rounded once where the CPU fuses. */
#define MADD(a, b, c) ((V) __builtin_wasm_relaxed_madd_f32x4((v4f)(a), (v4f)(b), (v4f)(c)))
#define NMADD(a, b, c) ((V) __builtin_wasm_relaxed_nmadd_f32x4((v4f)(a), (v4f)(b), (v4f)(c)))
#define SPLAT(v, lane) wasm_i32x4_shuffle(v, v, lane, lane, lane, lane)

static inline float lane0(V v) { return wasm_f32x4_extract_lane(v, 0); }
/*
 * A fused multiply-add of one float, through the vector unit (WebAssembly has no scalar one), so a
 * border or tail pixel rounds as the vector lanes do. The TypeScript's `fround(a * b + c)` rounds to
 * double and then to float, which differs from one rounding only when c is some 2^29 times smaller
 * than a * b and the product sits on a midpoint: values of the metric never do.
 */
static inline float madd1(float a, float b, float c) {
  return lane0(MADD(wasm_f32x4_splat(a), wasm_f32x4_splat(b), wasm_f32x4_splat(c)));
}

/* 1 when relaxed_madd rounds once (the CPU has FMA), 0 when it multiplies and adds. */
EXPORT(fused) int fused(void) {
  volatile float x = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  return lane0(MADD(wasm_f32x4_splat(x), wasm_f32x4_splat(x), wasm_f32x4_splat(c))) != 0.0f;
}

/* ---- The recursive Gaussian (recursive-gaussian.ts): set once per instance. ---- */

static float IN[12], PREV[12], PREV2[12], N2[3], NEG_D1[3];
static int RADIUS;

EXPORT(set_gaussian)
void set_gaussian(const float *in, const float *prev, const float *prev2, const float *n2, const float *d1,
                  int radius) {
  for (int i = 0; i < 12; i++) {
    IN[i] = in[i];
    PREV[i] = prev[i];
    PREV2[i] = prev2[i];
  }
  for (int k = 0; k < 3; k++) {
    N2[k] = n2[k];
    NEG_D1[k] = -d1[k];
  }
  RADIUS = radius;
}

/* ---- blur.ts: blurRow ---- */

static inline float tap_sum(const float *in, int width, int gap, int i) {
  if (i < gap) return i < width ? in[i] : 0.0f;
  return i < width ? in[i - gap] + in[i] : in[i - gap];
}

/* The three recursions one sample at a time: the borders. */
#define BORDER_STEP()                                                                                                  \
  do {                                                                                                                 \
    float s = tap_sum(in, width, gap, i);                                                                              \
    float oa = madd1(PREV[0], ya, s * IN[0] - za);                                                                     \
    float ob = madd1(PREV[4], yb, s * IN[4] - zb);                                                                     \
    float oc = madd1(PREV[8], yc, s * IN[8] - zc);                                                                     \
    za = ya, ya = oa, zb = yb, yb = ob, zc = yc, yc = oc;                                                              \
    if (n >= 0) out[n] = oa + (ob + oc);                                                                               \
  } while (0)

static void blur_row(const float *in, int width, float *out) {
  const int N = RADIUS, gap = 2 * N;
  float ya = 0, za = 0, yb = 0, zb = 0, yc = 0, zc = 0;
  int n = -N + 1, i = 0;
  int left_end = (N + 4) & ~3;
  if (left_end > width) left_end = width;
  for (; n < left_end; n++, i++) BORDER_STEP();
  if (n < width - N - 2) {
    const V zero = wasm_f32x4_splat(0);
    V k[3][4], p[3], q[3];
    for (int r = 0; r < 3; r++) {
      /* Lane j of an output adds input m times mul_in[j - m]: (a0 a1 a2 a3), (0 a0 a1 a2), ... */
      V a = wasm_v128_load(IN + 4 * r);
      k[r][0] = a;
      k[r][1] = wasm_i32x4_shuffle(zero, a, 0, 4, 5, 6);
      k[r][2] = wasm_i32x4_shuffle(zero, a, 0, 1, 4, 5);
      k[r][3] = wasm_i32x4_shuffle(zero, a, 0, 1, 2, 4);
      p[r] = wasm_v128_load(PREV + 4 * r);
      /* Lane 0's mul_prev2 is -1: a fused -z is the TypeScript's subtraction. */
      q[r] = wasm_f32x4_replace_lane(wasm_v128_load(PREV2 + 4 * r), 0, -1.0f);
    }
    V y[3] = {wasm_f32x4_splat(ya), wasm_f32x4_splat(yb), wasm_f32x4_splat(yc)};
    V z[3] = {wasm_f32x4_splat(za), wasm_f32x4_splat(zb), wasm_f32x4_splat(zc)};
    for (; n < width - N - 2; n += 4, i += 4) {
      const float *j = in + i;
      V s = wasm_f32x4_add(wasm_v128_load(j - gap), wasm_v128_load(j));
      V s0 = SPLAT(s, 0), s1 = SPLAT(s, 1), s2 = SPLAT(s, 2), s3 = SPLAT(s, 3);
      V o[3];
      for (int r = 0; r < 3; r++) {
        V acc = MADD(k[r][3], s3, MADD(k[r][2], s2, MADD(k[r][1], s1, wasm_f32x4_mul(s0, k[r][0]))));
        o[r] = MADD(p[r], y[r], MADD(q[r], z[r], acc));
        z[r] = SPLAT(o[r], 2);
        y[r] = SPLAT(o[r], 3);
      }
      wasm_v128_store(out + n, wasm_f32x4_add(o[0], wasm_f32x4_add(o[1], o[2])));
    }
    ya = lane0(y[0]), yb = lane0(y[1]), yc = lane0(y[2]);
    za = lane0(z[0]), zb = lane0(z[1]), zc = lane0(z[2]);
  }
  for (; n < width; n++, i++) BORDER_STEP();
}

/* ---- blur.ts: VerticalBlur ---- */

/*
 * A vertical pass's state: per column the previous output of k = 1, 3, 5 and the one before, in
 * blocks of four columns ([k1 x4][k3 x4][k5 x4]) so that a vector holds one k of four columns.
 */
typedef struct {
  float *newer, *older;
} Vertical;

static inline int state_at(int x, int k) { return 3 * (x & ~3) + 4 * k + (x & 3); }

/* One step: `top` and `bottom` input rows (0: zeros), output row into `out` unless 0. */
static void vertical_step(Vertical *v, const float *top, const float *bottom, float *out, int width) {
  const V n1 = wasm_f32x4_splat(N2[0]), n3 = wasm_f32x4_splat(N2[1]), n5 = wasm_f32x4_splat(N2[2]);
  const V d1 = wasm_f32x4_splat(NEG_D1[0]), d3 = wasm_f32x4_splat(NEG_D1[1]), d5 = wasm_f32x4_splat(NEG_D1[2]);
  const V zero = wasm_f32x4_splat(0);
  float *prev = v->newer, *prev2 = v->older;
  int x = 0;
  for (; x + 4 <= width; x += 4) {
    V sum = wasm_f32x4_add(top ? wasm_v128_load(top + x) : zero, bottom ? wasm_v128_load(bottom + x) : zero);
    float *p = prev + 3 * x, *q = prev2 + 3 * x;
    V o1 = MADD(n1, sum, MADD(d1, wasm_v128_load(p), wasm_f32x4_neg(wasm_v128_load(q))));
    V o3 = MADD(n3, sum, MADD(d3, wasm_v128_load(p + 4), wasm_f32x4_neg(wasm_v128_load(q + 4))));
    V o5 = MADD(n5, sum, MADD(d5, wasm_v128_load(p + 8), wasm_f32x4_neg(wasm_v128_load(q + 8))));
    wasm_v128_store(q, o1);
    wasm_v128_store(q + 4, o3);
    wasm_v128_store(q + 8, o5);
    if (out) wasm_v128_store(out + x, wasm_f32x4_add(o1, wasm_f32x4_add(o3, o5)));
  }
  for (; x < width; x++) {
    float sum = (top ? top[x] : 0.0f) + (bottom ? bottom[x] : 0.0f);
    float o[3];
    for (int k = 0; k < 3; k++) {
      int at = state_at(x, k);
      o[k] = madd1(N2[k], sum, madd1(NEG_D1[k], prev[at], -prev2[at]));
      prev2[at] = o[k];
    }
    if (out) out[x] = o[0] + (o[1] + o[2]);
  }
  v->newer = prev2;
  v->older = prev;
}

/* ---- blur.ts: multiplyRow; scale.ts: subtractSquares ---- */

static void multiply_row(const float *a, const float *b, int width, float *out) {
  int x = 0;
  for (; x + 4 <= width; x += 4) wasm_v128_store(out + x, wasm_f32x4_mul(wasm_v128_load(a + x), wasm_v128_load(b + x)));
  for (; x < width; x++) out[x] = a[x] * b[x];
}

static void subtract_squares(float *sigma, const float *mu, int width) {
  int x = 0;
  for (; x + 4 <= width; x += 4) {
    V m = wasm_v128_load(mu + x);
    wasm_v128_store(sigma + x, wasm_f32x4_sub(wasm_v128_load(sigma + x), wasm_f32x4_mul(m, m)));
  }
  for (; x < width; x++) sigma[x] = sigma[x] - mu[x] * mu[x];
}

/* ---- xyb.ts: linearToPositiveXyb ---- */

#define M00 0.3f
#define M02 0.078f
#define M10 0.23f
#define M12 0.078f
#define M20 0.24342268924547819f
#define M21 0.20476744424496821f
#define BIAS 0.0037930732552754493f
static float M01, M11, M22, NEG_BIAS_CBRT;

/* NEG_BIAS_CBRT is -fround(cbrt(BIAS)), which xyb.ts computes in double: passed in, not recomputed. */
EXPORT(set_xyb) void set_xyb(float neg_bias_cbrt) {
  M01 = (1.0f - M02) - M00;
  M11 = (1.0f - M12) - M10;
  M22 = (1.0f - M20) - M21;
  NEG_BIAS_CBRT = neg_bias_cbrt;
}

/* CubeRootAndAdd(v, -cbrt(bias)) of four mixes. */
static inline V cube_root_add(V v) {
  const V third = wasm_f32x4_splat(1.0f / 3.0f), four_thirds = wasm_f32x4_splat(4.0f / 3.0f);
  V bits = v;
  V exponent = wasm_i32x4_shr(bits, 23);
  V guess = wasm_i32x4_sub(wasm_i32x4_splat(0x54800000), wasm_i32x4_mul(exponent, wasm_i32x4_splat(0x002aaaaa)));
  V r = wasm_v128_andnot(guess, wasm_i32x4_eq(bits, wasm_i32x4_splat(0)));
  V t = wasm_f32x4_mul(third, v);
  for (int step = 0; step < 3; step++) {
    V s = wasm_f32x4_mul(r, r);
    r = NMADD(t, wasm_f32x4_mul(s, s), wasm_f32x4_mul(four_thirds, r));
  }
  V s = wasm_f32x4_mul(r, r);
  r = MADD(third, NMADD(v, wasm_f32x4_mul(s, s), r), r);
  s = wasm_f32x4_mul(r, r);
  return MADD(s, v, wasm_f32x4_splat(NEG_BIAS_CBRT));
}

static inline float cube_root_add1(float v) {
  return lane0(cube_root_add(wasm_f32x4_splat(v)));
}

/* Positive XYB of a row of linear r, g, b into x, y, b_out. */
static void positive_xyb(const float *r, const float *g, const float *b, int width, float *x, float *y, float *b_out) {
  const V zero = wasm_f32x4_splat(0), bias = wasm_f32x4_splat(BIAS), half = wasm_f32x4_splat(0.5f);
  const V scale_x = wasm_f32x4_splat(14.0f), offset_x = wasm_f32x4_splat(0.42f);
  const V offset_y = wasm_f32x4_splat(0.01f), offset_b = wasm_f32x4_splat(0.55f);
  int i = 0;
  for (; i + 4 <= width; i += 4) {
    V red = wasm_v128_load(r + i), green = wasm_v128_load(g + i), blue = wasm_v128_load(b + i);
    V l = MADD(wasm_f32x4_splat(M00), red, MADD(wasm_f32x4_splat(M01), green, MADD(wasm_f32x4_splat(M02), blue, bias)));
    V m = MADD(wasm_f32x4_splat(M10), red, MADD(wasm_f32x4_splat(M11), green, MADD(wasm_f32x4_splat(M12), blue, bias)));
    V s = MADD(wasm_f32x4_splat(M20), red, MADD(wasm_f32x4_splat(M21), green, MADD(wasm_f32x4_splat(M22), blue, bias)));
    l = cube_root_add(wasm_f32x4_max(zero, l));
    m = cube_root_add(wasm_f32x4_max(zero, m));
    s = cube_root_add(wasm_f32x4_max(zero, s));
    V xx = wasm_f32x4_mul(half, wasm_f32x4_sub(l, m));
    V yy = wasm_f32x4_mul(half, wasm_f32x4_add(l, m));
    wasm_v128_store(b_out + i, wasm_f32x4_add(wasm_f32x4_sub(s, yy), offset_b));
    wasm_v128_store(x + i, wasm_f32x4_add(wasm_f32x4_mul(xx, scale_x), offset_x));
    wasm_v128_store(y + i, wasm_f32x4_add(yy, offset_y));
  }
  for (; i < width; i++) {
    float mix[3];
    const float mat[3][3] = {{M00, M01, M02}, {M10, M11, M12}, {M20, M21, M22}};
    for (int k = 0; k < 3; k++) {
      float v = madd1(mat[k][0], r[i], madd1(mat[k][1], g[i], madd1(mat[k][2], b[i], BIAS)));
      mix[k] = cube_root_add1(v > 0.0f ? v : 0.0f);
    }
    float xx = 0.5f * (mix[0] - mix[1]);
    float yy = 0.5f * (mix[0] + mix[1]);
    b_out[i] = (mix[2] - yy) + 0.55f;
    x[i] = xx * 14.0f + 0.42f;
    y[i] = yy + 0.01f;
  }
}

/* ---- scale.ts: addErrors (scalar, in the TypeScript's order: its sums are doubles) ---- */

#define C2 0.0009f

static void add_errors(const float *m1, const float *v11, const float *img1, const float *m2, const float *v22,
                       const float *v12, const float *img2, int width, double *sums) {
  double ssim1 = 0, ssim4 = 0, ring1 = 0, ring4 = 0, blur1 = 0, blur4 = 0;
  for (int x = 0; x < width; x++) {
    float mu1 = m1[x], mu2 = m2[x];
    float diff = mu1 - mu2;
    float num_m = 1.0f - diff * diff;
    float num_s = 2.0f * (v12[x] - mu1 * mu2) + C2;
    float den_s = (v11[x] + (v22[x] - mu2 * mu2)) + C2;
    double d = 1.0 - (double) ((num_m * num_s) / den_s);
    if (d < 0) d = 0;
    ssim1 += d;
    d *= d;
    ssim4 += d * d;
    float a = img2[x] - mu2, b = img1[x] - mu1;
    double e = (1.0 + (double) (a < 0 ? -a : a)) / (1.0 + (double) (b < 0 ? -b : b)) - 1.0;
    if (e > 0) {
      ring1 += e;
      double e2 = e * e;
      ring4 += e2 * e2;
    } else {
      blur1 -= e;
      double e2 = e * e;
      blur4 += e2 * e2;
    }
  }
  sums[0] += ssim1;
  sums[1] += ssim4;
  sums[2] += ring1;
  sums[3] += ring4;
  sums[4] += blur1;
  sums[5] += blur4;
}

/* ---- linear.ts: linearFromRaw, downsample ---- */

/* 8-bit pixels (1 to 4 channels) to linear planes through `table` (alpha * 256 + value). */
EXPORT(linear_planes)
void linear_planes(const uint8_t *data, int pixels, int channels, const float *table, float *r, float *g, float *b) {
  const int colour = channels >= 3 ? 3 : 1, green = colour >> 1, blue = colour - 1;
  const int alpha = channels == 2 || channels == 4 ? colour : -1;
  for (int p = 0, i = 0; p < pixels; p++, i += channels) {
    const float *t = table + (alpha < 0 ? 255 : data[i + alpha]) * 256;
    r[p] = t[data[i]];
    g[p] = t[data[i + green]];
    b[p] = t[data[i + blue]];
  }
}

/* Each plane at half its size, rounded up, each pixel the mean of its 2x2 block (edges repeated). */
EXPORT(downsample)
void downsample(const float *in, int width, int height, float *out) {
  const int out_width = (width + 1) >> 1, out_height = (height + 1) >> 1, pairs = width >> 1;
  for (int c = 0; c < 3; c++) {
    const float *plane = in + c * width * height;
    float *o = out + c * out_width * out_height;
    for (int oy = 0; oy < out_height; oy++) {
      const float *top = plane + 2 * oy * width;
      const float *bottom = plane + (2 * oy + 1 < height ? 2 * oy + 1 : height - 1) * width;
      int ox = 0;
      for (; ox < pairs; ox++) *o++ = (((top[2 * ox] + top[2 * ox + 1]) + bottom[2 * ox]) + bottom[2 * ox + 1]) * 0.25f;
      if (pairs < out_width) *o++ = (((top[2 * ox] + top[2 * ox]) + bottom[2 * ox]) + bottom[2 * ox]) * 0.25f;
    }
  }
}

/* ---- scale.ts: prepareScale, preparedScaleNorms ---- */

static float *take(float **scratch, int floats) {
  float *at = *scratch;
  *scratch += (floats + 3) & ~3;
  return at;
}

static Vertical vertical(float **scratch, int width) {
  int floats = 3 * ((width + 3) & ~3);
  Vertical v = {take(scratch, floats), take(scratch, floats)};
  __builtin_memset(v.newer, 0, 2 * ((floats + 3) & ~3) * sizeof(float));
  return v;
}

/* Floats of scratch that `prepare_scale` and `prepared_norms` use for a scale `width` wide. */
EXPORT(scratch_floats) int scratch_floats(int width) {
  const int ring = (2 * RADIUS + 1) * width + 3, state = 2 * (3 * ((width + 3) & ~3) + 3);
  return 12 * ring + 9 * state + 4 * (width + 3) + 16;
}

/*
 * The reference's side of a scale: `rgb` (3 linear planes) into `prepared` (9 planes: positive XYB,
 * blurred mean, variance, each X, Y, B).
 */
EXPORT(prepare_scale) void prepare_scale(const float *rgb, int width, int height, float *prepared, float *scratch) {
  const int N = RADIUS, ring_rows = 2 * N + 1, size = width * height;
  float *xyb[3], *mu[3], *sigma[3], *m1[3], *v11[3];
  Vertical y1[3], y11[3];
  for (int c = 0; c < 3; c++) {
    xyb[c] = prepared + c * size;
    mu[c] = prepared + (3 + c) * size;
    sigma[c] = prepared + (6 + c) * size;
    m1[c] = take(&scratch, ring_rows * width);
    v11[c] = take(&scratch, ring_rows * width);
    y1[c] = vertical(&scratch, width);
    y11[c] = vertical(&scratch, width);
  }
  float *product = take(&scratch, width);
  for (int n = -N + 1; n < height; n++) {
    const int bottom = n + N - 1;
    if (bottom < height) {
      const int at = (bottom % ring_rows) * width, row = bottom * width;
      positive_xyb(rgb + row, rgb + size + row, rgb + 2 * size + row, width, xyb[0] + row, xyb[1] + row, xyb[2] + row);
      for (int c = 0; c < 3; c++) {
        const float *a = xyb[c] + row;
        blur_row(a, width, m1[c] + at);
        multiply_row(a, a, width, product);
        blur_row(product, width, v11[c] + at);
      }
    }
    const int top = n - N - 1;
    const int top_at = top >= 0 ? (top % ring_rows) * width : -1;
    const int bottom_at = bottom < height ? (bottom % ring_rows) * width : -1;
    for (int c = 0; c < 3; c++) {
      const float *t1 = top_at < 0 ? 0 : m1[c] + top_at, *b1 = bottom_at < 0 ? 0 : m1[c] + bottom_at;
      const float *t11 = top_at < 0 ? 0 : v11[c] + top_at, *b11 = bottom_at < 0 ? 0 : v11[c] + bottom_at;
      if (n < 0) {
        vertical_step(&y1[c], t1, b1, 0, width);
        vertical_step(&y11[c], t11, b11, 0, width);
        continue;
      }
      const int row = n * width;
      vertical_step(&y1[c], t1, b1, mu[c] + row, width);
      vertical_step(&y11[c], t11, b11, sigma[c] + row, width);
      subtract_squares(sigma[c] + row, mu[c] + row, width);
    }
  }
}

/* The error sums (6 per component, as scale.ts) of `rgb` against a prepared scale, into `sums` (18). */
EXPORT(prepared_norms)
void prepared_norms(const float *prepared, const float *rgb, int width, int height, double *sums, float *scratch) {
  const int N = RADIUS, ring_rows = 2 * N + 1, size = width * height;
  float *xyb2[3], *m2[3], *v22[3], *v12[3];
  Vertical y2[3], y22[3], y12[3];
  for (int c = 0; c < 3; c++) {
    xyb2[c] = take(&scratch, ring_rows * width);
    m2[c] = take(&scratch, ring_rows * width);
    v22[c] = take(&scratch, ring_rows * width);
    v12[c] = take(&scratch, ring_rows * width);
    y2[c] = vertical(&scratch, width);
    y22[c] = vertical(&scratch, width);
    y12[c] = vertical(&scratch, width);
  }
  float *product = take(&scratch, width), *mu2 = take(&scratch, width);
  float *s22 = take(&scratch, width), *s12 = take(&scratch, width);
  for (int i = 0; i < 18; i++) sums[i] = 0;
  for (int n = -N + 1; n < height; n++) {
    const int bottom = n + N - 1;
    if (bottom < height) {
      const int at = (bottom % ring_rows) * width, row = bottom * width;
      positive_xyb(rgb + row, rgb + size + row, rgb + 2 * size + row, width, xyb2[0] + at, xyb2[1] + at, xyb2[2] + at);
      for (int c = 0; c < 3; c++) {
        const float *a = prepared + c * size + row, *b = xyb2[c] + at;
        blur_row(b, width, m2[c] + at);
        multiply_row(b, b, width, product);
        blur_row(product, width, v22[c] + at);
        multiply_row(a, b, width, product);
        blur_row(product, width, v12[c] + at);
      }
    }
    const int top = n - N - 1;
    const int top_at = top >= 0 ? (top % ring_rows) * width : -1;
    const int bottom_at = bottom < height ? (bottom % ring_rows) * width : -1;
    for (int c = 0; c < 3; c++) {
      float *planes[3] = {m2[c], v22[c], v12[c]};
      Vertical *passes[3] = {&y2[c], &y22[c], &y12[c]};
      float *outs[3] = {mu2, s22, s12};
      for (int k = 0; k < 3; k++) {
        const float *t = top_at < 0 ? 0 : planes[k] + top_at, *b = bottom_at < 0 ? 0 : planes[k] + bottom_at;
        vertical_step(passes[k], t, b, n < 0 ? 0 : outs[k], width);
      }
      if (n < 0) continue;
      const int row = n * width;
      add_errors(prepared + (3 + c) * size + row, prepared + (6 + c) * size + row, prepared + c * size + row, mu2, s22,
                 s12, xyb2[c] + (n % ring_rows) * width, width, sums + 6 * c);
    }
  }
}
