"""What every family shares: the weight seams, the small pure functions, the layers and the model around them.

A family (``llama``, ``gemma3``) is a ``LayerSpec`` (what its decoder layer does differently) plus its
``build`` and GGUF reading; ``DecoderModel`` is the rest: embedding, the stack of layers, final norm,
LM head.

A weight here is either a float array or an object that multiplies itself (``runtime.models.contracts``:
``MatmulWeight``, and ``FusedLayerWeight`` for a layer's fused calls; ``runtime.quant`` implements them), put in
the parameter tree by a transform. The weight helpers dispatch on those declared protocols, so the models have
no quantization branches and no mode flag.

One forward call processes one engine step: every scheduled token on one flattened axis ``T`` (prefill
chunks and decode tokens mixed), with positions, the paged KV cache (one ``(k_pages, v_pages)`` pair
per layer) and the step's ``AttentionMetadata``. It returns logits only for ``logits_indices`` (the
last token of each sequence that samples this step) and the updated cache. How attention is computed
(XLA gathers or the Pallas kernel) is the per-layer ``attend`` function handed in.

Parameter layout (``[in, out]`` kernels, as ``flax.linen.Dense``):
    embed [V, D]; final_norm/scale [D]; lm_head/kernel [D, V] only when the embedding is not tied;
    layers_i/{attn_norm, ffn_norm}/scale [D] (+ {post_attn_norm, post_ffn_norm} with sandwich norms);
    layers_i/attn/{q [D, H*Dh], k [D, KVH*Dh], v [D, KVH*Dh], o [H*Dh, D]}/kernel;
    layers_i/attn/{q_norm, k_norm}/scale [Dh] with ``qk_norm``;
    layers_i/mlp/{gate [D, F], up [D, F], down [F, D]}/kernel.
Linear layers that read the same x may instead be one kernel, their outputs side by side
(``linears``; ``runtime.quant.weights.fuse_linears`` builds them on the host for the CPU kernels):
    layers_i/attn/qkv/kernel [D, (H + 2 KVH) * Dh] for q, k, v; layers_i/mlp/gate_up/kernel [D, 2F].
With a stacked gate/up whose matrix offers ``gated_mlp`` (the CPU kernels), a layer's whole MLP block, the
attention block's residual add through norm to its own residual add, is one call (``fused_mlp_block``); with
a stacked q/k/v and an attention function that offers ``rope_write_attend`` (the ``cpu`` backend), RoPE, the
KV write and attention are one call (``fused_rope_write_attend``). The modules below remain the definition
and run wherever a call declines (prefill chunks, other platforms, other cache formats, ``init``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from runtime.models.config import ModelConfig
from runtime.models.contracts import FusedAttention, FusedLayerWeight, MatmulWeight
from runtime.models.kv_cache import AttentionMetadata, write_kv

KVCache = Sequence[tuple[jax.Array, jax.Array]]  # per layer: ([P, page, KVH, Dh], [P, page, KVH, Dh])


@dataclass(frozen=True)
class LayerSpec:
    """What one family's decoder layer does differently; everything else is shared."""

    activation: Callable[[jax.Array], jax.Array]  # of the gated MLP: down(act(gate(x)) * up(x))
    qk_norm: bool = False  # an RMSNorm over each head's query and key, before RoPE
    sandwich_norm: bool = False  # an RMSNorm on the attention and MLP outputs too, before each residual add
    gguf_permuted_qk: bool = False  # llama.cpp stores the Q/K rows permuted (interleaved rotary): undo it
    activation_kernel: str | None = None  # ``activation``'s name for fused kernels ("silu", "gelu_tanh")


# ---------------------------------------------------------------- weight seams


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
    if isinstance(kernel, MatmulWeight):
        return kernel.matvec(x)
    return jnp.dot(x, kernel.astype(x.dtype))


def linears(module: nn.Module, x: jax.Array, parts: dict[str, int], fused: str) -> list[jax.Array]:
    """x through the Linear layers ``parts`` (name -> out features, in order), which all read x: one matmul
    when the tree holds their kernels as one under ``fused`` (outputs side by side, in ``parts``' order), else
    one Linear each. The same numbers either way where each output column is its own dot product over the
    same x (the CPU kernels: ``runtime.quant.weights.fuse_linears`` says which weights it fuses)."""
    if module.has_variable("params", fused):
        y = Linear(sum(parts.values()), name=fused)(x)  # (..., sum of features)
        return jnp.split(y, np.cumsum(list(parts.values()))[:-1].tolist(), axis=-1)
    return [Linear(features, name=name)(x) for name, features in parts.items()]


def fused_norm_qkv(module: nn.Module, x: jax.Array, c: ModelConfig) -> jax.Array | None:
    """``Attention``'s q, k and v side by side, [T, (H + 2 KVH) * Dh], from the layer's input x: ``attn_norm`` then
    the stacked q/k/v matmul as one call when that matrix offers one (a ``FusedLayerWeight``: the CPU kernels,
    ``runtime.quant.weights``), else None and the layer runs ``RMSNorm`` and ``Attention``'s matmuls. Reads
    ``attn_norm`` and ``attn/qkv`` as those modules would; there are none at ``init``."""
    params = module.variables.get("params", {})
    qkv = params.get("attn", {}).get("qkv", {}).get("kernel")
    if not isinstance(qkv, FusedLayerWeight):
        return None
    return qkv.norm_matvec(x, params["attn_norm"]["scale"], eps=c.rms_norm_eps)


def fused_rope_write_attend(
    attend: Callable, qkv: jax.Array | None, cos, sin, kv, md: AttentionMetadata, c: ModelConfig, spec: LayerSpec
):
    """``Attention``'s RoPE, ``write_kv`` and ``attend`` as one call when the attention function offers one (a
    ``FusedAttention``: the ``cpu`` backend, ``runtime.worker.attention``) and takes this call:
    (out [T, H, Dh], (k_pages, v_pages)); else None and ``Attention`` runs the three. Needs q, k and v side by
    side (``qkv`` [T, (H + 2 KVH) * Dh], a stacked projection) and no q/k norm (Gemma's sits before RoPE)."""
    if not isinstance(attend, FusedAttention) or qkv is None or spec.qk_norm:
        return None
    return attend.rope_write_attend(qkv, cos, sin, kv[0], kv[1], md, num_heads=c.num_heads)


def fused_mlp_block(module: nn.Module, x: jax.Array, spec: LayerSpec, eps: float, residual=None) -> jax.Array | None:
    """``DecoderLayer``'s MLP block, ``x + [post_ffn_norm](down(act(gate(h)) * up(h)))`` with ``h = ffn_norm(x)``,
    x being ``x + residual`` where the attention block's output is given as ``residual``, as one call when the
    layer's stacked gate/up kernel offers one (a ``FusedLayerWeight``: the CPU kernels, ``runtime.quant.weights``),
    else None and the layer runs the modules below. Reads the parameters the modules would (``ffn_norm``,
    ``mlp/gate_up``, ``mlp/down``, ``post_ffn_norm``); there are none at ``init``."""
    params = module.variables.get("params", {})
    mlp = params.get("mlp", {})
    gate_up = mlp.get("gate_up", {}).get("kernel")
    if spec.activation_kernel is None or not isinstance(gate_up, FusedLayerWeight) or "down" not in mlp:
        return None
    post = params["post_ffn_norm"]["scale"] if spec.sandwich_norm else None
    return gate_up.gated_mlp(
        mlp["down"]["kernel"],
        x,
        params["ffn_norm"]["scale"],
        post,
        activation=spec.activation_kernel,
        eps=eps,
        residual=residual,
    )


def embed(table: Any, tokens: jax.Array, dtype) -> jax.Array:
    """Rows of the embedding table [V, D] for tokens [T] -> [T, D] in dtype."""
    if isinstance(table, MatmulWeight):
        return table.take_rows(tokens).astype(dtype)
    return jnp.take(table, tokens, axis=0).astype(dtype)


def tied_logits(x: jax.Array, table: Any) -> jax.Array:
    """x [S, D] . table [V, D]^T -> logits [S, V] in x's dtype (the embedding as LM head, no transposed copy)."""
    if isinstance(table, MatmulWeight):
        return table.matvec(x)
    return jnp.einsum("sd,vd->sv", x, table.astype(x.dtype))


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


def soft_cap(x: jax.Array, cap: float | None) -> jax.Array:
    return x if cap is None else cap * jnp.tanh(x / cap)


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
    """Grouped-query attention over the paged cache: project, (norm q and k), rotate, write the new
    keys and values into their pages, attend, project back."""

    config: ModelConfig
    spec: LayerSpec
    attend: Callable

    @nn.compact
    def __call__(self, x, cos, sin, kv, md: AttentionMetadata, qkv=None):
        """x [T, D] normed, or ``qkv`` [T, (H + 2 KVH) * Dh] already projected from it (``fused_norm_qkv``)."""
        c = self.config
        kv_features = c.num_kv_heads * c.head_dim
        parts = {"q": c.num_heads * c.head_dim, "k": kv_features, "v": kv_features}
        if qkv is None and self.has_variable("params", "qkv"):
            qkv = Linear(sum(parts.values()), name="qkv")(x)  # the stacked q/k/v: outputs side by side
        fused = fused_rope_write_attend(self.attend, qkv, cos, sin, kv, md, c, self.spec)
        if fused is not None:
            out, (k_pages, v_pages) = fused
        else:
            if qkv is not None:
                q, k, v = jnp.split(qkv, np.cumsum(list(parts.values()))[:-1].tolist(), axis=-1)
            else:
                q, k, v = linears(self, x, parts, "qkv")
            T = q.shape[0]
            q = q.reshape(T, c.num_heads, c.head_dim)  # (T, H, Dh)
            k, v = k.reshape(T, c.num_kv_heads, c.head_dim), v.reshape(T, c.num_kv_heads, c.head_dim)  # (T, KVH, Dh)
            if self.spec.qk_norm:
                q = RMSNorm(c.rms_norm_eps, name="q_norm")(q)  # per head, over Dh
                k = RMSNorm(c.rms_norm_eps, name="k_norm")(k)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            k_pages, v_pages = write_kv(kv[0], kv[1], k, v, md.slot_mapping)
            out = self.attend(q, k_pages, v_pages, md)  # (T, H, Dh)
        T = out.shape[0]
        out = Linear(c.hidden_size, name="o")(out.reshape(T, c.num_heads * c.head_dim))
        return out, (k_pages, v_pages)


class GatedMLP(nn.Module):
    config: ModelConfig
    activation: Callable[[jax.Array], jax.Array]

    @nn.compact
    def __call__(self, x):
        c = self.config
        gate, up = linears(self, x, {"gate": c.intermediate_size, "up": c.intermediate_size}, "gate_up")  # (T, F)
        return Linear(c.hidden_size, name="down")(self.activation(gate) * up)


class DecoderLayer(nn.Module):
    """Pre-norm attention and MLP, each added to the residual stream (normed again with sandwich norms); the
    attention norm with q/k/v, RoPE with the KV write and attention, and the attention output's residual add
    with the MLP block, as one kernel call each where the weights and the attention function offer one
    (``fused_norm_qkv``, ``fused_rope_write_attend``, ``fused_mlp_block``)."""

    config: ModelConfig
    spec: LayerSpec
    attend: Callable

    @nn.compact
    def __call__(self, x, cos, sin, kv, md):
        c, spec, eps = self.config, self.spec, self.config.rms_norm_eps
        qkv = fused_norm_qkv(self, x, c)
        normed = RMSNorm(eps, name="attn_norm")(x) if qkv is None else None
        h, kv = Attention(c, spec, self.attend, name="attn")(normed, cos, sin, kv, md, qkv=qkv)
        if spec.sandwich_norm:
            h = RMSNorm(eps, name="post_attn_norm")(h)
        fused = fused_mlp_block(self, x, spec, eps, residual=h)  # the residual add too
        if fused is not None:
            return fused, kv
        x = x + h
        h = GatedMLP(c, spec.activation, name="mlp")(RMSNorm(eps, name="ffn_norm")(x))
        if spec.sandwich_norm:
            h = RMSNorm(eps, name="post_ffn_norm")(h)
        return x + h, kv


class DecoderModel(nn.Module):
    """Embedding -> ``num_layers`` decoder layers -> final RMSNorm -> LM head (the embedding when tied).

    ``attends``: one attention function per layer (a family with sliding-window layers hands in one
    per kind of layer). Each layer rotates with its RoPE base (``config.layer_rope_thetas``).
    """

    config: ModelConfig
    spec: LayerSpec
    attends: tuple[Callable, ...]  # per layer: (q, k_pages, v_pages, md) -> out
    dtype: Any = jnp.float32  # activation dtype; weights are cast at each matmul

    @nn.compact
    def __call__(self, tokens, positions, kv_caches: KVCache, md: AttentionMetadata, logits_indices):
        """tokens, positions [T] int32; logits_indices [S] int32 -> logits [S, V] float32, new caches."""
        c = self.config
        embedding = weight(self, "embed", nn.initializers.normal(0.02), (c.vocab_size, c.hidden_size))
        x = embed(embedding, tokens, self.dtype)  # (T, D)
        if c.embedding_multiplier != 1.0:  # Gemma: sqrt(hidden), rounded to the activation dtype, as HF
            x = x * jnp.asarray(c.embedding_multiplier, self.dtype)
        rope = {theta: rope_cos_sin(positions, c.head_dim, theta) for theta in set(c.layer_rope_thetas)}
        new_caches = []
        for i in range(c.num_layers):
            cos, sin = rope[c.layer_rope_thetas[i]]
            x, kv = DecoderLayer(c, self.spec, self.attends[i], name=f"layers_{i}")(x, cos, sin, kv_caches[i], md)
            new_caches.append(kv)
        x = RMSNorm(c.rms_norm_eps, name="final_norm")(jnp.take(x, logits_indices, axis=0))  # (S, D)
        if c.tie_word_embeddings:
            logits = tied_logits(x, embedding)  # (S, V)
        else:
            logits = Linear(c.vocab_size, name="lm_head")(x)
        return soft_cap(logits.astype(jnp.float32), c.final_logit_softcap), new_caches


# ---------------------------------------------------------------- loading

# Parameter name -> llama.cpp's tensor name (``blk.{i}.<name>.weight``), per part of a decoder layer.
GGUF_NORMS = {"attn_norm": "attn_norm", "ffn_norm": "ffn_norm"}
GGUF_SANDWICH_NORMS = {"post_attn_norm": "post_attention_norm", "post_ffn_norm": "post_ffw_norm"}
GGUF_ATTENTION = {"q": "attn_q", "k": "attn_k", "v": "attn_v", "o": "attn_output"}
GGUF_QK_NORMS = {"q_norm": "attn_q_norm", "k_norm": "attn_k_norm"}
GGUF_MLP = {"gate": "ffn_gate", "up": "ffn_up", "down": "ffn_down"}


def params_from_gguf(
    config: ModelConfig, get: Callable[[str], np.ndarray], unpermute_qk: Callable, spec: LayerSpec
) -> dict:
    """GGUF tensors ([out, in], llama.cpp names) -> ``DecoderModel``'s parameter tree ([in, out])."""
    c = config
    params: dict[str, Any] = {"embed": get("token_embd.weight")}
    if params["embed"].shape != (c.vocab_size, c.hidden_size):
        raise ValueError(
            f"token_embd.weight has shape {params['embed'].shape}, expected {(c.vocab_size, c.hidden_size)}"
        )
    for i in range(c.num_layers):
        params[f"layers_{i}"] = _layer_from_gguf(c, spec, get, f"blk.{i}.", unpermute_qk)
    params["final_norm"] = {"scale": get("output_norm.weight")}
    if not c.tie_word_embeddings:
        params["lm_head"] = {"kernel": get("output.weight").T}
    return jax.tree.map(np.ascontiguousarray, params)


def _layer_from_gguf(c: ModelConfig, spec: LayerSpec, get: Callable, prefix: str, unpermute_qk: Callable) -> dict:
    def tensor(name: str) -> np.ndarray:
        return get(f"{prefix}{name}.weight")

    norms = {**GGUF_NORMS, **(GGUF_SANDWICH_NORMS if spec.sandwich_norm else {})}
    layer: dict[str, Any] = {name: {"scale": tensor(gguf)} for name, gguf in norms.items()}
    permuted = {"q": c.num_heads, "k": c.num_kv_heads} if spec.gguf_permuted_qk else {}
    attn = layer["attn"] = {}
    for name, gguf in GGUF_ATTENTION.items():
        w = tensor(gguf)
        attn[name] = {"kernel": (unpermute_qk(w, permuted[name]) if name in permuted else w).T}
    if spec.qk_norm:
        attn.update({name: {"scale": tensor(gguf)} for name, gguf in GGUF_QK_NORMS.items()})
    layer["mlp"] = {name: {"kernel": tensor(gguf).T} for name, gguf in GGUF_MLP.items()}
    return layer
