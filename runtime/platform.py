"""Process-level XLA settings, and what the engine needs to know about the platform it runs on.

On CPU, XLA's default (Eigen) matmuls are slow for the small row counts of decode steps; the oneDNN
path is 2-3x faster there (measured here: [16, 576] x [576, 1536] 85 -> 31 ms for 90 matmuls, and
batch-1 SmolLM2 decode 12 -> 28 tok/s). It must be set before the first JAX computation, so entry
points (CLIs, the engine, test configuration) call ``configure_xla()`` first; it never overrides a
setting the user put in ``XLA_FLAGS``.

Platform defaults (each taken at engine start from the platform name, so tests can fake it)::

    platform (jax)        family   dtype default   KV budget default
    cpu                   cpu      float32         fixed kv_cache_bytes (256 MiB)
    gpu / cuda / rocm     gpu      bfloat16        kv_cache_memory_fraction of the device (memory_stats)
    tpu                   tpu      bfloat16        kv_cache_memory_fraction of the device (memory_stats)

``cpu_info()`` describes the host CPU (model, logical cores, SIMD flags, the CPU kernel's ISA path) for
benchmark results: the scripts under scripts/ record it under ``"cpu"`` (docs/results/README.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

CPU_FLAGS = ("--xla_cpu_use_onednn=true",)

GPU_PLATFORMS = ("gpu", "cuda", "rocm")  # jax.default_backend() says "gpu"; lowering_platforms says cuda/rocm
ACCELERATOR_DTYPE = "bfloat16"  # MXU / tensor-core native; half the weight and activation bytes
CPU_DTYPE = "float32"  # CPUs have no fast bfloat16 matmul in XLA; float32 is the tested reference there

# The SIMD flags a result records by name (any "amx*" flag too): x86 (/proc/cpuinfo "flags") and ARM
# ("Features": asimd is AArch64's NEON, neon the 32-bit name).
SIMD_FLAGS = (
    "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx_vnni",
    "neon", "asimd", "sve", "sve2",
)  # fmt: skip
# The CPU kernel's (runtime/quant/quant_matmul.cc) paths by the flags they need, first match wins; its
# AVX2 path also needs F16C (every AVX2 CPU has it).
ISA_PATHS = (("avx512", ("avx512f", "avx512bw", "avx512vl")), ("avx2", ("avx2", "fma", "f16c")))


def configure_xla() -> None:
    flags = os.environ.get("XLA_FLAGS", "")
    for flag in CPU_FLAGS:
        name = flag.split("=")[0]
        if name not in flags:
            flags = f"{flags} {flag}".strip()
    os.environ["XLA_FLAGS"] = flags


def compilation_cache_dir() -> str:
    """The persistent compilation cache's folder (``runtime.worker.model_runner.enable_compilation_cache``):
    ``JAXSERVE_COMPILATION_CACHE``, else ~/.cache/jaxserve/xla."""
    return os.environ.get("JAXSERVE_COMPILATION_CACHE", os.path.expanduser("~/.cache/jaxserve/xla"))


def current_platform() -> str:
    import jax

    return jax.default_backend()


def platform_family(platform: str | None = None) -> str:
    """``"tpu"``, ``"gpu"`` (gpu, cuda, rocm) or ``"cpu"``; another platform name is returned lower-cased
    as it is (it gets the CPU defaults and the XLA attention path)."""
    name = (platform or current_platform()).lower()
    return "gpu" if name in GPU_PLATFORMS else name


def is_accelerator(platform: str | None = None) -> bool:
    return platform_family(platform) in ("gpu", "tpu")


def resolve_dtype(dtype: str | None, platform: str | None = None) -> str:
    """The serving dtype: an explicit name as given; None or ``"auto"``: bfloat16 on an accelerator,
    float32 otherwise."""
    if dtype is None or dtype == "auto":
        return ACCELERATOR_DTYPE if is_accelerator(platform) else CPU_DTYPE
    return dtype


def device_memory_stats(devices: Sequence | None = None) -> dict[str, int] | None:
    """``{"bytes_limit", "bytes_in_use"}`` of the tightest of ``devices`` (default: the first device),
    from ``Device.memory_stats()``; None where a device reports none (CPU).

    With several devices (tensor parallel) each holds its share of the KV cache, so the one with the
    least room decides: the smallest limit and the largest use are reported together. On a GPU
    ``bytes_limit`` is the XLA client's pool (``XLA_PYTHON_CLIENT_MEM_FRACTION``, 75% of the device by
    default when preallocating), on a TPU about the whole HBM.
    """
    if devices is None:
        import jax

        devices = jax.devices()[:1]
    limits, used = [], []
    for d in devices:
        stats: Mapping[str, int] | None = d.memory_stats()
        if not stats or "bytes_limit" not in stats or "bytes_in_use" not in stats:
            return None
        limits.append(int(stats["bytes_limit"]))
        used.append(int(stats["bytes_in_use"]))
    return {"bytes_limit": min(limits), "bytes_in_use": max(used)}


def cpu_info(cpuinfo: str | None = None, machine: str | None = None) -> dict:
    """The host CPU as a JSON-able dict, for benchmark results::

        {"model": "AMD EPYC", "logical_cores": 2, "machine": "x86_64", "isa_path": "avx2",
         "simd_flags": ["avx", "avx2", "fma", "f16c"], "flags": "fpu vme ... (the whole line)"}

    ``cpuinfo``: the text of ``/proc/cpuinfo`` (default: read it; none, e.g. on macOS: model from
    ``platform.processor()``, no flags); ``machine``: default ``platform.machine()``. The first
    processor's ``model name`` and ``flags`` (x86) or ``Features`` (ARM) lines are read. ``isa_path`` is
    the path these flags select in the CPU kernel built with ``-march=native``: ``"avx512"`` (avx512f +
    avx512bw + avx512vl), ``"avx2"`` (avx2 + fma + f16c), else ``"portable"``; it is read from the flags,
    not from a built kernel (a kernel built for another ISA on purpose is not seen here).
    ``logical_cores`` is ``os.cpu_count()`` (the machine's, not this process's affinity).
    """
    import platform

    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            cpuinfo = ""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and key in ("model name", "flags", "Features"):
            fields.setdefault(key, value.strip())
    flags = fields.get("flags") or fields.get("Features") or ""
    present = set(flags.split())
    simd = [f for f in SIMD_FLAGS if f in present] + sorted(f for f in present if f.startswith("amx"))
    isa = next((name for name, need in ISA_PATHS if present.issuperset(need)), "portable")
    return {
        "model": fields.get("model name") or platform.processor() or None,
        "logical_cores": os.cpu_count(),
        "machine": machine if machine is not None else platform.machine(),
        "isa_path": isa,
        "simd_flags": simd,
        "flags": flags,
    }
