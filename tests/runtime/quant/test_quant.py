"""Weight-only quantization: hand-worked cases pin quantize/dequantize and the reference matmul; then
the CPU FFI kernel, the Pallas GPU kernel (interpret mode) and the Pallas TPU kernel (TPU interpret
mode) are compared with the reference elementwise, and the TPU kernel lowers for TPU v5e and v6e
(abstract mesh, no TPU needed); then the per-platform dispatch, the parameter transform, the engine on
the tiny model, config validation and the build fallback. (The GPU kernel's cuda lowering is in
tests/pallas_kernels/test_gpu_lowering.py.)"""

from __future__ import annotations

import functools
import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pallas_kernels.lowering import MOSAIC_TPU_CALL_TARGET, lower_for_tpu
from pallas_kernels.quant_matmul import (
    BlockSizes,
    Dims,
    TpuBlockSizes,
    padded_in_features,
    quant_matmul,
    quant_matmul_reference,
    quant_matmul_tpu,
    tpu_block_sizes,
)
from pallas_kernels.quant_matmul.tpu import FALLBACK, TUNED, fit_blocks
from runtime.quant import cpu as quant_cpu
from runtime.quant.weights import QuantizedMatrix, matmul_for_platform, quantize_params

# One table, keyed by activation dtype: (rtol, atol) for kernel vs reference. Float32 differs only by
# accumulation order (terms here are ~0.05 and sums ~1); bfloat16 by rounding the dequantized weights
# (int4 only: scale * code is not exact in bfloat16) and the output.
TOLERANCES = {np.dtype(jnp.float32): (2e-5, 2e-5), np.dtype(jnp.bfloat16): (2e-2, 2e-2)}
MODES = [("int8", 64), ("int4", 32), ("int4", 64), ("int4", 128)]


def assert_close(actual, expected):
    expected = np.asarray(expected)
    rtol, atol = TOLERANCES[expected.dtype]
    assert np.asarray(actual).dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(actual, np.float32), expected.astype(np.float32), rtol=rtol, atol=atol)


def random_case(mode, group, M, K, N, seed=0, dtype=jnp.float32):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((N, K)) * 0.05).astype(np.float32)
    w[0, 0] = 0.9  # an outlier: its row (int8) or group (int4) gets a coarse scale
    qm = jax.tree.map(jnp.asarray, QuantizedMatrix.from_float(w, mode, group))
    x = jnp.asarray(rng.standard_normal((M, K)), dtype)
    return x, qm


def apply(matmul, x, qm, **kw):
    """``matmul`` (a kernel or the reference) of ``x`` by the matrix's codes and scales, with its bits, group and
    width unless ``kw`` overrides them."""
    return matmul(x, qm.q, qm.scale, **{"bits": qm.bits, "group": qm.group, "in_features": qm.in_features, **kw})


def reference(x, qm):
    return apply(quant_matmul_reference, x, qm)


# ---------------------------------------------------------------- quantize / dequantize / reference


def test_int8_by_hand():
    """Row 0: max |w| = 127 -> scale 1, codes round(w) = [127, -64 (-63.5 rounds to even), 2];
    row 1 is zero -> scale 1 (any scale works), codes 0. x = [1, 1, 2] -> y = [127 - 64 + 4, 0] = [67, 0]."""
    qm = QuantizedMatrix.from_float(np.array([[127.0, -63.5, 2.25], [0.0, 0.0, 0.0]], np.float32), "int8")
    np.testing.assert_array_equal(qm.q, [[127, -64, 2], [0, 0, 0]])
    np.testing.assert_array_equal(qm.scale, [1.0, 1.0])
    np.testing.assert_array_equal(qm.dequantize(), [[127, -64, 2], [0, 0, 0]])
    y = reference(jnp.array([[1.0, 1.0, 2.0]]), qm)
    np.testing.assert_array_equal(y, [[67.0, 0.0]])


def test_int4_by_hand():
    """K = 3 padded to one group of 32. max |w| = 3.5 -> scale 3.5 / 7 = 0.5; w / scale = [7, -3.5, 1]
    -> codes [7, -4 (to even), 1], stored + 8 = [15, 4, 9]; padding stores 8 (= 0.0). Byte j holds
    column j (low nibble) and column 16 + j (high nibble, padding here): [0x8F, 0x84, 0x89, 0x88 ...].
    Dequantized [3.5, -2, 0.5]; x = [1, 2, 3] -> 3.5 - 4 + 1.5 = 1."""
    qm = QuantizedMatrix.from_float(np.array([[3.5, -1.75, 0.5]], np.float32), "int4", group=32)
    assert qm.q.shape == (1, 16) and qm.scale.shape == (1, 1)
    np.testing.assert_array_equal(qm.q[0], [0x8F, 0x84, 0x89] + [0x88] * 13)
    np.testing.assert_array_equal(qm.scale, [[0.5]])
    np.testing.assert_array_equal(qm.dequantize(), [[3.5, -2.0, 0.5]])
    np.testing.assert_array_equal(reference(jnp.array([[1.0, 2.0, 3.0]]), qm), [[1.0]])


@pytest.mark.parametrize("mode,group", MODES)
@pytest.mark.parametrize("K", [45, 200])
def test_round_trip_within_documented_bound(mode, group, K):
    """|W - dequantize(W)| <= scale / 2 elementwise (max|row| / 254 int8, max|group| / 14 int4)."""
    rng = np.random.default_rng(K)
    w = (rng.standard_normal((37, K)) * rng.uniform(0.01, 3, (37, 1))).astype(np.float32)
    w[3, 7] = 50.0  # outlier
    qm = QuantizedMatrix.from_float(w, mode, group)
    err = np.abs(np.asarray(qm.dequantize()) - w)
    if mode == "int8":
        bound = np.abs(w).max(axis=1, keepdims=True) / 254
    else:
        kp = qm.scale.shape[1] * group
        g = np.pad(np.abs(w), ((0, 0), (0, kp - K))).reshape(37, -1, group).max(axis=2) / 14  # (rows, groups)
        bound = np.repeat(g, group, axis=1)[:, :K]
    assert np.all(err <= bound * (1 + 1e-5) + 1e-12)


def test_take_rows_and_matvec_shapes():
    x, qm = random_case("int4", 32, 1, 40, 24)
    rows = qm.take_rows(jnp.array([[3, 0], [23, 3]]))
    assert rows.shape == (2, 2, 40)
    np.testing.assert_array_equal(rows[0, 0], qm.dequantize()[3])
    y = qm.matvec(jnp.ones((2, 3, 40)))
    assert y.shape == (2, 3, 24)


# ---------------------------------------------------------------- CPU FFI kernel


@pytest.fixture(scope="module")
def cpu_kernel():
    if jax.default_backend() != "cpu":
        pytest.skip("the FFI kernel is the CPU path")
    assert quant_cpu.kernel_available(), "g++ could not build runtime/quant/quant_matmul.cc (see the warning)"


def cpu_matmul(x, qm):
    return apply(jax.jit(quant_cpu.matmul, static_argnames=("bits", "group", "in_features")), x, qm)


@pytest.mark.parametrize("mode,group", MODES)
# 1-4: widening in registers (a register tile for each M); 6 and 16: 4-row blocks and a tail (float32
# x, each tile widened again per block; int8 x: its own tiles); 40: a prefill chunk (int4's kernel where x stays float32, else XLA's)
@pytest.mark.parametrize("M", [1, 2, 3, 4, 6, 16, 40])
# K = 112: an odd count of x's 32-column blocks (the AVX-512 VNNI kernels take blocks in pairs), a 16-column tail
@pytest.mark.parametrize("K,N", [(77, 45), (112, 37), (200, 130), (576, 257)])
def test_cpu_kernel_matches_reference(cpu_kernel, mode, group, M, K, N):
    """Against the reference on x as the kernel sees it (its int8 blocks on the AVX2 and AVX-512 VNNI
    paths, where the products are exact integers and only the float32 accumulation differs), and against x itself
    within the activations' rounding: each column is off by at most half its block's step."""
    x, qm = random_case(mode, group, M, K, N, seed=M * K)
    width = padded_in_features(K, qm.bits, group)
    y = cpu_matmul(x, qm)
    assert_close(y, reference(jnp.asarray(quant_cpu.kernel_activations(x, width)), qm))
    w = np.asarray(qm.dequantize(), np.float64)[:, :K]
    exact = np.asarray(x, np.float64) @ w.T
    bound = quant_cpu.activation_error_bound(np.asarray(x), w, width) if quant_cpu.kernel_quantizes_activations() else 0
    rtol, atol = TOLERANCES[np.dtype(jnp.float32)]
    assert np.all(np.abs(np.asarray(y, np.float64) - exact) <= bound + atol + rtol * np.abs(exact))


@pytest.mark.parametrize("mode,group", [("int8", 64), ("int4", 64)])
@pytest.mark.parametrize("M", [1, 6])
def test_cpu_kernel_bfloat16_activations_and_helper_threads(cpu_kernel, monkeypatch, mode, group, M):
    monkeypatch.setattr(quant_cpu, "THREADS", 2)  # > 256 KiB of codes: the rows are split with a helper
    x, qm = random_case(mode, group, M, 1536, 600, dtype=jnp.bfloat16)
    seen = jnp.asarray(quant_cpu.kernel_activations(np.asarray(x, np.float32), 1536), jnp.bfloat16)
    assert_close(cpu_matmul(x, qm), reference(seen, qm))


def test_activation_quantization_by_hand():
    """One block of 32: max |x| = 12.7 -> d = 0.1, x / d rounds half to even (0.25 / 0.1 = 2.5 -> 2,
    0.35 / 0.1 = 3.5 -> 4 in float32); the 33rd column (past the last whole block) stays as it is."""
    x = np.zeros((1, 33), np.float32)
    x[0, :4] = [12.7, -6.35, 0.25, 0.35]
    x[0, 32] = 0.123
    got = quant_cpu.quantize_activations(x)
    d = np.float32(12.7) / np.float32(127)
    np.testing.assert_allclose(got[0, :4], np.array([127, -64, 2, 4], np.float32) * d, rtol=1e-6)
    assert got[0, 32] == np.float32(0.123) and not got[0, 4:32].any()
    assert quant_cpu.activation_error_bound(x, np.ones((1, 33)))[0, 0] == pytest.approx(32 * 12.7 / 127 / 2)


def test_cpu_many_rows_take_the_xla_path(cpu_kernel):
    x, qm = random_case("int8", 64, quant_cpu.max_kernel_rows(0) + 1, 64, 48)
    assert "custom_call" not in jax.jit(lambda x: cpu_matmul(x, qm)).lower(x).as_text()
    assert_close(cpu_matmul(x, qm), reference(x, qm))


def test_build_fallback_without_compiler(monkeypatch, tmp_path, caplog):
    """No compiler (and nothing cached): one warning, then the XLA path with the same numbers."""
    monkeypatch.setenv("CXX", str(tmp_path / "no-such-g++"))
    monkeypatch.setenv("JAXSERVE_KERNEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(quant_cpu._STATE, "available", None)
    x, qm = random_case("int8", 64, 1, 77, 45)
    with caplog.at_level(logging.WARNING, logger="runtime.quant"):
        y = apply(quant_cpu.matmul, x, qm)
        apply(quant_cpu.matmul, x, qm)
    assert quant_cpu._STATE["available"] is False
    assert len([r for r in caplog.records if "cannot build" in r.getMessage()]) == 1
    assert_close(y, reference(x, qm))


# ---------------------------------------------------------------- Pallas kernel (interpret mode)


@pytest.mark.parametrize("mode,group", MODES)
@pytest.mark.parametrize("M,K,N", [(1, 77, 45), (5, 200, 130), (20, 64, 16)])
def test_pallas_kernel_matches_reference(mode, group, M, K, N):
    x, qm = random_case(mode, group, M, K, N, seed=N)
    y = apply(quant_matmul, x, qm, block_sizes=BlockSizes(block_m=16, block_n=32, block_k=64), interpret=True)
    assert_close(y, reference(x, qm))


def test_pallas_kernel_bfloat16():
    x, qm = random_case("int4", 32, 3, 96, 40, dtype=jnp.bfloat16)
    y = apply(quant_matmul, x, qm, interpret=True)
    assert_close(y, reference(x, qm))


def test_validation_names_the_bad_input():
    x, qm = random_case("int4", 32, 1, 40, 8)
    with pytest.raises(ValueError, match="x must be"):
        apply(quant_matmul, x[:, :39], qm, interpret=True)
    with pytest.raises(ValueError, match="power of two"):
        apply(quant_matmul_reference, x, qm, group=48)
    with pytest.raises(ValueError, match="compiled kernel needs block_m"):
        apply(quant_matmul, x, qm, block_sizes=BlockSizes(block_m=8))
    with pytest.raises(ValueError, match="int8 q must be int8"):
        quant_matmul_reference(x, qm.q, qm.scale[:, 0], bits=8, group=0, in_features=40)


# ---------------------------------------------------------------- Pallas TPU kernel (TPU interpret mode)

TPU_SMALL = TpuBlockSizes(block_m=16, block_n=128, block_k=256)  # several blocks of each axis at test sizes


@pytest.mark.parametrize("mode,group", MODES)
@pytest.mark.parametrize(
    "M,K,N,block_sizes",
    [
        (1, 77, 45, None),  # decode row; K < one int4 group of 128 (padded to Kp in storage)
        (5, 200, 130, None),  # odd M; K not a multiple of 32 / 64 / 128
        (32, 2048, 256, TPU_SMALL),  # 2 x 2 x (8, 8, 4, 2) blocks that divide the dims: no padding
        (37, 1100, 600, TPU_SMALL),  # nothing divides: M 37 -> 48, N 600 -> 640, K 1100 -> 1280 / 1536 (G 128: 1152)
    ],
    ids=["decode", "odd", "blocks", "padded-blocks"],
)
def test_tpu_kernel_matches_reference(mode, group, M, K, N, block_sizes):
    x, qm = random_case(mode, group, M, K, N, seed=M + K)
    y = apply(quant_matmul_tpu, x, qm, block_sizes=block_sizes, interpret=True)
    assert_close(y, reference(x, qm))


@pytest.mark.parametrize("mode,group", [("int8", 64), ("int4", 64)])
def test_tpu_kernel_bfloat16(mode, group):
    x, qm = random_case(mode, group, 19, 300, 136, dtype=jnp.bfloat16)
    y = apply(quant_matmul_tpu, x, qm, block_sizes=TPU_SMALL, interpret=True)
    assert_close(y, reference(x, qm))


def test_tpu_kernel_validates_like_the_reference():
    x, qm = random_case("int4", 32, 1, 40, 8)
    with pytest.raises(ValueError, match="x must be"):
        apply(quant_matmul_tpu, x[:, :39], qm, interpret=True)
    with pytest.raises(ValueError, match="power of two"):
        apply(quant_matmul_tpu, x, qm, group=48, interpret=True)
    with pytest.raises(ValueError, match="block_n must be an int >= 1"):
        TpuBlockSizes(block_n=0)


def test_tpu_block_table_by_device_kind():
    assert tpu_block_sizes("TPU v6 lite") is TUNED["v6e"]
    assert tpu_block_sizes("TPU v5 lite") is TUNED["v5e"]
    assert tpu_block_sizes("TPU v5p") is TUNED["v5p"] and tpu_block_sizes("TPU v4") is TUNED["v4"]
    assert tpu_block_sizes("cpu") is FALLBACK and tpu_block_sizes("") is FALLBACK


def test_fit_blocks_by_hand():
    """Bounds (256, 256, 1024), bfloat16 x (16-row tiles).

    M 300: no multiple of 16 up to 256 divides it -> 2 blocks of ceil(150 / 16) * 16 = 160, 320 rows.
    N 576 (SmolLM2's hidden): 128 and 256 do not divide it, 576 <= 4 * 256 -> one block of 576.
    K 1536 int8: 1024 does not divide it, 768 is the largest multiple of 128 <= 1024 that does.
    int4 G = 64, K 1536 -> 768 bytes of codes; blocks must be multiples of lcm(128, 4 * 64) = 256
    bytes: 512 does not divide 768, 256 does -> 256 bytes = 512 columns.
    """
    bounds = TpuBlockSizes(block_m=256, block_n=256, block_k=1024)
    int8 = fit_blocks(Dims(m=300, n=576, k=1536, k_padded=1536, num_groups=1), 8, 0, jnp.bfloat16, bounds)
    assert int8 == ((160, 576, 768), (320, 576, 1536))
    int4 = fit_blocks(Dims(m=1, n=4096, k=1536, k_padded=1536, num_groups=24), 4, 64, jnp.bfloat16, bounds)
    assert int4 == ((1, 256, 512), (1, 4096, 1536))


# (M, K, N): a 2,048-token prefill step of a Llama-3-8B-sized projection, and SmolLM2-135M's decode
# (batch 1) and 7-row shapes, whose 576 and 192 are not multiples of 128.
TPU_LOWERING_SHAPES = [(2048, 4096, 4096), (1, 576, 1536), (7, 1536, 576), (16, 576, 192)]


@pytest.mark.parametrize("device_kind", ["TPU v5 lite", "TPU v6 lite"])
@pytest.mark.parametrize("mode,group", MODES)
@pytest.mark.parametrize("M,K,N", TPU_LOWERING_SHAPES, ids=[f"{m}x{k}x{n}" for m, k, n in TPU_LOWERING_SHAPES])
def test_tpu_kernel_lowers_for_tpu(device_kind, mode, group, M, K, N):
    """Pallas' Mosaic lowering and block checks, as on that chip; libtpu's compile is not run here."""
    S = jax.ShapeDtypeStruct
    kp = K if mode == "int8" else -(-K // group) * group
    q = S((N, K), jnp.int8) if mode == "int8" else S((N, kp // 2), jnp.uint8)
    scale = S((N,), jnp.float32) if mode == "int8" else S((N, kp // group), jnp.float32)
    bits = 8 if mode == "int8" else 4
    fn = functools.partial(quant_matmul_tpu, bits=bits, group=group if bits == 4 else 0, in_features=K)
    text = lower_for_tpu(fn, S((M, K), jnp.bfloat16), q, scale, device_kind=device_kind)
    assert MOSAIC_TPU_CALL_TARGET in text


# ---------------------------------------------------------------- per-platform dispatch


def test_matmul_dispatch_by_platform():
    from runtime.quant.weights import _xla_matmul

    assert matmul_for_platform("cpu") is quant_cpu.matmul
    assert matmul_for_platform("gpu") is quant_matmul and matmul_for_platform("cuda") is quant_matmul
    assert matmul_for_platform("rocm") is quant_matmul
    assert matmul_for_platform("tpu") is quant_matmul_tpu
    assert matmul_for_platform("METAL") is _xla_matmul


def test_matvec_picks_the_tpu_kernel_when_lowering_for_tpu():
    """A CPU process lowering for a TPU (abstract TPU mesh) gets the TPU kernel, not the CPU FFI call."""
    _, qm = random_case("int8", 64, 1, 64, 256)
    text = lower_for_tpu(qm.matvec, jax.ShapeDtypeStruct((2, 3, 64), jnp.bfloat16), device_kind="TPU v6 lite")
    assert MOSAIC_TPU_CALL_TARGET in text


# ---------------------------------------------------------------- the parameter transform and the engine


def test_quantize_params_replaces_kernels_and_embedding_only():
    params = {
        "embed": np.ones((10, 8), np.float32),
        "final_norm": {"scale": np.ones(8, np.float32)},
        "layers_0": {"mlp": {"up": {"kernel": np.ones((8, 24), np.float32)}}},
    }
    out = quantize_params(params, "int8")
    assert isinstance(out["embed"], QuantizedMatrix) and out["embed"].shape == (10, 8)
    up = out["layers_0"]["mlp"]["up"]["kernel"]
    assert isinstance(up, QuantizedMatrix) and up.shape == (24, 8)  # stored [out, in]
    assert out["final_norm"]["scale"] is params["final_norm"]["scale"]
    assert quantize_params(params, "none") == params

    from runtime.worker.model_runner import params_to_device

    dev = params_to_device(out, jnp.bfloat16)
    assert dev["embed"].q.dtype == jnp.int8 and dev["embed"].scale.dtype == jnp.float32
    assert dev["final_norm"]["scale"].dtype == jnp.float32


def all_position_logits(gen, ids):
    """Teacher-forced logits [P, V] at every position of ids (one prefill through the engine, no sampling)."""
    return gen.engine.score(ids, chunk=len(ids))


@pytest.fixture(scope="module")
def forced(tiny_path):
    """The float32 model's greedy continuation of a prompt, and float32 / int8 teacher-forced logits on it."""
    from runtime.api import SamplingParams
    from runtime.engine.offline import Generator

    gens = {wq: Generator(gguf_path=tiny_path, attention_backend="xla", weight_quant=wq) for wq in ("none", "int8")}
    prompt = list(range(3, 20))
    _, stats = gens["none"].generate(prompt, SamplingParams(max_tokens=24, ignore_eos=True))
    ids = prompt + stats.token_ids
    # Position p's logits predict token p + 1: keep the rows that predicted the continuation.
    logits = {wq: all_position_logits(g, ids)[len(prompt) - 1 : -1] for wq, g in gens.items()}
    return prompt, stats.token_ids, logits


def test_tiny_model_int8_logits_close_and_greedy_tokens_mostly_equal(forced):
    """Teacher forcing on the float32 model's own greedy continuation, so one flipped near-tie does not
    derail the rest. The tiny model's attention is deliberately sharp (large Q/K), which amplifies
    weight error: int8 moves its logits by up to ~7% of their range. (int4 is far coarser on it;
    SmolLM2 figures are in the README.)"""
    _, tokens, logits = forced
    ref, int8 = logits["none"], logits["int8"]
    np.testing.assert_array_equal(ref.argmax(-1), tokens)
    assert np.abs(int8 - ref).max() < 0.1 * np.abs(ref).max()  # measured 0.62 of 9.3
    assert np.mean(int8.argmax(-1) == tokens) >= 0.9


def test_tiny_engine_int8(tiny_path, forced):
    """The engine (16-token buckets: the kernel's dequantized-tile path) with int8 weights."""
    from runtime.api import SamplingParams
    from tests.support.engines import tiny_engine

    prompt, tokens, logits = forced
    limits = dict(max_num_seqs=1, max_num_batched_tokens=16, max_model_len=64, num_blocks=8)
    eng = tiny_engine(tiny_path, **limits, attention_backend="xla", weight_quant="int8")
    assert isinstance(eng.runner.params["embed"], QuantizedMatrix)
    out = eng.generate([prompt], SamplingParams(max_tokens=6, ignore_eos=True))[0].token_ids
    assert out[0] == logits["int8"][0].argmax()
    assert np.mean(np.array(out) == np.array(tokens[:6])) >= 0.5


@pytest.mark.parametrize(
    "kw,match",
    [
        ({"weight_quant": "int3"}, "weight_quant must be one of none, int8, int4"),
        ({"weight_quant": "int4", "weight_quant_group": 48}, "weight_quant_group"),
        ({"weight_quant_group": 0}, "weight_quant_group"),
    ],
)
def test_engine_config_validation(kw, match):
    from runtime.api import EngineConfig

    with pytest.raises(ValueError, match=match):
        EngineConfig(**kw)


def test_generate_cli_flag(tiny_path, capsys):
    from runtime.engine.offline import main

    assert main(["--gguf", tiny_path, "--prompt", "in the hall", "--max-tokens", "3", "--weight-quant", "int8"]) == 0
    assert "3 generated" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--gguf", tiny_path, "--prompt", "hi", "--weight-quant", "int3"])
