"""Admission: who is calling, may they call now, and what are they asking.

In: the HTTP request. Out: the ``Caller`` and the parsed ``ChatRequest``, or an ``APIError`` (401 an
unknown or missing key, 429 a rate or budget limit, 400/413/415 a malformed body) that the error
middleware turns into an OpenAI error body. Runs on the event loop and reads only the in-process
ledger: no network on the request path.

The cheapest refusal comes first:

    identify (a header) -> rate limit -> read + validate the body -> an anonymous caller that names
    a ``user`` becomes that user (its own cache tenant)
        ... the router runs here: it reads the budget left (a nearly spent key is held to the default
        tier), and an unknown model (404) or a tier the key may not use (403) is refused before money ...
    -> budget check -> the request is counted under its route

The rate limit is checked before the body is read, so a caller over its limit costs no JSON parsing.
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from gateway.accounting.usage import Caller, UsageLedger
from gateway.api.schemas import ChatRequest, parse_chat_request, parse_completion_request
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.routing import AUTO, Decision
from runtime.serving.errors import APIError, read_json


class Admission:
    def __init__(self, ledger: UsageLedger, metrics: GatewayMetrics, *, max_messages: int):
        self.ledger, self.metrics, self.max_messages = ledger, metrics, max_messages

    async def admit(self, request: web.Request) -> tuple[Caller, ChatRequest]:
        caller = self.ledger.identify(request)
        self._within(self.ledger.check_rate, caller, "rate")
        chat = parse_chat_request(await read_json(request), max_messages=self.max_messages)
        if chat.user and caller.tenant == "anonymous":
            caller = self.ledger.identify(request, chat.user)
        return caller, chat

    async def admit_completions(self, request: web.Request) -> tuple[Caller, list[ChatRequest]]:
        """``admit`` for ``POST /v1/completions``: one ``ChatRequest`` per prompt."""
        caller = self.ledger.identify(request)
        self._within(self.ledger.check_rate, caller, "rate")
        chats = parse_completion_request(await read_json(request))
        if chats[0].user and caller.tenant == "anonymous":
            caller = self.ledger.identify(request, chats[0].user)
        return caller, chats

    def check_budget(self, caller: Caller, chat: ChatRequest, decision: Decision) -> None:
        """After routing: 429 when the caller's budget is spent; a request let through is counted
        under the tier it was routed to, and how (``auto`` or an explicit model)."""
        self._within(self.ledger.check_budget, caller, "budget")
        self.metrics.routes.labels(decision.tier, "auto" if chat.model == AUTO else "explicit").inc()

    def _within(self, check: Callable[[Caller], None], caller: Caller, limit: str) -> None:
        try:
            check(caller)
        except APIError:
            self.metrics.rate_limited.labels(limit).inc()
            raise
