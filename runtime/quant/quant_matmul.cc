// Weight-only quantized matmul for XLA:CPU (an XLA FFI custom call; built and loaded by
// runtime/quant/cpu.py on first use).
//
//   y[M, N] = x[M, K] (float32) . dequant(W)[N, K]^T          (float32 accumulation)
//
// Layouts (the same as pallas_kernels/quant_matmul, whose jnp reference defines the semantics):
//   int8  w: int8[N, K]          scale: f32[N]        W[n, k] = w[n, k] * scale[n]
//   int4  w: uint8[N, Kp / 2]    scale: f32[N, Kp/G]  Kp = K rounded up to a multiple of G (the
//         padded columns hold the code 8, i.e. 0.0). Inside group g, byte j (0 <= j < G/2) holds
//         column g*G + j in its low nibble and column g*G + G/2 + j in its high nibble:
//
//            byte:      0     1    ...  G/2-1
//            low  4b:   k=0   k=1  ...  k=G/2-1        W[n, k] = (nibble - 8) * scale[n, g]
//            high 4b:   k=G/2 ...  ...  k=G-1
//
//         so 16 bytes widen to 16 lanes of low nibbles and 16 lanes of high nibbles, each matching
//         16 consecutive x values: no shuffles.
//
// Why: batch-1 decode is bound by reading the weights; reading 1 byte (or half) per weight
// instead of 4 is the whole win. XLA:CPU does not fuse an int8 -> f32 convert into its dot (it
// materializes the float32 matrix), so this kernel widens 16 codes at a time in registers (int8:
// vpmovsxbd + vcvtdq2ps; int4: vpmovzxbd + a 16-entry vpermps table lookup) and feeds them to
// FMAs, reusing each widened chunk for up to 4 rows of x (more rows: the tile widened again per 4, from L1).
// Rows of W are split into tiles that the calling thread and (opt-in: the "threads" attribute)
// helpers on XLA's intra-op thread pool claim from an atomic counter: a helper that starts late
// finds no work, so the call never waits for a task that has not started (no deadlock when every
// pool thread is busy). Without AVX-512 a portable scalar version is compiled instead.

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// The instruction set is chosen at build time (kernel_isa.h: AVX-512, AVX2 + FMA + F16C, or portable loops);
// jaxserve_kernel_isa() tells which.
#include "kernel_isa.h"
// AVX-512 takes int8 activations only when asked (JAXSERVE_INT8_ACTIVATIONS: runtime/quant/cpu.py
// JAXSERVE_KERNEL_ISA=avx512_vnni) and the CPU has VNNI: see "AVX-512 VNNI" below for why not by default.
#if !defined(JAXSERVE_FLOAT_ACTIVATIONS) && \
    (defined(JAXSERVE_AVX2) || (defined(JAXSERVE_AVX512_VNNI) && defined(JAXSERVE_INT8_ACTIVATIONS)))
#define JAXSERVE_Q8X 1  // int8, int4 and the GGUF kernels quantize x to int8 blocks (see quantize_x)
#endif
#if defined(JAXSERVE_Q8X) && defined(JAXSERVE_AVX512)
#define JAXSERVE_VNNI 1  // ... and take their dot products 64 bytes at a time with vpdpbusd (see "AVX-512 VNNI")
#endif

// Loops over the MT x R register tile must unroll fully, or GCC keeps the accumulators on the stack.
#define UNROLL _Pragma("GCC unroll 16")

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int64_t kTileRows = 32;               // rows of W per claimed work unit
constexpr int64_t kMinParallelBytes = 1 << 18;  // below this, one thread (a wake-up costs more)

struct Problem {
  const float* x;     // [M, K]
  const uint8_t* w;   // int8 [N, K] or packed uint8 [N, Kp/2]
  const float* s;     // [N] or [N, Kp/G]
  float* y;           // [M, N]
  int64_t M, N, K, row_bytes, group, num_groups;
};

// Every row of x against the rows [n0, n1) of W (one work unit, kTileRows rows): 4 rows of x at a time, then
// the remaining 1-3, each against R-row tiles of W (R1 rows for one row of x, R rows for more), then single rows.
// block(MT, RR, m0, n) computes one register tile (MT, RR: std::integral_constant). Every SIMD path's tiling
// above 4 rows of x. The rows of x are the outer loop: a block of 4 rows of x (K floats each) stays in L1
// while it meets the unit's W rows (kTileRows x K codes, from L2 after the first block), so each row of x is
// read from L2 once per unit. With W's tiles outer, every 4-row tile of W swept all of x from L2, and at 64
// rows x (64 x 1536 floats: 393 KB) was re-read 8 times per unit: the call ran at L2's rate, not the FMAs'.
// Each output is the same block call either way (the same arithmetic, the same bits).
template <int R1, int R, typename Block>
inline void tiles_v(int64_t M, int64_t n0, int64_t n1, Block&& block) {
  auto sweep = [&](auto m_tag, int64_t m) {
    int64_t n = n0;
    if (M == 1)
      for (; n + R1 <= n1; n += R1) block(m_tag, std::integral_constant<int, R1>{}, m, n);
    for (; n + R <= n1; n += R) block(m_tag, std::integral_constant<int, R>{}, m, n);
    for (; n < n1; ++n) block(m_tag, std::integral_constant<int, 1>{}, m, n);
  };
  int64_t m = 0;
  for (; m + 4 <= M; m += 4) sweep(std::integral_constant<int, 4>{}, m);
  switch (M - m) {
    case 3: sweep(std::integral_constant<int, 3>{}, m); break;
    case 2: sweep(std::integral_constant<int, 2>{}, m); break;
    case 1: sweep(std::integral_constant<int, 1>{}, m); break;
    default: break;
  }
}

#if defined(JAXSERVE_AVX512) || defined(JAXSERVE_AVX2)

// Software prefetch: a single core streaming R rows at once (R short runs per step) gets ~5 GB/s
// from the hardware prefetchers alone; requesting the bytes one tile (+4 KiB) ahead of the linear
// position brings it to ~23 GB/s (measured on an AVX-512 EPYC, 576x49152 int8). The block of
// R rows is contiguous and each step consumes 16 bytes of each row, i.e. R * 16 bytes of the
// stream, so R / 4 cache lines a step keep the prefetch front moving at the same pace.
template <int R>
inline void prefetch_ahead(const void* block, int64_t row_bytes, int64_t byte_in_row) {
  const char* front = static_cast<const char*>(block) + R * row_bytes + 4096 + byte_in_row * R;
  UNROLL for (int r = 0; r < R; r += 4) _mm_prefetch(front + r * 16, _MM_HINT_T0);
}

// The sum of a ymm's 8 floats (the AVX2 kernels; on AVX-512 the int8-activation int4 kernel, which
// runs the AVX2 path's 256-bit code).
inline float hsum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

// The 256-bit register tile for MT rows of x: MT * R accumulators of the 16 ymm registers (the AVX2
// path's comment says why R = 8, 4, 4, 3).
template <int MT>
constexpr int rows_for() {
  return MT == 1 ? 8 : MT == 4 ? 3 : 4;
}

#endif

#ifdef JAXSERVE_AVX512

inline __mmask16 tail_mask(int64_t k, int64_t K) {  // lanes k .. k+15 that are < K
  const int64_t n = K - k;
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// MT rows of x (MT <= 4) times R rows of W (int8), over the whole K.
template <int MT, int R>
inline void int8_block(const Problem& p, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const int8_t* w = reinterpret_cast<const int8_t*>(p.w) + n0 * p.row_bytes;
  const float* x = p.x + m0 * p.K;
  for (int64_t k = 0; k < p.K; k += 16) {
    const __mmask16 mask = tail_mask(k, p.K);
    prefetch_ahead<R>(w, p.row_bytes, k);
    __m512 wf[R];
    UNROLL for (int r = 0; r < R; ++r)
      wf[r] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(mask, w + r * p.row_bytes + k)));
    UNROLL for (int m = 0; m < MT; ++m) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + m * p.K + k);
      UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_fmadd_ps(xv, wf[r], acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]) * p.s[n0 + r];
}

// MT rows of x times R rows of W (packed int4, group scales), over the whole (padded) K.
template <int MT, int R>
inline void int4_block(const Problem& p, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* s = p.s + n0 * p.num_groups;
  const float* x = p.x + m0 * p.K;
  // Decoding by table lookup: vpermps picks lane i of a 16-float table with the low 4 bits of each
  // index lane, so table[code] = (code - 8) * scale turns a nibble into its weight in one
  // instruction (the high bits of the index are ignored: no mask needed for the low nibble).
  const __m512 codes_minus_8 = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
  const int64_t half = p.group / 2;
  for (int64_t g = 0; g < p.num_groups; ++g) {
    __m512 table[R];
    UNROLL for (int r = 0; r < R; ++r) table[r] = _mm512_mul_ps(codes_minus_8, _mm512_set1_ps(s[r * p.num_groups + g]));
    const int64_t k_lo = g * p.group, k_hi = k_lo + half;
    for (int64_t j = 0; j < half; j += 16) {
      prefetch_ahead<R>(w, p.row_bytes, g * half + j);
      __m512 lo[R], hi[R];
      UNROLL for (int r = 0; r < R; ++r) {
        const __m512i b = _mm512_cvtepu8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + r * p.row_bytes + g * half + j)));
        lo[r] = _mm512_permutexvar_ps(b, table[r]);
        hi[r] = _mm512_permutexvar_ps(_mm512_srli_epi32(b, 4), table[r]);
      }
      const __mmask16 mlo = tail_mask(k_lo + j, p.K), mhi = tail_mask(k_hi + j, p.K);
      UNROLL for (int m = 0; m < MT; ++m) {
        const __m512 xl = _mm512_maskz_loadu_ps(mlo, x + m * p.K + k_lo + j);
        const __m512 xh = _mm512_maskz_loadu_ps(mhi, x + m * p.K + k_hi + j);
        UNROLL for (int r = 0; r < R; ++r) {
          acc[m][r] = _mm512_fmadd_ps(xl, lo[r], acc[m][r]);
          acc[m][r] = _mm512_fmadd_ps(xh, hi[r], acc[m][r]);
        }
      }
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]);
}

// Rows [n0, n1) of W against every row of x (M <= 4): blocks of R rows x M rows of x, widening
// each 16-code chunk once in registers for all M rows.
template <bool INT4, int R>
void rows_direct(const Problem& p, int64_t n0, int64_t n1, int64_t* n_done) {
  int64_t n = n0;
  for (; n + R <= n1; n += R) {
    switch (p.M) {
      case 4: INT4 ? int4_block<4, R>(p, 0, n) : int8_block<4, R>(p, 0, n); break;
      case 3: INT4 ? int4_block<3, R>(p, 0, n) : int8_block<3, R>(p, 0, n); break;
      case 2: INT4 ? int4_block<2, R>(p, 0, n) : int8_block<2, R>(p, 0, n); break;
      default: INT4 ? int4_block<1, R>(p, 0, n) : int8_block<1, R>(p, 0, n); break;
    }
  }
  *n_done = n;
}

// M > 4 (rows below): each R-row tile of W against every row of x, 4 rows of x at a time (tiles_v), the tile's
// codes widened again in registers for each block of 4 (their bytes come from memory once, from L1 after that). This replaced
// dequantizing each tile into a float32 buffer and sweeping it with every row of x, which saved the widening
// but measured 2-3x slower on an AVX-512 EPYC (scripts/bench_cpu_kernels.py, SmolLM2's 211 matrices, ms;
// docs/results/bench_cpu_kernels_rows_native_{before,after}_epyc.json): int8 at 5 / 8 / 16 rows 17.4 / 24.9 /
// 32.0 -> 8.0 / 7.0 / 15.2; int4 10.6 / 15.5 / 22.9 -> 6.7 / 7.8 / 15.7.
template <bool INT4>
void rows(const Problem& p, int64_t n0, int64_t n1) {
  int64_t n = n0;
  if (p.M > 4) {
    tiles_v<4, 4>(p.M, n0, n1, [&](auto mt, auto rt, int64_t m, int64_t nt) {
      constexpr int MT = decltype(mt)::value, RT = decltype(rt)::value;
      INT4 ? int4_block<MT, RT>(p, m, nt) : int8_block<MT, RT>(p, m, nt);
    });
    return;
  }
  // int8 with one row of x: 8 rows of W (8 independent FMA chains); otherwise 4 (registers).
  if (!INT4 && p.M == 1) rows_direct<INT4, 8>(p, n, n1, &n);
  rows_direct<INT4, 4>(p, n, n1, &n);
  rows_direct<INT4, 1>(p, n, n1, &n);
}

#elif defined(JAXSERVE_AVX2)

// ---- AVX2 + FMA (+ F16C): the AVX-512 plan at half the width and half the registers ----------------
//
// 8 float lanes a ymm register and 16 registers: codes widen 8 at a time (vpmovsxbd / vpmovzxbd +
// vcvtdq2ps) straight into FMAs, and a block of R rows of W x MT rows of x keeps MT * R accumulators,
// at most 12, so the widened chunk, x and the accumulators stay in registers: R = 8, 4, 4, 3 for
// M = 1, 2, 3, 4. AVX2 has no 16-entry vpermps, so an int4 nibble becomes (code - 8) by an integer
// subtract, then a float, then times its group's scale. K that is not a multiple of 8 ends in a scalar
// tail (int8); int4's x is zero-padded to whole groups by Q4Impl, so its loops have no tail.

inline __m256 i8x8_to_f32(const void* p) {  // 8 int8 codes -> 8 floats
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p))));
}

inline __m256i u8x8_to_i32(const void* p) {  // 8 bytes -> 8 int32 lanes
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p)));
}

// MT rows of x (MT <= 4) times R rows of W (int8), over the whole K.
template <int MT, int R>
inline void int8_block(const Problem& p, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const int8_t* w = reinterpret_cast<const int8_t*>(p.w) + n0 * p.row_bytes;
  const float* x = p.x + m0 * p.K;
  const int64_t k8 = p.K & ~int64_t{7};
  for (int64_t k = 0; k < k8; k += 8) {
    if ((k & 15) == 0) prefetch_ahead<R>(w, p.row_bytes, k);  // its pace: 16 bytes of each row
    UNROLL for (int r = 0; r < R; ++r) {
      const __m256 wf = i8x8_to_f32(w + r * p.row_bytes + k);
      UNROLL for (int m = 0; m < MT; ++m) acc[m][r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + m * p.K + k), wf, acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) {
      float t = hsum8(acc[m][r]);
      for (int64_t k = k8; k < p.K; ++k) t += x[m * p.K + k] * static_cast<float>(w[r * p.row_bytes + k]);
      p.y[(m0 + m) * p.N + n0 + r] = t * p.s[n0 + r];
    }
}

// MT rows of x times R rows of W (packed int4, group scales); x is padded to whole groups (p.K = Kp).
template <int MT, int R>
inline void int4_block(const Problem& p, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* s = p.s + n0 * p.num_groups;
  const float* x = p.x + m0 * p.K;
  const __m256i low4 = _mm256_set1_epi32(0xF), eight = _mm256_set1_epi32(8);
  const int64_t half = p.group / 2;
  for (int64_t g = 0; g < p.num_groups; ++g) {
    const int64_t k_lo = g * p.group, k_hi = k_lo + half;
    for (int64_t j = 0; j < half; j += 8) {
      if ((j & 15) == 0) prefetch_ahead<R>(w, p.row_bytes, g * half + j);
      UNROLL for (int r = 0; r < R; ++r) {
        const __m256 sc = _mm256_broadcast_ss(s + r * p.num_groups + g);
        const __m256i b = u8x8_to_i32(w + r * p.row_bytes + g * half + j);
        const __m256 lo = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(b, low4), eight)), sc);
        const __m256 hi = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(b, 4), eight)), sc);
        UNROLL for (int m = 0; m < MT; ++m) {
          acc[m][r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + m * p.K + k_lo + j), lo, acc[m][r]);
          acc[m][r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + m * p.K + k_hi + j), hi, acc[m][r]);
        }
      }
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = hsum8(acc[m][r]);
}

// Rows [n0, n1) of W against all MT = M rows of x: blocks of R = rows_for<MT>() rows, then single rows.
template <bool INT4, int MT>
void rows_direct(const Problem& p, int64_t n0, int64_t n1) {
  constexpr int R = rows_for<MT>();
  int64_t n = n0;
  for (; n + R <= n1; n += R) INT4 ? int4_block<MT, R>(p, 0, n) : int8_block<MT, R>(p, 0, n);
  for (; n < n1; ++n) INT4 ? int4_block<MT, 1>(p, 0, n) : int8_block<MT, 1>(p, 0, n);
}

// M > 4: each 3-row tile of W against every row of x, 4 rows at a time (12 accumulators), its codes widened
// again for each block of 4, as the AVX-512 path does (its comment: why not a dequantized float32 buffer).
// Measured with -march=haswell (avx2_float) on the same machine (..._avx2_float_{before,after}_epyc.json): int8 at
// 5 / 8 / 16 rows 19.9 / 27.5 / 56.2 -> 9.6 / 13.8 / 27.3 ms; int4 18.1 / 30.0 / 47.7 -> 11.3 / 17.1 / 33.3.
template <bool INT4>
void rows(const Problem& p, int64_t n0, int64_t n1) {
  switch (p.M) {
    case 1: rows_direct<INT4, 1>(p, n0, n1); break;
    case 2: rows_direct<INT4, 2>(p, n0, n1); break;
    case 3: rows_direct<INT4, 3>(p, n0, n1); break;
    case 4: rows_direct<INT4, 4>(p, n0, n1); break;
    default:  // 3-row tiles (12 accumulators)
      tiles_v<rows_for<4>(), rows_for<4>()>(p.M, n0, n1, [&](auto mt, auto rt, int64_t m, int64_t n) {
        constexpr int MT = decltype(mt)::value, RT = decltype(rt)::value;
        INT4 ? int4_block<MT, RT>(p, m, n) : int8_block<MT, RT>(p, m, n);
      });
      break;
  }
}

#else  // portable: plain loops that the compiler vectorizes (omp simd reductions: -fopenmp-simd)

template <bool INT4>
void rows(const Problem& p, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wrow = p.w + n * p.row_bytes;
    for (int64_t m = 0; m < p.M; ++m) {
      const float* x = p.x + m * p.K;
      float acc = 0.0f;
      if (!INT4) {
        const int8_t* w8 = reinterpret_cast<const int8_t*>(wrow);
#pragma omp simd reduction(+ : acc)
        for (int64_t k = 0; k < p.K; ++k) acc += x[k] * static_cast<float>(w8[k]);
        acc *= p.s[n];
      } else {  // x is padded to whole groups (Q4Impl): no bounds inside a group
        const int64_t half = p.group / 2;
        for (int64_t g = 0; g < p.num_groups; ++g) {
          const uint8_t* b = wrow + g * half;
          const float* xl = x + g * p.group;
          const float* xh = xl + half;
          float part = 0.0f;
#pragma omp simd reduction(+ : part)
          for (int64_t j = 0; j < half; ++j)
            part += xl[j] * static_cast<float>((b[j] & 0xF) - 8) + xh[j] * static_cast<float>((b[j] >> 4) - 8);
          acc += part * p.s[n * p.num_groups + g];
        }
      }
      p.y[m * p.N + n] = acc;
    }
  }
}

#endif

// Rows of W in tiles of kTileRows, claimed from an atomic counter by the caller and (opt-in) helpers
// on XLA's pool. Shared by both; heap-allocated so a helper that runs after the call returned still
// touches live memory. Every kernel of this file runs through it.
struct Tiles {
  std::function<void(int64_t, int64_t)> rows;  // computes rows [n0, n1) of y
  int64_t N, num_tiles;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};

  void run() {
    for (int64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < num_tiles;) {
      rows(t * kTileRows, std::min(N, (t + 1) * kTileRows));
      done.fetch_add(1, std::memory_order_release);
    }
  }
};

// max_threads: the caller plus helpers on XLA's pool (runtime/quant/cpu.py THREADS says why 1 is the
// default); w_bytes: the matrix's size (small ones stay on one thread: a wake-up costs more).
void run_tiles(ffi::ThreadPool& pool, int64_t N, int64_t w_bytes, int64_t max_threads,
               std::function<void(int64_t, int64_t)> rows) {
  auto work = std::make_shared<Tiles>();
  work->rows = std::move(rows);
  work->N = N;
  work->num_tiles = (N + kTileRows - 1) / kTileRows;
  int64_t threads = std::min(std::max<int64_t>(1, pool.num_threads()), std::max<int64_t>(1, max_threads));
  if (w_bytes < kMinParallelBytes) threads = 1;
  threads = std::min(threads, work->num_tiles);
  for (int64_t i = 1; i < threads; ++i) pool.Schedule([work] { work->run(); });
  work->run();
  while (work->done.load(std::memory_order_acquire) < work->num_tiles) {  // tiles a helper is finishing
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
  }
}

#ifdef JAXSERVE_Q8X

// ---- AVX2: int8 activations and integer dot products ---------------------------------------------
//
// Why: with x in float32, AVX2 spends per 8 weights a widening, a conversion and an FMA (plus the
// unpacking of nibbles), and the int4 and Q4_1 kernels ran at 5-8 GB/s here: compute-bound, not
// bandwidth-bound. Quantizing x once per call, per block of 32 columns, to int8 (d = max|x| / 127,
// q = round-half-even(x / d): what llama.cpp does to its activations), lets vpmaddubsw + vpmaddwd sum
// 32 products of 8-bit codes in three instructions, and one conversion and one FMA per block of 32
// apply both scales. The result is x's quantized copy times W, exactly (integer block sums) up to
// float32 rounding of the block sums' accumulation; its distance from x . W is at most
// sum_k |W[n, k]| * d[block of k] / 2 (runtime/quant/cpu.py quantize_activations is the reference).
// Columns past the last whole block (int8's K % 32) stay float32.

struct QuantizedX {
  std::vector<int8_t> q;  // [M, stride] row m's blocks of 32 codes from q + m * stride
  std::vector<float> d;   // [M, nb] the blocks' scales
  std::vector<float> c;   // [M, nb] d * sum(q): a block's sum of x as quantized (int4's code offset)
  int64_t nb = 0, stride = 0;
#ifdef JAXSERVE_VNNI
  // The 512-bit kernels read x's blocks in pairs (2j, 2j + 1): 64 codes, a row's stride np * 64 with the
  // missing half of an odd last pair zero, and per pair 16 lanes of scales, lanes 0-7 block 2j's, 8-15
  // block 2j + 1's (0 for a missing block): the lanes of a vpdpbusd result hold the sums of 4 products of
  // one block or the other in that order.
  std::vector<float> dv;  // [M, np, 16] d
  std::vector<float> cv;  // [M, np, 16] c / 8: 8 lanes of it sum to c (exactly: a power of 2)
  int64_t np = 0;
#endif
};


// Sums of 4 adjacent products of unsigned bytes a and signed bytes b: 8 int32 lanes. No saturation:
// |a| <= 128 and |b| <= 127, so each int16 pair sum is at most 2 * 128 * 127 = 32512 (vpdpbusd, where
// there is VNNI, sums in int32: the same integers).
inline __m256i dot_u8_i8(__m256i a, __m256i b) {
#ifdef JAXSERVE_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), a, b);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1));
#endif
}

// Signed by signed: |w| times x carrying w's sign.
inline __m256i dot_i8_i8(__m256i w, __m256i x) { return dot_u8_i8(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w)); }

inline int32_t hsum_i32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  return _mm_cvtsi128_si32(_mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1)));
}

// x [M, K] (row stride `stride`) -> blocks of 32 over the first nb * 32 columns.
void quantize_x(const float* x, int64_t M, int64_t K, int64_t stride, QuantizedX* out) {
  const int64_t nb = K / 32;
  out->nb = nb;
#ifdef JAXSERVE_VNNI
  const int64_t np = (nb + 1) / 2;
  out->np = np;
  out->stride = np * 64;
  out->q.assign(M * out->stride, 0);
  out->dv.assign(M * np * 16, 0.0f);
  out->cv.assign(M * np * 16, 0.0f);
#else
  out->stride = nb * 32;
  out->q.resize(M * nb * 32);
#endif
  out->d.resize(M * nb);
  out->c.resize(M * nb);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  // packs_epi32 then packs_epi16 interleave the 128-bit lanes: dword i of the result holds elements
  // 4 * perm[i] .. +3; this permutation puts them back in order.
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t b = 0; b < nb; ++b) {
      const float* xb = x + m * stride + b * 32;
      const __m256 v0 = _mm256_loadu_ps(xb), v1 = _mm256_loadu_ps(xb + 8), v2 = _mm256_loadu_ps(xb + 16),
                   v3 = _mm256_loadu_ps(xb + 24);
      const __m256 mx = _mm256_max_ps(_mm256_max_ps(_mm256_and_ps(v0, abs_mask), _mm256_and_ps(v1, abs_mask)),
                                      _mm256_max_ps(_mm256_and_ps(v2, abs_mask), _mm256_and_ps(v3, abs_mask)));
      __m128 h = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
      h = _mm_max_ps(h, _mm_movehl_ps(h, h));
      const float amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
      const float d = amax / 127.0f;
      const __m256 inv = _mm256_set1_ps(amax != 0.0f ? 1.0f / d : 0.0f);
      const __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(v0, inv)), i1 = _mm256_cvtps_epi32(_mm256_mul_ps(v1, inv)),
                    i2 = _mm256_cvtps_epi32(_mm256_mul_ps(v2, inv)), i3 = _mm256_cvtps_epi32(_mm256_mul_ps(v3, inv));
      const int32_t sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(i0, i1), _mm256_add_epi32(i2, i3)));
      const __m256i packed = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out->q.data() + m * out->stride + b * 32),
                          _mm256_permutevar8x32_epi32(packed, order));
      out->d[m * nb + b] = d;
      out->c[m * nb + b] = d * static_cast<float>(sum);
#ifdef JAXSERVE_VNNI
      float* dv = out->dv.data() + (m * np + b / 2) * 16 + (b & 1) * 8;
      float* cv = out->cv.data() + (m * np + b / 2) * 16 + (b & 1) * 8;
      for (int i = 0; i < 8; ++i) {
        dv[i] = d;
        cv[i] = out->c[m * nb + b] * 0.125f;
      }
#endif
    }
}

inline __m256i load_q(const QuantizedX& qx, int64_t m, int64_t b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx.q.data() + m * qx.stride + b * 32));
}

// int8 W (per-row scale): MT rows of x times R rows of W.
template <int MT, int R>
inline void int8_block_q(const Problem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const int8_t* w = reinterpret_cast<const int8_t*>(p.w) + n0 * p.row_bytes;
  for (int64_t b = 0; b < qx.nb; ++b) {
    prefetch_ahead<R>(w, p.row_bytes, b * 32);
    prefetch_ahead<R>(w, p.row_bytes, b * 32 + 16);
    __m256 d[MT];
    UNROLL for (int m = 0; m < MT; ++m) d[m] = _mm256_broadcast_ss(&qx.d[(m0 + m) * qx.nb + b]);
    UNROLL for (int r = 0; r < R; ++r) {
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * p.row_bytes + b * 32));
      UNROLL for (int m = 0; m < MT; ++m)
        acc[m][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_i8_i8(wv, load_q(qx, m0 + m, b))), d[m], acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) {
      float t = hsum8(acc[m][r]);
      for (int64_t k = qx.nb * 32; k < p.K; ++k)  // the float32 tail
        t += p.x[(m0 + m) * p.K + k] * static_cast<float>(w[r * p.row_bytes + k]);
      p.y[(m0 + m) * p.N + n0 + r] = t * p.s[n0 + r];
    }
}

// int4 W (group scales, codes offset by 8) with x padded to whole groups (a group is 1, 2 or 4 x
// blocks). A 32-byte chunk of a group's codes holds 32 columns in its low nibbles and the 32 columns
// half a group later in its high ones (G = 32: 16 bytes, the two halves of one block). The offset 8
// comes off at the end: sum (code - 8) * q = sum code * q - 8 * sum q, and d * sum q is qx.c.
template <int MT, int R>
inline void int4_block_q(const Problem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  float offset[MT][R] = {};
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* s = p.s + n0 * p.num_groups;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const int64_t half = p.group / 2, blocks_per_group = p.group / 32;
  auto block = [&](int r, int64_t g, int64_t b, __m256i codes) {
    const float sg = s[r * p.num_groups + g];
    UNROLL for (int m = 0; m < MT; ++m) {
      const int64_t i = (m0 + m) * qx.nb + b;
      acc[m][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_u8_i8(codes, load_q(qx, m0 + m, b))),
                                  _mm256_set1_ps(sg * qx.d[i]), acc[m][r]);
      offset[m][r] = std::fma(sg, qx.c[i], offset[m][r]);  // fma, not a * b + c: see the end
    }
  };
  for (int64_t g = 0; g < p.num_groups; ++g) {
    const int64_t b0 = g * blocks_per_group;
    if (half == 16) {
      prefetch_ahead<R>(w, p.row_bytes, g * half);
      UNROLL for (int r = 0; r < R; ++r) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + r * p.row_bytes + g * half));
        const __m128i lo = _mm_and_si128(v, _mm256_castsi256_si128(low4)),
                      hi = _mm_and_si128(_mm_srli_epi16(v, 4), _mm256_castsi256_si128(low4));
        block(r, g, b0, _mm256_set_m128i(hi, lo));
      }
      continue;
    }
    for (int64_t j = 0; j < half; j += 32) {
      prefetch_ahead<R>(w, p.row_bytes, g * half + j);
      prefetch_ahead<R>(w, p.row_bytes, g * half + j + 16);
      UNROLL for (int r = 0; r < R; ++r) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + r * p.row_bytes + g * half + j));
        block(r, g, b0 + j / 32, _mm256_and_si256(v, low4));
        block(r, g, b0 + (half + j) / 32, _mm256_and_si256(_mm256_srli_epi16(v, 4), low4));
      }
    }
  }
  // Explicit fmas: GCC contracts a * b + c into an fma in some instantiations of (MT, R) and not in
  // others, and stacked matrices (runtime.quant.weights.fuse_linears) must give a row the same bits
  // whichever tile it falls in (tests/runtime/quant/test_fuse_linears.py failed at 4+ rows of x).
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = std::fma(-8.0f, offset[m][r], hsum8(acc[m][r]));
}

template <bool INT4, int MT, int R>
inline void quant_block_q(const Problem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  INT4 ? int4_block_q<MT, R>(p, qx, m0, n0) : int8_block_q<MT, R>(p, qx, m0, n0);
}

// Every row of x against R rows of W from n, 4 rows of x at a time (the tile is read from memory
// once, then from L1/L2), then the one-row tail; R by the row count (rows_for).
template <bool INT4, int R>
void rows_q_tiles(const Problem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  auto tile = [&](auto r_tag, int64_t n) {
    constexpr int RR = decltype(r_tag)::value;
    int64_t m = 0;
    for (; m + 4 <= p.M; m += 4) quant_block_q<INT4, 4, RR>(p, qx, m, n);
    switch (p.M - m) {
      case 3: quant_block_q<INT4, 3, RR>(p, qx, m, n); break;
      case 2: quant_block_q<INT4, 2, RR>(p, qx, m, n); break;
      case 1: quant_block_q<INT4, 1, RR>(p, qx, m, n); break;
      default: break;
    }
  };
  int64_t n = n0;
  for (; n + R <= n1; n += R) tile(std::integral_constant<int, R>{}, n);
  for (; n < n1; ++n) tile(std::integral_constant<int, 1>{}, n);
}

template <bool INT4>
void rows_q_ymm(const Problem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  switch (p.M) {
    case 1: rows_q_tiles<INT4, rows_for<1>()>(p, qx, n0, n1); break;
    case 2: rows_q_tiles<INT4, rows_for<2>()>(p, qx, n0, n1); break;
    case 3: rows_q_tiles<INT4, rows_for<3>()>(p, qx, n0, n1); break;
    default: rows_q_tiles<INT4, rows_for<4>()>(p, qx, n0, n1); break;
  }
}

#ifdef JAXSERVE_VNNI

// ---- AVX-512 VNNI: the int8-activation kernels, 64 columns a step -----------------------------------
//
// The same products as the AVX2 path above (x's int8 blocks from quantize_x, the same integers), taken
// 512 bits at a time: one vpdpbusd sums 64 products of unsigned by signed bytes into 16 int32 lanes,
// lanes 0-7 from x's block 2j and 8-15 from block 2j + 1, so one conversion and one FMA with a vector of
// the two blocks' scales (QuantizedX::dv) fold a pair of blocks into the float32 accumulator, and each
// accumulator is summed across its lanes once per output, at the end. W's signed codes (int8, Q8_0)
// enter as |w| with x negated where w < 0 (AVX-512 has no vpsignb: a mask from w's sign bits and a
// masked subtract); Q4_1's nibbles are unsigned already. Like the float32 path, R rows of W share each
// load of x and MT <= 4 rows of x share each load of W; more rows of x re-read the R-row tile from L1.
//
// Why not integer sums over the whole K for int8's per-row scale: x's scale changes every 32 columns
// (quantize_activations, the numerical contract), so each block's sum is scaled on its own.
//
// Why opt-in (JAXSERVE_KERNEL_ISA=avx512_vnni), not the AVX-512 default: measured on a 2-core AMD EPYC
// (with avx512_vnni and avx512_bf16), SmolLM2-135M's 211 matrices at one row of x, two runs each, interleaved
// (scripts/bench_cpu_kernels.py --rows 1,4 --runs 10 --formats int8,gguf): the file's blocks are faster
// here (Q8_0 9.1 / 9.9 ms vs 13.8 / 10.6 with x in float32; Q4_1 6.6 / 5.8 vs 8.2 / 8.8), int8 with its
// per-row scale slower (9.1 / 11.6 vs 8.2 / 6.0: the float32 path's one FMA per 16 weights beats a
// conversion, a scale multiply and an FMA per pair of blocks), and at 4 rows no format gained. The build
// is one switch for every format, and int8 activations also turn off the fused layer calls
// (cpu.fused_calls_keep_the_numbers); choosing it per format is the next step, with the file's blocks as
// the serving default (issue 31).

constexpr int64_t kVnniPrefetch = 1024;  // bytes ahead in each row's stream

inline __m512i load_q2(const QuantizedX& qx, int64_t m, int64_t j) {  // x's blocks 2j, 2j + 1 of row m
  return _mm512_loadu_si512(qx.q.data() + m * qx.stride + j * 64);
}

inline const float* dv_at(const QuantizedX& qx, int64_t m, int64_t j) { return qx.dv.data() + (m * qx.np + j) * 16; }
inline const float* cv_at(const QuantizedX& qx, int64_t m, int64_t j) { return qx.cv.data() + (m * qx.np + j) * 16; }

// |w| . (x carrying w's sign): 16 int32 lanes of sums of 4 products.
inline __m512i dot_i8_i8_512(__m512i aw, __mmask64 neg, __m512i x) {
  const __m512i xs = _mm512_mask_sub_epi8(x, neg, _mm512_setzero_si512(), x);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), aw, xs);
}

// int8 W (per-row scale): MT rows of x times R rows of W.
template <int MT, int R>
inline void int8_block_v(const Problem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const int8_t* w = reinterpret_cast<const int8_t*>(p.w) + n0 * p.row_bytes;
  auto step = [&](int64_t j, __mmask64 km) {
    __m512i xq[MT];
    __m512 dv[MT];
    UNROLL for (int m = 0; m < MT; ++m) {
      xq[m] = load_q2(qx, m0 + m, j);
      dv[m] = _mm512_loadu_ps(dv_at(qx, m0 + m, j));
    }
    UNROLL for (int r = 0; r < R; ++r) {
      const int8_t* wr = w + r * p.row_bytes + j * 64;
      _mm_prefetch(reinterpret_cast<const char*>(wr) + kVnniPrefetch, _MM_HINT_T0);
      const __m512i wv = _mm512_maskz_loadu_epi8(km, wr);
      const __m512i aw = _mm512_abs_epi8(wv);
      const __mmask64 neg = _mm512_movepi8_mask(wv);
      UNROLL for (int m = 0; m < MT; ++m)
        acc[m][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_i8_i8_512(aw, neg, xq[m])), dv[m], acc[m][r]);
    }
  };
  const int64_t full = qx.nb / 2;
  for (int64_t j = 0; j < full; ++j) step(j, ~__mmask64{0});
  if (qx.nb & 1) step(full, __mmask64{0xFFFFFFFF});  // the last block alone (x's other half is 0)
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) {
      float t = _mm512_reduce_add_ps(acc[m][r]);
      for (int64_t k = qx.nb * 32; k < p.K; ++k)  // the float32 tail
        t += p.x[(m0 + m) * p.K + k] * static_cast<float>(w[r * p.row_bytes + k]);
      p.y[(m0 + m) * p.N + n0 + r] = t * p.s[n0 + r];
    }
}

template <bool INT4>
void rows_q(const Problem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  if (INT4) return rows_q_ymm<true>(p, qx, n0, n1);  // int4: the AVX2 path's 256-bit kernel, vpdpbusd dots
  tiles_v<8, 4>(p.M, n0, n1, [&](auto mt, auto rt, int64_t m, int64_t n) {
    int8_block_v<decltype(mt)::value, decltype(rt)::value>(p, qx, m, n);
  });
}

#else

template <bool INT4>
void rows_q(const Problem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  rows_q_ymm<INT4>(p, qx, n0, n1);
}

#endif

#endif

void matmul(ffi::ThreadPool& pool, const Problem& p, bool int4, int64_t max_threads) {
#ifdef JAXSERVE_Q8X
  auto qx = std::make_shared<QuantizedX>();  // shared: a helper that runs late still reads live memory
  quantize_x(p.x, p.M, p.K, p.K, qx.get());
  run_tiles(pool, p.N, p.N * p.row_bytes, max_threads, [p, int4, qx](int64_t n0, int64_t n1) {
    int4 ? rows_q<true>(p, *qx, n0, n1) : rows_q<false>(p, *qx, n0, n1);
  });
#else
  run_tiles(pool, p.N, p.N * p.row_bytes, max_threads,
            [p, int4](int64_t n0, int64_t n1) { int4 ? rows<true>(p, n0, n1) : rows<false>(p, n0, n1); });
#endif
}

ffi::Error check(bool ok, const char* msg) {
  return ok ? ffi::Error::Success() : ffi::Error(ffi::ErrorCode::kInvalidArgument, msg);
}

ffi::Error Q8Impl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::S8> w,
                  ffi::Buffer<ffi::F32> scale, ffi::ResultBuffer<ffi::F32> y, int64_t threads) {
  const auto xd = x.dimensions(), wd = w.dimensions();
  if (auto e = check(xd.size() == 2 && wd.size() == 2 && xd[1] == wd[1], "q8 matmul: x [M, K], w [N, K]"); e.failure())
    return e;
  if (auto e = check(scale.element_count() == static_cast<size_t>(wd[0]), "q8 matmul: scale [N]"); e.failure()) return e;
  Problem p{x.typed_data(), reinterpret_cast<const uint8_t*>(w.typed_data()), scale.typed_data(), y->typed_data(),
            xd[0], wd[0], xd[1], wd[1], 0, 0};
  matmul(pool, p, false, threads);
  return ffi::Error::Success();
}

// int4 (p.group, p.num_groups set) with x [M, K] for any K up to the padded Kp = num_groups * group.
void q4_matmul(ffi::ThreadPool& pool, Problem p, int64_t threads) {
#if !defined(JAXSERVE_AVX512) || defined(JAXSERVE_Q8X)
  // The AVX2, int8-activation and portable loops read x in whole groups: a K that ends inside the last group gets a
  // zero-padded copy of x (M x Kp floats; the padded codes are 8, i.e. 0.0, so the sum is unchanged).
  std::vector<float> padded;
  if (const int64_t kp = p.num_groups * p.group; kp != p.K) {
    padded.assign(p.M * kp, 0.0f);
    for (int64_t m = 0; m < p.M; ++m) std::copy(p.x + m * p.K, p.x + (m + 1) * p.K, padded.begin() + m * kp);
    p.x = padded.data();
    p.K = kp;
  }
#endif
  matmul(pool, p, true, threads);
}

ffi::Error Q4Impl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::U8> w,
                  ffi::Buffer<ffi::F32> scale, ffi::ResultBuffer<ffi::F32> y, int64_t group, int64_t threads) {
  const auto xd = x.dimensions(), wd = w.dimensions(), sd = scale.dimensions();
  if (auto e = check(xd.size() == 2 && wd.size() == 2 && sd.size() == 2, "q4 matmul: x [M, K], w [N, Kp/2], scale [N, Kp/G]");
      e.failure())
    return e;
  if (auto e = check(group >= 32 && group % 32 == 0 && sd[0] == wd[0] && sd[1] * group == 2 * wd[1] &&
                         xd[1] <= 2 * wd[1] && xd[1] > 2 * wd[1] - group,
                     "q4 matmul: group must be a multiple of 32 and Kp = ceil(K / G) * G");
      e.failure())
    return e;
  q4_matmul(pool, Problem{x.typed_data(), w.typed_data(), scale.typed_data(), y->typed_data(), xd[0], wd[0], xd[1],
                          wd[1], group, sd[1]},
            threads);
  return ffi::Error::Success();
}

// ---- GGUF blocks, as the file stores them -------------------------------------------------------
//
// w: uint8 [N, K / 32 * B], row n = the K / 32 blocks of output feature n, each block exactly as the
// GGUF file holds it (ggml's block_q8_0 / block_q4_1, little-endian):
//   Q8_0  B = 34: f16 d, int8 q[32]                 W = d * q
//   Q4_1  B = 20: f16 d, f16 m, uint8 qs[16]        W = d * nibble + m; byte j: element j in its low
//                                                   nibble, element j + 16 in its high nibble
// so a quantized model computes what its file says, held at the file's size. x stays float32: a
// block's 32 codes widen to float lanes (Q4_1: a 16-entry table d * i + m picked by vpermps) and
// feed FMAs; Q8_0 sums x . q per block and scales the block sum by d.

struct GgufProblem {
  const float* x;     // [M, K]
  const uint8_t* w;   // [N, row_bytes]
  float* y;           // [M, N]
  int64_t M, N, K, row_bytes;
  const float* xsum = nullptr;  // [M, K / 32] block sums of x (Q4_1 on the AVX2 and portable paths)
};

inline float f16_to_f32(const uint8_t* p) {
  uint16_t h;
  __builtin_memcpy(&h, p, 2);
#if defined(JAXSERVE_AVX512) || defined(JAXSERVE_AVX2)
  return _cvtsh_ss(h);
#else
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      uint32_t m = man;
      do { ++e; m <<= 1; } while (!(m & 0x400));
      bits = sign | ((127 - 15 - e) << 23) | ((m & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
#endif
}

#if defined(JAXSERVE_AVX512) || defined(JAXSERVE_AVX2)

// Each of the R rows is its own stream (rows are row_bytes apart): one prefetch a row a block, a few
// blocks ahead, keeps every stream's next lines on the way (prefetching every other row, the first
// version, ran the Q8_0 LM head at 4.7 GB/s).
template <int R>
inline void gguf_prefetch(const uint8_t* w, int64_t row_bytes, int64_t off) {
  UNROLL for (int r = 0; r < R; ++r) _mm_prefetch(reinterpret_cast<const char*>(w + r * row_bytes + off + 256), _MM_HINT_T0);
}

#endif

#ifdef JAXSERVE_AVX512

template <int MT, int R>
inline void gguf_q8_0_block(const GgufProblem& p, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* x = p.x + m0 * p.K;
  const int64_t nb = p.K / 32;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * 34;
    gguf_prefetch<R>(w, p.row_bytes, off);
    __m512 lo[R], hi[R], d[R];
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + off;
      d[r] = _mm512_set1_ps(f16_to_f32(blk));
      lo[r] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 2))));
      hi[r] = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 18))));
    }
    UNROLL for (int m = 0; m < MT; ++m) {
      const __m512 xl = _mm512_loadu_ps(x + m * p.K + b * 32), xh = _mm512_loadu_ps(x + m * p.K + b * 32 + 16);
      UNROLL for (int r = 0; r < R; ++r)
        acc[m][r] = _mm512_fmadd_ps(_mm512_fmadd_ps(xh, hi[r], _mm512_mul_ps(xl, lo[r])), d[r], acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]);
}

template <int MT, int R>
inline void gguf_q4_1_block(const GgufProblem& p, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* x = p.x + m0 * p.K;
  const int64_t nb = p.K / 32;
  const __m512 codes = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * 20;
    gguf_prefetch<R>(w, p.row_bytes, off);
    __m512 lo[R], hi[R];
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + off;
      const __m512 table = _mm512_fmadd_ps(codes, _mm512_set1_ps(f16_to_f32(blk)), _mm512_set1_ps(f16_to_f32(blk + 2)));
      const __m512i q = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 4)));
      lo[r] = _mm512_permutexvar_ps(q, table);  // vpermps reads the low 4 bits of each index lane
      hi[r] = _mm512_permutexvar_ps(_mm512_srli_epi32(q, 4), table);
    }
    UNROLL for (int m = 0; m < MT; ++m) {
      const __m512 xl = _mm512_loadu_ps(x + m * p.K + b * 32), xh = _mm512_loadu_ps(x + m * p.K + b * 32 + 16);
      UNROLL for (int r = 0; r < R; ++r) {
        acc[m][r] = _mm512_fmadd_ps(xl, lo[r], acc[m][r]);
        acc[m][r] = _mm512_fmadd_ps(xh, hi[r], acc[m][r]);
      }
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]);
}

template <bool Q4, int MT, int R>
inline void gguf_block(const GgufProblem& p, int64_t m0, int64_t n0) {
  Q4 ? gguf_q4_1_block<MT, R>(p, m0, n0) : gguf_q8_0_block<MT, R>(p, m0, n0);
}

// Rows [n0, n1) of W against every row of x, 4 rows of x at a time (more rows re-widen the blocks:
// prefill chunks above max_kernel_rows in cpu.py take XLA's path).
template <bool Q4, int R>
void gguf_rows_r(const GgufProblem& p, int64_t n0, int64_t n1, int64_t* n_done) {
  int64_t n = n0;
  for (; n + R <= n1; n += R) {
    int64_t m = 0;
    for (; m + 4 <= p.M; m += 4) gguf_block<Q4, 4, R>(p, m, n);
    switch (p.M - m) {
      case 3: gguf_block<Q4, 3, R>(p, m, n); break;
      case 2: gguf_block<Q4, 2, R>(p, m, n); break;
      case 1: gguf_block<Q4, 1, R>(p, m, n); break;
      default: break;
    }
  }
  *n_done = n;
}

template <bool Q4>
void gguf_rows(const GgufProblem& p, int64_t n0, int64_t n1) {
  int64_t n = n0;
  if (p.M == 1) gguf_rows_r<Q4, 8>(p, n, n1, &n);  // one row of x: 8 independent accumulator chains
  gguf_rows_r<Q4, 4>(p, n, n1, &n);
  gguf_rows_r<Q4, 1>(p, n, n1, &n);
}

#elif defined(JAXSERVE_AVX2)

// A block's 32 codes widen to 4 x 8 float lanes and dot with x into a block sum, which its d scales
// into the row's accumulator. Q4_1's offset is m * sum(x over the block): the block sums of x are
// computed once per call (GgufImpl: p.xsum) instead of adding m to every weight.
template <int MT, int R>
inline void gguf_q8_0_block(const GgufProblem& p, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* x = p.x + m0 * p.K;
  const int64_t nb = p.K / 32;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * 34;
    gguf_prefetch<R>(w, p.row_bytes, off);
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + off;
      const __m256 d = _mm256_set1_ps(f16_to_f32(blk));
      const __m256 q0 = i8x8_to_f32(blk + 2), q1 = i8x8_to_f32(blk + 10), q2 = i8x8_to_f32(blk + 18),
                   q3 = i8x8_to_f32(blk + 26);
      UNROLL for (int m = 0; m < MT; ++m) {
        const float* xb = x + m * p.K + b * 32;
        __m256 t = _mm256_mul_ps(_mm256_loadu_ps(xb), q0);
        t = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 8), q1, t);
        t = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 16), q2, t);
        t = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 24), q3, t);
        acc[m][r] = _mm256_fmadd_ps(t, d, acc[m][r]);
      }
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = hsum8(acc[m][r]);
}

template <int MT, int R>
inline void gguf_q4_1_block(const GgufProblem& p, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  float offset[MT][R] = {};  // sum over blocks of m * sum(x over the block)
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const float* x = p.x + m0 * p.K;
  const int64_t nb = p.K / 32;
  const float* xsum = p.xsum + m0 * nb;
  const __m256i low4 = _mm256_set1_epi32(0xF);
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t off = b * 20;
    gguf_prefetch<R>(w, p.row_bytes, off);
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + off;
      const __m256 d = _mm256_set1_ps(f16_to_f32(blk));
      const float mn = f16_to_f32(blk + 2);
      const __m256i b0 = u8x8_to_i32(blk + 4), b1 = u8x8_to_i32(blk + 12);  // bytes 0-7, 8-15
      const __m256 q0 = _mm256_cvtepi32_ps(_mm256_and_si256(b0, low4));       // elements 0-7
      const __m256 q1 = _mm256_cvtepi32_ps(_mm256_and_si256(b1, low4));       // 8-15
      const __m256 q2 = _mm256_cvtepi32_ps(_mm256_srli_epi32(b0, 4));         // 16-23
      const __m256 q3 = _mm256_cvtepi32_ps(_mm256_srli_epi32(b1, 4));         // 24-31
      UNROLL for (int m = 0; m < MT; ++m) {
        const float* xb = x + m * p.K + b * 32;
        __m256 t = _mm256_mul_ps(_mm256_loadu_ps(xb), q0);
        t = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 8), q1, t);
        t = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 16), q2, t);
        t = _mm256_fmadd_ps(_mm256_loadu_ps(xb + 24), q3, t);
        acc[m][r] = _mm256_fmadd_ps(t, d, acc[m][r]);
        // One fused multiply-add, spelled out: left to the compiler, the contraction differed between the
        // 4-row tile and the 1-row tail, and a row's output depended on where in W it sat (a stacked q, k, v
        // gave other bits than the parts: tests/runtime/quant/test_fuse_linears.py, avx2_float).
        offset[m][r] = std::fma(mn, xsum[m * nb + b], offset[m][r]);
      }
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = hsum8(acc[m][r]) + offset[m][r];
}

template <bool Q4, int MT, int R>
inline void gguf_block(const GgufProblem& p, int64_t m0, int64_t n0) {
  Q4 ? gguf_q4_1_block<MT, R>(p, m0, n0) : gguf_q8_0_block<MT, R>(p, m0, n0);
}

// Every row of x against R rows of W from n, 4 rows of x at a time: the tile is read from memory for
// the first 4 and from L1/L2 for the rest.
template <bool Q4, int R>
inline void gguf_tile(const GgufProblem& p, int64_t n) {
  int64_t m = 0;
  for (; m + 4 <= p.M; m += 4) gguf_block<Q4, 4, R>(p, m, n);
  switch (p.M - m) {
    case 3: gguf_block<Q4, 3, R>(p, m, n); break;
    case 2: gguf_block<Q4, 2, R>(p, m, n); break;
    case 1: gguf_block<Q4, 1, R>(p, m, n); break;
    default: break;
  }
}

template <bool Q4, int R>
void gguf_tiles(const GgufProblem& p, int64_t n0, int64_t n1) {
  int64_t n = n0;
  for (; n + R <= n1; n += R) gguf_tile<Q4, R>(p, n);
  for (; n < n1; ++n) gguf_tile<Q4, 1>(p, n);
}

// Rows [n0, n1) of W against every row of x (more than max_kernel_rows in cpu.py: XLA's path).
template <bool Q4>
void gguf_rows(const GgufProblem& p, int64_t n0, int64_t n1) {
  switch (p.M) {
    case 1: gguf_tiles<Q4, rows_for<1>()>(p, n0, n1); break;
    case 2: gguf_tiles<Q4, rows_for<2>()>(p, n0, n1); break;
    case 3: gguf_tiles<Q4, rows_for<3>()>(p, n0, n1); break;
    default: gguf_tiles<Q4, rows_for<4>()>(p, n0, n1); break;
  }
}

#else  // portable (omp simd reductions); Q4_1's offset from the block sums of x, as above

template <bool Q4>
void gguf_rows(const GgufProblem& p, int64_t n0, int64_t n1) {
  const int64_t nb = p.K / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* row = p.w + n * p.row_bytes;
    for (int64_t m = 0; m < p.M; ++m) {
      const float* x = p.x + m * p.K;
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * 32;
        float part = 0.0f;
        if (Q4) {
          const uint8_t* q = row + b * 20 + 4;
#pragma omp simd reduction(+ : part)
          for (int j = 0; j < 16; ++j) part += xb[j] * static_cast<float>(q[j] & 0xF) + xb[16 + j] * static_cast<float>(q[j] >> 4);
          acc += part * f16_to_f32(row + b * 20) + f16_to_f32(row + b * 20 + 2) * p.xsum[m * nb + b];
        } else {
          const int8_t* q = reinterpret_cast<const int8_t*>(row + b * 34 + 2);
#pragma omp simd reduction(+ : part)
          for (int j = 0; j < 32; ++j) part += xb[j] * static_cast<float>(q[j]);
          acc += part * f16_to_f32(row + b * 34);
        }
      }
      p.y[m * p.N + n] = acc;
    }
  }
}

#endif

#ifdef JAXSERVE_Q8X

// The file's blocks against x's int8 blocks (quantize_x): Q8_0 d_w * d_x * (q_w . q_x); Q4_1
// d_w * d_x * (nibbles . q_x) + m_w * d_x * sum(q_x), all of it the quantized x times W.
// x's blocks for MT rows, read before the R rows of W (every store into the accumulators could alias
// them as far as the compiler knows, which would reload them for every row otherwise).
template <int MT>
struct XBlock {
  __m256i q[MT];
  float d[MT], c[MT];
  XBlock(const QuantizedX& qx, int64_t m0, int64_t b) {
    UNROLL for (int m = 0; m < MT; ++m) {
      q[m] = load_q(qx, m0 + m, b);
      d[m] = qx.d[(m0 + m) * qx.nb + b];
      c[m] = qx.c[(m0 + m) * qx.nb + b];
    }
  }
};

template <int MT, int R>
inline void gguf_q8_0_block_q(const GgufProblem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  for (int64_t b = 0; b < qx.nb; ++b) {
    if ((b & 1) == 0) gguf_prefetch<R>(w, p.row_bytes, b * 34);  // a line every 2 blocks (68 bytes)
    const XBlock<MT> xb(qx, m0, b);
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + b * 34;
      const float dw = f16_to_f32(blk);
      const __m256i wv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      const __m256i aw = _mm256_sign_epi8(wv, wv);
      UNROLL for (int m = 0; m < MT; ++m)
        acc[m][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_u8_i8(aw, _mm256_sign_epi8(xb.q[m], wv))),
                                    _mm256_set1_ps(dw * xb.d[m]), acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = hsum8(acc[m][r]);
}

// Q4_1's offset m_w * d_x * sum(q_x) goes into lane 0 of the accumulator (the final sum adds all
// lanes), so no scalar accumulators compete with the vector ones for registers.
template <int MT, int R>
inline void gguf_q4_1_block_q(const GgufProblem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const __m128i low4 = _mm_set1_epi8(0x0F);
  for (int64_t b = 0; b < qx.nb; ++b) {
    if (b % 3 == 0) gguf_prefetch<R>(w, p.row_bytes, b * 20);  // a line every 3 blocks (60 bytes)
    const XBlock<MT> xb(qx, m0, b);
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + b * 20;
      uint32_t dm_bits;  // f16 d and m, converted together
      __builtin_memcpy(&dm_bits, blk, 4);
      const __m128 dm = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(dm_bits)));
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 4));
      // byte j: element j in its low nibble, element j + 16 in its high one
      const __m256i codes = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v, 4), low4), _mm_and_si128(v, low4));
      const float dw = _mm_cvtss_f32(dm), mw = _mm_cvtss_f32(_mm_movehdup_ps(dm));
      UNROLL for (int m = 0; m < MT; ++m) {
        acc[m][r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot_u8_i8(codes, xb.q[m])), _mm256_set1_ps(dw * xb.d[m]), acc[m][r]);
        acc[m][r] = _mm256_add_ps(acc[m][r], _mm256_zextps128_ps256(_mm_set_ss(mw * xb.c[m])));  // lanes 1-7: 0
      }
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = hsum8(acc[m][r]);
}

template <bool Q4, int R>
void gguf_rows_q_tiles(const GgufProblem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  auto tile = [&](auto r_tag, int64_t n) {
    constexpr int RR = decltype(r_tag)::value;
    auto blk = [&](auto m_tag, int64_t m) {
      constexpr int MT = decltype(m_tag)::value;
      Q4 ? gguf_q4_1_block_q<MT, RR>(p, qx, m, n) : gguf_q8_0_block_q<MT, RR>(p, qx, m, n);
    };
    int64_t m = 0;
    for (; m + 4 <= p.M; m += 4) blk(std::integral_constant<int, 4>{}, m);
    switch (p.M - m) {
      case 3: blk(std::integral_constant<int, 3>{}, m); break;
      case 2: blk(std::integral_constant<int, 2>{}, m); break;
      case 1: blk(std::integral_constant<int, 1>{}, m); break;
      default: break;
    }
  };
  int64_t n = n0;
  for (; n + R <= n1; n += R) tile(std::integral_constant<int, R>{}, n);
  for (; n < n1; ++n) tile(std::integral_constant<int, 1>{}, n);
}

template <bool Q4>
void gguf_rows_q_ymm(const GgufProblem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  switch (p.M) {
    // one row of x: Q4_1 8 rows of W a block, Q8_0 4 (its 34-byte blocks: measured 3.1 vs 4.3 ms for
    // SmolLM2's LM head at 4, 8; Q4_1 6.7 vs 7.0 ms for its layers at 8, 4)
    case 1: Q4 ? gguf_rows_q_tiles<Q4, 8>(p, qx, n0, n1) : gguf_rows_q_tiles<Q4, 4>(p, qx, n0, n1); break;
    case 2: gguf_rows_q_tiles<Q4, rows_for<2>()>(p, qx, n0, n1); break;
    case 3: gguf_rows_q_tiles<Q4, rows_for<3>()>(p, qx, n0, n1); break;
    default: gguf_rows_q_tiles<Q4, rows_for<4>()>(p, qx, n0, n1); break;
  }
}

#ifdef JAXSERVE_VNNI

// The file's blocks, two at a time, against x's pairs of blocks (see "AVX-512 VNNI" above). A pair of
// blocks of a row is 68 (Q8_0) or 40 (Q4_1) bytes: its codes gather into one zmm, its two f16 scales
// (and Q4_1's two minimums) into lanes 0-7 and 8-15 of a vector. An odd last block pairs with itself
// (its copy meets x's zero half).

inline uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

inline uint32_t load_u16(const uint8_t* p) {
  uint16_t v;
  __builtin_memcpy(&v, p, 2);
  return v;
}

template <int MT, int R>
inline void gguf_q8_0_block_v(const GgufProblem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const __m512i spread = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  auto step = [&](int64_t j, bool pair) {
    __m512i xq[MT];
    __m512 dv[MT];
    UNROLL for (int m = 0; m < MT; ++m) {
      xq[m] = load_q2(qx, m0 + m, j);
      dv[m] = _mm512_loadu_ps(dv_at(qx, m0 + m, j));
    }
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + j * 68;
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kVnniPrefetch, _MM_HINT_T0);
      const uint8_t* blk1 = pair ? blk + 34 : blk;
      const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
      const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk1 + 2));
      const __m512i wv = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      const __m128 d2 = _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u16(blk) | load_u16(blk1) << 16)));
      const __m512 dw = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(d2));
      const __m512i aw = _mm512_abs_epi8(wv);
      const __mmask64 neg = _mm512_movepi8_mask(wv);
      UNROLL for (int m = 0; m < MT; ++m)
        acc[m][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot_i8_i8_512(aw, neg, xq[m])), _mm512_mul_ps(dw, dv[m]), acc[m][r]);
    }
  };
  const int64_t full = qx.nb / 2;
  for (int64_t j = 0; j < full; ++j) step(j, true);
  if (qx.nb & 1) step(full, false);
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]);
}

// Q4_1: d_w * d_x * (nibbles . q_x) + m_w * (d_x * sum(q_x)), the second term as m_w times x's c / 8 in
// each of the block's 8 lanes (QuantizedX::cv).
template <int MT, int R>
inline void gguf_q4_1_block_v(const GgufProblem& p, const QuantizedX& qx, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const uint8_t* w = p.w + n0 * p.row_bytes;
  const __m512i d_lanes = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2);
  const __m512i m_lanes = _mm512_setr_epi32(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  auto step = [&](int64_t j, bool pair) {
    __m512i xq[MT];
    __m512 dv[MT], cv[MT];
    UNROLL for (int m = 0; m < MT; ++m) {
      xq[m] = load_q2(qx, m0 + m, j);
      dv[m] = _mm512_loadu_ps(dv_at(qx, m0 + m, j));
      cv[m] = _mm512_loadu_ps(cv_at(qx, m0 + m, j));
    }
    UNROLL for (int r = 0; r < R; ++r) {
      const uint8_t* blk = w + r * p.row_bytes + j * 40;
      _mm_prefetch(reinterpret_cast<const char*>(blk) + kVnniPrefetch, _MM_HINT_T0);
      const uint8_t* blk1 = pair ? blk + 20 : blk;
      // 128-bit lanes: block 2j's 16 bytes twice, then block 2j + 1's twice; the second copy of each
      // shifted right by 4 (the high nibbles: elements 16-31), then the low 4 bits of every byte.
      __m512i z = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 4)));
      z = _mm512_mask_broadcast_i32x4(z, 0xFF00, _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk1 + 4)));
      z = _mm512_and_si512(_mm512_mask_srli_epi16(z, 0xFF00FF00u, z, 4), low4);
      const __m128 dm = _mm_cvtph_ps(_mm_insert_epi32(_mm_cvtsi32_si128(static_cast<int>(load_u32(blk))),
                                                      static_cast<int>(load_u32(blk1)), 1));  // d0 m0 d1 m1
      const __m512 dm5 = _mm512_castps128_ps512(dm);
      const __m512 dw = _mm512_permutexvar_ps(d_lanes, dm5), mw = _mm512_permutexvar_ps(m_lanes, dm5);
      UNROLL for (int m = 0; m < MT; ++m) {
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), z, xq[m]);
        acc[m][r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(dw, dv[m]), acc[m][r]);
        acc[m][r] = _mm512_fmadd_ps(mw, cv[m], acc[m][r]);
      }
    }
  };
  const int64_t full = qx.nb / 2;
  for (int64_t j = 0; j < full; ++j) step(j, true);
  if (qx.nb & 1) step(full, false);
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]);
}

template <bool Q4>
void gguf_rows_q(const GgufProblem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  if (Q4)
    tiles_v<8, 3>(p.M, n0, n1, [&](auto mt, auto rt, int64_t m, int64_t n) {
      gguf_q4_1_block_v<decltype(mt)::value, decltype(rt)::value>(p, qx, m, n);
    });
  else
    tiles_v<4, 4>(p.M, n0, n1, [&](auto mt, auto rt, int64_t m, int64_t n) {
      gguf_q8_0_block_v<decltype(mt)::value, decltype(rt)::value>(p, qx, m, n);
    });
}

#else

template <bool Q4>
void gguf_rows_q(const GgufProblem& p, const QuantizedX& qx, int64_t n0, int64_t n1) {
  gguf_rows_q_ymm<Q4>(p, qx, n0, n1);
}

#endif

#endif

void gguf_matmul(ffi::ThreadPool& pool, GgufProblem p, bool q4, int64_t threads);

ffi::Error GgufImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::U8> w,
                    ffi::ResultBuffer<ffi::F32> y, int64_t block_type, int64_t threads) {
  const auto xd = x.dimensions(), wd = w.dimensions();
  const int64_t bytes = block_type == 1 ? 20 : 34;  // 1: Q4_1, 0: Q8_0
  if (auto e = check(xd.size() == 2 && wd.size() == 2 && xd[1] % 32 == 0 && wd[1] == xd[1] / 32 * bytes,
                     "gguf matmul: x [M, K] (K a multiple of 32), w [N, K / 32 * block bytes]");
      e.failure())
    return e;
  gguf_matmul(pool, GgufProblem{x.typed_data(), w.typed_data(), y->typed_data(), xd[0], wd[0], xd[1], wd[1]},
              block_type == 1, threads);
  return ffi::Error::Success();
}

// block_type 1: Q4_1 (q4), 0: Q8_0.
void gguf_matmul(ffi::ThreadPool& pool, GgufProblem p, bool q4, int64_t threads) {
#if !defined(JAXSERVE_AVX512) && !defined(JAXSERVE_Q8X)
  std::vector<float> xsum;  // Q4_1: W = d * q + m, so x . W over a block = d * (x . q) + m * sum(x)
  if (q4) {
    const int64_t nb = p.K / 32;
    xsum.resize(p.M * nb);
    for (int64_t i = 0; i < p.M * nb; ++i) {
      float t = 0.0f;
      for (int j = 0; j < 32; ++j) t += p.x[i * 32 + j];
      xsum[i] = t;
    }
    p.xsum = xsum.data();
  }
#endif
#ifdef JAXSERVE_Q8X
  auto qx = std::make_shared<QuantizedX>();
  quantize_x(p.x, p.M, p.K, p.K, qx.get());
  run_tiles(pool, p.N, p.N * p.row_bytes, threads, [p, q4, qx](int64_t n0, int64_t n1) {
    q4 ? gguf_rows_q<true>(p, *qx, n0, n1) : gguf_rows_q<false>(p, *qx, n0, n1);
  });
#else
  run_tiles(pool, p.N, p.N * p.row_bytes, threads,
            [p, q4](int64_t n0, int64_t n1) { q4 ? gguf_rows<true>(p, n0, n1) : gguf_rows<false>(p, n0, n1); });
#endif
}

// ---- float32 weights, a row per output feature ---------------------------------------------------
//
// w: f32 [N, K] (a Linear kernel transposed once at load: runtime/quant/weights.py DenseMatrix).
// XLA:CPU's dot runs [M, K] x [K, N] at 28 GB/s for M = 1 but 17 GB/s for M = 2 and 10-11 GB/s for
// M = 4..16 here (measured: 60 matrices of 576 x 1536), so steps of a few rows (speculative drafts,
// small decode batches) cost far more than one row though they read the same bytes. This kernel keeps
// every row count near the streaming rate: an R-row tile of W is read from memory once, for the
// first 4 rows of x, and from L1 (R x K x 4 bytes: 24 KB at K = 1536) for every further 4.

struct DenseProblem {
  const float* x;  // [M, K]
  const float* w;  // [N, K]
  float* y;        // [M, N]
  int64_t M, N, K;
};

#if defined(JAXSERVE_AVX512) || defined(JAXSERVE_AVX2)

// MT rows of x times R rows of W over the whole K (each path's own, below); PREFETCH for the pass
// that streams W.
template <int MT, int R, bool PREFETCH>
inline void dense_block(const DenseProblem& p, int64_t m0, int64_t n0);

// Every row of x against one R-row tile of W: the first block of (up to) 4 rows streams W.
template <int R>
inline void dense_tile(const DenseProblem& p, int64_t n) {
  int64_t m = 0;
  switch (p.M < 4 ? p.M : 4) {
    case 4: dense_block<4, R, true>(p, 0, n); m = 4; break;
    case 3: dense_block<3, R, true>(p, 0, n); m = 3; break;
    case 2: dense_block<2, R, true>(p, 0, n); m = 2; break;
    default: dense_block<1, R, true>(p, 0, n); m = 1; break;
  }
  for (; m + 4 <= p.M; m += 4) dense_block<4, R, false>(p, m, n);
  switch (p.M - m) {
    case 3: dense_block<3, R, false>(p, m, n); break;
    case 2: dense_block<2, R, false>(p, m, n); break;
    case 1: dense_block<1, R, false>(p, m, n); break;
    default: break;
  }
}

#endif

#ifdef JAXSERVE_AVX512

// MT rows of x times R rows of W over the whole K; prefetch=true for the pass that streams W.
template <int MT, int R, bool PREFETCH>
inline void dense_block(const DenseProblem& p, int64_t m0, int64_t n0) {
  __m512 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_setzero_ps();
  const float* w = p.w + n0 * p.K;
  const float* x = p.x + m0 * p.K;
  // Each step reads one cache line of each of the R rows: prefetch R lines of the next tile
  // (+4 KiB), in step with the linear position, as prefetch_ahead does for the int8 codes.
  const char* front = reinterpret_cast<const char*>(w + R * p.K) + 4096;
  for (int64_t k = 0; k < p.K; k += 16) {
    const __mmask16 mask = tail_mask(k, p.K);
    if (PREFETCH) UNROLL for (int r = 0; r < R; ++r) _mm_prefetch(front + (k * R + r * 16) * 4, _MM_HINT_T0);
    __m512 wf[R];
    UNROLL for (int r = 0; r < R; ++r) wf[r] = _mm512_maskz_loadu_ps(mask, w + r * p.K + k);
    UNROLL for (int m = 0; m < MT; ++m) {
      const __m512 xv = _mm512_maskz_loadu_ps(mask, x + m * p.K + k);
      UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm512_fmadd_ps(xv, wf[r], acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) p.y[(m0 + m) * p.N + n0 + r] = _mm512_reduce_add_ps(acc[m][r]);
}

void dense_rows(const DenseProblem& p, int64_t n0, int64_t n1) {
  int64_t n = n0;
  if (p.M == 1)  // one row of x: 8 rows of W (8 independent FMA chains)
    for (; n + 8 <= n1; n += 8) dense_tile<8>(p, n);
  for (; n + 4 <= n1; n += 4) dense_tile<4>(p, n);
  for (; n < n1; ++n) dense_tile<1>(p, n);
}

#elif defined(JAXSERVE_AVX2)

// MT rows of x times R rows of W over the whole K; PREFETCH for the pass that streams W (one line of
// each of the R rows every 16 floats, as above).
template <int MT, int R, bool PREFETCH>
inline void dense_block(const DenseProblem& p, int64_t m0, int64_t n0) {
  __m256 acc[MT][R];
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) acc[m][r] = _mm256_setzero_ps();
  const float* w = p.w + n0 * p.K;
  const float* x = p.x + m0 * p.K;
  const char* front = reinterpret_cast<const char*>(w + R * p.K) + 4096;
  const int64_t k8 = p.K & ~int64_t{7};
  for (int64_t k = 0; k < k8; k += 8) {
    if (PREFETCH && (k & 15) == 0)
      UNROLL for (int r = 0; r < R; ++r) _mm_prefetch(front + (k * R + r * 16) * 4, _MM_HINT_T0);
    UNROLL for (int r = 0; r < R; ++r) {
      const __m256 wf = _mm256_loadu_ps(w + r * p.K + k);
      UNROLL for (int m = 0; m < MT; ++m) acc[m][r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + m * p.K + k), wf, acc[m][r]);
    }
  }
  UNROLL for (int m = 0; m < MT; ++m)
    UNROLL for (int r = 0; r < R; ++r) {
      float t = hsum8(acc[m][r]);
      for (int64_t k = k8; k < p.K; ++k) t += x[m * p.K + k] * w[r * p.K + k];
      p.y[(m0 + m) * p.N + n0 + r] = t;
    }
}

template <int R>
void dense_tiles(const DenseProblem& p, int64_t n0, int64_t n1) {
  int64_t n = n0;
  for (; n + R <= n1; n += R) dense_tile<R>(p, n);
  for (; n < n1; ++n) dense_tile<1>(p, n);
}

void dense_rows(const DenseProblem& p, int64_t n0, int64_t n1) {
  switch (p.M) {  // the register tile of rows_for (MT * R <= 12 accumulators)
    case 1: dense_tiles<rows_for<1>()>(p, n0, n1); break;
    case 2: dense_tiles<rows_for<2>()>(p, n0, n1); break;
    case 3: dense_tiles<rows_for<3>()>(p, n0, n1); break;
    default: dense_tiles<rows_for<4>()>(p, n0, n1); break;
  }
}

#else  // portable (omp simd reduction)

void dense_rows(const DenseProblem& p, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n)
    for (int64_t m = 0; m < p.M; ++m) {
      const float* x = p.x + m * p.K;
      const float* w = p.w + n * p.K;
      float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
      for (int64_t k = 0; k < p.K; ++k) acc += x[k] * w[k];
      p.y[m * p.N + n] = acc;
    }
}

#endif

void dense_matmul(ffi::ThreadPool& pool, const DenseProblem& p, int64_t threads) {
  run_tiles(pool, p.N, p.N * p.K * 4, threads, [p](int64_t n0, int64_t n1) { dense_rows(p, n0, n1); });
}

ffi::Error DenseImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> w,
                     ffi::ResultBuffer<ffi::F32> y, int64_t threads) {
  const auto xd = x.dimensions(), wd = w.dimensions();
  if (auto e = check(xd.size() == 2 && wd.size() == 2 && xd[1] == wd[1], "dense matmul: x [M, K], w [N, K]"); e.failure())
    return e;
  dense_matmul(pool, DenseProblem{x.typed_data(), w.typed_data(), y->typed_data(), xd[0], wd[0], xd[1]}, threads);
  return ffi::Error::Success();
}

// ---- a layer's gated MLP in one call ----------------------------------------------------------------
//
//   y = x + post(down(act(gate(h)) * up(h))),   h = rms_norm(x) * norm,   x = x_in + residual or x_in
//
// x_in [M, D] the residual stream; residual [M, D] the attention block's output to add to it first (one
// float32 add, as DecoderLayer's x + h: the same bits) or [0]; gate and up one stacked matrix [2F, D] (runtime/quant/weights.py
// fuse_linears: gate's rows, then up's), down [D, F], each in any of the formats above; post the
// sandwich norm rms_norm(.) * post_norm (Gemma 3) when post_norm has D entries, else nothing; act SiLU
// or tanh-GELU. runtime.models.common.DecoderLayer is the definition (runtime/quant/cpu.py gated_mlp
// the call). Why one call: in XLA:CPU the block is 8 ops (the norm's reduce, rsqrt and scale, two
// matmul calls, the activation, the residual add), each dispatched on its own; here it is one, and the
// two matrices are the same kernels' work as before. The norm sums x * x in float32 in another order
// than XLA's reduce, and exp is a polynomial (exp_f32): a few float32 roundings from the XLA block.

struct WeightMatrix {  // one of the formats above, as the FFI buffers hold it
  int64_t kind;         // 0 int8 [N, K], 1 int4 [N, Kp / 2], 2 GGUF blocks [N, K / 32 * B], 3 float32 [N, K]
  const void* w;
  const float* s;       // int8: [N]; int4: [N, Kp / G]; otherwise unused
  int64_t N, row_bytes, param, num_scales;  // param: int4's group, GGUF's block type (1: Q4_1, 0: Q8_0)
};

void matmul_any(ffi::ThreadPool& pool, const WeightMatrix& m, const float* x, int64_t M, int64_t K, float* y,
                int64_t threads) {
  const auto* w = static_cast<const uint8_t*>(m.w);
  switch (m.kind) {
    case 0: matmul(pool, Problem{x, w, m.s, y, M, m.N, K, m.row_bytes, 0, 0}, false, threads); break;
    case 1: q4_matmul(pool, Problem{x, w, m.s, y, M, m.N, K, m.row_bytes, m.param, m.num_scales}, threads); break;
    case 2: gguf_matmul(pool, GgufProblem{x, w, y, M, m.N, K, m.row_bytes}, m.param == 1, threads); break;
    default: dense_matmul(pool, DenseProblem{x, static_cast<const float*>(m.w), y, M, m.N, K}, threads); break;
  }
}

// exp(x) as a polynomial that a plain loop vectorizes (libm's expf does not): Cephes' expf, range
// reduction by ln 2 (split in two parts) and a degree-6 polynomial, within 2 ulp on [-87, 88] (x clamped
// there: the activations only need exp to saturate to 0 or a huge value past it).
inline float exp_f32(float x) {
  x = std::min(std::max(x, -87.0f), 88.0f);
  // n = round(x / ln 2) without a branch: adding 1.5 * 2^23 leaves no fraction bits (|x / ln 2| < 2^22)
  const float fn = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const int32_t n = static_cast<int32_t>(fn);
  float r = x - fn * 0.693359375f;
  r = r - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t bits = (n + 127) << 23;
  float two_n;
  __builtin_memcpy(&two_n, &bits, 4);
  return p * two_n;
}

// rows of x [M, D] -> out = x / sqrt(mean(x * x) + eps) * scale, as runtime.models.common.rms_norm.
void rms_norm_rows(const float* x, const float* scale, int64_t M, int64_t D, float eps, float* out) {
  for (int64_t m = 0; m < M; ++m) {
    const float* xm = x + m * D;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t k = 0; k < D; ++k) ss += xm[k] * xm[k];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(D) + eps);
    float* o = out + m * D;
#pragma omp simd
    for (int64_t k = 0; k < D; ++k) o[k] = xm[k] * inv * scale[k];
  }
}

ffi::Error weight_matrix(const ffi::AnyBuffer& w, const ffi::Buffer<ffi::F32>& s, int64_t kind, int64_t param,
                         int64_t K, WeightMatrix* out) {
  const auto wd = w.dimensions();
  if (wd.size() != 2) return check(false, "gated mlp: a weight matrix is [N, row bytes]");
  const int64_t N = wd[0], cols = wd[1];
  const int64_t elem = static_cast<int64_t>(ffi::ByteWidth(w.element_type()));
  *out = WeightMatrix{kind, w.untyped_data(), s.typed_data(), N, cols * elem, param, 0};
  switch (kind) {
    case 0: return check(elem == 1 && cols == K && s.element_count() == static_cast<size_t>(N), "gated mlp: int8 [N, K], scale [N]");
    case 1: {
      const bool ok = elem == 1 && param >= 32 && param % 32 == 0 && (2 * cols) % param == 0 && 2 * cols >= K &&
                      2 * cols - param < K && s.element_count() == static_cast<size_t>(N * (2 * cols / param));
      out->num_scales = ok ? 2 * cols / param : 0;
      return check(ok, "gated mlp: int4 [N, Kp / 2], scale [N, Kp / G]");
    }
    case 2:
      return check(elem == 1 && K % 32 == 0 && cols == K / 32 * (param == 1 ? 20 : 34), "gated mlp: GGUF blocks [N, K / 32 * B]");
    case 3: return check(elem == 4 && cols == K, "gated mlp: float32 [N, K]");
    default: return check(false, "gated mlp: unknown weight kind");
  }
}

// ---- a norm and the matmul that reads it, in one call ----------------------------------------------
//
//   y = (rms_norm(x) * norm) . W^T      x [M, D], W [N, D] in any of the formats above
//
// A layer's attention norm and its stacked q/k/v (runtime.models.common.fused_norm_qkv): the norm's
// three XLA:CPU ops and the matmul's call become one call; the norm as in the gated MLP above.
ffi::Error NormMatmulImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x, ffi::Buffer<ffi::F32> norm, ffi::AnyBuffer w,
                          ffi::Buffer<ffi::F32> s, ffi::ResultBuffer<ffi::F32> y, int64_t kind, int64_t param, float eps,
                          int64_t threads) {
  const auto xd = x.dimensions();
  if (auto e = check(xd.size() == 2 && norm.element_count() == static_cast<size_t>(xd[1]), "norm matmul: x [M, D], norm [D]");
      e.failure())
    return e;
  const int64_t M = xd[0], D = xd[1];
  WeightMatrix m;
  if (auto e = weight_matrix(w, s, kind, param, D, &m); e.failure()) return e;
  thread_local std::vector<float> h;
  h.resize(M * D);
  rms_norm_rows(x.typed_data(), norm.typed_data(), M, D, eps, h.data());
  matmul_any(pool, m, h.data(), M, D, y->typed_data(), threads);
  return ffi::Error::Success();
}

ffi::Error GatedMlpImpl(ffi::ThreadPool pool, ffi::Buffer<ffi::F32> x_in, ffi::Buffer<ffi::F32> residual,
                        ffi::Buffer<ffi::F32> norm, ffi::Buffer<ffi::F32> post_norm, ffi::AnyBuffer gu_w, ffi::Buffer<ffi::F32> gu_s,
                        ffi::AnyBuffer dn_w, ffi::Buffer<ffi::F32> dn_s, ffi::ResultBuffer<ffi::F32> y,
                        int64_t gate_up_kind, int64_t gate_up_param, int64_t down_kind, int64_t down_param,
                        int64_t activation, float eps, int64_t threads) {
  const auto xd = x_in.dimensions();
  if (auto e = check(xd.size() == 2 && norm.element_count() == static_cast<size_t>(xd[1]) &&
                         (post_norm.element_count() == 0 || post_norm.element_count() == norm.element_count()) &&
                         (residual.element_count() == 0 || residual.element_count() == x_in.element_count()),
                     "gated mlp: x [M, D], residual [M, D] or [0], norm [D], post_norm [D] or [0]");
      e.failure())
    return e;
  const int64_t M = xd[0], D = xd[1];
  thread_local std::vector<float> xr;
  const float* x = x_in.typed_data();
  if (residual.element_count() != 0) {
    xr.resize(M * D);
    const float* r = residual.typed_data();
#pragma omp simd
    for (int64_t i = 0; i < M * D; ++i) xr[i] = x[i] + r[i];
    x = xr.data();
  }
  WeightMatrix gu, dn;
  if (auto e = weight_matrix(gu_w, gu_s, gate_up_kind, gate_up_param, D, &gu); e.failure()) return e;
  const int64_t F = gu.N / 2;
  if (auto e = check(gu.N % 2 == 0, "gated mlp: gate_up has 2F rows"); e.failure()) return e;
  if (auto e = weight_matrix(dn_w, dn_s, down_kind, down_param, F, &dn); e.failure()) return e;
  if (auto e = check(dn.N == D, "gated mlp: down [D, F]"); e.failure()) return e;
  thread_local std::vector<float> h, g, a, o;
  h.resize(M * D);
  g.resize(M * 2 * F);
  a.resize(M * F);
  o.resize(M * D);
  rms_norm_rows(x, norm.typed_data(), M, D, eps, h.data());
  matmul_any(pool, gu, h.data(), M, D, g.data(), threads);
  for (int64_t m = 0; m < M; ++m) {
    const float* gate = g.data() + m * 2 * F;
    const float* up = gate + F;
    float* am = a.data() + m * F;
    if (activation == 0) {  // SiLU: g * sigmoid(g)
#pragma omp simd
      for (int64_t j = 0; j < F; ++j) am[j] = gate[j] / (1.0f + exp_f32(-gate[j])) * up[j];
    } else {  // tanh-GELU: 0.5 g (1 + tanh(sqrt(2 / pi) (g + 0.044715 g^3))), tanh(u) = 1 - 2 / (exp(2u) + 1)
#pragma omp simd
      for (int64_t j = 0; j < F; ++j) {
        const float v = gate[j];
        const float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
        am[j] = 0.5f * v * (2.0f - 2.0f / (exp_f32(2.0f * u) + 1.0f)) * up[j];
      }
    }
  }
  matmul_any(pool, dn, a.data(), M, F, o.data(), threads);
  if (post_norm.element_count() != 0) rms_norm_rows(o.data(), post_norm.typed_data(), M, D, eps, o.data());
  float* out = y->typed_data();
#pragma omp simd
  for (int64_t i = 0; i < M * D; ++i) out[i] = x[i] + o[i];
  return ffi::Error::Success();
}

// Both kernels bind (intra-op pool; x f32 [M, K], codes of element type W, scales f32) -> y f32 [M, N].
template <ffi::DataType W>
auto BindMatmul() {
  return ffi::Ffi::Bind()
      .Ctx<ffi::ThreadPool>()
      .Arg<ffi::Buffer<ffi::F32>>()
      .Arg<ffi::Buffer<W>>()
      .template Arg<ffi::Buffer<ffi::F32>>()  // the type is W's: `template` before its members
      .template Ret<ffi::Buffer<ffi::F32>>();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveQ8Matmul, Q8Impl, BindMatmul<ffi::S8>().Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveQ4Matmul, Q4Impl,
                              BindMatmul<ffi::U8>().Attr<int64_t>("group").Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveDenseMatmul, DenseImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveGgufMatmul, GgufImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::U8>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<int64_t>("block_type")
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveNormMatmul, NormMatmulImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x [M, D]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // norm [D]
                                  .Arg<ffi::AnyBuffer>()         // W [N, D] codes / blocks / weights
                                  .Arg<ffi::Buffer<ffi::F32>>()  // W's scales ([0] without)
                                  .Ret<ffi::Buffer<ffi::F32>>()  // y [M, N]
                                  .Attr<int64_t>("kind")
                                  .Attr<int64_t>("param")
                                  .Attr<float>("eps")
                                  .Attr<int64_t>("threads"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveGatedMlp, GatedMlpImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::ThreadPool>()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // x [M, D]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // residual [M, D] or [0]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // norm [D]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // post_norm [D] or [0]
                                  .Arg<ffi::AnyBuffer>()         // gate_up codes / blocks / weights
                                  .Arg<ffi::Buffer<ffi::F32>>()  // gate_up scales ([0] without)
                                  .Arg<ffi::AnyBuffer>()         // down
                                  .Arg<ffi::Buffer<ffi::F32>>()  // down scales
                                  .Ret<ffi::Buffer<ffi::F32>>()  // y [M, D]
                                  .Attr<int64_t>("gate_up_kind")
                                  .Attr<int64_t>("gate_up_param")
                                  .Attr<int64_t>("down_kind")
                                  .Attr<int64_t>("down_param")
                                  .Attr<int64_t>("activation")
                                  .Attr<float>("eps")
                                  .Attr<int64_t>("threads"));

// Which of the paths above this build compiled (runtime/quant/cpu.py kernel_isa()), and whether its
// int8 / int4 / GGUF kernels quantize x to int8 blocks (kernel_quantizes_activations()).
extern "C" const char* jaxserve_kernel_isa() { return JAXSERVE_ISA; }

extern "C" int jaxserve_kernel_quantizes_activations() {
#ifdef JAXSERVE_Q8X
  return 1;
#else
  return 0;
#endif
}
