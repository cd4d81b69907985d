"""Live verification end to end: the tiny gateway over a store that plants wrong answers for a known
share of its entries, every hit verified by the model in the background.

What must hold: every planted hit is found wrong and evicted, no real hit is (the tiny model's greedy
answer to the same question is the same text), the estimate's 95% interval covers the true share of
wrong hits served, and the estimate reaches /metrics and /dashboard/verification.
"""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from gateway.cache.calibration import interval
from tests.support.cached_gateway import chat
from tests.support.planting_store import WRONG, stored_misses, verifying_gateway

N = 24


def _get(server, path):
    with urllib.request.urlopen(server.url + path, timeout=30) as r:
        return json.load(r) if path != "/metrics" else r.read().decode()


def _wait_verified(server, n, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = _get(server, "/dashboard/verification")
        done = sum(e["verified"] for e in v["estimates"])
        if done >= n and v["pending"] == 0:
            return v
        time.sleep(0.2)
    raise AssertionError(f"only {done} of {n} hits verified in {timeout} s: {v}")


@pytest.fixture(scope="module")
def gateway(tiny_path, tmp_path_factory):
    server, cache, store = verifying_gateway(
        tiny_path, tmp_path_factory.mktemp("verify"), planted=0.35, verify_max_pending=64
    )
    yield server, cache, store
    server.stop()


def test_planted_wrong_hits_are_found_evicted_and_estimated(gateway):
    server, cache, store = gateway
    stops = stored_misses(server, N)
    QUESTIONS = list(stops)
    served_wrong = 0
    for q in QUESTIONS:  # exact hits: the store hands out a planted answer for its share of entries
        h, body = chat(server, [{"role": "user", "content": q}], stop=[stops[q]])
        assert h["x-cache"] == "hit", h
        served_wrong += json.loads(body)["choices"][0]["message"]["content"] == WRONG
    assert served_wrong == store.served["planted"] and 0 < served_wrong < len(QUESTIONS)

    v = _wait_verified(server, len(QUESTIONS))
    (est,) = v["estimates"]
    assert (est["kind"], est["tier"], est["verified"]) == ("single", "tiny", len(QUESTIONS))
    # the tiny model's greedy answer to the same question is the stored one: planted = wrong, exactly
    assert est["wrong"] == served_wrong
    truth = served_wrong / len(QUESTIONS)
    lo, hi = est["ci95"]
    assert lo <= truth <= hi and (lo, hi) == pytest.approx(interval(served_wrong, len(QUESTIONS)))
    assert len(v["disagreements"]) == served_wrong
    assert all(d["served"] == WRONG[:300] and len(d["tenant"]) == 12 for d in v["disagreements"])

    deadline = time.monotonic() + 10
    while not all(d["evicted"] for d in _get(server, "/dashboard/verification")["disagreements"]):
        assert time.monotonic() < deadline, "wrong entries were not evicted"
        time.sleep(0.1)
    # an evicted question misses now; a verified-right one still hits
    planted_q = [q for q in QUESTIONS if not any(d["question"] == q for d in v["disagreements"])]
    wrong_q = [d["question"] for d in v["disagreements"]]
    h, _ = chat(server, [{"role": "user", "content": wrong_q[0]}], stop=[stops[wrong_q[0]]])
    assert h["x-cache"] == "miss"
    h, _ = chat(server, [{"role": "user", "content": planted_q[0]}], stop=[stops[planted_q[0]]])
    assert h["x-cache"] == "hit"

    metrics = _get(server, "/metrics")
    assert f'gateway_cache_verified_wrong_total{{kind="single",tier="tiny"}} {float(served_wrong)}' in metrics
    assert 'gateway_cache_live_false_hit_rate{kind="single",stat="high95",tier="tiny"}' in metrics


def test_evict_needs_an_admin_key(gateway):
    server, _, _ = gateway
    req = urllib.request.Request(
        server.url + "/dashboard/evict",
        data=b'{"entry_id": "x"}',
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 403
    assert json.load(err.value)["error"]["code"] == "admin_key_required"
