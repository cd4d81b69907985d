"""The CPU attention kernel (runtime/worker/cpu_attention.cc) against a float64 reference and the XLA path.

Every comparison is elementwise against a bound derived from float32 arithmetic (``error_bound``), not
a tolerance read off a run: the batches are the attention tests' (tests/support/attention_cases.py:
permuted, NaN-poisoned pages, edge lengths, mixed prefill chunks and decode rows, padding rows and
sequences). Then the engine's greedy tokens on SmolLM2 are the same with ``xla`` and ``cpu``.
"""

from __future__ import annotations

import logging
import math
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.api import EngineConfig, SamplingParams
from runtime.platform import cpu_info
from runtime.worker import cpu_attention
from runtime.worker.cpu_attention import ragged_paged_attention_cpu
from tests.support.attention_cases import (
    BF16,
    CASES,
    F32,
    QUANT_CASES,
    batch_for,
    case_id,
    decode_and_prefill_batches,
    make_batch,
    padded_batches,
    run_paged,
    run_xla,
)
from tests.support.cpu_kernels import U32, gamma, kernel_fixture

# Half an ulp of the output's dtype, relative: float32 results are compared in float32, bfloat16 ones
# after each implementation rounded its float32 result once more.
OUTPUT_ROUNDING = {np.dtype(jnp.float32): 0.0, np.dtype(jnp.bfloat16): 2.0**-8}


kernel = kernel_fixture(cpu_attention.kernel_available, "runtime/worker/cpu_attention.cc")


def run_cpu(b, **kw):
    return run_paged(ragged_paged_attention_cpu, b, **kw)


def float_keys(b):
    """Contiguous K, V [S, L, KVH, D] as the kernels see them (float32; an 8-bit cache's codes * scales, the
    product rounded to float32, as both kernels dequantize), in float64."""
    if "kq" in b:
        k = np.asarray(b["kq"], np.float32) * np.asarray(b["k_scales"], np.float32)[..., None]
        v = np.asarray(b["vq"], np.float32) * np.asarray(b["v_scales"], np.float32)[..., None]
    else:
        k, v = np.asarray(b["k"], np.float32), np.asarray(b["v"], np.float32)
    return k.astype(np.float64), v.astype(np.float64)


def reference64(b, *, sm_scale, sliding_window=None, soft_cap=None, q_error=None):
    """(out, bound): the exact result (float64) of attention on the float32 inputs, and per element a bound
    on how far a float32 implementation may be from it.

    Derivation, per row and q head, over its L visible keys (block-wise online softmax or not):
      logit s_j = sm_scale * q . k_j: a D-term dot, |error| <= e_s = gamma(D + 2) * sm_scale * max_j sum|q k_j|
      (+2: the scale multiply; soft_cap * tanh(s / cap) is 1-Lipschitz in s, plus a few ulp of |s|);
      weights w_j = exp(s_j - m) / l: relative error <= 2 e_s (the logit and the max) + gamma(L + 8) (exp,
      the running sum of L terms, the rescalings by alpha per block, the division);
      out_d = sum_j w_j v_jd: |error| <= (2 e_s + gamma(L + 8) + gamma(L)) * sum_j w_j |v_jd|.
    ``q_error`` [T, H, D]: how far the q an implementation uses may be from ``b["q"]``, elementwise (a q it
    computed itself, e.g. rotated): the logit moves by at most sm_scale * q_error . |k_j| more, added to e_s.
    """
    q = np.asarray(b["q"], np.float32).astype(np.float64)
    k, v = float_keys(b)
    kv_lens, cu = np.asarray(b["kv_lens"]), np.asarray(b["cu_q_lens"])
    n = int(np.asarray(b["num_seqs"])[0])
    T, H, D = q.shape
    G = H // k.shape[2]
    out, bound = np.zeros((T, H, D)), np.zeros((T, H, D))
    for i in range(n):
        q_len, kv_len = int(cu[i + 1] - cu[i]), int(kv_lens[i])
        for r in range(q_len):
            t, pos = int(cu[i]) + r, kv_len - q_len + r
            lo = 0 if sliding_window is None else max(0, pos - sliding_window + 1)
            keys = np.arange(lo, pos + 1)
            for h in range(H):
                kh, vh = k[i, keys, h // G], v[i, keys, h // G]  # [L, D]
                s = sm_scale * (kh @ q[t, h])
                e_s = gamma(D + 2) * sm_scale * np.max(np.abs(kh) @ np.abs(q[t, h]))
                if q_error is not None:
                    e_s += (1 + gamma(D + 2)) * sm_scale * np.max(np.abs(kh) @ q_error[t, h])
                if soft_cap is not None:
                    s = soft_cap * np.tanh(s / soft_cap)
                    e_s += 4 * U32 * np.max(np.abs(s))
                w = np.exp(s - s.max())
                w /= w.sum()
                out[t, h] = w @ vh
                L = len(keys)
                bound[t, h] = (2 * e_s + gamma(L + 8) + gamma(L)) * (w @ np.abs(vh))
    return out, bound


def assert_within(actual, expected, bound, dtype, factor=1.0):
    """|actual - expected| <= factor * bound + the output dtype's rounding, elementwise."""
    actual = np.asarray(actual, np.float32).astype(np.float64)
    limit = factor * (bound + OUTPUT_ROUNDING[np.dtype(dtype)] * np.abs(expected)) + 1e-30
    err = np.abs(actual - expected)
    worst = np.unravel_index(np.argmax(err / limit), err.shape)
    assert np.all(err <= limit), f"at {worst}: |{actual[worst]} - {expected[worst]}| > {limit[worst]}"


def check(b, dtype, **kw):
    """The kernel against float64 (within the bound) and against the XLA path (within twice it: each is
    within the bound of the exact result)."""
    got = run_cpu(b, **kw)
    assert got.dtype == dtype and got.shape == b["q"].shape
    exact, bound = reference64(b, **kw)
    assert_within(got, exact, bound, dtype)
    assert_within(got, np.asarray(run_xla(b, **kw), np.float32).astype(np.float64), bound, dtype, factor=2.0)


# ---- the reference's bound, by hand


def test_reference64_by_hand():
    # One q head, keys k0 = 0, k1 = ln 3 (head_dim 1), values 4 and 8, q = 1: weights (1/4, 3/4) -> 7.
    b = dict(
        q=jnp.ones((1, 1, 1), F32),
        k=jnp.asarray(np.array([0.0, math.log(3.0)], np.float32).reshape(1, 2, 1, 1)),
        v=jnp.asarray(np.array([4.0, 8.0], np.float32).reshape(1, 2, 1, 1)),
        kv_lens=jnp.asarray([2], jnp.int32),
        cu_q_lens=jnp.asarray([0, 1], jnp.int32),
        num_seqs=jnp.asarray([1], jnp.int32),
    )
    out, bound = reference64(b, sm_scale=1.0)
    np.testing.assert_allclose(out, [[[7.0]]], rtol=1e-6)  # ln 3 is rounded to float32 first
    # e_s = gamma(3) * ln 3; bound = (2 e_s + gamma(10) + gamma(2)) * (1/4 * 4 + 3/4 * 8) = ... * 7
    want = (2 * gamma(3) * math.log(3.0) + gamma(10) + gamma(2)) * 7.0
    np.testing.assert_allclose(bound, [[[want]]], rtol=1e-6)


# ---- the kernel


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_matches_float64_and_the_xla_path(case):
    """Page sizes 4, 8, 16; GQA 1, 3; head_dim 32, 64; float32 and bfloat16 caches; sliding windows and
    soft caps; rows at the page edges (1, page-1, page, page+1, max), an empty sequence, padding."""
    b, kw = batch_for(case, seed=11)
    check(b, case[4], **kw)


@pytest.mark.parametrize("case,kv_dtype", QUANT_CASES, ids=[f"{case_id(c)}-{kv}" for c, kv in QUANT_CASES])
def test_quantized_cache_matches_float64_and_the_xla_path(case, kv_dtype):
    """int8 and float8_e4m3fn codes with bfloat16 per-token, per-head scales: each key dequantized as read."""
    b, kw = batch_for(case, seed=12, kv_dtype=kv_dtype)
    check(b, case[4], **kw)


def test_decode_rows_then_a_prompt():
    decode, prefill = decode_and_prefill_batches()
    for b in (decode, prefill):
        check(b, F32, sm_scale=0.125)


@pytest.mark.parametrize("kv_dtype", [None, "int8"])
def test_smollm2_shapes_mixed_step(kv_dtype):
    """SmolLM2's heads (9 q on 3 kv, head_dim 64), 16-token pages: a 40-token prefill chunk after 60 tokens of
    context, three decode rows at long contexts, a whole short prompt, padding sequences and rows."""
    shape = dict(num_q_heads=9, num_kv_heads=3, head_dim=64, page_size=16, pad_tokens=5, pad_seqs=3)
    for dtype in (F32, BF16):
        b = make_batch(
            np.random.default_rng(13),
            q_lens=[40, 1, 1, 1, 7],
            kv_lens=[100, 200, 17, 64, 7],
            dtype=dtype,
            kv_dtype=kv_dtype,
            **shape,
        )
        check(b, dtype, sm_scale=0.125)
        check(b, dtype, sm_scale=0.125, sliding_window=33, soft_cap=30.0)


def test_padding_sequences_may_hold_garbage_and_zero_sequences_give_zeros():
    b, garbage, none = padded_batches()
    want = np.asarray(run_cpu(b, sm_scale=0.2))
    check(b, F32, sm_scale=0.2)
    np.testing.assert_array_equal(np.asarray(run_cpu(garbage, sm_scale=0.2)), want)
    assert not np.asarray(run_cpu(none, sm_scale=0.2)).any()
    cu_end = int(np.asarray(b["cu_q_lens"])[int(np.asarray(b["num_seqs"])[0])])
    assert not want[cu_end:].any()  # rows past the last sequence are exactly zero


def test_one_custom_call_and_no_loop():
    """The point of the kernel: one op per layer in the compiled program, no while loop, no gather."""
    b, kw = batch_for(CASES[1], seed=0)
    fn = jax.jit(lambda *a: ragged_paged_attention_cpu(*a, **kw))
    hlo = fn.lower(*(b[n] for n in ("q", "k_pages", "v_pages", "kv_lens", "page_indices", "cu_q_lens", "num_seqs")))
    text = hlo.compile().as_text()
    assert text.count('custom_call_target="jaxserve_ragged_attention"') == 1
    assert " while(" not in text and " gather(" not in text


def test_fallback_without_a_compiler(monkeypatch, tmp_path, caplog):
    """No compiler (and nothing cached): one warning, then the XLA path with its numbers."""
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-g++"))
    monkeypatch.setenv("JAXSERVE_KERNEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(cpu_attention._KERNELS.state, "available", None)
    # A shape no other test traced: ragged_paged_attention_cpu is jitted, a cached trace would keep the kernel.
    shape = dict(num_q_heads=5, num_kv_heads=1, head_dim=24, page_size=4, dtype=F32)
    b = make_batch(np.random.default_rng(14), q_lens=[3, 1], kv_lens=[9, 5], **shape)
    with caplog.at_level(logging.WARNING, logger="runtime.worker"):
        got = run_cpu(b, sm_scale=0.3)
        run_cpu(dict(b, q=b["q"][:-1]), sm_scale=0.3)
    assert cpu_attention._KERNELS.state["available"] is False
    assert len([r for r in caplog.records if "cannot build" in r.getMessage()]) == 1
    np.testing.assert_array_equal(np.asarray(got), np.asarray(run_xla(b, sm_scale=0.3)))


def test_the_kernel_runs_the_requested_instruction_set():
    isa = os.environ.get("JAXSERVE_KERNEL_ISA", "native")
    assert cpu_attention.kernel_isa() == (cpu_info()["isa_path"] if isa == "native" else isa.removesuffix("_float"))


# The instruction-set paths below this CPU's own (JAXSERVE_KERNEL_ISA, as the matmul kernels' tests do).
LOWER_ISAS = {"avx512": ["avx2", "portable"], "avx2": ["portable"]}.get(cpu_info()["isa_path"], [])


@pytest.mark.slow
@pytest.mark.parametrize("isa", LOWER_ISAS or [pytest.param(None, marks=pytest.mark.skip(reason="one path here"))])
def test_kernel_cases_on_another_instruction_set(isa):
    """The kernel built for an older CPU (what an AVX2-only or ARM machine compiles) passes the same cases."""
    root = Path(__file__).resolve().parents[3]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-m", "not slow", __file__],
        cwd=root,
        env=dict(os.environ, JAXSERVE_KERNEL_ISA=isa),
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert run.returncode == 0 and " passed" in run.stdout, run.stdout[-4000:] + run.stderr[-2000:]


# ---- the engine: the same greedy tokens with either backend

PROMPTS = [
    "The capital of France is",
    "def is_prime(n):",
    "Once upon a time in a small village by the sea,",
    "List of planets: Mercury, Venus,",
    "A recipe for bread: first,",
]


@pytest.mark.slow
@pytest.mark.parametrize("kv_dtype", [None, "int8"])
def test_engine_greedy_tokens_match_the_xla_path(kv_dtype):
    """SmolLM2 (float32, and an int8 KV cache), five prompts at once with a 32-token budget (chunked
    prefill mixed with decode rows), 16 greedy tokens each: token-identical between ``xla`` and ``cpu``."""
    from runtime.engine.llm_engine import LLMEngine
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    loaded = load_gguf(resolve_gguf("smollm2-135m"))
    params = [SamplingParams(max_tokens=16, ignore_eos=True) for _ in PROMPTS]
    tokens = {}
    for backend in ("xla", "cpu"):
        cfg = EngineConfig(
            max_num_seqs=8,
            max_num_batched_tokens=32,
            max_model_len=256,
            num_blocks=16,  # real_engine's (xla) and test_sampling_params' (cpu) shapes: their compiled programs
            attention_backend=backend,
            kv_dtype=kv_dtype,
        )
        eng = LLMEngine(cfg, loaded=loaded)
        assert eng.attention_backend == backend
        tokens[backend] = [o.token_ids for o in eng.generate(PROMPTS, params)]
        del eng
    assert all(len(t) == 16 for t in tokens["cpu"])
    assert tokens["cpu"] == tokens["xla"]
