"""Admission: identify, rate limit, parse, budget; each refusal is the right 4xx and counted."""

from __future__ import annotations

import asyncio
import json

import pytest

from gateway.accounting.usage import UsageLedger
from gateway.config.tiers import KeyPolicy, KeysConfig
from gateway.config.typed import hash_secret
from gateway.pipeline.admission import Admission
from gateway.pipeline.routing import Decision
from runtime.serving.errors import APIError
from tests.gateway.pipeline.fakes import FakeRequest, chat, metrics, sample

BODY = json.dumps({"model": "auto", "messages": [{"role": "user", "content": "hi"}]}).encode()


class Clock:
    def __init__(self, t=1_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


class CountingRequest(FakeRequest):
    reads = 0

    async def read(self):
        self.reads += 1
        return await super().read()


def admission(keys=None, **policy):
    ledger = UsageLedger(keys or KeysConfig(default=KeyPolicy(**policy)), Clock())
    return Admission(ledger, metrics(), max_messages=4)


def admit(adm, request):
    return asyncio.run(adm.admit(request))


def test_a_caller_is_identified_and_its_request_parsed():
    adm = admission()
    caller, parsed = admit(adm, FakeRequest(BODY))
    assert caller.tenant == "anonymous" and parsed.model == "auto" and parsed.messages[0]["content"] == "hi"
    # a keyless caller that names a user gets that user's own tenant (its own cache entries)
    body = json.dumps({"model": "auto", "messages": [{"role": "user", "content": "hi"}], "user": "bob"}).encode()
    assert admit(adm, FakeRequest(body))[0].tenant == "user:bob"
    # a keyed caller stays who its key says, whatever user it names
    caller, _ = admit(adm, FakeRequest(body, {"Authorization": "Bearer sk-1"}))
    assert caller.tenant == "key:" + hash_secret("sk-1")[:32]


def test_over_the_rate_limit_is_429_before_the_body_is_read():
    adm = admission(requests_per_minute=1)
    admit(adm, FakeRequest(BODY))
    request = CountingRequest(BODY)
    with pytest.raises(APIError) as exc:
        admit(adm, request)
    assert exc.value.status == 429 and exc.value.type == "rate_limit_error" and request.reads == 0
    assert sample(adm.metrics, "gateway_rejected_limits_total", limit="rate") == 1


def test_a_missing_key_is_401_when_keys_are_required():
    with pytest.raises(APIError) as exc:
        admit(admission(KeysConfig(require=True)), FakeRequest(BODY))
    assert exc.value.status == 401 and exc.value.code == "missing_api_key"


@pytest.mark.parametrize(
    "body,headers,status",
    [
        (b"", {}, 400),
        (b"{not json", {}, 400),
        (BODY, {"Content-Type": "text/plain"}, 415),
        (json.dumps({"model": "auto", "messages": [{"role": "user", "content": "hi"}] * 5}).encode(), {}, 400),
    ],
)
def test_a_malformed_body_is_refused(body, headers, status):
    with pytest.raises(APIError) as exc:
        admit(admission(), FakeRequest(body, headers))
    assert exc.value.status == status


def test_budget_after_routing_then_the_route_is_counted():
    adm = admission(budget_usd=0.001)
    caller, _ = admit(adm, FakeRequest(BODY))
    routed = Decision("big", ("big",), "explicit model 'big'")
    adm.check_budget(caller, chat(model="big"), routed)
    adm.check_budget(caller, chat(model="auto"), routed)
    assert sample(adm.metrics, "gateway_route_decisions_total", tier="big", how="explicit") == 1
    assert sample(adm.metrics, "gateway_route_decisions_total", tier="big", how="auto") == 1
    adm.ledger.charge(caller, "big", 10, 10, 0.002)  # spent
    with pytest.raises(APIError) as exc:
        adm.check_budget(caller, chat(model="big"), routed)
    assert exc.value.status == 429 and exc.value.type == "insufficient_quota"
    assert sample(adm.metrics, "gateway_rejected_limits_total", limit="budget") == 1
    assert sample(adm.metrics, "gateway_route_decisions_total", tier="big", how="explicit") == 1  # not counted
