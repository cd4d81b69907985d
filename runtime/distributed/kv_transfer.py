"""A finished prefill as data: its prompt, its first sampled token and its KV, and how that crosses a wire.

Data flow (prefill/decode disaggregation, ``runtime/serving/disagg.py``)::

    prefill engine                                   decode engine
    step() finishes a prefill-only request           add_prefilled_request(PrefilledKV)
      -> ModelRunner.export_kv(block table, n)         -> Scheduler.add_prefilled_request (plain Python)
         gather_kv: pages -> [L, n, KVH, D]            -> schedule(): blocks allocated, 1 decode token
      -> PrefilledKV                                   -> ModelRunner.import_kv: scatter_kv (donated)
      -> encode_prefilled() -> bytes ===transport===> decode_prefilled(bytes) -> PrefilledKV

The KV travels per *token*, not per page ([layers, tokens, kv_heads, head_dim]), so the two engines
may use different block sizes and block ids: the receiver scatters the tokens into whatever blocks
its own pool hands out. An 8-bit cache (``QuantizedPages``) travels as its codes plus its bfloat16
scales, exactly as stored: nothing is requantized on either side.

``fingerprint`` names everything that changes the KV values (model file, dtype, KV dtype, weight
quantization: the prefix-cache salt). The receiver refuses a payload whose fingerprint differs from its
own: its blocks are registered in its prefix cache under hashes of the prompt tokens, and KV computed by
another model or precision must never be found there.

Wire format (no pickle; every length is checked before anything is read)::

    b"JXKV" | u32 version | u32 header length H | H bytes of UTF-8 JSON | array bytes, back to back
    header: {"prompt_token_ids", "first_token", "fingerprint", "kv_dtype", "num_cached_tokens",
             "arrays": [{"name", "dtype", "shape", "nbytes"}, ...]}       (little-endian, C order)

The jitted ``gather_kv`` / ``scatter_kv`` pad the token count to a power of two (at least 16) so a
handful of programs serve every prompt length; padding rows read from and write to slot 0, the null
block, which no request owns.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

from runtime.api import PrefillHandover
from runtime.quant.kv import LanePages, LaneScales, QuantizedPages

MAGIC = b"JXKV"
VERSION = 1
_PREFIX = struct.Struct("<4sII")  # magic, version, header length
MAX_HEADER_BYTES = 16 * 2**20

# The array dtypes a payload may carry (KV in float32 / bfloat16, 8-bit codes, bfloat16 scales).
WIRE_DTYPES = {
    "float32": np.dtype(np.float32),
    "bfloat16": np.dtype(ml_dtypes.bfloat16),
    "int8": np.dtype(np.int8),
    "float8_e4m3fn": np.dtype(ml_dtypes.float8_e4m3fn),
}
_ARRAY_NAMES = ("k", "v", "k_scales", "v_scales")


class KVTransferError(ValueError):
    """A payload that is malformed, or that does not fit the engine receiving it."""


@dataclass
class PrefilledKV(PrefillHandover):
    """One request's finished prefill: the KV arrays behind ``runtime.api.PrefillHandover``.

    ``k``/``v``: ``[layers, num_prompt_tokens, kv_heads, head_dim]`` in the cache's storage dtype
    (codes for an 8-bit cache); ``k_scales``/``v_scales``: ``[layers, num_prompt_tokens, kv_heads]``
    bfloat16 for an 8-bit cache, None otherwise. Host NumPy arrays here; a device-to-device transport
    would hold ``jax.Array``s in the same layout.
    """

    prompt_token_ids: list[int]
    first_token: int
    fingerprint: str
    kv_dtype: str  # the engine's KV format name: float32 | bfloat16 | int8 | fp8
    k: np.ndarray
    v: np.ndarray
    k_scales: np.ndarray | None = None
    v_scales: np.ndarray | None = None
    num_cached_tokens: int = 0  # prompt tokens the prefill side found in its own prefix cache (info)
    # (k, v, k_scales, v_scales) padded to the transfer bucket and on the device (``stage``): what the
    # import scatters. Not part of the wire format.
    staged: tuple | None = None

    @property
    def num_tokens(self) -> int:
        return len(self.prompt_token_ids)

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in self.arrays().values())

    def arrays(self) -> dict[str, np.ndarray]:
        out = {"k": self.k, "v": self.v}
        if self.k_scales is not None:
            out.update(k_scales=self.k_scales, v_scales=self.v_scales)
        return out

    def validate(self) -> None:
        """Shapes agree with each other and with the prompt; raises KVTransferError."""
        n = self.num_tokens
        if n < 1:
            raise KVTransferError("the prefill has no prompt tokens")
        if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in self.prompt_token_ids):
            raise KVTransferError("prompt_token_ids must be ints >= 0")
        if not isinstance(self.first_token, int) or isinstance(self.first_token, bool) or self.first_token < 0:
            raise KVTransferError(f"first_token must be an int >= 0, got {self.first_token!r}")
        if self.k.ndim != 4 or self.k.shape != self.v.shape or self.k.dtype != self.v.dtype or self.k.shape[1] != n:
            raise KVTransferError(
                f"k and v must both be [layers, {n}, kv_heads, head_dim] in one dtype; got "
                f"{self.k.shape} {self.k.dtype} and {self.v.shape} {self.v.dtype}"
            )
        if (self.k_scales is None) != (self.v_scales is None):
            raise KVTransferError("k_scales and v_scales come together")
        if self.k_scales is not None:
            want = self.k.shape[:3]
            if self.k_scales.shape != want or self.v_scales.shape != want:
                raise KVTransferError(
                    f"scales must be {list(want)}; got {self.k_scales.shape} and {self.v_scales.shape}"
                )


# ---------------------------------------------------------------- wire format


def encode_prefilled(p: PrefilledKV) -> bytes:
    """The payload as one bytes object: prefix, JSON header, raw array bytes."""
    p.validate()
    arrays = p.arrays()
    header = {
        "prompt_token_ids": p.prompt_token_ids,
        "first_token": p.first_token,
        "fingerprint": p.fingerprint,
        "kv_dtype": p.kv_dtype,
        "num_cached_tokens": p.num_cached_tokens,
        "arrays": [
            {"name": k, "dtype": a.dtype.name, "shape": list(a.shape), "nbytes": int(a.nbytes)}
            for k, a in arrays.items()
        ],
    }
    head = json.dumps(header, separators=(",", ":")).encode()
    parts = [_PREFIX.pack(MAGIC, VERSION, len(head)), head]
    parts += [np.ascontiguousarray(a).tobytes() for a in arrays.values()]  # native order: little-endian hosts
    return b"".join(parts)


def decode_prefilled(data: bytes | memoryview) -> PrefilledKV:
    """Parse a payload from ``encode_prefilled``; raises KVTransferError on anything malformed."""
    data = memoryview(data)
    if len(data) < _PREFIX.size:
        raise KVTransferError(f"payload of {len(data)} bytes is shorter than its {_PREFIX.size}-byte prefix")
    magic, version, head_len = _PREFIX.unpack_from(data)
    if magic != MAGIC:
        raise KVTransferError(f"not a KV payload (magic {bytes(magic)!r})")
    if version != VERSION:
        raise KVTransferError(f"KV payload version {version}; this runtime reads version {VERSION}")
    if head_len > MAX_HEADER_BYTES or _PREFIX.size + head_len > len(data):
        raise KVTransferError(f"header length {head_len} does not fit in a {len(data)}-byte payload")
    try:
        header = json.loads(bytes(data[_PREFIX.size : _PREFIX.size + head_len]))
    except ValueError as exc:
        raise KVTransferError(f"the payload header is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise KVTransferError("the payload header must be a JSON object")
    offset = _PREFIX.size + head_len
    arrays: dict[str, np.ndarray] = {}
    for spec in _field(header, "arrays", list):
        name, dtype, shape, nbytes = _array_spec(spec)
        if name in arrays:
            raise KVTransferError(f"array {name!r} appears twice")
        if offset + nbytes > len(data):
            raise KVTransferError(f"array {name!r} ({nbytes} bytes) runs past the end of the payload")
        arrays[name] = np.frombuffer(data, dtype, count=int(np.prod(shape)), offset=offset).reshape(shape)
        offset += nbytes
    if offset != len(data):
        raise KVTransferError(f"{len(data) - offset} bytes left over after the arrays")
    if "k" not in arrays or "v" not in arrays:
        raise KVTransferError("the payload must carry arrays 'k' and 'v'")
    p = PrefilledKV(
        prompt_token_ids=_field(header, "prompt_token_ids", list),
        first_token=_field(header, "first_token", int),
        fingerprint=_field(header, "fingerprint", str),
        kv_dtype=_field(header, "kv_dtype", str),
        k=arrays["k"],
        v=arrays["v"],
        k_scales=arrays.get("k_scales"),
        v_scales=arrays.get("v_scales"),
        num_cached_tokens=int(header.get("num_cached_tokens", 0)),
    )
    p.validate()
    return p


def _field(header: dict, key: str, kind: type):
    value = header.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise KVTransferError(f"header field {key!r} must be {kind.__name__}, got {value!r}")
    return value


def _array_spec(spec) -> tuple[str, np.dtype, tuple[int, ...], int]:
    if not isinstance(spec, dict):
        raise KVTransferError("each array spec must be an object")
    name, dtype_name, shape, nbytes = spec.get("name"), spec.get("dtype"), spec.get("shape"), spec.get("nbytes")
    if name not in _ARRAY_NAMES:
        raise KVTransferError(f"unknown array {name!r}; known: {', '.join(_ARRAY_NAMES)}")
    if dtype_name not in WIRE_DTYPES:
        raise KVTransferError(f"array {name!r} has dtype {dtype_name!r}; allowed: {', '.join(WIRE_DTYPES)}")
    if (
        not isinstance(shape, list)
        or not 1 <= len(shape) <= 4
        or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)
    ):
        raise KVTransferError(f"array {name!r} has a bad shape {shape!r}")
    dtype = WIRE_DTYPES[dtype_name]
    expected = int(np.prod(shape)) * dtype.itemsize
    if nbytes != expected:
        raise KVTransferError(f"array {name!r}: {nbytes!r} bytes declared, shape {shape} {dtype_name} is {expected}")
    return name, dtype, tuple(shape), expected


# ---------------------------------------------------------------- device side (the model runner calls these)


def transfer_bucket(num_tokens: int) -> int:
    """Tokens padded to a power of two >= 16: the few shapes gather_kv / scatter_kv compile for."""
    return 1 << (max(num_tokens, 16) - 1).bit_length()


def _flat(pages):
    p, page = pages.shape[:2]
    return pages.reshape(p * page, *pages.shape[2:])


def _rows(pages, slots):
    """The ``[T, KVH, D]`` rows (or ``[T, KVH]`` scales) at ``slots`` of a page array or ``LanePages``."""
    if isinstance(pages, LanePages):
        return pages.from_lanes(_flat(pages.data)[slots])
    if isinstance(pages, LaneScales):
        return pages.get(slots)
    return _flat(pages)[slots]


def _put_rows(pages, slots, rows):
    """``pages`` with ``rows`` ``[T, KVH, D]`` (or scales ``[T, KVH]``) at ``slots``."""
    if isinstance(pages, LanePages):
        return pages.with_data(_put_rows(pages.data, slots, pages.to_lanes(rows)))
    if isinstance(pages, LaneScales):
        return pages.set(slots, rows)
    return _flat(pages).at[slots].set(rows).reshape(pages.shape)


@jax.jit
def gather_kv(kv_caches, slots: jax.Array):
    """Per-layer ``(K, V)`` pages -> stacked ``[L, T, KVH, D]`` K and V (and ``[L, T, KVH]`` scales for
    an 8-bit cache) of the tokens at ``slots`` int32[T] (page * page_size + offset). Read only."""

    def take(pages):
        if isinstance(pages, QuantizedPages):
            return _rows(pages.codes, slots), _rows(pages.scales, slots)
        return _rows(pages, slots), None

    ks, vs = zip(*[(take(k), take(v)) for k, v in kv_caches])
    k = jnp.stack([c for c, _ in ks])
    v = jnp.stack([c for c, _ in vs])
    if ks[0][1] is None:
        return k, v, None, None
    return k, v, jnp.stack([s for _, s in ks]), jnp.stack([s for _, s in vs])


def _scatter(kv_caches, slots, k, v, k_scales, v_scales):
    def put(pages, x, s, layer):
        if isinstance(pages, QuantizedPages):
            return QuantizedPages(_put_rows(pages.codes, slots, x[layer]), _put_rows(pages.scales, slots, s[layer]))
        return _put_rows(pages, slots, x[layer])

    return [(put(kp, k, k_scales, i), put(vp, v, v_scales, i)) for i, (kp, vp) in enumerate(kv_caches)]


# The cache is donated, as in the step: the imported tokens are written in place.
scatter_kv = jax.jit(_scatter, donate_argnums=(0,))


def stage(p: PrefilledKV) -> tuple:
    """The payload's arrays padded to ``transfer_bucket(num_tokens)`` tokens and put on the device.

    Tens of MB of copies for a long prompt: a decode server does this on a worker thread as soon as
    the payload arrives, so the engine's step thread, which decodes everyone else, only runs the
    scatter (``ModelRunner.import_kv``)."""
    n, t = p.num_tokens, transfer_bucket(p.num_tokens)

    def pad(a):
        if a is None:
            return None
        out = np.zeros((a.shape[0], t, *a.shape[2:]), a.dtype)
        out[:, :n] = a
        return jax.device_put(out)

    return tuple(pad(a) for a in (p.k, p.v, p.k_scales, p.v_scales))
