"""Linear layers that read the same x as one matrix (``runtime.quant.weights.fuse_linears``, read by
``runtime.models.common.linears``): a layer's q, k, v and gate, up, stacked along the output axis at load.

The mechanism: every row of a stacked matrix holds all its output needs (its codes and scales, its GGUF
blocks, its float32 weights), and the CPU kernels compute each output column as its own dot product over
the same x in the same order whatever the matrix's height. So the stacked matrix's output equals the
parts' outputs side by side **exactly** for the rows the kernel takes (``max_kernel_rows``); above that
(prefill chunks: XLA's dot on the dequantized rows, blocked by the matrix's height) the stacked matrix runs
part by part, so exactly there too. Then whole models: the tiny Llama and Gemma 3 (Q/K norms, sandwich
norms) and real SmolLM2 give the same logits and greedy tokens fused and not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.quant import cpu as quant_cpu
from runtime.quant.gguf_blocks import GGUFMatrix
from runtime.quant.weights import DenseMatrix, QuantizedMatrix, concat_rows, fuse_linears
from tests.runtime.quant.test_gguf_blocks import make_blocks
from tests.support.cpu_kernels import kernel_fixture

FORMATS = ["int8", "int4", "q8_0", "q4_1", "dense"]
HEIGHTS = (72, 24, 24)  # q, k, v of a 3:1 grouped-query layer; not multiples of the kernel's 32-row tiles


def make(fmt: str, rows: int, seed: int):
    """A host matrix [rows, K] of the format; K = 96 for the GGUF blocks (whole blocks), else 100 (int8's float
    tail past the last block of 32, int4's zero-padded last group)."""
    rng = np.random.default_rng(seed)
    if fmt in ("q8_0", "q4_1"):
        return GGUFMatrix(make_blocks(fmt, rows, 96, seed), fmt, 96)
    w = (rng.standard_normal((rows, 100)) * 0.1).astype(np.float32)
    return DenseMatrix(w) if fmt == "dense" else QuantizedMatrix.from_float(w, fmt, 64)


def matvec(x, m):
    return np.asarray(jax.jit(lambda x, m: m.matvec(x))(x, jax.tree.map(jnp.asarray, m)))


kernel = kernel_fixture(quant_cpu.kernel_available, "runtime/quant/quant_matmul.cc", autouse=False)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "M", [1, 2, 3, 4, 5, 8, 16, 40, quant_cpu.MAX_QUANTIZED_KERNEL_ROWS]
)  # 40, 64: int4's, the blocks' (float32 x)
def test_stacked_rows_give_the_parts_outputs_exactly(kernel, fmt, M):
    parts = [make(fmt, n, seed) for seed, n in enumerate(HEIGHTS)]
    fused = concat_rows(parts)
    assert fused.shape == (sum(HEIGHTS), parts[0].shape[1])
    x = jnp.asarray(np.random.default_rng(M).standard_normal((M, parts[0].shape[1])), jnp.float32)
    np.testing.assert_array_equal(matvec(x, fused), np.concatenate([matvec(x, p) for p in parts], axis=1))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("above", [1, 24, 64])
def test_stacked_rows_above_the_kernels_rows(kernel, fmt, above):
    """More rows of x than the kernel takes: XLA's dot on the dequantized rows, whose summation order may
    depend on the matrix's height, so a stacked matrix runs part by part there (``weights.by_parts``) and
    gives the parts' outputs exactly too. (Summed whole, the two differed by float32 rounding, and with the
    kernels' int8 activations that flipped a SmolLM2 greedy token on AVX2 machines.)"""
    parts = [make(fmt, n, seed) for seed, n in enumerate(HEIGHTS)]
    fused = concat_rows(parts)
    assert fused.parts == HEIGHTS and all(not p.parts for p in fused.split_rows())
    M = quant_cpu.max_kernel_rows(quant_cpu.kernel_operands(fused)[0]) + above  # the format's own limit
    x = jnp.asarray(np.random.default_rng(M).standard_normal((M, parts[0].shape[1])), jnp.float32)
    np.testing.assert_array_equal(matvec(x, fused), np.concatenate([matvec(x, p) for p in parts], axis=1))


def test_stacking_refuses_what_is_not_one_layout():
    q8, q4 = make("int8", 8, 0), make("int4", 8, 1)
    assert concat_rows([q8, q4]) is None  # int8 and int4 codes
    assert concat_rows([q8, QuantizedMatrix.from_float(np.ones((8, 64), np.float32), "int8")]) is None  # K
    assert concat_rows([q4, QuantizedMatrix.from_float(np.ones((8, 100), np.float32), "int4", 32)]) is None  # G
    assert concat_rows([make("q8_0", 8, 0), make("q4_1", 8, 1)]) is None  # a file's mixed block types
    assert concat_rows([make("q8_0", 8, 0), np.ones((96, 8), np.float32)]) is None  # a dequantized tensor
    assert concat_rows([np.ones((4, 8), np.float32)] * 2) is None  # float kernels: XLA's dot, left alone


def test_fuse_linears_rewrites_only_stackable_groups():
    def layer(fmt_k: str):
        attn = {
            n: {"kernel": make("int8" if n != "k" else fmt_k, h, i)} for i, (n, h) in enumerate(zip("qkv", HEIGHTS))
        }
        attn["o"] = {"kernel": make("int8", 100, 3)}
        attn["q_norm"] = {"scale": np.ones(8, np.float32)}
        mlp = {n: {"kernel": make("int8", 40, i)} for i, n in enumerate(("gate", "up", "down"))}
        return {"attn_norm": {"scale": np.ones(100, np.float32)}, "attn": attn, "mlp": mlp}

    params = {"embed": make("int8", 50, 9), "layers_0": layer("int8"), "layers_1": layer("int4")}
    out = fuse_linears(params)
    assert set(out["layers_0"]["attn"]) == {"qkv", "o", "q_norm"}
    assert set(out["layers_0"]["mlp"]) == {"gate_up", "down"}
    qkv = out["layers_0"]["attn"]["qkv"]["kernel"]
    parts = [params["layers_0"]["attn"][n]["kernel"] for n in "qkv"]
    np.testing.assert_array_equal(qkv.q, np.concatenate([p.q for p in parts]))
    np.testing.assert_array_equal(qkv.scale, np.concatenate([p.scale for p in parts]))
    assert set(out["layers_1"]["attn"]) == {"q", "k", "v", "o", "q_norm"}  # k is int4: left as it was
    assert set(out["layers_1"]["mlp"]) == {"gate_up", "down"}
    assert out["embed"] is params["embed"]
    assert out["layers_1"]["attn"]["k"]["kernel"] is params["layers_1"]["attn"]["k"]["kernel"]
    assert set(params["layers_0"]["attn"]) == {"q", "k", "v", "o", "q_norm"}  # the input tree is not modified


def generate_both(monkeypatch, make_gen, prompts, max_tokens: int):
    """For the engine with its q/k/v and gate/up fused (what the CPU builder does), then without
    (``fuse_linears`` replaced by the identity): (logits per prompt, greedy tokens per prompt, how many fused
    kernels its layers hold, its layer count). ``prompts(gen)``: the prompts' token ids."""
    from runtime.api import SamplingParams
    from runtime.engine import builder

    # the stacked matrices alone: the one-call kernels that need them (the MLP block; the attention norm with
    # q/k/v) round the norm and the activation their own way and have their own tests (test_fused_mlp.py);
    # so does RoPE + KV write + attention on the stacked q/k/v (test_rope_write_attention.py): its rotation is
    # fma(x1, c, -(x2 s)), while XLA:CPU's apply_rope contracts or not as it vectorizes (jax 0.12 on AVX2:
    # vmulps + vsubps where 4 heads of 16 fill its 8-lane loop, vfmsub231ss in its scalar loops), so a stacked
    # q/k/v would compare the two roundings of RoPE, not the stacked matrices
    monkeypatch.setattr(quant_cpu, "gated_mlp", lambda *a, **k: None)
    monkeypatch.setattr(quant_cpu, "norm_matmul", lambda *a, **k: None)
    from runtime.worker import cpu_attention

    monkeypatch.setattr(cpu_attention, "rope_write_attention_cpu", lambda *a, **k: None)
    results = []
    for fuse in (True, False):
        if not fuse:
            monkeypatch.setattr(builder, "fuse_linears", lambda params: params)
        gen = make_gen()
        layers = [gen.params[f"layers_{i}"] for i in range(gen.config.num_layers)]
        n_fused = sum(name in layer[part] for layer in layers for part, name in (("attn", "qkv"), ("mlp", "gate_up")))
        sp = SamplingParams(max_tokens=max_tokens, temperature=0.0)
        ids = prompts(gen)
        logits = [np.asarray(gen.prompt_logits(p)) for p in ids]
        results.append((logits, [gen.generate(p, sp)[1].token_ids for p in ids], n_fused, len(layers)))
    return results


@pytest.mark.parametrize("family", ["llama", "gemma3"])
@pytest.mark.parametrize("weight_quant", ["int8", "int4", "gguf"])
def test_tiny_models_answer_alike_fused(kernel, monkeypatch, tmp_path, family, weight_quant):
    """Prompts of up to 16 tokens run every matmul through the kernel (the prefill step's rows are padded to
    16): logits bitwise equal. A 40-token prompt's prefill takes XLA's dot: logits within float32 rounding."""
    from runtime.engine.offline import Generator
    from tests.support.tiny_gguf import write_tiny_llama

    if family == "llama":
        tiny = write_tiny_llama(tmp_path)
    else:
        from tests.runtime.models.test_gemma3_tiny import write_tiny_gemma3

        tiny = write_tiny_gemma3(tmp_path)
    rng = np.random.default_rng(0)
    ids = [rng.integers(0, tiny.vocab_size, n).tolist() for n in (5, 12, 40)]

    def make_gen():
        return Generator(gguf_path=str(tiny.path), dtype="float32", weight_quant=weight_quant, page_size=16)

    fused, unfused = generate_both(monkeypatch, make_gen, lambda gen: ids, 8)
    (fused_logits, fused_tokens, n_fused, layers), (logits, tokens, n_unfused, _) = fused, unfused
    assert n_unfused == 0
    if weight_quant != "gguf":  # (the file's block types decide which of its groups stack)
        assert n_fused == 2 * layers  # each layer's qkv and gate_up

    for ours, theirs in zip(fused_logits[:2], logits[:2]):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(fused_logits[2], logits[2], rtol=1e-5, atol=1e-5 * np.abs(logits[2]).max())
    assert fused_tokens == tokens


@pytest.mark.slow
@pytest.mark.parametrize("weight_quant", ["int8", "gguf"])
def test_smollm2_greedy_tokens_unchanged(kernel, monkeypatch, weight_quant):
    from runtime.engine.offline import Generator

    def make_gen():
        return Generator("smollm2-135m", weight_quant=weight_quant, max_model_len=256, attention_backend="cpu")

    def prompts(gen):
        texts = ("What is the capital of France?", "Write a short story about a lighthouse keeper.")
        return [gen.encode_prompt(text, chat=True) for text in texts]

    fused, unfused = generate_both(monkeypatch, make_gen, prompts, 32)
    (fused_logits, fused_tokens, n_fused, layers), (logits, tokens, _, _) = fused, unfused
    assert n_fused == 2 * layers  # SmolLM2's q, k, v (and gate, up) share a format in every layer
    for ours, theirs in zip(fused_logits, logits):  # prefill: XLA's dot, float32 rounding
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5 * np.abs(theirs).max())
    assert fused_tokens == tokens
