"""Module-scoped fixtures for the tests of a whole tiny model (tests/runtime/models/test_tiny_model.py: the
Llama of tests/support/tiny_gguf.py; test_gemma3_tiny.py: its Gemma 3)."""

from __future__ import annotations

import pytest


def tiny_generator(tiny, page_size: int, attention_backend: str = "xla"):
    """``runtime.engine.offline.Generator`` over the tiny model's file, in float32."""
    from runtime.engine.offline import Generator

    return Generator(
        gguf_path=str(tiny.path), dtype="float32", attention_backend=attention_backend, page_size=page_size
    )


def model_fixtures(write, page_size: int):
    """The fixtures ``tiny`` (what ``write(folder)`` returns), ``loaded`` (its load_gguf) and ``gen``
    (tiny_generator on ``page_size``-token pages), for a test module to bind:
    ``tiny, loaded, gen = model_fixtures(write_tiny_llama, 16)``."""

    @pytest.fixture(scope="module", name="tiny")
    def tiny_fixture(tmp_path_factory):
        return write(tmp_path_factory.mktemp("tiny"))

    @pytest.fixture(scope="module", name="loaded")
    def loaded_fixture(tiny):
        from runtime.loading.gguf import load_gguf

        return load_gguf(tiny.path)

    @pytest.fixture(scope="module", name="gen")
    def gen_fixture(tiny):
        return tiny_generator(tiny, page_size)

    return tiny_fixture, loaded_fixture, gen_fixture
