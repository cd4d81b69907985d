"""Tensor parallelism as a transform over the parameters and the KV cache (``jax.sharding``, GSPMD).

In: the model config, its parameter tree (device arrays in the serving dtype) and the KV cache the
model runner allocated, plus ``EngineConfig.tensor_parallel`` (N). Out: the same trees placed on a
``Mesh`` of N devices with named axes ``("data", "model")`` (``data`` has size 1: one replica; it is
there so rules and future data parallelism name axes, not device counts), and an attention factory
that runs each shard's heads on its own device. The jitted step is then compiled once for the
sharded inputs: XLA's SPMD partitioner (GSPMD) propagates the shardings through the model and inserts
the collectives. The model code has no sharding branches (CONVENTIONS 9): everything here wraps it.

Partition rules (Megatron-style; a regex over the parameter path -> ``PartitionSpec``, first match
wins, no match: replicated)::

    attn/{q,k,v}/kernel   [D, heads*Dh]   P(None, "model")   column: each device owns whole heads
    mlp/{gate,up}/kernel  [D, F]          P(None, "model")   column: a slice of the MLP's columns
    attn/o/kernel         [heads*Dh, D]   P("model", None)   row: partial sums, one all-reduce
    mlp/down/kernel       [F, D]          P("model", None)   row: partial sums, one all-reduce
    embed                 [V, D]          P("model", None)   vocab rows (when N divides V)
    lm_head/kernel        [D, V]          P(None, "model")   vocab columns (when N divides V)
    norm scales                           P()                replicated

so one decoder layer costs two all-reduces of ``[T, D]`` (after ``o`` and after ``down``), and
nothing else moves: q/k/v come out split by head, attention is per head, and the MLP's activation
is elementwise on the split columns.

KV cache: every page array ``[num_pages, page_size, kv_heads, head_dim]`` (and an 8-bit cache's
``QuantizedPages`` codes and ``[num_pages, page_size, kv_heads]`` scales) is split on the kv-head
axis, so device i holds the KV of the heads whose queries it computes (the TPU kernel's ``LanePages``
``[num_pages, page_size, lanes]`` are split on the lanes: one group of lanes, its heads padded, a device)::

    device:        0            1            2            3
    query heads:   0 1 2 3  |   4 5 6 7  |   8 9 10 11 | 12 13 14 15     (16 heads, 4 kv heads)
    kv heads:      0        |   1        |   2         |  3

A model with fewer kv heads than devices (Gemma 3 270M has 1) gets its K/V projections' heads
repeated until there is one per device (as vLLM does): ``num_kv_heads`` becomes N in the served
config, kv head ``j`` of the served model is original head ``j // (N / kv_heads)``, and every query
head still reads a copy of its own kv head. That costs N / kv_heads times the KV memory in total
(the same per device as one kv head).

Attention: the paged-attention call (XLA gathers on CPU, the Pallas kernel on GPU/TPU) goes through
``jax.shard_map`` over the ``model`` axis: each device runs the unchanged kernel on its local
``[T, heads/N, Dh]`` queries and ``[P, page, kv_heads/N, Dh]`` pages, with the step's metadata
replicated. GSPMD partitions the XLA path by itself just as well (checked: without shard_map the
compiled step has the same two all-reduces per layer and no gathers), but not a Pallas custom call;
one code path for both keeps the CPU tests meaningful for accelerator users.

The step's cache output is constrained to the same sharding as its input, so the donated buffers are
reused in place step after step (``keep_kv_sharding``).

Not sharded: weight-quantized models (``weight_quant`` int8/int4). Their matmuls are custom calls
(the C++ FFI kernel on CPU, a Pallas kernel on GPU) that GSPMD cannot split; ``TensorParallel.plan``
rejects the combination with a message saying so.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from runtime.dtypes import param_dtype
from runtime.models.config import ModelConfig
from runtime.quant.kv import LanePages, LaneScales, QuantizedPages

DATA_AXIS, MODEL_AXIS = "data", "model"

Rules = Sequence[tuple[str, P]]

# Sharded whatever the model (the config checks guarantee N divides these dimensions).
LAYER_RULES: Rules = (
    (r"(^|/)attn/(q|k|v)/kernel$", P(None, MODEL_AXIS)),
    (r"(^|/)mlp/(gate|up)/kernel$", P(None, MODEL_AXIS)),
    (r"(^|/)attn/o/kernel$", P(MODEL_AXIS, None)),
    (r"(^|/)mlp/down/kernel$", P(MODEL_AXIS, None)),
)
# Only when N divides the vocabulary (SmolLM2's 49,152 and Gemma's 262,144 do; a tiny test
# vocabulary of 265 does not): otherwise the table is replicated, which is only a memory cost.
VOCAB_RULES: Rules = ((r"^embed$", P(MODEL_AXIS, None)), (r"^lm_head/kernel$", P(None, MODEL_AXIS)))

HEADS_SPEC = P(None, MODEL_AXIS, None)  # q and attention output [T, H, Dh]
PAGES_SPEC = P(None, None, MODEL_AXIS, None)  # [num_pages, page_size, kv_heads, head_dim]
SCALES_SPEC = P(None, None, MODEL_AXIS)  # 8-bit cache scales [num_pages, page_size, kv_heads]
LANES_SPEC = SCALES_SPEC  # LanePages data [num_pages, page_size, lanes]: one lane group a device


def make_mesh(tensor_parallel: int, devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A ``(data=1, model=N)`` mesh over the first N devices."""
    devices = list(devices if devices is not None else jax.devices())[:tensor_parallel]
    return Mesh(np.array(devices, dtype=object).reshape(1, tensor_parallel), (DATA_AXIS, MODEL_AXIS))


def place(x, sharding: NamedSharding) -> jax.Array:
    """``x`` (host or device) on ``sharding``'s devices, each of this process's devices given its own
    slice. Not ``jax.device_put``: onto devices of several processes that checks the value is the same
    in every process, a collective (an all-gather of the whole array), which needs every process to
    put the same arrays at the same moment: the weights at start-up would all cross the network once,
    and a follower compiling a bucket on its own would hang the job."""
    host = np.asarray(x)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def path_str(path) -> str:
    """A pytree key path as ``layers_0/attn/q/kernel`` (what the rules' regexes match)."""
    return "/".join(str(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k)))) for k in path)


def spec_for(path: str, rules: Rules) -> P:
    for pattern, spec in rules:
        if re.search(pattern, path):
            return spec
    return P()


def valid_degrees(config: ModelConfig) -> list[int]:
    """Every N that ``plan`` accepts for this model (device count aside)."""
    return [n for n in range(1, config.num_heads + 1) if _shape_error(config, n) is None]


def _shape_error(config: ModelConfig, n: int) -> str | None:
    if config.num_heads % n:
        return f"it must divide the model's {config.num_heads} attention heads (num_heads)"
    if config.intermediate_size % n:
        return f"it must divide the model's MLP width {config.intermediate_size} (intermediate_size)"
    kvh = config.num_kv_heads
    if kvh % n and n % kvh:
        return (
            f"the model's {kvh} kv heads (num_kv_heads) can neither be split {n} ways nor repeated to {n} "
            f"(one must divide the other)"
        )
    return None


@dataclass(frozen=True)
class TensorParallel:
    """How one model is split over a mesh: the served config, the mesh, the parameter rules.

    Built by ``plan`` (which validates); the engine applies ``replicate_kv_heads`` then
    ``shard_params`` to the host parameters and hands this object to the model runner, which calls
    ``allocate_kv_cache``, ``shard_attention`` and ``keep_kv_sharding``.
    """

    mesh: Mesh
    config: ModelConfig  # the model as served: num_kv_heads raised to N when it was smaller
    source_num_kv_heads: int
    rules: Rules

    @property
    def size(self) -> int:
        return self.mesh.shape[MODEL_AXIS]

    @classmethod
    def plan(
        cls,
        config: ModelConfig,
        tensor_parallel: int,
        *,
        weight_quant: str = "none",
        devices: Sequence[jax.Device] | None = None,
    ) -> TensorParallel | None:
        """Validate ``tensor_parallel`` for this model and these devices; None for 1 (nothing to do)."""
        n = tensor_parallel
        if n == 1:
            return None
        problem = _shape_error(config, n)
        if problem:
            raise ValueError(
                f"tensor_parallel={n} does not fit model {config.name or config.architecture!r}: "
                f"{problem}; valid values: {', '.join(map(str, valid_degrees(config)))}"
            )
        if weight_quant != "none":
            raise ValueError(
                f"tensor_parallel={n} needs weight_quant 'none' (got {weight_quant!r}): the quantized "
                f"matmuls are custom calls that XLA cannot split over devices"
            )
        devices = list(devices if devices is not None else jax.devices())
        if len(devices) < n:
            raise ValueError(
                f"tensor_parallel={n} needs {n} devices; JAX sees {len(devices)} ({devices[0].platform}). "
                f"On CPU, emulate devices with XLA_FLAGS=--xla_force_host_platform_device_count={n} "
                f"(set before JAX starts)"
            )
        served = config
        if config.num_kv_heads < n:
            served = dataclasses.replace(config, num_kv_heads=n)
        rules = tuple(LAYER_RULES) + (tuple(VOCAB_RULES) if config.vocab_size % n == 0 else ())
        return cls(make_mesh(n, devices), served, config.num_kv_heads, rules)

    # ------------------------------------------------------------ parameters

    def replicate_kv_heads(self, params: dict[str, Any]) -> dict[str, Any]:
        """Host parameters with the K/V projections' heads repeated up to ``config.num_kv_heads``.

        A kernel [D, kvh * Dh] becomes [D, N * Dh]: head j of the result is head j // (N / kvh), so
        the device that holds query heads [i*H/N, (i+1)*H/N) holds a copy of their kv head."""
        repeat = self.config.num_kv_heads // self.source_num_kv_heads
        if repeat == 1:
            return params
        dh = self.config.head_dim

        def widen(kernel):
            k = np.asarray(kernel)
            d = k.shape[0]
            return np.repeat(k.reshape(d, self.source_num_kv_heads, dh), repeat, axis=1).reshape(d, -1)

        out = dict(params)
        for name, layer in params.items():
            if name.startswith("layers_"):
                attn = dict(layer["attn"])
                for proj in ("k", "v"):
                    attn[proj] = {**attn[proj], "kernel": widen(attn[proj]["kernel"])}
                out[name] = {**layer, "attn": attn}
        return out

    def param_specs(self, params: dict[str, Any]) -> Any:
        """The ``PartitionSpec`` tree of ``params`` under this plan's rules."""

        def spec(path, x):
            if hasattr(x, "dequantize"):
                raise TypeError(f"{path_str(path)} is a QuantizedMatrix; tensor parallelism needs float weights")
            return spec_for(path_str(path), self.rules)

        return jax.tree_util.tree_map_with_path(spec, params, is_leaf=lambda x: hasattr(x, "dequantize"))

    def shard_params(self, params: dict[str, Any], dtype) -> dict[str, Any]:
        """Host float32 parameters -> device arrays in the serving dtype, placed by the rules.

        Converted on the host and put shard by shard, so no device ever holds a whole sharded matrix."""
        specs = self.param_specs(params)

        def put(path, x, spec):
            return place(np.asarray(x).astype(param_dtype(path, dtype)), NamedSharding(self.mesh, spec))

        return jax.tree_util.tree_map_with_path(put, params, specs)

    def replicate(self, tree):
        """Host or device arrays copied to every device of the mesh (the step's inputs, the sampler state):
        over several processes an array must name the devices it lives on."""
        return jax.tree.map(lambda x: place(x, NamedSharding(self.mesh, P())), tree)

    def place_abstract(self, kv_caches, *replicated):
        """``ShapeDtypeStruct``s of a step's cache and other arguments placed as the engine places them: the
        cache split by kv head, the rest (sampler state, inputs) replicated. For lowering without arrays."""
        whole = NamedSharding(self.mesh, P())

        def on(x, sharding):
            return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)

        return (
            jax.tree.map(lambda x: on(x, self._kv_sharding(x)), kv_caches),
            *(jax.tree.map(lambda x: on(x, whole), tree) for tree in replicated),
        )

    # ------------------------------------------------------------ KV cache

    def _kv_sharding(self, x) -> NamedSharding:  # a leaf: 4-D pages, or 3-D scales or LanePages data
        return NamedSharding(self.mesh, PAGES_SPEC if x.ndim == 4 else LANES_SPEC)

    def allocate_kv_cache(self, allocate: Callable[[], Any]):
        """Run ``allocate() -> cache`` (zeroed pages) so that every page array (and 8-bit scales)
        is created split on its kv-head axis: each device allocates only its own heads' pages."""
        shardings = jax.tree.map(self._kv_sharding, jax.eval_shape(allocate))
        return jax.jit(allocate, out_shardings=shardings)()

    def constrain_kv_cache(self, kv_caches):
        """Inside the jitted step: the updated cache keeps the input's sharding (donation reuses it)."""
        return jax.tree.map(lambda x: jax.lax.with_sharding_constraint(x, self._kv_sharding(x)), kv_caches)

    def keep_kv_sharding(self, fn: Callable) -> Callable:
        """``fn(params, kv_caches, *rest) -> (out, kv_caches, *more)`` with the returned cache constrained
        (the step's ``rest`` and ``more`` hold the sampler state, replicated like the step's outputs).

        ``out`` gets one layout whatever the bucket: the logits ``[S, V]`` split by vocabulary as the head
        computes them (whole when the head is replicated), anything else (the step's sampled tokens)
        replicated. Left to GSPMD, the logits came out split in some buckets and whole in others, and the
        sampler, compiled once per sequence count from whichever bucket compiled first, then met logits
        laid out differently (a follower process compiling in another order refused them). Whole logits
        are no fix: GSPMD then gathered the embedding table itself ([V, D] a step) to make them."""
        vocab = any(p == VOCAB_RULES[0][0] for p, _ in self.rules)
        logits = NamedSharding(self.mesh, P(None, MODEL_AXIS) if vocab else P())
        replicated = NamedSharding(self.mesh, P())

        @functools.wraps(fn)
        def wrapped(params, kv_caches, *rest):
            out, kv_caches, *more = fn(params, kv_caches, *rest)
            if isinstance(out, tuple):  # the fused step's StepOutput
                out = jax.tree.map(lambda x: jax.lax.with_sharding_constraint(x, replicated), out)
            else:  # the model's logits
                out = jax.lax.with_sharding_constraint(out, logits)
            return (out, self.constrain_kv_cache(kv_caches), *more)

        return wrapped

    # ------------------------------------------------------------ attention

    def shard_attention(self, make_attend: Callable[..., Callable]) -> Callable[..., Callable]:
        """Wrap an attention factory so each device attends with its own heads (``jax.shard_map``).

        ``make_attend(*, sm_scale, sliding_window, soft_cap)`` -> ``attend(q, k_pages, v_pages, md)``;
        the wrapped ``attend`` takes the global arrays, hands each device its slice of q's heads and
        of the pages' kv heads (the metadata whole) and returns the global ``[T, H, Dh]`` output."""
        mesh = self.mesh

        def factory(*, sm_scale: float, sliding_window: int | None = None, soft_cap: float | None = None):
            attend = make_attend(sm_scale=sm_scale, sliding_window=sliding_window, soft_cap=soft_cap)

            def local_attend(q, k_pages, v_pages, md):  # on one device: its own heads (LanePages: its group)
                return attend(q, _local(k_pages), _local(v_pages), md)

            def sharded_attend(q, k_pages, v_pages, md):
                pages_specs = (_pages_spec(k_pages), _pages_spec(v_pages))
                # check_vma off: a Pallas call inside has no varying-axes rule.
                fn = jax.shard_map(
                    local_attend,
                    mesh=mesh,
                    in_specs=(HEADS_SPEC, *pages_specs, P()),
                    out_specs=HEADS_SPEC,
                    check_vma=False,
                )
                return fn(q, k_pages, v_pages, md)

            return sharded_attend

        return factory

    def describe(self) -> dict[str, Any]:
        return {
            "tensor_parallel": self.size,
            "mesh": dict(self.mesh.shape),
            "devices": [str(d) for d in self.mesh.devices.flat],
            "num_kv_heads": self.config.num_kv_heads,
            "source_num_kv_heads": self.source_num_kv_heads,
            "vocab_sharded": any(p == VOCAB_RULES[0][0] for p, _ in self.rules),
        }


def _pages_spec(pages):
    """``shard_map``'s in_spec (a pytree prefix) of a page array, scales, ``LanePages``/``LaneScales`` or
    ``QuantizedPages``."""
    if isinstance(pages, QuantizedPages):
        return QuantizedPages(_pages_spec(pages.codes), _pages_spec(pages.scales))
    if isinstance(pages, (LanePages, LaneScales)):
        return pages.with_data(LANES_SPEC)
    return SCALES_SPEC if pages.ndim == 3 else PAGES_SPEC  # [P, page, KVH] scales, or [P, page, KVH, D] pages


def _local(pages):
    """Inside ``shard_map``: ``LanePages`` as one device's group (its geometry; the data is already its shard)."""
    if isinstance(pages, QuantizedPages):
        return QuantizedPages(_local(pages.codes), _local(pages.scales))
    return pages.local() if isinstance(pages, (LanePages, LaneScales)) else pages
