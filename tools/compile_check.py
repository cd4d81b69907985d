"""Compile check: every kernel and the engine step compiled by the real device compilers, with no device.

    python -m tools.compile_check                         # the default matrix, every target
    python -m tools.compile_check --platform tpu-v5e --kernels ragged_paged_attention
    python -m tools.compile_check --head-dim 96 --num-heads 12 --num-kv-heads 4 --page-size 32

Step 3 of the design notes' "Proving accelerator code on a CPU machine". Where the lowering check
(``tools.lowering_check``) stops at StableHLO, this one runs the compilers a device would:

* TPU v5e, v6e: ``jax.experimental.topologies.get_topology_desc("v5e:2x2", "tpu")`` with libtpu
  installed gives compile-only TPU devices; ``.lower().compile()`` on arguments placed on one of them
  runs Mosaic's passes (DMA alignment, layouts, VMEM) and XLA's HBM accounting.
* H100 (sm_90) and A100 (sm_80): with the CUDA plugin installed (and ``JAX_PLATFORMS=cpu``),
  ``get_topology_desc(..., "cuda", target_config=<GpuTargetConfigProto text>)`` gives a compile-only
  GPU; ``.compile()`` runs Triton to PTX to a cubin (``ptxas`` from the nvcc wheel) and checks shared
  memory and registers. The target configs are ``GPU_SPECS`` below (the chips' published limits).

The compilers live in their own virtual environments beside ``.venv`` (``make compile-envs`` builds
them: ``.venvs/tpu`` adds libtpu, ``.venvs/cuda`` the CUDA plugin and nvcc's ``ptxas``; each sees
``.venv``'s packages through a ``.pth`` file). This command runs each platform's cases in a worker
process under that platform's interpreter, so a compiler that aborts the process (LLVM's fatal
errors do) fails the cases it did not reach instead of the whole check.

Output: one JSON line per case, as the lowering check's, plus ``memory`` (``compiled.memory_analysis()``:
argument, output, alias and temporary bytes); for an engine step also ``kv_cache_bytes``,
``temp_share_of_kv``, ``cache_temp_share_of_kv`` (what grows with the cache), ``step_bytes`` and ``device_bytes``;
for a TPU attention case ``kv_cache_bytes`` and ``temp_share_of_kv``. Then a summary line. Exit 1 when any case
failed, 2 on bad arguments.

The TPU attention cases pass the cache as the engine stores it on a TPU, in the kernel's lanes layout
(``runtime.quant.kv.LanePages``), and fail if the call's temporaries reach ``CACHE_TEMP_LIMIT`` of the cache:
a relayout of the pages before the kernel (what the ``[P, page, KVH, D]`` layout cost) is back.

A case is ok when it compiles and its lowered module holds the target's Pallas custom call (a kernel
that fell back to XLA is not a pass). The kernels run over the lowering check's matrix (or the
command line's shape), and at 2,048 tokens over 256 sequences (``BUSY_SEQS``), with a KV cache sized the
way the engine sizes it on that chip: ``kv_cache_memory_fraction`` of its HBM less the bfloat16 weights
less the step's working memory, which it first compiles at one sequence's pages to read
(``runtime.core.kv_sizing``; ``runtime.worker.model_runner.step_working_bytes``). A setting that leaves no room
is ``"refused"`` with the engine's start-up message. It is ok only if the temporaries that grow with the
cache stay under ``CACHE_TEMP_LIMIT`` (1%) of it (the cache is donated and updated in place, so a step that
copies it shows up here) and everything it needs fits the chip's HBM. ``engine_step_multihost`` compiles
the step tensor-parallel over chips of two hosts of a v5e / v6e 4x4 slice (``MULTIHOST_TOPOLOGIES``). A
setting a chip cannot compile and that the kernel refuses up front (fp8 KV below sm_89) is recorded
with ``"refused"`` and its message: a clear error at engine start, not a compiler abort, is the pass.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pallas_kernels.api import UnsupportedSetting
from tools import lowering_check as lc

# Temporaries that grow with the KV cache, as a share of it: an engine step's beyond its working memory, a TPU
# attention call's in all. A copy or relayout of the cache is a whole layer's K and V or more (SmolLM2: 1/30 of
# its cache; the TPU [P, page, KVH, D] relayout before the lanes layout: 4.3-6.5% of the engine's cache,
# 100-190% of an attention case's), so 1% catches one while leaving room for what truly scales with pages.
CACHE_TEMP_LIMIT = 0.01
BUSY_SEQS = 256  # the engine steps are also compiled at this many sequences a step
REPO = Path(__file__).resolve().parent.parent
# The compilers' venvs for this Python: .venvs/tpu and .venvs/cuda over .venv (3.11, jax 0.10.2);
# .venvs/py312-tpu and .venvs/py312-cuda over .venvs/py312 (the newest JAX; `make compile-envs-py312`).
_TAG = "" if sys.version_info[:2] == (3, 11) else f"py{sys.version_info[0]}{sys.version_info[1]}-"
VENVS = {"tpu": REPO / ".venvs" / f"{_TAG}tpu", "cuda": REPO / ".venvs" / f"{_TAG}cuda"}
GiB = 2**30


@dataclasses.dataclass(frozen=True)
class GpuSpec:
    """The fields of XLA's ``GpuTargetConfigProto`` a compile-only GPU needs (published chip limits)."""

    description: str  # device_kind
    capability: tuple[int, int]
    cores: int  # SMs
    shared_memory_per_block_optin: int
    shared_memory_per_core: int
    memory_bytes: int
    memory_bandwidth: int  # bytes/s
    l2_cache_bytes: int
    clock_ghz: float
    fpus_per_core: int

    def target_config(self) -> str:
        major, minor = self.capability
        return f"""gpu_device_info {{
  threads_per_block_limit: 1024
  threads_per_warp: 32
  shared_memory_per_block: 49152
  shared_memory_per_core: {self.shared_memory_per_core}
  threads_per_core_limit: 2048
  core_count: {self.cores}
  fpus_per_core: {self.fpus_per_core}
  block_dim_limit_x: 2147483647
  block_dim_limit_y: 65535
  block_dim_limit_z: 65535
  memory_bandwidth: {self.memory_bandwidth}
  l2_cache_size: {self.l2_cache_bytes}
  clock_rate_ghz: {self.clock_ghz}
  device_memory_size: {self.memory_bytes}
  shared_memory_per_block_optin: {self.shared_memory_per_block_optin}
  cuda_compute_capability {{ major: {major} minor: {minor} }}
  registers_per_core_limit: 65536
  registers_per_block_limit: 65536
}}
platform_name: "CUDA"
dnn_version_info {{ major: 9 minor: 1 }}
device_description_str: "{self.description}"
"""


GPU_SPECS = {
    "h100": GpuSpec(
        "NVIDIA H100 80GB HBM3", (9, 0), 132, 232448, 233472, 84942979072, 3352 * 10**9, 50 * 2**20, 1.98, 128
    ),
    "a100": GpuSpec(
        "NVIDIA A100-SXM4-80GB", (8, 0), 108, 166912, 167936, 85051572224, 2039 * 10**9, 40 * 2**20, 1.41, 64
    ),
}


@dataclasses.dataclass(frozen=True)
class CompileTarget:
    """A chip to compile for. ``platform`` is the lowering platform; ``hbm_bytes`` what the engine would
    read as the device's memory (``bytes_limit``)."""

    name: str
    platform: str  # "tpu" | "cuda"
    device_kind: str
    hbm_bytes: int
    kernel_calls: tuple[str, ...]
    topology: str = ""  # TPU: get_topology_desc's name

    @property
    def capability(self) -> tuple[int, int] | None:
        spec = GPU_SPECS.get(self.name)
        return None if spec is None else spec.capability

    @property
    def abstract_platform(self) -> str:
        # "cuda", not "gpu": jax 0.12 resolves an abstract device's platform to a backend, and with
        # JAX_PLATFORMS=cpu only "cuda" names the plugin's compile-only one.
        return self.platform


_GPU_CALLS = ("__gpu$xla.gpu.triton", "triton_kernel_call", "mosaic_gpu_v2")
TARGETS: dict[str, CompileTarget] = {
    t.name: t
    for t in (
        # HBM as XLA reports it to the compiler ("available HBM 15.75G" on v5e; 31.25G on v6e).
        CompileTarget("tpu-v5e", "tpu", "TPU v5 lite", int(15.75 * GiB), ("tpu_custom_call",), "v5e:2x2"),
        CompileTarget("tpu-v6e", "tpu", "TPU v6 lite", int(31.25 * GiB), ("tpu_custom_call",), "v6e:2x2"),
        CompileTarget("h100", "cuda", GPU_SPECS["h100"].description, GPU_SPECS["h100"].memory_bytes, _GPU_CALLS),
        CompileTarget("a100", "cuda", GPU_SPECS["a100"].description, GPU_SPECS["a100"].memory_bytes, _GPU_CALLS),
    )
}


# ---------------------------------------------------------------- compile-only devices


def has_compiler(platform: str) -> bool:
    """Whether this interpreter can compile for ``platform`` (libtpu, or the CUDA plugin + ptxas)."""
    if platform == "tpu":
        return importlib.util.find_spec("libtpu") is not None
    try:
        return importlib.util.find_spec("jax_plugins.xla_cuda12") is not None
    except ModuleNotFoundError:  # no jax_plugins namespace at all
        return False


def compiler_python(platform: str) -> str | None:
    """An interpreter that has ``platform``'s compiler: this one, else the project's venv for it."""
    if has_compiler(platform):
        return sys.executable
    python = VENVS[platform] / "bin" / "python"
    return str(python) if python.exists() else None


def worker_env(platform: str) -> dict[str, str]:
    env = dict(os.environ)
    env["JAX_PLATFORMS"] = "cpu"  # compile-only devices come from the topology, not from a backend
    if platform == "tpu":
        env.setdefault("TPU_SKIP_MDS_QUERY", "1")  # no metadata server: libtpu's warnings are harmless
        env.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")  # no device to share: skip libtpu's one-process lock
    else:
        env["JAX_SKIP_CUDA_CONSTRAINTS_CHECK"] = "1"  # no driver to check
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


_DEVICES: dict[str, Any] = {}


def compile_device(target: CompileTarget):
    """A compile-only device of ``target`` (made once per process)."""
    if target.name not in _DEVICES:
        from jax.experimental import topologies

        if target.platform == "tpu":
            topology = topologies.get_topology_desc(target.topology, "tpu")
        else:
            spec = GPU_SPECS[target.name]
            topology = topologies.get_topology_desc(
                target.name, "cuda", target_config=spec.target_config(), topology="1x1x1"
            )
        _DEVICES[target.name] = topology.devices[0]
    return _DEVICES[target.name]


def compile_for(fn, args, target: CompileTarget):
    """(lowered StableHLO text, compiled executable) of ``fn`` for ``target`` with abstract ``args``.

    The arguments are placed on a compile-only device; an abstract mesh of that device kind is in
    context so the kernels' block-size tables and budgets are the chip's. A function that is already
    jitted is compiled as it is, keeping its donated arguments (the engine step's KV cache)."""
    import jax
    from jax.sharding import AbstractDevice, AbstractMesh, SingleDeviceSharding

    # Arguments already on a mesh (the multi-host step) stay where they are.
    meshed = any(getattr(a, "sharding", None) is not None for a in jax.tree.leaves(args))
    sharding = SingleDeviceSharding(compile_device(target))
    placed = jax.tree.map(
        lambda a: (
            a if getattr(a, "sharding", None) is not None else jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding)
        ),
        args,
    )
    device = AbstractDevice(
        device_kind=target.device_kind,
        num_cores=1 if target.platform == "tpu" else None,
        platform=target.abstract_platform,
    )
    jitted = fn if hasattr(fn, "trace") else jax.jit(fn)
    if meshed:  # on a mesh of the topology's own devices: its shard_map names that mesh, not an abstract one
        lowered = jitted.trace(*placed).lower()
        return lowered.as_text(), lowered.compile()
    with jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("x",), abstract_device=device)):
        lowered = jitted.trace(*placed).lower()
        return lowered.as_text(), lowered.compile()


# ---------------------------------------------------------------- cases


def engine_pages(shape: lc.EngineShape, target: CompileTarget, step_bytes: int = 0) -> int:
    """KV pages the engine would allocate on ``target``: ``kv_cache_memory_fraction`` of its HBM less the
    bfloat16 weights and the step's working memory (``step_bytes``, compiled first: ``probe_step_bytes``),
    with ``runtime.core.kv_sizing``'s arithmetic, unless the shape names a count. ValueError when nothing
    is left, or less than 2 blocks: the engine refuses that setting at start-up with the same message."""
    if shape.num_pages is not None:
        return shape.num_pages
    from runtime.api import DEFAULT_MEMORY_FRACTION
    from runtime.core.kv_sizing import blocks_for_budget, kv_budget_from_memory
    from runtime.kv_calc import weight_bytes

    config = lc.model_config(shape.model)
    budget = kv_budget_from_memory(
        target.hbm_bytes, weight_bytes(config, "bfloat16"), DEFAULT_MEMORY_FRACTION, step_bytes
    )
    pages = blocks_for_budget(_kv_shape(config, target), shape.kv_dtype, shape.page_size, budget)
    if pages < 2:
        raise ValueError(f"the KV budget of {budget} bytes holds {pages} blocks; need at least 2")
    return pages


def probe_step_bytes(case: lc.Case) -> int:
    """The step's temporaries at the case's bucket against a cache of one sequence's pages: what the
    engine measures before sizing its cache (``runtime.worker.model_runner.step_working_bytes``)."""
    shape = case.shape
    probe = dataclasses.replace(shape, num_pages=-(-shape.max_model_len // shape.page_size) + 1)
    fn, args, *_ = case.kernel.build(probe, case.target)
    _, compiled = compile_for(fn, args, case.target)
    memory = memory_record(compiled)
    return memory["temp_bytes"] if memory else 0


def memory_record(compiled) -> dict[str, int] | None:
    stats = compiled.memory_analysis()
    if stats is None:
        return None
    return {
        "argument_bytes": int(stats.argument_size_in_bytes),
        "output_bytes": int(stats.output_size_in_bytes),
        "alias_bytes": int(stats.alias_size_in_bytes),
        "temp_bytes": int(stats.temp_size_in_bytes),
    }


def check(case: lc.Case) -> dict[str, Any]:
    """Compile one case; the JSON record of its outcome (never raises for the case's own errors)."""
    target: CompileTarget = case.target
    shape = case.shape
    record = lc.new_record(case, shape)
    start = time.perf_counter()
    try:
        one_chip = case.kernel.shapes == "engine" and case.kernel is not MULTIHOST_KERNEL
        if one_chip and shape.num_pages is None:  # sized as the engine sizes it
            record["step_bytes"] = step = probe_step_bytes(case)
            try:
                shape = dataclasses.replace(shape, num_pages=engine_pages(shape, target, step))
            except ValueError as exc:  # the engine refuses this setting at start-up, before compiling
                record.update(ok=True, refused=str(exc))
                record["seconds"] = round(time.perf_counter() - start, 3)
                return record
            record["shape"].update(num_pages=shape.num_pages)
        fn, args, *info = case.kernel.build(shape, target)
        for extra in info:
            record["shape"].update(extra.get("shape", {}))
            record.update({k: v for k, v in extra.items() if k != "shape"})
        text, compiled = compile_for(fn, args, target)
        calls = lc.custom_calls(text)
        record["custom_calls"] = calls
        record["memory"] = memory = memory_record(compiled)
        if case.kernel.expect_kernel_call and not set(calls) & set(target.kernel_calls):
            record["error"] = (
                f"compiled, but without a Pallas kernel for {target.name} (expected a custom call to one of "
                f"{', '.join(target.kernel_calls)}; found {calls or 'none'})"
            )
        elif "kv_cache_bytes" in record and case.kernel.shapes == "attention":  # the TPU kernel on the engine's layout
            record["temp_share_of_kv"] = share = round(memory["temp_bytes"] / record["kv_cache_bytes"], 4)
            if share >= CACHE_TEMP_LIMIT:
                record["error"] = (
                    f"the attention call's temporaries are {share:.1%} of the KV cache it reads (limit "
                    f"{CACHE_TEMP_LIMIT:.0%}): the pages (or scales) are relaid out before the kernel, not DMA'd "
                    f"as they are"
                )
            else:
                record["ok"] = True
        elif one_chip:
            record.update(_engine_memory(shape, target, memory, record.get("step_bytes", 0)))
            used = memory["argument_bytes"] + memory["temp_bytes"] + memory["output_bytes"] - memory["alias_bytes"]
            record["device_bytes"] = used
            if record["cache_temp_share_of_kv"] >= CACHE_TEMP_LIMIT:
                record["error"] = (
                    f"the step's temporaries beyond its working memory at one sequence's pages are "
                    f"{record['cache_temp_share_of_kv']:.1%} of its KV cache (limit {CACHE_TEMP_LIMIT:.0%}): "
                    f"the cache is copied or relaid out, not read and updated in place"
                )
            elif used > target.hbm_bytes:
                record["error"] = (
                    f"the step needs {used / GiB:.2f} GiB (arguments, temporaries, outputs not aliased) of the "
                    f"{target.hbm_bytes / GiB:.2f} GiB the chip has: the KV cache was sized without room for it"
                )
            else:
                record["ok"] = True
        else:
            record["ok"] = True
    except UnsupportedSetting as exc:  # refused up front by design: a clear error, not a compiler abort
        record.update(ok=True, refused=lc._error_text(exc))
    except Exception as exc:  # noqa: BLE001 - any failure to compile is the finding, reported and counted
        record["error"] = lc._error_text(exc)
    record["seconds"] = round(time.perf_counter() - start, 3)
    return record


# Multi-host slices libtpu describes without the hosts: v5e:4x4 and v6e:4x4 are four hosts of four chips
# (``device.process_index`` 0-3), what a pod slice's jax.distributed job sees (runtime/distributed/multihost.py).
MULTIHOST_TOPOLOGIES = {"tpu-v5e": "v5e:4x4", "tpu-v6e": "v6e:4x4"}


def build_engine_step_multihost(shape: lc.EngineShape, target: CompileTarget):
    """The engine step tensor-parallel over chips of two hosts of a multi-host slice, as a multi-process job
    runs it: the largest degree up to 4 the model takes (SmolLM2 3, Gemma 3 4), its collectives crossing
    hosts. Arguments placed on the mesh by the partition rules; the cache sized for a
    single chip's budget and split over the mesh (the one-chip cases check the memory)."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import topologies
    from jax.sharding import NamedSharding

    from runtime.distributed.sharding import TensorParallel, valid_degrees
    from runtime.worker.model_runner import abstract_params, abstract_step_args, make_step_fn

    devices = sorted(topologies.get_topology_desc(MULTIHOST_TOPOLOGIES[target.name], "tpu").devices, key=lambda d: d.id)
    config = lc.model_config(shape.model)
    n = max(d for d in valid_degrees(config) if d <= 4)
    # The first n chips by id: a row of the slice's ICI mesh, two per host (ids 0-1 on host 0, 2-3 on host 1).
    # One chip of each host ([0, 2, 8, 10]) compiled for 3 chips but not for 4 (libtpu: "Unexpected device_id
    # 8 in replica group (0,1,2,3)"), a compile-only topology's limit or ours, not yet known.
    tp = TensorParallel.plan(config, n, devices=devices[:n])
    served = tp.config
    num_pages = engine_pages(shape, target)
    _, kv, state, inputs = abstract_step_args(
        served,
        num_tokens=shape.tokens,
        num_seqs=shape.max_seqs,
        num_pages=num_pages,
        page_size=shape.page_size,
        pages_per_seq=-(-shape.max_model_len // shape.page_size),
        dtype="bfloat16",
        kv_dtype=shape.kv_dtype,
    )
    params = abstract_params(served, "bfloat16")
    params = jax.tree.map(
        lambda x, spec: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=NamedSharding(tp.mesh, spec)),
        params,
        tp.param_specs(params),
    )
    args = (params, *tp.place_abstract(kv, state, inputs))
    step = make_step_fn(served, attention_backend="auto", dtype=jnp.bfloat16, tensor_parallel=tp, platform="tpu").step
    hosts = sorted({d.process_index for d in tp.mesh.devices.flat})
    info = {
        "topology": MULTIHOST_TOPOLOGIES[target.name],
        "tensor_parallel": n,
        "hosts": hosts,
        "shape": {"num_pages": num_pages, "num_kv_heads_served": served.num_kv_heads},
    }
    return step, args, info


MULTIHOST_KERNEL = lc.Kernel("engine_step_multihost", ("tpu",), "engine", build_engine_step_multihost)


def _kv_shape(config, target: CompileTarget):
    """The cache's ``KVShape`` as the engine stores it on ``target`` (TPU: the kernel's lanes layout)."""
    from runtime.core.kv_sizing import KVShape
    from runtime.worker.attention import kv_lane_groups

    return KVShape.of(config, kv_lane_groups("auto", target.platform))


def _engine_memory(
    shape: lc.EngineShape, target: CompileTarget, memory: dict[str, int] | None, step_bytes: int = 0
) -> dict[str, Any]:
    """The KV bytes, the temporaries as a share of them, and the share that grows with the cache: the
    temporaries beyond ``step_bytes`` (the same step's at one sequence's pages). The working memory the
    engine leaves free (Gemma 3's sampler over 262k logits at 256 sequences: 2.8 GiB) is not a copy of the
    cache; what grows with the cache is (a relayout of it, or the cache not donated)."""
    from runtime.core.kv_sizing import kv_bytes_per_block

    config = lc.model_config(shape.model)
    kv = shape.num_pages * kv_bytes_per_block(_kv_shape(config, target), shape.kv_dtype, shape.page_size)
    temp = memory["temp_bytes"] if memory else 0
    return {
        "kv_cache_bytes": kv,
        "temp_share_of_kv": round(temp / kv, 4),
        "cache_temp_share_of_kv": round(max(temp - step_bytes, 0) / kv, 4),
    }


def run_local(cases: Sequence[lc.Case], out) -> tuple[int, int]:
    failed = 0
    for case in cases:
        record = check(case)
        failed += not record["ok"]
        print(json.dumps(record), file=out, flush=True)
    return len(cases), failed


# ---------------------------------------------------------------- command line


def parser(kernel_names: Sequence[str]):
    p = lc.parser(
        kernel_names,
        targets=TARGETS,
        prog="python -m tools.compile_check",
        description="Compile every Pallas kernel and the engine step for TPU v5e/v6e (libtpu) and H100/A100 "
        "(XLA's GPU compiler, Triton, ptxas) on compile-only devices; one JSON line per case, exit 1 on any "
        "failure.",
    )
    p.add_argument("--registry", help=argparse_suppress(), default=None)
    p.add_argument("--worker", action="store_true", help=argparse_suppress())
    return p


def argparse_suppress() -> str:
    import argparse

    return argparse.SUPPRESS


def load_registry(spec: str | None) -> dict[str, lc.Kernel]:
    """``module:attribute`` naming a dict of ``Kernel``s (tests plant broken kernels this way), or the
    lowering check's registry."""
    if not spec:
        return {**lc.KERNELS, MULTIHOST_KERNEL.name: MULTIHOST_KERNEL}
    module, _, attr = spec.partition(":")
    return dict(getattr(importlib.import_module(module), attr))


def engine_defaults() -> list[lc.EngineShape]:
    """The engine steps as ``EngineConfig``'s defaults build them: its largest bucket (max_num_batched_tokens
    tokens over max_num_seqs sequences), its block size and max_model_len. The KV cache then comes from
    each chip's HBM (``engine_pages``)."""
    from runtime.api import EngineConfig

    e = EngineConfig(model="smollm2-135m")
    defaults = [
        dataclasses.replace(
            s,
            tokens=e.max_num_batched_tokens,
            max_seqs=e.max_num_seqs,
            page_size=e.block_size,
            max_model_len=e.max_model_len,
        )
        for s in lc.DEFAULT_ENGINE_SHAPES
    ]
    # A user who raises max_num_seqs to 256 (a 2,048-token budget): the sampler's [256, vocab] rows are
    # ~3 GB for Gemma 3's 262k vocabulary, which the cache must leave free (issue 46).
    busy = [dataclasses.replace(s, tokens=2048, max_seqs=BUSY_SEQS) for s in defaults]
    return defaults + busy


def _cases(args, p, registry: Mapping[str, lc.Kernel], targets: Sequence[CompileTarget]) -> list[lc.Case]:
    shapes = lc.selected_shapes(args, p)
    custom = any(getattr(args, name) is not None for name in lc.SHAPE_OPTIONS)
    if shapes["engine"] and not custom:
        shapes["engine"] = engine_defaults()
    kernels = lc._select_kernels(args.kernels, registry, p)
    cases = lc.build_cases(targets, kernels, shapes)
    # A GPU kernel for newer chips only (Mosaic GPU: sm_90+) is not compiled for older ones.
    return [
        c
        for c in cases
        if (c.kernel.min_capability is None or (c.target.capability or (0, 0)) >= c.kernel.min_capability)
        and not (
            c.kernel is MULTIHOST_KERNEL
            and (c.target.name not in MULTIHOST_TOPOLOGIES or c.shape.max_seqs == BUSY_SEQS)
        )
    ]


def _worker_argv(argv: Sequence[str], names: Sequence[str]) -> list[str]:
    """``argv`` with its --platform options replaced by ``names``, plus --worker."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--platform":
            skip = True
            continue
        if arg.startswith("--platform="):
            continue
        out.append(arg)
    for name in names:
        out += ["--platform", name]
    return out + ["--worker"]


_PRINT = threading.Lock()
_REFUSED: list[dict[str, Any]] = []


def _emit(record: dict[str, Any], out) -> None:
    with _PRINT:
        if record.get("refused"):
            _REFUSED.append(record)
        print(json.dumps(record), file=out, flush=True)
        print(brief(record), file=sys.stderr, flush=True)


def _run_worker(platform: str, names: list[str], argv: Sequence[str], cases: list[lc.Case], out) -> tuple[int, int]:
    """The platform's cases in a worker under its compiler's interpreter; its JSON lines passed on. Cases
    it never reported (no compiler, or the process died: a compiler abort) are failures."""
    expected = len(cases)
    python = compiler_python(platform)
    if python is None:
        make = "compile-envs" if not _TAG else f"compile-envs-{_TAG[:-1]}"
        reason = f"no {platform} compiler: run `make {make}` (builds {VENVS[platform].relative_to(REPO)})"
        return _report_missing(cases, 0, reason, out)
    cmd = [python, "-m", "tools.compile_check", *_worker_argv(argv, names)]
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=worker_env(platform), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    err_lines: list[str] = []
    reader = threading.Thread(target=lambda: err_lines.extend(proc.stderr), daemon=True)
    reader.start()
    seen = failed = 0
    for line in proc.stdout:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        seen += 1
        failed += not record.get("ok")
        _emit(record, out)
    code = proc.wait()
    reader.join(timeout=10)
    if seen < expected:
        tail = " | ".join(line.strip() for line in err_lines[-8:] if line.strip())[-1500:]
        reason = f"the {platform} compiler process ended with status {code} before this case: {tail}"
        _, missing = _report_missing(cases, seen, reason, out)
        failed += missing
    return expected, failed


def brief(record: dict[str, Any]) -> str:
    """One line a person reads: outcome, target, kernel, shape, temporaries (and the error)."""
    shape = record["shape"]
    if "model" in shape:
        what = f"{shape['model']} {shape['tokens']} tok x {shape['max_seqs']} seqs, {shape.get('num_pages')} pages"
    elif "head_dim" in shape:
        what = (
            f"hd {shape['head_dim']} heads {shape['num_heads']}/{shape['num_kv_heads']} page {shape['page_size']} "
            f"{shape['kv_dtype']}"
        )
    else:
        what = f"{shape['m']}x{shape['k']}x{shape['n']} int{shape['bits']}"
    outcome = "refused" if record.get("refused") else ("ok" if record["ok"] else "FAILED")
    line = f"{outcome:8} {record['target']:8} {record['kernel']:27} {what}"
    memory = record.get("memory")
    if memory:
        line += f"  temp {memory['temp_bytes'] / GiB:.2f} GiB"
    if "temp_share_of_kv" in record:
        line += f" ({record['temp_share_of_kv']:.1%} of {record['kv_cache_bytes'] / GiB:.1f} GiB KV"
        if "cache_temp_share_of_kv" in record:  # an engine step
            line += f"; {record['cache_temp_share_of_kv']:.1%} grows with it"
        line += ")"
    if "hosts" in record:
        line += f", TP {record['tensor_parallel']} over hosts {record['hosts']} of {record['topology']}"
    if "step_bytes" in record:
        line += f", cache sized after {record['step_bytes'] / GiB:.2f} GiB of step"
    if record.get("error") or record.get("refused"):
        line += f"  {(record.get('error') or record.get('refused'))[:300]}"
    return line


def _report_missing(cases: Sequence[lc.Case], start: int, reason: str, out) -> tuple[int, int]:
    for case in cases[start:]:
        _emit(lc.new_record(case, error=reason), out)
    return len(cases), len(cases) - start


def _provenance() -> dict[str, Any]:
    """What ran the check: this JAX, the compilers' versions, the machine (results JSONs record the CPU)."""
    from importlib import metadata

    from runtime.platform import cpu_info

    def version(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    compilers = {}
    for platform, packages in (("tpu", ("libtpu",)), ("cuda", ("jax-cuda12-plugin", "nvidia-cuda-nvcc-cu12"))):
        site = sorted(VENVS[platform].glob("lib/python*/site-packages"))
        for name in packages:  # in the compiler's venv, else in this one
            dists = [d for d in metadata.distributions(path=[str(p) for p in site]) if d.metadata["Name"] == name]
            compilers[name] = dists[0].version if dists else version(name)
    return {"python": sys.version.split()[0], "jax": version("jax"), "compilers": compilers, "cpu": cpu_info()}


def main(argv: Sequence[str] | None = None, out=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    probe = parser([])
    known, _ = probe.parse_known_args(argv)
    registry = load_registry(known.registry)
    p = parser(list(registry))
    args = p.parse_args(argv)
    targets = [TARGETS[name] for name in dict.fromkeys(args.platform or TARGETS)]
    start = time.perf_counter()
    if args.worker:  # one platform, this interpreter: compile and print the records
        total, failed = run_local(_cases(args, p, registry, targets), out)
        return 1 if failed else 0
    # One worker per platform, side by side (each compiler is single-threaded for most of a case); their
    # records interleave, each naming its target.
    from concurrent.futures import ThreadPoolExecutor

    groups = {pf: [t for t in targets if t.platform == pf] for pf in dict.fromkeys(t.platform for t in targets)}
    with ThreadPoolExecutor(len(groups)) as pool:
        futures = [
            pool.submit(_run_worker, pf, [t.name for t in group], argv, _cases(args, p, registry, group), out)
            for pf, group in groups.items()
        ]
        results = [f.result() for f in futures]
    total, failed = sum(n for n, _ in results), sum(f for _, f in results)
    seconds = round(time.perf_counter() - start, 2)
    print(
        json.dumps(
            {
                "summary": True,
                "total": total,
                "ok": total - failed,
                "refused": len(_REFUSED),  # counted in ok: refused up front by design
                "failed": failed,
                "seconds": seconds,
                **_provenance(),
            }
        ),
        file=out,
        flush=True,
    )
    print(
        f"compile check: {total - failed}/{total} ok ({len(_REFUSED)} of them refused up front by design), "
        f"{failed} failed, {seconds:.1f} s",
        file=sys.stderr,
    )
    return 1 if failed or not total else 0


if __name__ == "__main__":
    sys.exit(main())
