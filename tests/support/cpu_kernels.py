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
