"""Weight-only quantized matmul (int8 per output channel, int4 in groups): one kernel per platform, one contract.

* ``quant_matmul``            the GPU kernel (Pallas, Triton lowering; ``interpret=True`` on CPU)
* ``quant_matmul_tpu``        the TPU kernel (Pallas Mosaic, BlockSpecs over (M, N, K); ``interpret=True``
                              runs it under ``pltpu.InterpretParams()``)
* ``quant_matmul_reference``  jnp: dequantize, then one dot (the XLA path and the tests' definition)
"""

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
from pallas_kernels.quant_matmul.tpu import TpuBlockSizes, quant_matmul_tpu, tpu_block_sizes

__all__ = [
    "INT4_OFFSET",
    "BlockSizes",
    "Dims",
    "TpuBlockSizes",
    "dequantize",
    "padded_in_features",
    "quant_matmul",
    "quant_matmul_reference",
    "quant_matmul_tpu",
    "tpu_block_sizes",
    "unpack_int4",
    "validate_inputs",
]
