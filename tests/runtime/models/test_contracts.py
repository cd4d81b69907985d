"""The fast path's declared contract (``runtime.models.contracts``): every weight format and attention backend
we ship implements it with the declared signatures, the model code dispatches on the protocols (a class the
model has never heard of plugs in), and what does not implement them takes the plain path."""

from __future__ import annotations

import inspect

import jax.numpy as jnp
import numpy as np
import pytest

from runtime.models import common
from runtime.models.contracts import FusedAttention, FusedLayerWeight, MatmulWeight
from runtime.models.llama import LAYER
from runtime.quant.gguf_blocks import GGUFMatrix
from runtime.quant.weights import DenseMatrix, QuantizedMatrix
from runtime.worker.attention import make_attend_fn


def _protocol_methods(proto) -> dict[str, inspect.Signature]:
    names = [n for n in vars(proto) if not n.startswith("_") or n == "__call__"]
    return {n: inspect.signature(getattr(proto, n)) for n in names if callable(getattr(proto, n))}


def _same_parameters(impl, proto_sig: inspect.Signature) -> None:
    got = [(p.name, p.kind, p.default) for p in inspect.signature(impl).parameters.values()]
    want = [(p.name, p.kind, p.default) for p in proto_sig.parameters.values()]
    assert got == want, f"{impl.__qualname__}{inspect.signature(impl)} != {proto_sig}"


def _weights():
    w = np.random.default_rng(0).standard_normal((8, 64)).astype(np.float32)
    blocks = np.zeros((8, 64 // 32 * 34), np.uint8)  # Q8_0: 34 bytes a block of 32
    return [
        QuantizedMatrix.from_float(w, "int8"),
        QuantizedMatrix.from_float(w, "int4"),
        DenseMatrix(w),
        GGUFMatrix(blocks, "q8_0", 64),
    ]


@pytest.mark.parametrize("matrix", _weights(), ids=repr)
def test_every_shipped_weight_format_implements_the_contract(matrix):
    assert isinstance(matrix, MatmulWeight) and isinstance(matrix, FusedLayerWeight)
    for proto in (MatmulWeight, FusedLayerWeight):
        for name, sig in _protocol_methods(proto).items():
            _same_parameters(getattr(type(matrix), name), sig)


def test_the_cpu_backend_offers_fused_attention_and_the_others_do_not():
    cpu = make_attend_fn("cpu", sm_scale=0.5)
    assert isinstance(cpu, FusedAttention)
    for name, sig in _protocol_methods(FusedAttention).items():
        _same_parameters(getattr(type(cpu), name), sig)
    assert not isinstance(make_attend_fn("xla", sm_scale=0.5), FusedAttention)


class RowsMatrix:
    """A weight format the model has never seen: W [rows, in] kept as rows, scaled by 2 on the way out, with
    no fused calls. Counts its calls."""

    def __init__(self, w):
        self.w, self.calls = jnp.asarray(w), []

    def matvec(self, x):
        self.calls.append("matvec")
        return 2 * jnp.einsum("...k,nk->...n", x, self.w)

    def take_rows(self, idx):
        self.calls.append("take_rows")
        return 2 * jnp.take(self.w, idx, axis=0)


def test_a_new_weight_format_plugs_in_through_the_protocol():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((6, 4)).astype(np.float32)  # [rows, in]
    x = rng.standard_normal((3, 4)).astype(np.float32)
    m = RowsMatrix(w)
    assert isinstance(m, MatmulWeight) and not isinstance(m, FusedLayerWeight)
    np.testing.assert_allclose(common.linear(x, m), 2 * x @ w.T, rtol=1e-6)
    np.testing.assert_allclose(common.embed(m, jnp.array([5, 0]), jnp.float32), 2 * w[[5, 0]], rtol=1e-6)
    np.testing.assert_allclose(common.tied_logits(x, m), 2 * x @ w.T, rtol=1e-6)
    assert m.calls == ["matvec", "take_rows", "matvec"]
    # a plain array takes the float path ([in, out] for linear; [V, D] for the embedding)
    np.testing.assert_allclose(common.linear(x, w.T), x @ w.T, rtol=1e-6)
    np.testing.assert_allclose(common.embed(w, jnp.array([1]), jnp.float32), w[[1]], rtol=1e-6)


class HalfMatrix:
    """Something with a matvec but no take_rows: not a MatmulWeight, so the model must not take it for one."""

    def matvec(self, x):  # pragma: no cover - never called
        raise AssertionError("called through a partial implementation")


def test_a_partial_implementation_is_not_taken_for_the_contract():
    assert not isinstance(HalfMatrix(), MatmulWeight)


class RecordingAttention:
    """A FusedAttention the model has never seen: records the fused call and returns a marker."""

    def __init__(self):
        self.calls = []

    def __call__(self, q, k_pages, v_pages, md):  # pragma: no cover - the fused call is taken
        raise AssertionError("the unfused call was taken")

    def rope_write_attend(self, qkv, cos, sin, k_pages, v_pages, md, *, num_heads):
        self.calls.append((qkv.shape, num_heads))
        return "out", (k_pages, v_pages)


def test_a_new_attention_kernel_plugs_in_through_the_protocol():
    cfg = type("Config", (), {"num_heads": 4})()  # all fused_rope_write_attend reads of a ModelConfig
    att = RecordingAttention()
    qkv = jnp.zeros((2, 24))
    out = common.fused_rope_write_attend(att, qkv, None, None, ("k", "v"), None, cfg, LAYER)
    assert out == ("out", ("k", "v")) and att.calls == [((2, 24), 4)]
    # a plain function, or no stacked q/k/v: the model runs RoPE, the write and attention itself
    assert common.fused_rope_write_attend(lambda *a: None, qkv, None, None, ("k", "v"), None, cfg, LAYER) is None
    assert common.fused_rope_write_attend(att, None, None, None, ("k", "v"), None, cfg, LAYER) is None
