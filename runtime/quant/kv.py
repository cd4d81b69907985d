"""KV-cache storage formats: plain float pages, or 8-bit codes with one scale per token and kv head.

In: the K or V of this step's tokens, ``[T, kv_heads, head_dim]`` in the activation dtype. Out: what
``write_kv`` scatters into the cache. Readers (the attention backends) get the codes and the scales
and dequantize the pages they read; the model itself never sees which format the cache has (the
quantized cache is a different pytree, ``QuantizedPages`` in place of each page array).

Formats (``EngineConfig.kv_dtype``; the same names in ``runtime.kv_calc``)::

    float32 / bfloat16   pages [P, page, KVH, D] in that dtype
    int8                 codes int8 [P, page, KVH, D] + scales bfloat16 [P, page, KVH]
    fp8                  codes float8_e4m3fn [P, page, KVH, D] + scales bfloat16 [P, page, KVH]

Layouts: the pages above are ``[P, page, KVH, D]`` (heads), what the XLA, CPU and GPU paths read. The TPU
kernel reads ``LanePages`` instead: ``[P, page, lanes]``, each page row one token's K (or V) of every kv
head side by side, padded to whole 128-lane vregs (``runtime.core.kv_sizing.lane_width``)::

    one group:   lanes = round_up(KVH * D, 128)          SmolLM2 (3 x 64):  | h0 | h1 | h2 | pad 64 |  256
    TP over N:   lanes = N * round_up(KVH/N * D, 128)    SmolLM2, N = 3:    | h0 pad | h1 pad | h2 pad |  3 x 128

Why: on a TPU, XLA tiles the two minor dimensions of an array (8 x 128 for 32-bit, 16 x 128 for bfloat16),
so ``[P, page, KVH, D]`` puts ``[KVH, D]`` in a tile and the kernel's ``[P, page, KVH * D]`` view of it is
not a free reshape: XLA relaid every layer's K and V out before each attention call (4-8 GiB of temporaries
in the compile check's attention cases, a read and a write of the cache a step). With the lanes layout the
cache is what the kernel DMAs, page by page. Under tensor parallelism each device holds one group (its own
kv heads, padded on their own), so its shard is the single-device layout of its heads. An 8-bit cache's
scales are ``LaneScales`` ``[P, 1, lanes]`` float32 then: a page's scales one row, head by head (``page`` of
them each), padded the same way. As ``[P, page, KVH]`` XLA stored them compactly and relaid them out to whole
128-lane tiles before every call (12-97% of the compile check's 8-bit attention cases' KV in temporaries);
a ``[P, 1, lanes]`` bfloat16 row was still copied (XLA's layout for it tiles the page axis, Mosaic's packs
two rows a sublane), while float32 ``[P, 1, lanes]`` is ``T(1,128)`` for both: no copy, measured with
libtpu's compiler. Float32 holds the bfloat16 scale exactly. The padding is real memory (SmolLM2: 256 lanes
a token for 192; a page of 16 tokens x 3 heads, 48 scales, in a 128-lane float32 row: 32 bytes a token and
layer for K and V against 12) and the engine sizes the cache with it (``runtime.core.kv_sizing``).

Quantization is symmetric, per token and kv head (one vector of ``head_dim`` values)::

    scale = absmax(x) / QMAX          QMAX = 127 (int8), 448 (the largest finite e4m3fn)
    code  = round(x / scale)          int8: round to nearest; fp8: the cast rounds to nearest e4m3
    x'    = code * scale

Why bfloat16 scales: the codes are computed against the scale *as stored* (rounded to bfloat16
first), so the rounding of the scale costs no accuracy: it only moves the grid. An int8 value still
sits within half a step (scale / 2) of its dequantized code: where the scale rounded down, the
absmax element clips by at most absmax * 2^-8 = 127 / 256 steps. bfloat16 has float32's exponent range, so no scale overflows or
underflows. It stores 2 bytes per 64 codes for head_dim 64 (3%), against 4 (6%) for float32: that
is the difference between 1.94x and 1.88x the tokens of a bfloat16 cache in the same bytes.

Why fp8 keeps a scale: e4m3fn's relative precision (3 mantissa bits) does not depend on a scale,
but its range does (max 448, subnormal below 2^-6): scaling each vector to absmax = 448 keeps small
heads out of the subnormals and outliers out of NaN (e4m3fn has no infinity: a cast of 449+ gives
NaN). It also keeps one code path and one byte count for both 8-bit formats.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from pallas_kernels.devices import check_gpu_kv_dtype
from runtime.api import KV_DTYPE_NAMES, QUANTIZED_KV_DTYPE_NAMES
from runtime.core.kv_sizing import lane_width
from runtime.dtypes import DTYPES

SCALE_DTYPE = jnp.bfloat16
LANE_SCALE_DTYPE = jnp.float32  # LaneScales: the bfloat16 scales held exactly, in a layout XLA and Mosaic share

# name (runtime.api.QUANTIZED_KV_DTYPE_NAMES) -> code dtype; QMAX: the code the absmax of each vector maps to.
QUANTIZED_KV_DTYPES = {"int8": jnp.dtype(jnp.int8), "fp8": jnp.dtype(jnp.float8_e4m3fn)}
QMAX = {jnp.dtype(jnp.int8): 127.0, jnp.dtype(jnp.float8_e4m3fn): 448.0}
# KV cache storage, name (runtime.api.KV_DTYPE_NAMES) -> dtype: the float dtypes, or 8-bit codes + scales.
KV_DTYPES = {**DTYPES, **QUANTIZED_KV_DTYPES}
assert tuple(QUANTIZED_KV_DTYPES) == QUANTIZED_KV_DTYPE_NAMES and tuple(KV_DTYPES) == KV_DTYPE_NAMES, KV_DTYPES


class _Lanes:
    """``data [P, rows, lanes]`` with its geometry (static: the pytree's aux data, so it survives ``jit``,
    ``eval_shape`` and ``shard_map``): ``num_kv_heads`` heads of ``width`` values each in ``groups`` groups,
    group ``g``'s heads side by side from lane ``g * group_lanes``, the rest zeros."""

    def __init__(self, data, num_kv_heads: int, width: int, groups: int = 1):
        if num_kv_heads % groups:
            raise ValueError(f"{num_kv_heads} kv heads do not split into {groups} groups")
        self.data, self.num_kv_heads, self.width, self.groups = data, num_kv_heads, width, groups

    def tree_flatten(self):
        return (self.data,), (self.num_kv_heads, self.width, self.groups)

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(children[0], *aux)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.data!r}, {self.num_kv_heads} kv heads x {self.width}, {self.groups} groups)"
        )

    @property
    def group_lanes(self) -> int:
        return lane_width(self.num_kv_heads // self.groups, self.width)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)

    def with_data(self, data):
        return type(self)(data, self.num_kv_heads, self.width, self.groups)

    def local(self):
        """One group's view (a device's shard under tensor parallelism): its kv heads, one group."""
        return type(self)(self.data, self.num_kv_heads // self.groups, self.width, 1)


@jax.tree_util.register_pytree_node_class
class LanePages(_Lanes):
    """The TPU kernel's page array ``data [P, page, lanes]``: a token's row, each kv head's ``head_dim`` values
    (``width``) side by side per group."""

    @property
    def head_dim(self) -> int:
        return self.width

    def to_lanes(self, x: jax.Array) -> jax.Array:
        """Rows ``[..., KVH, D]`` -> ``[..., lanes]`` in this layout (padding lanes zero)."""
        lead, g = x.shape[:-2], self.groups
        x = x.reshape(*lead, g, (self.num_kv_heads // g) * self.head_dim)
        pad = self.group_lanes - x.shape[-1]
        if pad:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, pad)])
        return x.reshape(*lead, g * self.group_lanes)

    def from_lanes(self, y: jax.Array) -> jax.Array:
        """``[..., lanes]`` -> rows ``[..., KVH, D]`` (the padding dropped)."""
        lead, g = y.shape[:-1], self.groups
        y = y.reshape(*lead, g, self.group_lanes)[..., : (self.num_kv_heads // g) * self.head_dim]
        return y.reshape(*lead, self.num_kv_heads, self.head_dim)


@jax.tree_util.register_pytree_node_class
class LaneScales(_Lanes):
    """An 8-bit ``LanePages`` cache's scales ``data [P, 1, lanes]``: each page's one row, each kv head's
    ``page_size`` scales (``width``) in token order side by side per group."""

    @property
    def page_size(self) -> int:
        return self.width

    def _where(self, slots: jax.Array) -> tuple[jax.Array, jax.Array]:
        """(page [T, 1], lane [T, KVH]) of each slot's scale of each kv head."""
        page, offset = slots // self.page_size, slots % self.page_size
        heads = np.arange(self.num_kv_heads)
        per_group = self.num_kv_heads // self.groups
        first = (heads // per_group) * self.group_lanes + (heads % per_group) * self.page_size  # [KVH]
        return page[:, None], first[None, :] + offset[:, None]

    def get(self, slots: jax.Array) -> jax.Array:
        """The scales ``[T, KVH]`` of slots ``slots`` int32[T] (page * page_size + offset)."""
        page, lane = self._where(slots)
        return self.data[page, 0, lane]

    def set(self, slots: jax.Array, scales: jax.Array) -> LaneScales:
        """These scales with ``scales [T, KVH]`` at ``slots``."""
        page, lane = self._where(slots)
        return self.with_data(self.data.at[page, 0, lane].set(scales.astype(self.dtype), mode="promise_in_bounds"))


class QuantizedPages(NamedTuple):
    """A quantized page array: stands where a float ``[P, page, KVH, D]`` page array (or ``LanePages``) would."""

    codes: jax.Array  # int8 | float8_e4m3fn [P, page, KVH, D], or LanePages of them
    scales: jax.Array  # bfloat16 [P, page, KVH], or LaneScales beside LanePages codes

    @property
    def shape(self) -> tuple[int, ...]:
        return self.codes.shape

    @property
    def nbytes(self) -> int:
        return int(self.codes.nbytes) + int(self.scales.nbytes)


def is_quantized(dtype) -> bool:
    return dtype is not None and jnp.dtype(dtype) in QMAX


def quantize(x: jax.Array, code_dtype) -> tuple[jax.Array, jax.Array]:
    """x [..., D] -> (codes [..., D] in code_dtype, scales [...] bfloat16), one scale per vector.

    A vector of zeros gets scale 0 and codes 0 (dequantizes to exact zeros).
    """
    code_dtype = jnp.dtype(code_dtype)
    qmax = QMAX[code_dtype]
    x32 = x.astype(jnp.float32)
    absmax = jnp.max(jnp.abs(x32), axis=-1)
    scales = (absmax / qmax).astype(SCALE_DTYPE)
    s = scales.astype(jnp.float32)[..., None]
    y = jnp.clip(x32 / jnp.where(s > 0, s, 1.0), -qmax, qmax)  # clip: the scale may have rounded down
    if code_dtype == jnp.int8:
        y = jnp.round(y)  # astype alone truncates toward zero
    return y.astype(code_dtype), scales


def dequantize(codes: jax.Array, scales: jax.Array, dtype=jnp.float32) -> jax.Array:
    """(codes [..., D], scales [...]) -> [..., D] in dtype (computed in float32)."""
    return (codes.astype(jnp.float32) * scales.astype(jnp.float32)[..., None]).astype(dtype)


def allocate_pages(shape: tuple[int, int, int, int], dtype, lane_groups: int = 0) -> jax.Array | QuantizedPages:
    """Zeroed pages ``[P, page, KVH, D]``: a float array, or codes + scales for an 8-bit dtype. With
    ``lane_groups`` (>= 1) the pages (or codes) are ``LanePages`` of that many groups (the TPU kernel's)."""
    P, page, kvh, d = shape

    def pages(dt):
        if not lane_groups:
            return jnp.zeros(shape, dt)
        return LanePages(jnp.zeros((P, page, lane_width(kvh, d, lane_groups)), dt), kvh, d, lane_groups)

    if is_quantized(dtype):
        if not lane_groups:
            return QuantizedPages(pages(dtype), jnp.zeros(shape[:3], SCALE_DTYPE))
        scales = jnp.zeros((P, 1, lane_width(kvh, page, lane_groups)), LANE_SCALE_DTYPE)
        return QuantizedPages(pages(dtype), LaneScales(scales, kvh, page, lane_groups))
    return pages(dtype)


def split_pages(pages) -> tuple[jax.Array, jax.Array | None]:
    """Page array -> (pages or codes, scales or None), the form the attention backends take."""
    if isinstance(pages, QuantizedPages):
        return pages.codes, pages.scales
    return pages, None


def kv_dtype_support_error(kv_dtype: str, backend: str, platform: str | None = None) -> str | None:
    """Why ``kv_dtype`` cannot run with this attention backend here, or None when it can.

    int8 needs nothing special. fp8 needs XLA float8 converts on the device (probed) and, for the
    compiled Pallas kernel on a GPU, Triton's e4m3 type, which needs compute capability 8.9+.
    """
    if kv_dtype != "fp8":
        return None
    platform = platform or jax.default_backend()
    try:
        probe = jax.jit(lambda x: x.astype(jnp.float8_e4m3fn).astype(jnp.float32))(jnp.asarray([1.5, -3.0]))
        if not np.array_equal(np.asarray(probe), [1.5, -3.0]):
            return f"kv_dtype 'fp8' is not supported on {platform}: float8_e4m3fn converts give wrong values"
    except Exception as exc:  # XLA refuses the type on this backend
        return f"kv_dtype 'fp8' is not supported on {platform}: XLA cannot convert float8_e4m3fn ({exc})"
    if backend in ("pallas", "pallas_gpu") and platform in ("gpu", "cuda"):
        try:  # the kernel's own check (it refuses the same way when called directly)
            check_gpu_kv_dtype(jnp.float8_e4m3fn, None)
        except ValueError as exc:
            return f"{exc}, or attention_backend 'xla'"
    return None
