"""The fallback chain: the first tier of a routing decision's chain that can answer, answers.

In: a ``ChatRequest`` and the router's ``Decision`` (the routed tier, then the fallbacks the caller may
use). Out: typed events, as an async iterator: ``Text`` (a piece of the answer, from which tier),
``Abandoned`` (a tier left, and why), and last ``Finished`` with the ``Summary`` (which tier served,
tokens, what to charge each tier, why tiers were left). Runs on the event loop; each backend steps on
its own thread or in its own process.

    for each tier of the chain:
      down (not ready) or at capacity (in-flight count)  -> skip, recorded as a fallback
      encode -> sampling params for this tier's context -> generate, each output within timeout_s
        finished                   -> done
        BackendError / timeout     -> abandon: what it streamed stays (continue_partial, a stream the
                                      client already has) or is dropped (a JSON answer starts over)
        RequestError / APIError    -> the first tier: the request is bad (400); a fallback tier: it cannot
                                      take this request (e.g. a shorter context), next one
    every tier failed -> ChainFailed (a 503 for the client)

An ``Abandoned`` event with ``streamed`` marks a tier abandoned mid-answer, so the consumer can tell the
client (a stream) or throw away the partial text (a JSON answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, MutableMapping
from dataclasses import dataclass, field

from gateway.api.schemas import ChatRequest
from gateway.backends import Backend, BackendError
from gateway.config.tiers import TierConfig, TiersSpec
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.routing import Decision
from runtime.api import RequestError, SamplingParams
from runtime.serving.errors import APIError, invalid

log = logging.getLogger("gateway")


@dataclass(frozen=True)
class Summary:
    """What the chain produced for one request, once it finished (``Finished``) or failed (``ChainFailed``)."""

    served_by: str | None = None  # the tier that finished the answer (None: none did)
    model: str | None = None  # the model of the tier that finished the answer / was generating last
    replica: str | None = None  # which replica of a replicated tier (``gateway.backends.replicas``) answered
    prompt_tokens: int = 0  # of the serving tier's prompt
    completion_tokens: int = 0  # all tiers together
    finish_reason: str | None = None
    ttft: float | None = None
    fallbacks: tuple[tuple[str, str, str], ...] = ()  # (from, to, cause)
    # The serving tier's text length after each of its tokens (-1 where an output carried several tokens
    # or held text back): how the cache cuts a stored greedy answer to a shorter max_tokens.
    cuts: tuple[int, ...] = ()
    charges: tuple[tuple[str, int, int], ...] = ()  # (tier, prompt_tokens, completion_tokens)
    cached_tokens: int = 0  # of the serving tier's prompt, found in its prefix cache
    dropped_tokens: int = 0  # prompt tokens left out by ``truncation: auto`` (the oldest turns)
    prompt_ids: tuple[int, ...] | None = None  # the serving tier's prompt (for the traffic-shape recorder)


@dataclass(frozen=True)
class Text:
    """A piece of the answer from ``tier`` (``text`` may be empty: an output that carried only
    log-probabilities, its text held back)."""

    text: str
    tier: str
    model: str
    replica: str | None = None
    logprobs: tuple[dict, ...] = ()


@dataclass(frozen=True)
class Abandoned:
    """A tier was left: skipped (down, at capacity) or failed. ``streamed``: it had sent text, which the
    consumer continues (a stream: ``kept`` is what the client keeps and is charged) or throws away."""

    tier: str
    to: str
    cause: str
    streamed: bool = False
    kept: tuple[str, int, int] | None = None  # (tier, prompt_tokens, completion_tokens)


@dataclass(frozen=True)
class Finished:
    summary: Summary


Event = Text | Abandoned | Finished


@dataclass
class _Tally:
    """The chain's own running account of one request (never handed out: ``Summary`` is its snapshot)."""

    served_by: str | None = None
    model: str | None = None
    replica: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    ttft: float | None = None
    fallbacks: list = field(default_factory=list)
    cuts: tuple[int, ...] = ()
    charges: list = field(default_factory=list)
    cached_tokens: int = 0
    dropped_tokens: int = 0
    prompt_ids: list | None = None

    def summary(self) -> Summary:
        return Summary(
            self.served_by,
            self.model,
            self.replica,
            self.prompt_tokens,
            self.completion_tokens,
            self.finish_reason,
            self.ttft,
            tuple(self.fallbacks),
            self.cuts,
            tuple(self.charges),
            self.cached_tokens,
            self.dropped_tokens,
            None if self.prompt_ids is None else tuple(self.prompt_ids),
        )

    def finished(self, tier: str, prompt_tokens: int, completion_tokens: int, finish_reason: str | None) -> None:
        self.served_by, self.prompt_tokens, self.finish_reason = tier, prompt_tokens, finish_reason
        self.completion_tokens += completion_tokens
        self.charges.append((tier, prompt_tokens, completion_tokens))


class ChainFailed(Exception):
    """Every tier of the chain was skipped or failed; ``api_error()`` is what the client gets, ``summary``
    what the tiers produced before they failed (text a streaming client kept is paid for)."""

    def __init__(self, summary: Summary, chain: tuple[str, ...]):
        super().__init__("; ".join(f"{a} {c}" for a, _, c in summary.fallbacks))
        self.summary, self.chain = summary, chain

    def api_error(self) -> APIError:
        return APIError(
            503,
            f"no tier could answer ({self}); tried {', '.join(self.chain)}",
            type="service_unavailable",
            code="tiers_unavailable",
            headers={"Retry-After": "5"},
        )


def context_room(chat: ChatRequest, tier: TierConfig, max_model_len: int, prompt_len: int, already: int) -> bool:
    """Whether a prompt of ``prompt_len`` tokens and the answer's ``max_tokens`` (at least one token) fit."""
    context = min(tier.max_context or max_model_len, max_model_len)
    need = 1 if chat.max_tokens is None else chat.max_tokens - already
    return prompt_len + max(need, 1) <= context


def truncated(messages: tuple[dict, ...]) -> tuple[dict, ...] | None:
    """``messages`` without their oldest turn (the system prompt and the last user turn always stay):
    the first non-system message and, when it is a user turn answered by the assistant, its answer.
    None when nothing more can go."""
    keep_last = len(messages) - 1
    for i, m in enumerate(messages):
        if m["role"] != "system":
            if i >= keep_last:
                return None
            end = i + 2 if i + 1 < keep_last and messages[i + 1]["role"] == "assistant" else i + 1
            return messages[:i] + messages[end:]
    return None


def sampling_params(
    chat: ChatRequest, tier: TierConfig, max_model_len: int, prompt_len: int, already: int, default_max_tokens: int
) -> SamplingParams:
    """The request's sampling settings on this tier: what is left of ``max_tokens`` after the ``already``
    tokens earlier tiers streamed, within the tier's context. 400 ``context_length_exceeded`` when the
    prompt (or prompt + max_tokens) does not fit."""
    context = min(tier.max_context or max_model_len, max_model_len)
    room = context - prompt_len
    if room < 1:
        raise invalid(
            f"the messages are {prompt_len} tokens; the {tier.name!r} tier's context is "
            f"{context} tokens and at least one must be left for the answer",
            "messages",
            "context_length_exceeded",
        )
    if chat.max_tokens is not None and chat.max_tokens - already > room:
        raise invalid(
            f"messages ({prompt_len} tokens) + max_tokens ({chat.max_tokens}) exceed the "
            f"{tier.name!r} tier's context of {context} tokens",
            "max_tokens",
            "context_length_exceeded",
        )
    max_tokens = max(1, (chat.max_tokens or min(default_max_tokens, room + already)) - already)
    try:
        return SamplingParams(
            temperature=chat.temperature,
            top_p=chat.top_p,
            max_tokens=max_tokens,
            stop=chat.stop,
            seed=None if chat.seed is None else chat.seed % 2**32,
            min_tokens=min(max(0, chat.min_tokens - already), max_tokens),
            structured=chat.structured,
            **chat.sampling_fields(),
        )
    except ValueError as exc:
        raise invalid(str(exc)) from None


@dataclass
class _Attempt:
    """One tier's try at the answer: what it streamed before it finished or was abandoned."""

    tier: str
    request_id: str
    prompt_len: int = 0
    texts: list = field(default_factory=list)
    tokens: int = 0


class FallbackChain:
    """Runs one request down a decision's chain. ``inflight`` (tier -> requests in flight through this
    gateway) is shared by every request of the app: it is how ``capacity`` is enforced."""

    def __init__(
        self,
        spec: TiersSpec,
        backends: Mapping[str, Backend],
        inflight: MutableMapping[str, int],
        metrics: GatewayMetrics,
        *,
        default_max_tokens: int,
    ):
        self.spec, self.backends, self.inflight = spec, backends, inflight
        self.metrics = metrics
        self.default_max_tokens = default_max_tokens

    async def run(
        self, chat: ChatRequest, decision: Decision, t0: float, *, continue_partial: bool
    ) -> AsyncIterator[Event]:
        """Yield the events of the first tier that can answer: its ``Text``, an ``Abandoned`` for each tier
        left on the way, then ``Finished`` with the ``Summary``. With ``continue_partial`` the next tier
        continues what an abandoned one streamed (a streaming client already has it), otherwise it starts
        over. ``t0`` is when the request arrived (for time to first token). Raises ``APIError`` for a bad
        request, ``ChainFailed`` when every tier failed."""
        tally = _Tally()
        sent = ""  # text abandoned tiers streamed that the client keeps: the next tier continues it
        for i, name in enumerate(decision.chain):
            nxt = decision.chain[i + 1] if i + 1 < len(decision.chain) else "none"
            cause = self._cannot_take(name)
            if cause is not None:
                yield self._fell_back(tally, name, nxt, cause)
                continue
            attempt = _Attempt(name, f"{decision.tier}-{id(tally):x}-{i}")
            try:
                async with contextlib.aclosing(self._attempt(chat, attempt, tally, sent, t0)) as events:
                    async for event in events:
                        yield event
                yield Finished(tally.summary())
                return
            except (RequestError, APIError) as exc:
                if i == 0:  # the routed tier refuses the request itself: no other tier would do better
                    raise invalid(str(exc), exc.param or "messages") if isinstance(exc, RequestError) else exc from None
                cause = "failed"  # a fallback tier that cannot take this request (e.g. a shorter context)
            except BackendError as exc:
                cause = exc.cause
            except TimeoutError:
                cause = "timeout"
            log.warning("tier %s %s for a request; falling back to %s", name, cause, nxt)
            kept = None
            if continue_partial and attempt.texts:  # the client has this text: keep it, charge it
                sent += "".join(attempt.texts)
                kept = (name, attempt.prompt_len, attempt.tokens)
                tally.completion_tokens += attempt.tokens
                tally.charges.append(kept)
            # streamed: a tier abandoned mid-answer, the consumer continues or starts over
            yield self._fell_back(tally, name, nxt, cause, streamed=bool(attempt.texts), kept=kept)
        raise ChainFailed(tally.summary(), decision.chain)

    def _cannot_take(self, name: str) -> str | None:
        """Why a tier is skipped without trying it (a fallback cause), or None."""
        if not self.backends[name].ready:
            return "unavailable"
        if self.inflight[name] >= self.spec.tier(name).capacity:
            return "overloaded"
        return None

    async def _attempt(
        self, chat: ChatRequest, attempt: _Attempt, tally: _Tally, sent: str, t0: float
    ) -> AsyncIterator[Text]:
        """One tier's text until it finishes; raises when it cannot (the chain falls back). Every step, the
        first token included, must come within the tier's ``timeout_s``."""
        name = attempt.tier
        tier, backend = self.spec.tier(name), self.backends[name]
        want_logprobs = chat.logprobs is not None
        self.inflight[name] += 1
        try:
            prompt_ids = tally.prompt_ids = await self._encode(chat, tier, backend, sent, tally)
            attempt.prompt_len = len(prompt_ids)
            tally.model = tier.model
            params = sampling_params(
                chat, tier, backend.max_model_len, len(prompt_ids), tally.completion_tokens, self.default_max_tokens
            )
            gen = backend.generate(prompt_ids, params, attempt.request_id)
            async with contextlib.aclosing(gen):  # leaving early (fallback, hang-up) aborts the generation
                last = None  # when the previous tokens arrived
                cuts, chars = [], 0
                while True:
                    out = await _next(gen, tier)
                    if out.token_ids:
                        last = self._tokens_arrived(name, len(out.token_ids), last, tally, t0)
                    attempt.tokens += len(out.token_ids)
                    tally.replica = out.replica or tally.replica
                    chars += len(out.text)
                    # A boundary is known when one token arrived with text: the detokenizer then held
                    # nothing back (a stop string may: those requests get no cuts).
                    known = len(out.token_ids) == 1 and bool(out.text) and not chat.stop
                    cuts.extend([-1] * (len(out.token_ids) - 1) + [chars if known else -1] if out.token_ids else [])
                    logprobs = tuple(out.logprobs) if out.logprobs and want_logprobs else ()
                    if out.text:
                        attempt.texts.append(out.text)
                    if out.text or logprobs:
                        yield Text(out.text, name, tier.model, tally.replica, logprobs)
                    if out.finished:
                        tally.cuts = tuple(cuts[: out.completion_tokens])
                        if out.metrics is not None:
                            tally.cached_tokens = out.metrics.cached_tokens
                            if out.metrics.queue_s is not None:
                                self.metrics.queue.labels(name).observe(out.metrics.queue_s)
                        tally.finished(name, attempt.prompt_len, out.completion_tokens, out.finish_reason)
                        return
        finally:
            self.inflight[name] -= 1

    async def _encode(
        self, chat: ChatRequest, tier: TierConfig, backend: Backend, sent: str, tally: _Tally
    ) -> list[int]:
        """The prompt's token ids on this tier (after the text earlier tiers streamed, ``sent``). With
        ``truncation: auto`` (the request's, else the tier's), a conversation too long for the context
        loses its oldest turns until it fits; ``tally.dropped_tokens`` counts what went."""
        if isinstance(chat.prompt, tuple):  # token ids (/v1/completions); a fallback tier starts them over
            return list(chat.prompt)
        what = chat.prompt if chat.prompt is not None else chat.messages
        async with asyncio.timeout(tier.timeout_s):
            ids = await backend.encode(what, sent)
        if (chat.truncation or tier.truncation) != "auto" or chat.prompt is not None:
            return ids
        full, messages = len(ids), chat.messages
        already = tally.completion_tokens
        while not context_room(chat, tier, backend.max_model_len, len(ids), already):
            messages = truncated(messages)
            if messages is None:  # only the system prompt and the last turn are left: sampling_params says why
                break
            async with asyncio.timeout(tier.timeout_s):
                ids = await backend.encode(messages, sent)
        tally.dropped_tokens = full - len(ids)
        return ids

    def _tokens_arrived(self, tier: str, n: int, last: float | None, tally: _Tally, t0: float) -> float:
        """Inter-token latency (an output may carry several tokens: the gap is shared among them) and
        time to first token; returns now."""
        now = time.perf_counter()
        if last is not None:
            gap = (now - last) / n
            for _ in range(n):
                self.metrics.itl.labels(tier).observe(gap)
        if tally.ttft is None:
            tally.ttft = now - t0
        return now

    def _fell_back(self, tally: _Tally, tier: str, to: str, cause: str, **how) -> Abandoned:
        tally.fallbacks.append((tier, to, cause))
        self.metrics.fallbacks.labels(tier, to, cause).inc()
        return Abandoned(tier, to, cause, **how)


async def _next(gen: AsyncIterator, tier: TierConfig):
    # asyncio.timeout, not wait_for: on Python 3.11, a wait_for whose inner call completes in the same loop
    # turn as the caller is cancelled returns the result and drops the cancellation (fixed in 3.12), so a
    # cancelled consumer of a fast stream (a client gone, a verifier closing) could run on and never stop.
    try:
        async with asyncio.timeout(tier.timeout_s):
            return await anext(gen)
    except StopAsyncIteration:  # a backend must end with a finished output; ending without one is a failure
        raise BackendError("failed", f"tier {tier.name!r} ended its answer without finishing") from None
