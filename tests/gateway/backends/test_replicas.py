"""Gateway replicas sharing one Redis: an answer cached through one is a hit on the others.

Real processes throughout: a Redis server of this test's own (loopback, free port), one runtime server
(SmolLM2) as the model tier, and two ``python -m gateway`` processes, A and B, configured by a YAML
file with the Redis cache store. The data flow under test:

    A: miss -> model -> answer stored in Redis (hash + scope set) -> PUBLISH {op: put, id}
    B: pub/sub listener -> HGETALL the entry -> one vector into its FAISS scope index (incremental)
    B restarted: subscribe, then rebuild the whole index from Redis (SMEMBERS scopes, ZRANGE, HGETALL)

Checked: the same question through B is an exact hit once B has counted A's entry as an incremental
add (the delay is printed, not asserted: timing belongs to the benchmarks), a paraphrase through B is a
semantic hit, B killed and started again rebuilds its index from Redis and hits, and a later entry
reaches the running index as one incremental add (the
``gateway_cache_index_rebuilds`` and ``gateway_cache_remote_adds`` counters of /metrics), in both
directions. The official ``openai`` client makes the cross-replica requests.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from tests.support.gateway_server import chat_body, http
from tests.support.processes import replica_gateways, replica_model, start_all, stop_all
from tests.support.redis_server import RedisServer

KEY = "sk-replicas-test"  # the same caller (tenant) through both gateways
PARAMS = {"temperature": 0, "max_tokens": 48, "stop": ["."]}  # answers end at the first sentence: "stop"

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url():
    with RedisServer.running() as r:
        yield r.url


@pytest.fixture(scope="module")
def cluster(redis_url, tmp_path_factory):
    """(runtime server, gateway A, gateway B); every process stopped at the end."""
    model = replica_model("rs-model")
    cache = {
        "store": "redis",
        "redis_url": redis_url,
        "redis_prefix": f"replicas-{time.time_ns()}:",
        "threshold": 0.8,
        "cache_sampled": "always",
        "redis_retry_s": 0.2,
    }
    gateways = replica_gateways(tmp_path_factory.mktemp("replicas"), model.url, cache, ["gateway-a", "gateway-b"])
    procs = [model, *gateways]
    try:
        start_all(procs)
        yield model, gateways[0], gateways[1]
    finally:
        stop_all(procs)


def metric(url: str, name: str) -> float:
    raw = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    m = re.search(rf"^{name} (\S+)$", raw, re.M)
    assert m, f"{name} not in /metrics"
    return float(m.group(1))


def index_counters(url: str) -> dict:
    return {k: metric(url, f"gateway_cache_{k}") for k in ("entries", "index_rebuilds_total", "remote_adds_total")}


def ask_http(gateway, question: str):
    """(headers, answer, finish_reason) through plain HTTP."""
    body = chat_body("small", question, **PARAMS)
    status, headers, raw = http(gateway.url, body, headers={"Authorization": f"Bearer {KEY}"}, timeout=180)
    assert status == 200, raw
    d = json.loads(raw)
    choice = d["choices"][0]
    return {k.lower(): v for k, v in headers.items()}, choice["message"]["content"], choice["finish_reason"]


_clients: dict[str, openai.OpenAI] = {}


def ask_openai(gateway, question: str, **kwargs):
    """(headers, answer) through the official client (the raw response carries the headers)."""
    client = _clients.get(gateway.url)
    if client is None:
        client = _clients[gateway.url] = openai.OpenAI(
            base_url=gateway.url + "/v1", api_key=KEY, max_retries=0, timeout=180
        )
    raw = client.chat.completions.with_raw_response.create(
        model="small", messages=[{"role": "user", "content": question}], **PARAMS, **kwargs
    )
    return {k.lower(): v for k, v in raw.headers.items()}, raw.parse().choices[0].message.content


def store_through(gateway, question: str) -> str:
    h, answer, finish = ask_http(gateway, question)
    assert h["x-cache"] == "miss" and finish == "stop" and answer, (h, answer, finish)
    return answer


HANG_S = 30.0  # a wait for an event longer than this is a hang, not a slow machine


def wait_for_add(url: str, before: float, t0: float, limit: float = HANG_S) -> float:
    """Seconds from ``t0`` until the replica at ``url`` counts one more incremental add."""
    while metric(url, "gateway_cache_remote_adds_total") < before + 1:
        assert time.perf_counter() - t0 < limit, f"no incremental add within {limit} s: a hang"
        time.sleep(0.005)
    return time.perf_counter() - t0


def test_two_replicas_share_the_cache(cluster):
    _, a, b = cluster
    q = "What is the capital of France?"
    b_before = index_counters(b.url)
    # the client's first use (connection, lazy imports) is not part of the measured delay
    ask_openai(b, "Hello?", extra_headers={"Cache-Control": "no-cache, no-store"})
    answer = store_through(a, q)
    t0 = time.perf_counter()  # A's answer is in hand (A stored it before answering)
    delay = wait_for_add(b.url, b_before["remote_adds_total"], t0)
    h, hit = ask_openai(b, q)
    total = time.perf_counter() - t0
    assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "exact" and hit == answer, h
    print(
        f"\npropagation A -> B: indexed by B {delay * 1000:.1f} ms after A's answer; "
        f"B's hit answered {total * 1000:.1f} ms after it"
    )
    # a paraphrase through B: a semantic hit on A's entry
    h, hit = ask_openai(b, "Which city is the capital of France?")
    assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "semantic" and hit == answer, h
    assert float(h["x-cache-similarity"]) >= 0.8
    after = index_counters(b.url)
    assert after["index_rebuilds_total"] == b_before["index_rebuilds_total"] == 1  # only B's start-up
    assert after["entries"] == b_before["entries"] + 1
    raw = urllib.request.urlopen(b.url + "/metrics", timeout=10).read().decode()
    p50 = float(re.search(r'^gateway_cache_propagation_seconds\{quantile="0.5"\} (\S+)$', raw, re.M).group(1))
    assert p50 >= 0  # B measured it: A creating the entry -> B's index holding it (printed, not bounded)
    # a look-alike with another answer is not served from it
    assert ask_openai(b, "What is the capital of Germany?")[0]["x-cache"] == "miss"


def test_a_restarted_replica_rebuilds_from_redis_then_adds_incrementally(cluster):
    _, a, b = cluster
    q = "What is the largest planet in the solar system?"
    answer = store_through(a, q)
    entries = index_counters(a.url)["entries"]
    assert entries >= 2  # this test's entry and those stored before
    b.kill()  # SIGKILL: nothing of B's index survives
    b.start()
    b.wait()
    after_restart = index_counters(b.url)
    assert after_restart == {"entries": entries, "index_rebuilds_total": 1, "remote_adds_total": 0}, after_restart
    h, hit = ask_openai(b, q)
    assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "exact" and hit == answer, h
    h, _ = ask_openai(b, "Which planet is the largest in the solar system?")
    assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "semantic", h
    # a new entry through A reaches the running B as one incremental add, not a rebuild
    q2 = "What is the chemical symbol for gold?"
    answer2 = store_through(a, q2)
    wait_for_add(b.url, 0, time.perf_counter())
    assert index_counters(b.url) == {"entries": entries + 1, "index_rebuilds_total": 1, "remote_adds_total": 1}
    assert ask_openai(b, q2)[1] == answer2
    # and the other way: B's own answer reaches A
    a_before = index_counters(a.url)
    q3 = "How many legs does a spider have?"
    answer3 = store_through(b, q3)
    wait_for_add(a.url, a_before["remote_adds_total"], time.perf_counter())
    h, hit = ask_openai(a, q3)
    assert h["x-cache"] == "hit" and hit == answer3
    assert index_counters(a.url)["index_rebuilds_total"] == 1
