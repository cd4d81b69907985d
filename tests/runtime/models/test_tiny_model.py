"""Fast tests on a tiny random-weight Llama GGUF (``tiny_gguf.py``): loader, forward pass, KV cache,
sampling, stop strings and attention backends. No real model is needed.

The model is checked against ``tiny_gguf.reference_logits``, an independent dense NumPy forward pass
written from the Hugging Face Llama definition (RMSNorm, rotate-half RoPE on unpermuted Q/K weights,
grouped-query causal attention, SwiGLU, tied LM head), in float64 on the original weights the helper
returns: it shares no code with runtime/.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.api import SamplingParams
from runtime.core.stopping import StopStringMatcher
from runtime.worker.sampling import SamplingArrays, sample
from tests.support.tiny_gguf import causal_attention, reference_greedy, reference_logits, rope, write_tiny_llama
from tests.support.tiny_models import model_fixtures, tiny_generator

# One tolerance table per dtype: (rtol, atol) for logits (magnitudes up to ~10 here).
TOLERANCES = {"float32": (1e-4, 1e-4)}
PAGE_SIZE = 16


tiny, loaded, gen = model_fixtures(write_tiny_llama, PAGE_SIZE)


def prompt(tiny, length: int, seed: int = 1) -> list[int]:
    return np.random.default_rng(seed).integers(0, tiny.vocab_size, size=length).tolist()


# ---------------------------------------------------------------- NumPy reference


def test_reference_attention_by_hand():
    """Pin the reference's attention on cases worked by hand.

    One KV head, two positions, Dh = 4 (scale 1/sqrt(4) = 0.5). Position 0 sees only itself, so
    out0 = v0. Position 1: q1.k0 = 0, q1.k1 = 4 -> scores [0, 2] -> weights [1, e^2] / (1 + e^2).
    Two query heads share the KV head (GQA); head 1 has q = 0 -> uniform weights [1/2, 1/2] at
    position 1.
    """
    q = np.array([[[0.0, 0, 0, 0], [0, 0, 0, 0]], [[2.0, 0, 0, 0], [0, 0, 0, 0]]])  # [P=2, H=2, Dh=4]
    k = np.array([[[0.0, 1, 0, 0]], [[2.0, 0, 0, 0]]])  # [P=2, KVH=1, Dh=4]
    v = np.array([[[1.0, 0, 0, 0]], [[0.0, 1, 0, 0]]])
    out = causal_attention(q, k, v)
    w1 = np.exp(2) / (1 + np.exp(2))
    np.testing.assert_allclose(out[:, 0], [[1, 0, 0, 0], [1 - w1, w1, 0, 0]], rtol=1e-12)
    np.testing.assert_allclose(out[:, 1], [[1, 0, 0, 0], [0.5, 0.5, 0, 0]], rtol=1e-12)


def test_reference_rope_by_hand():
    """Dh = 4, theta = 100: frequencies [1, 1/10]. Rotate-half pairs element i with i + Dh/2.

    Position 0 is the identity. At position pi/2 the pair (x0, x2) = (1, 0) turns by angle pi/2
    into (cos, sin) = (0, 1); the pair (x1, x3) = (0, 1) turns by pi/20 into (-sin, cos).
    """
    x = np.array([[[1.0, 0, 0, 1]]] * 2)  # [P=2, 1, Dh=4]
    out = rope(x, np.array([0.0, np.pi / 2]), theta=100.0)
    np.testing.assert_allclose(out[0, 0], [1, 0, 0, 1], atol=1e-12)
    a = np.pi / 20
    np.testing.assert_allclose(out[1, 0], [0, -np.sin(a), 1, np.cos(a)], atol=1e-12)


# ---------------------------------------------------------------- loader


def test_config_from_metadata(tiny, loaded):
    c = loaded.config
    assert c.architecture == "llama"
    assert (c.vocab_size, c.hidden_size, c.intermediate_size, c.num_layers) == (tiny.vocab_size, 64, 128, 2)
    assert (c.num_heads, c.num_kv_heads, c.head_dim, c.q_per_kv) == (4, 2, 16, 2)
    assert c.max_position_embeddings == tiny.context_length == 256
    assert c.rope_theta == tiny.rope_theta == 50000.0  # not the 10000 default
    assert c.rms_norm_eps == pytest.approx(1e-5)
    assert c.name == "tiny-llama"
    assert c.tie_word_embeddings and "lm_head" not in loaded.params


def test_loaded_weights_equal_originals(tiny, loaded):
    """Q/K come back unpermuted; every tensor ([in, out] kernels) equals the round-tripped original."""
    p = loaded.params
    np.testing.assert_array_equal(p["embed"], tiny.embed)
    np.testing.assert_array_equal(p["final_norm"]["scale"], tiny.final_norm)
    for i, layer in enumerate(tiny.layers):
        lp = p[f"layers_{i}"]
        np.testing.assert_array_equal(lp["attn_norm"]["scale"], layer["attn_norm"])
        np.testing.assert_array_equal(lp["ffn_norm"]["scale"], layer["ffn_norm"])
        for name in ("q", "k", "v", "o"):
            np.testing.assert_array_equal(lp["attn"][name]["kernel"], layer[name].T, err_msg=f"layer {i} {name}")
        for name in ("gate", "up", "down"):
            np.testing.assert_array_equal(lp["mlp"][name]["kernel"], layer[name].T, err_msg=f"layer {i} {name}")


def test_file_stores_permuted_qk_in_mixed_types(tiny):
    """The file really holds permuted Q/K and a mix of formats (so the test above means something)."""
    import gguf

    from tests.support.tiny_gguf import permute_qk

    reader = gguf.GGUFReader(tiny.path)  # the gguf package's reader and decoders: independent of runtime/
    tensors = {t.name: t for t in reader.tensors}
    assert {t.tensor_type.name for t in reader.tensors} == {"F32", "F16", "Q8_0"}
    for i, layer in enumerate(tiny.layers):
        for name, heads in (("q", tiny.num_heads), ("k", tiny.num_kv_heads)):
            t = tensors[f"blk.{i}.attn_{name}.weight"]
            stored = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(layer[name].shape)
            np.testing.assert_array_equal(stored, permute_qk(layer[name], heads))
            assert not np.array_equal(stored, layer[name])


# ---------------------------------------------------------------- forward pass


@pytest.mark.parametrize("length", [1, PAGE_SIZE - 1, PAGE_SIZE + 1, 40])
def test_prompt_logits_match_numpy_reference(tiny, gen, length):
    ids = prompt(tiny, length, seed=length)
    ours = gen.prompt_logits(ids)
    ref = reference_logits(tiny, ids)[-1]
    assert ours.shape == (tiny.vocab_size,) and ours.dtype == np.float32
    assert np.abs(ref).max() > 1.0  # logits are not degenerate
    rtol, atol = TOLERANCES["float32"]
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)


GREEDY_PROMPT_LEN, GREEDY_STEPS = 12, 10  # decoding crosses from page 0 into page 1 at position 16


@pytest.fixture(scope="module")
def greedy_reference(tiny):
    """(prompt, greedy continuation) by recomputing the NumPy reference over the whole sequence."""
    ids = prompt(tiny, GREEDY_PROMPT_LEN, seed=7)
    expected, gap = reference_greedy(tiny, ids, GREEDY_STEPS)
    assert gap > 1e-3, "near-tie: a greedy comparison would be fragile"
    assert len(set(expected)) > 3  # not one repeated token: the cache's contents matter
    return ids, expected


def test_greedy_decode_with_kv_cache_matches_recomputation(gen, greedy_reference):
    """Prefill + 9 one-token decode steps reading the paged cache vs. full recomputation each step."""
    ids, expected = greedy_reference
    _, stats = gen.generate(ids, SamplingParams(temperature=0.0, max_tokens=GREEDY_STEPS, ignore_eos=True))
    assert stats.finish_reason == "length"
    assert stats.token_ids == expected


# ---------------------------------------------------------------- sampling
#
# Every call goes through one compiled shape [ROWS, VOCAB] (compiling is what costs time on CPU):
# `draw` pads rows with plain temperature-1 rows and the vocabulary with -inf logits, which no
# filter keeps and no sampler picks. Padding rows also exercise batch independence on the way.

ROWS, VOCAB = 512, 32
_sample = jax.jit(sample)


def draw(logits, *, temperature=1.0, top_p=1.0, top_k=0, seeds=None, token_index=0) -> np.ndarray:
    logits = np.asarray(logits, np.float32)
    n, v = logits.shape
    padded = np.full((ROWS, VOCAB), -np.inf, np.float32)
    padded[:, 0] = 0.0
    padded[:n, :v] = logits

    def rows(value, dtype):
        out = np.zeros(ROWS, dtype) if dtype != np.float32 else np.ones(ROWS, dtype)
        out[:n] = np.broadcast_to(np.asarray(value, dtype), (n,))
        return jnp.asarray(out)

    arrays = SamplingArrays.neutral(ROWS)._replace(
        temperature=rows(temperature, np.float32),
        top_p=rows(top_p, np.float32),
        top_k=rows(top_k, np.int32),
        seeds=rows(np.arange(n) if seeds is None else seeds, np.uint32),
        token_index=rows(token_index, np.int32),
    )
    return np.asarray(_sample(jnp.asarray(padded), arrays))[:n]


def random_logits(rows, vocab=VOCAB, seed=0, scale=2.0):
    return (np.random.default_rng(seed).standard_normal((rows, vocab)) * scale).astype(np.float32)


def test_greedy_and_degenerate_filters_are_argmax():
    logits = random_logits(64)
    argmax = np.argmax(logits, axis=-1)
    np.testing.assert_array_equal(draw(logits, temperature=0.0), argmax)
    np.testing.assert_array_equal(draw(logits, temperature=1.0, top_k=1), argmax)
    np.testing.assert_array_equal(draw(logits, temperature=1.0, top_p=1e-6), argmax)
    # Greedy rows stay argmax when other rows in the batch sample.
    temps = np.where(np.arange(64) % 2 == 0, 0.0, 1.5)
    np.testing.assert_array_equal(draw(logits, temperature=temps)[::2], argmax[::2])


def test_seeded_sample_is_reproducible_and_independent_of_the_batch():
    logits = random_logits(8, seed=1, scale=0.5)  # flat: many tokens are plausible
    kw = dict(temperature=1.0, seeds=np.arange(100, 108), token_index=3)
    first = draw(logits, **kw)
    np.testing.assert_array_equal(draw(logits, **kw), first)
    # Replace every other row (logits, temperature, seed, index) and move row 0 to position 5.
    other = random_logits(8, seed=2, scale=3.0)
    other[5] = logits[0]
    got = draw(
        other,
        temperature=np.r_[0.7, 0.0, 2.0, 1.0, 0.3, 1.0, 1.0, 5.0],
        seeds=np.r_[1, 2, 3, 4, 5, 100, 7, 8],
        token_index=np.r_[0, 1, 2, 3, 4, 3, 6, 7],
    )
    assert got[5] == first[0]
    # Different draws do differ: the check above is not vacuous.
    assert len(set(draw(np.tile(logits[:1], (8, 1)), **kw).tolist())) > 1


def test_different_seeds_and_indices_give_different_samples():
    logits = np.zeros((256, 16), np.float32)  # uniform over 16 tokens
    by_seed = draw(logits, seeds=np.arange(256))
    assert set(by_seed.tolist()) == set(range(16))
    by_index = draw(logits, seeds=np.full(256, 42), token_index=np.arange(256))
    assert set(by_index.tolist()) == set(range(16))
    assert not np.array_equal(by_seed, by_index)


def test_sampled_frequencies_follow_softmax():
    base = np.array([2.0, 1.0, 0.5, 0.0, -1.0, -3.0], np.float32)
    n = 8 * ROWS
    for temperature in (1.0, 2.0):
        draws = np.concatenate(
            [
                draw(np.tile(base, (ROWS, 1)), temperature=temperature, seeds=np.arange(ROWS) + i * ROWS)
                for i in range(n // ROWS)
            ]
        )
        freq = np.bincount(draws, minlength=len(base)) / n
        probs = np.exp(base / temperature) / np.exp(base / temperature).sum()
        # ~4 standard errors (sqrt(p(1-p)/n) <= 0.008): loose, and the seeds are fixed: deterministic.
        np.testing.assert_allclose(freq, probs, atol=0.03)


def test_top_k_and_top_p_never_leave_the_kept_set():
    logits = random_logits(ROWS, seed=3, scale=1.0)
    top2 = np.argsort(-logits, axis=-1)[:, :2]
    draws = draw(logits, top_k=2)
    assert all(d in row for d, row in zip(draws, top2))
    assert (draws == top2[:, 1]).any()  # the second token does get picked
    # Probabilities [0.5, 0.3, 0.2]: top_p 0.45 keeps token 0 only (its mass reaches 0.45);
    # top_p 0.6 keeps tokens 0 and 1 (0.5 < 0.6 <= 0.8).
    p = np.log(np.array([[0.5, 0.3, 0.2]], np.float32))
    assert set(draw(np.tile(p, (ROWS, 1)), top_p=0.45).tolist()) == {0}
    assert set(draw(np.tile(p, (ROWS, 1)), top_p=0.6).tolist()) == {0, 1}


_sample_8 = jax.jit(functools.partial(sample, max_candidates=8))


def draw8(logits, **kw):
    """``draw`` with the filters on only 8 candidates of the 32-token vocabulary."""
    global _sample
    saved, _sample = _sample, _sample_8
    try:
        return draw(logits, **kw)
    finally:
        _sample = saved


def test_filters_on_candidates_are_exact_and_fall_back_to_the_whole_vocabulary():
    # probabilities 0.3, 0.2, 0.1, then 29 tokens sharing 0.4: the 8 best hold 0.6 + 5 * 0.4 / 29
    p = np.array([0.3, 0.2, 0.1] + [0.4 / 29] * 29, np.float64)
    logits = np.tile(np.log(p).astype(np.float32), (ROWS, 1))
    # top_p 0.55: the nucleus is measured against the whole vocabulary, not the candidates (whose
    # mass is 0.67; renormalizing by it would drop token 2, as its mass before, 0.5, would read 0.75)
    assert set(draw8(logits, top_p=0.55).tolist()) == {0, 1, 2}
    assert set(draw(logits, top_p=0.55).tolist()) == {0, 1, 2}
    # top_p 0.9 reaches past the 8 candidates: the whole vocabulary is sorted, tokens beyond rank 8 appear
    assert max(draw8(logits, top_p=0.9).tolist()) >= 8
    # top_k 3 fits the candidates; top_k 20 does not, and tokens ranked 8..19 are drawn too
    assert set(draw8(logits, top_k=3).tolist()) == {0, 1, 2}
    big_k = draw8(logits, top_k=20)
    assert big_k.max() < 20 and (big_k >= 8).any()
    # frequencies under top_k 3 follow the renormalized softmax [0.5, 0.33, 0.17]
    n = 8 * ROWS
    draws = np.concatenate([draw8(logits, top_k=3, seeds=np.arange(ROWS) + i * ROWS) for i in range(n // ROWS)])
    np.testing.assert_allclose(np.bincount(draws, minlength=3)[:3] / n, [0.5, 1 / 3, 1 / 6], atol=0.03)


# ---------------------------------------------------------------- stop strings


def feed_all(matcher, deltas):
    out = "".join(matcher.feed(d) for d in deltas)
    return out + matcher.flush()


def test_stop_string_inside_one_delta():
    m = StopStringMatcher(["STOP"])
    assert feed_all(m, ["hello STOP world"]) == "hello "
    assert m.stopped
    assert m.feed("more") == "" and m.flush() == ""


def test_stop_string_straddling_deltas():
    m = StopStringMatcher(["</end>"])
    outs = [m.feed(d) for d in ["abcdefg</", "e", "nd", ">tail"]]
    assert "".join(outs) == "abcdefg" and m.stopped
    # The last len("</end>") - 1 = 5 characters are held back: they may begin the stop string.
    assert outs[0] == "abcd"


def test_earliest_stop_wins():
    m = StopStringMatcher(["world", "lo w"])
    assert feed_all(m, ["hel", "lo world"]) == "hel"
    m = StopStringMatcher(["xyz", "b"])
    assert feed_all(m, ["a", "bxyz"]) == "a"


def test_held_back_text_is_released_on_flush():
    m = StopStringMatcher(["STOP"])  # holds back len("STOP") - 1 = 3 characters
    assert m.feed("abcST") == "ab"
    assert m.feed("O") == "c"
    assert m.flush() == "STO"
    assert not m.stopped


@pytest.mark.parametrize("seed", range(5))
def test_stop_string_never_emitted_random_splits(seed):
    rng = np.random.default_rng(seed)
    text = "the quick brown fox <|stop|> jumps over"
    cuts = sorted(rng.choice(np.arange(1, len(text)), size=6, replace=False))
    deltas = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)])]
    m = StopStringMatcher(["<|stop|>", "never"])
    out = feed_all(m, deltas)
    assert out == "the quick brown fox " and "<|stop|>" not in out
    m = StopStringMatcher(["absent"])
    assert feed_all(m, deltas) == text  # no stop: everything comes out, in order


# ---------------------------------------------------------------- attention backends


@pytest.mark.parametrize("backend", ["pallas_interpret", "pallas_tpu_interpret"])
def test_pallas_interpret_matches_xla(tiny, greedy_reference, backend):
    """The GPU and the TPU Pallas kernels (interpreted) in the whole model: same greedy tokens as the
    XLA path and the reference (test_greedy_decode_... checks XLA against the same list). Six tokens: the last decode
    step writes position 16, the first slot of the second page. Interpreting is slow: keep it short."""
    pallas = tiny_generator(tiny, PAGE_SIZE, backend)
    ids, expected = greedy_reference
    _, stats = pallas.generate(ids, SamplingParams(temperature=0.0, max_tokens=6, ignore_eos=True))
    assert stats.token_ids == expected[:6]
