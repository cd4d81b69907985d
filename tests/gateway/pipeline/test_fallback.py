"""The fallback chain over scripted backends: which tier answers, what is kept, charged and counted."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from gateway.pipeline.choices import Run
from gateway.pipeline.fallback import Abandoned, ChainFailed, FallbackChain, Finished, Text, sampling_params
from gateway.pipeline.routing import Decision
from runtime.api import RequestError
from runtime.serving.errors import APIError
from tests.gateway.pipeline.fakes import FakeBackend, chat, metrics, sample, spec

BIG = Decision("big", ("big", "lil"), "explicit model 'big'")


def run(big, lil, request=None, *, continue_partial=False, inflight=None, tiers=None, until=None, seen=None):
    """(texts, summary, chain) of one request down big -> lil: the texts, None where a tier was abandoned
    mid-answer; the ``Finished`` event's summary (None when there was none). ``until``: stop reading after
    that many texts; ``seen``: a list that gets every event."""
    chain = FallbackChain(
        tiers or spec(), {"big": big, "lil": lil}, inflight or {"big": 0, "lil": 0}, metrics(), default_max_tokens=16
    )
    out, finished, seen = [], [], seen if seen is not None else []

    async def go():
        events = chain.run(request or chat(), BIG, time.perf_counter(), continue_partial=continue_partial)
        async with contextlib.aclosing(events) as it:
            async for e in it:
                seen.append(e)
                if isinstance(e, Text):
                    out.append(e.text)
                elif isinstance(e, Abandoned) and e.streamed:
                    out.append(None)
                elif isinstance(e, Finished):
                    finished.append(e.summary)
                if until is not None and len(out) >= until:
                    break

    asyncio.run(go())
    assert len(finished) <= 1 and all(isinstance(e, Finished) for e in seen[len(seen) - len(finished) :])
    return out, (finished[0] if finished else None), chain


def test_the_routed_tier_answers_and_is_charged():
    big, lil, seen = FakeBackend(["Hel", "lo"], prompt_len=5, replica="r1"), FakeBackend(), []
    out, answer, chain = run(big, lil, seen=seen)
    assert out == ["Hel", "lo"] and big.runs == ["done"] and lil.params == []
    assert seen[0] == Text("Hel", "big", "tiny", "r1") and isinstance(seen[-1], Finished)
    assert (answer.served_by, answer.finish_reason, answer.model, answer.replica) == ("big", "stop", "tiny", "r1")
    assert (answer.prompt_tokens, answer.completion_tokens, answer.prompt_ids) == (5, 2, (0, 1, 2, 3, 4))
    assert answer.charges == (("big", 5, 2),) and answer.fallbacks == () and answer.ttft is not None
    one = Run(0, chat())
    for e in seen:
        one.apply(e)
    assert one.served_headers(0.5) == {"x-served-by": "big", "x-served-by-replica": "r1", "x-cost-usd": "0.500000000"}
    assert chain.inflight == {"big": 0, "lil": 0}
    assert sample(chain.metrics, "request_queue_time_seconds_count", model="big") == 1
    assert sample(chain.metrics, "inter_token_latency_seconds_count", model="big") == 1  # one gap between 2 tokens


@pytest.mark.parametrize(
    "big,inflight,cause",
    [
        (FakeBackend(ready=False), 0, "unavailable"),
        (FakeBackend(), 2, "overloaded"),  # capacity 2, and 2 are in flight
    ],
)
def test_a_tier_that_cannot_take_it_is_skipped(big, inflight, cause):
    seen = []
    out, answer, chain = run(big, FakeBackend(["ok"]), inflight={"big": inflight, "lil": 0}, seen=seen)
    assert out == ["ok"] and big.params == [] and answer.served_by == "lil"
    assert answer.fallbacks == (("big", "lil", cause),) and seen[0] == Abandoned("big", "lil", cause)
    one = Run(0, chat())
    for e in seen:
        one.apply(e)
    assert one.served_headers()["x-fallback"] == f"big->lil ({cause})"
    assert sample(chain.metrics, "gateway_fallbacks_total", tier="big", to="lil", cause=cause) == 1
    assert chain.inflight == {"big": inflight, "lil": 0}


def test_mid_answer_failure_streaming_continues_the_text_the_client_has():
    big, lil = FakeBackend(["A", "B", "C"], fail_after=2, prompt_len=5), FakeBackend(["C"], prompt_len=7)
    seen = []
    out, answer, _ = run(big, lil, continue_partial=True, seen=seen)
    assert out == ["A", "B", None, "C"] and lil.prefixes == ["AB"]  # lil continues after "AB"
    assert big.runs == ["failed"] and answer.fallbacks == (("big", "lil", "failed"),)
    assert seen[2] == Abandoned("big", "lil", "failed", streamed=True, kept=("big", 5, 2))
    # the client got 2 tokens from big and 1 from lil: both are charged, the usage says 3
    assert answer.charges == (("big", 5, 2), ("lil", 7, 1)) and answer.completion_tokens == 3
    assert answer.served_by == "lil" and answer.prompt_tokens == 7


def test_mid_answer_failure_whole_starts_over():
    big, lil = FakeBackend(["A", "B", "C"], fail_after=2), FakeBackend(["X", "Y"])
    out, answer, _ = run(big, lil, continue_partial=False)
    assert out == ["A", "B", None, "X", "Y"] and lil.prefixes == [""]
    assert answer.charges == (("lil", 5, 2),) and answer.completion_tokens == 2  # big's text was thrown away


def test_no_progress_within_timeout_falls_back():
    big = FakeBackend(stall=1.0)
    out, answer, _ = run(big, FakeBackend(["ok"]), tiers=spec(timeout_s=0.05))
    assert out == ["ok"] and answer.fallbacks == (("big", "lil", "timeout"),) and big.runs == ["aborted"]


def test_an_answer_that_ends_without_finishing_is_a_failure():
    out, answer, _ = run(FakeBackend(["A"], end_early=True), FakeBackend(["ok"]))
    assert out == ["A", None, "ok"] and answer.fallbacks == (("big", "lil", "failed"),)


def test_every_tier_failing_is_chain_failed_with_a_503():
    with pytest.raises(ChainFailed) as exc:
        run(FakeBackend(ready=False), FakeBackend(ready=False))
    err = exc.value.api_error()
    assert exc.value.summary.fallbacks == (("big", "lil", "unavailable"), ("lil", "none", "unavailable"))
    assert err.status == 503 and err.code == "tiers_unavailable" and err.headers["Retry-After"] == "5"
    assert "big unavailable; lil unavailable" in err.message and "tried big, lil" in err.message


def test_a_bad_request_is_400_on_the_routed_tier_and_a_fallback_on_the_others():
    with pytest.raises(APIError) as exc:
        run(FakeBackend(encode_error=RequestError("too many images")), FakeBackend())
    assert exc.value.status == 400 and exc.value.param == "messages" and "too many images" in exc.value.message
    # the routed tier is down, the fallback cannot take the request: that is a failed tier, not a 400
    with pytest.raises(ChainFailed, match="big unavailable; lil failed"):
        run(FakeBackend(ready=False), FakeBackend(encode_error=RequestError("too long")))
    # a context the prompt does not fit (big's max_context: 4 < the 5-token prompt) is the caller's 400
    with pytest.raises(APIError) as exc:
        run(FakeBackend(), FakeBackend(), tiers=spec(max_context=4))
    assert exc.value.code == "context_length_exceeded"


def test_a_consumer_that_stops_reading_aborts_the_generation():
    big = FakeBackend(["A", "B", "C"])
    out, answer, chain = run(big, FakeBackend(), until=1)
    assert out == ["A"] and big.runs == ["aborted"] and chain.inflight["big"] == 0 and answer is None


def test_a_cancel_that_arrives_with_a_token_is_not_lost():
    """A consumer cancelled in the loop turn in which its next output arrives ends cancelled. Python 3.11's
    ``asyncio.wait_for`` returned the output and dropped the cancel; a verifier closing at shutdown then
    waited forever for a worker that went back to its queue."""
    from gateway.pipeline.fallback import _next

    async def go():
        ready = asyncio.get_running_loop().create_future()

        async def outputs():
            yield await ready

        task = asyncio.create_task(_next(outputs(), spec().tier("big")))
        await asyncio.sleep(0)  # the task now waits for the output
        ready.set_result("token")  # the output arrives ...
        task.cancel()  # ... in the same turn as the cancel
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return task.cancelled()

    assert asyncio.run(go())


def test_sampling_params_fit_the_tier_and_what_was_already_sent():
    tier = spec(max_context=100).tier("big")
    # no max_tokens: the default, within the room the context leaves (100 - 90 = 10)
    assert sampling_params(chat(), tier, 256, 90, 0, default_max_tokens=16).max_tokens == 10
    assert sampling_params(chat(), tier, 256, 10, 0, default_max_tokens=16).max_tokens == 16
    # a fallback tier continuing 3 tokens already streamed generates the rest of max_tokens
    assert sampling_params(chat(max_tokens=8), tier, 256, 10, 3, default_max_tokens=16).max_tokens == 5
    assert sampling_params(chat(seed=2**32 + 7), tier, 256, 10, 0, default_max_tokens=16).seed == 7
    assert sampling_params(chat(), tier, 50, 10, 0, default_max_tokens=64).max_tokens == 40  # the model's limit rules
    with pytest.raises(APIError, match="at least one must be left") as exc:
        sampling_params(chat(), tier, 256, 100, 0, default_max_tokens=16)
    assert exc.value.param == "messages" and exc.value.code == "context_length_exceeded"
    with pytest.raises(APIError, match=r"max_tokens \(95\) exceed") as exc:
        sampling_params(chat(max_tokens=95), tier, 256, 10, 0, default_max_tokens=16)
    assert exc.value.param == "max_tokens"
