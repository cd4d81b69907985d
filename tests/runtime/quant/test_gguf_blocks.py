"""``weight_quant="gguf"``: the file's own Q8_0 / Q4_1 blocks. The jnp dequantizer against the ``gguf``
package's, the CPU kernel against the float matmul (synthetic blocks with hand-made values and SmolLM2's
real tensors), the platform paths, and the engine on SmolLM2 against the dequantized float32 model."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gguf.quants import dequantize as gguf_dequantize

from pallas_kernels.lowering import lower_for_cuda
from pallas_kernels.quant_matmul.gguf_blocks import dequantize_blocks, gguf_matmul_reference
from runtime.loading.gguf import read_gguf_tensors, tensor_array
from runtime.loading.presets import resolve_gguf
from runtime.quant import cpu as quant_cpu
from runtime.quant.gguf_blocks import GGUFMatrix, gguf_matrix


def make_blocks(block_type: str, rows: int, K: int, seed: int = 0) -> np.ndarray:
    """Valid random blocks (finite f16 scales and minimums, every code value used)."""
    rng = np.random.default_rng(seed)
    nb = K // 32
    d = (rng.uniform(0.001, 0.05, (rows, nb)) * rng.choice([-1, 1], (rows, nb))).astype(np.float16)
    if block_type == "q8_0":
        q = rng.integers(-128, 128, (rows, nb, 32)).astype(np.int8)
        blk = np.concatenate([d[..., None].view(np.uint8), q.view(np.uint8)], axis=-1)
    else:
        m = rng.uniform(-0.4, 0.0, (rows, nb)).astype(np.float16)
        qs = rng.integers(0, 256, (rows, nb, 16)).astype(np.uint8)
        blk = np.concatenate([d[..., None].view(np.uint8), m[..., None].view(np.uint8), qs], axis=-1)
    return np.ascontiguousarray(blk.reshape(rows, -1))


def by_hand(blocks: np.ndarray, block_type: str, K: int) -> np.ndarray:
    """The block formats read element by element (ggml's block_q8_0 / block_q4_1), float64."""
    rows = blocks.shape[0]
    out = np.zeros((rows, K))
    size = 34 if block_type == "q8_0" else 20
    for r in range(rows):
        for b in range(K // 32):
            blk = blocks[r, b * size : (b + 1) * size]
            d = float(blk[0:2].view(np.float16)[0])
            for j in range(32):
                if block_type == "q8_0":
                    out[r, b * 32 + j] = d * float(blk[2 + j].view(np.int8))
                else:
                    m = float(blk[2:4].view(np.float16)[0])
                    byte = int(blk[4 + j % 16])
                    out[r, b * 32 + j] = d * ((byte & 0xF) if j < 16 else (byte >> 4)) + m
    return out


@pytest.mark.parametrize("block_type", ["q8_0", "q4_1"])
def test_dequantize_by_hand(block_type):
    blocks = make_blocks(block_type, 3, 64)
    ours = np.asarray(dequantize_blocks(jnp.asarray(blocks), block_type, 64))
    np.testing.assert_allclose(ours, by_hand(blocks, block_type, 64), rtol=1e-6, atol=1e-7)


@pytest.fixture(scope="module")
def smollm2_tensors():
    return read_gguf_tensors(resolve_gguf("smollm2-135m"))


@pytest.mark.parametrize("name", ["blk.0.attn_k.weight", "blk.3.ffn_down.weight", "token_embd.weight"])
def test_dequantize_matches_the_gguf_package(smollm2_tensors, name):
    t = smollm2_tensors[name]
    m = gguf_matrix(t)
    assert m.nbytes == t.data.nbytes  # held at the file's size
    ours = np.asarray(m.dequantize())
    np.testing.assert_array_equal(ours, tensor_array(t))
    assert ours.shape == tuple(reversed([int(d) for d in t.shape]))
    assert np.array_equal(gguf_dequantize(t.data, t.tensor_type).reshape(ours.shape), ours)


@pytest.fixture(scope="module")
def cpu_kernel():
    if jax.default_backend() != "cpu":
        pytest.skip("the FFI kernel is the CPU path")
    assert quant_cpu.kernel_available(), "g++ could not build runtime/quant/quant_matmul.cc"


def kernel_matmul(x, m: GGUFMatrix):
    f = jax.jit(quant_cpu.gguf_matmul, static_argnames=("block_type", "in_features"))
    return np.asarray(f(jnp.asarray(x), jnp.asarray(m.blocks), block_type=m.block_type, in_features=m.in_features))


@pytest.mark.parametrize("block_type", ["q8_0", "q4_1"])
# up to max_kernel_rows (16 with int8 activations, else 64): the kernel (4-row tiles and tails); 72: XLA's
@pytest.mark.parametrize("M", [1, 2, 3, 4, 7, 16, 40, 72])
@pytest.mark.parametrize("N", [1, 5, 64])  # rows of W: 4-row blocks and the tail
def test_cpu_kernel_matches_float(cpu_kernel, block_type, M, N):
    K = 96
    m = GGUFMatrix(make_blocks(block_type, N, K, seed=N), block_type, K)
    x = np.random.default_rng(M).standard_normal((M, K)).astype(np.float32)
    w = by_hand(m.blocks, block_type, K)
    y = kernel_matmul(x, m)
    # x as the kernel sees it (int8 blocks on the AVX2 path: exact integer products), then x itself within
    # the activations' rounding (each column off by at most half its block's step)
    expected = quant_cpu.kernel_activations(x).astype(np.float64) @ w.T
    np.testing.assert_allclose(y, expected, rtol=2e-5, atol=2e-5)
    exact = x.astype(np.float64) @ w.T
    bound = (
        quant_cpu.activation_error_bound(x, w)
        if M <= quant_cpu.max_kernel_rows(2) and quant_cpu.kernel_quantizes_activations()
        else 0
    )
    assert np.all(np.abs(y - exact) <= bound + 2e-5 * (1 + np.abs(exact)))


@pytest.mark.parametrize("name", ["blk.5.ffn_gate.weight", "token_embd.weight"])
def test_cpu_kernel_on_real_tensors(cpu_kernel, smollm2_tensors, name):
    m = gguf_matrix(smollm2_tensors[name])
    x = np.random.default_rng(0).standard_normal((3, m.in_features)).astype(np.float32)
    expected = quant_cpu.kernel_activations(x).astype(np.float64) @ tensor_array(smollm2_tensors[name]).T.astype(
        np.float64
    )
    y = kernel_matmul(x, m)
    assert np.abs(y - expected).max() <= 1e-5 * np.abs(expected).max()


def test_take_rows_and_other_platforms_use_the_reference(smollm2_tensors):
    m = jax.tree.map(jnp.asarray, gguf_matrix(smollm2_tensors["token_embd.weight"]))
    idx = jnp.array([[0, 5], [49151, 17]], jnp.int32)
    rows = np.asarray(m.take_rows(idx))
    full = tensor_array(smollm2_tensors["token_embd.weight"])
    np.testing.assert_array_equal(rows, full[np.asarray(idx)])
    # Lowered for a GPU the matmul is the jnp dequantize-and-dot (no CPU custom call in the program).
    w = jax.tree.map(jnp.asarray, gguf_matrix(smollm2_tensors["blk.0.attn_q.weight"]))
    text = lower_for_cuda(lambda x, w: w.matvec(x), jnp.zeros((2, 576)), w, device_kind="NVIDIA H100 80GB HBM3")
    assert "jaxserve_gguf_matmul" not in text and "dot_general" in text


def test_engine_runs_the_files_blocks_like_the_dequantized_model():
    """SmolLM2 with weight_quant="gguf": every Q4_1 / Q8_0 matrix is a GGUFMatrix, the weights take the
    file's bytes, and the model computes what the float32 model (the same file dequantized) computes.

    "What it computes" is the same sums in another order: logits within 1e-4 of the largest, at the prompt and
    at every step of the reference's greedy answer (teacher-forced: each prefix of it run through both). The
    greedy tokens then agree wherever the reference's two best logits are further apart than twice that
    bound; where they are nearer, the order of the sums may pick either (a near tie), and the answers may
    part there, so the free-running answers are compared up to the first near tie."""
    from runtime.api import SamplingParams
    from runtime.engine.offline import Generator

    sp = SamplingParams(max_tokens=12, temperature=0.0)

    def reference_run(gen):
        """(the reference's greedy answer, its logits after the prompt and after each prefix of the answer)."""
        ids = gen.encode_prompt("What is the capital of France?", chat=True)
        answer = gen.generate(ids, sp)[1].token_ids
        return answer, [np.asarray(gen.prompt_logits(ids + answer[:i])) for i in range(len(answer))]

    gens = {"gguf": Generator("smollm2-135m", weight_quant="gguf", max_model_len=128)}
    if quant_cpu.kernel_quantizes_activations():
        # The AVX2 kernels multiply W by x's int8 blocks (as llama.cpp does): the model they define is the
        # file dequantized with the input of every matmul the kernel takes (up to max_kernel_rows rows) so
        # rounded; traced here with the jnp reference (every prefix inside the patch: each length compiles).
        def reference_matmul(x, blocks, *, block_type, in_features):
            if x.shape[0] <= quant_cpu.max_kernel_rows(2):
                x = quant_cpu.quantize_activations_jnp(x)
            return gguf_matmul_reference(x, blocks, block_type=block_type, in_features=in_features)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(quant_cpu, "gguf_matmul", reference_matmul)
            ref_ids, ref_steps = reference_run(Generator("smollm2-135m", weight_quant="gguf", max_model_len=128))
    else:
        ref_ids, ref_steps = reference_run(Generator("smollm2-135m", weight_quant="none", max_model_len=128))
    params = gens["gguf"].params
    mats = [
        x for x in jax.tree.leaves(params, is_leaf=lambda x: isinstance(x, GGUFMatrix)) if isinstance(x, GGUFMatrix)
    ]
    # the tied embedding + 4 matrices a layer: qkv, o, gate_up, down (runtime.quant.weights.fuse_linears
    # stacks q, k, v and gate, up on CPU: same blocks, same bytes)
    assert len(mats) == 1 + 4 * gens["gguf"].config.num_layers
    file_bytes = sum(
        int(t.data.nbytes) for t in read_gguf_tensors(resolve_gguf("smollm2-135m")).values() if len(t.shape) == 2
    )
    assert sum(m.nbytes for m in mats) == file_bytes
    gen = gens["gguf"]
    ids = gen.encode_prompt("What is the capital of France?", chat=True)
    near_tie = len(ref_ids)  # the first step whose two best reference logits are within twice the bound
    for i, ref in enumerate(ref_steps):
        ours = np.asarray(gen.prompt_logits(ids + ref_ids[:i]))
        bound = 1e-4 * np.abs(ref).max()
        assert np.abs(ours - ref).max() <= bound, f"step {i}"  # the same sums in another order
        top2 = np.sort(ref)[-2:]
        if top2[1] - top2[0] > 2 * bound:
            assert int(ours.argmax()) == ref_ids[i], f"step {i}: a clear greedy choice differs"
        else:
            near_tie = min(near_tie, i)
    assert near_tie > 0  # the prompt's own first token is no near tie: the comparison says something
    tokens = gen.generate(ids, sp)[1].token_ids
    assert tokens[:near_tie] == ref_ids[:near_tie]
