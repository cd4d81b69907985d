"""On-device sampling for one step: a row of logits per sequence -> one token per sequence.

Runs inside the jitted step, so its inputs are arrays with one entry per sequence row:
temperature (0 = greedy), top_p (1 = off), top_k (0 = off), min_p (0 = off), seed and the index of
the token being generated. The PRNG key of a row is ``fold_in(PRNGKey(seed), index)``: a request's
sample depends only on its own seed and position, never on what else shares the batch, so a seeded
request is reproducible under any batching.

Penalties, ``logit_bias`` and ``min_tokens`` need more than a number per row: what the request's
prompt and output hold so far, and per-token settings. That lives on the device, in ``SamplerState``,
one row per running request that needs it (``SamplingParams.needs_history``; row 0 is the null row
every other request points at), donated through the step like the KV cache:

    counts int32[P+1, V]  bits 0-23: occurrences in the output; bit 24: in the prompt;
                          bit 25: an end token (held back while fewer than min_tokens came out)
    bias float32[P+1, V]  logit_bias

The model runner fills a row when a request first needs one (``init_state_row``, from the request's
tokens on the host: exact after a preemption too) and the step adds each kept sample to its row, so
nothing of size V crosses to the device per step. Rows not using the state skip its work entirely
(``lax.cond``); their tokens are the same as without it.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from runtime.structured.bitmask import apply_bitmask


class SamplingArrays(NamedTuple):
    temperature: jax.Array  # float32[S]
    top_p: jax.Array  # float32[S]
    top_k: jax.Array  # int32[S]
    seeds: jax.Array  # uint32[S]
    token_index: jax.Array  # int32[S] number of tokens this request generated so far
    min_p: jax.Array  # float32[S]
    state_row: jax.Array  # int32[S] the request's SamplerState row (0: none)
    count_row: jax.Array  # int32[S] where this row's sample is counted (its state row if kept, else 0)
    presence: jax.Array  # float32[S]
    frequency: jax.Array  # float32[S]
    repetition: jax.Array  # float32[S] 1 = off
    hold_end: jax.Array  # bool[S] fewer than min_tokens so far: the end tokens may not be drawn
    logprobs: jax.Array  # bool[S] return the log-probabilities of this row
    # Grammar-constrained rows (runtime.structured): bit t & 31 of word t >> 5 set = token t allowed
    bitmask: jax.Array  # int32[S, W], W = ceil(V / 32) (W = 1 where the step has no grammar support)
    masked: jax.Array  # bool[S] apply this row's bitmask

    @classmethod
    def neutral(cls, rows: int, vocab: int | None = None) -> SamplingArrays:
        """Greedy rows with every option off (NumPy): what padding rows and scoring use. ``vocab``: the
        model's, for a bitmask wide enough for grammar-constrained rows (None: none can be)."""
        f32, i32 = np.float32, np.int32
        words = 1 if vocab is None else -(-vocab // 32)
        return cls(
            np.zeros(rows, f32),
            np.ones(rows, f32),
            np.zeros(rows, i32),
            np.zeros(rows, np.uint32),
            np.zeros(rows, i32),
            np.zeros(rows, f32),
            np.zeros(rows, i32),
            np.zeros(rows, i32),
            np.zeros(rows, f32),
            np.zeros(rows, f32),
            np.ones(rows, f32),
            np.zeros(rows, bool),
            np.zeros(rows, bool),
            np.zeros((rows, words), i32),
            np.zeros(rows, bool),
        )

    @classmethod
    def abstract(cls, rows: int, vocab: int | None = None) -> SamplingArrays:
        return jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype), cls.neutral(rows, vocab))


class SamplerState(NamedTuple):
    counts: jax.Array  # int32[P+1, V]
    bias: jax.Array  # float32[P+1, V]


class StepOutput(NamedTuple):
    """What a step returns per sampled row: the token, and with ``SamplingArrays.logprobs`` its
    log-probability and the ``MAX_LOGPROBS`` likeliest tokens (zeros for the other rows)."""

    tokens: jax.Array  # int32[S]
    logprob: jax.Array  # float32[S]
    top_ids: jax.Array  # int32[S, MAX_LOGPROBS]
    top_logprobs: jax.Array  # float32[S, MAX_LOGPROBS]


MAX_CANDIDATES = 256  # top-k / top-p work on this many best tokens when that is exact (nearly always)
MAX_LOGPROBS = 20  # runtime.api.MAX_LOGPROBS
COUNT_BITS = 0xFFFFFF
PROMPT_BIT = 1 << 24
END_BIT = 1 << 25
# init_state_row's token kinds
PROMPT, OUTPUT, END, BIAS = 0, 1, 2, 3


def allocate_sampler_state(rows: int, vocab: int) -> SamplerState:
    """``rows`` request rows plus the null row 0."""
    return SamplerState(jnp.zeros((rows + 1, vocab), jnp.int32), jnp.zeros((rows + 1, vocab), jnp.float32))


@functools.partial(jax.jit, donate_argnums=(0,))
def init_state_row(state: SamplerState, row: jax.Array, ids: jax.Array, kinds: jax.Array, values: jax.Array):
    """Fill row ``row`` of the state from a request's tokens: ``ids[i]`` of kind ``kinds[i]`` (PROMPT,
    OUTPUT, END, BIAS with ``values[i]``; any other kind is padding). One program per length of
    ``ids`` (the runner pads it to a power of two)."""
    vocab = state.counts.shape[1]

    def scatter(kind, update, dtype):
        at = jnp.where(kinds == kind, ids, vocab)  # padding and other kinds fall off the end: dropped
        return jnp.zeros(vocab, dtype).at[at].add(update, mode="drop")

    outputs = scatter(OUTPUT, jnp.ones_like(ids), jnp.int32)
    prompt = scatter(PROMPT, jnp.ones_like(ids), jnp.int32) > 0
    end = scatter(END, jnp.ones_like(ids), jnp.int32) > 0
    counts = outputs | jnp.where(prompt, PROMPT_BIT, 0) | jnp.where(end, END_BIT, 0)
    bias = scatter(BIAS, values, jnp.float32)
    return SamplerState(state.counts.at[row].set(counts), state.bias.at[row].set(bias))


def process_logits(logits: jax.Array, s: SamplingArrays, state: SamplerState) -> jax.Array:
    """Penalties, logit_bias and the min_tokens mask (``SamplingParams``' order) on the rows with a
    state row; the others pass through unchanged. Skipped when no row has one."""

    def adjust(logits):
        counts = state.counts[s.state_row]  # [S, V]
        out = (counts & COUNT_BITS).astype(jnp.float32)
        seen = (counts & (COUNT_BITS | PROMPT_BIT)) != 0
        rep = s.repetition[:, None]
        x = jnp.where(seen, jnp.where(logits > 0, logits / rep, logits * rep), logits)
        x = x - s.presence[:, None] * (out > 0) - s.frequency[:, None] * out + state.bias[s.state_row]
        x = jnp.where(s.hold_end[:, None] & ((counts & END_BIT) != 0), -jnp.inf, x)
        return jnp.where(s.state_row[:, None] > 0, x, logits)

    return jax.lax.cond(jnp.any(s.state_row > 0), adjust, lambda x: x, logits)


def count_samples(state: SamplerState, s: SamplingArrays, tokens: jax.Array) -> SamplerState:
    """Add each kept sample to its request's row (rows with ``count_row`` 0 land in the null row)."""
    return SamplerState(state.counts.at[s.count_row, tokens].add(1), state.bias)


def token_logprobs(logits: jax.Array, s: SamplingArrays, tokens: jax.Array) -> tuple[jax.Array, ...]:
    """The model's log-probabilities (raw logits) of the sampled tokens and the likeliest tokens."""
    rows = logits.shape[0]
    k = min(MAX_LOGPROBS, logits.shape[-1])

    def compute(_):
        lp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
        chosen = jnp.take_along_axis(lp, tokens[:, None], axis=-1)[:, 0]
        vals, ids = jax.lax.top_k(lp, k)
        pad = MAX_LOGPROBS - k
        return chosen, jnp.pad(ids, ((0, 0), (0, pad))).astype(jnp.int32), jnp.pad(vals, ((0, 0), (0, pad)))

    def skip(_):
        return (
            jnp.zeros(rows, jnp.float32),
            jnp.zeros((rows, MAX_LOGPROBS), jnp.int32),
            jnp.zeros((rows, MAX_LOGPROBS), jnp.float32),
        )

    return jax.lax.cond(jnp.any(s.logprobs), compute, skip, None)


def grammar_mask(logits: jax.Array, s: SamplingArrays) -> jax.Array:
    """The tokens a masked row's grammar does not allow, to -inf (after the other logit processing, so a
    bias cannot bring a forbidden token back). Skipped when no row is masked, and absent from a step
    built without a bitmask wide enough for the vocabulary."""
    if s.bitmask.shape[1] * 32 < logits.shape[-1]:
        return logits
    return jax.lax.cond(jnp.any(s.masked), lambda x: apply_bitmask(x, s.bitmask, s.masked), lambda x: x, logits)


def sample_step(logits: jax.Array, s: SamplingArrays, state: SamplerState) -> tuple[StepOutput, SamplerState]:
    """The step's sampling: logits [S, V] -> ``StepOutput`` and the state with this step's samples."""
    tokens = sample(grammar_mask(process_logits(logits, s, state), s), s)
    return StepOutput(tokens, *token_logprobs(logits, s, tokens)), count_samples(state, s, tokens)


def _keep(sorted_logits: jax.Array, s: SamplingArrays, log_norm: jax.Array) -> jax.Array:
    """Mask over logits sorted in descending order: top-k, then the top-p nucleus.

    ``log_norm`` [S, 1] normalizes the probabilities the nucleus is measured in: the log-sum-exp of
    the top-k tokens when top-k is on, of the whole vocabulary otherwise."""
    rank = jnp.arange(sorted_logits.shape[-1])[None, :]
    keep = jnp.where(s.top_k[:, None] > 0, rank < s.top_k[:, None], True)
    probs = jnp.where(keep, jnp.exp(sorted_logits - log_norm), 0.0)
    # Keep the smallest prefix whose mass reaches top_p: a token stays if the mass before it < top_p.
    mass_before = jnp.cumsum(probs, axis=-1) - probs
    return keep & (mass_before < s.top_p[:, None])


def _top_k_norm(sorted_logits: jax.Array, s: SamplingArrays, full_norm: jax.Array) -> jax.Array:
    rank = jnp.arange(sorted_logits.shape[-1])[None, :]
    in_k = jnp.where(rank < s.top_k[:, None], sorted_logits, -jnp.inf)
    return jnp.where(s.top_k[:, None] > 0, jax.nn.logsumexp(in_k, axis=-1, keepdims=True), full_norm)


def _filtered_sample(keys, scaled: jax.Array, s: SamplingArrays, max_candidates: int) -> jax.Array:
    """Sample each row from its top-k / top-p set. Sorting 262k logits per row costs more than the
    model's step, so the filters run on the ``max_candidates`` best tokens (``lax.top_k``) whenever
    that set holds every token they could keep; otherwise (a huge top_k, or a top_p the candidates'
    mass does not reach) the whole vocabulary is sorted. Either way the result is exact."""
    vocab = scaled.shape[-1]
    k = min(max_candidates, vocab)
    full_norm = jax.nn.logsumexp(scaled, axis=-1, keepdims=True)
    vals, idx = jax.lax.top_k(scaled, k)  # descending
    mass_k = jnp.exp(jax.nn.logsumexp(vals, axis=-1) - full_norm[:, 0])
    covered = jnp.where(s.top_k > 0, s.top_k <= k, mass_k >= s.top_p)
    filtered = (s.top_k > 0) | (s.top_p < 1)

    def candidates(_):
        keep = _keep(vals, s, _top_k_norm(vals, s, full_norm))
        pick = jax.vmap(jax.random.categorical)(keys, jnp.where(keep, vals, -jnp.inf))
        return jnp.take_along_axis(idx, pick[:, None], axis=-1)[:, 0]

    def whole_vocabulary(_):
        order = jnp.argsort(-scaled, axis=-1)
        ordered = jnp.take_along_axis(scaled, order, axis=-1)
        keep = _keep(ordered, s, _top_k_norm(ordered, s, full_norm))
        pick = jax.vmap(jax.random.categorical)(keys, jnp.where(keep, ordered, -jnp.inf))
        return jnp.take_along_axis(order, pick[:, None], axis=-1)[:, 0]

    return jax.lax.cond(jnp.any(filtered & ~covered), whole_vocabulary, candidates, None)


def _inverse_cdf(keys, scaled: jax.Array) -> jax.Array:
    """One uniform per row against the running sum of the softmax: exact, and over 262k logits far
    cheaper than ``jax.random.categorical`` (a Gumbel draw per logit). Two levels, so only sums of
    blocks and one block are scanned:

        e = exp(logits - max)  [S, V] -> [S, nb, B]; block sums -> running sums -> block of u
                                                                -> running sum inside it -> token
    """
    rows, vocab = scaled.shape
    width = math.gcd(vocab, 512)
    e = jnp.exp(scaled - jnp.max(scaled, axis=-1, keepdims=True)).reshape(rows, vocab // width, width)
    block_sums = jnp.sum(e, axis=-1)  # [S, nb]
    block_cdf = jnp.cumsum(block_sums, axis=-1)
    u = jax.vmap(jax.random.uniform)(keys) * block_cdf[:, -1]
    block = jnp.minimum(jnp.sum(block_cdf <= u[:, None], axis=-1), vocab // width - 1)  # [S]
    before = jnp.take_along_axis(block_cdf - block_sums, block[:, None], axis=-1)  # [S, 1]
    inner = jnp.take_along_axis(e, block[:, None, None], axis=1)[:, 0]  # [S, B]
    within = jnp.minimum(jnp.sum(before + jnp.cumsum(inner, axis=-1) <= u[:, None], axis=-1), width - 1)
    return block * width + within


def _min_p(scaled: jax.Array, s: SamplingArrays) -> jax.Array:
    """Drop the tokens less likely than min_p x the likeliest one (of the tempered distribution)."""

    def drop(x):
        floor = jnp.max(x, axis=-1, keepdims=True) + jnp.log(jnp.maximum(s.min_p, 1e-30))[:, None]
        return jnp.where((s.min_p[:, None] > 0) & (x < floor), -jnp.inf, x)

    return jax.lax.cond(jnp.any(s.min_p > 0), drop, lambda x: x, scaled)


def _random_rows(logits: jax.Array, s: SamplingArrays, max_candidates: int) -> jax.Array:
    scaled = _min_p(logits / jnp.maximum(s.temperature, 1e-5)[:, None], s)
    keys = jax.vmap(lambda seed, i: jax.random.fold_in(jax.random.PRNGKey(seed), i))(s.seeds, s.token_index)
    plain = _inverse_cdf(keys, scaled)  # no filter: the whole softmax, no sort
    filtered = (s.top_k > 0) | (s.top_p < 1)
    picked = jax.lax.cond(jnp.any(filtered), lambda: _filtered_sample(keys, scaled, s, max_candidates), lambda: plain)
    sampled = jnp.where(filtered, picked, plain)
    return jnp.where(s.temperature > 0, sampled, jnp.argmax(logits, axis=-1)).astype(jnp.int32)


def sample(logits: jax.Array, s: SamplingArrays, max_candidates: int = MAX_CANDIDATES) -> jax.Array:
    """logits [S, V] -> int32[S]. Filters only run when some row samples with top-k or top-p."""
    greedy = jnp.argmax(logits, axis=-1).astype(jnp.int32)
    return jax.lax.cond(jnp.any(s.temperature > 0), lambda: _random_rows(logits, s, max_candidates), lambda: greedy)
