"""Ragged paged attention for mixed prefill/decode batches: one kernel per platform, one contract.

* ``ragged_paged_attention``            the GPU kernel (Pallas, Triton lowering; ``interpret=True`` on CPU)
* ``ragged_paged_attention_mosaic_gpu`` the sm_90+ GPU kernel (Pallas Mosaic GPU: TMA pages into shared
                                        memory, WGMMA; bfloat16 KV; ``interpret=True`` on CPU), in
                                        ``mosaic_gpu`` (imported there: it needs the Mosaic GPU backend)
* ``ragged_paged_attention_tpu``        the TPU kernel (Pallas Mosaic, HBM pages DMA'd into VMEM;
                                        ``interpret=True`` runs it under ``pltpu.InterpretParams()``)
* ``ragged_paged_attention_xla``        jnp gathers, no Pallas: the CPU engine's default
* ``ragged_paged_attention_reference``  contiguous KV, tests only
"""

from pallas_kernels.ragged_paged_attention.kernel import (
    MASK_VALUE,
    BlockSizes,
    Dims,
    ragged_paged_attention,
    ragged_paged_attention_reference,
    ragged_paged_attention_xla,
    validate_inputs,
)
from pallas_kernels.ragged_paged_attention.tpu import TpuBlockSizes, ragged_paged_attention_tpu, tpu_block_sizes

__all__ = [
    "MASK_VALUE",
    "BlockSizes",
    "Dims",
    "TpuBlockSizes",
    "ragged_paged_attention",
    "ragged_paged_attention_reference",
    "ragged_paged_attention_tpu",
    "ragged_paged_attention_xla",
    "tpu_block_sizes",
    "validate_inputs",
]
