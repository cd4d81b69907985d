"""Weight-only quantized matmul (int8 per output channel, int4 in groups): Pallas kernel and reference."""

from pallas_kernels.quant_matmul.kernel import (
    INT4_OFFSET,
    BlockSizes,
    Dims,
    dequantize,
    padded_in_features,
    quant_matmul,
    quant_matmul_reference,
    unpack_int4,
    validate_inputs,
)

__all__ = [
    "INT4_OFFSET",
    "BlockSizes",
    "Dims",
    "dequantize",
    "padded_in_features",
    "quant_matmul",
    "quant_matmul_reference",
    "unpack_int4",
    "validate_inputs",
]
