"""A layer's gated MLP block in one CPU kernel call (``runtime.quant.cpu.gated_mlp``, ``JaxserveGatedMlp`` in
runtime/quant/quant_matmul.cc) against the block as ``runtime.models.common.DecoderLayer`` defines it:

    y = x + post(down(act(gate(h)) * up(h))),   h = rms_norm(x) * norm,   post = rms_norm(.) * post_norm or nothing

The reference is that math in float64 on the dequantized weights. The bound is derived stage by stage,
elementwise (``error_bound``): float32 sums (Higham's gamma), the activation's few roundings (exp is a
polynomial within 2 ulp), and, where the kernels quantize their inputs to int8 blocks (the AVX2 path,
``kernel_quantizes_activations``), each matmul's activation bound (``activation_error_bound``). The same for
the attention norm with the stacked q/k/v matmul in one call (``norm_matmul``: ``(rms_norm(x) * norm) . W^T``).
Then the tiny models' and SmolLM2's greedy tokens with both calls equal those without them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pallas_kernels.quant_matmul import padded_in_features
from runtime.quant import cpu as quant_cpu
from runtime.quant.gguf_blocks import GGUFMatrix
from runtime.quant.weights import DenseMatrix, QuantizedMatrix, concat_rows
from tests.runtime.quant.test_gguf_blocks import make_blocks
from tests.support.cpu_kernels import U32, gamma, kernel_fixture, smollm2_chat_prompts, smollm2_generator

D, F = 96, 160  # multiples of 32 (GGUF blocks); F not a multiple of int4's group 64 (a padded last group)
EPS = 1e-5
LIPSCHITZ = {"silu": 1.1, "gelu_tanh": 1.13}  # max |act'(g)|: 1.0998 (SiLU), 1.1289 (tanh-GELU)
ACT = {
    "silu": lambda g: g / (1 + np.exp(-g)),
    "gelu_tanh": lambda g: 0.5 * g * (1 + np.tanh(np.sqrt(2 / np.pi) * (g + 0.044715 * g**3))),
}


kernel = kernel_fixture(quant_cpu.kernel_available, "runtime/quant/quant_matmul.cc")


def make(fmt: str, rows: int, K: int, seed: int):
    rng = np.random.default_rng(seed)
    if fmt in ("q8_0", "q4_1"):
        return GGUFMatrix(make_blocks(fmt, rows, K, seed), fmt, K)
    w = (rng.standard_normal((rows, K)) / np.sqrt(K)).astype(np.float32)
    return DenseMatrix(w) if fmt == "dense" else QuantizedMatrix.from_float(w, fmt, 64)


def rms64(x, scale):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS) * scale


def width(m) -> int | None:
    return padded_in_features(m.in_features, 4, m.group) if isinstance(m, QuantizedMatrix) and m.bits == 4 else None


def matmul_bound(a, e_a, w, m):
    """A float32 kernel's x . W^T at x = a (float64, off by at most e_a elementwise) from the exact a . W^T: the
    sum's rounding, the input's error carried through |W|, and the int8 blocks' where the kernel quantizes x."""
    K = a.shape[1]
    bound = gamma(K + 2) * (np.abs(a) @ np.abs(w).T) + e_a @ np.abs(w).T
    if quant_cpu.kernel_quantizes_activations() and not isinstance(m, DenseMatrix):
        # the kernel quantizes its own a (within e_a of this one): its blocks' max |a| is at most ours + e_a's
        bound += quant_cpu.activation_error_bound(np.abs(a) + e_a, w, width(m))
    return bound


def reference_and_bound(x, norm, post, gate_up, down, activation):
    x = x.astype(np.float64)
    wgu = np.asarray(gate_up.dequantize(), np.float64)
    wd = np.asarray(down.dequantize(), np.float64)
    h = rms64(x, norm)
    e_h = gamma(D + 8) * np.abs(h)  # the sum of squares (D terms), the division, the square root, two products
    g = h @ wgu.T
    e_g = matmul_bound(h, e_h, wgu, gate_up)
    gate, up, e_gate, e_up = g[:, :F], g[:, F:], e_g[:, :F], e_g[:, F:]
    act = ACT[activation](gate)
    a = act * up
    # act(gate) off by L e_gate (Lipschitz) plus its own roundings: exp within 2 ulp and a handful of
    # operations (16 u of |act|), and for tanh-GELU 1 - 2 / (exp(2u) + 1) cancels near -1: 4 u of |g| absolute
    e_act = LIPSCHITZ[activation] * e_gate + 16 * U32 * np.abs(act) + 4 * U32 * np.abs(gate)
    e_a = e_act * (np.abs(up) + e_up) + np.abs(act) * e_up + U32 * np.abs(a)
    o = a @ wd.T
    e_o = matmul_bound(a, e_a, wd, down)
    if post is not None:
        # rms_norm(o) * post: scale-invariant in o; o + delta moves it by at most |post| / rms(o) times
        # (|delta_k| + |o_k| ||delta|| / (sqrt(D) rms(o))), plus its own roundings
        r = np.sqrt(np.mean(o * o, axis=-1, keepdims=True) + EPS)
        delta = np.sqrt((e_o**2).sum(-1, keepdims=True))
        o_n = o / r * post
        e_o = np.abs(post) / r * (e_o + np.abs(o) * delta / (np.sqrt(D) * r)) * 1.01 + gamma(D + 8) * np.abs(o_n)
        o = o_n
    y = x + o
    return y, e_o + U32 * np.abs(y)


FORMAT_PAIRS = [
    ("int8", "int8"),
    ("int4", "int4"),
    ("q4_1", "q4_1"),
    ("q4_1", "q8_0"),  # a file's mixed types: Gemma's down is often another type than gate/up
    ("q8_0", "int8"),
    ("dense", "dense"),
]


@pytest.mark.parametrize("gu_fmt,dn_fmt", FORMAT_PAIRS)
@pytest.mark.parametrize("activation,sandwich", [("silu", False), ("gelu_tanh", True)])
@pytest.mark.parametrize("M", [1, 3, 16, 40])  # 40: a prefill chunk (the kernel's for int4 and the blocks only)
def test_gated_mlp_against_the_layer_math(gu_fmt, dn_fmt, activation, sandwich, M):
    rng = np.random.default_rng(M)
    gate_up = concat_rows([make(gu_fmt, F, D, 1), make(gu_fmt, F, D, 2)])
    down = make(dn_fmt, D, F, 3)
    if M > min(quant_cpu.max_kernel_rows(quant_cpu.kernel_operands(m)[0]) for m in (gate_up, down)):
        assert (
            quant_cpu.gated_mlp(jnp.ones((M, D)), jnp.ones(D), None, gate_up, down, activation=activation, eps=EPS)
            is None
        )
        return
    x = (rng.standard_normal((M, D)) * 2).astype(np.float32)
    x[0, :32] *= 30  # one block of large values: a wide dynamic range for the norm and the int8 blocks
    norm = rng.uniform(0.5, 1.5, D).astype(np.float32)
    post = rng.uniform(0.5, 1.5, D).astype(np.float32) if sandwich else None
    dev = jax.tree.map(jnp.asarray, (gate_up, down))
    y = jax.jit(
        lambda x, norm, post, gu, dn: quant_cpu.gated_mlp(x, norm, post, gu, dn, activation=activation, eps=EPS)
    )(jnp.asarray(x), jnp.asarray(norm), None if post is None else jnp.asarray(post), *dev)
    ref, bound = reference_and_bound(x, norm, post, gate_up, down, activation)
    err = np.abs(np.asarray(y, np.float64) - ref)
    assert np.all(err <= bound), (
        f"worst excess {np.max(err - bound)} at {np.unravel_index(np.argmax(err - bound), err.shape)}"
    )


@pytest.mark.parametrize("gu_fmt,dn_fmt", [("int8", "int8"), ("q4_1", "q8_0"), ("dense", "dense")])
@pytest.mark.parametrize("M", [1, 3, 16])
def test_gated_mlp_adds_the_residual_first(gu_fmt, dn_fmt, M):
    """With ``residual`` r (the attention block's output) the call runs on x + r, one float32 add as the layer's
    own ``x + h``: the same bits as the call on that sum, which is the block's math within its bound."""
    rng = np.random.default_rng(M + 7)
    gate_up = concat_rows([make(gu_fmt, F, D, 1), make(gu_fmt, F, D, 2)])
    down = make(dn_fmt, D, F, 3)
    x = (rng.standard_normal((M, D)) * 2).astype(np.float32)
    r = (rng.standard_normal((M, D)) * 3).astype(np.float32)
    norm = rng.uniform(0.5, 1.5, D).astype(np.float32)
    dev = jax.tree.map(jnp.asarray, (gate_up, down))
    call = jax.jit(
        lambda x, r, norm, gu, dn: quant_cpu.gated_mlp(x, norm, None, gu, dn, activation="silu", eps=EPS, residual=r)
    )
    y = np.asarray(call(jnp.asarray(x), jnp.asarray(r), jnp.asarray(norm), *dev))
    summed = x + r  # float32, rounded once
    y_sum = jax.jit(lambda x, norm, gu, dn: quant_cpu.gated_mlp(x, norm, None, gu, dn, activation="silu", eps=EPS))(
        jnp.asarray(summed), jnp.asarray(norm), *dev
    )
    np.testing.assert_array_equal(y, np.asarray(y_sum))
    ref, bound = reference_and_bound(summed, norm, None, gate_up, down, "silu")
    assert np.all(np.abs(y.astype(np.float64) - ref) <= bound)
    assert (
        quant_cpu.gated_mlp(
            jnp.asarray(x), jnp.asarray(norm), None, *dev, activation="silu", eps=EPS, residual=jnp.ones((M + 1, D))
        )
        is None
    )


@pytest.mark.parametrize("fmt", ["int8", "int4", "q8_0", "q4_1", "dense"])
@pytest.mark.parametrize("M", [1, 3, 16, 40])
def test_norm_matmul_against_the_layer_math(fmt, M):
    rng = np.random.default_rng(M)
    m = concat_rows([make(fmt, 64, D, 1), make(fmt, 32, D, 2), make(fmt, 32, D, 3)])  # q, k, v
    if M > quant_cpu.max_kernel_rows(quant_cpu.kernel_operands(m)[0]):  # float32 rows: XLA's layers from 17
        assert quant_cpu.norm_matmul(jnp.ones((M, D)), jnp.ones(D), m, eps=EPS) is None
        return
    x = (rng.standard_normal((M, D)) * 2).astype(np.float32)
    x[0, :32] *= 30
    norm = rng.uniform(0.5, 1.5, D).astype(np.float32)
    y = jax.jit(lambda x, norm, m: quant_cpu.norm_matmul(x, norm, m, eps=EPS))(
        jnp.asarray(x), jnp.asarray(norm), jax.tree.map(jnp.asarray, m)
    )
    h = rms64(x.astype(np.float64), norm)
    w = np.asarray(m.dequantize(), np.float64)
    ref = h @ w.T
    bound = matmul_bound(h, gamma(D + 8) * np.abs(h), w, m)
    err = np.abs(np.asarray(y, np.float64) - ref)
    assert np.all(err <= bound), f"worst excess {np.max(err - bound)}"


def test_gated_mlp_declines_what_it_does_not_take():
    gate_up, down = jax.tree.map(jnp.asarray, (concat_rows([make("int8", F, D, 1)] * 2), make("int8", D, F, 3)))
    norm = jnp.ones(D, jnp.float32)
    call = lambda x, **kw: quant_cpu.gated_mlp(x, norm, None, gate_up, down, **{"activation": "silu", "eps": EPS, **kw})  # noqa: E731
    assert call(jnp.ones((quant_cpu.max_kernel_rows(0) + 1, D), jnp.float32)) is None  # prefill: XLA's layers
    assert call(jnp.ones((1, D), jnp.bfloat16)) is None  # the XLA layers round to the activation dtype between ops
    assert call(jnp.ones((1, D), jnp.float32), activation="relu") is None
    assert (
        quant_cpu.gated_mlp(jnp.ones((1, D)), norm, None, np.ones((D, 2 * F)), down, activation="silu", eps=EPS) is None
    )
    many = quant_cpu.max_kernel_rows(0) + 1
    assert quant_cpu.norm_matmul(jnp.ones((many, D), jnp.float32), norm, down, eps=EPS) is None
    assert quant_cpu.norm_matmul(jnp.ones((1, D), jnp.float32), norm, np.ones((F, D), np.float32), eps=EPS) is None


def model_takes_fused_calls(weight_quant: str) -> bool:
    """Where the model asks for the one-call kernels (``runtime.quant.cpu.fused_calls_keep_the_numbers``): not
    over weights whose kernel quantizes x (the AVX2 path), where the kernel's norm, rounded otherwise than
    XLA's in the last bits, flipped a SmolLM2 greedy token; float32 rows ("none") always."""
    return weight_quant == "none" or not quant_cpu.kernel_quantizes_activations()


def with_and_without(monkeypatch, make_gen, prompts, max_tokens: int):
    """(fewest traced calls of either one-call kernel, logits per prompt, greedy tokens per prompt) from the engine
    with the MLP block and the attention norm + q/k/v each one call, then with ``gated_mlp`` and ``norm_matmul``
    declining every call (the model's XLA layers). ``prompts(gen)``: token ids."""
    from runtime.api import SamplingParams

    real = {"gated_mlp": quant_cpu.gated_mlp, "norm_matmul": quant_cpu.norm_matmul}
    results = []
    for fused in (True, False):
        calls: list[str] = []
        for name, fn in real.items():

            def declining(*a, calls=calls, fused=fused, fn=fn, name=name, **k):
                calls.append(name)
                return fn(*a, **k) if fused else None

            monkeypatch.setattr(quant_cpu, name, declining)
        gen = make_gen()
        ids = prompts(gen)
        logits = [np.asarray(gen.prompt_logits(p)) for p in ids]
        sp = SamplingParams(max_tokens=max_tokens, temperature=0.0)
        n_traced = min(calls.count(name) for name in real)
        results.append((n_traced, logits, [gen.generate(p, sp)[1].token_ids for p in ids]))
    return results


@pytest.mark.parametrize("family,weight_quant", [("llama", "int8"), ("llama", "none"), ("gemma3", "int4")])
def test_tiny_models_answer_alike_with_the_fused_mlp(monkeypatch, tmp_path, family, weight_quant):
    """SiLU (Llama) and tanh-GELU with sandwich norms (Gemma 3): the same greedy tokens, logits within a few
    float32 roundings a layer of the XLA layers' (prompts of up to 16 tokens: every MLP block fused)."""
    from runtime.engine.offline import Generator
    from tests.support.tiny_gguf import write_tiny_llama

    if family == "llama":
        tiny = write_tiny_llama(tmp_path)
    else:
        from tests.runtime.models.test_gemma3_tiny import write_tiny_gemma3

        tiny = write_tiny_gemma3(tmp_path)
    rng = np.random.default_rng(0)
    ids = [rng.integers(0, tiny.vocab_size, n).tolist() for n in (5, 12)]

    def make_gen():
        return Generator(gguf_path=str(tiny.path), dtype="float32", weight_quant=weight_quant, page_size=16)

    (n_fused, fused_logits, fused_tokens), (_, logits, tokens) = with_and_without(
        monkeypatch, make_gen, lambda g: ids, 8
    )
    # traced at least once per layer of each compiled step, where the model takes the one-call kernels
    assert (n_fused > 0) == model_takes_fused_calls(weight_quant)
    for ours, theirs in zip(fused_logits, logits):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4 * np.abs(theirs).max())
    assert fused_tokens == tokens


@pytest.mark.slow
@pytest.mark.parametrize("weight_quant", ["int8", "gguf"])
def test_smollm2_greedy_tokens_with_the_fused_mlp(monkeypatch, weight_quant):
    (n_fused, _, fused_tokens), (_, _, tokens) = with_and_without(
        monkeypatch, lambda: smollm2_generator(weight_quant), smollm2_chat_prompts, 32
    )
    assert (n_fused > 0) == model_takes_fused_calls(weight_quant)
    assert fused_tokens == tokens
