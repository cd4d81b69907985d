"""Fixtures shared by the cache tests."""

from __future__ import annotations

import pytest

from gateway.cache.embedder import Embedder


@pytest.fixture(scope="module")
def embedder():
    """The real all-MiniLM-L6-v2, loaded once per module."""
    e = Embedder(max_wait_ms=2.0)
    e.load()
    yield e
    e.close()
