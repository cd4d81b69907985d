"""Shared fixtures. The real model loads once per session (about 7 s); HF reference once per module."""

from __future__ import annotations

import pytest

from runtime.platform import configure_xla


def pytest_configure(config):
    configure_xla()  # before any test touches JAX


@pytest.fixture(scope="session")
def smollm2():
    from runtime.engine.offline import Generator
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    return Generator("smollm2-135m", dtype="float32", attention_backend="xla")


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory) -> str:
    """A tiny random Llama GGUF (tests/support/tiny_gguf.py), written once per test process."""
    from tests.support.tiny_gguf import write_tiny_llama

    return str(write_tiny_llama(tmp_path_factory.mktemp("tiny")).path)
