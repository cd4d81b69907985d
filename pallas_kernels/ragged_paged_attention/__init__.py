"""Ragged paged attention for mixed prefill/decode batches: Pallas kernel, XLA path, reference."""

from pallas_kernels.ragged_paged_attention.kernel import (
    MASK_VALUE,
    BlockSizes,
    Dims,
    ragged_paged_attention,
    ragged_paged_attention_reference,
    ragged_paged_attention_xla,
    validate_inputs,
)

__all__ = [
    "MASK_VALUE",
    "BlockSizes",
    "Dims",
    "ragged_paged_attention",
    "ragged_paged_attention_reference",
    "ragged_paged_attention_xla",
    "validate_inputs",
]
