"""A layer's RoPE, KV write and attention in one CPU kernel call (``rope_write_attention_cpu``,
``JaxserveRopeWriteAttention`` in runtime/worker/cpu_attention.cc) against the layer as
``runtime.models.common.Attention`` defines it: ``apply_rope`` on q and k, ``write_kv`` at the slot mapping,
then attention over the pages.

Bounds from the mechanism, elementwise: a rotated element ``x1 c - x2 s`` (c, s the float32 inputs) in float32
is within gamma(2) (|x1 c| + |x2 s|) of the exact value, however the two products and the difference are
rounded (each a rounding of its own or an fma); v goes into the pages as it is (exactly); no other slot
changes. The attention output is then ``test_cpu_attention.reference64`` on the exactly rotated q, with q's
rotation error (plus its rounding to float32) carried into the logits (``q_error``). The same bounds hold the
XLA layers (``apply_rope``, ``write_kv``, ``ragged_paged_attention_cpu``) to the same exact values. Batches are
the attention tests' (permuted, NaN-poisoned pages, edge lengths, decode rows mixed with prefill chunks,
padding rows and sequences), with this step's new keys' slots poisoned too, so the call must write them before
it reads them. Then the engine's greedy tokens are the same with and without the call (the tiny Llama, Gemma 3
which keeps the layers (its q/k norm sits before RoPE), and SmolLM2).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.models.common import apply_rope, rope_cos_sin
from runtime.models.kv_cache import AttentionMetadata, write_kv
from runtime.quant.kv import QuantizedPages
from runtime.worker import cpu_attention
from runtime.worker.cpu_attention import ragged_paged_attention_cpu, rope_write_attention_cpu
from tests.runtime.worker.test_cpu_attention import assert_within, reference64
from tests.support.attention_cases import CASES, F32, case_id, edge_batch, make_batch
from tests.support.cpu_kernels import U32, gamma, kernel_fixture, smollm2_chat_prompts, smollm2_generator

kernel = kernel_fixture(cpu_attention.kernel_available, "runtime/worker/cpu_attention.cc")

THETA = 10000.0
FLOAT_CASES = [c for c in CASES if c[4] == F32]


def step_inputs(case, seed: int):
    """One engine step over an edge batch: (qkv [T, (H + 2 KVH) D] before RoPE, positions [T], pages with the new
    tokens' slots poisoned, metadata, the contiguous context K / V [S, L, KVH, D], the null page, the static
    knobs). Padding rows write to slot 0 of a page no sequence owns (the engine's null page)."""
    ps, H, KVH, D, dtype, window, cap, _ = case
    q_lens, kv_lens = edge_batch(ps, max_kv_len=3 * ps + 2)
    rng = np.random.default_rng(seed)
    b = make_batch(
        rng, q_lens=q_lens, kv_lens=kv_lens, num_q_heads=H, num_kv_heads=KVH, head_dim=D, page_size=ps, dtype=dtype
    )
    cu, lens = np.asarray(b["cu_q_lens"]), np.asarray(b["kv_lens"])
    n = int(np.asarray(b["num_seqs"])[0])
    table = np.asarray(b["page_indices"])
    owned = {int(table[i, j]) for i in range(len(lens)) for j in range(-(-int(lens[i]) // ps))}
    null = min(set(range(b["k_pages"].shape[0])) - owned)
    T = b["q"].shape[0]
    positions, slots = np.zeros(T, np.int32), np.full(T, null * ps, np.int32)
    k_pages, v_pages = np.array(b["k_pages"]), np.array(b["v_pages"])
    for i in range(n):
        for r in range(int(cu[i + 1] - cu[i])):
            t, pos = int(cu[i]) + r, int(lens[i] - (cu[i + 1] - cu[i]) + r)
            positions[t] = pos
            slots[t] = table[i, pos // ps] * ps + pos % ps
            k_pages[table[i, pos // ps], pos % ps] = np.nan  # this step's keys: the call writes them
            v_pages[table[i, pos // ps], pos % ps] = np.nan
    qkv = (rng.standard_normal((T, (H + 2 * KVH) * D)) * 2).astype(np.float32)
    md = AttentionMetadata(
        jnp.asarray(slots), b["kv_lens"], b["page_indices"], b["cu_q_lens"], b["num_seqs"]
    )  # slot_mapping, kv_lens, page_indices, cu_q_lens, num_seqs
    knobs = dict(sm_scale=1.0 / np.sqrt(D), sliding_window=window, soft_cap=cap)
    return qkv, positions, (k_pages, v_pages), md, (b["k"], b["v"]), null, knobs


def rope64(x, cos, sin):
    """x [T, heads, D] rotated exactly (float64) with the float32 cos, sin [T, D / 2], and the bound on a float32
    rotation's error: gamma(2) (|x1 c| + |x2 s|), gamma(2) (|x2 c| + |x1 s|) per element of each half."""
    x = x.astype(np.float64)
    half = x.shape[-1] // 2
    c, s = np.asarray(cos, np.float64)[:, None, :], np.asarray(sin, np.float64)[:, None, :]
    x1, x2 = x[..., :half], x[..., half:]
    y = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
    mag = np.concatenate([np.abs(x1 * c) + np.abs(x2 * s), np.abs(x2 * c) + np.abs(x1 * s)], axis=-1)
    return y, gamma(2) * mag


def layer(qkv, cos, sin, k_pages, v_pages, md, *, num_heads, sm_scale, sliding_window, soft_cap):
    """``Attention``'s XLA ops between the projections, as the model runs them without the call."""
    T, KVH, D = qkv.shape[0], k_pages.shape[2], k_pages.shape[3]
    q, k, v = jnp.split(qkv, [num_heads * D, (num_heads + KVH) * D], axis=-1)
    q, k = apply_rope(q.reshape(T, num_heads, D), cos, sin), apply_rope(k.reshape(T, KVH, D), cos, sin)
    k_pages, v_pages = write_kv(k_pages, v_pages, k, v.reshape(T, KVH, D), md.slot_mapping)
    out = ragged_paged_attention_cpu(
        q,
        k_pages,
        v_pages,
        md.kv_lens,
        md.page_indices,
        md.cu_q_lens,
        md.num_seqs,
        sm_scale=sm_scale,
        sliding_window=sliding_window,
        soft_cap=soft_cap,
    )
    return out, (k_pages, v_pages)


@pytest.mark.parametrize("case", FLOAT_CASES, ids=case_id)
def test_rope_write_attention_against_the_layer_math(case):
    ps, H, KVH, D = case[:4]
    qkv, positions, pages, md, (k_ctx, v_ctx), null, knobs = step_inputs(case, seed=ps * 31 + H + D)
    cos, sin = rope_cos_sin(jnp.asarray(positions), D, THETA)
    args = (jnp.asarray(qkv), cos, sin, *map(jnp.asarray, pages), md)
    fused = jax.jit(lambda *a: rope_write_attention_cpu(*a, num_heads=H, **knobs))(*args)
    unfused = jax.jit(lambda *a: layer(*a, num_heads=H, **knobs))(*args)

    T = qkv.shape[0]
    q_raw = qkv[:, : H * D].reshape(T, H, D)
    k_raw, v_raw = qkv[:, H * D : (H + KVH) * D].reshape(T, KVH, D), qkv[:, (H + KVH) * D :].reshape(T, KVH, D)
    q64, q_bound = rope64(q_raw, cos, sin)
    k64, k_bound = rope64(k_raw, cos, sin)
    slots = np.asarray(md.slot_mapping)
    n_rows = int(np.asarray(md.cu_q_lens)[int(np.asarray(md.num_seqs)[0])])
    for out, (k_pages, v_pages) in (fused, unfused):
        k_pages, v_pages = np.asarray(k_pages), np.asarray(v_pages)
        for t in range(n_rows):  # this step's rows: k rotated, v as it was
            page, at = divmod(int(slots[t]), ps)
            assert np.all(np.abs(k_pages[page, at] - k64[t]) <= k_bound[t]), f"k of row {t}"
            np.testing.assert_array_equal(v_pages[page, at], v_raw[t])
        # every other slot as it was (NaN poison included), the null page's slot 0 aside (padding rows)
        untouched = np.ones(k_pages.shape[:2], bool)
        untouched[slots[:n_rows] // ps, slots[:n_rows] % ps] = False
        untouched[null, 0] = False
        np.testing.assert_array_equal(k_pages[untouched], pages[0][untouched])
        np.testing.assert_array_equal(v_pages[untouched], pages[1][untouched])

        # attention over the context and the keys as written, q rotated exactly (then rounded to float32)
        k_all, v_all = np.array(k_ctx, np.float32), np.array(v_ctx, np.float32)
        cu, lens = np.asarray(md.cu_q_lens), np.asarray(md.kv_lens)
        for i in range(int(np.asarray(md.num_seqs)[0])):
            for r in range(int(cu[i + 1] - cu[i])):
                t, pos = int(cu[i]) + r, int(lens[i] - (cu[i + 1] - cu[i]) + r)
                page, at = divmod(int(slots[t]), ps)
                k_all[i, pos], v_all[i, pos] = k_pages[page, at], v_pages[page, at]
        q32 = q64.astype(np.float32)
        batch = dict(q=q32, k=k_all, v=v_all, kv_lens=md.kv_lens, cu_q_lens=md.cu_q_lens, num_seqs=md.num_seqs)
        ref, bound = reference64(batch, q_error=q_bound + U32 * np.abs(q64), **knobs)
        assert_within(out, ref, bound, F32)


def test_the_pages_are_written_in_place():
    """Donated into a jitted step, the pages come back in the same buffers (``input_output_aliases``): no copy of
    the cache a layer."""
    case = FLOAT_CASES[0]
    H, D = case[1], case[3]
    qkv, positions, pages, md, _, _, knobs = step_inputs(case, seed=5)
    cos, sin = rope_cos_sin(jnp.asarray(positions), D, THETA)
    k_pages, v_pages = map(jnp.asarray, pages)
    before = (k_pages.unsafe_buffer_pointer(), v_pages.unsafe_buffer_pointer())
    step = jax.jit(
        lambda k, v, *a: rope_write_attention_cpu(*a[:3], k, v, a[3], num_heads=H, **knobs)[1], donate_argnums=(0, 1)
    )
    k_after, v_after = step(k_pages, v_pages, jnp.asarray(qkv), cos, sin, md)
    assert (k_after.unsafe_buffer_pointer(), v_after.unsafe_buffer_pointer()) == before


def test_declines_what_it_does_not_take():
    """None, and the model runs its layers: an 8-bit cache (quantized on write), bfloat16 pages or activations,
    q/k/v of the wrong width."""
    case = FLOAT_CASES[0]
    H, D = case[1], case[3]
    qkv, positions, pages, md, _, _, knobs = step_inputs(case, seed=6)
    cos, sin = rope_cos_sin(jnp.asarray(positions), D, THETA)
    k, v, x = jnp.asarray(pages[0]), jnp.asarray(pages[1]), jnp.asarray(qkv)

    def call(x, k, v, heads=H):
        return rope_write_attention_cpu(x, cos, sin, k, v, md, num_heads=heads, **knobs)

    codes = QuantizedPages(k.astype(jnp.int8), jnp.ones(k.shape[:3], jnp.float32))
    assert call(x, codes, codes) is None
    assert call(x, k.astype(jnp.bfloat16), v.astype(jnp.bfloat16)) is None
    assert call(x.astype(jnp.bfloat16), k, v) is None
    assert call(x, k, v, heads=H + 1) is None
    assert call(x, k, v) is not None


def with_and_without(monkeypatch, make_gen, prompts, max_tokens: int):
    """[(calls traced, logits per prompt, greedy tokens per prompt)] from the engine with RoPE, the KV write and
    attention in one call, then with ``rope_write_attention_cpu`` declining every call (the model's XLA ops)."""
    from runtime.api import SamplingParams

    real = cpu_attention.rope_write_attention_cpu
    results = []
    for fused in (True, False):
        calls: list[int] = []

        def maybe(*a, calls=calls, fused=fused, **k):
            calls.append(1)
            return real(*a, **k) if fused else None

        monkeypatch.setattr(cpu_attention, "rope_write_attention_cpu", maybe)
        gen = make_gen()
        ids = prompts(gen)
        logits = [np.asarray(gen.prompt_logits(p)) for p in ids]
        sp = SamplingParams(max_tokens=max_tokens, temperature=0.0)
        results.append((len(calls), logits, [gen.generate(p, sp)[1].token_ids for p in ids]))
    return results


@pytest.mark.parametrize("family,weight_quant", [("llama", "int8"), ("llama", "none"), ("gemma3", "int8")])
def test_tiny_models_answer_alike_with_the_call(monkeypatch, tmp_path, family, weight_quant):
    """The same greedy tokens, and logits within a few float32 roundings a layer of the XLA ops' (prompts of 5
    and 40 tokens: decode steps and a prefill longer than the kernels' 16 rows); Gemma 3 keeps its layers."""
    from runtime.engine.offline import Generator
    from tests.support.tiny_gguf import write_tiny_llama

    if family == "llama":
        tiny = write_tiny_llama(tmp_path)
    else:
        from tests.runtime.models.test_gemma3_tiny import write_tiny_gemma3

        tiny = write_tiny_gemma3(tmp_path)
    rng = np.random.default_rng(0)
    ids = [rng.integers(0, tiny.vocab_size, n).tolist() for n in (5, 40)]

    def make_gen():
        return Generator(
            gguf_path=str(tiny.path), dtype="float32", weight_quant=weight_quant, page_size=16, attention_backend="cpu"
        )

    (n_fused, fused_logits, fused_tokens), (_, logits, tokens) = with_and_without(
        monkeypatch, make_gen, lambda g: ids, 8
    )
    assert (n_fused > 0) == (family == "llama")  # traced once per layer of each compiled step
    for ours, theirs in zip(fused_logits, logits):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())
    assert fused_tokens == tokens


@pytest.mark.slow
@pytest.mark.parametrize("weight_quant", ["int8", "gguf"])
def test_smollm2_greedy_tokens_with_the_call(monkeypatch, weight_quant):
    (n_fused, _, fused_tokens), (_, _, tokens) = with_and_without(
        monkeypatch, lambda: smollm2_generator(weight_quant), smollm2_chat_prompts, 32
    )
    assert n_fused > 0
    assert fused_tokens == tokens
