"""Ragged paged attention for Hopper and newer GPUs (sm_90+) in Pallas Mosaic GPU: pages streamed through SMEM.

Same contract as ``kernel.ragged_paged_attention`` (the Triton kernel, which stays for sm_80): the same
arguments (``paged_attention_api``), the same ``validate_inputs`` and the same jnp reference
(``ragged_paged_attention_reference``) in the tests. Data flow of one program (one sequence, one kv
head, ``block_q`` of the sequence's query tokens)::

    GMEM                                            SMEM                          registers (1 warpgroup)
    q_t [KVH, Tp * gp, D]  -- one TMA, rows ------> q   [rows, D]  (swizzled; via o when gp < 8)
    k/v [P, page, KVH, D]  -- one TMA per page ---> k/v [2, block_k, D] (swizzled)  S = q k^T [rows, block_k]
       (page p, kv head h: a [page, D] box)          slot = key block % 2           m, l [rows]; acc [rows, D]
    o_t [KVH, Tp * gp, D]  <- TMA stores, by bits -- o   [rows, D]  (plain)
                              of the row count

Rows of a tile are token-major, ``row = token * gp + g`` (``gp = next_pow2(q heads per kv head)``,
padded heads are zero and dropped), so a program's query rows are one contiguous box of ``q_t`` and
``rows = block_q * gp`` is 64 (one warpgroup's WGMMA M) by default::

    q_t[h]:  ... | t0 g0 | t0 g1 | t0 g2 | t0 pad | t1 g0 | ... |      (gp = 4, block_q = 16: 64 rows)
                 ^ row0 = (cu_q_lens[seq] + q_block * block_q) * gp

A TMA into a tiled SMEM buffer must start on a whole 8-row tile of the GMEM array, and ``row0`` is a
multiple of 8 only when ``gp`` is (``cu_q_lens`` is any token). For ``gp < 8`` the q tile is copied into
``o`` (plain SMEM, unused until the end), then into the swizzled ``q`` through registers. (JAX 0.10.2
lowers the direct copy at any ``row0`` without a check, splitting it into ``row0 // 8`` and ``row0 % 8``
of the tiled GMEM view; 0.12's layout inference rejects it as an unsatisfiable divisibility constraint.)

The KV cache never leaves GMEM as a whole: its refs are GMEM refs and only ``pages_per_block`` pages
of K and of V are copied (TMA, ``copy_gmem_to_smem``) for a key block, into one of two SMEM slots
while the other slot's block is computed (double buffering across key blocks). Each slot has one
barrier for K and one for V, expecting one arrival per page copy. Page-table entries are clipped to
valid pages; keys past ``kv_len`` are masked out of the scores and, in the last key block only,
zeroed in V's SMEM slot (unused slots may hold NaN, and ``0 * NaN`` would leak through ``p @ v``).
Each key block is one online-softmax step: ``S = q @ k^T`` (WGMMA into an accumulator), scale, soft
cap, causal/window/length mask to ``MASK_VALUE``, ``p = exp(S - m)``, ``acc = alpha * acc + p @ v``
(WGMMA with ``p`` from registers). The output tile goes to SMEM, then to GMEM in TMA stores of
``2^i`` tokens' rows for each set bit ``i`` of the tile's row count (rows of other sequences are
never written), and the wrapper zeroes rows past ``cu_q_lens[num_seqs]``.

Grid: (max_num_seqs, num_kv_heads, cdiv(max_num_tokens, block_q)), like the Triton kernel: programs
whose (sequence, q block) holds no row exit at once.

Limits (``ValueError`` up front, in both modes, since interpret mode runs the same program): q and
the KV cache bfloat16 (an int8/fp8 cache: the Triton kernel); ``head_dim`` a multiple of 32
(WGMMA K and swizzled rows); ``rows = block_q * gp`` a multiple of 64 with ``block_q`` a power of two;
``block_k = pages_per_block * page_size`` a multiple of 64, at most 256, with ``page_size`` a multiple
of 8 (a page lands on whole 8-row SMEM tiles); SMEM (q, o, two K and two V slots) within the chip's
227 KiB a block.

Proof so far (no GPU has run this kernel):

* Numerics, interpret mode. JAX 0.10.2 ships a Mosaic GPU interpreter (private:
  ``jax._src.pallas.mosaic_gpu.interpret``; ``interpret=True`` passes its ``InterpretGPUParams()``) that
  runs this kernel body on CPU, simulating GMEM/SMEM allocations, TMA copies and barriers (it fails a
  kernel that refills a slot whose barrier completion was not yet observed). Three things take another
  route there, because that interpreter cannot run them: the two matmuls are ``jnp`` dots of the SMEM
  tiles as loaded values instead of WGMMA (it cannot read a transposed ref nor run ``run_state``), and
  iotas/layout casts carry no register layout. Tests compare it with the reference.
* Compiled for H100: ``compile_for`` on a compile-only sm_90 device (CUDA plugin, ``.venvs/cuda``) runs
  the Mosaic GPU pipeline to PTX and ptxas for sm_90a (``MOSAIC_GPU_DUMP_PTXAS=1 MOSAIC_GPU_DUMP_TO=dir``
  shows its report) with a 4 GiB-a-layer cache: the ``mosaic_gpu_v2`` custom call, 255 registers at
  head_dim 128 and 256 with a small spill (12 and 180 bytes), 253 and none at head_dim 64. Under JAX
  0.12 (``.venvs/py312-cuda``, an abstract device of platform ``cuda``): 4 and 168 bytes, 230 and none.
* Unproven until a GPU run: the WGMMA path's numerics (layouts, swizzles, barrier phases on hardware)
  and any speed.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu

from pallas_kernels.api import UnsupportedSetting
from pallas_kernels.ragged_paged_attention.kernel import MASK_VALUE, Dims, PagedCall, paged_attention_api

WGMMA_M = 64  # rows of one warpgroup's WGMMA
SMEM_LIMIT_BYTES = 227 * 1024  # opt-in shared memory a block on H100/H200 (sm_90)
TILE_ROWS = 8  # rows of one swizzled SMEM tile
SUPPORTED_DTYPE = jnp.dtype(jnp.bfloat16)
MIN_CAPABILITY = (9, 0)  # WGMMA and TMA: Hopper and newer


@dataclasses.dataclass(frozen=True)
class MosaicGpuBlockSizes:
    """Tuning knobs of the Mosaic GPU kernel (static; they never change the result).

    block_q:          query tokens per program (a power of two); ``block_q * next_pow2(group)`` rows
                      must be a multiple of 64. None: ``64 // next_pow2(group)`` (at least 1).
    pages_per_block:  pages per key block (``block_k = pages_per_block * page_size`` keys per
                      online-softmax step and per double-buffer slot). None: ``mosaic_gpu_block_sizes``'s rule.
    """

    block_q: int | None = None
    pages_per_block: int | None = None

    def __post_init__(self):
        for name in ("block_q", "pages_per_block"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"MosaicGpuBlockSizes.{name} must be None or an int >= 1, got {value!r}")


def _next_pow2(n: int) -> int:
    return 1 << max(0, math.ceil(math.log2(max(n, 1))))


def _is_pow2(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def smem_bytes(rows: int, block_k: int, head_dim: int, itemsize: int = 2) -> int:
    """SMEM a program allocates: the q and o tiles, two K and two V slots (barriers are a few bytes)."""
    return 2 * rows * head_dim * itemsize + 4 * block_k * head_dim * itemsize


def mosaic_gpu_block_sizes(dims: Dims, block_sizes: MosaicGpuBlockSizes | None = None) -> MosaicGpuBlockSizes:
    """``block_sizes`` with its None fields filled by the rule (reasoned, not timed: no GPU has run it).

    block_q: 64 rows (one warpgroup's WGMMA M) over the padded group, ``max(1, 64 // gp)``.
    pages_per_block: the largest key block of 256, 128 or 64 keys (at least one page) whose two K and two
    V slots, with the q and o tiles, fit ``SMEM_LIMIT_BYTES``; 128 at most for head_dim <= 128 and 64 above,
    which bounds the ``[rows, block_k]`` float32 scores a thread holds (64 at 128 keys).
    """
    block_sizes = block_sizes or MosaicGpuBlockSizes()
    gp = _next_pow2(dims.group)
    block_q = block_sizes.block_q or max(1, WGMMA_M // gp)
    ppb = block_sizes.pages_per_block
    if ppb is None:
        rows = block_q * gp
        target = 128 if dims.head_dim <= 128 else 64
        ppb = max(1, target // dims.page_size)
        while ppb > 1 and smem_bytes(rows, ppb * dims.page_size, dims.head_dim) > SMEM_LIMIT_BYTES:
            ppb //= 2
    return MosaicGpuBlockSizes(block_q=block_q, pages_per_block=ppb)


def check_supported(dims: Dims, q_dtype, kv_dtype, block_sizes: MosaicGpuBlockSizes) -> None:
    """ValueError naming the limit when this kernel cannot run a call of ``dims`` with ``block_sizes`` (resolved)."""
    if jnp.dtype(kv_dtype) != SUPPORTED_DTYPE:
        raise UnsupportedSetting(
            f"the Mosaic GPU attention kernel reads only a bfloat16 KV cache, got {jnp.dtype(kv_dtype).name}: "
            "use ragged_paged_attention (Triton) for an 8-bit cache"
        )
    if jnp.dtype(q_dtype) != SUPPORTED_DTYPE:
        raise ValueError(f"the Mosaic GPU attention kernel needs bfloat16 q, got {jnp.dtype(q_dtype).name}")
    if dims.head_dim % 32:
        raise ValueError(f"the Mosaic GPU attention kernel needs head_dim a multiple of 32, got {dims.head_dim}")
    gp = _next_pow2(dims.group)
    block_q, ppb = block_sizes.block_q, block_sizes.pages_per_block
    rows = block_q * gp
    if not _is_pow2(block_q) or rows % WGMMA_M:
        raise ValueError(
            f"the Mosaic GPU attention kernel needs a power-of-two block_q with block_q * next_pow2(group) a multiple "
            f"of {WGMMA_M} (WGMMA rows), got block_q {block_q} and group {dims.group}"
        )
    if dims.page_size % TILE_ROWS:
        raise ValueError(
            f"the Mosaic GPU attention kernel needs page_size a multiple of {TILE_ROWS} (a page is copied onto whole "
            f"SMEM tiles), got {dims.page_size}"
        )
    block_k = ppb * dims.page_size
    if block_k % 64 or block_k > 256:
        raise ValueError(
            f"the Mosaic GPU attention kernel needs pages_per_block * page_size to be a multiple of 64 and at most "
            f"256, got {ppb} * {dims.page_size} = {block_k}"
        )
    need = smem_bytes(rows, block_k, dims.head_dim)
    if need > SMEM_LIMIT_BYTES:
        raise ValueError(
            f"the Mosaic GPU attention kernel would need {need} bytes of shared memory a block (limit "
            f"{SMEM_LIMIT_BYTES}): fewer pages_per_block or a smaller block_q"
        )


def _swizzled(shape: tuple[int, ...], dtype) -> plgpu.SMEM:
    """An SMEM buffer whose rows are WGMMA operands: 8-row tiles, rows swizzled across banks."""
    swizzle = plgpu.find_swizzle(shape[-1] * jnp.dtype(dtype).itemsize * 8)
    elems = swizzle // jnp.dtype(dtype).itemsize
    return plgpu.SMEM(
        shape, dtype, transforms=(plgpu.TilingTransform((TILE_ROWS, elems)), plgpu.SwizzleTransform(swizzle))
    )


def _iota(shape: tuple[int, int], dim: int, interpret: bool):
    """int32 iota along ``dim`` in the WGMMA register layout (the interpreter has no layouts: a plain iota)."""
    if interpret:
        return lax.broadcasted_iota(jnp.int32, shape, dim)
    return plgpu.broadcasted_iota(jnp.int32, shape, dim, layout=plgpu.Layout.WGMMA)


def _in_layout(x, layout, interpret: bool):
    return x if interpret else plgpu.layout_cast(x, layout)


def _load_unoptimized(ref, layout, interpret: bool):
    """``ref[...]`` in ``layout``, accepting SMEM bank conflicts (a WGMMA-layout load of a plain ref has no
    conflict-free plan; used once a program). ``plgpu.load`` takes an index argument in JAX 0.10.2 and none in
    0.12 (the ref is indexed with ``.at``), hence the check."""
    if interpret:
        return ref[...]
    if "idx" in inspect.signature(plgpu.load).parameters:
        return plgpu.load(ref, None, layout=layout, optimized=False)
    return plgpu.load(ref, layout=layout, optimized=False)


def _qk(q_smem, k_slot, interpret: bool):
    """``q @ k^T`` in float32: q ``[rows, D]`` and a key block ``[block_k, D]``, both in SMEM.

    Compiled: one WGMMA with K's SMEM view transposed. Interpreted: the same product of the two SMEM
    tiles as loaded values (JAX 0.10.2's interpreter runs ``wgmma`` as a matmul of refs but cannot read
    a transposed ref, nor lower ``run_state`` or layout casts; the copies and barriers that fill the
    tiles are interpreted either way).
    """
    if interpret:
        dims = (((1,), (1,)), ((), ()))
        return lax.dot_general(q_smem[...], k_slot[...], dims, preferred_element_type=jnp.float32)

    def qk(acc_ref):
        plgpu.wgmma(acc_ref, q_smem, k_slot.transpose((1, 0)))
        return acc_ref[...]

    return pl.run_scoped(qk, plgpu.ACC((q_smem.shape[0], k_slot.shape[0]), jnp.float32))


def _pv_accumulate(acc, p, v_slot, interpret: bool):
    """``acc + p @ v``: acc ``[rows, D]`` float32 and p ``[rows, block_k]`` (q's dtype) in registers, v in SMEM.

    Compiled: the WGMMA accumulates into acc's own registers (``run_state``). Interpreted: the product of
    p and the loaded V tile in float32, added (see ``_qk``)."""
    if interpret:
        dims = (((1,), (0,)), ((), ()))
        return acc + lax.dot_general(p, v_slot[...], dims, preferred_element_type=jnp.float32)

    def pv(acc_ref):
        plgpu.wgmma(acc_ref, p, v_slot)

    return pl.run_state(pv)(plgpu.ACC.init(acc))


def _kernel(
    kv_lens_ref,  # int32[max_num_seqs]  (GMEM)
    page_indices_ref,  # int32[max_num_seqs, pages_per_seq]  (GMEM)
    cu_q_lens_ref,  # int32[max_num_seqs + 1]  (GMEM)
    num_seqs_ref,  # int32[1]  (GMEM)
    q_ref,  # [num_kv_heads, Tp * gp, head_dim]  (GMEM) token-major rows, padded heads zero
    k_ref,  # [total_num_pages, page_size, num_kv_heads, head_dim]  (GMEM)
    v_ref,  # [total_num_pages, page_size, num_kv_heads, head_dim]  (GMEM)
    o_ref,  # [num_kv_heads, Tp * gp, head_dim]  (GMEM) rows of no program are left unwritten
    q_smem,  # [rows, head_dim]  (SMEM, swizzled)
    k_smem,  # [2, block_k, head_dim]  (SMEM, swizzled) one key block a slot
    v_smem,  # [2, block_k, head_dim]  (SMEM, swizzled)
    o_smem,  # [rows, head_dim]  (SMEM, plain: sliced at any row for the stores)
    q_bar,  # Barrier: the q tile's copy
    k_bar,  # Barrier [2], pages_per_block arrivals: a slot's K page copies
    v_bar,  # Barrier [2], pages_per_block arrivals: a slot's V page copies
    *,
    gp: int,
    block_q: int,
    pages_per_block: int,
    sm_scale: float,
    sliding_window: int | None,
    soft_cap: float | None,
    interpret: bool,
):
    """One program: ``block_q`` query tokens of one sequence x every q head of one kv head's group."""
    seq, kv_head, q_block = lax.axis_index("seq"), lax.axis_index("kv_head"), lax.axis_index("q_block")
    rows, head_dim = q_smem.shape
    total_num_pages, page_size = k_ref.shape[0], k_ref.shape[1]
    pages_per_seq = page_indices_ref.shape[1]
    block_k = pages_per_block * page_size
    dtype = q_smem.dtype

    q_start = cu_q_lens_ref[seq]
    q_len = cu_q_lens_ref[seq + 1] - q_start
    n_rows = jnp.minimum(block_q, q_len - q_block * block_q)  # this tile's tokens of the sequence
    active = (seq < num_seqs_ref[0]) & (n_rows > 0)

    @pl.when(active)
    def _compute():
        kv_len = kv_lens_ref[seq]
        first_pos = kv_len - q_len + q_block * block_q  # absolute position of the tile's token 0
        last_pos = first_pos + n_rows - 1
        # Only the key blocks some row of this tile can see: [first_pos - window + 1, last_pos].
        lo = 0 if sliding_window is None else jnp.maximum(first_pos - sliding_window + 1, 0)
        hi = jnp.maximum(jnp.minimum(last_pos + 1, kv_len), 0)
        blk_lo, blk_hi = lo // block_k, (hi + block_k - 1) // block_k
        row0 = (q_start + q_block * block_q) * gp

        # A TMA into the tiled q_smem must start on a whole 8-row tile of q_t, which row0 is only when gp is
        # a multiple of 8 (q_start is any token). Otherwise the tile lands in o_smem (plain, free until the
        # end) and is copied into q_smem through registers once q_bar has fired.
        staged = gp % TILE_ROWS != 0
        plgpu.copy_gmem_to_smem(q_ref.at[kv_head, pl.ds(row0, rows)], o_smem if staged else q_smem, q_bar)

        def issue(blk, slot):
            """TMA copies of key block ``blk``'s pages (K and V of this kv head) into SMEM slot ``slot``."""
            for j in range(pages_per_block):  # static: each page lands on its own whole SMEM tiles
                col = jnp.minimum(blk * pages_per_block + j, pages_per_seq - 1)
                page = jnp.clip(page_indices_ref[seq, col], 0, total_num_pages - 1)
                dst = pl.ds(j * page_size, page_size)
                plgpu.copy_gmem_to_smem(k_ref.at[page, :, kv_head, :], k_smem.at[slot, dst], k_bar.at[slot])
                plgpu.copy_gmem_to_smem(v_ref.at[page, :, kv_head, :], v_smem.at[slot, dst], v_bar.at[slot])

        @pl.when(blk_lo < blk_hi)
        def _():
            issue(blk_lo, 0)

        plgpu.barrier_wait(q_bar)
        if staged:
            q_smem[...] = _load_unoptimized(o_smem, plgpu.Layout.WGMMA, interpret)
            plgpu.commit_smem()  # the WGMMAs (async proxy) read what these stores wrote

        def body(i, carry):
            m_prev, l_prev, acc = carry  # [rows], [rows], [rows, D] float32
            blk = blk_lo + i
            slot = lax.rem(i, 2)

            # The other slot's last reader (the previous step's WGMMAs) has finished: refill it.
            @pl.when(blk + 1 < blk_hi)
            def _():
                issue(blk + 1, 1 - slot)

            plgpu.barrier_wait(k_bar.at[slot])

            s = _qk(q_smem, k_smem.at[slot], interpret) * sm_scale  # [rows, block_k] float32
            if soft_cap is not None:
                s = soft_cap * jnp.tanh(s / soft_cap)
            row = _iota((rows, block_k), 0, interpret)
            key = blk * block_k + _iota((rows, block_k), 1, interpret)
            q_pos = first_pos + lax.shift_right_logical(row, int(math.log2(gp)))  # row // gp: the row's token
            mask = (key <= q_pos) & (key < kv_len)
            if sliding_window is not None:
                mask &= key > q_pos - sliding_window
            s = jnp.where(mask, s, MASK_VALUE)
            m_next = jnp.maximum(m_prev, s.max(axis=1))
            alpha = jnp.exp(m_prev - m_next)
            p = jnp.where(mask, jnp.exp(s - lax.broadcast_in_dim(m_next, s.shape, [0])), 0.0)
            l_next = alpha * l_prev + p.sum(axis=1)
            acc = acc * lax.broadcast_in_dim(alpha, acc.shape, [0])

            plgpu.barrier_wait(v_bar.at[slot])

            # The block holding kv_len: its V rows past kv_len (a page's unused slots, pages past the
            # sequence's last) may hold NaN, which p = 0 would not cancel in the WGMMA.
            @pl.when((blk + 1) * block_k > kv_len)
            def _():
                v_slot = v_smem.at[slot]
                key_v = blk * block_k + _iota((block_k, head_dim), 0, interpret)
                v_slot[...] = jnp.where(key_v < kv_len, v_slot[...], jnp.zeros((block_k, head_dim), dtype))
                plgpu.commit_smem()  # the WGMMA (async proxy) reads what these stores wrote

            acc = _pv_accumulate(acc, p.astype(dtype), v_smem.at[slot], interpret)
            return m_next, l_next, acc

        init = (
            _in_layout(jnp.full((rows,), MASK_VALUE, jnp.float32), plgpu.Layout.WGMMA.reduce(1), interpret),
            _in_layout(jnp.zeros((rows,), jnp.float32), plgpu.Layout.WGMMA.reduce(1), interpret),
            _in_layout(jnp.zeros((rows, head_dim), jnp.float32), plgpu.Layout.WGMMA, interpret),
        )
        _, l, acc = lax.fori_loop(0, blk_hi - blk_lo, body, init)
        l = jnp.where(l > 0, l, 1.0)
        o_smem[...] = (acc / lax.broadcast_in_dim(l, acc.shape, [0])).astype(dtype)
        plgpu.commit_smem()

        # Store exactly this sequence's n_rows tokens: one TMA of 2^i tokens for each set bit i of n_rows,
        # largest first, so every store starts on a multiple of its own size (aligned SMEM addresses).
        start = jnp.int32(0)
        size = block_q
        while size >= 1:
            _store_rows(o_smem, o_ref.at[kv_head], (n_rows & size) != 0, row0, start * gp, size * gp)
            start = start + (n_rows & size)
            size //= 2
        plgpu.wait_smem_to_gmem(0, wait_read_only=True)


def _store_rows(o_smem, o_gmem, pred, row0, offset, span: int):
    """If ``pred``: TMA store of ``o_smem`` rows [offset, offset + span) to ``o_gmem`` rows row0 + offset ..."""

    @pl.when(pred)
    def _():
        plgpu.copy_smem_to_gmem(o_smem.at[pl.ds(offset, span)], o_gmem.at[pl.ds(row0 + offset, span)])


def interpret_params():
    """The Mosaic GPU interpreter's parameters (JAX's private ``InterpretGPUParams``), or a clear error."""
    try:
        from jax._src.pallas.mosaic_gpu.interpret.params import InterpretGPUParams
    except ImportError as exc:  # pragma: no cover - depends on the JAX version
        raise ValueError(
            f"interpret=True needs JAX's Mosaic GPU interpreter (jax >= 0.10.2), not found in jax {jax.__version__}"
        ) from exc
    return InterpretGPUParams()


@paged_attention_api
def ragged_paged_attention_mosaic_gpu(
    call: PagedCall, *, block_sizes: MosaicGpuBlockSizes | None = None, interpret: bool = False
):
    """Causal grouped-query attention over a paged KV cache for a ragged batch (Pallas Mosaic GPU, sm_90+).

    The KV cache stays in GMEM; a program copies ``pages_per_block`` pages of K and V at a time into one
    of two SMEM slots (TMA) while computing the other (see the module docstring). bfloat16 q and cache
    only: an 8-bit cache is refused with a ValueError (the Triton kernel ``ragged_paged_attention`` reads
    one).

    Knobs:
      block_sizes:  MosaicGpuBlockSizes; None fields come from ``mosaic_gpu_block_sizes`` (static)
      interpret:    run the same kernel in JAX's Mosaic GPU interpreter on CPU (TMA copies, barriers
                    and WGMMA simulated) instead of compiling (static)
    """
    dims, q = call.dims, call.q
    block_sizes = mosaic_gpu_block_sizes(dims, block_sizes)
    check_supported(dims, q.dtype, call.k_pages.dtype, block_sizes)
    T, G, D, KVH = dims.max_num_tokens, dims.group, dims.head_dim, dims.num_kv_heads
    gp, block_q, ppb = _next_pow2(G), block_sizes.block_q, block_sizes.pages_per_block
    rows, block_k = block_q * gp, ppb * dims.page_size
    num_q_blocks = pl.cdiv(T, block_q)
    Tp = T + block_q  # a tile starting at any real row stays inside q_t

    # [T, KVH * G, D] -> [KVH, Tp * gp, D]: a program's rows (tokens x padded group) are one box.
    q_t = jnp.pad(q.reshape(T, KVH, G, D), ((0, Tp - T), (0, 0), (0, gp - G), (0, 0)))
    q_t = q_t.transpose(1, 0, 2, 3).reshape(KVH, Tp * gp, D)
    kernel = functools.partial(
        _kernel,
        gp=gp,
        block_q=block_q,
        pages_per_block=ppb,
        sm_scale=float(call.sm_scale),
        sliding_window=call.sliding_window,
        soft_cap=None if call.soft_cap is None else float(call.soft_cap),
        interpret=interpret,
    )
    scratch = (
        _swizzled((rows, D), q.dtype),
        _swizzled((2, block_k, D), q.dtype),
        _swizzled((2, block_k, D), q.dtype),
        plgpu.SMEM((rows, D), q.dtype),
        plgpu.Barrier(num_arrivals=1),
        plgpu.Barrier(num_arrivals=ppb, num_barriers=2),
        plgpu.Barrier(num_arrivals=ppb, num_barriers=2),
    )
    o_t = plgpu.kernel(
        kernel,
        out_type=jax.ShapeDtypeStruct(q_t.shape, q.dtype),
        scratch_types=scratch,
        grid=(dims.max_num_seqs, KVH, num_q_blocks),
        grid_names=("seq", "kv_head", "q_block"),
        interpret=interpret_params() if interpret else None,
        kernel_name="ragged_paged_attention_mosaic_gpu",
    )(call.kv_lens, call.page_indices, call.cu_q_lens, call.num_seqs, q_t, call.k_pages, call.v_pages)
    out = o_t.reshape(KVH, Tp, gp, D)[:, :T, :G].transpose(1, 0, 2, 3).reshape(T, KVH * G, D)
    # Rows no program wrote (padding tokens) are whatever the buffer held: zero them.
    n = jnp.clip(call.num_seqs[0], 0, dims.max_num_seqs)
    real = jnp.arange(T) < call.cu_q_lens[n]
    return jnp.where(real[:, None, None], out, jnp.zeros_like(out))


def runs(dims: Dims, q_dtype, kv_dtype, device_kind: str | None = None) -> bool:
    """Whether this kernel is the GPU's kernel for such a call: a Hopper or newer target (sm_90+, WGMMA and
    TMA) and a call ``check_supported`` accepts at the rule's block sizes. Otherwise the Triton kernel."""
    from pallas_kernels.devices import gpu_compute_capability

    capability = gpu_compute_capability(device_kind)
    if capability is None or capability < MIN_CAPABILITY:
        return False
    try:
        check_supported(dims, q_dtype, kv_dtype, mosaic_gpu_block_sizes(dims))
    except ValueError:
        return False
    return True
