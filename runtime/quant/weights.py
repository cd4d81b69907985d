"""Weight-only quantization as a transform over the parameter tree (the model has no branches for it).

In: the float32 host parameter tree of any family (``runtime.models``) and a mode from
``EngineConfig.weight_quant``. Out: the same tree with every Linear ``kernel`` ([in, out]) and the
embedding ``embed`` ([V, D], also the tied LM head) replaced by a ``QuantizedMatrix``; norm scales
stay float32. The model's three seams (``linear``, ``embed``, ``tied_logits`` in
``runtime.models.common``) call the matrix's methods when they are handed one (duck typing).

Storage, per matrix W [rows = output features, cols = input features] (row-major, as llama.cpp and
PyTorch keep it; a Linear kernel is stored transposed):

* ``int8``: one float32 scale per row, ``scale = max|W[n, :]| / 127``, codes ``round(W / scale)`` in
  [-127, 127]. 1 byte a weight (+4 bytes a row).
* ``int4``: one float32 scale per row and group of ``G`` columns, ``scale = max|group| / 7``, codes in
  [-7, 7] stored offset by 8, two a byte (layout: ``pallas_kernels.quant_matmul``). 0.5 byte a weight
  (+4/G bytes).

Symmetric round-to-nearest, so the error bound is elementwise:
``|W - dequantize(W)| <= scale / 2``, i.e. ``max|row| / 254`` (int8) and ``max|group| / 14`` (int4),
and a dot product ``y = x . w`` is off by at most ``sum_k |x_k| * scale_k / 2``.

Matmul dispatch by platform (``matvec`` -> ``matmul_for_platform``), one signature for all::

    platform              implementation
    cpu                   the C++ FFI kernel (``runtime.quant.cpu``; falls back to XLA if it cannot build)
    gpu (cuda, rocm)      the Pallas GPU kernel (``pallas_kernels.quant_matmul.quant_matmul``, Triton)
    tpu                   the Pallas TPU kernel (``pallas_kernels.quant_matmul.tpu.quant_matmul_tpu``)
    anything else         the XLA reference (dequantize, then dot; DEFAULT precision)

On CPU the builder then stacks each layer's q, k, v and gate, up into one matrix where they share a format
(``fuse_linears``; ``runtime.models.common.linears`` splits the output): 4 kernel calls a layer instead of 7,
with the same numbers, since each output column is its own dot product.

The platform is ``pallas_kernels.devices.target_platform()``: JAX's default backend, except inside
an abstract mesh (``pallas_kernels.lowering``), where it is that mesh's device's ("tpu", "gpu"): a CPU
process lowering for an accelerator must not pick the CPU's FFI kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pallas_kernels.devices import target_platform
from pallas_kernels.quant_matmul import (
    INT4_OFFSET,
    dequantize,
    padded_in_features,
    quant_matmul,
    quant_matmul_reference,
    quant_matmul_tpu,
)
from runtime.api import validate_weight_quant
from runtime.platform import platform_family

BITS = {"int8": 8, "int4": 4}
_ROW_CHUNK = 8192  # rows quantized at a time on the host (bounds temporary memory for a big embedding)


@jax.tree_util.register_pytree_node_class
class QuantizedMatrix:
    """A float matrix W [rows, in_features] held as integer codes and float32 scales.

    Leaves: ``q`` (int8 [rows, K] or uint8 [rows, Kp // 2]) and ``scale`` (float32 [rows] or
    [rows, Kp // G]). Static: ``bits``, ``group`` (0 for int8), ``in_features`` (K). A pytree, so it
    passes through ``jax.jit``, ``jax.device_put`` and Flax's variable dicts like an array would.
    """

    def __init__(self, q, scale, bits: int, group: int, in_features: int, parts: tuple[int, ...] = ()):
        self.q, self.scale = q, scale
        self.bits, self.group, self.in_features = bits, group, in_features
        self.parts = parts  # rows of each matrix ``stack_rows`` stacked, in order; () for one matrix

    def tree_flatten(self):
        return (self.q, self.scale), (self.bits, self.group, self.in_features, self.parts)

    def split_rows(self) -> list[QuantizedMatrix]:
        """The matrices this one stacked (``parts``), as row slices."""
        ends = np.cumsum(self.parts).tolist()
        return [
            QuantizedMatrix(self.q[a:b], self.scale[a:b], self.bits, self.group, self.in_features)
            for a, b in zip([0, *ends[:-1]], ends)
        ]

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    def __repr__(self) -> str:
        group = f", group={self.group}" if self.bits == 4 else ""
        return f"QuantizedMatrix(int{self.bits}{group}, shape={self.shape})"

    @property
    def shape(self) -> tuple[int, int]:
        return (self.q.shape[0], self.in_features)

    @property
    def nbytes(self) -> int:
        return int(self.q.nbytes) + int(self.scale.nbytes)

    @classmethod
    def from_float(cls, w: np.ndarray, mode: str, group: int = 64) -> QuantizedMatrix:
        """Quantize a host float matrix [rows, cols] (numpy, row chunks at a time)."""
        if mode not in BITS:
            raise ValueError(f"mode must be one of {', '.join(BITS)}; got {mode!r}")
        w = np.asarray(w)
        if w.ndim != 2:
            raise ValueError(f"can only quantize a 2-D matrix, got shape {w.shape}")
        bits = BITS[mode]
        group = group if bits == 4 else 0
        chunks = [_quantize_rows(w[i : i + _ROW_CHUNK], bits, group) for i in range(0, w.shape[0], _ROW_CHUNK)]
        q = np.concatenate([c[0] for c in chunks])
        scale = np.concatenate([c[1] for c in chunks])
        return cls(q, scale, bits, group, w.shape[1])

    def dequantize(self) -> jax.Array:
        """float32 W [rows, in_features]."""
        return dequantize(self.q, self.scale, bits=self.bits, group=self.group, in_features=self.in_features)

    def take_rows(self, idx: jax.Array) -> jax.Array:
        """Dequantized rows W[idx] -> float32 [*idx.shape, in_features] (the embedding lookup)."""
        return dequantize(
            jnp.take(self.q, idx, axis=0),
            jnp.take(self.scale, idx, axis=0),
            bits=self.bits,
            group=self.group,
            in_features=self.in_features,
        )

    def norm_matvec(self, x, norm, *, eps: float) -> jax.Array | None:
        """``(rms_norm(x) * norm) . W^T`` as one kernel call, or None (``fused_norm_matvec``)."""
        return fused_norm_matvec(self, x, norm, eps=eps)

    def gated_mlp(self, down, x, norm, post_norm, *, activation: str, eps: float, residual=None) -> jax.Array | None:
        """With self a layer's stacked gate/up: its MLP block as one kernel call, or None (``fused_gated_mlp``)."""
        return fused_gated_mlp(self, down, x, norm, post_norm, activation=activation, eps=eps, residual=residual)

    def stack_rows(self, mats: list[QuantizedMatrix]) -> QuantizedMatrix | None:
        """``concat_rows`` for this kind: None unless every one has this bits, group and K."""
        if any((m.bits, m.group, m.in_features) != (self.bits, self.group, self.in_features) for m in mats):
            return None
        q = np.concatenate([np.asarray(m.q) for m in mats])
        scale = np.concatenate([np.asarray(m.scale) for m in mats])
        return QuantizedMatrix(q, scale, self.bits, self.group, self.in_features, stacked_parts(mats))

    def kernel_operands(self) -> tuple[int, int, jax.Array, jax.Array]:
        """As the fused CPU kernels take it (``runtime.quant.cpu.kernel_operands``): int8 kind 0, int4 kind 1."""
        return (0, 0, self.q, self.scale) if self.bits == 8 else (1, self.group, self.q, self.scale)

    def matvec(self, x: jax.Array) -> jax.Array:
        """x [..., in_features] -> x . W^T [..., rows] in x.dtype (float32 accumulation)."""
        if by_parts(self, x):
            return jnp.concatenate([m.matvec(x) for m in self.split_rows()], axis=-1)
        lead = x.shape[:-1]
        y = _matmul(
            x.reshape(-1, self.in_features),
            self.q,
            self.scale,
            bits=self.bits,
            group=self.group,
            in_features=self.in_features,
        )
        return y.reshape(*lead, self.q.shape[0])


@jax.tree_util.register_pytree_node_class
class DenseMatrix:
    """A float32 matrix W [rows, in_features] held row-major (a row per output feature, as QuantizedMatrix
    keeps its codes), so that on CPU the C++ kernel runs its small-row products (``runtime.quant.cpu.
    dense_matmul``: XLA:CPU's dot reads the weights at 10-17 GB/s for 2-16 rows of x, the kernel at
    20-27). Nothing is quantized: same weights, same float32 arithmetic (summed in another order)."""

    def __init__(self, w, parts: tuple[int, ...] = ()):
        self.w = w
        self.parts = parts  # as QuantizedMatrix's

    def tree_flatten(self):
        return (self.w,), (self.parts,)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    def split_rows(self) -> list[DenseMatrix]:
        ends = np.cumsum(self.parts).tolist()
        return [DenseMatrix(self.w[a:b]) for a, b in zip([0, *ends[:-1]], ends)]

    def __repr__(self) -> str:
        return f"DenseMatrix(float32, shape={self.shape})"

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.w.shape)

    @property
    def nbytes(self) -> int:
        return int(self.w.nbytes)

    def dequantize(self) -> jax.Array:
        return self.w

    def take_rows(self, idx: jax.Array) -> jax.Array:
        return jnp.take(self.w, idx, axis=0)

    def norm_matvec(self, x, norm, *, eps: float) -> jax.Array | None:
        """``(rms_norm(x) * norm) . W^T`` as one kernel call, or None (``fused_norm_matvec``)."""
        return fused_norm_matvec(self, x, norm, eps=eps)

    def gated_mlp(self, down, x, norm, post_norm, *, activation: str, eps: float, residual=None) -> jax.Array | None:
        """With self a layer's stacked gate/up: its MLP block as one kernel call, or None (``fused_gated_mlp``)."""
        return fused_gated_mlp(self, down, x, norm, post_norm, activation=activation, eps=eps, residual=residual)

    def stack_rows(self, mats: list[DenseMatrix]) -> DenseMatrix | None:
        """``concat_rows`` for this kind: None unless every one has this K."""
        if any(m.shape[1] != self.shape[1] for m in mats):
            return None
        return DenseMatrix(np.concatenate([np.asarray(m.w) for m in mats]), stacked_parts(mats))

    def kernel_operands(self) -> tuple[int, int, jax.Array, jax.Array]:
        """As the fused CPU kernels take it: float32 rows, kind 3."""
        return 3, 0, self.w, jnp.zeros((0,), jnp.float32)

    def matvec(self, x: jax.Array) -> jax.Array:
        """x [..., in_features] -> x . W^T [..., rows] in x.dtype."""
        if by_parts(self, x):
            return jnp.concatenate([m.matvec(x) for m in self.split_rows()], axis=-1)
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.w.shape[1])
        if platform_family(target_platform()) == "cpu":
            from runtime.quant import cpu as quant_cpu

            y = quant_cpu.dense_matmul(x2, self.w)
        else:
            y = jnp.einsum("mk,nk->mn", x2, self.w.astype(x.dtype))
        return y.reshape(*lead, self.w.shape[0])


def stacked_parts(mats: list[Any]) -> tuple[int, ...]:
    """The rows of each matrix ``stack_rows`` stacks."""
    return tuple(int(m.shape[0]) for m in mats)


def by_parts(m, x: jax.Array) -> bool:
    """Whether a stacked matrix's product with x must run part by part: where the C++ kernel does not take
    the call (more than its rows of x, or no kernel), XLA's dot runs, and its summation order may depend on
    the matrix's height (blocking, ``gguf_matmul``'s row chunks). Part by part, each output is what the
    unstacked matrix gives, so stacking changes no number on any path (with int8 activations a float32
    rounding difference in a prefill can flip a later token)."""
    if not getattr(m, "parts", ()):
        return False
    from runtime.quant import cpu as quant_cpu

    rows = int(np.prod(x.shape[:-1]))
    operands = quant_cpu.kernel_operands(m)
    limit = quant_cpu.max_kernel_rows(operands[0]) if operands is not None else 0
    return rows > limit or not quant_cpu.kernel_available()


def fused_gated_mlp(
    gate_up, down, x, norm, post_norm, *, activation: str, eps: float, residual=None
) -> jax.Array | None:
    """The ``gated_mlp`` method of the kernel matrices: a layer's MLP block, norm to residual add, as one CPU
    kernel call (``runtime.quant.cpu.gated_mlp``, its docstring has the shapes), or None where there is none
    (another platform, too many rows, formats the kernel does not take): the model then runs its layers."""
    if platform_family(target_platform()) != "cpu":
        return None
    from runtime.quant import cpu as quant_cpu

    if not quant_cpu.fused_calls_keep_the_numbers(gate_up, down):
        return None
    return quant_cpu.gated_mlp(x, norm, post_norm, gate_up, down, activation=activation, eps=eps, residual=residual)


def fused_norm_matvec(m, x, norm, *, eps: float) -> jax.Array | None:
    """The ``norm_matvec`` method of the kernel matrices: ``(rms_norm(x) * norm) . W^T`` as one CPU kernel call
    (``runtime.quant.cpu.norm_matmul``), or None where there is none (as ``fused_gated_mlp``)."""
    if platform_family(target_platform()) != "cpu":
        return None
    from runtime.quant import cpu as quant_cpu

    if not quant_cpu.fused_calls_keep_the_numbers(m):
        return None
    return quant_cpu.norm_matmul(x, norm, m, eps=eps)


def dense_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Every Linear ``kernel`` [in, out] (transposed once, on the host) and the ``embed`` table [V, D] as a
    float32 ``DenseMatrix``: the CPU layout for float32 weights (``EngineConfig.dense_kernel``)."""

    return map_matrices(params, lambda w: DenseMatrix(np.ascontiguousarray(np.asarray(w, np.float32))))


def map_matrices(params: Mapping[str, Any], convert) -> dict[str, Any]:
    """The tree with every Linear ``kernel`` [in, out] and the ``embed`` table [V, D] replaced by
    ``convert(W)`` of the matrix row-major ([out, in]: a kernel is passed transposed, on the host);
    everything else (norm scales, anything not 2-D) as it was."""

    def walk(tree):
        out = {}
        for key, value in tree.items():
            if isinstance(value, Mapping):
                out[key] = walk(value)
            elif key in ("kernel", "embed") and np.ndim(value) == 2:
                out[key] = convert(np.asarray(value).T if key == "kernel" else value)
            else:
                out[key] = value
        return out

    return walk(params)


# Linear layers that read the same x, fused by ``fuse_linears``: (their names, in order) -> the fused name,
# as ``runtime.models.common.linears`` reads them.
FUSED_LINEARS = {("q", "k", "v"): "qkv", ("gate", "up"): "gate_up"}


def concat_rows(mats: list[Any]) -> Any | None:
    """One matrix whose rows are those of ``mats`` in order (host arrays), or None when they are not all of one
    kind with the same static layout (a QuantizedMatrix's bits, group and K; a GGUFMatrix's block type and K;
    a DenseMatrix's K): a file may store q, k and v in different block types.

    Exact: a row holds everything its output needs (int8: its codes and scale; int4: its codes and group
    scales along K; GGUF: its blocks; float32: its weights), so stacked rows decode to the same values."""
    first = mats[0]
    if any(type(m) is not type(first) for m in mats) or not hasattr(first, "stack_rows"):
        return None  # float32 [in, out] kernels run through XLA's dot, whose rounding may depend on the width
    return first.stack_rows(mats)


def fuse_linears(params: Mapping[str, Any]) -> dict[str, Any]:
    """The host tree with each group of ``FUSED_LINEARS`` (a layer's q, k, v; gate, up) that ``concat_rows``
    can stack replaced by one ``{fused: {"kernel": ...}}`` entry: one kernel call where there were three or
    two, each reading a longer run of rows (``runtime.models.common.linears`` splits the output). Groups it
    cannot stack, and everything else, stay as they were.

    For the CPU kernels, whose output columns are each a dot product over the same x in the same order
    whatever the matrix's height (``runtime/quant/quant_matmul.cc``), so the numbers do not change; not for a
    sharded tree (tensor parallelism splits each kernel's output axis on its own)."""

    def walk(tree):
        out = {key: walk(value) if isinstance(value, Mapping) else value for key, value in tree.items()}
        for names, fused in FUSED_LINEARS.items():
            parts = [out.get(name) for name in names]
            if not all(isinstance(p, Mapping) and set(p) == {"kernel"} for p in parts):
                continue
            kernel = concat_rows([p["kernel"] for p in parts])
            if kernel is not None:
                for name in names:
                    del out[name]
                out[fused] = {"kernel": kernel}
        return out

    return walk(params)


def _quantize_rows(w: np.ndarray, bits: int, group: int) -> tuple[np.ndarray, np.ndarray]:
    w = w.astype(np.float32)
    if bits == 8:
        scale = np.abs(w).max(axis=1) / 127.0
        scale = np.where(scale > 0, scale, 1.0).astype(np.float32)  # an all-zero row: any scale, codes 0
        return np.clip(np.rint(w / scale[:, None]), -127, 127).astype(np.int8), scale
    rows, cols = w.shape
    kp = padded_in_features(cols, 4, group)
    g = np.pad(w, ((0, 0), (0, kp - cols))).reshape(rows, kp // group, group)
    scale = np.abs(g).max(axis=2) / 7.0
    scale = np.where(scale > 0, scale, 1.0).astype(np.float32)
    codes = (np.clip(np.rint(g / scale[:, :, None]), -7, 7) + INT4_OFFSET).astype(np.uint8)  # (rows, groups, G)
    packed = codes[:, :, : group // 2] | (codes[:, :, group // 2 :] << 4)  # low nibble: first half of the group
    return packed.reshape(rows, kp // 2), scale


def _xla_matmul(x, q, scale, *, bits, group, in_features):
    return quant_matmul_reference(
        x, q, scale, bits=bits, group=group, in_features=in_features, precision=jax.lax.Precision.DEFAULT
    )


def matmul_for_platform(platform: str):
    """The quantized matmul for a platform name (module docstring's table); all take
    ``(x, q, scale, *, bits, group, in_features)``."""
    family = platform_family(platform)
    if family == "cpu":
        from runtime.quant import cpu as quant_cpu  # the build happens on first use, not at import

        return quant_cpu.matmul
    if family == "gpu":
        return quant_matmul
    if family == "tpu":
        return quant_matmul_tpu
    return _xla_matmul


def _matmul(x, q, scale, *, bits, group, in_features):
    return matmul_for_platform(target_platform())(x, q, scale, bits=bits, group=group, in_features=in_features)


def quantize_params(params: Mapping[str, Any], mode: str, group: int = 64) -> dict[str, Any]:
    """Replace every Linear ``kernel`` [in, out] and the ``embed`` table [V, D] by a QuantizedMatrix.

    Kernels are stored transposed ([out, in]: a row per output feature). Everything else (norm
    scales, anything not 2-D) is returned as it was. ``mode="none"`` returns the tree unchanged.
    """
    validate_weight_quant(mode, group)
    if mode == "none":
        return dict(params)
    return map_matrices(params, lambda w: QuantizedMatrix.from_float(w, mode, group))
