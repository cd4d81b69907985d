// Ragged paged attention for XLA:CPU: one XLA FFI custom call per layer (built and loaded by
// runtime/worker/cpu_attention.py on first use, with the build machinery of runtime/quant/cpu.py).
//
// Semantics: those of pallas_kernels.ragged_paged_attention.ragged_paged_attention_xla (its docstring and
// the module's index diagram), on one step's flattened token axis:
//
//   q            f32 [T, H, D]               (the caller casts to float32; bfloat16 q is exact in it)
//   k/v pages    [P, page, KVH, D]           f32 | bf16 | s8 codes | f8e4m3fn codes
//   k/v scales   [P, page, KVH]              f32 | bf16 (the quantized handler only)
//   kv_lens      s32 [S]      page_indices s32 [S, pages_per_seq]
//   cu_q_lens    s32 [S + 1]  num_seqs     s32 [1]
//   out          f32 [T, H, D]               rows >= cu_q_lens[num_seqs] are zero
//
//   n = clamp(num_seqs[0], 0, S); cu'[i] = cu_q_lens[min(i, n)]  (padding sequences become empty)
//   row t < cu'[n] belongs to seq = (last i with cu'[i] <= t), clamped to [0, S-1], at position
//       pos = kv_lens[seq] - (cu'[seq+1] - cu'[seq]) + (t - cu'[seq])
//   and attends keys  max(0, pos - window + 1) <= j <= min(pos, kv_lens[seq] - 1),
//   key j at  pages[clamp(page_indices[seq, j / page], 0, P-1), j % page, kv head, :].
//
// A key of a quantized cache is codes.astype(f32) * scale (rounded to float32 before the dot, as the XLA
// path does). q head h*G + g uses kv head h (GQA, G = H / KVH). Logits: dot(q, k) * sm_scale, then
// soft_cap * tanh(logit / soft_cap) if soft_cap > 0. Online softmax in float32 over blocks of kBlockKeys
// keys: running max m, sum l and accumulator acc per q head, then out = acc / l.
//
// One difference from the XLA path, on inputs the engine never builds: a kv_len larger than the page
// table holds (pages_per_seq * page) reads no key past the table here, where the XLA path would wrap.
//
// Work order: for each valid row, for each kv head, the G q heads that share it walk the row's keys
// together, so each key block is read (and, for a bf16 or 8-bit cache, widened to float32) once per
// row and kv head into a small L1 buffer. Loops over head_dim carry `omp simd` (built with
// -fopenmp-simd) or unroll at a compile-time head_dim (64, 128, 256: the accumulator then stays in
// registers for a whole key block); the compiler vectorizes them for the target (-march=native, or
// the ISA asked for). One thread: a SmolLM2 decode row takes ~10 us a layer at 60 keys, about what a
// wake-up of XLA's pool costs (runtime/quant/cpu.py THREADS says why helpers hurt on a shared 2-core
// machine); prefill chunks would gain from a thread per kv head, not measured yet.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

// The instruction set, as runtime/quant/quant_matmul.cc names it (one header, the same build flags): only
// reported here (jaxserve_attention_isa), the loops are vectorized by the compiler for the target.
#include "kernel_isa.h"  // runtime/quant/, on the include path (runtime/quant/cpu.py NativeKernels)

// Loops over a compile-time head_dim must unroll fully, or GCC keeps the accumulator on the stack.
#define UNROLL _Pragma("GCC unroll 256")

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int64_t kBlockKeys = 32;  // keys per online-softmax block: their logits stay in registers / L1

inline float bf16_to_f32(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float8_e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities, S.1111.111 is NaN.
struct F8Table {
  float value[256];
  F8Table() {
    for (int b = 0; b < 256; ++b) {
      const int e = (b >> 3) & 15, m = b & 7;
      float x = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
      if (e == 15 && m == 7) x = std::numeric_limits<float>::quiet_NaN();
      value[b] = (b & 128) ? -x : x;
    }
  }
};
const F8Table kF8;

enum class Kind { kF32, kBF16, kS8, kF8 };

// One cache (K or V): its storage and, for 8-bit codes, its scales. row(i, buf) is the float32 key
// vector of slot i = (page * page_size + slot) * KVH + kv_head: a pointer into the cache for float32,
// else widened into buf.
struct Cache {
  const void* data;
  const void* scales;  // nullptr for a float cache
  bool scales_bf16;
  Kind kind;
  int64_t D;

  float scale(int64_t i) const {
    if (scales_bf16) return bf16_to_f32(static_cast<const uint16_t*>(scales)[i]);
    return static_cast<const float*>(scales)[i];
  }

  const float* row(int64_t i, float* buf) const {
    const int64_t D = this->D;
    switch (kind) {
      case Kind::kF32:
        return static_cast<const float*>(data) + i * D;
      case Kind::kBF16: {
        const uint16_t* src = static_cast<const uint16_t*>(data) + i * D;
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) buf[d] = bf16_to_f32(src[d]);
        return buf;
      }
      case Kind::kS8: {
        const int8_t* src = static_cast<const int8_t*>(data) + i * D;
        const float s = scale(i);
#pragma omp simd
        for (int64_t d = 0; d < D; ++d) buf[d] = static_cast<float>(src[d]) * s;
        return buf;
      }
      case Kind::kF8: {
        const uint8_t* src = static_cast<const uint8_t*>(data) + i * D;
        const float s = scale(i);
        for (int64_t d = 0; d < D; ++d) buf[d] = kF8.value[src[d]] * s;
        return buf;
      }
    }
    return buf;
  }
};

struct Problem {
  const float* q;  // [T, H, D]
  float* out;      // [T, H, D]
  Cache k, v;
  const int32_t* kv_lens;       // [S]
  const int32_t* page_indices;  // [S, pages_per_seq]
  const int32_t* cu_q_lens;     // [S + 1]
  int32_t num_seqs;
  int64_t T, H, D, KVH, P, page, S, pages_per_seq;
  float sm_scale, soft_cap;  // soft_cap 0: none
  int64_t window;            // 0: none
};

// Scratch of one call: a key block of K and V widened to float32, the block's logits, the running state.
struct Scratch {
  std::vector<float> kbuf, vbuf, logits, m, l, acc;
  std::vector<const float*> krow, vrow;
  Scratch(int64_t G, int64_t D)
      : kbuf(kBlockKeys * D), vbuf(kBlockKeys * D), logits(G * kBlockKeys), m(G), l(G), acc(G * D),
        krow(kBlockKeys), vrow(kBlockKeys) {}
};

// Row t (sequence seq) against keys first..last (inclusive) for every q head. kD: head_dim known at
// compile time (the loops over it unroll into whole vectors, no remainder), or 0: p.D at run time.
template <int64_t kD>
void attend_row(const Problem& p, Scratch& s, int64_t t, int64_t seq, int64_t first, int64_t last) {
  const int64_t D = kD > 0 ? kD : p.D, G = p.H / p.KVH;
  const int32_t* pages = p.page_indices + seq * p.pages_per_seq;
  for (int64_t h = 0; h < p.KVH; ++h) {
    const float* qh = p.q + (t * p.H + h * G) * D;  // q heads h*G .. h*G+G-1: [G, D], contiguous
    float* acc = s.acc.data();
    std::fill(s.m.begin(), s.m.end(), -std::numeric_limits<float>::infinity());
    std::fill(s.l.begin(), s.l.end(), 0.0f);
    std::fill(s.acc.begin(), s.acc.end(), 0.0f);
    for (int64_t j0 = first; j0 <= last; j0 += kBlockKeys) {
      const int64_t nb = std::min(kBlockKeys, last + 1 - j0);
      int64_t page_no = j0 / p.page, in_page = j0 % p.page;  // one division per block, not per key
      int64_t page = std::clamp<int64_t>(pages[page_no], 0, p.P - 1);
      for (int64_t jj = 0; jj < nb; ++jj) {
        if (in_page == p.page) {
          in_page = 0;
          page = std::clamp<int64_t>(pages[++page_no], 0, p.P - 1);
        }
        const int64_t slot = (page * p.page + in_page++) * p.KVH + h;
        s.krow[jj] = p.k.row(slot, s.kbuf.data() + jj * D);
        s.vrow[jj] = p.v.row(slot, s.vbuf.data() + jj * D);
      }
      for (int64_t g = 0; g < G; ++g) {
        const float* qg = qh + g * D;
        float* lg = s.logits.data() + g * kBlockKeys;
        float block_max = -std::numeric_limits<float>::infinity();
        for (int64_t jj = 0; jj < nb; ++jj) {
          const float* kr = s.krow[jj];
          float dot = 0.0f;
#pragma omp simd reduction(+ : dot)
          for (int64_t d = 0; d < D; ++d) dot += qg[d] * kr[d];
          float x = dot * p.sm_scale;
          if (p.soft_cap > 0.0f) x = p.soft_cap * std::tanh(x / p.soft_cap);
          lg[jj] = x;
          block_max = std::max(block_max, x);
        }
        // The block holds at least one key of this row's range, so m_new is finite; alpha is 0 on the
        // first block (exp(-inf)).
        const float m_new = std::max(s.m[g], block_max);
        const float alpha = std::exp(s.m[g] - m_new);
        float sum = 0.0f;
        for (int64_t jj = 0; jj < nb; ++jj) {
          lg[jj] = std::exp(lg[jj] - m_new);
          sum += lg[jj];
        }
        s.m[g] = m_new;
        s.l[g] = s.l[g] * alpha + sum;
        float* ag = acc + g * D;
        if constexpr (kD > 0) {
          // head_dim known: the accumulator lives in registers for the block (kD / 16 zmm on AVX-512),
          // not in memory between keys (a store-to-load chain per key).
          float a[kD];
          UNROLL for (int64_t d = 0; d < kD; ++d) a[d] = ag[d] * alpha;
          for (int64_t jj = 0; jj < nb; ++jj) {
            const float w = lg[jj];
            const float* vr = s.vrow[jj];
            UNROLL for (int64_t d = 0; d < kD; ++d) a[d] += w * vr[d];
          }
          UNROLL for (int64_t d = 0; d < kD; ++d) ag[d] = a[d];
        } else {
#pragma omp simd
          for (int64_t d = 0; d < D; ++d) ag[d] *= alpha;
          for (int64_t jj = 0; jj < nb; ++jj) {
            const float w = lg[jj];
            const float* vr = s.vrow[jj];
#pragma omp simd
            for (int64_t d = 0; d < D; ++d) ag[d] += w * vr[d];
          }
        }
      }
    }
    for (int64_t g = 0; g < G; ++g) {
      const float inv = s.l[g] > 0.0f ? 1.0f / s.l[g] : 1.0f;
      float* o = p.out + (t * p.H + h * G + g) * D;
      const float* ag = acc + g * D;
#pragma omp simd
      for (int64_t d = 0; d < D; ++d) o[d] = ag[d] * inv;
    }
  }
}

void attend(const Problem& p) {
  std::memset(p.out, 0, sizeof(float) * p.T * p.H * p.D);
  const int64_t n = std::clamp<int64_t>(p.num_seqs, 0, p.S);
  std::vector<int64_t> cu(p.S + 1);  // padding sequences empty: cu'[i] = cu_q_lens[min(i, n)]
  for (int64_t i = 0; i <= p.S; ++i) cu[i] = p.cu_q_lens[std::min(i, n)];
  const int64_t rows = std::min<int64_t>(cu[n], p.T);
  const int64_t max_key = p.pages_per_seq * p.page - 1;  // the last key the page table can hold
  Scratch scratch(p.H / p.KVH, p.D);
  for (int64_t t = 0; t < rows; ++t) {
    const int64_t at = std::upper_bound(cu.begin(), cu.end(), t) - cu.begin() - 1;
    const int64_t seq = std::clamp<int64_t>(at, 0, p.S - 1);
    const int64_t q_start = cu[seq], kv_len = p.kv_lens[seq];
    const int64_t pos = kv_len - (cu[seq + 1] - q_start) + (t - q_start);
    const int64_t last = std::min({pos, kv_len - 1, max_key});
    const int64_t first = p.window > 0 ? std::max<int64_t>(0, pos - p.window + 1) : 0;
    if (first > last) continue;
    switch (p.D) {  // the head sizes of the served models, unrolled; others take the run-time loop
      case 64: attend_row<64>(p, scratch, t, seq, first, last); break;
      case 128: attend_row<128>(p, scratch, t, seq, first, last); break;
      case 256: attend_row<256>(p, scratch, t, seq, first, last); break;
      default: attend_row<0>(p, scratch, t, seq, first, last);
    }
  }
}

ffi::Error invalid(const char* msg) { return ffi::Error(ffi::ErrorCode::kInvalidArgument, msg); }

ffi::Error cache_of(ffi::AnyBuffer pages, const ffi::AnyBuffer* scales, int64_t D, Cache* out) {
  out->data = pages.untyped_data();
  out->D = D;
  out->scales = nullptr;
  out->scales_bf16 = false;
  switch (pages.element_type()) {
    case ffi::DataType::F32: out->kind = Kind::kF32; break;
    case ffi::DataType::BF16: out->kind = Kind::kBF16; break;
    case ffi::DataType::S8: out->kind = Kind::kS8; break;
    case ffi::DataType::F8E4M3FN: out->kind = Kind::kF8; break;
    default: return invalid("cpu attention: pages must be f32, bf16, s8 or f8e4m3fn");
  }
  const bool quantized = out->kind == Kind::kS8 || out->kind == Kind::kF8;
  if (quantized != (scales != nullptr)) return invalid("cpu attention: 8-bit pages need scales, float pages none");
  if (scales != nullptr) {
    if (scales->element_type() == ffi::DataType::BF16) {
      out->scales_bf16 = true;
    } else if (scales->element_type() != ffi::DataType::F32) {
      return invalid("cpu attention: scales must be f32 or bf16");
    }
    out->scales = scales->untyped_data();
  }
  return ffi::Error::Success();
}

ffi::Error run(ffi::Buffer<ffi::F32> q, ffi::AnyBuffer k_pages, ffi::AnyBuffer v_pages, const ffi::AnyBuffer* k_scales,
               const ffi::AnyBuffer* v_scales, ffi::Buffer<ffi::S32> kv_lens, ffi::Buffer<ffi::S32> page_indices,
               ffi::Buffer<ffi::S32> cu_q_lens, ffi::Buffer<ffi::S32> num_seqs, ffi::ResultBuffer<ffi::F32> out,
               float sm_scale, int64_t sliding_window, float soft_cap) {
  const auto qd = q.dimensions(), kd = k_pages.dimensions(), pd = page_indices.dimensions();
  if (qd.size() != 3 || kd.size() != 4 || pd.size() != 2) return invalid("cpu attention: bad ranks");
  if (kd[3] != qd[2] || qd[1] % kd[2] != 0 || k_pages.element_type() != v_pages.element_type())
    return invalid("cpu attention: q [T, H, D] and pages [P, page, KVH, D] do not match");
  Problem p{};
  p.q = q.typed_data();
  p.out = out->typed_data();
  p.T = qd[0], p.H = qd[1], p.D = qd[2];
  p.P = kd[0], p.page = kd[1], p.KVH = kd[2];
  p.S = kv_lens.dimensions()[0];
  p.pages_per_seq = pd[1];
  if (p.S < 1 || pd[0] != p.S || cu_q_lens.dimensions()[0] != p.S + 1 || p.P < 1 || p.page < 1 || p.pages_per_seq < 1)
    return invalid("cpu attention: kv_lens [S], page_indices [S, pages_per_seq], cu_q_lens [S + 1] do not match");
  if (ffi::Error e = cache_of(k_pages, k_scales, p.D, &p.k); e.failure()) return e;
  if (ffi::Error e = cache_of(v_pages, v_scales, p.D, &p.v); e.failure()) return e;
  p.kv_lens = kv_lens.typed_data();
  p.page_indices = page_indices.typed_data();
  p.cu_q_lens = cu_q_lens.typed_data();
  p.num_seqs = num_seqs.typed_data()[0];
  p.sm_scale = sm_scale;
  p.soft_cap = soft_cap;
  p.window = sliding_window;
  attend(p);
  return ffi::Error::Success();
}

ffi::Error FloatImpl(ffi::Buffer<ffi::F32> q, ffi::AnyBuffer k_pages, ffi::AnyBuffer v_pages,
                     ffi::Buffer<ffi::S32> kv_lens, ffi::Buffer<ffi::S32> page_indices, ffi::Buffer<ffi::S32> cu_q_lens,
                     ffi::Buffer<ffi::S32> num_seqs, ffi::ResultBuffer<ffi::F32> out, float sm_scale,
                     int64_t sliding_window, float soft_cap) {
  return run(q, k_pages, v_pages, nullptr, nullptr, kv_lens, page_indices, cu_q_lens, num_seqs, out, sm_scale,
             sliding_window, soft_cap);
}

ffi::Error QuantizedImpl(ffi::Buffer<ffi::F32> q, ffi::AnyBuffer k_pages, ffi::AnyBuffer v_pages,
                         ffi::AnyBuffer k_scales, ffi::AnyBuffer v_scales, ffi::Buffer<ffi::S32> kv_lens,
                         ffi::Buffer<ffi::S32> page_indices, ffi::Buffer<ffi::S32> cu_q_lens,
                         ffi::Buffer<ffi::S32> num_seqs, ffi::ResultBuffer<ffi::F32> out, float sm_scale,
                         int64_t sliding_window, float soft_cap) {
  return run(q, k_pages, v_pages, &k_scales, &v_scales, kv_lens, page_indices, cu_q_lens, num_seqs, out, sm_scale,
             sliding_window, soft_cap);
}

// ---- RoPE, the KV write and attention in one call ---------------------------------------------------
//
//   q, k, v  = qkv[:, :H D], qkv[:, H D : (H + KVH) D], qkv[:, (H + KVH) D :]   (the stacked projection)
//   q, k     = rope(q), rope(k)            rotate-half, cos / sin [T, D / 2] (runtime.models.common.apply_rope)
//   pages'   = pages with slot_mapping[t] = page * page_size + offset set to k[t] / v[t]  (write_kv)
//   out      = attention(q, pages')        as above
//
// runtime.models.common.Attention is the definition (runtime/worker/cpu_attention.py rope_write_attention
// the call); a float32 cache only. The rotation is fma(x1, c, -(x2 s)), fma(x2, c, x1 s): each output two
// roundings, as XLA:CPU compiles apply_rope in scalar loops (and jax 0.10's everywhere). jax 0.12's XLA:CPU
// rounds each product where it vectorizes the rotation (vmulps + vsubps: on AVX2 when a fusion's rows fill
// its 8 lanes, e.g. 4 heads of 16), so there an element may differ from the XLA ops' by a rounding; both are
// within gamma(2) (|x1 c| + |x2 s|) of the exact rotation (tests/runtime/worker/test_rope_write_attention.py).
// The pages are results aliased to the operands (input_output_aliases): with the cache donated
// into the step XLA hands the same buffer back, and the rows go in place; if it ever copies, the copy is
// taken first. Why: RoPE and the two scatters were three XLA:CPU ops a layer, each dispatched on its own.
void rope_rows(const float* src, const float* cos, const float* sin, int64_t heads, int64_t D, float* dst) {
  const int64_t half = D / 2;
  for (int64_t h = 0; h < heads; ++h) {
    const float* x = src + h * D;
    float* y = dst + h * D;
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = x[i], x2 = x[i + half], c = cos[i], s = sin[i];
      y[i] = std::fma(x1, c, -(x2 * s));
      y[i + half] = std::fma(x2, c, x1 * s);
    }
  }
}

ffi::Error RopeWriteImpl(ffi::Buffer<ffi::F32> qkv, ffi::Buffer<ffi::F32> cos, ffi::Buffer<ffi::F32> sin,
                         ffi::Buffer<ffi::F32> k_pages, ffi::Buffer<ffi::F32> v_pages, ffi::Buffer<ffi::S32> slot_mapping,
                         ffi::Buffer<ffi::S32> kv_lens, ffi::Buffer<ffi::S32> page_indices,
                         ffi::Buffer<ffi::S32> cu_q_lens, ffi::Buffer<ffi::S32> num_seqs, ffi::ResultBuffer<ffi::F32> out,
                         ffi::ResultBuffer<ffi::F32> k_out, ffi::ResultBuffer<ffi::F32> v_out, float sm_scale,
                         int64_t sliding_window, float soft_cap, int64_t num_heads) {
  const auto xd = qkv.dimensions(), kd = k_pages.dimensions(), cd = cos.dimensions();
  if (xd.size() != 2 || kd.size() != 4 || cd.size() != 2) return invalid("cpu rope attention: bad ranks");
  const int64_t T = xd[0], P = kd[0], page = kd[1], KVH = kd[2], D = kd[3], H = num_heads;
  if (H < 1 || KVH < 1 || H % KVH != 0 || D % 2 != 0 || xd[1] != (H + 2 * KVH) * D || cd[0] != T ||
      cd[1] != D / 2 || sin.element_count() != cos.element_count() ||
      v_pages.element_count() != k_pages.element_count() ||
      slot_mapping.element_count() != static_cast<size_t>(T))
    return invalid("cpu rope attention: qkv [T, (H + 2 KVH) D], cos / sin [T, D / 2], pages [P, page, KVH, D]");
  const size_t cache_bytes = sizeof(float) * k_pages.element_count();
  float* kc = k_out->typed_data();
  float* vc = v_out->typed_data();
  if (kc != k_pages.typed_data()) std::memcpy(kc, k_pages.typed_data(), cache_bytes);  // not aliased: copy first
  if (vc != v_pages.typed_data()) std::memcpy(vc, v_pages.typed_data(), cache_bytes);
  thread_local std::vector<float> q, k;
  q.resize(T * H * D);
  k.resize(KVH * D);
  const float* x = qkv.typed_data();
  const int32_t* slots = slot_mapping.typed_data();
  for (int64_t t = 0; t < T; ++t) {
    const float* row = x + t * (H + 2 * KVH) * D;
    const float* c = cos.typed_data() + t * (D / 2);
    const float* s = sin.typed_data() + t * (D / 2);
    rope_rows(row, c, s, H, D, q.data() + t * H * D);
    const int64_t slot = slots[t], pg = slot / page;
    if (slot < 0 || pg >= P) continue;  // never built by the engine (the XLA scatter promises in bounds)
    const int64_t at = slot * KVH * D;  // [P, page, KVH, D] viewed as [P * page, KVH, D]
    rope_rows(row + H * D, c, s, KVH, D, kc + at);
    std::memcpy(vc + at, row + (H + KVH) * D, sizeof(float) * KVH * D);
  }
  Problem p{};
  p.q = q.data();
  p.out = out->typed_data();
  p.T = T, p.H = H, p.D = D;
  p.P = P, p.page = page, p.KVH = KVH;
  const auto pd = page_indices.dimensions();
  p.S = kv_lens.dimensions()[0];
  p.pages_per_seq = pd.size() == 2 ? pd[1] : 0;
  if (pd.size() != 2 || p.S < 1 || pd[0] != p.S || cu_q_lens.dimensions()[0] != p.S + 1 || P < 1 || page < 1 ||
      p.pages_per_seq < 1)
    return invalid("cpu rope attention: kv_lens [S], page_indices [S, pages_per_seq], cu_q_lens [S + 1] do not match");
  p.k = Cache{kc, nullptr, false, Kind::kF32, D};
  p.v = Cache{vc, nullptr, false, Kind::kF32, D};
  p.kv_lens = kv_lens.typed_data();
  p.page_indices = page_indices.typed_data();
  p.cu_q_lens = cu_q_lens.typed_data();
  p.num_seqs = num_seqs.typed_data()[0];
  p.sm_scale = sm_scale;
  p.soft_cap = soft_cap;
  p.window = sliding_window;
  attend(p);
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveRaggedAttention, FloatImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // q
                                  .Arg<ffi::AnyBuffer>()         // k_pages
                                  .Arg<ffi::AnyBuffer>()         // v_pages
                                  .Arg<ffi::Buffer<ffi::S32>>()  // kv_lens
                                  .Arg<ffi::Buffer<ffi::S32>>()  // page_indices
                                  .Arg<ffi::Buffer<ffi::S32>>()  // cu_q_lens
                                  .Arg<ffi::Buffer<ffi::S32>>()  // num_seqs
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("sm_scale")
                                  .Attr<int64_t>("sliding_window")
                                  .Attr<float>("soft_cap"));

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveRaggedAttentionQuantized, QuantizedImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // q
                                  .Arg<ffi::AnyBuffer>()         // k codes
                                  .Arg<ffi::AnyBuffer>()         // v codes
                                  .Arg<ffi::AnyBuffer>()         // k_scales
                                  .Arg<ffi::AnyBuffer>()         // v_scales
                                  .Arg<ffi::Buffer<ffi::S32>>()  // kv_lens
                                  .Arg<ffi::Buffer<ffi::S32>>()  // page_indices
                                  .Arg<ffi::Buffer<ffi::S32>>()  // cu_q_lens
                                  .Arg<ffi::Buffer<ffi::S32>>()  // num_seqs
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("sm_scale")
                                  .Attr<int64_t>("sliding_window")
                                  .Attr<float>("soft_cap"));

extern "C" const char* jaxserve_attention_isa() { return JAXSERVE_ISA; }

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxserveRopeWriteAttention, RopeWriteImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()  // qkv [T, (H + 2 KVH) D]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // cos [T, D / 2]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // sin [T, D / 2]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // k_pages [P, page, KVH, D]
                                  .Arg<ffi::Buffer<ffi::F32>>()  // v_pages
                                  .Arg<ffi::Buffer<ffi::S32>>()  // slot_mapping [T]
                                  .Arg<ffi::Buffer<ffi::S32>>()  // kv_lens
                                  .Arg<ffi::Buffer<ffi::S32>>()  // page_indices
                                  .Arg<ffi::Buffer<ffi::S32>>()  // cu_q_lens
                                  .Arg<ffi::Buffer<ffi::S32>>()  // num_seqs
                                  .Ret<ffi::Buffer<ffi::F32>>()  // out [T, H, D]
                                  .Ret<ffi::Buffer<ffi::F32>>()  // k_pages, aliased to the operand
                                  .Ret<ffi::Buffer<ffi::F32>>()  // v_pages, aliased to the operand
                                  .Attr<float>("sm_scale")
                                  .Attr<int64_t>("sliding_window")
                                  .Attr<float>("soft_cap")
                                  .Attr<int64_t>("num_heads"));
