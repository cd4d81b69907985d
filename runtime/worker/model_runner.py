"""The jitted step: (params, KV cache, one step's flattened batch) -> (sampled tokens, KV cache).

In: ``StepInputs`` (host-built arrays padded to a bucket). Out: one sampled token per sequence row and
the updated cache. The KV cache argument is donated, so XLA updates it in place and the host only ever
holds block ids. The runner runs a step as two XLA programs, the model's per bucket (T, S) and the sampler's
per S (``StepFns``): the logits stay on the device between them, and nothing but the sampled ids crosses
back to the host each step.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from runtime.distributed.kv_transfer import gather_kv, scatter_kv, transfer_bucket
from runtime.dtypes import DTYPES, param_dtype
from runtime.models import build_model
from runtime.models.config import ModelConfig
from runtime.models.kv_cache import AttentionMetadata, slot_mapping
from runtime.platform import compilation_cache_dir
from runtime.quant.kv import KV_DTYPES, allocate_pages, split_pages
from runtime.worker.attention import kv_lane_groups, make_attend_fn, resolve_backend
from runtime.worker.sampling import (
    BIAS,
    END,
    OUTPUT,
    PROMPT,
    SamplerState,
    SamplingArrays,
    StepOutput,
    allocate_sampler_state,
    init_state_row,
    sample_step,
)

if TYPE_CHECKING:  # sharding imports nothing of this module: no cycle
    from runtime.distributed.sharding import TensorParallel

log = logging.getLogger("runtime.engine")

# DTYPES (runtime/dtypes.py) and KV_DTYPES (runtime/quant/kv.py), imported above, are also read from this
# module by tools/lowering_check.py and tests.


class StepInputs(NamedTuple):
    tokens: jax.Array  # int32[T]
    positions: jax.Array  # int32[T]
    metadata: AttentionMetadata
    logits_indices: jax.Array  # int32[S] row of each sequence's last scheduled token
    sampling: SamplingArrays


def _stop_thread(stop: threading.Event, thread: threading.Thread | None, timeout: float | None = 60) -> None:
    """Ask a background compile thread to stop after its bucket, and wait for it (not from the thread itself)."""
    stop.set()
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout)


def enable_compilation_cache(directory: str | None = None) -> None:
    """Persist compiled programs across restarts (the first start compiles, later ones load): those that took
    at least 0.5 s to compile, or ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS`` (the test suite sets 0:
    tests/conftest.py)."""
    jax.config.update("jax_compilation_cache_dir", directory or compilation_cache_dir())
    least = float(os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", 0.5))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", least)


def allocate_kv_cache(config: ModelConfig, num_pages: int, page_size: int, dtype, lane_groups: int = 0) -> list[tuple]:
    """One (K, V) pair of [num_pages, page_size, kv_heads, head_dim] per layer; page 0 is the null page.

    An 8-bit ``dtype`` (int8, float8_e4m3fn) gives ``QuantizedPages`` (codes + [num_pages, page_size,
    kv_heads] scales) for K and V instead; they are donated to the step like plain pages. ``lane_groups``
    (``runtime.worker.attention.kv_lane_groups``; >= 1 for the TPU kernel): the pages (codes) as ``LanePages``."""
    shape = (num_pages, page_size, config.num_kv_heads, config.head_dim)
    return [
        (allocate_pages(shape, dtype, lane_groups), allocate_pages(shape, dtype, lane_groups))
        for _ in range(config.num_layers)
    ]


class StepFns(NamedTuple):
    """The jitted step functions of one model (``make_step_fn``).

    ``step(params, kv_caches, sampler_state, inputs) -> (StepOutput, kv_caches, sampler_state)``: model and
    sampler in one program (cache and sampler state donated), what the lowering and compile checks lower
    (``abstract_step``): op for op the two programs the runner runs.
    ``logits(params, kv_caches, inputs) -> (logits [S, V], kv_caches)``: the model (cache donated), teacher-
    forced scoring and the runner's per-bucket program.
    ``sample(logits, sampling, sampler_state) -> (StepOutput, sampler_state)``: the sampler (state donated),
    the runner's program per sequence count S.

    Why the runner runs two programs: the sampler is a third of a bucket's compile (SmolLM2, T=16, S=8 on
    CPU: model 2.6 s, sampler 1.5 s, one program 4.2 s) and does not depend on T, so split it compiles once
    per S instead of once per (T, S) bucket: 4 sampler programs instead of 12 for a test engine, 6 instead
    of 33 for ``make serve``. The cost is one more dispatch a step; the logits never leave the device."""

    step: Any
    logits: Any
    sample: Any


def make_step_fn(
    config: ModelConfig,
    *,
    attention_backend: str = "auto",
    dtype=jnp.float32,
    tensor_parallel: TensorParallel | None = None,
    platform: str | None = None,
) -> StepFns:
    """The model's jitted ``StepFns``: the fused step, the model alone and the sampler alone
    (``runtime.worker.sampling``).

    With ``tensor_parallel`` (runtime/distributed/sharding.py), attention runs per device over its heads and the
    returned cache keeps its kv-head sharding; the rest follows from the sharded inputs (GSPMD).
    ``platform`` picks the attention backend (``runtime.worker.attention.resolve_backend``) for another
    platform than this one: only to lower the step for it (``abstract_step``)."""
    # The family builds its attention functions (Gemma needs one per layer kind: sliding window or not).
    make_attend = functools.partial(make_attend_fn, attention_backend, platform=platform)
    if tensor_parallel is not None:
        make_attend = tensor_parallel.shard_attention(make_attend)
    model = build_model(config, make_attend, dtype)

    def logits_fn(params, kv_caches, inputs: StepInputs):
        return model.apply(
            {"params": params}, inputs.tokens, inputs.positions, kv_caches, inputs.metadata, inputs.logits_indices
        )

    def step(params, kv_caches, sampler_state, inputs: StepInputs):
        logits, kv_caches = logits_fn(params, kv_caches, inputs)
        out, sampler_state = sample_step(logits, inputs.sampling, sampler_state)
        return out, kv_caches, sampler_state

    if tensor_parallel is not None:
        step, logits_fn = tensor_parallel.keep_kv_sharding(step), tensor_parallel.keep_kv_sharding(logits_fn)
    return StepFns(
        step=jax.jit(step, donate_argnums=(1, 2)),
        logits=jax.jit(logits_fn, donate_argnums=(1,)),
        sample=jax.jit(sample_step, donate_argnums=(2,)),
    )


# ---------------------------------------------------------------- shapes only (lowering checks)
#
# The step of a serving-size engine can be lowered for another platform from this machine without a
# byte of device memory: every argument is a ``jax.ShapeDtypeStruct``.
#
#     step, args = abstract_step(config, attention_backend="pallas_tpu", platform="tpu", dtype="bfloat16",
#                                kv_dtype="int8", num_tokens=2048, num_seqs=256, num_pages=65536,
#                                page_size=16, pages_per_seq=128)
#     step.trace(*args).lower(lowering_platforms=("tpu",))   # for TPU inside jax.sharding.use_abstract_mesh
#
# Weight-only quantized parameters (runtime/quant/weights.py) are not built here: the parameters are the float
# tree ``params_to_device`` produces.


def _dtype(d):
    return DTYPES[d] if isinstance(d, str) else jnp.dtype(d)


def _kv_dtype(d):
    return KV_DTYPES[d] if isinstance(d, str) else jnp.dtype(d)


def abstract_params(config: ModelConfig, dtype=jnp.float32) -> dict[str, Any]:
    """The parameter tree the engine serves (``params_to_device``: ``dtype``, norm scales float32) as
    ``ShapeDtypeStruct``s, from the model's ``init`` under ``jax.eval_shape``: nothing is allocated."""
    dtype = _dtype(dtype)
    model = build_model(config, functools.partial(make_attend_fn, "xla"), jnp.float32)
    sds = jax.ShapeDtypeStruct
    i32 = jnp.int32
    page = (2, 16, config.num_kv_heads, config.head_dim)  # any shape: the parameters do not depend on it
    kv = [(sds(page, jnp.float32), sds(page, jnp.float32)) for _ in range(config.num_layers)]
    md = AttentionMetadata(sds((16,), i32), sds((1,), i32), sds((1, 1), i32), sds((2,), i32), sds((1,), i32))
    tokens = sds((16,), i32)
    shapes = jax.eval_shape(
        lambda *a: model.init(jax.random.PRNGKey(0), *a)["params"], tokens, tokens, kv, md, sds((1,), i32)
    )
    return jax.tree_util.tree_map_with_path(lambda path, x: sds(x.shape, param_dtype(path, dtype)), shapes)


def abstract_step_args(
    config: ModelConfig,
    *,
    num_tokens: int,
    num_seqs: int,
    num_pages: int,
    page_size: int,
    pages_per_seq: int,
    dtype=jnp.float32,
    kv_dtype=None,
    lane_groups: int = 0,
) -> tuple[Any, Any, SamplerState, StepInputs]:
    """``(params, kv_caches, sampler_state, inputs)`` of the engine's step as ``ShapeDtypeStruct`` pytrees, for
    ``jax.jit(step).trace(*args).lower(...)``; nothing is allocated.

    num_tokens, num_seqs: the bucket (T, S); num_pages: the KV cache's pages (page 0 the null page);
    page_size: tokens per page; pages_per_seq: the page-table width (``ceil(max_model_len / page_size)``).
    dtype: weights and activations (float32 | bfloat16, a name or a dtype); kv_dtype: the cache
    (float32 | bfloat16 | int8 | fp8; None: ``dtype``), an 8-bit one as ``QuantizedPages`` of codes + scales;
    lane_groups: the cache's layout (``allocate_kv_cache``; ``kv_lane_groups`` of the backend).
    """
    dtype = _dtype(dtype)
    kv_dtype = dtype if kv_dtype is None else _kv_dtype(kv_dtype)
    sds = jax.ShapeDtypeStruct
    T, S, i32 = num_tokens, num_seqs, jnp.int32
    kv_caches = jax.eval_shape(lambda: allocate_kv_cache(config, num_pages, page_size, kv_dtype, lane_groups))
    md = AttentionMetadata(
        slot_mapping=sds((T,), i32),
        kv_lens=sds((S,), i32),
        page_indices=sds((S, pages_per_seq), i32),
        cu_q_lens=sds((S + 1,), i32),
        num_seqs=sds((1,), i32),
    )
    inputs = StepInputs(
        sds((T,), i32), sds((T,), i32), md, sds((S,), i32), SamplingArrays.abstract(S, config.vocab_size)
    )
    state = jax.eval_shape(lambda: allocate_sampler_state(num_seqs, config.vocab_size))
    return abstract_params(config, dtype), kv_caches, state, inputs


def abstract_step(
    config: ModelConfig,
    *,
    attention_backend: str,
    platform: str | None = None,
    dtype=jnp.float32,
    kv_dtype=None,
    num_tokens: int,
    num_seqs: int,
    num_pages: int,
    page_size: int,
    pages_per_seq: int,
):
    """``(step, args)``: the engine's jitted step (model + attention + sampling, cache donated) with the
    attention backend resolved for ``platform`` (``"tpu"``, ``"cuda"``, ...; default: here), and
    ``abstract_step_args`` for it. ``step.trace(*args).lower(lowering_platforms=(...,))`` lowers it."""
    step = make_step_fn(config, attention_backend=attention_backend, dtype=_dtype(dtype), platform=platform).step
    args = abstract_step_args(
        config,
        num_tokens=num_tokens,
        num_seqs=num_seqs,
        num_pages=num_pages,
        page_size=page_size,
        pages_per_seq=pages_per_seq,
        dtype=dtype,
        kv_dtype=kv_dtype,
        lane_groups=kv_lane_groups(attention_backend, platform),
    )
    return step, args


def step_working_bytes(
    config: ModelConfig,
    params,
    *,
    attention_backend: str,
    platform: str | None,
    dtype,
    kv_dtype,
    tensor_parallel: TensorParallel | None,
    num_tokens: int,
    num_seqs: int,
    page_size: int,
    pages_per_seq: int,
) -> int:
    """Bytes a device needs beside the step's arguments at bucket (num_tokens, num_seqs): the compiler's
    temporaries of the fused step (``memory_analysis``), compiled on the real ``params`` against a cache of one
    sequence's pages. What the KV cache must leave free (``runtime.engine.builder``: sized after it, as vLLM's
    profiling run does). The fused step needs at least what either of the runner's two programs does.
    Temporaries that grow with the cache (a relayout of it) are not in this figure: the compile check
    (tools/compile_check.py) compiles at the full cache and catches those."""
    fns = make_step_fn(
        config,
        attention_backend=attention_backend,
        dtype=_dtype(dtype),
        tensor_parallel=tensor_parallel,
        platform=platform,
    )
    _, kv, state, inputs = abstract_step_args(
        config,
        num_tokens=num_tokens,
        num_seqs=num_seqs,
        num_pages=pages_per_seq + 1,
        page_size=page_size,
        pages_per_seq=pages_per_seq,
        dtype=dtype,
        kv_dtype=kv_dtype,
        lane_groups=kv_lane_groups(attention_backend, platform, tensor_parallel.size if tensor_parallel else 1),
    )
    if tensor_parallel is not None:
        kv, state, inputs = tensor_parallel.place_abstract(kv, state, inputs)
    stats = fns.step.lower(params, kv, state, inputs).compile().memory_analysis()
    return 0 if stats is None else int(stats.temp_size_in_bytes)


def params_to_device(params: dict[str, Any], dtype) -> dict[str, Any]:
    """Host float32 weights -> device arrays in the serving dtype (norm scales stay float32).

    A quantized weight (``runtime.quant.weights.QuantizedMatrix``) keeps its int8/uint8 codes and float32 scales."""

    def convert(path, x):
        if hasattr(x, "dequantize"):
            return jax.tree.map(jnp.asarray, x)
        return jnp.asarray(x, param_dtype(path, dtype))

    return jax.tree_util.tree_map_with_path(convert, params, is_leaf=lambda x: hasattr(x, "dequantize"))


def next_power_of_two(n: int, minimum: int = 1) -> int:
    n = max(n, minimum)
    return 1 << (n - 1).bit_length()


# ---------------------------------------------------------------- the batched runner


class CompileCounter:
    """Counts XLA lowerings process-wide (a jit cache miss lowers, even when the disk cache then hits)."""

    def __init__(self) -> None:
        self.count = 0
        jax.monitoring.register_event_duration_secs_listener(self._on_event)

    def _on_event(self, event: str, duration: float, **kwargs) -> None:
        if event == "/jax/core/compile/jaxpr_to_mlir_module_duration":
            self.count += 1


_COMPILE_COUNTER: CompileCounter | None = None


def compile_counter() -> CompileCounter:
    global _COMPILE_COUNTER
    if _COMPILE_COUNTER is None:
        _COMPILE_COUNTER = CompileCounter()
    return _COMPILE_COUNTER


def largest_bucket(max_num_batched_tokens: int, max_num_seqs: int) -> tuple[int, int]:
    """The (T, S) of the largest bucket ``ModelRunner`` compiles for these limits (its ``buckets[-1]``)."""
    t = pow2_range(16, max_num_batched_tokens)[-1]
    return t, [s for s in pow2_range(1, max_num_seqs) if s <= t][-1]


def pow2_range(lo: int, hi: int) -> list[int]:
    """Powers of two from lo up to the first one >= hi."""
    out, b = [], next_power_of_two(lo)
    while True:
        out.append(b)
        if b >= hi:
            return out
        b *= 2


class ModelRunner:
    """Turns a ``SchedulerOutput`` into device arrays padded to a bucket, runs the step, returns tokens.

    Buckets: token counts are powers of two from 16 up to the token budget, sequence counts powers of
    two up to ``max_num_seqs`` (never more sequences than tokens); with the XLA attention also 1, 2, 4
    and 8 tokens with as many sequences (or all of them): small decode batches. ``warmup()`` compiles them
    ahead of time (all before it returns, or two and the rest on a background thread); ``execute`` runs a
    compiled program and never meets a new shape after that. The page-table width is fixed
    (``ceil(max_model_len / block_size)``) and the attention loop's trip count is data, so context
    length adds no buckets. Runs on the engine's step thread.
    """

    def __init__(
        self,
        config: ModelConfig,
        params,
        *,
        num_blocks: int,
        block_size: int,
        max_num_seqs: int,
        max_num_batched_tokens: int,
        max_model_len: int,
        dtype=jnp.float32,
        kv_dtype=None,
        attention_backend: str = "auto",
        tensor_parallel: TensorParallel | None = None,
        platform: str | None = None,
    ):
        self.config = config
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.max_model_len = max_model_len
        self.pages_per_seq = -(-max_model_len // block_size)
        self.token_buckets = pow2_range(16, max_num_batched_tokens)
        self.seq_buckets = pow2_range(1, max_num_seqs)
        # Below 16 tokens, buckets (t, min(t, most sequences)) for t = 1, 2, 4, 8, with the CPU attentions
        # (xla, cpu) only: a batch-1 decode step padded to 16 rows did 16 rows of every matmul (the quantized
        # kernels' tile path) and of attention: SmolLM2 int8 decode 10.6 tok/s -> see docs/BENCHMARKS.md.
        # The Pallas kernels keep 16 (their query blocks); these add at most 4 programs to compile.
        backend = resolve_backend(attention_backend, platform)
        small = backend in ("xla", "cpu")
        self.small_token_buckets = [t for t in (1, 2, 4, 8) if t < self.token_buckets[0]] if small else []
        self.dtype = dtype
        self.kv_dtype = kv_dtype or dtype
        self.params = params
        self.lane_groups = kv_lane_groups(backend, platform, tensor_parallel.size if tensor_parallel else 1)
        allocate = functools.partial(allocate_kv_cache, config, num_blocks, block_size, self.kv_dtype, self.lane_groups)
        # Tensor parallel: params arrive sharded; the cache is created split on its kv-head axis.
        self.kv_caches = allocate() if tensor_parallel is None else tensor_parallel.allocate_kv_cache(allocate)
        fns = make_step_fn(
            config, attention_backend=attention_backend, dtype=dtype, tensor_parallel=tensor_parallel, platform=platform
        )
        self._logits, self._sample = fns.logits, fns.sample
        self._seeds: dict[str, int] = {}
        # Host inputs to the device: replicated over the mesh with tensor parallelism (over several
        # processes an array must name the devices it lives on), else to the default device.
        self._put = jax.device_put if tensor_parallel is None else tensor_parallel.replicate
        # Sampler state (runtime/worker/sampling.py): a row per running request that needs one, row 0 null.
        self.sampler_state = self._put(allocate_sampler_state(max_num_seqs, config.vocab_size))
        # Several processes (runtime/distributed/multihost.py): on process 0, the ``Leader`` that publishes
        # each shared device call (step, sampler-state row, prime) for the other processes to repeat.
        self.mirror = None
        self._state_rows: dict[str, int] = {}
        self._free_rows = list(range(max_num_seqs, 0, -1))
        # Ahead-of-time compiled programs (``warmup``): the model's by bucket (T, S), the sampler's by S
        # (``StepFns``); written by the compile thread, read by the step thread (one dict store each: atomic
        # under the GIL; a bucket's sampler is stored before the bucket, so a ready bucket has both).
        self._compiled: dict[tuple[int, int], Any] = {}
        self._samplers: dict[int, Any] = {}
        self._background: threading.Thread | None = None
        self._stop = threading.Event()
        self._atexit: functools.partial | None = None  # the exit hook that stops the compile thread (``warmup``)

    @property
    def buckets(self) -> list[tuple[int, int]]:
        small = [(t, min(t, self.seq_buckets[-1])) for t in self.small_token_buckets]
        return small + [(t, s) for t in self.token_buckets for s in self.seq_buckets if s <= t]

    def weight_bytes(self) -> int:
        return sum(int(x.nbytes) for x in jax.tree_util.tree_leaves(self.params))  # quantization scales included

    def kv_cache_bytes(self) -> int:
        return sum(int(x.nbytes) for x in jax.tree_util.tree_leaves(self.kv_caches))  # scales included

    def _bucket(self, num_tokens: int, num_seqs: int) -> tuple[int, int]:
        """The smallest compiled bucket holding the step: the natural one, or while ``warmup(background=
        True)`` is still compiling, the smallest of those already compiled that fits."""
        natural = self._natural_bucket(num_tokens, num_seqs)
        ready = self._compiled
        if not ready or natural in ready:
            return natural
        fits = [b for b in list(ready) if b[0] >= num_tokens and b[1] >= num_seqs]
        return min(fits) if fits else natural

    def _natural_bucket(self, num_tokens: int, num_seqs: int) -> tuple[int, int]:
        need = max(num_tokens, num_seqs)
        small = next((b for b in self.small_token_buckets if b >= need), None)
        if small is not None:
            return small, min(small, self.seq_buckets[-1])  # >= num_seqs: num_seqs <= both
        t = next(b for b in self.token_buckets if b >= num_tokens)
        s = next(b for b in self.seq_buckets if b >= num_seqs)
        return max(t, s), s

    def prime(self, T: int, S: int) -> None:
        """Run bucket (T, S)'s compiled program once on dummy inputs (``EngineConfig.prime_programs``): its
        token writes go to slot 0 of the null page, which no request reads; the sampler state is put back
        as it was (the step donates it)."""
        if self.mirror is not None:
            self.mirror.prime(T, S)
        saved = jax.tree_util.tree_map(jnp.copy, self.sampler_state)
        inputs = self._dummy_inputs(T, S)
        logits, self.kv_caches = self._compiled[(T, S)](self.params, self.kv_caches, inputs)
        jax.block_until_ready(self._samplers[S](logits, inputs.sampling, self.sampler_state))
        jax.block_until_ready(self.kv_caches)
        self.sampler_state = saved

    def warmup(self, progress=None, *, background: bool = False, prime: bool = False) -> int:
        """Compile the buckets ahead of time (traced and lowered with dummy inputs; nothing runs).

        ``background=False``: every bucket, before returning. ``True``: only the largest bucket (it
        holds any step, padded) and the one-token decode bucket before returning, the rest on a daemon
        thread, smallest first; until a bucket is ready, its steps run padded in the smallest ready one
        that fits, so nothing compiles on the step thread either way. With a warm persistent cache the
        cost of a bucket is tracing and lowering the model (1-4 s here), not XLA: that is what makes a
        start wait for 33 of them (``docs/DECODE.md``, start-up). Returns the bucket count."""
        buckets = self.buckets
        first = [buckets[-1], buckets[0]] if background else buckets
        for t, s in first:
            self._compile(t, s)
            if prime:  # only here, on the caller's thread: the background thread must not touch the cache
                self.prime(t, s)
            if progress is not None:
                progress(t, s)
        rest = [b for b in buckets if b not in self._compiled]
        if rest:
            self._background = threading.Thread(
                target=self._compile_all, args=(rest, progress), name="jaxserve-compile", daemon=True
            )
            # Stopped and joined before the interpreter finalizes (atexit runs before daemon threads are
            # killed): a thread killed inside XLA's compiler aborts the process ("terminate called ...").
            # The hook holds the thread and its stop event, not this runner: a bound method registered
            # here kept every engine that ever warmed up in the background alive until exit (its weights:
            # 586 MB of live arrays after a SmolLM2 gateway test module had closed its engine).
            self._atexit = functools.partial(_stop_thread, self._stop, self._background)
            atexit.register(self._atexit)
            self._background.start()
        return len(buckets)

    def ensure_compiled(self, T: int, S: int) -> None:
        """Bucket (T, S) compiled ahead of time, now if not yet (a follower process runs the leader's bucket
        through the same lowering, never the jitted fallback)."""
        self._compile(T, S)

    def _compile(self, T: int, S: int) -> None:
        if (T, S) in self._compiled:
            return
        inputs = self._dummy_inputs(T, S)
        lowered = self._logits.lower(self.params, self.kv_caches, inputs)
        compiled = lowered.compile()
        if S not in self._samplers:
            # [S, V] as the compiled model returns them: the lowered program's out_info left the sharding
            # for the compiler to choose (a sampler compiled from it expected whole logits, and refused the
            # vocab-split ones the model returned with tensor parallelism)
            out = lowered.out_info[0]
            logits = jax.ShapeDtypeStruct(out.shape, out.dtype, sharding=compiled.output_shardings[0])
            self._samplers[S] = self._sample.lower(logits, inputs.sampling, self.sampler_state).compile()
        self._compiled[(T, S)] = compiled

    def _compile_all(self, buckets, progress) -> None:
        for t, s in buckets:
            if self._stop.is_set():
                return
            try:
                self._compile(t, s)
            except Exception:  # a bucket that fails to compile stays on the padded path; say so
                log.exception("compiling the step for %d tokens, %d sequences failed", t, s)
                continue
            if progress is not None:
                progress(t, s)

    def stop_background(self, timeout: float | None = 60) -> None:
        """Stop the background compilation after the bucket it is on, and wait for it (shutdown)."""
        if self._atexit is not None:
            atexit.unregister(self._atexit)
            self._atexit = None
        _stop_thread(self._stop, self._background, timeout)

    @property
    def all_compiled(self) -> bool:
        return self._background is None or not self._background.is_alive()

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """Block until the background compilation (if any) is done; True when every bucket is ready."""
        if self._background is not None:
            self._background.join(timeout)
        return all(b in self._compiled for b in self.buckets)

    def _dummy_inputs(self, T: int, S: int) -> StepInputs:
        return self._put(self.host_inputs(T, S))

    def host_inputs(self, T: int, S: int) -> StepInputs:
        """Zero inputs of bucket (T, S) as NumPy (the dummy step's; a follower's template)."""
        md = AttentionMetadata(
            slot_mapping=np.zeros(T, np.int32),
            kv_lens=np.zeros(S, np.int32),
            page_indices=np.zeros((S, self.pages_per_seq), np.int32),
            cu_q_lens=np.zeros(S + 1, np.int32),
            num_seqs=np.zeros(1, np.int32),
        )
        return StepInputs(
            np.zeros(T, np.int32),
            np.zeros(T, np.int32),
            md,
            np.zeros(S, np.int32),
            SamplingArrays.neutral(S, self.config.vocab_size),
        )

    def seed_for(self, req_id: str, seed: int | None) -> int:
        if req_id not in self._seeds:
            self._seeds[req_id] = seed if seed is not None else int(np.random.randint(0, 2**32, dtype=np.uint64))
        return self._seeds[req_id]

    def forget(self, req_ids) -> None:
        for r in req_ids:
            self._seeds.pop(r, None)
            self.release_state_row(r)

    def release_state_row(self, req_id: str) -> None:
        row = self._state_rows.pop(req_id, None)
        if row is not None:
            self._free_rows.append(row)

    def _state_row(self, req_id: str, request) -> int:
        """The request's sampler-state row, filled from its tokens on first use (or after a preemption,
        which released it): prompt, outputs so far, end tokens (for min_tokens), logit_bias."""
        row = self._state_rows.get(req_id)
        if row is not None:
            return row
        row = self._free_rows.pop()  # at most max_num_seqs requests run: a row is free
        self._state_rows[req_id] = row
        sp = request.sampling_params
        ends = () if sp.ignore_eos else (*request.eos_token_ids, *sp.stop_token_ids)
        parts = [
            (request.prompt_token_ids, PROMPT),
            (request.output_token_ids, OUTPUT),
            (ends if sp.min_tokens else (), END),
            ([t for t, _ in sp.logit_bias], BIAS),
        ]
        n = sum(len(ids) for ids, _ in parts)
        size = next_power_of_two(n, 16)
        ids, kinds, values = np.zeros(size, np.int32), np.full(size, -1, np.int32), np.zeros(size, np.float32)
        at = 0
        for part, kind in parts:
            ids[at : at + len(part)], kinds[at : at + len(part)] = part, kind
            at += len(part)
        values[at - len(sp.logit_bias) : at] = [b for _, b in sp.logit_bias]
        if self.mirror is not None:
            self.mirror.state_row(np.int32(row), ids, kinds, values)
        self.fill_state_row(np.int32(row), ids, kinds, values)
        return row

    def fill_state_row(self, row, ids, kinds, values) -> None:
        self.sampler_state = init_state_row(self.sampler_state, row, ids, kinds, values)

    def prepare(self, out) -> tuple[StepInputs, list[tuple[str, int]]]:
        """Lay the scheduled tokens out on one axis and pad to a bucket (NumPy; ``run`` transfers them).

        Returns the inputs and, per sampled row, (request id, rows of that request sampled): one row
        per sequence (its last token), plus one per draft token of a speculating request (the rows
        of its drafts: ``SchedulerOutput.draft_token_ids``). The sampling axis is padded to the
        bucket's sequence count, so a bucket is chosen for max(sequences, sampled rows)."""
        req_ids = list(out.num_scheduled_tokens)
        drafts = out.draft_token_ids
        n_tok, n_seq = out.total_num_scheduled_tokens, len(req_ids)
        n_rows = n_seq + sum(len(d) for d in drafts.values())
        T, S = self._bucket(n_tok, max(n_seq, n_rows))
        tokens = np.zeros(T, np.int32)
        positions = np.zeros(T, np.int32)
        slots = np.zeros(T, np.int32)  # padding writes land in the null block
        kv_lens = np.zeros(S, np.int32)
        cu = np.zeros(S + 1, np.int32)
        pages = np.zeros((S, self.pages_per_seq), np.int32)
        logits_idx = np.zeros(S, np.int32)
        sa = SamplingArrays.neutral(S, self.config.vocab_size)
        sample = set(out.sample_req_ids)
        rows: list[tuple[str, int]] = []
        t = row = 0
        for i, r in enumerate(req_ids):
            n, c = out.num_scheduled_tokens[r], out.num_computed_tokens[r]
            table = np.asarray(out.block_tables[r], np.int32)
            pos = np.arange(c, c + n, dtype=np.int32)
            tokens[t : t + n] = out.token_ids[r]
            positions[t : t + n] = pos
            slots[t : t + n] = slot_mapping(table, pos, self.block_size)
            pages[i, : len(table)] = table
            kv_lens[i] = c + n
            t += n
            cu[i + 1] = t
            m = 1 + len(drafts.get(r, ()))  # rows sampled: the last real token's, then each draft's
            sp = out.sampling_params[r]
            sl = slice(row, row + m)
            logits_idx[sl] = np.arange(t - m, t)
            sa.temperature[sl], sa.top_p[sl], sa.top_k[sl], sa.min_p[sl] = sp.temperature, sp.top_p, sp.top_k, sp.min_p
            sa.seeds[sl] = self.seed_for(r, sp.seed)
            # The absolute position of each sampled token: plain decoding (and a recompute) draws the same.
            sa.token_index[sl] = np.arange(c + n - m + 1, c + n + 1)
            sa.logprobs[sl] = sp.logprobs is not None
            request = out.history.get(r)
            if request is not None and request.grammar is not None and r in sample:  # never with drafts
                request.grammar.fill_bitmask(sa.bitmask[row])
                sa.masked[row] = True
            if request is not None and sp.needs_history:  # penalties, logit_bias, min_tokens: never drafted
                state_row = self._state_row(r, request)
                sa.state_row[row] = state_row
                sa.count_row[row] = state_row if r in sample else 0
                sa.presence[row], sa.frequency[row] = sp.presence_penalty, sp.frequency_penalty
                sa.repetition[row] = sp.repetition_penalty
                sa.hold_end[row] = c + n - request.num_prompt_tokens < sp.min_tokens
            rows.append((r, m))
            row += m
        cu[len(req_ids) + 1 :] = t
        md = AttentionMetadata(slots, kv_lens, pages, cu, np.array([n_seq], np.int32))
        return StepInputs(tokens, positions, md, logits_idx, sa), rows

    def score(self, token_ids, chunk: int = 128, *, last_only: bool = False) -> np.ndarray:
        """Teacher-forced logits [len, V] (float32) of one token sequence, for quality measurements;
        with ``last_only``, only the last position's [V] (the next token's: parity tests), and no
        other row of logits is computed.

        Chunks of ``chunk`` tokens go through the serving model, attention backend and KV cache
        (quantized if the cache is), each chunk reading the earlier ones' KV back from the pages, as
        chunked prefill does. Writes blocks 1..ceil(len / block_size): only for an idle engine."""
        if self.mirror is not None:
            raise RuntimeError("scoring runs on one process: the engines of a multi-process job only serve")
        ids = np.asarray(token_ids, np.int32)
        n = len(ids)
        n_pages = -(-n // self.block_size)
        if n > self.max_model_len or n_pages > self.num_blocks - 1:
            raise ValueError(
                f"{n} tokens do not fit (max_model_len {self.max_model_len}, "
                f"{self.num_blocks - 1} blocks of {self.block_size})"
            )
        table = np.zeros(self.pages_per_seq, np.int32)
        table[:n_pages] = np.arange(1, n_pages + 1)
        out = []
        for start in range(0, n, chunk):
            t = min(chunk, n - start)
            T = next_power_of_two(t, 16)
            pos = np.arange(start, start + t, dtype=np.int32)
            tokens, positions, slots = (np.zeros(T, np.int32) for _ in range(3))
            tokens[:t], positions[:t] = ids[start : start + t], pos
            slots[:t] = slot_mapping(table, pos, self.block_size)
            md = AttentionMetadata(
                slots, np.array([start + t], np.int32), table[None], np.array([0, t], np.int32), np.array([1], np.int32)
            )
            rows = np.array([t - 1], np.int32) if last_only else np.arange(T, dtype=np.int32)
            inputs = self._put(StepInputs(tokens, positions, md, rows, SamplingArrays.neutral(1)))
            logits, self.kv_caches = self._logits(self.params, self.kv_caches, inputs)
            out.append(np.asarray(logits[:t], np.float32))
        return out[-1][0] if last_only else np.concatenate(out)

    # ---- prefill/decode disaggregation: a request's KV out of and into the pages (runtime/distributed/kv_transfer.py)

    def _slots(self, block_table, start: int, end: int) -> np.ndarray:
        """Slots of positions start..end-1, padded with slot 0 (the null block) to a transfer bucket."""
        slots = np.zeros(transfer_bucket(end - start), np.int32)
        slots[: end - start] = slot_mapping(block_table, np.arange(start, end), self.block_size)
        return slots

    def export_kv(self, block_table, num_tokens: int) -> tuple[np.ndarray, ...]:
        """(k, v, k_scales | None, v_scales | None) of positions 0..num_tokens-1 as host arrays,
        ``[L, num_tokens, KVH, D]`` (scales ``[L, num_tokens, KVH]``). Call before the next step reuses
        the blocks: the copy to the host completes here."""
        arrays = gather_kv(self.kv_caches, self._slots(block_table, 0, num_tokens))
        # Sliced on the host: a device slice would compile once per prompt length.
        return tuple(None if a is None else np.asarray(a)[:, :num_tokens] for a in arrays)

    def import_kv(self, block_table, start: int, num_tokens: int, staged: tuple) -> None:
        """Write positions start..num_tokens-1 of the staged (``runtime.distributed.kv_transfer.stage``: padded to
        the transfer bucket) K and V, and scales for an 8-bit cache, into the request's blocks, in place
        (the cache is donated). Rows before ``start`` (this engine's prefix-cache hits, in shared blocks)
        and the padding go to the null block."""
        slots = self._slots(block_table, 0, num_tokens)
        slots[:start] = 0
        self.kv_caches = scatter_kv(self.kv_caches, slots, *staged)

    def warmup_transfer(self, export: bool, imports: bool) -> int:
        """Compile gather_kv (export) and/or scatter_kv (import) for every transfer bucket up to
        max_model_len, so that serving a prefill or decode role compiles nothing. Returns the count."""
        shapes = [self.config.num_layers, 0, self.config.num_kv_heads, self.config.head_dim]
        codes, scales = split_pages(self.kv_caches[0][0])
        n = 0
        for t in pow2_range(16, self.max_model_len):
            slots = np.zeros(t, np.int32)
            if export:
                jax.block_until_ready(gather_kv(self.kv_caches, slots))
                n += 1
            if imports:
                shapes[1] = t
                kv = np.zeros(shapes, codes.dtype)
                sc = None if scales is None else np.zeros(shapes[:3], scales.dtype)
                self.kv_caches = scatter_kv(self.kv_caches, slots, kv, kv, sc, sc)
                jax.block_until_ready(self.kv_caches)
                n += 1
        return n

    def execute(self, out) -> tuple[dict[str, int | list[int]], dict[str, tuple[float, list[int], list[float]]]]:
        """Run one step: ``({req_id: sampled token}, {req_id: (logprob, top ids, top logprobs)})`` for
        ``out.sample_req_ids``; a request with draft tokens gets a list of tokens (after the real token,
        then after each draft); the second dict holds only the requests that asked for logprobs."""
        self.forget(out.finished_req_ids)  # seeds survive preemption: a recompute samples the same
        for r in out.preempted_req_ids:  # its state row is refilled from its tokens when it is back
            self.release_state_row(r)
        if out.is_empty:
            return {}, {}
        inputs, rows = self.prepare(out)
        want = any(out.sampling_params[r].logprobs is not None for r, _ in rows)
        return self.unpack(out, rows, self.run(inputs, logprobs=want))

    def run(self, inputs: StepInputs, *, logprobs: bool = False) -> StepOutput:
        """The step on prepared host inputs (the cache updated in place): the sampled row tokens (a list) and,
        with ``logprobs`` (a row asked for them), the log-probabilities as NumPy (else the device arrays,
        never read). The bucket's compiled model and the sampler for its S when warm-up made them, else the
        jitted functions (they compile on a miss)."""
        if self.mirror is not None:
            self.mirror.step(inputs, logprobs)
            return self.mirror.running(self._run, inputs, logprobs)
        return self._run(inputs, logprobs)

    def _run(self, inputs: StepInputs, logprobs: bool) -> StepOutput:
        T, S = inputs.tokens.shape[0], inputs.logits_indices.shape[0]
        inputs = self._put(inputs)
        logits, self.kv_caches = self._compiled.get((T, S), self._logits)(self.params, self.kv_caches, inputs)
        sample = self._samplers.get(S, self._sample)
        out, self.sampler_state = sample(logits, inputs.sampling, self.sampler_state)
        if logprobs:
            return StepOutput(np.asarray(out.tokens).tolist(), *(np.asarray(x) for x in out[1:]))
        return out._replace(tokens=np.asarray(out.tokens).tolist())

    def unpack(self, out, rows: list[tuple[str, int]], step: StepOutput):
        """``({request: token (or tokens, with drafts)}, {request: (logprob, top ids, top logprobs)})``,
        the second for each sampled request that asked."""
        sample, drafts, tokens = set(out.sample_req_ids), out.draft_token_ids, step.tokens
        sampled: dict[str, int | list[int]] = {}
        logprobs: dict[str, tuple[float, list[int], list[float]]] = {}
        start = 0
        for r, m in rows:
            if r in sample:
                sampled[r] = tokens[start : start + m] if r in drafts else tokens[start]
                k = out.sampling_params[r].logprobs
                if k is not None:
                    logprobs[r] = (
                        float(step.logprob[start]),
                        step.top_ids[start, :k].tolist(),
                        step.top_logprobs[start, :k].tolist(),
                    )
            start += m
        return sampled, logprobs
