"""The Llama family in Flax (SmolLM2 and friends): RMSNorm, RoPE, grouped-query attention, SwiGLU.

One forward call processes one engine step: every scheduled token on one flattened axis ``T`` (prefill
chunks and decode tokens mixed), with positions, the paged KV cache (one ``(k_pages, v_pages)`` pair
per layer) and the step's ``AttentionMetadata``. It returns logits only for ``logits_indices`` (the
last token of each sequence that samples this step) and the updated cache. How attention is computed
(XLA gathers or the Pallas kernel) is the ``attend`` function handed in; the model has no branches for
backends, quantization or sharding.

Parameter layout (``[in, out]`` kernels, as ``flax.linen.Dense``):
    embed/embedding [V, D]; layers_i/{attn_norm, ffn_norm}/scale [D];
    layers_i/attn/{q [D, H*Dh], k [D, KVH*Dh], v [D, KVH*Dh], o [H*Dh, D]}/kernel;
    layers_i/mlp/{gate [D, F], up [D, F], down [F, D]}/kernel; final_norm/scale [D];
    lm_head/kernel [D, V] only when the embedding is not tied.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from runtime.models.common import embed, linear, tied_logits, weight
from runtime.models.config import ModelConfig
from runtime.models.kv_cache import AttentionMetadata, write_kv

KVCache = Sequence[tuple[jax.Array, jax.Array]]  # per layer: ([P, page, KVH, Dh], [P, page, KVH, Dh])


# ---------------------------------------------------------------- small pure functions


def rms_norm(x: jax.Array, scale: jax.Array, eps: float) -> jax.Array:
    x32 = x.astype(jnp.float32)
    y = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, axis=-1, keepdims=True) + eps)
    return (y * scale.astype(jnp.float32)).astype(x.dtype)


def rope_cos_sin(positions: jax.Array, head_dim: int, theta: float) -> tuple[jax.Array, jax.Array]:
    """positions [T] -> cos, sin [T, Dh/2] (float32)."""
    inv_freq = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    angles = positions.astype(jnp.float32)[:, None] * jnp.asarray(inv_freq)[None, :]
    return jnp.cos(angles), jnp.sin(angles)


def apply_rope(x: jax.Array, cos: jax.Array, sin: jax.Array) -> jax.Array:
    """Rotate-half rotary embedding. x [T, heads, Dh]; cos/sin [T, Dh/2]."""
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half].astype(jnp.float32), x[..., half:].astype(jnp.float32)
    c, s = cos[:, None, :], sin[:, None, :]
    return jnp.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1).astype(x.dtype)


# ---------------------------------------------------------------- modules


class Linear(nn.Module):
    features: int

    @nn.compact
    def __call__(self, x):
        kernel = weight(self, "kernel", nn.initializers.normal(0.02), (x.shape[-1], self.features))
        return linear(x, kernel)


class RMSNorm(nn.Module):
    eps: float

    @nn.compact
    def __call__(self, x):
        scale = self.param("scale", nn.initializers.ones, (x.shape[-1],), jnp.float32)
        return rms_norm(x, scale, self.eps)


class Attention(nn.Module):
    config: ModelConfig
    attend: Callable

    @nn.compact
    def __call__(self, x, cos, sin, kv, md: AttentionMetadata):
        c = self.config
        T = x.shape[0]
        q = Linear(c.num_heads * c.head_dim, name="q")(x).reshape(T, c.num_heads, c.head_dim)
        k = Linear(c.num_kv_heads * c.head_dim, name="k")(x).reshape(T, c.num_kv_heads, c.head_dim)
        v = Linear(c.num_kv_heads * c.head_dim, name="v")(x).reshape(T, c.num_kv_heads, c.head_dim)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        k_pages, v_pages = write_kv(kv[0], kv[1], k, v, md.slot_mapping)
        out = self.attend(q, k_pages, v_pages, md)  # [T, H, Dh]
        out = Linear(c.hidden_size, name="o")(out.reshape(T, c.num_heads * c.head_dim))
        return out, (k_pages, v_pages)


class MLP(nn.Module):
    config: ModelConfig

    @nn.compact
    def __call__(self, x):
        c = self.config
        gate = Linear(c.intermediate_size, name="gate")(x)
        up = Linear(c.intermediate_size, name="up")(x)
        return Linear(c.hidden_size, name="down")(jax.nn.silu(gate) * up)


class DecoderLayer(nn.Module):
    config: ModelConfig
    attend: Callable

    @nn.compact
    def __call__(self, x, cos, sin, kv, md):
        c = self.config
        h, kv = Attention(c, self.attend, name="attn")(RMSNorm(c.rms_norm_eps, name="attn_norm")(x), cos, sin, kv, md)
        x = x + h
        x = x + MLP(c, name="mlp")(RMSNorm(c.rms_norm_eps, name="ffn_norm")(x))
        return x, kv


class LlamaModel(nn.Module):
    config: ModelConfig
    attend: Callable
    dtype: Any = jnp.float32  # activation dtype; weights are cast at each matmul

    @nn.compact
    def __call__(self, tokens, positions, kv_caches: KVCache, md: AttentionMetadata, logits_indices):
        """tokens, positions [T] int32; logits_indices [S] int32 -> logits [S, V] float32, new caches."""
        c = self.config
        embedding = weight(self, "embed", nn.initializers.normal(0.02), (c.vocab_size, c.hidden_size))
        x = embed(embedding, tokens, self.dtype)  # [T, D]
        cos, sin = rope_cos_sin(positions, c.head_dim, c.rope_theta)
        new_caches = []
        for i in range(c.num_layers):
            x, kv = DecoderLayer(c, self.attend, name=f"layers_{i}")(x, cos, sin, kv_caches[i], md)
            new_caches.append(kv)
        x = RMSNorm(c.rms_norm_eps, name="final_norm")(jnp.take(x, logits_indices, axis=0))  # [S, D]
        if c.tie_word_embeddings:
            logits = tied_logits(x, embedding)  # [S, V]
        else:
            logits = Linear(c.vocab_size, name="lm_head")(x)
        return logits.astype(jnp.float32), new_caches


# ---------------------------------------------------------------- loading


def params_from_gguf(config: ModelConfig, get: Callable[[str], np.ndarray], unpermute_qk) -> dict:
    """GGUF tensors ([out, in], llama.cpp names) -> this module's parameter tree ([in, out])."""
    c = config
    params: dict[str, Any] = {"embed": get("token_embd.weight")}
    if params["embed"].shape != (c.vocab_size, c.hidden_size):
        raise ValueError(
            f"token_embd.weight has shape {params['embed'].shape}, expected {(c.vocab_size, c.hidden_size)}"
        )
    for i in range(c.num_layers):
        b = f"blk.{i}."
        params[f"layers_{i}"] = {
            "attn_norm": {"scale": get(b + "attn_norm.weight")},
            "ffn_norm": {"scale": get(b + "ffn_norm.weight")},
            "attn": {
                "q": {"kernel": unpermute_qk(get(b + "attn_q.weight"), c.num_heads).T},
                "k": {"kernel": unpermute_qk(get(b + "attn_k.weight"), c.num_kv_heads).T},
                "v": {"kernel": get(b + "attn_v.weight").T},
                "o": {"kernel": get(b + "attn_output.weight").T},
            },
            "mlp": {
                "gate": {"kernel": get(b + "ffn_gate.weight").T},
                "up": {"kernel": get(b + "ffn_up.weight").T},
                "down": {"kernel": get(b + "ffn_down.weight").T},
            },
        }
    params["final_norm"] = {"scale": get("output_norm.weight")}
    if not c.tie_word_embeddings:
        params["lm_head"] = {"kernel": get("output.weight").T}
    return jax.tree.map(np.ascontiguousarray, params)


def build(config: ModelConfig, attend: Callable, dtype=jnp.float32) -> LlamaModel:
    return LlamaModel(config, attend, dtype)
