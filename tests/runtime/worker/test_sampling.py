"""The step's logit processing and sampler state (runtime/worker/sampling.py), on hand-computable logits."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from runtime.worker.sampling import (
    BIAS,
    END,
    OUTPUT,
    PROMPT,
    SamplingArrays,
    allocate_sampler_state,
    count_samples,
    init_state_row,
    process_logits,
    sample,
    sample_step,
    token_logprobs,
)

V = 8


def state_with(row: int, prompt=(), output=(), end=(), bias=(), rows: int = 3):
    state = allocate_sampler_state(rows, V)
    parts = [(list(prompt), PROMPT), (list(output), OUTPUT), (list(end), END), ([t for t, _ in bias], BIAS)]
    ids = [t for p, _ in parts for t in p]
    kinds = [k for p, k in parts for _ in p]
    values = [0.0] * (len(ids) - len(bias)) + [b for _, b in bias]
    pad = 16 - len(ids)
    return init_state_row(
        state,
        np.int32(row),
        np.array(ids + [0] * pad, np.int32),
        np.array(kinds + [-1] * pad, np.int32),
        np.array(values + [0.0] * pad, np.float32),
    )


def arrays(rows: int, **columns) -> SamplingArrays:
    a = SamplingArrays.neutral(rows)
    return a._replace(**{k: np.asarray(v, getattr(a, k).dtype) for k, v in columns.items()})


def test_init_state_row_counts_outputs_and_flags_prompt_and_end_tokens():
    state = state_with(2, prompt=[1, 1, 3], output=[3, 5, 5, 5], end=[7], bias=[(4, 2.5), (6, -1.0)])
    counts, bias = np.asarray(state.counts), np.asarray(state.bias)
    assert not counts[[0, 1, 3]].any() and not bias[[0, 1, 3]].any()  # other rows untouched
    row = counts[2]
    assert (row & 0xFFFFFF).tolist() == [0, 0, 0, 1, 0, 3, 0, 0]
    assert [bool(x & (1 << 24)) for x in row] == [False, True, False, True, False, False, False, False]
    assert [bool(x & (1 << 25)) for x in row] == [False] * 7 + [True]
    assert bias[2].tolist() == [0, 0, 0, 0, 2.5, 0, -1.0, 0]


def test_penalties_and_bias_follow_the_documented_formulas():
    logits = np.array([[2.0, -2.0, 1.0, 4.0, 0.5, 3.0, 0.0, 1.5]] * 2, np.float32)
    state = state_with(1, prompt=[0, 1], output=[3, 3, 5], bias=[(6, 5.0)])
    s = arrays(2, state_row=[1, 0], presence=[0.5, 0.5], frequency=[0.25, 0.25], repetition=[2.0, 2.0])
    out = np.asarray(process_logits(jnp.asarray(logits), s, state))
    want = logits[0].copy()
    want[0] = 2.0 / 2  # in the prompt, positive: divided
    want[1] = -2.0 * 2  # in the prompt, negative: multiplied
    want[3] = 4.0 / 2 - 0.5 - 0.25 * 2  # twice in the output: repetition, presence once, frequency twice
    want[5] = 3.0 / 2 - 0.5 - 0.25 * 1
    want[6] = 0.0 + 5.0  # logit_bias
    np.testing.assert_allclose(out[0], want, rtol=1e-6)
    np.testing.assert_array_equal(out[1], logits[1])  # no state row: unchanged, whatever its numbers


def test_min_tokens_holds_back_the_end_tokens_only_while_asked():
    logits = jnp.asarray(np.array([[0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 9.0]] * 2, np.float32))
    state = state_with(1, end=[7])
    s = arrays(2, state_row=[1, 1], hold_end=[True, False])
    tokens = np.asarray(sample(process_logits(logits, s, state), s))
    assert tokens.tolist() == [3, 7]  # held back: the next best; min_tokens reached: the end token comes


def test_counting_adds_kept_samples_to_their_row_and_drops_the_rest_in_the_null_row():
    state = state_with(1, output=[4])
    s = arrays(3, state_row=[1, 1, 0], count_row=[1, 0, 0])
    state = count_samples(state, s, jnp.asarray([4, 6, 2], jnp.int32))
    counts = np.asarray(state.counts) & 0xFFFFFF
    assert counts[1].tolist() == [0, 0, 0, 0, 2, 0, 0, 0]  # the kept sample; row 2's discarded one is not
    assert counts[2:].sum() == 0


def test_a_large_logit_bias_forces_a_token_greedy_and_sampled():
    logits = jnp.asarray(np.random.default_rng(0).standard_normal((2, V)).astype(np.float32))
    state = state_with(1, bias=[(6, 100.0)])
    s = arrays(2, state_row=[1, 1], temperature=[0.0, 1.0], seeds=[1, 2])
    out, _ = sample_step(logits, s, state)
    assert np.asarray(out.tokens).tolist() == [6, 6]


def test_min_p_keeps_only_tokens_near_the_likeliest():
    # probabilities 0.5, 0.3, 0.2 (and ~0): min_p 0.5 keeps those >= 0.25, so token 2 never comes
    logits = np.log(np.array([0.5, 0.3, 0.2, 1e-9], np.float32))[None].repeat(256, axis=0)
    s = arrays(256, temperature=np.ones(256), min_p=np.full(256, 0.5), seeds=np.arange(256))
    tokens = np.asarray(sample(jnp.asarray(logits), s))
    assert set(tokens.tolist()) <= {0, 1} and {0, 1} <= set(tokens.tolist())
    plain = np.asarray(sample(jnp.asarray(logits), s._replace(min_p=np.zeros(256, np.float32))))
    assert 2 in plain.tolist()  # without it the 0.2 token is drawn about a fifth of the time


def test_top_k_one_at_temperature_one_is_greedy():
    logits = jnp.asarray(np.random.default_rng(1).standard_normal((16, V)).astype(np.float32) * 3)
    s = arrays(16, temperature=np.ones(16), top_k=np.ones(16), seeds=np.arange(16))
    np.testing.assert_array_equal(np.asarray(sample(logits, s)), np.argmax(np.asarray(logits), axis=-1))


def test_logprobs_are_the_models_log_softmax_of_the_raw_logits():
    raw = np.random.default_rng(2).standard_normal((3, V)).astype(np.float32)
    s = arrays(3, logprobs=[True, False, True])
    tokens = jnp.asarray([1, 2, 3], jnp.int32)
    chosen, top_ids, top_lp = (np.asarray(x) for x in token_logprobs(jnp.asarray(raw), s, tokens))
    ref = raw - np.log(np.exp(raw).sum(-1, keepdims=True))
    np.testing.assert_allclose(chosen, ref[[0, 1, 2], [1, 2, 3]], rtol=1e-5)
    assert top_ids.shape == (3, 20) and top_ids[0, :V].tolist() == np.argsort(-ref[0]).tolist()
    np.testing.assert_allclose(top_lp[0, :V], np.sort(ref[0])[::-1], rtol=1e-5)
    skipped = token_logprobs(jnp.asarray(raw), arrays(3), tokens)
    assert not np.asarray(skipped[0]).any()  # no row asked: not computed


@pytest.mark.parametrize("temperature", [0.0, 0.8])
def test_rows_without_options_sample_as_before(temperature):
    logits = jnp.asarray(np.random.default_rng(3).standard_normal((4, V)).astype(np.float32))
    s = arrays(4, temperature=np.full(4, temperature), seeds=np.arange(4))
    out, _ = sample_step(logits, s, allocate_sampler_state(4, V))
    np.testing.assert_array_equal(np.asarray(out.tokens), np.asarray(sample(logits, s)))
