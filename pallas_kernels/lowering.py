"""Lower a jitted function for an accelerator from any machine (this CPU one included); return the text.

Two helpers, reused by the lowering tests and the lowering-check CLI:

* ``lower_for_cuda(fn, *args)``                  -> StableHLO text for ``cuda``, default JAX flags, as seen
  by a GPU of ``device_kind`` (by default this process's, else an H100) through an abstract mesh.
* ``lower_for_tpu(fn, *args, device_kind=...)``  -> StableHLO text for ``tpu`` as seen by a TPU of
  that kind (``"TPU v5 lite"`` = v5e, ``"TPU v6 lite"`` = v6e), through an abstract mesh.

``args`` are usually ``jax.ShapeDtypeStruct``s, so nothing is allocated: a 4 GiB KV cache costs
nothing to lower. ``fn`` is wrapped in ``jax.jit`` (harmless if it already is one); bind static
keywords with ``functools.partial`` first.

What lowering proves, and what it does not: it runs every Pallas check and the whole Pallas ->
Triton (GPU) or Pallas -> Mosaic (TPU) translation, i.e. block-shape rules, unsupported
primitives, and the choice of backend (the text names the custom call: ``__gpu$xla.gpu.triton``
for Triton, ``mosaic_gpu`` for Mosaic GPU, ``tpu_custom_call`` for Mosaic TPU). It does not run
the device compilers (Triton -> PTX, ptxas; Mosaic's layout passes in libtpu), which only exist
next to a device: register or VMEM/shared-memory overflows and unsupported vector layouts can
still fail at compile time there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
from jax.sharding import AbstractDevice, AbstractMesh

TRITON_CALL_TARGET = "__gpu$xla.gpu.triton"  # jaxlib <= 0.10.2; later jaxlibs: triton_kernel_call_ffi
MOSAIC_GPU_CALL_TARGET = "mosaic_gpu"  # prefix of mosaic_gpu_v2
MOSAIC_TPU_CALL_TARGET = "tpu_custom_call"


# The GPU a CPU process lowers for when the caller names none: Hopper (sm_90), what jax 0.10's Triton lowering
# assumed by itself without a GPU. jax 0.12's refuses to guess ("No supported GPU devices found"): it reads the
# target from an abstract device, and so, at trace time, do the kernels' block-size tables.
DEFAULT_CUDA_DEVICE_KIND = "NVIDIA H100 80GB HBM3"


def cuda_target_kind(device_kind: str | None = None) -> str | None:
    """The device kind ``lower_for_cuda(..., device_kind=device_kind)`` lowers for: the one named, else
    None when this process has a GPU (its own), else ``DEFAULT_CUDA_DEVICE_KIND``."""
    if device_kind is not None:
        return device_kind
    try:
        if jax.devices()[0].platform == "gpu":
            return None
    except RuntimeError:
        pass
    return DEFAULT_CUDA_DEVICE_KIND


def lower_for_cuda(fn: Callable[..., Any], *args: Any, device_kind: str | None = None) -> str:
    """StableHLO text of ``jax.jit(fn)`` lowered for ``cuda`` with the process's JAX flags.

    An abstract GPU device of ``device_kind`` (e.g. "NVIDIA H100 80GB HBM3"; none named: this process's GPU,
    else ``DEFAULT_CUDA_DEVICE_KIND``) is in context, so Triton's compute capability and the block sizes
    chosen inside (``pallas_kernels.devices.target_device_kind``) are that GPU's.
    """
    kind = cuda_target_kind(device_kind)
    if kind is None:
        return jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    device = AbstractDevice(device_kind=kind, num_cores=None, platform="gpu")
    with jax.sharding.use_abstract_mesh(AbstractMesh((1,), ("x",), abstract_device=device)):
        return jax.jit(fn).trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def lower_for_tpu(fn: Callable[..., Any], *args: Any, device_kind: str) -> str:
    """StableHLO text of ``jax.jit(fn)`` lowered for ``tpu`` as on a one-core TPU of ``device_kind``.

    Pallas TPU reads the chip generation (hence VMEM size and tiling rules) from the device kind of
    the mesh in context; an ``AbstractMesh`` of one ``AbstractDevice`` supplies it without a TPU.
    """
    device = AbstractDevice(device_kind=device_kind, num_cores=1, platform="tpu")
    mesh = AbstractMesh((1,), ("x",), abstract_device=device)
    with jax.sharding.use_abstract_mesh(mesh):
        return jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",)).as_text()
