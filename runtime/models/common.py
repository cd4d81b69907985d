"""The seams every family's weights pass through: parameter fetch, Linear matmul, embedding lookup, tied head.

A weight here is either a float array or an object with the ``QuantizedMatrix`` methods
(``matvec``, ``take_rows``; see ``runtime.quant``), put in the parameter tree by a transform. These
helpers dispatch on the object (duck typing), so the models have no quantization branches and no
mode flag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp


def weight(module: nn.Module, name: str, init: Callable, shape: tuple[int, ...]) -> Any:
    """``module.param(name, init, shape, float32)``, but a supplied value comes back untouched.

    Flax's ``param`` returns the stored pytree as it is, then checks that its leaves have the
    initializer's shapes; a QuantizedMatrix's leaves (codes [out, in], scales) do not, so a weight
    that is already in the tree is read with ``get_variable`` instead (no check, no copy).
    """
    if module.has_variable("params", name):
        return module.get_variable("params", name)
    return module.param(name, init, shape, jnp.float32)


def linear(x: jax.Array, kernel: Any) -> jax.Array:
    """x [..., in] @ kernel [in, out] in x's dtype; a QuantizedMatrix ([out, in]) does its own matmul."""
    if hasattr(kernel, "matvec"):
        return kernel.matvec(x)
    return jnp.dot(x, kernel.astype(x.dtype))


def embed(table: Any, tokens: jax.Array, dtype) -> jax.Array:
    """Rows of the embedding table [V, D] for tokens [T] -> [T, D] in dtype."""
    if hasattr(table, "take_rows"):
        return table.take_rows(tokens).astype(dtype)
    return jnp.take(table, tokens, axis=0).astype(dtype)


def tied_logits(x: jax.Array, table: Any) -> jax.Array:
    """x [S, D] . table [V, D]^T -> logits [S, V] in x's dtype (the embedding as LM head, no transposed copy)."""
    if hasattr(table, "matvec"):
        return table.matvec(x)
    return jnp.einsum("sd,vd->sv", x, table.astype(x.dtype))
