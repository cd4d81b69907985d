"""The one responder: an ``Exchange``'s choices in the shape the client asked for, one JSON body or
server-sent events, for chat (n = 1: one run; n > 1), ``/v1/completions`` and cache hits alike.

In: the ``Exchange`` (admitted, routed, looked up). Out: the ``web.Response`` / prepared
``web.StreamResponse``. Runs on the event loop.

    JSON:  collect every run's events (a tier abandoned mid-answer: its text is dropped, the next starts
           over) -> finish (settle) -> body (tool calls read out of the text) -> after (the cache store)
    SSE:   headers with the first text (they name the serving tier), each choice's role (or echoed
           prompt) -> text as events (a tier abandoned mid-answer: a comment, the next tier continues;
           a tool call is held and sent whole at the end) -> each choice's finish, usage if asked ->
           finish (settle) -> [DONE] -> after (the cache store, or a hit's verification)
    every tier failed: finish (the text a client got from tiers that later failed is paid for), then
           503 before the first event, an error event after it
"""

from __future__ import annotations

from aiohttp import web

from gateway import keys
from gateway.api.schemas import read_answer
from gateway.pipeline.choices import Choices, Shape
from gateway.pipeline.exchange import Exchange
from gateway.pipeline.fallback import Abandoned, ChainFailed, Text
from gateway.pipeline.sse import EventStream
from gateway.security import log_content


async def respond(exchange: Exchange) -> web.StreamResponse:
    shape = exchange.shape()
    choices = exchange.choices(shape)
    return await (write_events if exchange.stream else write_json)(exchange, choices, shape)


async def write_json(exchange: Exchange, choices: Choices, shape: Shape) -> web.Response:
    try:
        async for _ in choices.events():
            pass
    except ChainFailed as exc:
        exchange.finish()
        raise exc.api_error() from None
    exchange.finish()
    runs = choices.runs
    shape.model = runs[0].summary.model or shape.model
    out = []
    for r in runs:
        text = r.prefix + "".join(r.text)
        log_content(exchange.config.log_content, "answer", shape.id, text)
        out.append(shape.choice(r, text, r.summary.finish_reason or "stop", r.take_logprobs()))
    body = shape.body(out, exchange.usage(choices))
    await exchange.after()
    return web.json_response(body, headers=exchange.headers(runs[0]))


async def write_events(exchange: Exchange, choices: Choices, shape: Shape) -> web.StreamResponse:
    runs, events = choices.runs, EventStream(exchange.request, shape)
    held = runs[0].chat.needs == "tools"  # tool calls go out whole, at the end
    try:
        async for run, event in choices.events():
            if isinstance(event, Abandoned) and event.streamed:  # mid-answer: the client is told
                await events.comment(f"tier {event.tier} {event.cause}; {event.to} continues the answer")
            # a text event, not one that only carries log-probabilities (sent with the next text)
            if not isinstance(event, Text) or (event.logprobs and not event.text):
                continue
            if not events.opened:  # headers go out with the first text: they name the serving tier
                shape.model = run.model or shape.model
                await events.open(exchange.headers(run), runs)
            if not held:
                await events.text(run, event.text, run.take_logprobs())
    except ChainFailed as exc:
        exchange.finish()
        if not events.opened:
            raise exc.api_error() from None
        await events.fail(exc.api_error().body())
        return events.response
    if not events.opened:  # every answer empty
        shape.model = runs[0].summary.model or shape.model
        await events.open(exchange.headers(runs[0]), runs)
    for r in runs:
        finish_reason = r.summary.finish_reason or "stop"
        if held:
            content, calls, finish_reason = read_answer("".join(r.text), r.chat.structured, finish_reason)
            if content:
                await events.text(r, content, r.take_logprobs())
            if calls:
                await events.tool_calls(r, calls)
        await events.finish(r, finish_reason, r.take_logprobs() or None)
    if runs[0].chat.include_usage:
        await events.usage(exchange.usage(choices))
    exchange.finish()  # before [DONE]: the client may close (cancelling this handler) once it has it
    await events.done()
    exchange.request[keys.ANSWERED] = events.response.status  # a hang-up from here on is no failure
    for r in runs:
        log_content(exchange.config.log_content, "answer", shape.id, r.prefix + "".join(r.text))
    await exchange.after()
    return events.response
