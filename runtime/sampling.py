"""On-device sampling for one step: a row of logits per sequence -> one token per sequence.

Runs inside the jitted step, so its inputs are arrays with one entry per sequence row:
temperature (0 = greedy), top_p (1 = off), top_k (0 = off), seed and the index of the token being
generated. The PRNG key of a row is ``fold_in(PRNGKey(seed), index)``: a request's sample depends
only on its own seed and position, never on what else shares the batch, so a seeded request is
reproducible under any batching.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp


class SamplingArrays(NamedTuple):
    temperature: jax.Array  # float32[S]
    top_p: jax.Array  # float32[S]
    top_k: jax.Array  # int32[S]
    seeds: jax.Array  # uint32[S]
    token_index: jax.Array  # int32[S] number of tokens this request generated so far


def _filtered_logits(logits: jax.Array, s: SamplingArrays) -> jax.Array:
    """Temperature, then top-k and top-p masks (set to -inf), per row. logits [S, V] float32."""
    temp = jnp.maximum(s.temperature, 1e-5)[:, None]
    scaled = logits / temp
    order = jnp.argsort(-scaled, axis=-1)  # descending
    sorted_logits = jnp.take_along_axis(scaled, order, axis=-1)
    rank = jnp.arange(logits.shape[-1])[None, :]
    keep = jnp.where(s.top_k[:, None] > 0, rank < s.top_k[:, None], True)
    probs = jax.nn.softmax(jnp.where(keep, sorted_logits, -jnp.inf), axis=-1)
    # Keep the smallest prefix whose mass reaches top_p: a token stays if the mass before it < top_p.
    mass_before = jnp.cumsum(probs, axis=-1) - probs
    keep = keep & (mass_before < s.top_p[:, None])
    sorted_logits = jnp.where(keep, sorted_logits, -jnp.inf)
    # Scatter back to vocabulary order.
    return jnp.zeros_like(scaled).at[jnp.arange(logits.shape[0])[:, None], order].set(sorted_logits)


def _random_rows(logits: jax.Array, s: SamplingArrays) -> jax.Array:
    filtered = _filtered_logits(logits, s)
    keys = jax.vmap(lambda seed, i: jax.random.fold_in(jax.random.PRNGKey(seed), i))(s.seeds, s.token_index)
    sampled = jax.vmap(jax.random.categorical)(keys, filtered)
    return jnp.where(s.temperature > 0, sampled, jnp.argmax(logits, axis=-1)).astype(jnp.int32)


def sample(logits: jax.Array, s: SamplingArrays) -> jax.Array:
    """logits [S, V] -> int32[S]. The sort for top-k/top-p only runs when some row is not greedy."""
    greedy = jnp.argmax(logits, axis=-1).astype(jnp.int32)
    return jax.lax.cond(jnp.any(s.temperature > 0), _random_rows, lambda l, _: greedy, logits, s)
