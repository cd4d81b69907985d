"""GGUF file -> (model config, float32 weights in our layout, tokenizer metadata).

In: a path. Out: ``LoadedGGUF`` with the plain metadata dict (what the tokenizer is built from), the
``ModelConfig`` derived from it, and the parameter tree the model family expects. Runs once at start-up
on the calling thread; the file is memory-mapped by ``gguf.GGUFReader`` and decoded tensor by tensor.

Errors a user can cause (missing file, not a GGUF file, truncated file, unknown architecture, unknown
tensor type) raise ``GGUFError`` with a message that names the file and the problem.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runtime.config import ModelConfig
from runtime.dequant import UnsupportedTensorTypeError, dequantize

GGUF_MAGIC = b"GGUF"


class GGUFError(ValueError):
    """The file cannot be used as a model: says which file and why."""


@dataclass(frozen=True)
class LoadedGGUF:
    path: Path
    metadata: dict[str, Any]
    config: ModelConfig
    params: dict[str, Any]  # nested dict of float32 numpy arrays, layout of runtime.models.<family>


def _open_reader(path: Path):
    import gguf

    if not path.exists():
        raise GGUFError(f"GGUF file not found: {path}")
    if not path.is_file():
        raise GGUFError(f"not a file: {path}")
    with open(path, "rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise GGUFError(f"{path} is not a GGUF file (magic bytes {magic!r}, expected {GGUF_MAGIC!r})")
    try:
        return gguf.GGUFReader(path)
    except Exception as exc:  # the reader raises a variety of errors on damaged files
        raise GGUFError(f"{path} is a damaged or truncated GGUF file: {type(exc).__name__}: {exc}") from None


def read_metadata(reader) -> dict[str, Any]:
    """All key/value fields as plain Python values (strings, numbers, lists)."""
    meta: dict[str, Any] = {}
    for key, field in reader.fields.items():
        if key.startswith("GGUF."):
            continue
        value = field.contents()
        meta[key] = value
    return meta


def read_gguf_metadata(path: str | os.PathLike) -> dict[str, Any]:
    return read_metadata(_open_reader(Path(path)))


def _tensor_array(tensor) -> np.ndarray:
    """Dequantize one tensor to float32 in row-major (PyTorch) order: shape = reversed ggml dims."""
    type_name = tensor.tensor_type.name
    try:
        flat = dequantize(tensor.data, type_name)
    except UnsupportedTensorTypeError as exc:
        raise GGUFError(f"tensor {tensor.name!r}: {exc}") from None
    shape = tuple(int(d) for d in reversed(tensor.shape))
    return flat.reshape(shape)


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
    reader = _open_reader(path)
    metadata = read_metadata(reader)
    config = ModelConfig.from_gguf_metadata(metadata, source=str(path))
    family = get_family(config.architecture)
    tensors = {t.name: t for t in reader.tensors}
    if "output.weight" in tensors:  # a separate LM head; otherwise it is the embedding matrix
        config = dataclasses.replace(config, tie_word_embeddings=False)

    def get(name: str) -> np.ndarray:
        if name not in tensors:
            raise GGUFError(f"{path}: tensor {name!r} is missing (architecture {config.architecture!r})")
        try:
            return _tensor_array(tensors[name]).astype(dtype, copy=False)
        except GGUFError as exc:
            raise GGUFError(f"{path}: {exc}") from None

    try:
        params = family.params_from_gguf(config, get, unpermute_qk)
    except ValueError as exc:
        if isinstance(exc, GGUFError):
            raise
        raise GGUFError(f"{path}: {exc}") from None
    return LoadedGGUF(path=path, metadata=metadata, config=config, params=params)
