"""The one responder: a hit and a miss in the same shapes, JSON and SSE, n = 1 and n > 1, chat and text,
each an ``Exchange`` over scripted backends, settled once."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from gateway import keys
from gateway.cache.store import Served
from gateway.pipeline.cache_step import CacheLookup
from gateway.pipeline.respond import respond
from tests.gateway.pipeline.fakes import FakeBackend, FakeRecorder, call, chat, events, exchange, sample

ENTRY = Served("Bees make honey from nectar.", "stop", 6)
STREAM = {"stream": True, "stream_options": {"include_usage": True}}


class Spy:
    """The cache side of a lookup: what was stored, whether a hit was handed to verification."""

    def __init__(self):
        self.stored, self.verified = [], 0

    async def store(self, text, summary):
        self.stored.append((text, summary.finish_reason))

    def verify(self):
        self.verified += 1
        return True

    def miss(self):
        return CacheLookup("miss", 0.5, store=self.store)

    def hit(self):
        entry = SimpleNamespace(usage={"prompt_tokens": 9})
        return CacheLookup("exact", 1.0, entry=entry, served=ENTRY, verify=self.verify)


def serve(big, lil=None, *, lookup=None, seen=None, chats=None, text_api=False, recorder=None, **kw):
    """(status, headers, body) of one exchange; ``seen`` gets the exchange."""

    async def handler(request):
        ex = exchange(
            request,
            chats or [chat(**kw)],
            {"big": big, "lil": lil or FakeBackend()},
            lookup=lookup,
            text_api=text_api,
            recorder=recorder,
        )
        if seen is not None:
            seen["exchange"] = ex
        response = await respond(ex)
        if seen is not None:
            seen["answered"] = request.get(keys.ANSWERED)
        return response

    return call(handler)


def test_a_hit_as_json():
    spy, seen = Spy(), {}
    status, headers, body = serve(FakeBackend(), lookup=spy.hit(), seen=seen)
    out = json.loads(body)
    assert status == 200 and headers["x-route-tier"] == "big" and headers["x-served-by"] == "big"
    assert (headers["x-cache"], headers["x-cache-lookup"], headers["x-cache-similarity"]) == ("hit", "exact", "1.0000")
    # big: (9 x 3 + 6 x 15) / 1e6 saved
    assert headers["x-cost-usd"] == "0" and headers["x-cost-saved-usd"] == "0.000117000" and spy.verified == 1
    assert out["choices"][0]["message"]["content"] == ENTRY.answer and out["usage"]["completion_tokens"] == 6
    assert out["usage"]["prompt_tokens_details"] == {"cached_tokens": 9} and out["usage"][
        "cost_saved_usd"
    ] == pytest.approx(117e-6)
    ex = seen["exchange"]
    u = ex.state.ledger.usage(ex.caller)
    assert u["cache_hits"] == 1 and u["cost_usd"] == 0 and ex.state.backends["big"].params == []  # no model ran
    assert sample(ex.metrics, "time_to_first_token_seconds_count", model="big", cache="hit") == 1


def test_a_hit_as_events_like_a_live_answer():
    spy = Spy()
    status, headers, body = serve(FakeBackend(), lookup=spy.hit(), **STREAM)
    ev = events(body)
    assert status == 200 and headers["Content-Type"] == "text/event-stream" and spy.verified == 1
    assert headers["x-served-by"] == "big" and headers["x-cost-saved-usd"] == "0.000117000"
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in ev[1:-3])
    assert text == ENTRY.answer and len(ev[1:-3]) == 2  # a few words per event
    assert ev[-3]["choices"][0]["finish_reason"] == "stop" and ev[-2]["usage"]["prompt_tokens"] == 9
    assert ev[-1] == "[DONE]"


def test_a_miss_as_json_drops_an_abandoned_tiers_text():
    spy, seen = Spy(), {}
    big, lil = FakeBackend(["Hon", "x"], fail_after=1), FakeBackend(["Hon", "ey."])
    status, headers, body = serve(big, lil, lookup=spy.miss(), seen=seen)
    out = json.loads(body)
    assert status == 200 and out["choices"][0]["message"]["content"] == "Honey."
    assert headers["x-served-by"] == "lil" and headers["x-fallback"] == "big->lil (failed)"
    # lil: (5 x 0.5 + 2 x 1.5) / 1e6; big's thrown-away text is not charged
    assert headers["x-cost-usd"] == "0.000005500" and seen["exchange"].cost == pytest.approx(5.5e-6)
    assert (headers["x-cache"], headers["x-cache-lookup"], headers["x-cache-similarity"]) == ("miss", "miss", "0.5000")
    assert spy.stored == [("Honey.", "stop")]  # offered to the store (which keeps only the routed tier's own)


def test_a_miss_as_events_keeps_the_text_and_says_who_continues():
    spy, seen = Spy(), {}
    big, lil = FakeBackend(["Hon", "x"], fail_after=1), FakeBackend(["ey."])
    status, headers, body = serve(big, lil, lookup=spy.miss(), seen=seen, **STREAM)
    ev = events(body)
    assert status == 200 and headers["x-served-by"] == "big"  # the headers went out with big's first text
    assert "x-cost-usd" not in headers and lil.prefixes == ["Hon"]
    assert ev[1]["choices"][0]["delta"]["content"] == "Hon" and ev[2] == ": tier big failed; lil continues the answer"
    assert ev[3]["choices"][0]["delta"]["content"] == "ey." and ev[4]["choices"][0]["finish_reason"] == "stop"
    assert ev[5]["usage"]["total_tokens"] == 7 and ev[6] == "[DONE]"
    assert spy.stored == [("Honey.", "stop")] and seen["answered"] == 200
    # both tiers' text reached the client: both are charged, big (5 x 3 + 1 x 15) and lil (5 x 0.5 + 1 x 1.5)
    assert seen["exchange"].cost == pytest.approx(34e-6)


def test_an_empty_streamed_answer_still_opens_and_finishes():
    status, _, body = serve(FakeBackend([""]), stream=True)
    ev = events(body)
    assert status == 200 and len(ev) == 3 and ev[1]["choices"][0]["finish_reason"] == "stop" and ev[2] == "[DONE]"


def test_every_tier_failing_is_503_before_the_first_event_and_an_error_event_after():
    for stream in (False, True):
        spy, seen = Spy(), {}
        status, headers, body = serve(
            FakeBackend(ready=False), FakeBackend(ready=False), lookup=spy.miss(), seen=seen, stream=stream
        )
        err = json.loads(body)["error"]
        assert status == 503 and err["code"] == "tiers_unavailable" and headers["Retry-After"] == "5"
        ex = seen["exchange"]
        assert ex.state.ledger.usage(ex.caller)["requests"] == 1 and spy.stored == []  # billed, never stored
    spy, seen = Spy(), {}
    status, _, body = serve(
        FakeBackend(["Hon", "x"], fail_after=1), FakeBackend(ready=False), lookup=spy.miss(), seen=seen, stream=True
    )
    ev = events(body)
    assert status == 200 and ev[1]["choices"][0]["delta"]["content"] == "Hon"
    assert ev[2] == ": tier big failed; lil continues the answer"
    assert ev[3]["error"]["code"] == "tiers_unavailable" and ev[4] == "[DONE]" and spy.stored == []
    assert seen["exchange"].cost == pytest.approx(
        30e-6
    )  # the text the client got is paid for: big (5 x 3 + 1 x 15) / 1e6


def test_n_choices_go_through_the_same_writers():
    seen = {}
    status, headers, body = serve(FakeBackend(["Hel", "lo"]), seen=seen, n=2)
    out = json.loads(body)
    assert status == 200 and headers["x-cache"] == "bypass" and headers["x-served-by"] == "big"
    assert [c["index"] for c in out["choices"]] == [0, 1] and {c["message"]["content"] for c in out["choices"]} == {
        "Hello"
    }
    # the prompt counted once, both choices' tokens; charged once for the request
    assert out["usage"]["prompt_tokens"] == 5 and out["usage"]["completion_tokens"] == 4
    ex = seen["exchange"]
    assert ex.state.ledger.usage(ex.caller)["requests"] == 1 and len(ex.runs) == 2
    status, _, body = serve(FakeBackend(["Hel", "lo"]), n=2, **STREAM)
    ev = events(body)
    assert [e["choices"][0]["delta"] for e in ev[:2]] == [{"role": "assistant", "content": ""}] * 2
    assert sorted(e["choices"][0]["index"] for e in ev if isinstance(e, dict) and e["choices"]) == [0] * 4 + [1] * 4
    assert ev[-2]["usage"]["completion_tokens"] == 4 and ev[-1] == "[DONE]"


def test_text_completions_go_through_the_same_writers():
    from gateway.api.schemas import parse_completion_request

    chats = parse_completion_request({"model": "big", "prompt": ["Once", "Twice"], "echo": True, "max_tokens": 4})
    status, headers, body = serve(FakeBackend([" upon"]), chats=chats, text_api=True)
    out = json.loads(body)
    assert status == 200 and out["object"] == "text_completion" and headers["x-cache"] == "bypass"
    assert [c["text"] for c in out["choices"]] == ["Once upon", "Twice upon"]
    assert out["usage"]["prompt_tokens"] == 10 and out["usage"]["completion_tokens"] == 2


def test_finish_records_from_the_typed_fields_once_per_run():
    recorder, spy = FakeRecorder(), Spy()
    lookup = CacheLookup("miss", 0.123456, store=spy.store)
    serve(FakeBackend(["Hel", "lo"]), lookup=lookup, recorder=recorder)
    (line,) = recorder.lines
    assert line["similarity"] == 0.123456  # the lookup's own float, not its 4-decimal header parsed again
    assert (line["lookup"], line["cache"], line["tier"], line["prompt_tokens"], line["output_tokens"]) == (
        "miss",
        "miss",
        "big",
        5,
        2,
    )
    assert line["asked"] is not None and line["prompt_ids"] == [0, 1, 2, 3, 4]
    recorder = FakeRecorder()
    serve(FakeBackend(["Hel", "lo"]), recorder=recorder, n=2)
    assert [(x["lookup"], x["cache"], x["asked"]) for x in recorder.lines] == [(None, "bypass", None)] * 2
