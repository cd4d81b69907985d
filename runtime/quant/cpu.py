"""The CPU quantized matmul: ``runtime/quant/quant_matmul.cc`` built on first use, called through XLA FFI.

Flow: the first ``matmul`` traced on CPU compiles the C++ source with ``$CXX`` (default ``g++``;
``-O3 -march=native``) into ``$JAXSERVE_KERNEL_CACHE`` (default ``~/.cache/jaxserve/kernels``) under
a hash of source, flags, JAX version and CPU flags (about 8 s, once per machine), loads it and
registers its handlers with XLA:CPU. The source holds three paths, picked by the compiler's target:
AVX-512 (BW, VL), AVX2 + FMA + F16C, and portable loops the compiler vectorizes (SSE, NEON); on AVX2, and
with ``JAXSERVE_KERNEL_ISA=avx512_vnni`` on AVX-512 with VNNI, the int8 / int4 / GGUF kernels quantize x
to int8 blocks and take integer dot products (``kernel_quantizes_activations``);
``JAXSERVE_KERNEL_ISA`` forces one (``ISA_FLAGS``) and ``kernel_isa()`` says which one runs. Concurrent processes each build to a private temporary
name and ``os.replace`` it into place (atomic), so they never see a half-written library. If there
is no compiler or the build fails, one warning is logged and every call takes the XLA path
(``dequantize_then_dot``), which gives the same numbers, slower. Calls with more rows of x
than ``max_kernel_rows`` (prefill chunks: compute-bound) take that path too. The build, cache,
load and registration are ``NativeKernels``, which the CPU attention kernel
(``runtime.worker.cpu_attention``) shares.

Why a C++ kernel at all: XLA:CPU does not fuse an int8 -> float32 convert into its dot; it writes
the float32 matrix out and reads it back, which is slower than the float32 model (measured on this
machine: [1, 576] x [576, 1536] 105 us in float32, 280 us dequantize-then-dot).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from pallas_kernels.quant_matmul import quant_matmul_reference
from pallas_kernels.quant_matmul.gguf_blocks import dequantize_blocks, gguf_matmul_reference

log = logging.getLogger("runtime.quant")

SOURCE = Path(__file__).parent / "quant_matmul.cc"
# The headers every NativeKernels source may include (``#include "kernel_isa.h"``: the ISA macros), from this
# directory on the include path; their bytes are part of the build's cache key.
INCLUDE_DIR = Path(__file__).parent
HEADERS = (INCLUDE_DIR / "kernel_isa.h",)
FLAGS = ("-O3", "-std=c++17", "-shared", "-fPIC", "-fopenmp-simd")  # omp simd: the portable loops' reductions
# The kernel's instruction set (JAXSERVE_KERNEL_ISA): "native" (the default) compiles for this CPU,
# which picks the AVX-512 path where the CPU has AVX-512 BW/VL, else AVX2 + FMA + F16C, else portable
# loops; the others force a path where the CPU can run it, to test and time it on one machine (on an
# AVX-512 machine "avx2" builds what an AVX2-only CPU runs). The tests build each one this CPU has.
ISA_FLAGS = {
    "native": ("-march=native",),
    "avx512": ("-march=skylake-avx512", "-mtune=native"),
    # AVX-512 with int8 activations and VNNI dot products (opt-in: quant_matmul.cc "AVX-512 VNNI" says why);
    # on a CPU without avx512_vnni this builds the float32 path
    "avx512_vnni": ("-march=native", "-DJAXSERVE_INT8_ACTIVATIONS"),
    "avx2": ("-march=haswell", "-mtune=native"),
    "avx2_float": ("-march=haswell", "-mtune=native", "-DJAXSERVE_FLOAT_ACTIVATIONS"),  # x kept in float32
    "portable": ("-march=native", "-DJAXSERVE_PORTABLE"),
}
TARGETS = {8: ("jaxserve_q8_matmul", "JaxserveQ8Matmul"), 4: ("jaxserve_q4_matmul", "JaxserveQ4Matmul")}
GGUF_TARGET = ("jaxserve_gguf_matmul", "JaxserveGgufMatmul")  # the file's Q8_0 / Q4_1 blocks (gguf_blocks.py)
GGUF_BLOCK_TYPE_ID = {"q8_0": 0, "q4_1": 1}  # the kernel's "block_type" attribute
DENSE_TARGET = ("jaxserve_dense_matmul", "JaxserveDenseMatmul")  # float32 W [N, K] (weights.DenseMatrix)
# A layer's whole gated MLP block, norm to residual add (``gated_mlp``), over any two of the formats above.
MLP_TARGET = ("jaxserve_gated_mlp", "JaxserveGatedMlp")
MLP_ACTIVATION_ID = {"silu": 0, "gelu_tanh": 1}  # its "activation" attribute (LayerSpec.activation_kernel)
NORM_MATMUL_TARGET = ("jaxserve_norm_matmul", "JaxserveNormMatmul")  # rms_norm(x) * norm, then a matmul
# The most rows of x (prefill chunks, large batches) a kernel takes; above them XLA's path runs, which
# dequantizes the whole matrix to float32 on every call and then runs its GEMM. Measured on SmolLM2's 211
# matrices (docs/DECODE.md, "Batching past 16 rows"), ms a row of x:
# - int4 and the file's blocks (kinds 1, 2): the kernel costs less a row than XLA's path from 17 to 64 rows,
#   and with a limit of 16 a row at 24 cost 2.4x (Q4_1: 3.9 -> 9.7 ms on AVX2 with float32 x; int4 5.5 ->
#   9.2); with 64: 3.9 and 5.0. At 128 rows XLA's path wins Q4_1 back (AVX2: 3.2 vs 3.8).
# - int8 and float32 rows (kinds 0, 3): XLA's GEMM is as fast from 24 rows and faster from 32-48 (int8 at 64:
#   kernel 4.4, XLA 3.0 with float32 x on AVX2; float32 rows at 48: kernel 4.1, XLA 2.3), so they keep 16,
#   except int8 on AVX-512 with x in float32 (what make serve runs there): since the kernels sweep the rows of x
#   outermost (quant_matmul.cc, tiles_v), one SmolLM2 step (bench_step_rows.py, AMD EPYC, two runs each,
#   alternating) took 67 / 66 ms at 32 rows through the kernel against 151 / 116 through XLA's path, and 124 / 143
#   against 193 / 137 at 64, so int8 takes 64 there too (docs/DECODE.md, "Served speed against llama-server").
# Where the kernel quantizes x to int8 blocks (AVX2, AVX-512 VNNI) every format keeps 16: a prefill chunk of
# 17-64 rows through them would round every activation of the prompt to int8, and SmolLM2's prompt logits
# then moved by 2.7% of their largest (0.68 of 25; each call agreed with its jnp emulation within 1e-4, but
# float32 differences upstream moved activations across int8 rounding steps, amplified over 30 layers),
# where XLA's float32 path keeps them within 1e-4 of the dequantized model. Lifting it there waits on a
# perplexity measurement of int8-activation prefill (scripts/eval_quality.py).
MAX_KERNEL_ROWS = 16
MAX_QUANTIZED_KERNEL_ROWS = 64
# JAXSERVE_KERNEL_MAX_ROWS: one limit for every kind, to measure where the kernel and XLA's path cross.
_FORCED_MAX_ROWS = int(os.environ.get("JAXSERVE_KERNEL_MAX_ROWS", "0"))


def max_kernel_rows(kind: int) -> int:
    """The most rows of x the kernels take for a weight of ``kernel_operands``' ``kind`` (0 int8, 1 int4, 2 the
    file's blocks, 3 float32 rows)."""
    if _FORCED_MAX_ROWS > 0:
        return _FORCED_MAX_ROWS
    if kind in (1, 2) and not kernel_quantizes_activations():
        return MAX_QUANTIZED_KERNEL_ROWS
    if kind == 0 and not kernel_quantizes_activations() and kernel_isa() == "avx512":
        return MAX_QUANTIZED_KERNEL_ROWS  # AVX-512, x in float32: measured below
    return MAX_KERNEL_ROWS


# Threads per kernel call (the caller plus helpers from XLA's intra-op pool), JAXSERVE_QUANT_THREADS.
# One core already streams int8 weights at 18-22 GB/s here (the machine copies at ~24 GB/s), and
# on a shared 2-core machine a helper is a liability: preempted while holding a tile, it makes the
# caller wait a scheduler slice. Batch-1 SmolLM2 decode measured 51-58 tok/s int8 with 1 thread,
# 48-51 with 2 (int4: 59 vs 50-52). Raise it where cores are idle (int4 is compute-bound per core).
THREADS = max(1, int(os.environ.get("JAXSERVE_QUANT_THREADS", "1")))
# Not more threads for batched calls either: at 16 rows a call is compute-bound, yet two threads measured no
# faster on SmolLM2's matrices (docs/DECODE.md, "Served speed against llama-server"), so THREADS holds for every
# row count.


def cache_dir() -> Path:
    return Path(os.environ.get("JAXSERVE_KERNEL_CACHE", Path.home() / ".cache" / "jaxserve" / "kernels"))


def _cpu_flags() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return ""


def requested_isa() -> str:
    isa = os.environ.get("JAXSERVE_KERNEL_ISA", "native")
    if isa not in ISA_FLAGS:
        raise ValueError(f"JAXSERVE_KERNEL_ISA={isa!r}: expected one of {', '.join(ISA_FLAGS)}")
    return isa


class NativeKernels:
    """A C++ source of XLA FFI handlers, built on first use, loaded and registered with XLA:CPU once per process.

    Shared by this module's matmuls and ``runtime.worker.cpu_attention``: ``build`` compiles ``source`` with
    ``$CXX`` (``FLAGS`` + ``ISA_FLAGS[isa]``, ``INCLUDE_DIR`` on the include path) into ``cache_dir()`` under a
    hash of source, ``HEADERS``, compiler, flags, JAX version and CPU flags (each process builds to a private
    temporary name and ``os.replace``s it into place); ``available`` builds, loads and registers ``targets``
    (``(ffi name, C symbol)`` pairs) once, reads the ISA the library compiled from ``isa_symbol`` and calls
    ``on_load(lib)``, or logs one warning (``what``: cannot build ...; ``fallback``) on ``log`` and returns
    False from then on.

    ``state``: ``available`` (None until first tried), ``registered`` (XLA keeps a handler for the process's
    lifetime, so it is registered once even if a test forces another build), ``isa`` ("avx512", "avx2",
    "portable"), plus whatever ``on_load`` records.
    """

    def __init__(
        self,
        source: Path,
        targets: tuple[tuple[str, str], ...],
        *,
        isa_symbol: str,
        log: logging.Logger,
        what: str,
        fallback: str,
        on_load: Callable[[ctypes.CDLL], None] | None = None,
    ):
        self.source, self.targets, self.isa_symbol = source, targets, isa_symbol
        self.log, self.what, self.fallback, self.on_load = log, what, fallback, on_load
        self.state: dict[str, bool | str | None] = {"available": None, "registered": False, "isa": None}
        self._lock = threading.Lock()  # tracing may happen on several threads (engine, server)

    def build(self, isa: str | None = None) -> Path:
        """Compile for ``isa`` (default: ``requested_isa()``) unless a library for this source, these flags
        and this CPU is cached; the library's path."""
        cxx = os.environ.get("CXX", "g++")
        flags = (*FLAGS, *ISA_FLAGS[isa or requested_isa()])
        key = hashlib.sha256(
            b"\0".join(
                [
                    self.source.read_bytes(),
                    *(h.read_bytes() for h in HEADERS),
                    cxx.encode(),
                    " ".join(flags).encode(),
                    jax.__version__.encode(),
                    _cpu_flags().encode(),
                ]
            )
        ).hexdigest()[:16]
        target = cache_dir() / f"{self.source.stem}-{key}.so"
        if target.exists():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        cmd = [cxx, *flags, "-I", str(INCLUDE_DIR), "-isystem", jax.ffi.include_dir(), str(self.source), "-o", str(tmp)]
        try:
            subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        return target

    def available(self) -> bool:
        """Build, load and register once per process; False (one warning) if that fails."""
        with self._lock:
            if self.state["available"] is None:
                self.state["available"] = self._load()
            return bool(self.state["available"])

    def _load(self) -> bool:
        try:
            lib = ctypes.cdll.LoadLibrary(str(self.build()))
            if not self.state["registered"]:
                for name, symbol in self.targets:
                    jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(getattr(lib, symbol)), platform="cpu")
                self.state["registered"] = True
                isa = getattr(lib, self.isa_symbol)
                isa.restype = ctypes.c_char_p
                self.state["isa"] = isa().decode()
                if self.on_load is not None:
                    self.on_load(lib)
            return True
        except (OSError, subprocess.SubprocessError, AttributeError) as exc:
            detail = getattr(exc, "stderr", None) or str(exc)
            self.log.warning(
                "%s: cannot build the CPU kernel (%s); %s", self.what, detail.strip()[-2000:], self.fallback
            )
            return False

    def isa(self) -> str | None:
        """The instruction-set path the registered library compiled, or None without one."""
        return self.state["isa"] if self.available() else None


def _on_load_matmul(lib: ctypes.CDLL) -> None:
    _STATE["q8x"] = bool(lib.jaxserve_kernel_quantizes_activations())
    log.info("quantized matmul: CPU kernel built for %s (int8 activations: %s)", _STATE["isa"], _STATE["q8x"])


_KERNELS = NativeKernels(
    SOURCE,
    (*TARGETS.values(), GGUF_TARGET, DENSE_TARGET, MLP_TARGET, NORM_MATMUL_TARGET),
    isa_symbol="jaxserve_kernel_isa",
    log=log,
    what="quantized matmul",
    fallback="using XLA's dequantize-then-dot path, correct but slower than float32",
    on_load=_on_load_matmul,
)
# The matmul kernels' state (NativeKernels.state), plus q8x: whether the int8 / int4 / GGUF kernels quantize x.
_STATE = _KERNELS.state
_STATE["q8x"] = None


def build_library(isa: str | None = None) -> Path:
    """Compile the matmul kernels for ``isa`` (default: ``requested_isa()``) unless a library for this source,
    these flags and this CPU is cached."""
    return _KERNELS.build(isa)


def kernel_available() -> bool:
    """Build, load and register the matmul kernels once per process; False (one warning) if that fails."""
    return _KERNELS.available()


def kernel_isa() -> str | None:
    """The instruction-set path of the CPU kernel this process runs ("avx512", "avx2", "portable"), or
    None when there is no kernel (XLA's path)."""
    return _STATE["isa"] if kernel_available() else None


def kernel_quantizes_activations() -> bool:
    """Whether this process's int8 / int4 / GGUF kernels quantize x to int8 blocks (the AVX2 path unless built
    as ``avx2_float``; AVX-512 built as ``avx512_vnni`` on a CPU with VNNI): they then compute
    ``quantize_activations(x) . W^T``."""
    return bool(_STATE["q8x"]) if kernel_available() else False


def quantize_activations(x: np.ndarray, width: int | None = None) -> np.ndarray:
    """What the int8-activation kernels (AVX2, AVX-512 VNNI) multiply W by: x [M, K] with each whole block of 32 columns snapped to int8
    codes (``d = max|x| / 127``, ``q = round-half-even(x * (1 / d))``, value ``q * d``); the columns past
    the last whole block unchanged. The same float32 operations as ``quantize_x`` in quant_matmul.cc,
    so the codes are the kernel's; the error of each column is at most ``d / 2`` of its block.
    ``width``: the int4 kernel quantizes x zero-padded to whole groups (``padded_in_features``)."""
    x = np.asarray(x, np.float32)
    K = x.shape[1]
    if width is not None and width > K:
        return quantize_activations(np.pad(x, ((0, 0), (0, width - K))))[:, :K]
    M = x.shape[0]
    nb = K // 32
    blocks = x[:, : nb * 32].reshape(M, nb, 32)
    amax = np.abs(blocks).max(-1, keepdims=True)
    d = amax / np.float32(127)
    with np.errstate(divide="ignore"):
        inv = np.where(amax != 0, np.float32(1) / d, np.float32(0)).astype(np.float32)
    q = np.rint(blocks * inv)
    out = x.copy()
    out[:, : nb * 32] = (q * d).reshape(M, nb * 32)
    return out


def quantize_activations_jnp(x: jax.Array) -> jax.Array:
    """``quantize_activations`` in jnp (K a multiple of 32), for a reference model traced with it."""
    M, K = x.shape
    blocks = x.astype(jnp.float32).reshape(M, K // 32, 32)
    amax = jnp.abs(blocks).max(-1, keepdims=True)
    d = amax / jnp.float32(127)
    inv = jnp.where(amax != 0, jnp.float32(1) / jnp.where(amax != 0, d, 1), 0)
    return (jnp.round(blocks * inv) * d).reshape(M, K).astype(x.dtype)


def kernel_activations(x, width: int | None = None) -> np.ndarray:
    """x as this process's int8 / int4 / GGUF matmuls see it: ``quantize_activations`` where the kernel
    takes the call and quantizes (``kernel_quantizes_activations``; up to ``max_kernel_rows`` rows), else
    x itself (float32: XLA's path above that)."""
    x = np.asarray(x, np.float32)
    quantized = kernel_quantizes_activations() and x.shape[0] <= max_kernel_rows(0)  # 16 for every kind there
    return quantize_activations(x, width) if quantized else x


def activation_error_bound(x: np.ndarray, w: np.ndarray, width: int | None = None) -> np.ndarray:
    """[M, N] bound on |quantize_activations(x, width) . w^T - x . w^T| for float W [N, K]: sum_k |W[n, k]|
    * d(block of k) / 2 (each quantized column is off by at most half its block's step)."""
    x = np.asarray(x, np.float32)
    K = x.shape[1]
    if width is not None and width > K:
        x = np.pad(x, ((0, 0), (0, width - K)))
        w = np.pad(np.asarray(w), ((0, 0), (0, width - K)))
    M, K = x.shape
    nb = K // 32
    half_step = np.zeros((M, K), np.float64)
    half_step[:, : nb * 32] = np.repeat(np.abs(x[:, : nb * 32]).reshape(M, nb, 32).max(-1) / 127 / 2, 32, axis=1)
    return half_step @ np.abs(np.asarray(w, np.float64)).T


def matmul(x: jax.Array, q: jax.Array, scale: jax.Array, *, bits: int, group: int, in_features: int) -> jax.Array:
    """``x [M, K] . dequantize(q, scale)^T -> [M, N]`` in x.dtype on CPU (layouts: pallas_kernels.quant_matmul)."""
    if x.shape[0] > max_kernel_rows(0 if bits == 8 else 1) or not kernel_available():
        return dequantize_then_dot(x, q, scale, bits=bits, group=group, in_features=in_features)
    name, _ = TARGETS[bits]
    attrs = {"group": np.int64(group)} if bits == 4 else {}
    attrs["threads"] = np.int64(THREADS)
    call = jax.ffi.ffi_call(name, jax.ShapeDtypeStruct((x.shape[0], q.shape[0]), jnp.float32))
    return call(x.astype(jnp.float32), q, scale, **attrs).astype(x.dtype)


def gguf_matmul(x: jax.Array, blocks: jax.Array, *, block_type: str, in_features: int) -> jax.Array:
    """``x [M, K] . W^T -> [M, N]`` in x.dtype, W held as GGUF blocks (``runtime.quant.gguf_blocks``)."""
    if x.shape[0] > max_kernel_rows(2) or not kernel_available():
        N = blocks.shape[0]
        rows = max(8, CHUNK_BYTES // (4 * in_features))
        chunk = next((c for c in range(min(rows, N), 0, -1) if N % c == 0), N)
        x32 = x.astype(jnp.float32)
        if N // chunk < 2 or chunk < 8:
            return gguf_matmul_reference(x, blocks, block_type=block_type, in_features=in_features)

        def step(b):  # dequantize_then_dot's loop (its docstring says why): one chunk of rows at a time
            return jnp.dot(x32, dequantize_blocks(b, block_type, in_features).T, precision=jax.lax.Precision.DEFAULT)

        y = jax.lax.map(step, blocks.reshape(N // chunk, chunk, blocks.shape[1]))
        return y.transpose(1, 0, 2).reshape(x.shape[0], N).astype(x.dtype)
    call = jax.ffi.ffi_call(GGUF_TARGET[0], jax.ShapeDtypeStruct((x.shape[0], blocks.shape[0]), jnp.float32))
    return call(
        x.astype(jnp.float32), blocks, block_type=np.int64(GGUF_BLOCK_TYPE_ID[block_type]), threads=np.int64(THREADS)
    ).astype(x.dtype)


# Threads for the float32 kernel (JAXSERVE_DENSE_THREADS): float32 is 4x the bytes of int8 and one
# core streams it at ~15 GB/s here, two at ~26.
DENSE_THREADS = max(1, int(os.environ.get("JAXSERVE_DENSE_THREADS", "2")))


def dense_matmul(x: jax.Array, w: jax.Array) -> jax.Array:
    """``x [M, K] . w^T -> [M, N]`` for float32 ``w [N, K]``: the C++ kernel for up to MAX_KERNEL_ROWS rows
    of x, XLA's dot (contracting both on K: no transposed copy of w) above that or without the kernel."""
    if x.shape[0] > MAX_KERNEL_ROWS or not kernel_available():
        return jnp.einsum("mk,nk->mn", x, w.astype(x.dtype))
    call = jax.ffi.ffi_call(DENSE_TARGET[0], jax.ShapeDtypeStruct((x.shape[0], w.shape[0]), jnp.float32))
    return call(x.astype(jnp.float32), w, threads=np.int64(DENSE_THREADS)).astype(x.dtype)


def kernel_operands(m) -> tuple[int, int, jax.Array, jax.Array] | None:
    """A weight matrix as the fused kernels take it: (kind, param, weights, scales), kind 0 int8, 1 int4 (param:
    its group), 2 GGUF blocks (param: the block type's id), 3 float32 rows; None for anything else. Each matrix
    class answers for itself (its ``kernel_operands``), so this module names none of them."""
    operands = getattr(m, "kernel_operands", None)
    return operands() if operands is not None else None


def fused_calls_keep_the_numbers(*matrices) -> bool:
    """Whether the model may take the fused layer calls (``gated_mlp``, ``norm_matmul``) for these matrices:
    not where a kernel in them quantizes x to int8 blocks (AVX2, AVX-512 VNNI; float32 rows, kind 3, never do). There the kernel's norm, rounded otherwise than XLA's RMSNorm in
    the last bits, now and then moves an activation across an int8 rounding boundary, and a near-tie greedy
    token flipped (SmolLM2 int8, tests/runtime/quant/test_fused_mlp.py under JAXSERVE_KERNEL_ISA=avx2); the
    layers then run as modules, each matmul still one kernel call."""
    if not kernel_quantizes_activations():
        return True
    operands = [kernel_operands(m) for m in matrices]
    return all(op is not None and op[0] == 3 for op in operands)


def gated_mlp(x, norm, post_norm, gate_up, down, *, activation: str, eps: float, residual=None) -> jax.Array | None:
    """``x + post(down(act(gate(h)) * up(h)))``, ``h = rms_norm(x) * norm``, as one kernel call (``JaxserveGatedMlp``):
    x [M, D] float32 the residual stream, or with ``residual`` [M, D] float32 (the attention block's output)
    ``x + residual`` in its place (one float32 add, the bits of the layer's own ``x + h``); ``gate_up`` [2F, D]
    gate's rows then up's (``weights.fuse_linears``), ``down`` [D, F], each a QuantizedMatrix, GGUFMatrix or DenseMatrix; ``post_norm`` [D] the sandwich norm's
    scale or None; ``activation`` a ``MLP_ACTIVATION_ID`` name. None where the kernel does not take the call
    (more rows than ``max_kernel_rows`` of either matrix, another dtype or format, no kernel): the caller runs
    the XLA layers.
    Each matmul is the one its format's own kernel computes (int8 activations where those do); the norm and
    the activation are float32 with a few roundings of their own (quant_matmul.cc says which)."""
    if x.ndim != 2 or x.dtype != jnp.float32 or activation not in MLP_ACTIVATION_ID:
        return None
    if residual is not None and (residual.shape != x.shape or residual.dtype != jnp.float32):
        return None
    gu, dn = kernel_operands(gate_up), kernel_operands(down)
    if gu is None or dn is None or gu[2].shape[0] % 2 or not kernel_available():
        return None
    if x.shape[0] > min(max_kernel_rows(gu[0]), max_kernel_rows(dn[0])):
        return None
    post = jnp.zeros((0,), jnp.float32) if post_norm is None else post_norm.astype(jnp.float32)
    call = jax.ffi.ffi_call(MLP_TARGET[0], jax.ShapeDtypeStruct(x.shape, jnp.float32))
    return call(
        x,
        jnp.zeros((0,), jnp.float32) if residual is None else residual,
        norm.astype(jnp.float32),
        post,
        gu[2],
        gu[3],
        dn[2],
        dn[3],
        gate_up_kind=np.int64(gu[0]),
        gate_up_param=np.int64(gu[1]),
        down_kind=np.int64(dn[0]),
        down_param=np.int64(dn[1]),
        activation=np.int64(MLP_ACTIVATION_ID[activation]),
        eps=np.float32(eps),
        threads=np.int64(DENSE_THREADS if gu[0] == dn[0] == 3 else THREADS),
    )


def norm_matmul(x, norm, m, *, eps: float) -> jax.Array | None:
    """``(rms_norm(x) * norm) . W^T`` as one kernel call (``JaxserveNormMatmul``): x [M, D] float32, norm [D], ``m``
    [N, D] a QuantizedMatrix, GGUFMatrix or DenseMatrix; None where the kernel does not take the call (as
    ``gated_mlp``). The matmul is the one ``m``'s own kernel computes; the norm is ``gated_mlp``'s."""
    if x.ndim != 2 or x.dtype != jnp.float32:
        return None
    ops = kernel_operands(m)
    if ops is None or not kernel_available() or x.shape[0] > max_kernel_rows(ops[0]):
        return None
    call = jax.ffi.ffi_call(NORM_MATMUL_TARGET[0], jax.ShapeDtypeStruct((x.shape[0], ops[2].shape[0]), jnp.float32))
    return call(
        x,
        norm.astype(jnp.float32),
        ops[2],
        ops[3],
        kind=np.int64(ops[0]),
        param=np.int64(ops[1]),
        eps=np.float32(eps),
        threads=np.int64(DENSE_THREADS if ops[0] == 3 else THREADS),
    )


CHUNK_BYTES = 1 << 20  # float32 bytes of W dequantized per loop step: stays in L2


def dequantize_then_dot(x, q, scale, *, bits: int, group: int, in_features: int) -> jax.Array:
    """The reference (dequantize, dot) over row chunks of W in a loop.

    Why a loop: every layer's dequantization depends only on parameters, so XLA:CPU schedules them
    all at the start of the program and runs them together: every float32 copy of the weights is
    live at once (424 MB for SmolLM2), freshly page-faulted on each call, and prefill took twice as
    long as float32 (an optimization_barrier does not survive XLA:CPU's pipeline). Inside a loop
    over chunks of rows that takes x as input, each chunk is dequantized right before its dot into
    one small reused buffer.
    """
    N, K = q.shape[0], in_features
    rows = max(1, CHUNK_BYTES // (4 * K))
    chunk = next((c for c in range(min(rows, N), 0, -1) if N % c == 0), N)  # a divisor of N
    if N // chunk < 2 or chunk < 8:  # one chunk (XLA would unroll the loop) or awkward N
        return quant_matmul_reference(x, q, scale, bits=bits, group=group, in_features=in_features)
    qc = q.reshape(N // chunk, chunk, q.shape[1])
    sc = scale.reshape((N // chunk, chunk) + scale.shape[1:])

    def step(args):
        return quant_matmul_reference(x, *args, bits=bits, group=group, in_features=in_features)  # [M, chunk]

    y = jax.lax.map(step, (qc, sc))  # [N // chunk, M, chunk]
    return y.transpose(1, 0, 2).reshape(x.shape[0], N)
