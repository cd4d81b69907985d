"""The serving dtypes as JAX types, keyed by the names ``runtime.api`` defines (JAX-free there).

    "float32" | "bfloat16"  -> DTYPES[name]           weights and activations
    param_dtype(path, dtype) -> the dtype one parameter is served in (norm scales stay float32)

Both the model runner (``params_to_device``) and tensor parallelism (``TensorParallel.shard_params``)
convert the host parameters with ``param_dtype``; it lives here, below both, so neither imports the
other. The KV cache's table (these plus the 8-bit formats) is ``runtime.quant.kv.KV_DTYPES``.
"""

from __future__ import annotations

import jax.numpy as jnp

from runtime.api import DTYPE_NAMES

DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}
assert tuple(DTYPES) == DTYPE_NAMES, (DTYPES, DTYPE_NAMES)  # EngineConfig accepts exactly these names


def param_dtype(path, dtype):
    """The serving dtype of one parameter (by its pytree key path): norm scales stay float32."""
    return jnp.float32 if any(getattr(k, "key", None) == "scale" for k in path) else dtype
