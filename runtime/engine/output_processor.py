"""From sampled token ids to what a caller reads: per request, the incremental detokenizer, the stop strings
and stop tokens, the grammar's end, log-probabilities as OpenAI entries, usage, and on the final output the
request's measured times (``RequestMetrics``). It owns each live request's ``RequestState``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from runtime.api import RequestMetrics, RequestOutput
from runtime.core.request import Request
from runtime.core.stopping import StopStringMatcher
from runtime.loading.tokenizer import IncrementalDetokenizer, Tokenizer


@dataclass
class RequestState:
    request: Request
    detok: IncrementalDetokenizer
    matcher: StopStringMatcher
    stop_ids: frozenset[int]
    cached_tokens: int | None = None  # prompt tokens found in the prefix cache when first scheduled


class OutputProcessor:
    """``end(request_id)`` is called when a stop string or the grammar ends a request the scheduler still
    runs (the engine frees its blocks there)."""

    def __init__(self, tokenizer: Tokenizer, end: Callable[[str], object]):
        self.tokenizer, self.end = tokenizer, end
        self.states: dict[str, RequestState] = {}

    def scheduled(self, new_request_ids, num_computed_tokens: dict[str, int]) -> None:
        """A step scheduled these requests for the first time: the prompt tokens the prefix cache held."""
        for rid in new_request_ids:
            state = self.states.get(rid)
            if state is not None and state.cached_tokens is None:
                state.cached_tokens = num_computed_tokens[rid]

    def add(self, request: Request) -> RequestState:
        sp = request.sampling_params
        state = self.states[request.request_id] = RequestState(
            request,
            IncrementalDetokenizer(self.tokenizer),
            StopStringMatcher(sp.stop),
            request.eos_token_ids | frozenset(sp.stop_token_ids),
        )
        return state

    def output(self, state: RequestState, new_ids, finish_reason: str | None, logprobs=None) -> RequestOutput:
        """The output of this step's ``new_ids`` for one request; a finished one's state is dropped."""
        req = state.request
        text = ""
        unused = 0  # tokens of this step after a stop string (several with speculative decoding)
        entries = None if req.sampling_params.logprobs is None else []
        for i, tok in enumerate(new_ids):
            if state.matcher.stopped:
                unused = len(new_ids) - i
                new_ids = new_ids[:i]
                break
            if finish_reason == "stop" and tok in state.stop_ids:
                continue  # the end token is not part of the answer
            text += state.matcher.feed(state.detok.add(tok))
            if entries is not None and logprobs is not None:  # one token a step: no drafts with logprobs
                entries.append(self.logprob_entry(tok, *logprobs))
            if req.grammar is not None:
                req.grammar.accept(tok)  # the mask allowed only what it accepts
        grammar_done = req.grammar is not None and req.grammar.is_terminated()
        if (state.matcher.stopped or grammar_done) and finish_reason is None:
            finish_reason = "stop"  # a stop string, or the grammar's end: end it here and free its blocks
            self.end(req.request_id)
        if finish_reason is not None:
            if not state.matcher.stopped:
                text += state.matcher.feed(state.detok.flush()) + state.matcher.flush()
            self.states.pop(req.request_id, None)
        completion = req.num_output_tokens - unused
        if finish_reason == "stop" and req.output_token_ids and req.output_token_ids[-1] in state.stop_ids:
            completion -= 1
        return RequestOutput(
            req.request_id,
            text,
            list(new_ids),
            finish_reason is not None,
            finish_reason,
            req.num_prompt_tokens,
            completion,
            None if finish_reason is None else _metrics(state),
            logprobs=entries,
        )

    def logprob_entry(self, token: int, logprob: float, top_ids: list[int], top_logprobs: list[float]) -> dict:
        """OpenAI's chat logprobs entry of one generated token."""

        def one(t: int, lp: float) -> dict:
            raw = self.tokenizer.token_bytes(t) if t < self.tokenizer.vocab_size else b""
            return {"token": raw.decode("utf-8", errors="replace"), "logprob": lp, "bytes": list(raw)}

        return {**one(token, logprob), "top_logprobs": [one(t, lp) for t, lp in zip(top_ids, top_logprobs)]}


def _metrics(state: RequestState) -> RequestMetrics:
    req, now = state.request, time.monotonic()
    return RequestMetrics(
        queue_s=req.queue_time,
        ttft_s=req.time_to_first_token,
        tpot_s=req.time_per_output_token if req.finish_time else _tpot(req, now),
        e2e_s=now - req.arrival_time,
        num_preemptions=req.num_preemptions,
        cached_tokens=state.cached_tokens or 0,
    )


def _tpot(req: Request, now: float) -> float | None:
    if req.first_token_time is None or req.num_output_tokens < 2:
        return None
    return (now - req.first_token_time) / (req.num_output_tokens - 1)
