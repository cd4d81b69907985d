"""Compiled grammars and per-request matchers over one model's vocabulary (llguidance underneath).

Data flow, per request::

    StructuredSpec --GrammarCompiler.compile (LRU, any thread)--> CompiledGrammar
    CompiledGrammar.matcher() --> Matcher        one per request, owned by the engine's step thread
    each decode step:  Matcher.fill_bitmask(row)  -> int32 words, bit set = token allowed
                       (the sampler masks logits with runtime.structured.bitmask.apply_bitmask)
                       Matcher.accept(sampled id) -> False if the id was not allowed

Bitmask layout (llguidance's and xgrammar's, so either could fill it)::

    row: int32[ceil(V / 32)]          V = the model's vocabulary (>= the tokenizer's)
    token t allowed  <=>  (row[t >> 5] >> (t & 31)) & 1
    word 0 = tokens 0..31, bit 0 = token 0 (little-endian bits); ids >= the tokenizer's vocabulary
    (embedding rows with no token) are never allowed.

Termination: the tokenizer's stop tokens (``Tokenizer.stop_token_ids``: EOS, end-of-turn) are llguidance's
EOS set. Their bits are set exactly when the grammar is in an accepting state, so the model can stop
only on a complete output; once the grammar can extend no further they are the only bits set.
``is_terminated()`` turns true then (or after a stop token is accepted): the engine may finish the
request at once instead of sampling the forced stop token.

Costs (docs/results/bench_grammar.json): ``GrammarCompiler(tokenizer)`` builds llguidance's token trie
once per model (0.3 s for SmolLM2's 49152 ids, 2 s for Gemma 3's 262144). ``compile`` is 0.6-2 ms for
typical schemas and is cached by spec; ``matcher()`` is a deep copy of the cached prototype (~5 us).
``fill_bitmask`` is 15-45 us median, ~0.1 ms p99 per row and releases the GIL; ``accept`` ~20 us.
Many rows per step: ``BatchFiller`` runs them on llguidance's thread pool.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import llguidance as llg
import numpy as np

from runtime.structured.spec import StructuredSpec

if TYPE_CHECKING:
    from runtime.loading.tokenizer import Tokenizer


def bitmask_words(vocab_size: int) -> int:
    """int32 words per bitmask row: ``ceil(vocab_size / 32)``."""
    return (vocab_size + 31) // 32


class _TokenizerAdapter:
    """What ``llguidance.TokenizerWrapper`` reads: every id's bytes, the special ids (never matched by
    grammar text), and an encoder for the canonical tokenization of forced text."""

    def __init__(self, tok: Tokenizer, vocab_size: int) -> None:
        self._tok = tok
        self.eos_token_id = tok.eos_token_id
        self.bos_token_id = tok.bos_token_id
        # Padding ids (embedding rows past the tokenizer) are empty tokens: llguidance never allows them.
        self.tokens = [tok.token_bytes(i) for i in range(tok.vocab_size)] + [b""] * (vocab_size - tok.vocab_size)
        self.special_token_ids = sorted(tok.control_token_ids)

    def __call__(self, text: str | bytes) -> list[int]:
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        return self._tok.encode(text, add_bos=False)


def build_ll_tokenizer(tok: Tokenizer, vocab_size: int | None = None) -> llg.LLTokenizer:
    """llguidance's view of ``tok``, padded to ``vocab_size`` ids, with every stop token as EOS."""
    vocab_size = tok.vocab_size if vocab_size is None else vocab_size
    if vocab_size < tok.vocab_size:
        raise ValueError(f"vocab_size {vocab_size} is smaller than the tokenizer's {tok.vocab_size}")
    stops = sorted(tok.stop_token_ids) or ([tok.eos_token_id] if tok.eos_token_id is not None else [])
    if not stops:
        raise ValueError("the tokenizer has no stop token: a grammar could never let the model end")
    return llg.LLTokenizer(llg.TokenizerWrapper(_TokenizerAdapter(tok, vocab_size)), eos_token=stops)


@dataclass(frozen=True)
class CompiledGrammar:
    """A spec's grammar, compiled against one vocabulary; immutable, shareable between threads."""

    spec: StructuredSpec
    grammar: str
    vocab_size: int
    stop_token_ids: tuple[int, ...]
    _prototype: llg.LLMatcher
    _lock: threading.Lock

    def matcher(self) -> Matcher:
        with self._lock:  # the prototype is only read, but deep_copy borrows it mutably in Rust
            ll = self._prototype.deep_copy()
        return Matcher(ll, self.vocab_size, self.stop_token_ids)


class GrammarCompiler:
    """Compiles specs against one tokenizer; thread-safe, LRU-cached by spec.

    Two threads compiling the same new spec may both compile it (compiles run outside the lock, so
    one large schema does not stall every other request); the first to finish is kept.
    """

    def __init__(self, tokenizer: Tokenizer, *, vocab_size: int | None = None, cache_size: int = 256) -> None:
        self.vocab_size = tokenizer.vocab_size if vocab_size is None else vocab_size
        self.words = bitmask_words(self.vocab_size)
        self.stop_token_ids = tuple(sorted(tokenizer.stop_token_ids))
        self._ll_tokenizer = build_ll_tokenizer(tokenizer, self.vocab_size)
        self._cache: OrderedDict[StructuredSpec, CompiledGrammar] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    def compile(self, spec: StructuredSpec) -> CompiledGrammar:
        """Raises ``ValueError`` for a grammar llguidance rejects (``from_openai`` has already checked
        the schemas, so this means a limit was hit, e.g. a schema too large)."""
        with self._lock:
            hit = self._cache.get(spec)
            if hit is not None:
                self._cache.move_to_end(spec)
                return hit
        grammar = spec.grammar()
        prototype = llg.LLMatcher(self._ll_tokenizer, grammar, log_level=0)
        if prototype.is_error():
            raise ValueError(f"grammar: {prototype.get_error().splitlines()[0][:300]}")
        compiled = CompiledGrammar(spec, grammar, self.vocab_size, self.stop_token_ids, prototype, threading.Lock())
        with self._lock:
            compiled = self._cache.setdefault(spec, compiled)
            self._cache.move_to_end(spec)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return compiled

    def matcher(self, spec: StructuredSpec) -> Matcher:
        return self.compile(spec).matcher()

    def cache_info(self) -> dict[str, int]:
        with self._lock:
            return {"size": len(self._cache), "max": self._cache_size}


class Matcher:
    """One request's grammar state. Not thread-safe: one owner (the engine's step thread) at a time.

    Keeps the accepted ids, so a preempted request can be rolled back (``rollback``) or rebuilt from
    scratch (``CompiledGrammar.matcher()`` + ``replay(matcher.tokens)``).
    """

    def __init__(self, ll: llg.LLMatcher, vocab_size: int, stop_token_ids: Sequence[int]) -> None:
        self._ll = ll
        self.vocab_size = vocab_size
        self.words = bitmask_words(vocab_size)
        self.stop_token_ids = tuple(stop_token_ids)
        self._tokens: list[int] = []

    @property
    def tokens(self) -> tuple[int, ...]:
        return tuple(self._tokens)

    def fill_bitmask(self, out_row: np.ndarray) -> None:
        """Write the allowed set for the next token into ``out_row`` (int32, C-contiguous,
        ``bitmask_words(vocab_size)`` words). In an error state only the stop tokens are allowed,
        so the sampler always has a finite logit and the request ends."""
        if out_row.dtype != np.int32 or out_row.shape != (self.words,) or not out_row.flags["C_CONTIGUOUS"]:
            raise ValueError(f"out_row must be a C-contiguous int32 array of shape ({self.words},)")
        if self._ll.is_error():
            _only_stops(out_row, self.stop_token_ids)
            return
        self._ll.unsafe_compute_mask_ptr(out_row.ctypes.data, out_row.nbytes)

    def accept(self, token_id: int) -> bool:
        """Advance by one sampled id. ``False`` (and an error state) if the grammar does not allow it."""
        ok = self._ll.consume_token(int(token_id))
        if ok:
            self._tokens.append(int(token_id))
        return ok

    def replay(self, token_ids: Sequence[int]) -> bool:
        """Accept ids already generated (a re-created matcher after preemption); ``False`` at the first
        one the grammar rejects."""
        return all(self.accept(t) for t in token_ids)

    def rollback(self, n: int) -> None:
        """Undo the last ``n`` accepted ids (speculative rejection, preemption re-fill)."""
        if not 0 <= n <= len(self._tokens):
            raise ValueError(f"rollback({n}): only {len(self._tokens)} tokens accepted")
        if n and not self._ll.rollback(n):
            raise RuntimeError(f"llguidance rollback({n}) failed: {self._ll.get_error()}")
        del self._tokens[len(self._tokens) - n :]

    def is_terminated(self) -> bool:
        """The output is complete: a stop token was accepted, or the grammar allows nothing but a stop
        token. Also true in an error state (see ``error``)."""
        return self._ll.is_stopped()

    def is_accepting(self) -> bool:
        """The output so far is complete (a stop token is allowed now)."""
        return self._ll.is_accepting()

    @property
    def error(self) -> str | None:
        return (self._ll.get_error() or "error") if self._ll.is_error() else None

    def forced_tokens(self) -> list[int]:
        """Ids the grammar forces next whatever the model says (jump-forward; optional to use)."""
        return list(self._ll.compute_ff_tokens())


def _only_stops(row: np.ndarray, stops: Sequence[int]) -> None:
    row[:] = 0
    words = row.view(np.uint32)
    for t in stops:
        words[t >> 5] |= np.uint32(1 << (t & 31))


class BatchFiller:
    """Fills many matchers' rows in parallel (llguidance's thread pool, GIL released throughout).

    ``fill(pairs, bitmask)``: ``pairs`` = (matcher, row index) for the rows that have a grammar;
    other rows are left as they are. One instance per engine; ``fill`` is not reentrant.
    """

    def __init__(self, num_threads: int | None = None) -> None:
        self._executor = llg.LLExecutor(num_threads or max(1, min(8, (os.cpu_count() or 2) - 1)))

    def fill(self, pairs: Sequence[tuple[Matcher, int]], bitmask: np.ndarray) -> None:
        if not pairs:
            return
        if bitmask.dtype != np.int32 or bitmask.ndim != 2 or not bitmask.flags["C_CONTIGUOUS"]:
            raise ValueError("bitmask must be a C-contiguous int32 array [S, W]")
        ok, failed = [], []
        for m, row in pairs:
            if m.words != bitmask.shape[1]:
                raise ValueError(f"bitmask has {bitmask.shape[1]} words per row; the matcher needs {m.words}")
            (failed if m._ll.is_error() else ok).append((m, row))
        if ok:
            self._executor.unsafe_compute_mask_ptr(
                [(m._ll, row) for m, row in ok], bitmask.ctypes.data, bitmask.shape[1] * 4, bitmask.shape[0]
            )
        for m, row in failed:
            _only_stops(bitmask[row], m.stop_token_ids)
