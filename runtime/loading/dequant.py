"""Dequantization of GGML block formats to float32, in NumPy.

In: the raw bytes of one tensor as the GGUF reader maps them (``uint8[rows, bytes_per_row]``) and its
GGML type. Out: ``float32[rows, row_elements]``. Runs once at load time on the host; the model then
holds float weights (quantization for serving is a separate transform, see the optimization guide).

Every format is a sequence of fixed-size blocks along the last (innermost, contiguous) axis:

    row:   | block 0 | block 1 | ... |        block = header (scales, mins) + packed quants
    Q4_1:  | d f16 | m f16 | 16 bytes: element j in low nibble of byte j, element j+16 in high nibble |

so each decoder views the bytes as ``[n_blocks, block_bytes]``, slices the header fields and unpacks.
The layouts follow ggml's reference C code (``ggml-quants.c``); tests check each against the ``gguf``
package's independent implementation on random blocks.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

# (elements per block, bytes per block) for the formats we decode.
BLOCK_SIZES: dict[str, tuple[int, int]] = {
    "F32": (1, 4),
    "F16": (1, 2),
    "BF16": (1, 2),
    "Q4_0": (32, 18),
    "Q4_1": (32, 20),
    "Q5_0": (32, 22),
    "Q5_1": (32, 24),
    "Q8_0": (32, 34),
    "Q4_K": (256, 144),
    "Q5_K": (256, 176),
    "Q6_K": (256, 210),
}
QK_K = 256


class UnsupportedTensorTypeError(ValueError):
    pass


def _f16(b: np.ndarray) -> np.ndarray:
    """[n, 2] uint8 -> [n, 1] float32 (little-endian half)."""
    return np.ascontiguousarray(b).view(np.float16).astype(np.float32)


def _nibbles(qs: np.ndarray) -> np.ndarray:
    """[n, 16] bytes -> [n, 32]: low nibbles are elements 0..15, high nibbles 16..31."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def _q8_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    return d * blocks[:, 2:].view(np.int8).astype(np.float32)


def _q4_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    return d * (_nibbles(blocks[:, 2:]).astype(np.float32) - 8.0)


def _q4_1(blocks: np.ndarray) -> np.ndarray:
    d, m = _f16(blocks[:, :2]), _f16(blocks[:, 2:4])
    return d * _nibbles(blocks[:, 4:]).astype(np.float32) + m


def _fifth_bits(qh_bytes: np.ndarray) -> np.ndarray:
    """[n, 4] bytes holding a little-endian uint32 -> [n, 32] bit j of it, as 0 or 16."""
    qh = np.ascontiguousarray(qh_bytes).view(np.uint32)  # [n, 1]
    return (((qh >> np.arange(32, dtype=np.uint32)) & 1) << 4).astype(np.uint8)


def _q5_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    q = _nibbles(blocks[:, 6:]) | _fifth_bits(blocks[:, 2:6])
    return d * (q.astype(np.float32) - 16.0)


def _q5_1(blocks: np.ndarray) -> np.ndarray:
    d, m = _f16(blocks[:, :2]), _f16(blocks[:, 2:4])
    q = _nibbles(blocks[:, 8:]) | _fifth_bits(blocks[:, 4:8])
    return d * q.astype(np.float32) + m


def _k_scales_mins(scales: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unpack the 12-byte field of Q4_K/Q5_K into 8 six-bit scales and 8 six-bit mins.

    bytes 0..3: low 6 bits = scale j (j<4), top 2 bits = high bits of scale j+4
    bytes 4..7: low 6 bits = min j (j<4),   top 2 bits = high bits of min j+4
    bytes 8..11: low nibble = low 4 bits of scale j+4, high nibble = low 4 bits of min j+4
    """
    s = scales.astype(np.uint8)
    sc = np.empty(s.shape[:-1] + (8,), np.uint8)
    mn = np.empty_like(sc)
    sc[..., :4] = s[..., 0:4] & 63
    mn[..., :4] = s[..., 4:8] & 63
    sc[..., 4:] = (s[..., 8:12] & 0x0F) | ((s[..., 0:4] >> 6) << 4)
    mn[..., 4:] = (s[..., 8:12] >> 4) | ((s[..., 4:8] >> 6) << 4)
    return sc.astype(np.float32), mn.astype(np.float32)


def _q4_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    sc, mn = _k_scales_mins(blocks[:, 4:16])
    qs = blocks[:, 16:].reshape(n, 4, 32)  # 4 chunks of 64 elements: low nibbles then high nibbles
    q = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(n, 8, 32).astype(np.float32)
    return ((d * sc)[..., None] * q - (dmin * mn)[..., None]).reshape(n, QK_K)


def _q5_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    sc, mn = _k_scales_mins(blocks[:, 4:16])
    qh = blocks[:, 16:48]  # bit 2c (low half) / 2c+1 (high half) of byte l -> fifth bit for chunk c
    qs = blocks[:, 48:].reshape(n, 4, 32)
    low = np.stack([qs & 0x0F, qs >> 4], axis=2).reshape(n, 8, 32)
    bit = np.arange(8, dtype=np.uint8)[None, :, None]
    high = ((qh[:, None, :] >> bit) & 1) << 4
    q = (low | high).astype(np.float32)
    return ((d * sc)[..., None] * q - (dmin * mn)[..., None]).reshape(n, QK_K)


def _q6_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    ql = blocks[:, 0:128].reshape(n, 2, 64)  # two halves of 128 elements
    qh = blocks[:, 128:192].reshape(n, 2, 32)
    scales = blocks[:, 192:208].view(np.int8).astype(np.float32).reshape(n, 16)
    d = _f16(blocks[:, 208:210])
    # Per half: 4 groups of 32 elements; group g takes a nibble of ql and 2 bits of qh.
    q = np.empty((n, 2, 4, 32), np.int16)
    q[:, :, 0] = (ql[:, :, :32] & 0x0F) | (((qh >> 0) & 3) << 4)
    q[:, :, 1] = (ql[:, :, 32:] & 0x0F) | (((qh >> 2) & 3) << 4)
    q[:, :, 2] = (ql[:, :, :32] >> 4) | (((qh >> 4) & 3) << 4)
    q[:, :, 3] = (ql[:, :, 32:] >> 4) | (((qh >> 6) & 3) << 4)
    q = (q - 32).astype(np.float32).reshape(n, 16, 16)  # 16 sub-blocks of 16, one scale each
    return (d[:, :, None] * scales[..., None] * q).reshape(n, QK_K)


_DECODERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "Q4_0": _q4_0,
    "Q4_1": _q4_1,
    "Q5_0": _q5_0,
    "Q5_1": _q5_1,
    "Q8_0": _q8_0,
    "Q4_K": _q4_k,
    "Q5_K": _q5_k,
    "Q6_K": _q6_k,
}


def dequantize(data: np.ndarray, type_name: str) -> np.ndarray:
    """Raw GGUF tensor data -> float32 with the same leading shape and decoded last axis.

    ``data`` is what ``gguf.GGUFReader`` maps: typed arrays for F32/F16/BF16, ``uint8`` rows of blocks
    for quantized types. Raises ``UnsupportedTensorTypeError`` naming the type for anything else.
    """
    if type_name == "F32":
        return np.asarray(data, dtype=np.float32)
    if type_name == "F16":
        return np.asarray(data).view(np.float16).astype(np.float32)
    if type_name == "BF16":
        raw = np.asarray(data).view(np.uint16).astype(np.uint32) << 16
        return raw.view(np.float32)
    decoder = _DECODERS.get(type_name)
    if decoder is None:
        supported = ", ".join(BLOCK_SIZES)
        raise UnsupportedTensorTypeError(f"unsupported GGML tensor type {type_name!r} (supported: {supported})")
    block_elems, block_bytes = BLOCK_SIZES[type_name]
    raw = np.ascontiguousarray(data, dtype=np.uint8)
    if raw.shape[-1] % block_bytes:
        raise ValueError(f"{type_name} row of {raw.shape[-1]} bytes is not a whole number of {block_bytes}-byte blocks")
    lead = raw.shape[:-1]
    n_blocks = raw.shape[-1] // block_bytes
    out = decoder(raw.reshape(-1, block_bytes))
    return out.reshape(*lead, n_blocks * block_elems)
