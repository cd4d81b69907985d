"""Shared fixtures. The real model loads once per module that uses it (about 7 s); HF reference once per module."""

from __future__ import annotations

import pytest

from runtime.platform import configure_xla


def pytest_configure(config):
    configure_xla()  # before any test touches JAX


@pytest.fixture(scope="module", autouse=True)
def _return_memory_after_each_module():
    """After a module (and its engines, set up after this fixture and torn down before it): collect, then
    hand glibc's free heap back to the OS. Without it a worker's RSS only grows: an engine's ~3 GB stays
    mapped after it is freed, two workers reached 9 and 11 GB next to a Gemma server and the OOM killer
    took one (pytest-xdist then waits forever). With it a freed SmolLM2 engine's 2.9 GB drops to 0.2 GB."""
    yield
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    libc = ctypes.util.find_library("c")
    if libc is not None and hasattr(ctypes.CDLL(libc), "malloc_trim"):
        ctypes.CDLL(libc).malloc_trim(0)


@pytest.fixture(scope="module")
def smollm2():  # per module, not per session: the engine holds 1.9 GB, freed (and trimmed) after each module
    from runtime.engine.offline import Generator
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    return Generator("smollm2-135m", dtype="float32", attention_backend="xla")


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory) -> str:
    """A tiny random Llama GGUF (tests/support/tiny_gguf.py), written once per test process."""
    from tests.support.tiny_gguf import write_tiny_llama

    return str(write_tiny_llama(tmp_path_factory.mktemp("tiny")).path)
