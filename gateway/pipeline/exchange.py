"""One request from admission to its end: the ``Exchange``.

In: the HTTP request and its ``Outcome``. Built by ``Exchange.admit`` (admission: who is calling, may
they, what are they asking; routing: which tier, why; the budget check), it then holds everything that
one request comes to, as typed fields:

    caller, chats, decision ............ admission and routing
    lookup (kind, similarity) .......... the cache step (chat with n = 1 only); a hit's saving
    runs ............................... the choices as they are answered (``gateway.pipeline.choices``)
    cost ............................... once finished

``choices()`` is where the runs' events come from (each run's fallback chain, or a hit replayed);
``headers(run)`` writes the response headers from the fields (nothing is read back out of a header);
``finish()`` settles the request once, whatever its end (a failed chain too): billing, the recorder, the
repeat counter and the outcome metrics each once, and the cache store (a miss) started in the
background; ``after()`` waits for that store, or hands a hit to live verification. Runs on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from aiohttp import web

from gateway import keys
from gateway.accounting.usage import Caller
from gateway.api.schemas import ChatRequest, Usage, new_completion_id
from gateway.config.gateway import GatewayConfig
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.admission import Admission
from gateway.pipeline.billing import Billing
from gateway.pipeline.cache_step import CacheLookup, CacheStep
from gateway.pipeline.choices import Choices, Run, Shape, runs_of
from gateway.pipeline.fallback import Abandoned, Event, FallbackChain, Finished, Summary, Text
from gateway.pipeline.outcome import Outcome
from gateway.pipeline.routing import Decision
from gateway.pipeline.sse import split_for_stream
from gateway.security import log_content


def fallback_chain(state: keys.GatewayState, config: GatewayConfig, metrics: GatewayMetrics) -> FallbackChain:
    """The app's fallback chain (``metrics``: where its latencies are counted)."""
    return FallbackChain(
        state.router.spec, state.backends, state.inflight, metrics, default_max_tokens=config.limits.default_max_tokens
    )


@dataclass
class Exchange:
    request: web.Request
    outcome: Outcome
    caller: Caller
    chats: list[ChatRequest]  # one per prompt (/v1/completions may send several), the tier's defaults in
    decision: Decision
    text_api: bool  # /v1/completions
    state: keys.GatewayState
    config: GatewayConfig
    metrics: GatewayMetrics
    lookup: CacheLookup | None = None  # None: the cache step did not run (n > 1, /v1/completions)
    runs: list[Run] = field(default_factory=list)
    cost: float | None = None  # a miss, once finished
    _stored: asyncio.Task | None = field(default=None, init=False, repr=False)  # the cache store, once started

    @classmethod
    async def admit(cls, request: web.Request, outcome: Outcome, *, text_api: bool) -> Exchange:
        """Admission (key, rate, body), routing (on the first prompt), the budget check, then the routed
        tier's sampling defaults in the fields the client left out (fallback tiers keep them)."""
        config, state, metrics = request.app[keys.CONFIG], request.app[keys.STATE], request.app[keys.METRICS]
        admission = Admission(state.ledger, metrics, max_messages=config.limits.max_messages)
        if text_api:
            caller, chats = await admission.admit_completions(request)
        else:
            caller, chat = await admission.admit(request)
            chats = [chat]
        decision = state.router.route(chats[0], caller.policy, state.ledger.budget_left(caller))
        outcome.tier = decision.tier  # a budget refusal is counted under the tier it would have used
        admission.check_budget(caller, chats[0], decision)
        defaults = state.router.spec.tier(decision.tier).sampling_defaults
        chats = [c.with_defaults(defaults) for c in chats]
        return cls(request, outcome, caller, chats, decision, text_api, state, config, metrics)

    @property
    def tier(self) -> str:
        return self.decision.tier

    @property
    def stream(self) -> bool:
        return self.chats[0].stream

    @property
    def hit(self) -> bool:
        return self.lookup is not None and self.lookup.hit

    async def look_up(self) -> None:
        """The cache step, in the request's scope (tenant, routed tier, system prompt, history, parameters)."""
        step = CacheStep(self.state.cache, self.metrics, default_max_tokens=self.config.limits.default_max_tokens)
        self.lookup = await step.lookup(self.request.headers, self.caller.tenant, self.chats[0], self.tier)

    @property
    def saved_usd(self) -> float:
        """A hit: what the answer would have cost at the routed tier's prices."""
        return self._billing().saving(self.tier, *self.lookup.tokens) if self.hit else 0.0

    def shape(self) -> Shape:
        """``model`` in the answer: the model that answered (the routed tier's until one does)."""
        prefix = "cmpl" if self.text_api else "chatcmpl"
        return Shape(self.text_api, new_completion_id(prefix), self.state.router.spec.tier(self.tier).model)

    def choices(self, shape: Shape) -> Choices:
        """The runs, and where their events come from: a hit's stored answer, or each run's fallback chain."""
        for c in self.chats:  # off by default
            log_content(
                self.config.log_content, "prompt" if self.text_api else "messages", shape.id, c.prompt or c.messages
            )
        if self.hit:
            self.runs = [Run(0, self.chats[0])]
            return Choices(self.runs, lambda run: self._replay())
        chain = fallback_chain(self.state, self.config, self.metrics)
        self.runs = runs_of(self.chats, text_api=self.text_api)
        t0 = self.outcome.t0
        return Choices(
            self.runs, lambda run: chain.run(run.chat, self.decision, t0, continue_partial=run.continue_partial)
        )

    async def _replay(self) -> AsyncIterator[Event]:
        """A stored answer as a live one's events: a few words per piece, then its summary."""
        served, model = self.lookup.served, self.state.router.spec.tier(self.tier).model
        for piece in split_for_stream(served.answer):
            yield Text(piece, self.tier, model)
        p, c = self.lookup.tokens
        yield Finished(Summary(self.tier, model, None, p, c, served.finish_reason, cached_tokens=p))

    def headers(self, run: Run) -> dict[str, str]:
        """The route, the cache outcome, who served (``run``'s tiers) and the cost, from the typed fields."""
        h = {"x-route-tier": self.tier, "x-route-reason": self.decision.reason}
        h.update(self.lookup.headers() if self.lookup is not None else {"x-cache": "bypass"})
        h.update(run.served_headers(self.cost))
        if self.hit:
            h.update({"x-cost-usd": "0", "x-cost-saved-usd": f"{self.saved_usd:.9f}"})
        return h

    def usage(self, choices: Choices) -> Usage:
        """A hit counts its whole prompt as cached and says what the answer would have cost."""
        return choices.usage({"cost_saved_usd": round(self.saved_usd, 9)} if self.hit else None)

    def finish(self) -> None:
        """Settle the request, once: billing, the recorder, the repeat counter, the outcome metrics; and the
        cache store of a finished miss, started in the background (``after`` waits for it)."""
        first, billing = self.runs[0], self._billing()
        if self.hit:
            billing.credit_hit(self.caller, self.tier, self.saved_usd, first.completion_tokens)
            self._record(first, self.tier, "hit", None)
            self.outcome.observe_hit(self.tier)
            return
        ttft = first.summary.ttft if first.summary is not None else None
        if ttft is None and first.started is not None:  # a run cut short: when its first text came
            ttft = first.started - self.outcome.t0
        self.outcome.observe_miss(first.served_by or self.tier, ttft)
        asked = None  # the repeat digest of a question (chat with n = 1), numbered by the recorder
        if self.lookup is not None:
            chat = self.chats[0]
            asked = self.state.repeats.key(self.caller.tenant, self.tier, list(chat.messages), chat.answer_params())
        store = self.lookup.store if self.lookup is not None else None
        for run in self.runs:
            self._record(run, run.served_by or self.tier, "bypass" if store is None else "miss", asked)
        charges = [c for run in self.runs for c in run.charges]
        self.cost = billing.charge(self.caller, charges, fallback=any(r.fallbacks for r in self.runs))
        if asked is not None and self.state.repeats.seen(asked):
            served = first.served_by or self.tier
            self.metrics.repeated.labels(served).inc()
            self.metrics.repeated_cost.labels(served).inc(self.cost)
        if store is not None and first.finished:
            self._stored = self.state.in_background(store("".join(first.text), first.summary))

    async def after(self) -> None:
        """After the answer is complete: wait for the cache store (it finishes even if this handler is
        cancelled: a streaming client closes as soon as it has read ``[DONE]``), or hand a hit to live
        verification (off the request's path)."""
        if self.hit:
            self.lookup.verify()
        elif self._stored is not None:
            await asyncio.shield(self._stored)

    def _billing(self) -> Billing:
        return Billing(self.state.ledger, self.state.router.spec, self.metrics)

    def _record(self, run: Run, tier: str, cache: str, asked: bytes | None) -> None:
        """One run's shape to the recorder, when recording (``gateway.advise.recording``)."""
        if self.state.recorder is None:
            return
        summary = run.summary or Summary()
        self.state.recorder.record(
            lookup=None if self.lookup is None else self.lookup.kind,
            similarity=None if self.lookup is None else self.lookup.similarity,
            asked=asked,
            arrived=self.outcome.t0,
            tier=tier,
            prompt_tokens=summary.prompt_tokens,
            output_tokens=run.completion_tokens,
            prompt_ids=None if summary.prompt_ids is None else list(summary.prompt_ids),
            cache=cache,
            stream=run.chat.stream,
            max_tokens=run.chat.max_tokens,
        )


async def answer_alone(chain: FallbackChain, chat: ChatRequest, tier: str) -> str:
    """A fresh answer of ``tier`` alone (no fallback): live cache verification's second opinion."""
    parts: list[str] = []
    async for event in chain.run(chat, Decision(tier, (tier,), "verify"), time.perf_counter(), continue_partial=False):
        if isinstance(event, Abandoned) and event.streamed:
            parts.clear()
        elif isinstance(event, Text):
            parts.append(event.text)
    return "".join(parts)
