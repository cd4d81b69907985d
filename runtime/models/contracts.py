"""What the model code asks of a weight and of an attention function beyond arrays and plain calls: the fast
path's contract, declared.

The model (``runtime.models.common``) reads three things off what it is handed, and nothing else:

- ``MatmulWeight``: a weight in a format only it reads (quantized codes, the file's blocks, float32 rows for a
  C++ kernel) that multiplies x by itself and gives rows of itself. A parameter-tree leaf where a float array
  would be (a Linear's ``kernel``, the embedding): ``linear``, ``embed`` and ``tied_logits`` call it.
- ``FusedLayerWeight``: a ``MatmulWeight`` that also runs a layer's fused calls: the attention norm with the
  stacked q/k/v (``norm_matvec``) and, held as the stacked gate/up, the whole MLP block (``gated_mlp``). Each
  returns None where it declines (too many rows, another platform), and the model then runs its modules.
- ``FusedAttention``: an attention function (``attend(q, k_pages, v_pages, md) -> out``, handed to the model
  per layer by ``runtime.worker.attention.make_attend_fn``) that also runs RoPE, the KV write and attention as
  one call (``rope_write_attend``), or declines with None.

A new kernel plugs in by implementing one of these (structurally: ``typing.Protocol``, no import of this module
is needed, so ``runtime.quant`` stays below ``runtime.models``) and being put in the parameter tree, or handed in
as the attention function. ``tests/runtime/models/test_contracts.py`` holds every implementation to the signatures
here. The shapes: x [T, in], W [rows, in], out [T, rows]; ``norm``/``post_norm`` [D]; q [T, H, Dh];
``qkv`` [T, (H + 2 KVH) * Dh]; pages as ``runtime.models.kv_cache`` describes them.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import jax


@runtime_checkable
class MatmulWeight(Protocol):
    """W [rows, in_features] that multiplies itself."""

    def matvec(self, x: jax.Array) -> jax.Array:
        """x [..., in_features] -> x . W^T [..., rows] in x's dtype."""
        ...

    def take_rows(self, idx: jax.Array) -> jax.Array:
        """Rows W[idx] -> float32 [*idx.shape, in_features] (the embedding lookup)."""
        ...


@runtime_checkable
class FusedLayerWeight(MatmulWeight, Protocol):
    """A ``MatmulWeight`` that also runs a layer's fused calls (each None where it declines)."""

    def norm_matvec(self, x: jax.Array, norm: jax.Array, *, eps: float) -> jax.Array | None:
        """``(rms_norm(x) * norm) . W^T`` as one call (self: the stacked q/k/v)."""
        ...

    def gated_mlp(
        self,
        down: Any,
        x: jax.Array,
        norm: jax.Array,
        post_norm: jax.Array | None,
        *,
        activation: str,
        eps: float,
        residual: jax.Array | None = None,
    ) -> jax.Array | None:
        """With self the stacked gate/up: ``x' + [post_norm](down(act(gate(h)) * up(h)))``, ``h = rms_norm(x') *
        norm``, ``x' = x + residual`` (where given), as one call; ``activation``: ``LayerSpec.activation_kernel``."""
        ...


@runtime_checkable
class FusedAttention(Protocol):
    """An attention function that also offers RoPE, the KV write and attention as one call."""

    def __call__(self, q: jax.Array, k_pages: Any, v_pages: Any, md: Any) -> jax.Array:
        """q [T, H, Dh] against the pages (already written) -> out [T, H, Dh]."""
        ...

    def rope_write_attend(
        self, qkv: jax.Array, cos: jax.Array, sin: jax.Array, k_pages: Any, v_pages: Any, md: Any, *, num_heads: int
    ) -> tuple[jax.Array, tuple[Any, Any]] | None:
        """Rotate q and k of ``qkv``, write k and v at ``md.slot_mapping``, attend: (out [T, H, Dh], (k_pages,
        v_pages)), or None."""
        ...
