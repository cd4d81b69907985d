"""On-device sampling for one step: a row of logits per sequence -> one token per sequence.

Runs inside the jitted step, so its inputs are arrays with one entry per sequence row:
temperature (0 = greedy), top_p (1 = off), top_k (0 = off), seed and the index of the token being
generated. The PRNG key of a row is ``fold_in(PRNGKey(seed), index)``: a request's sample depends
only on its own seed and position, never on what else shares the batch, so a seeded request is
reproducible under any batching.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp


class SamplingArrays(NamedTuple):
    temperature: jax.Array  # float32[S]
    top_p: jax.Array  # float32[S]
    top_k: jax.Array  # int32[S]
    seeds: jax.Array  # uint32[S]
    token_index: jax.Array  # int32[S] number of tokens this request generated so far


MAX_CANDIDATES = 256  # top-k / top-p work on this many best tokens when that is exact (nearly always)


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


def _random_rows(logits: jax.Array, s: SamplingArrays, max_candidates: int) -> jax.Array:
    scaled = logits / jnp.maximum(s.temperature, 1e-5)[:, None]
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
