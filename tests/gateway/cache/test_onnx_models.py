"""ONNX Runtime backend (gateway/cache/onnx_models.py): parity with torch, the export cache, micro-batching.

Real exports of all-MiniLM-L6-v2 and of a cross-encoder built on the fly from its weights, into a temporary
JAXSERVE_ONNX_CACHE (the user's ~/.cache is never touched). The embedder's bounds are measured values with a
margin; the cross-encoder's int8 logits are held to a band derived from the quantization steps (see
_int8_error_model), which holds on any CPU.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from gateway.cache import onnx_models
from gateway.cache.embedder import Embedder, find_model_dir
from gateway.cache.onnx_models import OnnxCrossEncoder, OnnxEmbedder, ensure_onnx, load_tokenizer
from gateway.cache.semantic_cache import CacheConfig
from tests.support.torch_reference import require

ROOT = Path(__file__).resolve().parents[3]

SENTENCES = [
    "What is the capital of France?",
    "how do i reverse a list in python",
    "Why is the sky blue?",
    "Explain quantum entanglement like I'm five.",
    "¿Dónde está la biblioteca?",
    "Wie spät ist es?",
    "東京の人口は何人ですか",
    "I'm not able to log in to my account after the update — what should I do?",
    "2+2=?",
    "What's the difference between TCP and UDP?",
    "Tell me a joke about cats",
    "Recipe for sourdough bread with a starter that is 3 days old",
    "The mitochondria is the powerhouse of the cell.",
    "Is it safe to eat raw cookie dough?",
    "Summarize the plot of Hamlet in two sentences.",
    "How many legs does a spider have?",
    "What does HTTP 418 mean?",
    "error: cannot find module 'react' in /src/app.tsx",
    "SELECT * FROM users WHERE id = 1;",
    "Who won the 2018 FIFA World Cup?",
    "can u help me w/ my homework pls",
    "a",
    "!!!",
    "The quick brown fox jumps over the lazy dog " * 30,  # > 256 tokens: truncated like sentence-transformers
    "Translate 'good morning' into Japanese.",
    "What are the side effects of ibuprofen?",
    "best way to learn guitar as an adult beginner",
    "Convert 100 Fahrenheit to Celsius",
    "Why did the Roman Empire fall?",
    "🙂 what does this emoji mean?",
]

# Measured here (AMD EPYC, AVX-512 VNNI; onnxruntime 1.32.0) on SENTENCES in one batch, cosine to torch float32:
# float32 export min 0.9999997; int8 (QInt8 per channel) min 0.9740 ("!!!"), mean 0.9923. Torch's own dynamic
# int8 (Embedder(quantize="int8")) reaches only min 0.755 on the same sentences. On an AVX2-only EPYC (int16
# saturating kernels, see _int8_error_model): int8 min 0.9814 ("!!!"), mean 0.9920. These int8 bounds are still
# one machine's figures with a margin, not derived like the cross-encoder's band.
FP32_MIN_COS = 0.9999
INT8_MIN_COS = 0.97
INT8_MEAN_COS = 0.99


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    root = tmp_path_factory.mktemp("onnx_cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(onnx_models.CACHE_ENV, str(root))
        yield root


@pytest.fixture(scope="module")
def torch_vectors():
    require("sentence_transformers")  # the reference (skips on Python 3.12+, where torch is not installed)
    e = Embedder()
    e.load()
    try:
        yield e.embed_many(SENTENCES)
    finally:
        e.close()


@pytest.fixture(scope="module")
def int8_embedder(onnx_cache):
    e = OnnxEmbedder(max_wait_ms=2.0)
    e.load()
    yield e
    e.close()


# ---------------------------------------------------------------------------------------------- fast


def test_rejects_unknown_kind_and_quantize(tmp_path):
    with pytest.raises(ValueError, match="kind"):
        onnx_models.cache_key(tmp_path, "decoder")
    with pytest.raises(ValueError, match="quantize"):
        onnx_models.cache_key(tmp_path, "embedder", "int4")
    with pytest.raises(ValueError, match="CPU"):
        OnnxEmbedder(device="cuda")
    with pytest.raises(ValueError, match="tokenizer_dir"):
        OnnxCrossEncoder(tmp_path / "model.onnx")


def test_tokenizer_pads_to_longest_truncates_and_marks_pairs():
    tok = load_tokenizer(find_model_dir(), max_length=16)
    feeds = onnx_models.encode(tok, ["hi", "what is the capital of france"])
    assert feeds["input_ids"].shape == (2, 8)  # the longest text, not the 128 tokenizer.json pads to
    assert feeds["attention_mask"].tolist()[0] == [1, 1, 1] + [0] * 5
    assert feeds["input_ids"].dtype == np.int64
    long = onnx_models.encode(tok, ["word " * 100])
    assert long["input_ids"].shape == (1, 16) and long["input_ids"][0, -1] == tok.token_to_id("[SEP]")
    pair = onnx_models.encode(tok, [("who wrote hamlet", "shakespeare")])
    assert pair["token_type_ids"].tolist() == [
        [0, 0, 0, 0, 0, 1, 1]
    ]  # [CLS] who wrote hamlet [SEP] | shakespeare [SEP]


def test_cache_key_follows_sources_kind_and_quantize(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "README.md").write_text("a model card")
    key = onnx_models.cache_key(tmp_path, "embedder")
    assert key == onnx_models.cache_key(tmp_path, "embedder")
    assert key != onnx_models.cache_key(tmp_path, "cross_encoder")
    assert key != onnx_models.cache_key(tmp_path, "embedder", "none")
    (tmp_path / "README.md").write_text("another model card")  # not a model file
    assert key == onnx_models.cache_key(tmp_path, "embedder")
    (tmp_path / "config.json").write_text('{"hidden_size": 8}')
    assert key != onnx_models.cache_key(tmp_path, "embedder")


def test_export_refuses_a_bi_encoder_that_does_not_mean_pool(tmp_path):
    (tmp_path / "modules.json").write_text(
        '[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},'
        ' {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]'
    )
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    with pytest.raises(ValueError, match="mean pooling"):
        onnx_models.export_onnx(tmp_path, tmp_path / "model.onnx", "embedder")


def test_racing_callers_export_once(tmp_path, monkeypatch):
    """Eight threads ask for the same missing file: one exports (under the lock), all get the same path."""
    monkeypatch.setenv(onnx_models.CACHE_ENV, str(tmp_path / "cache"))
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text("{}")
    calls = []

    def fake_export(model_dir, out_path, kind, *, quantize):
        calls.append(kind)
        time.sleep(0.2)  # long enough for every other thread to arrive and wait
        Path(out_path).write_bytes(b"onnx")
        return Path(out_path)

    monkeypatch.setattr(onnx_models, "export_onnx", fake_export)
    results = []
    threads = [threading.Thread(target=lambda: results.append(ensure_onnx(src, "embedder"))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["embedder"] and len(set(results)) == 1 and len(results) == 8
    assert results[0].read_bytes() == b"onnx" and results[0].parent.parent == tmp_path / "cache"


# ---------------------------------------------------------------------------------------------- real model


@pytest.mark.slow
@pytest.mark.parametrize("quantize", ["none", "int8"])
def test_embeddings_match_torch(quantize, onnx_cache, torch_vectors):
    e = OnnxEmbedder(quantize=quantize)
    vecs = e.embed_many(SENTENCES)
    assert vecs.shape == (len(SENTENCES), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    cos = (vecs * torch_vectors).sum(axis=1)
    worst = SENTENCES[int(cos.argmin())][:40]
    report = f"{quantize}: min cosine {cos.min():.5f} ({worst!r}), mean {cos.mean():.5f}"
    print(report)
    if quantize == "none":
        assert cos.min() >= FP32_MIN_COS, report
    else:
        assert cos.min() >= INT8_MIN_COS and cos.mean() >= INT8_MEAN_COS, report


@pytest.mark.slow
def test_micro_batching_shares_forward_passes(int8_embedder):
    texts = SENTENCES[:16]

    async def body():
        await int8_embedder.start()
        before = int8_embedder.forward_passes
        vecs = await asyncio.gather(*(int8_embedder.embed(t) for t in texts))
        return int8_embedder.forward_passes - before, vecs

    passes, vecs = asyncio.run(body())
    assert passes <= 3, f"16 concurrent embeds took {passes} forward passes"
    assert int8_embedder.max_batch_seen > 1
    vecs = np.stack(vecs)
    assert vecs.dtype == np.float32 and vecs.shape == (16, 384)
    # int8 activation scales are taken over a whole session.run, so OnnxEmbedder._forward runs one text at a
    # time: however the requests were grouped into micro-batches, each vector is the one the text gets alone,
    # bit for bit (one single-threaded session, the same input). Closeness to torch is test_embeddings_match_torch's.
    np.testing.assert_array_equal(vecs, int8_embedder.embed_many(texts))


@pytest.mark.slow
def test_int8_vector_does_not_depend_on_its_batch(int8_embedder):
    """One text per session.run (OnnxEmbedder._forward), so a text's int8 vector is the same, bit for bit,
    whatever it is embedded with. (Run as one batch, the shared activation scales moved vectors down to
    cosine 0.969 on one machine: the same question could hit alone and miss under load.)"""
    batched = int8_embedder.embed_many(SENTENCES)
    alone = np.concatenate([int8_embedder.embed_many([s]) for s in SENTENCES])
    np.testing.assert_array_equal(batched, alone)


@pytest.mark.slow
def test_ensure_onnx_reuses_the_cached_file(int8_embedder, onnx_cache, monkeypatch):
    path = ensure_onnx(find_model_dir(), "embedder", "int8")  # exported when int8_embedder loaded
    assert path.is_relative_to(onnx_cache) and path.name == "model.onnx"
    mtime = path.stat().st_mtime_ns

    def must_not_export(*args, **kwargs):
        raise AssertionError("ensure_onnx exported again instead of reusing the cached file")

    monkeypatch.setattr(onnx_models, "export_onnx", must_not_export)
    assert ensure_onnx(find_model_dir(), "embedder", "int8") == path
    e = OnnxEmbedder()
    e.load()
    assert e.embed_many(["still works"]).shape == (1, 384)
    assert path.stat().st_mtime_ns == mtime


@pytest.mark.slow
def test_serving_from_the_cache_never_imports_torch(int8_embedder, onnx_cache):
    code = (
        "import sys\n"
        "from gateway.cache.onnx_models import OnnxEmbedder\n"
        "e = OnnxEmbedder(); e.load(); assert e.embed_many(['hello']).shape == (1, 384)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    env = {**os.environ, onnx_models.CACHE_ENV: str(onnx_cache)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


# ---------------------------------------------------------------------------------------------- cross-encoder

PAIRS = [
    ("What is the capital of France?", "Paris is the capital of France."),
    ("What is the capital of France?", "Bananas are yellow."),
    ("how to reverse a list in python", "Use reversed(lst) or lst[::-1]."),
    ("Who wrote Hamlet?", "Shakespeare wrote it around 1600."),
    ("a", "b"),
    ("Why is the sky blue?", "Rayleigh scattering of sunlight by the atmosphere. " * 40),  # truncated, longest first
    ("東京の人口は?", "約1400万人です。"),
    ("", "an empty question"),
    ("How many legs does a spider have?", "Spiders have eight legs."),
    ("How many legs does a spider have?", "The stock market fell today."),
]


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    """A cross-encoder folder built from the packaged MiniLM weights: BertForSequenceClassification, one label,
    a random head (seed 0; weights drawn with std 1 so the logits spread over a few units instead of +-0.04 and
    an error of 1e-4 is small against them). Built and scored by sentence-transformers: the reference."""
    torch = require("torch")
    CrossEncoder = require("sentence_transformers").CrossEncoder

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    torch.manual_seed(0)
    model = CrossEncoder(str(find_model_dir()), num_labels=1, local_files_only=True)
    head = model[0].model.classifier
    with torch.no_grad():
        torch.nn.init.normal_(head.weight, std=1.0)
        torch.nn.init.normal_(head.bias, std=0.1)
    folder = tmp_path_factory.mktemp("cross_encoder")
    model.save(str(folder))
    logits = model.predict(PAIRS, activation_fn=torch.nn.Identity())
    probs = model.predict(PAIRS)
    return folder, model.max_seq_length, np.asarray(logits, np.float32), np.asarray(probs, np.float32)


# -- what int8 may do to a float32 logit: a model of the quantization error, derived from its steps ---------------
#
# quantize_dynamic(weight_type=QInt8, per_channel=True) (gateway/cache/onnx_models.py) rounds, per input:
#   - each nn.Linear's input to uint8, per tensor, at run time: step s_x = (max(x, 0) - min(x, 0)) / 255
#   - each nn.Linear's weight to int8 per output channel: step s_w[j] = max|W[j]| / 127
#   - the three embedding tables to uint8 per tensor: step (max(E, 0) - min(E, 0)) / 255
# (the steps, the operands and the count of quantized matmuls are checked against the exported file below).
# Rounding to a step s is an error uniform on [-s/2, s/2], variance s^2 / 12, independent between elements; to
# first order it moves the logit L by sum(error * dL/d element), so
#     sigma^2 = sum over linears [s_x^2/12 |dL/dx|^2 + sum_j s_w[j]^2/12 |dL/dW[j]|^2]
#               + sum over tables s^2/12 |dL/dE|^2
# with the gradients of the float32 model on that input. The error is a sum of millions of such independent
# terms, so close to Gaussian: it exceeds INT8_SIGMAS = 4 sigma with probability 6e-5 per input, under 1e-3
# for the ten pairs.
#
# The kernels add one error the steps do not give. On x86 without VNNI (AVX2, AVX-512 before VNNI) MLAS's U8S8 kernels
# multiply with vpmaddubsw, which adds two neighbouring u8 x s8 products in int16 and saturates at +-32767 (the
# saturation ONNX Runtime's quantization documentation warns of); VNNI (vpdpbusd) and ARM's dot products
# accumulate in int32 and do not. A pair (a0 w0 + a1 w1) can saturate only where |w0| + |w1| > 32767 / 255; its
# first-order effect on L is shift = sum dL/dy * s_x * s_w[j] * (clip(p) - p) over the saturating pairs p of
# the float32 run's quantized operands. (Emulating that rule exactly, in numpy over the exported graph,
# reproduced an AVX2 machine's int8 logits to 1e-4 on 7 of the 10 pairs; with int32 sums instead, what VNNI
# computes, every pair's error stayed under 0.45 of its band.) Whatever the CPU, the band is
#     |int8 logit - float32 logit| <= INT8_SIGMAS * sigma + |shift|
# (wider than needed where nothing saturates). Nothing in it is a measured error.
INT8_SIGMAS = 4.0
INT16_MAX = 32767


def _int8_error_model(folder: Path, max_length: int, pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """Per pair by the model above: float32 logits (torch), sigma, saturation shift; then the count of
    saturating pair-sums (all pairs) and of distinct quantized activations (one per DynamicQuantizeLinear)."""
    import torch
    from transformers import AutoModelForSequenceClassification

    hf_dir = onnx_models.transformer_dir(folder)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(hf_dir), attn_implementation="eager", dtype=torch.float32, local_files_only=True
    ).eval()
    tok = load_tokenizer(hf_dir, max_length)
    emb = model.bert.embeddings
    tables = [emb.word_embeddings, emb.position_embeddings, emb.token_type_embeddings]
    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]  # the encoder's 36, pooler, head
    seen = {}

    def keep(module, inputs, output):  # the input (for its step) and the output (for dL/dy) of each linear
        output.retain_grad()
        seen[module] = (inputs[0], output)

    hooks = [lin.register_forward_hook(keep) for lin in linears]
    weights = {}
    for lin in linears:
        w = lin.weight.detach()
        step = w.abs().amax(1) / 127  # [out]
        q = torch.clamp(torch.round(w / step[:, None]), -127, 127).to(torch.int32)  # [out, in]
        # Only a pair with |w0| + |w1| > 32767 / 255 can leave int16, since a0, a1 <= 255.
        j, i = torch.nonzero(q[:, 0::2].abs() + q[:, 1::2].abs() > INT16_MAX // 255, as_tuple=True)
        weights[lin] = (step, q, j, 2 * i)
    logits, sigma, shift, saturated, quantized_inputs = [], [], [], 0, 0
    try:
        for pair in pairs:
            feeds = {k: torch.from_numpy(v) for k, v in onnx_models.encode(tok, [pair]).items()}
            model.zero_grad(set_to_none=True)
            seen.clear()
            logit = model(**feeds).logits[0, 0]
            logit.backward()
            var, dl = 0.0, 0.0
            shared: dict[int, tuple[float, torch.Tensor]] = {}  # id(input) -> (its step, dL/d its quantized copy)
            for lin in linears:
                x, y = seen[lin]
                x = x.detach().reshape(-1, x.shape[-1])  # [tokens, in]
                g = y.grad.reshape(-1, y.shape[-1])  # dL/dy [tokens, out]
                lo = min(float(x.min()), 0.0)
                s_x = (max(float(x.max()), 0.0) - lo) / 255
                # query, key and value read one quantized copy of their input: its rounding reaches L through
                # the sum of their dL/dx
                _, dl_dx = shared.get(id(seen[lin][0]), (s_x, 0.0))
                shared[id(seen[lin][0])] = (s_x, dl_dx + g @ lin.weight.detach())
                step, q, j, i = weights[lin]
                var += float((step[:, None] ** 2 / 12 * lin.weight.grad**2).sum())  # weight rounding
                qx = torch.clamp(torch.round(x / s_x) + round(-lo / s_x), 0, 255).to(torch.int32)  # [tokens, in]
                p = qx[:, i] * q[j, i] + qx[:, i + 1] * q[j, i + 1]  # [tokens, candidate pairs]
                excess = torch.clamp(p, -INT16_MAX - 1, INT16_MAX) - p
                saturated += int((excess != 0).sum())
                dy = torch.zeros_like(g).index_add_(1, j, excess.to(g.dtype)) * (s_x * step)[None, :]
                dl += float((g * dy).sum())
            var += sum(s_x**2 / 12 * float((dl_dx**2).sum()) for s_x, dl_dx in shared.values())  # activations
            for table in tables:
                w = table.weight.detach()
                s = (max(float(w.max()), 0.0) - min(float(w.min()), 0.0)) / 255
                var += s**2 / 12 * float((table.weight.grad**2).sum())
            logits.append(float(logit.detach()))
            quantized_inputs = len(shared)
            sigma.append(var**0.5)
            shift.append(dl)
    finally:
        for h in hooks:
            h.remove()
    return np.array(logits, np.float32), np.array(sigma), np.array(shift), saturated, quantized_inputs


def _check_exported_recipe(onnx_path: Path, folder: Path) -> None:
    """The error model's premises, read from the int8 file: one integer matmul per nn.Linear, weight steps
    max|W[j]| / 127 per output channel, the embedding tables uint8 per tensor."""
    import onnx
    from onnx import numpy_helper
    from safetensors.numpy import load_file

    graph = onnx.load(str(onnx_path)).graph
    init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    ops = [n.op_type for n in graph.node]
    state = load_file(str(next(onnx_models.transformer_dir(folder).glob("*.safetensors"))))
    linear = {k: v for k, v in state.items() if k.endswith(".weight") and v.ndim == 2 and "embeddings" not in k}
    assert ops.count("MatMulInteger") == len(linear), (ops.count("MatMulInteger"), sorted(linear))
    scales = [v for k, v in init.items() if k.endswith("_scale") and v.ndim == 1]
    for name, w in linear.items():
        step = np.abs(w).max(1) / 127
        assert any(s.shape == step.shape and np.allclose(s, step, rtol=1e-6, atol=0) for s in scales), name
    for name in ("word", "position", "token_type"):
        table = state[next(k for k in state if k.endswith(f"{name}_embeddings.weight"))]
        step = init[f"bert.embeddings.{name}_embeddings.weight_scale"]  # the checkpoint's names (onnx_graph)
        assert init[f"bert.embeddings.{name}_embeddings.weight_zero_point"].dtype == np.uint8
        np.testing.assert_allclose(step, (max(table.max(), 0) - min(table.min(), 0)) / 255, rtol=1e-6)


def _count_ops(onnx_path: Path, op_type: str) -> int:
    import onnx

    return sum(n.op_type == op_type for n in onnx.load(str(onnx_path)).graph.node)


def _int8_platform(session) -> str:
    """The CPU, its int8 instructions (which family of MLAS kernels runs) and the session's providers."""
    import onnxruntime as ort

    from runtime.platform import cpu_info

    cpu = cpu_info()
    flags = set(cpu["flags"].split())
    isa = [f for f in ("avx2", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8", "asimddp", "i8mm") if f in flags]
    x86 = cpu["machine"].lower() in ("x86_64", "amd64", "i686")
    if x86 and not flags & {"avx512_vnni", "avx_vnni", "amx_int8"}:
        path = "U8S8 through vpmaddubsw: int16 pair sums, saturating"
    else:
        path = "int32 dot products, no saturation"
    return (
        f"{cpu['model']} ({cpu['machine']}; {' '.join(isa) or 'no SIMD int8 flags'}): {path}; "
        f"onnxruntime {ort.__version__} {session.get_providers()}"
    )


def _kernels_run(onnx_path: Path, tokenizer_dir: Path, max_length: int, pair, tmp_path: Path) -> str:
    """The ops ONNX Runtime ran for one pair and on which provider (its profiler's node events)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / "ort_profile")
    session = ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
    feeds = onnx_models.encode(load_tokenizer(tokenizer_dir, max_length), [pair])
    session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})
    events = json.loads(Path(session.end_profiling()).read_text())
    ran = collections.Counter(
        f"{e['args']['op_name']}@{e['args'].get('provider', '?')}"
        for e in events
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time")
    )
    return ", ".join(f"{op} x{n}" for op, n in ran.most_common() if "MatMul" in op or "Quantize" in op)


def _int8_against_float32(
    ref_logits: np.ndarray, q_logits: np.ndarray, band: np.ndarray
) -> tuple[list[str], list[str]]:
    """(report, failures): int8's decisions and order against float32's, and each logit against its band."""
    report, failures = [], []
    # Decisions. The checker accepts when sigmoid(logit) >= its threshold (the shipped ones, CacheConfig's),
    # i.e. logit >= log(t / (1 - t)). A pair whose float32 logit lies within its band of that cut may land on
    # either side in int8; every other pair must be decided as in float32: 0 disagreements allowed outside.
    config = CacheConfig()
    for name in ("checker_threshold", "conversation_checker_threshold"):
        t = getattr(config, name)
        if not 0.0 < t < 1.0:  # a kind the shipped config does not score (exact conversations)
            continue
        cut = np.log(t / (1 - t))
        near = np.abs(ref_logits - cut) <= band
        flipped = (ref_logits >= cut) != (q_logits >= cut)
        report.append(
            f"{name} {t}: {flipped.sum()} flipped of the {near.sum()} within their band of it, "
            f"{(flipped & ~near).sum()} of the {(~near).sum()} outside"
        )
        if (flipped & ~near).any():
            failures.append(f"{name} {t}: pairs {np.flatnonzero(flipped & ~near).tolist()} decided otherwise")
    # Order. Two pairs can swap only if their float32 logits are closer than the sum of their bands; every
    # two pairs farther apart must keep their order: 0 discordant allowed among those.
    i, j = np.triu_indices(len(ref_logits), 1)
    separated = np.abs(ref_logits[i] - ref_logits[j]) > band[i] + band[j]
    discordant = np.sign(ref_logits[i] - ref_logits[j]) != np.sign(q_logits[i] - q_logits[j])
    tau = 1 - 2 * discordant.mean()  # Kendall's tau (no ties)
    report.append(
        f"order: Kendall tau {tau:.3f}, {discordant.sum()} discordant of {len(i)}; "
        f"{(discordant & separated).sum()} of them among the {separated.sum()} separated by more than their bands"
    )
    if (discordant & separated).any():
        failures.append(f"order: {[(int(i[k]), int(j[k])) for k in np.flatnonzero(discordant & separated)]} swapped")
    # Each logit in its band: the decisions above follow from it; it also catches a broken export that keeps them.
    outside = np.flatnonzero(np.abs(q_logits - ref_logits) > band)
    if len(outside):
        failures.append(f"logits of pairs {outside.tolist()} outside their band")
    return report, failures


@pytest.fixture(scope="module")
def int8_band(cross_encoder, onnx_cache):
    """The int8 cross-encoder (exported through the cache) and its error model's band per pair."""
    folder, max_length, ref_logits, _ = cross_encoder
    int8 = OnnxCrossEncoder(folder, max_length=max_length)
    _check_exported_recipe(int8.onnx_path, folder)
    torch_logits, sigma, shift, saturated, quantized_inputs = _int8_error_model(folder, max_length, PAIRS)
    np.testing.assert_allclose(torch_logits, ref_logits, atol=1e-4, rtol=0)  # the model the gradients came from
    assert quantized_inputs == _count_ops(int8.onnx_path, "DynamicQuantizeLinear")
    return int8, INT8_SIGMAS * sigma + np.abs(shift), sigma, shift, saturated


@pytest.mark.slow
def test_cross_encoder_matches_torch(cross_encoder, int8_band, tmp_path):
    folder, max_length, ref_logits, ref_probs = cross_encoder
    assert np.ptp(ref_logits) > 1.0, ref_logits  # the head really separates pairs

    fp32 = OnnxCrossEncoder(folder, max_length=max_length, quantize="none")
    logits = fp32.logits(PAIRS)
    assert logits.shape == (len(PAIRS),) and logits.dtype == np.float32
    np.testing.assert_allclose(logits, ref_logits, atol=1e-4, rtol=0)
    np.testing.assert_allclose(fp32.predict(PAIRS), ref_probs, atol=1e-5, rtol=0)
    np.testing.assert_array_equal(fp32.score(PAIRS), logits)

    # int8 against float32 in the band of the error model above. The random head (weights of norm ~20)
    # amplifies the encoder's rounding, so sigma is large against the spread of the logits (3.1).
    int8, band, sigma, shift, saturated = int8_band
    q_logits = int8.logits(PAIRS)
    err = q_logits - ref_logits
    prob_err = np.abs(int8.predict(PAIRS) - ref_probs)
    print(f"\ncross-encoder int8 on {_int8_platform(int8._session)}")
    print("kernels:", _kernels_run(int8.onnx_path, folder, max_length, PAIRS[0], tmp_path))
    print(f"pair-sums past int16 in the float32 run's quantized operands: {saturated}")
    print("   float32     int8    error   sigma   shift    band   |error|/band")
    for f, q, e, s, d, b in zip(ref_logits, q_logits, err, sigma, shift, band):
        print(f"  {f:+7.3f}  {q:+7.3f}  {e:+7.3f}  {s:6.3f}  {d:+6.3f}  {b:6.3f}   {abs(e) / b:.2f}")
    report, failures = _int8_against_float32(ref_logits, q_logits, band)
    pearson = float(np.corrcoef(q_logits, ref_logits)[0, 1])
    report.append(
        f"max |logit error| {np.abs(err).max():.4f}, max |prob error| {prob_err.max():.4f}, Pearson {pearson:.4f}"
    )
    print("\n".join(report))
    assert not failures, failures


@pytest.mark.slow
def test_a_broken_int8_export_falls_outside_the_band(cross_encoder, int8_band, tmp_path):
    """The band is not so wide that anything passes: a recipe bug that dequantizes every int8 weight with
    max|W| / 255 instead of / 127 (half its size) changes decisions, order and logits. (Measured while writing
    this: all weight steps 10% too large already fail the order and band checks; one of the 36 encoder
    matrices zeroed often does not, the residual stream carries on without it.)"""
    import onnx
    from onnx import numpy_helper

    folder, max_length, ref_logits, _ = cross_encoder
    int8, band, *_ = int8_band
    model = onnx.load(str(int8.onnx_path))
    for k, init in enumerate(model.graph.initializer):
        step = numpy_helper.to_array(init)
        if init.name.endswith("_scale") and step.ndim == 1:  # the weights' steps, per output channel
            model.graph.initializer[k].CopyFrom(numpy_helper.from_array(step * np.float32(127 / 255), init.name))
    broken = tmp_path / "broken.onnx"
    onnx.save(model, str(broken))
    q_logits = OnnxCrossEncoder(broken, tokenizer_dir=folder, max_length=max_length).logits(PAIRS)
    report, failures = _int8_against_float32(ref_logits, q_logits, band)
    print("\n".join(["", *report, *failures]))
    assert failures, report


@pytest.mark.slow
def test_cross_encoder_from_an_onnx_file_and_empty_input(cross_encoder, onnx_cache):
    folder, max_length, ref_logits, _ = cross_encoder
    path = ensure_onnx(folder, "cross_encoder", "none")
    ce = OnnxCrossEncoder(path, tokenizer_dir=folder, max_length=max_length, batch_size=3)  # 4 batches
    np.testing.assert_allclose(ce.logits(PAIRS), ref_logits, atol=1e-4, rtol=0)
    assert ce.logits([]).shape == (0,) and ce.predict([]).shape == (0,)
