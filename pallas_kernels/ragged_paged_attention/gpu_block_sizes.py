"""Tile sizes of the GPU (Triton) ragged paged-attention kernel: a table by device kind and shape, and a rule.

``gpu_block_sizes(device_kind, head_dim=, num_q_heads=, num_kv_heads=, page_size=, dtype=,
kv_dtype=)`` returns the ``BlockSizes`` (block_q, pages_per_block, num_warps, num_stages) that
``ragged_paged_attention(block_sizes=None)`` uses. Lookup order:

1. ``device_kind`` (``jax.Device.device_kind``, e.g. "NVIDIA H100 80GB HBM3") -> a family by
   substring: H100/H200/H800 -> hopper, A100/A800 -> ampere, L4/L40 -> ada, anything else
   (including "" for a CPU process cross-lowering for cuda) -> fallback.
2. ``TableKey(family, head_dim, group, page_size, dtype, kv_dtype)`` in ``TUNED``, where ``group``
   is the kernel's padded group ``next_pow2(num_q_heads // num_kv_heads)``.
3. Otherwise ``rule(...)``: the fallback rule below.

The rule, per program (``rows = group * block_q`` query rows, ``block_k = pages_per_block *
page_size`` keys per online-softmax step, everything a power of two):

* rows: 64 for head_dim <= 128, 32 above (the float32 accumulator ``[rows, head_dim]`` then holds
  at most 8192 values: 64 registers a thread at 4 warps), never below 16 (Triton's matmul
  minimum) and never below the group (block_q >= 1).
* block_k and num_stages: the largest of 64, 32, 16 keys (at least one page) whose K and V tiles,
  times the pipelining depth, plus the q tile and the score tile, fit the family's shared memory
  per block, at the family's preferred depth or less but at least 2; only if no block fits at 2
  stages, 1 stage. (Gemma 3's head_dim 256 on Ada: 32 keys x 2 stages, not 64 keys x 1.)
* num_warps: 4; 8 once the accumulator exceeds 8192 values, which only a group bigger than the row
  target does (over 64 q heads per kv head at head_dim 128, over 32 at 256).

With a power-of-two ``page_size`` and ``head_dim >= 16`` (a power of two), the result always
passes the kernel's Triton tile check (``kernel._check_triton_tiles``: block_q a power of two,
rows >= 16, block_k a power of two >= 16). Any other page size or head dim cannot be tiled for
Triton at all; the rule still returns sizes and the kernel raises a ValueError naming the problem.

Provenance: every value here comes from the arithmetic above (register and shared-memory
budgets), none from a timing; no GPU has run this kernel yet. ``TUNED`` pins the shapes of the
models this project serves (SmolLM2-135M: head_dim 64, 9/3 heads; Gemma 3 270M: head_dim 256, 4/1
heads; a Llama-3-8B-shaped head_dim 128, 32/8 heads) so that a later change of the rule does not
silently retune them; replace an entry only with a measurement on that device kind.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax.numpy as jnp

KiB = 1024


@dataclasses.dataclass(frozen=True)
class BlockSizes:
    """Tuning knobs of the Pallas kernel (static; they never change the result).

    block_q:          query tokens per program; each program handles them for every q head of one
                      kv head's group, i.e. a ``[next_pow2(group) * block_q, head_dim]`` tile.
    pages_per_block:  KV pages gathered per inner-loop iteration (``block_k = pages_per_block *
                      page_size`` keys per online-softmax step).

    num_warps:        Triton warps per program (32 threads each); compiled only.
    num_stages:       Triton software-pipelining depth of the key-block loop; compiled only.

    Compiled on GPU (Triton) every tile size must be a power of two and matmul dims >= 16:
    ``block_q`` a power of two with ``next_pow2(group) * block_q >= 16``, ``pages_per_block *
    page_size`` a power of two >= 16, ``head_dim`` a power of two >= 16. ``gpu_block_sizes`` (the
    table behind ``block_sizes=None``) always meets these where they can be met.
    """

    block_q: int = 16
    pages_per_block: int = 2
    num_warps: int = 4
    num_stages: int = 2

    def __post_init__(self):
        for name in ("block_q", "pages_per_block", "num_warps", "num_stages"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"BlockSizes.{name} must be an int >= 1, got {value!r}")


class Family(NamedTuple):
    """What the rule needs to know about a GPU generation."""

    smem_per_block: int  # max dynamic shared memory one program (CTA) may use, bytes
    num_stages: int  # preferred software-pipelining depth of the key-block loop


FAMILIES = {
    "hopper": Family(smem_per_block=227 * KiB, num_stages=3),  # H100 / H200: 228 KiB per SM
    "ampere": Family(smem_per_block=163 * KiB, num_stages=3),  # A100: 164 KiB per SM
    "ada": Family(smem_per_block=99 * KiB, num_stages=2),  # L4 / L40(S): 100 KiB per SM
    "fallback": Family(smem_per_block=99 * KiB, num_stages=2),  # fits every sm_80+ part
}
# Substring of jax's device_kind -> family, checked in order.
FAMILY_MARKERS = (
    ("H100", "hopper"),
    ("H200", "hopper"),
    ("H800", "hopper"),
    ("A100", "ampere"),
    ("A800", "ampere"),
    ("L40", "ada"),
    ("L4", "ada"),
)


def gpu_family(device_kind: str) -> str:
    """ "NVIDIA H200" -> "hopper"; unknown kinds (and "") -> "fallback"."""
    for marker, family in FAMILY_MARKERS:
        if marker in device_kind:
            return family
    return "fallback"


@dataclasses.dataclass(frozen=True)
class TableKey:
    family: str  # a key of FAMILIES
    head_dim: int
    group: int  # next_pow2(num_q_heads // num_kv_heads): the kernel's padded group
    page_size: int
    dtype: str  # q's dtype name: "bfloat16" | "float32"
    kv_dtype: str  # the cache's dtype name: q's, or "int8" | "float8_e4m3fn"


def _next_pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def _itemsize(dtype) -> int:
    return jnp.dtype(dtype).itemsize


def _smem_bytes(rows: int, block_k: int, head_dim: int, num_stages: int, q_bytes: int, kv_bytes: int) -> int:
    """Estimated shared memory of one program: the pipelined K and V tiles as loaded, their
    dequantized copies when the cache is 8-bit (the dot's operands), the q tile and the p tile."""
    kv_tiles = num_stages * 2 * block_k * head_dim * kv_bytes
    dequantized = 2 * block_k * head_dim * q_bytes if kv_bytes != q_bytes else 0
    return kv_tiles + dequantized + rows * head_dim * q_bytes + rows * block_k * 4


def rule(family: str, *, head_dim: int, group: int, page_size: int, dtype, kv_dtype) -> BlockSizes:
    """The fallback rule (module docstring). ``group`` is already padded to a power of two."""
    spec = FAMILIES[family]
    q_bytes, kv_bytes = _itemsize(dtype), _itemsize(kv_dtype)
    block_q = max(1, (64 if head_dim <= 128 else 32) // group)
    rows = group * block_q
    num_warps = 8 if rows * head_dim > 8192 else 4
    # Pipelining first (at least 2 stages where the family prefers it), then the biggest key block.
    for min_stages in (min(2, spec.num_stages), 1):
        for keys in (64, 32, 16):
            pages_per_block = max(1, keys // page_size)
            for num_stages in range(spec.num_stages, min_stages - 1, -1):
                smem = _smem_bytes(rows, pages_per_block * page_size, head_dim, num_stages, q_bytes, kv_bytes)
                if smem <= spec.smem_per_block:
                    return BlockSizes(
                        block_q=block_q, pages_per_block=pages_per_block, num_warps=num_warps, num_stages=num_stages
                    )
    # Not even one stage of the smallest block fits (a page bigger than shared memory): Triton decides.
    return BlockSizes(block_q=block_q, pages_per_block=1, num_warps=num_warps, num_stages=1)


BF16, I8, F8 = "bfloat16", "int8", "float8_e4m3fn"
# Pinned entries: page size 16 (the engine's default), bfloat16 activations, each cache dtype, for
# head_dim 64 / group 3 -> 4 (SmolLM2-135M), 256 / 4 (Gemma 3 270M), 128 / 4 (Llama-3-8B). Values
# from the rule's arithmetic, not from timings (module docstring).
TUNED: dict[TableKey, BlockSizes] = {
    # Hopper, 227 KiB: three stages everywhere (head_dim 256, bf16: 3*2*64*256*2 + 32*256*2 + 32*64*4 = 216 KiB).
    TableKey("hopper", 64, 4, 16, BF16, BF16): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 64, 4, 16, BF16, I8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 64, 4, 16, BF16, F8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 256, 4, 16, BF16, BF16): BlockSizes(8, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 256, 4, 16, BF16, I8): BlockSizes(8, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 256, 4, 16, BF16, F8): BlockSizes(8, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 128, 4, 16, BF16, BF16): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 128, 4, 16, BF16, I8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("hopper", 128, 4, 16, BF16, F8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    # Ampere (A100), 163 KiB: head_dim 256 drops to two stages (3 would need 216 KiB in bfloat16, 184 in int8).
    TableKey("ampere", 64, 4, 16, BF16, BF16): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("ampere", 64, 4, 16, BF16, I8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("ampere", 64, 4, 16, BF16, F8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("ampere", 256, 4, 16, BF16, BF16): BlockSizes(8, 4, num_warps=4, num_stages=2),
    TableKey("ampere", 256, 4, 16, BF16, I8): BlockSizes(8, 4, num_warps=4, num_stages=2),
    TableKey("ampere", 256, 4, 16, BF16, F8): BlockSizes(8, 4, num_warps=4, num_stages=2),
    TableKey("ampere", 128, 4, 16, BF16, BF16): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("ampere", 128, 4, 16, BF16, I8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    TableKey("ampere", 128, 4, 16, BF16, F8): BlockSizes(16, 4, num_warps=4, num_stages=3),
    # Ada (L4, L40S), 99 KiB: two stages; head_dim 256 keeps them with 32-key blocks
    # (2*2*32*256*2 + 32*256*2 + 32*32*4 = 84 KiB) rather than 64 keys in one stage.
    TableKey("ada", 64, 4, 16, BF16, BF16): BlockSizes(16, 4, num_warps=4, num_stages=2),
    TableKey("ada", 64, 4, 16, BF16, I8): BlockSizes(16, 4, num_warps=4, num_stages=2),
    TableKey("ada", 64, 4, 16, BF16, F8): BlockSizes(16, 4, num_warps=4, num_stages=2),
    TableKey("ada", 256, 4, 16, BF16, BF16): BlockSizes(8, 2, num_warps=4, num_stages=2),
    TableKey("ada", 256, 4, 16, BF16, I8): BlockSizes(8, 2, num_warps=4, num_stages=2),
    TableKey("ada", 256, 4, 16, BF16, F8): BlockSizes(8, 2, num_warps=4, num_stages=2),
    TableKey("ada", 128, 4, 16, BF16, BF16): BlockSizes(16, 4, num_warps=4, num_stages=2),
    TableKey("ada", 128, 4, 16, BF16, I8): BlockSizes(16, 4, num_warps=4, num_stages=2),
    TableKey("ada", 128, 4, 16, BF16, F8): BlockSizes(16, 4, num_warps=4, num_stages=2),
}


def gpu_block_sizes(
    device_kind: str, *, head_dim: int, num_q_heads: int, num_kv_heads: int, page_size: int, dtype, kv_dtype=None
) -> BlockSizes:
    """Block sizes for the GPU kernel on ``device_kind`` at this shape: the table, else the rule.

    Args:
      device_kind:  ``jax.Device.device_kind`` ("NVIDIA H100 80GB HBM3", ...); "" when no GPU is
                    attached (a CPU process lowering for cuda): the fallback family.
      head_dim, num_q_heads, num_kv_heads, page_size: the attention shape.
      dtype:        q's dtype (float32 | bfloat16).
      kv_dtype:     the cache's dtype when it differs from q's (int8 | float8_e4m3fn), else None.
    Returns:
      a ``BlockSizes`` with num_warps and num_stages set.
    """
    group = _next_pow2(max(1, num_q_heads // max(1, num_kv_heads)))
    dtype_name = jnp.dtype(dtype).name
    kv_name = dtype_name if kv_dtype is None else jnp.dtype(kv_dtype).name
    family = gpu_family(device_kind)
    key = TableKey(family, head_dim, group, page_size, dtype_name, kv_name)
    if key in TUNED:
        return TUNED[key]
    return rule(family, head_dim=head_dim, group=group, page_size=page_size, dtype=dtype_name, kv_dtype=kv_name)
