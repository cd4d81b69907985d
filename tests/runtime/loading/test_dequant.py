"""Our GGML dequantizers against the gguf package's independent NumPy implementation."""

import gguf
import numpy as np
import pytest

from runtime.loading.dequant import BLOCK_SIZES, UnsupportedTensorTypeError, dequantize

# Byte offsets of the half-precision header fields per block: random bytes there could be NaN/inf.
F16_FIELDS = {
    "Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
    "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208],
}


def random_blocks(type_name: str, rows: int, blocks_per_row: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    _, block_bytes = BLOCK_SIZES[type_name]
    raw = rng.integers(0, 256, size=(rows, blocks_per_row, block_bytes), dtype=np.uint8)
    for off in F16_FIELDS[type_name]:
        halves = rng.uniform(-2, 2, size=(rows, blocks_per_row)).astype(np.float16)
        raw[..., off:off + 2] = halves.view(np.uint8).reshape(rows, blocks_per_row, 2)
    return raw.reshape(rows, blocks_per_row * block_bytes)


@pytest.mark.parametrize("type_name", sorted(F16_FIELDS))
def test_matches_gguf_reference(type_name):
    raw = random_blocks(type_name, rows=3, blocks_per_row=2)
    ours = dequantize(raw, type_name)
    ref = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType[type_name]).astype(np.float32)
    assert ours.shape == ref.shape == (3, 2 * BLOCK_SIZES[type_name][0])
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)


def test_q8_0_by_hand():
    # d = 0.5, quants 0..31 as int8, minus 16 -> values (q - 16) * 0.5
    block = np.zeros(34, np.uint8)
    block[:2] = np.array([0.5], np.float16).view(np.uint8)
    block[2:] = (np.arange(32) - 16).astype(np.int8).view(np.uint8)
    np.testing.assert_array_equal(dequantize(block[None], "Q8_0")[0], (np.arange(32) - 16) * 0.5)


def test_q4_1_by_hand():
    # d = 2, m = -1; byte j = (hi << 4) | lo with lo = j, hi = 15 - j:
    # element j = 2*j - 1, element j+16 = 2*(15-j) - 1
    block = np.zeros(20, np.uint8)
    block[:2] = np.array([2.0], np.float16).view(np.uint8)
    block[2:4] = np.array([-1.0], np.float16).view(np.uint8)
    j = np.arange(16)
    block[4:] = ((15 - j) << 4) | j
    expected = np.concatenate([2 * j - 1, 2 * (15 - j) - 1]).astype(np.float32)
    np.testing.assert_array_equal(dequantize(block[None], "Q4_1")[0], expected)


def test_float_types():
    x = np.array([[1.5, -2.25, 3.0]], np.float32)
    np.testing.assert_array_equal(dequantize(x, "F32"), x)
    np.testing.assert_array_equal(dequantize(x.astype(np.float16), "F16"), x)
    bf16 = (x.view(np.uint32) >> 16).astype(np.uint16)
    np.testing.assert_array_equal(dequantize(bf16, "BF16"), x)


def test_unknown_type_names_it():
    with pytest.raises(UnsupportedTensorTypeError, match="IQ2_XS"):
        dequantize(np.zeros((1, 74), np.uint8), "IQ2_XS")
