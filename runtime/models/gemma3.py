"""The Gemma 3 family in Flax (text decoder; Gemma 3 270M and friends).

What differs from Llama (``runtime.models.llama``, whose small functions this file reuses):

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
and the model asks it for one function per distinct layer kind (see ``runtime.models.build_model``).

Parameter layout (``[in, out]`` kernels):
    embed [V, D]; final_norm/scale [D];
    layers_i/{attn_norm, post_attn_norm, ffn_norm, post_ffn_norm}/scale [D];
    layers_i/attn/{q [D, H*Dh], k [D, KVH*Dh], v [D, KVH*Dh], o [H*Dh, D]}/kernel;
    layers_i/attn/{q_norm, k_norm}/scale [Dh];
    layers_i/mlp/{gate [D, F], up [D, F], down [F, D]}/kernel.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from runtime.models.common import embed, tied_logits, weight
from runtime.models.config import ModelConfig
from runtime.models.kv_cache import AttentionMetadata, write_kv
from runtime.models.llama import KVCache, Linear, RMSNorm, apply_rope, rope_cos_sin

# runtime.models.build_model hands this family an attention factory, not a ready function.
PER_LAYER_ATTENTION = True

AttendFactory = Callable[..., Callable]  # (*, sm_scale, sliding_window, soft_cap) -> attend


def soft_cap(x: jax.Array, cap: float | None) -> jax.Array:
    return x if cap is None else cap * jnp.tanh(x / cap)


class Attention(nn.Module):
    config: ModelConfig
    attend: Callable

    @nn.compact
    def __call__(self, x, cos, sin, kv, md: AttentionMetadata):
        c = self.config
        T = x.shape[0]
        q = Linear(c.num_heads * c.head_dim, name="q")(x).reshape(T, c.num_heads, c.head_dim)  # (T, H, Dh)
        k = Linear(c.num_kv_heads * c.head_dim, name="k")(x).reshape(T, c.num_kv_heads, c.head_dim)
        v = Linear(c.num_kv_heads * c.head_dim, name="v")(x).reshape(T, c.num_kv_heads, c.head_dim)
        q = RMSNorm(c.rms_norm_eps, name="q_norm")(q)  # per head, over Dh
        k = RMSNorm(c.rms_norm_eps, name="k_norm")(k)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        k_pages, v_pages = write_kv(kv[0], kv[1], k, v, md.slot_mapping)
        out = self.attend(q, k_pages, v_pages, md)  # (T, H, Dh)
        out = Linear(c.hidden_size, name="o")(out.reshape(T, c.num_heads * c.head_dim))
        return out, (k_pages, v_pages)


class MLP(nn.Module):
    config: ModelConfig

    @nn.compact
    def __call__(self, x):
        c = self.config
        gate = Linear(c.intermediate_size, name="gate")(x)
        up = Linear(c.intermediate_size, name="up")(x)
        return Linear(c.hidden_size, name="down")(jax.nn.gelu(gate, approximate=True) * up)


class DecoderLayer(nn.Module):
    config: ModelConfig
    attend: Callable

    @nn.compact
    def __call__(self, x, cos, sin, kv, md):
        c = self.config
        h, kv = Attention(c, self.attend, name="attn")(RMSNorm(c.rms_norm_eps, name="attn_norm")(x), cos, sin, kv, md)
        x = x + RMSNorm(c.rms_norm_eps, name="post_attn_norm")(h)
        h = MLP(c, name="mlp")(RMSNorm(c.rms_norm_eps, name="ffn_norm")(x))
        x = x + RMSNorm(c.rms_norm_eps, name="post_ffn_norm")(h)
        return x, kv


class Gemma3Model(nn.Module):
    config: ModelConfig
    make_attend: AttendFactory
    dtype: Any = jnp.float32  # activation dtype; weights are cast at each matmul

    @nn.compact
    def __call__(self, tokens, positions, kv_caches: KVCache, md: AttentionMetadata, logits_indices):
        """tokens, positions [T] int32; logits_indices [S] int32 -> logits [S, V] float32, new caches."""
        c = self.config
        embedding = weight(self, "embed", nn.initializers.normal(0.02), (c.vocab_size, c.hidden_size))
        x = embed(embedding, tokens, self.dtype)  # (T, D)
        x = x * jnp.asarray(c.embedding_multiplier, self.dtype)  # rounded to the activation dtype, as HF
        # One rotary table and one attention function per kind of layer (local / global).
        rope = {theta: rope_cos_sin(positions, c.head_dim, theta) for theta in set(c.layer_rope_thetas)}
        attends = {
            w: self.make_attend(sm_scale=c.attn_scale, sliding_window=w, soft_cap=c.attn_logit_softcap)
            for w in set(c.layer_sliding_windows)
        }
        new_caches = []
        for i in range(c.num_layers):
            cos, sin = rope[c.layer_rope_thetas[i]]
            attend = attends[c.layer_sliding_windows[i]]
            x, kv = DecoderLayer(c, attend, name=f"layers_{i}")(x, cos, sin, kv_caches[i], md)
            new_caches.append(kv)
        x = RMSNorm(c.rms_norm_eps, name="final_norm")(jnp.take(x, logits_indices, axis=0))  # (S, D)
        logits = tied_logits(x, embedding)  # (S, V) tied head
        return soft_cap(logits.astype(jnp.float32), c.final_logit_softcap), new_caches


# ---------------------------------------------------------------- loading


def params_from_gguf(config: ModelConfig, get: Callable[[str], np.ndarray], unpermute_qk) -> dict:
    """GGUF tensors ([out, in], llama.cpp names) -> this module's parameter tree ([in, out]).

    ``unpermute_qk`` is unused: llama.cpp does not permute Gemma's Q/K rows (NEOX rotary).
    """
    c = config
    if not c.tie_word_embeddings:
        raise ValueError("a Gemma 3 file with a separate output.weight is not supported (Gemma ties its LM head)")
    params: dict[str, Any] = {"embed": get("token_embd.weight")}
    if params["embed"].shape != (c.vocab_size, c.hidden_size):
        raise ValueError(
            f"token_embd.weight has shape {params['embed'].shape}, expected {(c.vocab_size, c.hidden_size)}"
        )
    for i in range(c.num_layers):
        b = f"blk.{i}."
        params[f"layers_{i}"] = {
            "attn_norm": {"scale": get(b + "attn_norm.weight")},
            "post_attn_norm": {"scale": get(b + "post_attention_norm.weight")},
            "ffn_norm": {"scale": get(b + "ffn_norm.weight")},
            "post_ffn_norm": {"scale": get(b + "post_ffw_norm.weight")},
            "attn": {
                "q": {"kernel": get(b + "attn_q.weight").T},
                "k": {"kernel": get(b + "attn_k.weight").T},
                "v": {"kernel": get(b + "attn_v.weight").T},
                "o": {"kernel": get(b + "attn_output.weight").T},
                "q_norm": {"scale": get(b + "attn_q_norm.weight")},
                "k_norm": {"scale": get(b + "attn_k_norm.weight")},
            },
            "mlp": {
                "gate": {"kernel": get(b + "ffn_gate.weight").T},
                "up": {"kernel": get(b + "ffn_up.weight").T},
                "down": {"kernel": get(b + "ffn_down.weight").T},
            },
        }
    params["final_norm"] = {"scale": get("output_norm.weight")}
    return jax.tree.map(np.ascontiguousarray, params)


def build(config: ModelConfig, make_attend: AttendFactory, dtype=jnp.float32) -> Gemma3Model:
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
    return Gemma3Model(config, make_attend, dtype)
