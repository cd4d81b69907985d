"""The Llama family in Flax (SmolLM2 and friends): RMSNorm, RoPE, grouped-query attention, SwiGLU.

Everything but the layer's choices lives in ``runtime.models.common`` (the layers, ``DecoderModel``,
GGUF reading); this file says what a Llama layer is: pre-norm attention and a SwiGLU MLP, no Q/K norm,
no sandwich norms. Every layer attends alike, so ``build`` takes a ready attention function
``(q, k_pages, v_pages, md) -> out``; the model has no branches for backends, quantization or sharding.

llama.cpp's converter permutes each head's Q/K rows for its interleaved rotary; ``params_from_gguf``
undoes it (``unpermute_qk``) so that the model uses rotate-half RoPE.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from runtime.models import common
from runtime.models.common import DecoderModel, LayerSpec
from runtime.models.config import ModelConfig

LAYER = LayerSpec(activation=jax.nn.silu, gguf_permuted_qk=True, activation_kernel="silu")


def params_from_gguf(config: ModelConfig, get: Callable[[str], np.ndarray], unpermute_qk) -> dict:
    """GGUF tensors ([out, in], llama.cpp names) -> this model's parameter tree ([in, out])."""
    return common.params_from_gguf(config, get, unpermute_qk, LAYER)


def build(config: ModelConfig, attend: Callable, dtype=jnp.float32) -> DecoderModel:
    return DecoderModel(config, LAYER, (attend,) * config.num_layers, dtype)
