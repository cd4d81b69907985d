"""The Gemma 3 family in Flax (text decoder; Gemma 3 270M and friends).

What differs from Llama (``runtime.models.llama``; the layers are ``runtime.models.common``'s, with this
file's ``LAYER`` choices):

* token embeddings are multiplied by ``sqrt(hidden)`` (``config.embedding_multiplier``), in the
  activation dtype, as Hugging Face's ``Gemma3TextScaledWordEmbedding`` does;
* four RMSNorms per layer: before and after attention, before and after the MLP (sandwich norm);
* RMSNorm over each head's query and key (``q_norm``, ``k_norm``) before RoPE;
* GeGLU MLP: ``down(gelu_tanh(gate(x)) * up(x))``;
* local layers attend to a sliding window of ``config.sliding_window`` keys (the query itself
  included) and use RoPE base ``rope_local_theta``; every ``sliding_window_pattern``-th layer is
  global (full causal attention, base ``rope_theta``);
* softmax scale ``query_pre_attn_scalar ** -0.5``; optional tanh soft caps on attention scores and
  final logits (off in Gemma 3; kept for files that set them);
* the LM head is the embedding matrix (a 262,144-token vocabulary: it dominates a decode step).

Norm weights: Gemma normalizes with ``x_hat * (1 + w)``; llama.cpp's converter stores ``1 + w`` in
the GGUF (Hugging Face's GGUF loader subtracts the 1 again), so this model multiplies by the stored
value, like Llama's RMSNorm. Q/K rows are not permuted by the converter for Gemma (llama.cpp uses
NEOX, i.e. rotate-half, rotary for it), so ``params_from_gguf`` leaves them as stored.

Attention is per layer: ``build`` takes a factory ``make_attend(*, sm_scale, sliding_window, soft_cap)``
and asks it for one function per distinct layer kind (see ``runtime.models.build_model``).

Parameter layout (``[in, out]`` kernels):
    embed [V, D]; final_norm/scale [D];
    layers_i/{attn_norm, post_attn_norm, ffn_norm, post_ffn_norm}/scale [D];
    layers_i/attn/{q [D, H*Dh], k [D, KVH*Dh], v [D, KVH*Dh], o [H*Dh, D]}/kernel;
    layers_i/attn/{q_norm, k_norm}/scale [Dh];
    layers_i/mlp/{gate [D, F], up [D, F], down [F, D]}/kernel.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from runtime.models import common
from runtime.models.common import DecoderModel, LayerSpec
from runtime.models.config import ModelConfig

# runtime.models.build_model hands this family an attention factory, not a ready function.
PER_LAYER_ATTENTION = True

AttendFactory = Callable[..., Callable]  # (*, sm_scale, sliding_window, soft_cap) -> attend

LAYER = LayerSpec(
    activation=functools.partial(jax.nn.gelu, approximate=True),
    qk_norm=True,
    sandwich_norm=True,
    activation_kernel="gelu_tanh",
)


def params_from_gguf(config: ModelConfig, get: Callable[[str], np.ndarray], unpermute_qk) -> dict:
    """GGUF tensors ([out, in], llama.cpp names) -> this model's parameter tree ([in, out]).

    ``unpermute_qk`` is unused: llama.cpp does not permute Gemma's Q/K rows (NEOX rotary).
    """
    if not config.tie_word_embeddings:
        raise ValueError("a Gemma 3 file with a separate output.weight is not supported (Gemma ties its LM head)")
    return common.params_from_gguf(config, get, unpermute_qk, LAYER)


def build(config: ModelConfig, make_attend: AttendFactory, dtype=jnp.float32) -> DecoderModel:
    """``make_attend(*, sm_scale, sliding_window=None, soft_cap=None)`` -> an attention function."""
    try:
        params = inspect.signature(make_attend).parameters
    except (TypeError, ValueError):
        params = {}
    if "sliding_window" not in params:
        raise TypeError(
            "Gemma 3 needs an attention factory make_attend(*, sm_scale, sliding_window, soft_cap), not a ready "
            "attention function (its local layers attend to a sliding window): build it with "
            "runtime.models.build_model(config, functools.partial(runtime.attention.make_attend_fn, backend), dtype)"
        )
    # One attention function per kind of layer (local / global).
    c = config
    attends = {
        w: make_attend(sm_scale=c.attn_scale, sliding_window=w, soft_cap=c.attn_logit_softcap)
        for w in set(c.layer_sliding_windows)
    }
    return DecoderModel(config, LAYER, tuple(attends[w] for w in c.layer_sliding_windows), dtype)
