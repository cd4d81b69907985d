"""float32 weights held row-major (``DenseMatrix``) and the CPU kernel for their small-row products: the
kernel against float64 over every tiling path (1-row 8-wide tiles, 4-row blocks, tails in M, N and K),
the transform over a parameter tree, and the engine with and without it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.api import SamplingParams
from runtime.quant import cpu as quant_cpu
from runtime.quant.weights import DenseMatrix, dense_params
from tests.support.engines import TINY_PROMPTS, tiny_engine


@pytest.fixture(scope="module")
def cpu_kernel():
    if jax.default_backend() != "cpu":
        pytest.skip("the FFI kernel is the CPU path")
    assert quant_cpu.kernel_available(), "g++ could not build runtime/quant/quant_matmul.cc"


# M <= 16: the kernel (first 4 rows stream W, later blocks of 4 and the 1-3 row tails read it from L1);
# 17 and 40: XLA's dot. N: 8-row tiles (M = 1), 4-row tiles, 1-row tails. K: 16-lane steps and a masked tail.
@pytest.mark.parametrize("M", [1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 40])
@pytest.mark.parametrize("N", [1, 5, 13, 64])
@pytest.mark.parametrize("K", [16, 37, 96])
def test_kernel_matches_float64(cpu_kernel, M, N, K):
    rng = np.random.default_rng(M * 1000 + N * 10 + K)
    w = rng.standard_normal((N, K)).astype(np.float32)
    x = rng.standard_normal((M, K)).astype(np.float32)
    got = np.asarray(jax.jit(quant_cpu.dense_matmul)(jnp.asarray(x), jnp.asarray(w)))
    expected = x.astype(np.float64) @ w.astype(np.float64).T
    # float32 sums of K products of unit normals: |error| ~ K * 2^-24 * |terms|
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * K)


def test_by_hand(cpu_kernel):
    # y[m, n] = sum_k x[m, k] w[n, k]:  x = [[1, 2, 3]], w = [[1, 0, 0], [0, 1, 1]] -> [[1, 5]]
    x = jnp.asarray([[1.0, 2.0, 3.0]], jnp.float32)
    w = jnp.asarray([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]], jnp.float32)
    np.testing.assert_array_equal(np.asarray(DenseMatrix(w).matvec(x)), [[1.0, 5.0]])
    np.testing.assert_array_equal(np.asarray(DenseMatrix(w).take_rows(jnp.asarray([1]))), [[0.0, 1.0, 1.0]])


def test_dense_params_transposes_kernels_and_keeps_the_rest():
    rng = np.random.default_rng(0)
    kernel = rng.standard_normal((6, 4)).astype(np.float32)  # [in, out]
    embed = rng.standard_normal((10, 6)).astype(np.float32)  # [V, D]
    scale = np.ones(6, np.float32)
    out = dense_params({"layer": {"q": {"kernel": kernel}, "norm": {"scale": scale}}, "embed": embed})
    assert isinstance(out["layer"]["q"]["kernel"], DenseMatrix)
    np.testing.assert_array_equal(out["layer"]["q"]["kernel"].w, kernel.T)
    np.testing.assert_array_equal(out["embed"].w, embed)
    assert out["layer"]["norm"]["scale"] is scale
    x = rng.standard_normal((3, 6)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(out["layer"]["q"]["kernel"].matvec(jnp.asarray(x))), x @ kernel, rtol=1e-5)


def test_engine_with_the_kernel_gives_the_float_models_tokens(tiny_path):
    params = [SamplingParams(max_tokens=n, ignore_eos=True) for n in (6, 3, 8, 5)]
    xla = tiny_engine(tiny_path, dense_kernel=False)
    dense = tiny_engine(tiny_path, dense_kernel=True)
    assert isinstance(dense.runner.params["embed"], DenseMatrix)
    assert not isinstance(xla.runner.params["embed"], DenseMatrix)
    a = [o.token_ids for o in xla.generate(TINY_PROMPTS, params)]
    b = [o.token_ids for o in dense.generate(TINY_PROMPTS, params)]
    assert a == b
    ids = xla.encode(TINY_PROMPTS[1])
    np.testing.assert_allclose(dense.prompt_logits(ids), xla.prompt_logits(ids), rtol=1e-4, atol=1e-4)
