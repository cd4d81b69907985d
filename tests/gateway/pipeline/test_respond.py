"""Replies: a hit and a miss in the same shapes, JSON and SSE, from a scripted fallback chain."""

from __future__ import annotations

import json

from gateway import keys
from gateway.api.schemas import Completion
from gateway.cache.store import Served
from gateway.pipeline.fallback import Answer, ChainFailed
from gateway.pipeline.respond import Miss, Reply
from tests.gateway.pipeline.fakes import call, chat, events

ENTRY = Served("Bees make honey from nectar.", "stop", 6)


async def chain(answer, items, *, fail=False):
    """What ``FallbackChain.run`` yields: text from big; ``None``: big was abandoned, lil goes on."""
    answer.current = "big"
    for item in items:
        if item is None:
            answer.fallbacks.append(("big", "lil", "failed"))
            answer.current = "lil"
        yield item
    if fail:
        raise ChainFailed(answer.fallbacks + [(answer.current, "none", "failed")], ("big", "lil"))
    answer.finished(answer.current, 5, 2, "stop")


class Spy:
    """Records settle / store / shield / observe calls in order."""

    def __init__(self):
        self.calls, self.stored = [], []

    def settle(self):
        self.calls.append("settle")
        return 0.25

    async def store(self, text, answer):
        self.stored.append((text, answer.finish_reason))

    async def shield(self, coro):
        self.calls.append("shield")
        await coro

    def observe(self):
        self.calls.append("observe")


def reply(request, stream=False, include_usage=False):
    kw = {"stream": True, "stream_options": {"include_usage": include_usage}} if stream else {}
    return Reply(request, chat(**kw), Completion("chatcmpl-1", "big"), {"x-route-tier": "big"})


def miss(spy, items, fail=False):
    answer = Answer()
    return Miss(chain(answer, items, fail=fail), answer, spy.settle, spy.store)


def test_a_hit_as_json():
    spy = Spy()

    async def handler(request):
        return await reply(request).hit(ENTRY, 9, spy.observe)

    status, headers, body = call(handler)
    out = json.loads(body)
    assert status == 200 and headers["x-route-tier"] == "big" and spy.calls == ["observe"]
    assert out["choices"][0]["message"]["content"] == ENTRY.answer and out["usage"]["completion_tokens"] == 6


def test_a_hit_as_events_like_a_live_answer():
    spy = Spy()

    async def handler(request):
        return await reply(request, stream=True, include_usage=True).hit(ENTRY, 9, spy.observe)

    status, headers, body = call(handler)
    ev = events(body)
    assert status == 200 and headers["Content-Type"] == "text/event-stream" and spy.calls == ["observe"]
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in ev[1:-3])
    assert text == ENTRY.answer and len(ev[1:-3]) == 2  # a few words per event
    assert ev[-3]["choices"][0]["finish_reason"] == "stop" and ev[-2]["usage"]["prompt_tokens"] == 9
    assert ev[-1] == "[DONE]"


def test_a_miss_as_json_drops_an_abandoned_tiers_text():
    spy = Spy()

    async def handler(request):
        return await reply(request).whole(miss(spy, ["Hon", None, "Hon", "ey."]))

    status, headers, body = call(handler)
    out = json.loads(body)
    assert status == 200 and out["choices"][0]["message"]["content"] == "Honey."
    assert headers["x-served-by"] == "lil" and headers["x-fallback"] == "big->lil (failed)"
    assert headers["x-cost-usd"] == "0.250000000" and spy.calls == ["settle"] and spy.stored == [("Honey.", "stop")]


def test_a_miss_as_events_keeps_the_text_and_says_who_continues():
    spy, seen = Spy(), {}

    async def handler(request):
        response = await reply(request, stream=True, include_usage=True).stream(
            miss(spy, ["Hon", None, "ey."]), spy.shield
        )
        seen["answered"] = request.get(keys.ANSWERED)
        return response

    status, headers, body = call(handler)
    ev = events(body)
    assert status == 200 and headers["x-served-by"] == "big"  # the headers went out with big's first text
    assert ev[1]["choices"][0]["delta"]["content"] == "Hon" and ev[2] == ": tier big failed; lil continues the answer"
    assert ev[3]["choices"][0]["delta"]["content"] == "ey." and ev[4]["choices"][0]["finish_reason"] == "stop"
    assert ev[5]["usage"]["total_tokens"] == 7 and ev[6] == "[DONE]"
    assert spy.calls == ["settle", "shield"] and spy.stored == [("Honey.", "stop")] and seen["answered"] == 200


def test_an_empty_streamed_answer_still_opens_and_finishes():
    spy = Spy()

    async def handler(request):
        return await reply(request, stream=True).stream(miss(spy, []), spy.shield)

    status, _, body = call(handler)
    ev = events(body)
    assert status == 200 and len(ev) == 3 and ev[1]["choices"][0]["finish_reason"] == "stop" and ev[2] == "[DONE]"


def test_every_tier_failing_is_503_before_the_first_event_and_an_error_event_after():
    for stream in (False, True):
        spy = Spy()

        async def handler(request, stream=stream, spy=spy):
            r = reply(request, stream=stream)
            failing = miss(spy, [], fail=True)
            return await (r.stream(failing, spy.shield) if stream else r.whole(failing))

        status, headers, body = call(handler)
        err = json.loads(body)["error"]
        assert status == 503 and err["code"] == "tiers_unavailable" and headers["Retry-After"] == "5"
        assert spy.calls == ["settle"] and spy.stored == []  # a failed request is billed, never stored
    spy = Spy()

    async def handler(request):
        return await reply(request, stream=True).stream(miss(spy, ["Hon"], fail=True), spy.shield)

    status, _, body = call(handler)
    ev = events(body)
    assert status == 200 and ev[1]["choices"][0]["delta"]["content"] == "Hon"
    assert ev[2]["error"]["code"] == "tiers_unavailable" and ev[3] == "[DONE]" and spy.calls == ["settle"]
