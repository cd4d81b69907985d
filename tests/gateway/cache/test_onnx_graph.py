"""The BERT graph written from the weights (gateway/cache/onnx_graph.py): the same vectors as the model's own
full-precision ones (sentence-transformers, where torch is installed), the same bytes when rebuilt, and a cold
cache filled and served in a process that cannot import torch.

The comparison with sentence-transformers needs torch (the reference); where torch is missing (Python 3.12 and
3.13 here) that test is skipped with the reference named (tests/support/torch_reference.py), and the rest runs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.cache import onnx_models
from gateway.cache.embedder import find_model_dir
from gateway.cache.onnx_graph import build_graph
from gateway.cache.onnx_models import OnnxEmbedder, export_onnx, transformer_dir
from tests.gateway.cache.test_onnx_models import SENTENCES
from tests.support.torch_reference import require

ROOT = Path(__file__).resolve().parents[3]

# float32 against float32: the graph computes what BertModel computes, in another order of float32 sums (fused
# LayerNormalization and Softmax kernels, MatMul blocking). Each output element is a unit vector's coordinate
# (|x| <= 1) after 6 layers whose float32 sums carry relative errors ~1e-7 each; measured max 2.0e-7 on four
# sentences. 1e-5 is that order of error with the depth's margin; a wrong op (tanh GELU, the mask left out,
# a head order swapped) moves coordinates by 1e-3 or more.
FP32_ATOL = 1e-5


def test_the_graph_is_the_same_bytes_when_rebuilt():
    hf_dir = transformer_dir(find_model_dir())
    first = build_graph(hf_dir, "embedder").SerializeToString()
    again = build_graph(hf_dir, "embedder").SerializeToString()
    assert hashlib.sha256(first).hexdigest() == hashlib.sha256(again).hexdigest()


def test_the_exported_int8_file_is_the_same_bytes_when_rebuilt(tmp_path):
    """A rebuilt file gives the same vectors because it is the same file: the recipe (graph + quantizer) is
    deterministic."""
    model_dir = find_model_dir()
    a = export_onnx(model_dir, tmp_path / "a.onnx", "embedder")
    b = export_onnx(model_dir, tmp_path / "b.onnx", "embedder")
    assert a.read_bytes() == b.read_bytes()


def test_only_bert_checkpoints_are_written(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "roberta"}')
    with pytest.raises(ValueError, match="only BERT"):
        build_graph(tmp_path, "embedder")
    with pytest.raises(ValueError, match="kind must be one of"):
        build_graph(tmp_path, "decoder")


def test_float32_graph_gives_the_models_own_vectors(tmp_path, monkeypatch):
    SentenceTransformer = require("sentence_transformers").SentenceTransformer  # the reference: skips without torch
    monkeypatch.setenv(onnx_models.CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model_dir = find_model_dir()
    reference = SentenceTransformer(str(model_dir), device="cpu").encode(SENTENCES, normalize_embeddings=True)
    e = OnnxEmbedder(model_dir, quantize="none")
    try:
        got = e.embed_many(SENTENCES)
    finally:
        e.close()
    err = np.abs(got - reference).max()
    print(f"float32 graph vs sentence-transformers: max |diff| {err:.2e}")
    np.testing.assert_allclose(got, reference, atol=FP32_ATOL, rtol=0)


def test_a_cold_cache_is_filled_and_served_without_torch(tmp_path):
    """In a process where importing torch, transformers or sentence-transformers fails (as on a Python with none
    of them), the embedder exports its int8 file into an empty cache and serves from it."""
    code = (
        "import sys\n"
        "class NoTorch:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'transformers', 'sentence_transformers'):\n"
        "            raise ImportError(f'{name} is not available here')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "from gateway.cache.onnx_models import OnnxEmbedder\n"
        "e = OnnxEmbedder(); e.load()\n"
        "v = e.embed_many(['How do I reset my password?', 'hello'])\n"
        "assert v.shape == (2, 384), v.shape\n"
        "assert abs(float((v * v).sum(1).max()) - 1) < 1e-3\n"
    )
    env = {**os.environ, onnx_models.CACHE_ENV: str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert len(list(tmp_path.glob("*/model.onnx"))) == 1  # exported into the empty cache
