// The instruction-set path of the C++ kernels, chosen at build time from the compiler's target
// (runtime/quant/cpu.py NativeKernels builds with -march=native, or the ISA that JAXSERVE_KERNEL_ISA asks
// for): AVX-512 (BW, VL), else AVX2 with FMA and F16C (every x86 CPU since 2013-2015 that has AVX2), else
// portable loops that the compiler vectorizes for whatever the target has (SSE, NEON on ARM).
// Included by runtime/quant/quant_matmul.cc and runtime/worker/cpu_attention.cc; each library reports
// JAXSERVE_ISA through its own symbol (jaxserve_kernel_isa, jaxserve_attention_isa).
#pragma once

#if !defined(JAXSERVE_PORTABLE) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define JAXSERVE_AVX512 1
#define JAXSERVE_ISA "avx512"
#elif !defined(JAXSERVE_PORTABLE) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define JAXSERVE_AVX2 1
#define JAXSERVE_ISA "avx2"
#else
#define JAXSERVE_ISA "portable"
#endif

// AVX-512 with VNNI (vpdpbusd: 64 products of unsigned by signed bytes summed into 16 int32 lanes in one
// instruction; Cascade Lake, Ice Lake and later Xeons, Zen 4): the matmul kernels' int8-activation path.
#if defined(JAXSERVE_AVX512) && defined(__AVX512VNNI__)
#define JAXSERVE_AVX512_VNNI 1
#endif
