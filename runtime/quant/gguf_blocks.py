"""The GGUF file's own quantized blocks, run as they are (``EngineConfig.weight_quant = "gguf"``).

``weight_quant = "int8" | "int4"`` dequantize the file to float32 and quantize again to our own grids:
for a file that is already 4-bit (SmolLM2's Q4_1) that second rounding costs quality (docs/BENCHMARKS.md,
quality table). ``"gguf"`` keeps each supported tensor's blocks exactly as the file stores them and
multiplies by them directly, so the model computes what its file says, held at the file's size:

    type   block (32 weights)                 value                 bytes / weight
    Q8_0   f16 d, int8 q[32]                   d * q                 34 / 32
    Q4_1   f16 d, f16 m, uint8 qs[16]          d * nibble + m        20 / 32
           (byte j: element j low, element j + 16 high)

Other tensor types (norm scales in F32; Gemma's Q5_0, Q4_K, Q6_K: not yet) are dequantized to float
as before, and the engine logs how many bytes run natively.

``GGUFMatrix`` is a pytree (``blocks`` uint8 [rows, K / 32 * B]; static: block type, K) with the model
seams' methods (``matvec``, ``take_rows``; ``runtime.models.common``). Its matmul by platform: CPU, the C++
kernel in ``runtime/quant/quant_matmul.cc`` (``JaxserveGgufMatmul``) for up to ``max_kernel_rows`` rows
of x, else (prefill chunks, other platforms) dequantize with jnp and dot. The jnp dequantizer is the
reference (``pallas_kernels.quant_matmul.gguf_blocks``), tested against the ``gguf`` package's own. The loader is
``runtime.loading.gguf.native_params``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from pallas_kernels.devices import target_platform
from pallas_kernels.quant_matmul.gguf_blocks import BLOCK_BYTES, dequantize_blocks, gguf_matmul_reference
from runtime.platform import platform_family


@jax.tree_util.register_pytree_node_class
class GGUFMatrix:
    """W [rows, in_features] held as the file's blocks; a row per output feature (as the file stores it).

    Used where a Linear kernel ([in, out]) or the embedding ([V, D]) would be: ``T`` is the matrix itself
    (the seams only call ``matvec`` / ``take_rows``, which read it row-major whichever way it is named)."""

    def __init__(self, blocks, block_type: str, in_features: int, parts: tuple[int, ...] = ()):
        self.blocks, self.block_type, self.in_features = blocks, block_type, in_features
        self.parts = parts  # rows of each matrix ``stack_rows`` stacked (runtime.quant.weights.by_parts)

    def tree_flatten(self):
        return (self.blocks,), (self.block_type, self.in_features, self.parts)

    def split_rows(self) -> list[GGUFMatrix]:
        ends = np.cumsum(self.parts).tolist()
        return [GGUFMatrix(self.blocks[a:b], self.block_type, self.in_features) for a, b in zip([0, *ends[:-1]], ends)]

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children, *aux)

    def __repr__(self) -> str:
        return f"GGUFMatrix({self.block_type}, shape={self.shape})"

    @property
    def T(self) -> GGUFMatrix:
        return self

    @property
    def shape(self) -> tuple[int, int]:
        return (self.blocks.shape[0], self.in_features)

    @property
    def nbytes(self) -> int:
        return int(self.blocks.nbytes)

    def permute_rows(self, order: np.ndarray) -> GGUFMatrix:
        """Rows reordered on the host (llama.cpp's Q/K row permutation undone: rows are whole blocks)."""
        return GGUFMatrix(np.ascontiguousarray(np.asarray(self.blocks)[order]), self.block_type, self.in_features)

    def dequantize(self) -> jax.Array:
        return dequantize_blocks(self.blocks, self.block_type, self.in_features)

    def take_rows(self, idx: jax.Array) -> jax.Array:
        """Rows W[idx] -> float32 [*idx.shape, in_features] (the embedding lookup)."""
        rows = jnp.take(self.blocks, idx.reshape(-1), axis=0)
        return dequantize_blocks(rows, self.block_type, self.in_features).reshape(*idx.shape, self.in_features)

    def norm_matvec(self, x, norm, *, eps: float) -> jax.Array | None:
        """``(rms_norm(x) * norm) . W^T`` as one kernel call, or None (``runtime.quant.weights.fused_norm_matvec``)."""
        from runtime.quant.weights import fused_norm_matvec

        return fused_norm_matvec(self, x, norm, eps=eps)

    def gated_mlp(self, down, x, norm, post_norm, *, activation: str, eps: float, residual=None) -> jax.Array | None:
        """With self a layer's stacked gate/up: its MLP block as one kernel call, or None
        (``runtime.quant.weights.fused_gated_mlp``)."""
        from runtime.quant.weights import fused_gated_mlp

        return fused_gated_mlp(self, down, x, norm, post_norm, activation=activation, eps=eps, residual=residual)

    def stack_rows(self, mats: list[GGUFMatrix]) -> GGUFMatrix | None:
        """``runtime.quant.weights.concat_rows`` for this kind: None unless every one has this block type and K."""
        if any((m.block_type, m.in_features) != (self.block_type, self.in_features) for m in mats):
            return None
        parts = tuple(int(m.shape[0]) for m in mats)
        return GGUFMatrix(
            np.concatenate([np.asarray(m.blocks) for m in mats]), self.block_type, self.in_features, parts
        )

    def kernel_operands(self) -> tuple[int, int, jax.Array, jax.Array] | None:
        """As the fused CPU kernels take it (kind 2, the block type's id), or None for a type they do not read."""
        from runtime.quant.cpu import GGUF_BLOCK_TYPE_ID

        if self.block_type not in GGUF_BLOCK_TYPE_ID:
            return None
        return 2, GGUF_BLOCK_TYPE_ID[self.block_type], self.blocks, jnp.zeros((0,), jnp.float32)

    def matvec(self, x: jax.Array) -> jax.Array:
        """x [..., in_features] -> x . W^T [..., rows] in x.dtype (float32 accumulation)."""
        from runtime.quant.weights import by_parts

        if by_parts(self, x):
            return jnp.concatenate([m.matvec(x) for m in self.split_rows()], axis=-1)
        lead = x.shape[:-1]
        x2 = x.reshape(-1, self.in_features)
        if platform_family(target_platform()) == "cpu":
            from runtime.quant import cpu as quant_cpu

            y = quant_cpu.gguf_matmul(x2, self.blocks, block_type=self.block_type, in_features=self.in_features)
        else:
            y = gguf_matmul_reference(x2, self.blocks, block_type=self.block_type, in_features=self.in_features)
        return y.reshape(*lead, self.blocks.shape[0])


def native_block_type(tensor) -> str | None:
    """The block type a tensor runs natively as, or None (dequantized to float instead)."""
    name = tensor.tensor_type.name.lower()
    if name not in BLOCK_BYTES or len(tensor.shape) != 2 or int(tensor.shape[0]) % 32:
        return None
    return name


def gguf_matrix(tensor) -> GGUFMatrix:
    """A 2-D GGUF tensor of a native block type -> GGUFMatrix (the mapped file's bytes, copied once)."""
    block_type = native_block_type(tensor)
    if block_type is None:
        raise ValueError(f"tensor {tensor.name!r} ({tensor.tensor_type.name}) has no native kernel")
    in_features, rows = (int(d) for d in tensor.shape)  # ggml dims: [in, out]
    data = np.asarray(tensor.data).reshape(rows, in_features // 32 * BLOCK_BYTES[block_type])
    return GGUFMatrix(np.array(data, np.uint8), block_type, in_features)
