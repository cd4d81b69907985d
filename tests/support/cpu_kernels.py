"""What the CPU kernel tests share: the module fixture that needs a kernel built, and float32 rounding bounds.

``kernel_fixture(available, source)`` makes the module-scoped ``kernel`` fixture of a kernel's test file: it
skips off CPU (the FFI kernels are the CPU path) and asserts that g++ built ``source`` (``available()`` is the
kernel module's ``kernel_available``: False after a logged warning). ``gamma(n)`` is Higham's bound on an
n-term float32 sum or dot, from which the tests derive their elementwise error bounds.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import pytest

U32 = 2.0**-24  # float32 unit roundoff


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u): the relative error bound of an n-term float32 sum or dot."""
    return n * U32 / (1 - n * U32)


def kernel_fixture(available: Callable[[], bool], source: str, *, autouse: bool = True):
    """The module fixture ``kernel`` of a CPU kernel's tests: skip off CPU, fail if ``source`` did not build.

    Assign it at module level (``kernel = kernel_fixture(...)``); with ``autouse=False`` tests ask for it."""

    @pytest.fixture(scope="module", autouse=autouse)
    def kernel():
        if jax.default_backend() != "cpu":
            pytest.skip("the FFI kernels are the CPU path")
        assert available(), f"g++ could not build {source} (see the warning)"

    return kernel


def smollm2_generator(weight_quant: str):
    """SmolLM2 on the CPU kernels (``attention_backend="cpu"``), as the fused-call tests compare it."""
    from runtime.engine.offline import Generator

    return Generator("smollm2-135m", weight_quant=weight_quant, max_model_len=256, attention_backend="cpu")


def smollm2_chat_prompts(gen) -> list:
    """The two chat prompts the fused-call tests take SmolLM2's greedy tokens on."""
    texts = ("What is the capital of France?", "Write a short story about a lighthouse keeper.")
    return [gen.encode_prompt(t, chat=True) for t in texts]


# Known, not understood (2026-12-06): on an AVX2-only CPU (the kernels' int8 activations) with Python 3.12's
# jax 0.12, three comparisons that hold with jax 0.10 miss by float32 rounding: the tiny Llama's int8 and
# int4 logits fused against unfused (4 ulp; the kernel's stacked rows themselves stay bitwise equal,
# test_stacked_rows_give_the_parts_outputs_exactly), and SmolLM2's file blocks against their jnp emulation
# (prompt logits within 1e-4, then a near-tie greedy token at index 7). They failed on b3332e9 too, before
# the change that found them. Issue 31's note has it; the cause (XLA's fusion of what follows the matmul)
# is a guess until someone compares the two versions' programs.
KNOWN_JAX_012_INT8_ACTIVATIONS = (
    "jax >= 0.12 with int8 activations (AVX2): float32 rounding differs from jax 0.10's here; not understood yet"
)


def known_rounding_mismatch() -> bool:
    """Whether this process is the case above (jax >= 0.12, kernels with int8 activations)."""
    from runtime.quant import cpu as quant_cpu

    version = tuple(int(p) for p in jax.__version__.split(".")[:2])  # the module's own jax import
    return version >= (0, 12) and quant_cpu.kernel_quantizes_activations()


def xfail_if_known_rounding_mismatch(check: Callable[[], None]) -> None:
    """Run ``check``; in the known case above, an AssertionError is an expected failure (xfail) rather than a
    failure; everywhere else it fails as usual, and a pass is a pass in every case."""
    try:
        check()
    except AssertionError:
        if known_rounding_mismatch():
            pytest.xfail(KNOWN_JAX_012_INT8_ACTIVATIONS)
        raise
