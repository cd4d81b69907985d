"""Speculative decoding's draft side: n-gram prompt lookup, and when to stop drafting for a request.

Who calls it: the scheduler, on the engine's step thread, for running requests that are decoding.
What goes in: a request's tokens so far (prompt + outputs). What comes out: up to ``k`` draft
tokens that the next step feeds as extra query rows of the same sequence (the ragged step needs
nothing new: a sequence with 1 + k query rows is a small prefill chunk). The step samples a token
from every row; the scheduler keeps the drafts while they equal what was sampled, plus the one
sampled after the last kept draft (``verify``).

Why this is exact: the runner samples every row with the key of the position it produces
(``fold_in(seed, position)``, runtime/worker/sampling.py), as plain decoding does, and a draft is kept
only when it *is* the token sampled at its position. So the kept tokens are the tokens plain decoding
samples (greedy or seeded), not merely tokens from the same distribution; they differ only where the
logits of a 1 + k row step round differently from a 1-row step's.

The lookup (``NgramIndex``): the last n tokens (n from ``n_max`` down to ``n_min``) are looked up in
a dict from every n-gram of the request's earlier tokens to where it last ended; the tokens that
followed that occurrence are the draft. The dict is filled incrementally (each token is indexed once,
O(n_max) per token), so a step costs O(n_max) dict lookups per request, not a scan of the context:

    tokens:   ... a b c d e ... x y a b c   <- the suffix "a b c" (n = 3)
                      ^ last end of "a b c" before the suffix -> draft "d e ..."

When drafting does not pay (``Backoff``): every step with drafts costs more than a plain step (more
rows in every matmul, attention and the LM head), so a request whose drafts keep being rejected (open
chat, where n-gram matches are coincidences) stops drafting for a while, and the while doubles after
each fully rejected draft (1, 2, 4, ... up to ``max_skip`` steps); one accepted draft resets it.
Nothing here imports JAX or NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class NgramIndex:
    """Where each n-gram (``n_min <= n <= n_max``) of one request's tokens last ended."""

    n_min: int
    n_max: int
    last_end: dict[tuple[int, ...], int] = field(default_factory=dict)
    indexed: int = 0  # tokens [0, indexed) have had their n-grams ending there recorded

    def extend(self, tokens: list[int], upto: int) -> None:
        """Record the n-grams ending at positions [indexed, upto)."""
        for end in range(self.indexed, upto):
            for n in range(self.n_min, min(self.n_max, end + 1) + 1):
                self.last_end[tuple(tokens[end - n + 1 : end + 1])] = end
        self.indexed = max(self.indexed, upto)

    def propose(self, tokens: list[int], k: int) -> list[int]:
        """Up to ``k`` tokens that followed the latest earlier occurrence of the longest matching suffix."""
        length = len(tokens)
        if length < self.n_min + 1 or k < 1:
            return []
        # Every position but the last: the suffix itself (ending at length - 1) must not match itself.
        self.extend(tokens, length - 1)
        for n in range(min(self.n_max, length - 1), self.n_min - 1, -1):
            end = self.last_end.get(tuple(tokens[length - n :]))
            if end is not None:
                return tokens[end + 1 : end + 1 + k]
        return []


@dataclass
class Backoff:
    """Skip drafting for ``skip`` more steps after a fully rejected draft; the wait doubles each time."""

    max_skip: int
    skip: int = 0  # steps left without drafts
    wait: int = 0  # the next wait after a rejection (0: none yet)

    def allows(self) -> bool:
        if self.skip > 0:
            self.skip -= 1
            return False
        return True

    def record(self, num_accepted: int) -> None:
        if num_accepted > 0:
            self.wait = 0
            return
        self.wait = min(self.max_skip, max(1, 2 * self.wait))
        self.skip = self.wait


@dataclass(frozen=True)
class SpeculativeConfig:
    """``num_speculative_tokens``: drafts per request per step (k); ``prompt_lookup_min/max``: the n-gram
    sizes tried, longest first; ``max_skip``: the longest pause after rejected drafts, in steps."""

    num_speculative_tokens: int = 3
    prompt_lookup_min: int = 2
    prompt_lookup_max: int = 4
    max_skip: int = 16

    def __post_init__(self) -> None:
        for name in ("num_speculative_tokens", "prompt_lookup_min", "prompt_lookup_max", "max_skip"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"SpeculativeConfig.{name} must be an int >= 1, got {value!r}")
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ValueError(
                f"SpeculativeConfig.prompt_lookup_min ({self.prompt_lookup_min}) must be <= "
                f"prompt_lookup_max ({self.prompt_lookup_max})"
            )


class NgramProposer:
    """Drafts for each decoding request from its own tokens (``NgramIndex``), paused by ``Backoff``.

    Counts what it proposed and what was accepted (the engine's stats and metrics)."""

    def __init__(self, config: SpeculativeConfig) -> None:
        self.config = config
        self._index: dict[str, NgramIndex] = {}
        self._backoff: dict[str, Backoff] = {}
        self.num_draft_tokens = 0  # proposed and verified
        self.num_accepted_tokens = 0

    def propose(self, request_id: str, tokens: list[int], k: int) -> list[int]:
        """Up to ``min(k, num_speculative_tokens)`` drafts to follow ``tokens`` (the request's prompt and
        outputs), or [] (no match, or paused)."""
        c = self.config
        k = min(k, c.num_speculative_tokens)
        if k < 1:
            return []
        backoff = self._backoff.setdefault(request_id, Backoff(c.max_skip))
        if not backoff.allows():
            return []
        index = self._index.setdefault(request_id, NgramIndex(c.prompt_lookup_min, c.prompt_lookup_max))
        return index.propose(tokens, k)

    def record(self, request_id: str, num_drafts: int, num_accepted: int) -> None:
        self.num_draft_tokens += num_drafts
        self.num_accepted_tokens += num_accepted
        backoff = self._backoff.get(request_id)
        if backoff is not None:
            backoff.record(num_accepted)

    def forget(self, request_id: str) -> None:
        self._index.pop(request_id, None)
        self._backoff.pop(request_id, None)


def num_accepted(drafts: list[int], sampled: list[int]) -> int:
    """How many drafts the step confirmed: ``sampled[i]`` is the token sampled after row i (the row of
    the last real token, then the rows of the drafts), so draft i is kept while ``sampled[i] == drafts[i]``.
    The request then gains ``sampled[: accepted + 1]``: the kept drafts and the token after them."""
    accepted = 0
    while accepted < len(drafts) and sampled[accepted] == drafts[accepted]:
        accepted += 1
    return accepted
