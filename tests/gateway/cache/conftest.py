"""Fixtures shared by the cache tests."""

from __future__ import annotations

import pytest

from gateway.cache import onnx_models
from gateway.cache.embedder import Embedder
from gateway.cache.onnx_models import OnnxEmbedder
from tests.support.torch_reference import skip_reason


@pytest.fixture(scope="module")
def embedder(tmp_path_factory):
    """The real all-MiniLM-L6-v2, loaded once per module: sentence-transformers where torch is installed (Python
    3.11 here), else the float32 graph written from the same weights (gateway/cache/onnx_graph.py; within 2e-7
    of sentence-transformers' vectors, and like it the same vector for a text whatever its batch), so the
    cache's tests run unchanged on a Python without torch."""
    if skip_reason("sentence_transformers") is None:
        e = Embedder(max_wait_ms=2.0)
        e.load()
    else:
        e = OnnxEmbedder(quantize="none", max_wait_ms=2.0)
        with pytest.MonkeyPatch.context() as mp:  # exported into a temporary cache, not the user's
            mp.setenv(onnx_models.CACHE_ENV, str(tmp_path_factory.mktemp("onnx_cache")))
            e.load()
    yield e
    e.close()
