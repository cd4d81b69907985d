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
