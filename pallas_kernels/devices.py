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
    device = getattr(jax.sharding.get_abstract_mesh(), "abstract_device", None)
    if device is not None and device.platform == platform:
        return device.device_kind
    try:
        device = jax.devices()[0]
    except RuntimeError:
        return ""
    return device.device_kind if device.platform == platform else ""
