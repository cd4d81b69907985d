"""The loader dequantizes with the gguf package (``gguf.quants.dequantize``), not with code of its own.

Checked against an independent read of the same file (``gguf.GGUFReader``, which shares nothing with
our header parser) on a tiny Llama whose weights span seven storage formats, and through the parameter
tree the model family builds from them; a type gguf cannot decode fails naming the tensor and the type.
Why gguf's dequantizers (load times of both real models, measured): ``runtime/loading/gguf.py``.
"""

from __future__ import annotations

import gguf
import numpy as np
import pytest

from runtime.loading.gguf import GGUFError, load_gguf, read_gguf_tensors, tensor_array
from tests.support.tiny_gguf import write_tiny_llama

Q = gguf.GGMLQuantizationType
# On top of the file's own F32, F16 and Q8_0: every block format tiny_gguf can quantize.
OVERRIDES = {
    "blk.0.ffn_down.weight": Q.Q4_0,
    "blk.0.ffn_up.weight": Q.Q4_1,
    "blk.1.ffn_down.weight": Q.Q5_0,
    "blk.1.ffn_gate.weight": Q.Q5_1,
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("formats"), tensor_type_override=OVERRIDES)


def reference(reader_tensor) -> np.ndarray:
    """gguf's reader and gguf's dequantizer, in row-major order (reversed ggml dims)."""
    shape = tuple(int(d) for d in reversed(reader_tensor.shape))
    return gguf.quants.dequantize(reader_tensor.data, reader_tensor.tensor_type).astype(np.float32).reshape(shape)


def test_every_tensor_is_what_gguf_dequantizes(tiny):
    reader = gguf.GGUFReader(tiny.path)
    ours = read_gguf_tensors(tiny.path)
    assert {t.tensor_type.name for t in reader.tensors} == {"F32", "F16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"}
    assert set(ours) == {t.name for t in reader.tensors}
    for t in reader.tensors:
        got = tensor_array(ours[t.name])
        assert got.dtype == np.float32, t.name
        np.testing.assert_array_equal(got, reference(t), err_msg=t.name)


def test_the_parameter_tree_holds_gguf_values(tiny):
    """Kernels are the dequantized [out, in] matrices transposed; the quantized formats round-tripped
    the original weights (so the comparison is not of zeros)."""
    params = load_gguf(tiny.path).params
    reader = {t.name: t for t in gguf.GGUFReader(tiny.path).tensors}
    for (layer, name), gguf_name in {
        (0, "down"): "ffn_down",
        (0, "up"): "ffn_up",
        (1, "down"): "ffn_down",
        (1, "gate"): "ffn_gate",
    }.items():
        ref = reference(reader[f"blk.{layer}.{gguf_name}.weight"])
        np.testing.assert_array_equal(params[f"layers_{layer}"]["mlp"][name]["kernel"], ref.T)
        np.testing.assert_allclose(ref, tiny.layers[layer][name], rtol=0, atol=0.1 * np.abs(ref).max())
    np.testing.assert_array_equal(params["embed"], reference(reader["token_embd.weight"]))


def test_a_type_gguf_cannot_dequantize_names_the_tensor_and_the_type(tmp_path):
    bad = write_tiny_llama(tmp_path, "q8_1.gguf", tensor_type_override={"blk.1.attn_v.weight": Q.Q8_1})
    with pytest.raises(GGUFError, match=r"q8_1\.gguf.*'blk\.1\.attn_v\.weight'.*'Q8_1'"):
        load_gguf(bad.path)
