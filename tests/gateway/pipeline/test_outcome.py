"""Outcome: every request counted once by tier and status however it ends; latency from its arrival."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from gateway import keys
from gateway.pipeline.outcome import Outcome
from runtime.serving.errors import APIError
from tests.gateway.pipeline.fakes import FakeRequest, metrics, sample


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def counted(m, tier, status):
    return sample(m, "gateway_requests_total", model=tier, status=status)


def test_a_response_is_counted_under_its_tier_and_status():
    m = metrics()
    with Outcome(m, FakeRequest()) as outcome:
        outcome.tier = "big"
        response = outcome.done(web.json_response({}, status=200))
    assert response.status == 200 and counted(m, "big", "200") == 1


@pytest.mark.parametrize(
    "exc,answered,status",
    [
        (APIError(429, "slow down"), None, "429"),
        (asyncio.CancelledError(), None, "499"),  # the client hung up before its answer was sent
        (asyncio.CancelledError(), 200, "200"),  # ... after it was sent in full: no failure
        (RuntimeError("bug"), None, "500"),
    ],
)
def test_however_it_ends_it_is_counted_once_and_the_error_goes_on(exc, answered, status):
    m, request = metrics(), FakeRequest()
    if answered is not None:
        request[keys.ANSWERED] = answered
    with pytest.raises(type(exc)), Outcome(m, request):
        raise exc
    assert counted(m, "unknown", status) == 1  # refused before routing: no tier yet
    total = sum(
        s.value
        for f in m.registry.collect()
        if f.name == "gateway_requests"
        for s in f.samples
        if s.name == "gateway_requests_total"
    )
    assert total == 1


def test_latency_is_measured_from_arrival():
    m, clock = metrics(), Clock()
    outcome = Outcome(m, FakeRequest(), clock=clock)
    clock.t += 0.25
    outcome.observe_hit("big")
    assert sample(m, "time_to_first_token_seconds_sum", model="big", cache="hit") == 0.25
    assert sample(m, "e2e_request_latency_seconds_sum", model="big", cache="hit") == 0.25
    clock.t += 0.75
    outcome.observe_miss("lil", ttft=0.5)
    assert sample(m, "time_to_first_token_seconds_sum", model="lil", cache="miss") == 0.5
    assert sample(m, "e2e_request_latency_seconds_sum", model="lil", cache="miss") == 1.0
    outcome.observe_miss("lil", ttft=None)  # no token ever came: only the end-to-end time
    assert sample(m, "time_to_first_token_seconds_count", model="lil", cache="miss") == 1
    assert sample(m, "e2e_request_latency_seconds_count", model="lil", cache="miss") == 2
