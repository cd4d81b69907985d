"""GGUF file -> (model config, float32 weights in our layout, tokenizer metadata).

In: a path. Out: ``LoadedGGUF`` with the plain metadata dict (what the tokenizer is built from), the
``ModelConfig`` derived from it, and the parameter tree the model family expects. Runs once at start-up
on the calling thread; the file is memory-mapped (parsed here, see ``_parse_gguf``) and decoded tensor
by tensor with the ``gguf`` package's own dequantizers (``gguf.quants.dequantize``, the reference
NumPy port of ggml's, for every block format it knows).

Why gguf's dequantizers and not our own (measured on this machine, ``load_gguf`` best of 5, once with
each; a NumPy port of the eight formats the two presets use had been here before)::

                      formats                         ours     gguf.quants   ratio
    SmolLM2-135M      Q4_1, Q8_0, F32                 0.62 s   0.82 s        1.3x
    Gemma 3 270M      Q4_K, Q6_K, Q5_0, Q8_0, F32     0.71 s   0.99 s        1.4x

The results are bit-identical on every tensor of both files; 0.2-0.3 s of a start-up that then compiles
for seconds is not worth a second implementation of the formats to keep correct.

Errors a user can cause (missing file, not a GGUF file, truncated file, unknown architecture, unknown
tensor type) raise ``GGUFError`` with a message that names the file and the problem.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType
from gguf.quants import dequantize, quant_shape_to_byte_shape

from runtime.models.config import ModelConfig

log = logging.getLogger("runtime.loading")

GGUF_MAGIC = b"GGUF"


class GGUFError(ValueError):
    """The file cannot be used as a model: says which file and why."""


@dataclass(frozen=True)
class LoadedGGUF:
    path: Path
    metadata: dict[str, Any]
    config: ModelConfig
    params: dict[str, Any]  # nested dict of float32 numpy arrays, layout of runtime.models.<family>


class GGUFTensor(NamedTuple):
    """One tensor as ``gguf.ReaderTensor`` presents it (same shapes and dtypes)."""

    name: str
    tensor_type: GGMLQuantizationType
    shape: tuple[int, ...]  # ggml order: innermost (contiguous) dimension first
    data: np.ndarray  # a view of the mapped file: typed for F32/F16/..., else uint8 rows of blocks


# GGUF value types (gguf.GGUFValueType): fixed-size scalars by struct format / NumPy dtype.
_SCALAR_FORMATS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_TYPED_TENSORS = {
    GGMLQuantizationType.F16: np.float16,
    GGMLQuantizationType.F32: np.float32,
    GGMLQuantizationType.F64: np.float64,
    GGMLQuantizationType.I8: np.int8,
    GGMLQuantizationType.I16: np.int16,
    GGMLQuantizationType.I32: np.int32,
    GGMLQuantizationType.I64: np.int64,
}


def _parse_gguf(mapped: np.ndarray) -> tuple[dict[str, Any], list[GGUFTensor]]:
    """Header, key/values and tensor infos of a little-endian GGUF v2/v3 file; tensors stay mapped.

    Why not ``gguf.GGUFReader``: it makes NumPy views for every element of every array field, which
    for Gemma's 262,144-token vocabulary (tokens, scores, types) takes 14 s; this reads the same
    values in 0.3 s (tests compare both on tiny files; identical on Gemma 3 270M's too). Layout:

        magic "GGUF" | version u32 | n_tensors u64 | n_kv u64
        n_kv x  (key: string, value type u32, value)          string = u64 length + UTF-8 bytes
        n_tensors x (name: string, n_dims u32, dims u64 x n_dims, ggml type u32, offset u64)
        padding to general.alignment (32) | tensor data (offsets relative to here)
    """
    buf = memoryview(mapped)
    pos = 4

    def scalar(fmt: str):
        nonlocal pos
        (value,) = struct.unpack_from(fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return value

    def string() -> str:
        nonlocal pos
        n = scalar("<Q")
        if pos + n > len(buf):
            raise ValueError("string runs past the end of the file")
        text = str(buf[pos : pos + n], "utf-8")
        pos += n
        return text

    def value(vtype: int):
        nonlocal pos
        if vtype == _STRING:
            return string()
        if vtype == _ARRAY:
            item_type, count = scalar("<I"), scalar("<Q")
            if item_type in (_STRING, _ARRAY):
                return [value(item_type) for _ in range(count)]
            dtype = np.dtype(_SCALAR_FORMATS[item_type])
            items = np.frombuffer(buf, dtype, count, pos).tolist()
            pos += dtype.itemsize * count
            return items
        if vtype not in _SCALAR_FORMATS:
            raise ValueError(f"unknown metadata value type {vtype}")
        return scalar(_SCALAR_FORMATS[vtype])

    version = scalar("<I")
    if version not in (2, 3):
        raise ValueError(f"GGUF version {version} is not supported (2 and 3 are)")
    n_tensors, n_kv = scalar("<Q"), scalar("<Q")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = string()
        metadata[key] = value(scalar("<I"))
    infos = []
    for _ in range(n_tensors):
        name = string()
        dims = tuple(scalar("<Q") for _ in range(scalar("<I")))
        infos.append((name, dims, GGMLQuantizationType(scalar("<I")), scalar("<Q")))
    alignment = int(metadata.get("general.alignment", 32))
    start = -(-pos // alignment) * alignment
    tensors = []
    for name, dims, qtype, offset in infos:
        n_elements = int(np.prod(dims))
        np_dims = tuple(reversed(dims))
        if qtype in _TYPED_TENSORS:
            data = np.frombuffer(mapped, _TYPED_TENSORS[qtype], n_elements, start + offset).reshape(np_dims)
        else:
            block_size, type_size = GGML_QUANT_SIZES[qtype]
            data = np.frombuffer(mapped, np.uint8, n_elements * type_size // block_size, start + offset)
            data = data.reshape(quant_shape_to_byte_shape(np_dims, qtype))
        tensors.append(GGUFTensor(name, qtype, dims, data))
    return metadata, tensors


def _open_gguf(path: Path) -> tuple[dict[str, Any], list[GGUFTensor]]:
    if not path.exists():
        raise GGUFError(f"GGUF file not found: {path}")
    if not path.is_file():
        raise GGUFError(f"not a file: {path}")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise GGUFError(f"{path} is not a GGUF file (magic bytes {magic!r}, expected {GGUF_MAGIC!r})")
    try:
        return _parse_gguf(np.memmap(path, dtype=np.uint8, mode="r"))
    except Exception as exc:  # struct, NumPy and UTF-8 errors on damaged files
        raise GGUFError(f"{path} is a damaged or truncated GGUF file: {type(exc).__name__}: {exc}") from None


def read_gguf_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """All key/value fields as plain Python values (strings, numbers, lists)."""
    return _open_gguf(Path(path))[0]


def _config_of(path: Path, metadata: dict[str, Any], tensors: dict[str, GGUFTensor]) -> ModelConfig:
    config = ModelConfig.from_gguf_metadata(metadata, source=str(path))
    if "output.weight" in tensors:  # a separate LM head; otherwise it is the embedding matrix
        config = dataclasses.replace(config, tie_word_embeddings=False)
    return config


def read_gguf_config(path: str | os.PathLike) -> ModelConfig:
    """The model config ``load_gguf`` would build, from the header alone (no tensor data is read):
    for sizing and cross-lowering without loading the weights."""
    path = Path(path)
    metadata, tensor_list = _open_gguf(path)
    return _config_of(path, metadata, {t.name: t for t in tensor_list})


def tensor_array(tensor: GGUFTensor) -> np.ndarray:
    """One tensor dequantized to float32 (``gguf.quants.dequantize``) in row-major (PyTorch) order:
    shape = reversed ggml dims. ``GGUFError`` naming the tensor and its type for a type gguf cannot
    decode (integer tensors, F64, formats newer than the pinned package)."""
    try:
        flat = dequantize(tensor.data, tensor.tensor_type)
    except NotImplementedError:
        raise GGUFError(
            f"tensor {tensor.name!r}: unsupported GGML tensor type {tensor.tensor_type.name!r} "
            f"(the gguf package cannot dequantize it)"
        ) from None
    shape = tuple(int(d) for d in reversed(tensor.shape))
    return flat.astype(np.float32, copy=False).reshape(shape)


def read_gguf_tensors(path: str | os.PathLike) -> dict[str, GGUFTensor]:
    """The file's tensors by name, as stored (views of the mapped file): for tests and tools."""
    return {t.name: t for t in _open_gguf(Path(path))[1]}


def unpermute_qk(w: np.ndarray, n_heads: int) -> np.ndarray:
    """Undo llama.cpp's Q/K row permutation so rotary embedding can use the rotate-half layout.

    llama.cpp's converter reorders each head's rows from halves [x0..x(d/2-1) | y0..] to interleaved
    pairs [x0 y0 x1 y1 ...] (its rotary rotates adjacent pairs). Viewing rows as (heads, d/2, 2) and
    swapping the last two axes restores (heads, 2, d/2), the layout of the original checkpoint.
    """
    out_dim, in_dim = w.shape
    head_dim = out_dim // n_heads
    return w.reshape(n_heads, head_dim // 2, 2, in_dim).swapaxes(1, 2).reshape(out_dim, in_dim)


def load_gguf(path: str | os.PathLike, *, dtype=np.float32) -> LoadedGGUF:
    """Read a GGUF file into a config and a parameter tree (see module docstring)."""
    from runtime.models import get_family

    path = Path(path)
    metadata, tensor_list = _open_gguf(path)
    tensors = {t.name: t for t in tensor_list}
    config = _config_of(path, metadata, tensors)
    family = get_family(config.architecture)

    def get(name: str) -> np.ndarray:
        if name not in tensors:
            raise GGUFError(f"{path}: tensor {name!r} is missing (architecture {config.architecture!r})")
        try:
            return tensor_array(tensors[name]).astype(dtype, copy=False)
        except GGUFError as exc:
            raise GGUFError(f"{path}: {exc}") from None

    try:
        params = family.params_from_gguf(config, get, unpermute_qk)
    except ValueError as exc:
        if isinstance(exc, GGUFError):
            raise
        raise GGUFError(f"{path}: {exc}") from None
    return LoadedGGUF(path=path, metadata=metadata, config=config, params=params)


def native_params(path: str | Path) -> dict:
    """The model's parameter tree from a GGUF file with every Q8_0 / Q4_1 matrix kept as the file's
    blocks (``GGUFMatrix``) and every other tensor dequantized to float32 as ``load_gguf`` does."""
    from runtime.models import get_family
    from runtime.quant.gguf_blocks import GGUFMatrix, gguf_matrix, native_block_type

    path = Path(path)
    metadata, tensor_list = _open_gguf(path)
    tensors = {t.name: t for t in tensor_list}
    config = _config_of(path, metadata, tensors)
    counts = {"native": 0, "float": 0}

    def get(name: str):
        t = tensors[name]
        if native_block_type(t):
            counts["native"] += int(t.data.nbytes)
            return gguf_matrix(t)
        counts["float"] += int(t.data.nbytes)
        return tensor_array(t)

    def unpermute(w, n_heads: int):
        if isinstance(w, GGUFMatrix):
            order = unpermute_qk(np.arange(w.shape[0])[:, None], n_heads)[:, 0]
            return w.permute_rows(order)
        return unpermute_qk(w, n_heads)

    params = get_family(config.architecture).params_from_gguf(config, get, unpermute)
    total = counts["native"] + counts["float"]
    log.info(
        "weight_quant=gguf: %.1f MB of %.1f MB of the file's tensors run as its own blocks (Q8_0, Q4_1)",
        counts["native"] / 1e6,
        total / 1e6,
    )
    return params
