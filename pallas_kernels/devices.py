"""Which accelerator the kernels tune for: device kind -> TPU chip, and the kind of the current target.

Block-size tables (``ragged_paged_attention/tpu.py``, ``gpu_block_sizes.py``, ``quant_matmul/tpu.py``)
are keyed by jax's ``Device.device_kind``. The kind comes from the abstract mesh in context when there
is one (cross-lowering from a machine without the device: ``pallas_kernels.lowering``), else from this
process's first device when it is of the wanted platform, else it is "" (each table's fallback rule).
"""

from __future__ import annotations

import jax
from jax.experimental.pallas import tpu as pltpu

# device_kind prefix -> chip name of ``pltpu.ChipVersion`` (longest prefixes first).
_TPU_CHIPS = (
    ("TPU v5 lite", "v5e"),
    ("TPU v5e", "v5e"),
    ("TPU v6 lite", "v6e"),
    ("TPU v6e", "v6e"),
    ("TPU v5p", "v5p"),
    ("TPU v5", "v5p"),
    ("TPU v4", "v4"),
    ("TPU7x", "7x"),
    ("TPU 7x", "7x"),
)


def tpu_chip(device_kind: str | None) -> str | None:
    """'TPU v6 lite' -> 'v6e'; None for a kind that is not a known TPU."""
    for prefix, chip in _TPU_CHIPS:
        if device_kind and device_kind.startswith(prefix):
            return chip
    return None


def tpu_info(device_kind: str | None):
    """``pltpu.TpuInfo`` (VMEM/SMEM sizes, bandwidth, FLOP/s) of the kind's chip, or None."""
    chip = tpu_chip(device_kind)
    return None if chip is None else pltpu.get_tpu_info_for_chip(pltpu.ChipVersion(chip), 1)


def target_platform() -> str:
    """The platform code is traced for: the abstract mesh's device's when cross-lowering (e.g. "tpu"),
    else JAX's default backend."""
    device = getattr(jax.sharding.get_abstract_mesh(), "abstract_device", None)
    return device.platform if device is not None else jax.default_backend()


def target_device_kind(platform: str) -> str:
    """The device kind to tune for on ``platform`` ("tpu" or "gpu"): the abstract mesh's device when
    it is of that platform, else device 0's when it is, else ""."""
    family = _GPU_PLATFORMS if platform in _GPU_PLATFORMS else (platform,)
    device = getattr(jax.sharding.get_abstract_mesh(), "abstract_device", None)
    if device is not None and device.platform in family:
        return device.device_kind
    try:
        device = jax.devices()[0]
    except RuntimeError:
        return ""
    return device.device_kind if device.platform in family else ""


_GPU_PLATFORMS = ("gpu", "cuda", "rocm")  # one family: an abstract device may name any of them


# device_kind substring -> CUDA compute capability (major, minor), for a GPU this process does not have
# (cross-lowering and compiling for a target from a CPU machine). A real device reports its own.
_GPU_CAPABILITIES = (
    ("H100", (9, 0)),
    ("H200", (9, 0)),
    ("H800", (9, 0)),
    ("GH200", (9, 0)),
    ("B200", (10, 0)),
    ("L40", (8, 9)),
    ("L4", (8, 9)),
    ("RTX 40", (8, 9)),
    ("A100", (8, 0)),
    ("A800", (8, 0)),
    ("A10", (8, 6)),
    ("RTX 30", (8, 6)),
    ("V100", (7, 0)),
    ("T4", (7, 5)),
)

FP8_MIN_CAPABILITY = (8, 9)  # Triton converts to and from float8_e4m3 only on Ada (sm_89) and newer


def gpu_compute_capability(device_kind: str | None) -> tuple[int, int] | None:
    """(major, minor) of the target GPU: this process's first device's own when it is a GPU of that kind
    (or ``device_kind`` is None), else the table's entry for the kind, else None (unknown)."""
    try:
        device = jax.devices()[0]
    except RuntimeError:
        device = None
    if device is not None and device.platform == "gpu" and device_kind in (None, device.device_kind):
        cc = getattr(device, "compute_capability", None)
        if cc:
            major, minor = str(cc).split(".")[:2]
            return int(major), int(minor)
    for part, capability in _GPU_CAPABILITIES:
        if device_kind and part in device_kind:
            return capability
    return None


def check_gpu_kv_dtype(kv_dtype, device_kind: str | None) -> None:
    """ValueError when the target GPU cannot compile a ``kv_dtype`` cache: float8 codes need sm_89 or
    newer (on an A100, sm_80, Triton's compiler aborts the whole process instead of failing the call)."""
    import jax.numpy as jnp

    if jnp.dtype(kv_dtype) != jnp.dtype(jnp.float8_e4m3fn):
        return
    capability = gpu_compute_capability(device_kind)
    if capability is not None and capability < FP8_MIN_CAPABILITY:
        from pallas_kernels.api import UnsupportedSetting

        need = ".".join(map(str, FP8_MIN_CAPABILITY))
        raise UnsupportedSetting(
            f"kv_dtype fp8 needs a GPU of compute capability {need} or newer (Ada, Hopper); "
            f"{device_kind or 'this GPU'} is {capability[0]}.{capability[1]}: use kv_dtype int8 or bfloat16"
        )
