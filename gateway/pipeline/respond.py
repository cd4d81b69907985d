"""The answer in the shape the client asked for: one JSON body, or server-sent events.

In: the request, the ``ChatRequest``, the ``Completion`` and the headers gathered so far; then either a
cache hit's stored entry, or a ``Miss``: the fallback chain's text deltas and its ``Answer``, how to
settle the bill, and how to store the finished answer. Out: the ``web.Response`` / prepared
``web.StreamResponse``. Runs on the event loop.

    hit:         JSON, or SSE replayed a few words per event: the same shape as a miss
    miss, JSON:  collect the deltas (a tier abandoned mid-answer: start over) -> settle -> store -> body
    miss, SSE:   headers with the first delta (they name the serving tier) -> deltas as events (a tier
                 abandoned mid-answer: a comment, the next tier continues) -> settle -> finish, usage,
                 [DONE] -> store
    every tier failed: 503 before the first event, an error event after it

The bill is settled on every path that ran the chain, a failed one too: the text a client got from
tiers that later failed is paid for.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web

from gateway import keys
from gateway.api.schemas import ChatRequest, Completion, read_answer
from gateway.pipeline.fallback import Answer, ChainFailed
from gateway.pipeline.sse import EventStream, split_for_stream
from gateway.security import log_content

if TYPE_CHECKING:
    from gateway.cache import Served


@dataclass
class Miss:
    """What answering a cache miss takes from the other steps, bound to one request."""

    deltas: AsyncIterator[str | None]  # the fallback chain's (``FallbackChain.run``)
    answer: Answer  # filled in by the chain as the deltas come
    settle: Callable[[], float]  # charge the caller (and observe latency); returns the cost
    store: Callable[[str, Answer], Awaitable[None]] | None = None  # cache the finished answer


@dataclass
class Reply:
    request: web.Request
    chat: ChatRequest
    completion: Completion
    headers: dict[str, str]
    log_content: bool = False  # log the answer (the operator opted in)

    async def hit(
        self, served: Served, prompt_tokens: int, observe: Callable[[], None], saved_usd: float = 0.0
    ) -> web.StreamResponse:
        """Replay a stored answer; ``observe`` runs once the client has all of it (its latency). Its usage
        counts the whole prompt as cached, and says what the answer would have cost (``saved_usd``)."""
        p, c = prompt_tokens, served.completion_tokens
        extras = {"cached_tokens": p, "cost_saved_usd": round(saved_usd, 9)}
        log_content(self.log_content, "answer (cache hit)", self.completion.id, served.answer)
        if not self.chat.stream:
            observe()
            return web.json_response(
                self.completion.response(served.answer, served.finish_reason, p, c, extras=extras), headers=self.headers
            )
        events = EventStream(self.request, self.completion)
        await events.open(self.headers)
        for piece in split_for_stream(served.answer):
            await events.text(piece)
        await events.finish(served.finish_reason, (p, c, extras) if self.chat.include_usage else None)
        observe()  # before [DONE]: the client may close (cancelling this handler) once it has it
        await events.done()
        return events.response

    async def whole(self, miss: Miss) -> web.Response:
        text: list[str] = []
        try:
            async with contextlib.aclosing(miss.deltas) as deltas:
                async for delta in deltas:
                    if delta is None:  # an abandoned tier's partial text is not part of this answer
                        text.clear()
                        miss.answer.take_logprobs()
                    else:
                        text.append(delta)
        except ChainFailed as exc:
            miss.settle()
            raise exc.api_error() from None
        answer = miss.answer
        self.headers.update(answer.headers(miss.settle()))
        self.completion.model = answer.model or self.completion.model
        body = "".join(text)
        log_content(self.log_content, "answer", self.completion.id, body)
        if miss.store is not None:
            await miss.store(body, answer)
        return web.json_response(
            self.completion.response(
                body,
                answer.finish_reason,
                answer.prompt_tokens,
                answer.completion_tokens,
                answer.take_logprobs(),
                answer.usage_extras(),
                self.chat.spec,
            ),
            headers=self.headers,
        )

    async def stream(self, miss: Miss, shield: Callable[[Awaitable[None]], Awaitable[None]]) -> web.StreamResponse:
        """``shield`` runs the cache store to its end even if this handler is cancelled (a streaming
        client closes as soon as it has read ``[DONE]``): ``GatewayState.shielded``."""
        answer, events, text = miss.answer, EventStream(self.request, self.completion), []
        spec = self.chat.spec
        calls_held = spec is not None and spec.tool_mode is not None  # tool calls go out whole, at the end
        try:
            async with contextlib.aclosing(miss.deltas) as deltas:
                async for delta in deltas:
                    if delta is None:  # mid-answer: the next tier continues the text the client has
                        frm, to, cause = answer.fallbacks[-1]
                        await events.comment(f"tier {frm} {cause}; {to} continues the answer")
                        continue
                    if not events.opened:  # headers go out with the first text: they name the serving tier
                        self.completion.model = answer.model or self.completion.model
                        await events.open({**self.headers, **answer.headers()})
                    text.append(delta)
                    if not calls_held:
                        await events.text(delta, answer.take_logprobs())
        except ChainFailed as exc:
            miss.settle()
            if not events.opened:
                raise exc.api_error() from None
            await events.fail(exc.api_error().body())
            return events.response
        if not events.opened:  # an empty answer
            self.completion.model = answer.model or self.completion.model
            await events.open({**self.headers, **answer.headers()})
        miss.settle()
        finish_reason = answer.finish_reason
        if calls_held:
            content, calls, finish_reason = read_answer("".join(text), spec, finish_reason)
            if content:
                await events.text(content, answer.take_logprobs())
            if calls:
                await events.tool_calls(calls)
        await events.finish(
            finish_reason,
            (answer.prompt_tokens, answer.completion_tokens, answer.usage_extras())
            if self.chat.include_usage
            else None,
            answer.take_logprobs() or None,
        )
        await events.done()
        self.request[keys.ANSWERED] = events.response.status  # a hang-up from here on is no failure
        log_content(self.log_content, "answer", self.completion.id, "".join(text))
        if miss.store is not None:
            await shield(miss.store("".join(text), answer))
        return events.response
