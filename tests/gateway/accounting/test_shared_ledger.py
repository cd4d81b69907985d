"""Budgets and rate limits shared by gateway replicas through Redis (``keys.shared``, gateway/accounting/sync.py).

Unit tests: two ``UsageLedger``s (two replicas) with a fake clock, each with its own ``LedgerSync``, on a
redis-server of this test's own (loopback, free port; the shared one on 6379 is never touched): spend
through one is seen by the other after a sync, a rate limit of N per minute holds for both together,
windows reset, and with Redis killed both go on serving locally, then converge once it is back (empty).
End to end: two real ``python -m gateway`` processes (a tiny in-process model) with a shared ledger and
a key limited to 4 requests per minute: 4 requests alternately through A and B succeed, the next ones
get 429 with Retry-After on either replica.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time

import pytest

from gateway.accounting.sync import LedgerSync, tenant_id
from gateway.accounting.usage import Caller, UsageLedger
from gateway.config.gateway import ConfigError
from gateway.config.tiers import KeyPolicy, KeysConfig, SharedLedgerConfig, parse_tiers
from gateway.config.typed import hash_secret
from runtime.serving.errors import APIError
from tests.support.fakes import FakeClock
from tests.support.gateway_server import http
from tests.support.processes import ServerProcess, start_all, stop_all
from tests.support.redis_server import RedisServer

KEY = "sk-shared-ledger-test"
DIGEST = hash_secret(KEY)
T0 = 1_700_000_040.0  # a fake clock's start: 20 s into a 60 s window (1_700_000_040 % 60 == 0 -> +20 below)

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis():
    with RedisServer.running() as r:
        yield r


def two_replicas(redis, prefix: str, scenario, **policy) -> Caller:
    """Runs ``await scenario(clock, a, b, syncs, caller)``: two ledgers (replicas A and B) on a fake clock at
    T0 + 20, each with its LedgerSync on ``redis`` under ``prefix``, and one caller whose key has
    ``KeyPolicy(**policy)``. The syncs' connections are closed afterwards; returns the caller."""
    policy = KeyPolicy(key_sha256=DIGEST, **policy)
    keys = KeysConfig(entries=(policy,), shared=SharedLedgerConfig(redis.url, prefix=prefix, timeout_s=0.5))
    clock = FakeClock(T0 + 20)
    a, b = UsageLedger(keys, clock), UsageLedger(keys, clock)
    syncs = [LedgerSync(ledger, keys.shared) for ledger in (a, b)]
    caller = Caller("key:" + DIGEST[:32], policy.name, policy)

    async def run():
        try:
            await scenario(clock, a, b, syncs, caller)
        finally:
            await close_all(syncs)

    asyncio.run(run())
    return caller


async def sync_all(syncs) -> list[bool]:
    """Two rounds: each replica's pushes of the first round reach the others in the second."""
    return [await s.sync() for s in syncs] and [await s.sync() for s in syncs]


async def close_all(syncs) -> None:
    for s in syncs:
        if s._client is not None:
            await s._client.aclose()


# ---------------------------------------------------------------- config


@pytest.mark.parametrize(
    "shared, message",
    [
        ({"sync_interval_s": 1}, "keys.shared.redis_url: required"),
        ({"redis_url": "http://x"}, "keys.shared: redis_url: must start with redis://"),
        ({"redis_url": "redis://h", "sync_interval_s": 0}, "sync_interval_s: must be in (0, 60]"),
        ({"redis_url": "redis://h", "sync_interval_s": "fast"}, "keys.shared.sync_interval_s: must be a number"),
        ({"redis_url": "redis://h", "prefix": ""}, "prefix: must be a non-empty string"),
        ({"redis_url": "redis://h", "interval": 1}, "keys.shared: unknown key(s) interval"),
    ],
)
def test_config_errors_name_the_key(shared, message):
    data = {"tiers": [{"name": "t", "model": "m"}], "keys": {"shared": shared}}
    with pytest.raises(ConfigError) as exc:
        parse_tiers(data, ["m"])
    assert message in str(exc.value)


def test_config_default_is_not_shared():
    spec = parse_tiers({"tiers": [{"name": "t", "model": "m"}]}, ["m"])
    assert spec.keys.shared is None and UsageLedger(spec.keys).shared is False
    spec = parse_tiers(
        {
            "tiers": [{"name": "t", "model": "m"}],
            "keys": {"shared": {"redis_url": "redis://127.0.0.1:1/0", "sync_interval_s": 0.2}},
        },
        ["m"],
    )
    assert spec.keys.shared == SharedLedgerConfig("redis://127.0.0.1:1/0", sync_interval_s=0.2)


# ---------------------------------------------------------------- two ledgers, one Redis


def test_spend_through_one_replica_is_seen_by_the_other(redis):
    async def scenario(clock, a, b, syncs, caller):
        a.charge(caller, "small", 100, 10, 0.7)
        a.count_request(caller)
        b.record_hit(caller, 0.05)
        b.check_budget(caller)  # B has not synced: it knows only its own hit
        assert await sync_all(syncs) == [True, True]
        for ledger in (a, b):
            u = ledger.usage(caller)
            assert (u["requests"], u["cache_hits"], u["prompt_tokens"], u["completion_tokens"]) == (2, 1, 100, 10)
            assert u["cost_usd"] == pytest.approx(0.7) and u["saved_usd"] == pytest.approx(0.05)
            assert u["by_tier"] == {
                "small": {"requests": 1, "prompt_tokens": 100, "completion_tokens": 10, "cost_usd": pytest.approx(0.7)}
            }
            assert ledger.budget_left(caller) == pytest.approx(0.3)
        b.charge(caller, "small", 100, 10, 0.4)  # B spends past the budget: A refuses after its next sync
        a.check_budget(caller)
        assert await syncs[1].sync() and await syncs[0].sync()
        for ledger in (a, b):
            with pytest.raises(APIError) as exc:
                ledger.check_budget(caller)
            assert exc.value.status == 429 and exc.value.headers["Retry-After"] == "40"  # the window ends at T0+60
            assert ledger.usage(caller)["cost_usd"] == pytest.approx(1.1)

    caller = two_replicas(redis, "t1:", scenario, name="team", budget_usd=1.0, period_seconds=60)
    stored = redis.keys()
    assert stored and all(k.startswith("t1:") for k in stored)
    assert any(tenant_id(caller.tenant) in k for k in stored)
    assert not any(KEY in k for k in stored)  # never the clear key


def test_rate_limit_holds_for_both_replicas_together(redis):
    async def scenario(clock, a, b, syncs, caller):
        for i in range(4):  # alternately through A and B, each replica syncing after its request
            ledger, sync = (a, syncs[0]) if i % 2 == 0 else (b, syncs[1])
            await sync.sync()  # the other replica's latest request arrives
            ledger.check_rate(caller)
            clock.t += 1
            await sync.sync()
        await sync_all(syncs)
        for ledger in (a, b):  # 4 in total, not 4 each
            with pytest.raises(APIError) as exc:
                ledger.check_rate(caller)
            assert exc.value.status == 429 and exc.value.headers["Retry-After"] == "56"  # the first was 4 s ago
        clock.t += 56  # the first request leaves the log: one more fits, on either replica, once
        await sync_all(syncs)
        b.check_rate(caller)
        await sync_all(syncs)
        with pytest.raises(APIError):
            a.check_rate(caller)
        clock.t += 61  # a minute later: the log is empty everywhere
        await sync_all(syncs)
        for ledger in (a, b):
            ledger.check_rate(caller)

    two_replicas(redis, "t2:", scenario, name="slow", requests_per_minute=4)


def test_budget_windows_reset(redis):
    async def scenario(clock, a, b, syncs, caller):
        a.charge(caller, "small", 1, 1, 0.6)
        await sync_all(syncs)
        with pytest.raises(APIError):
            b.check_budget(caller)
        clock.t += 40  # the next window (T0 + 60)
        await sync_all(syncs)
        for ledger in (a, b):
            ledger.check_budget(caller)
            assert ledger.usage(caller)["cost_usd"] == 0 and ledger.usage(caller)["period"]["start"] == T0 + 60

    two_replicas(redis, "t3:", scenario, name="team", budget_usd=0.5, period_seconds=60)
    ttls = [
        int(subprocess.run(["redis-cli", "-p", str(redis.port), "ttl", k], capture_output=True, text=True).stdout)
        for k in redis.keys()
        if k.startswith("t3:b:")
    ]
    assert ttls and all(0 < t <= 60 + 60 for t in ttls)  # budget windows expire after their period


def test_redis_down_both_serve_locally_then_converge(redis):
    async def scenario(clock, a, b, syncs, caller):
        a.check_rate(caller)
        a.charge(caller, "small", 10, 10, 1.0)
        b.check_rate(caller)
        b.charge(caller, "small", 10, 10, 2.0)
        assert await sync_all(syncs) == [True, True]
        redis.kill()
        for ledger, cost in ((a, 0.5), (b, 0.25)):  # each keeps serving with what it knows
            for _ in range(3):
                ledger.check_rate(caller)
                ledger.check_budget(caller)
                ledger.charge(caller, "small", 1, 1, cost)
        assert await sync_all(syncs) == [False, False]
        assert all(s.down for s in syncs)
        assert a.usage(caller)["cost_usd"] == pytest.approx(3.0 + 1.5)  # the last global figure + its own
        assert b.usage(caller)["cost_usd"] == pytest.approx(3.0 + 0.75)
        assert len(a._accounts[caller.tenant].recent) == 2 + 3
        # its rate limit on one replica still holds locally: 5 more through A reach 10
        for _ in range(5):
            a.check_rate(caller)
        with pytest.raises(APIError):
            a.check_rate(caller)
        redis.start()  # back, and empty: both push their share again
        clock.t += 1
        await sync_all(syncs)  # the new epoch: each replica queues its usage again ...
        await sync_all(syncs)  # ... and pushes it
        for ledger in (a, b):
            u = ledger.usage(caller)
            assert u["cost_usd"] == pytest.approx(5.25) and u["prompt_tokens"] == 26, u
            assert len(ledger._accounts[caller.tenant].recent) == 2 + 6 + 5
            with pytest.raises(APIError):
                ledger.check_rate(caller)
        assert not any(s.down for s in syncs)

    two_replicas(redis, "t4:", scenario, name="team", budget_usd=10.0, period_seconds=3600, requests_per_minute=10)


# ---------------------------------------------------------------- end to end: two gateway processes


@pytest.fixture(scope="module")
def gateways(redis, tmp_path_factory):
    """Gateways A and B (``python -m gateway``, a tiny in-process model, no cache) sharing the ledger."""
    from tests.support.tiny_gguf import write_tiny_llama

    folder = tmp_path_factory.mktemp("shared-ledger")
    gguf = str(write_tiny_llama(folder).path)
    config = folder / "gateway.yaml"
    config.write_text(
        json.dumps(
            {  # JSON is YAML
                "host": "127.0.0.1",
                "models": [
                    {
                        "name": "tiny",
                        "gguf": gguf,
                        "engine": {
                            "max_num_seqs": 4,
                            "max_num_batched_tokens": 32,
                            "max_model_len": 256,
                            "num_blocks": 64,
                            "compilation_cache": False,
                        },
                    }
                ],
                "cache": {"enabled": False},
                "limits": {"default_max_tokens": 4},
                "tiers": {
                    "tiers": [
                        {"name": "small", "model": "tiny", "price": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
                    ],
                    "keys": {
                        "entries": [{"name": "slow", "key_env": "SHARED_LEDGER_KEY", "requests_per_minute": 4}],
                        "shared": {"redis_url": redis.url, "prefix": f"e2e-{time.time_ns()}:", "sync_interval_s": 0.1},
                    },
                },
            }
        )
    )
    procs = [
        ServerProcess(
            ["-m", "gateway", "--config", str(config)],
            name=f"gateway-{n}",
            wait_ready=False,
            env={"SHARED_LEDGER_KEY": KEY, "JAX_PLATFORMS": "cpu"},
        )
        for n in "ab"
    ]
    try:
        start_all(procs, timeout=300)
        yield procs
    finally:
        stop_all(procs)


def test_two_gateways_enforce_one_rate_limit(gateways):
    a, b = gateways
    auth = {"Authorization": f"Bearer {KEY}"}
    body = {"model": "small", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 2}
    for i in range(4):  # 4 per minute: alternately through A and B, all answered
        status, _, raw = http((a, b)[i % 2].url, body, headers=auth, timeout=120)
        assert status == 200, raw
        time.sleep(0.3)  # > 2 sync intervals: the other replica has pulled this request
    for g in (a, b, a, b):  # the 5th and later: 429 on either replica
        status, headers, raw = http(g.url, body, headers=auth, timeout=30)
        assert status == 429, raw
        assert json.loads(raw)["error"]["code"] == "rate_limit_exceeded"
        assert 1 <= int(headers["Retry-After"]) <= 60
    for g in (a, b):  # /v1/usage: the global figures on both
        status, _, raw = http(g.url, path="/v1/usage", method="GET", headers=auth)
        u = json.loads(raw)
        assert status == 200 and u["requests"] == 4 and u["by_tier"]["small"]["requests"] == 4, u
        assert u["cost_usd"] > 0
        _, _, raw = http(g.url, path="/metrics", method="GET")  # the sync is observable
        metrics = raw.decode()
        syncs = re.search(r"^gateway_usage_syncs_total (\S+)$", metrics, re.M)
        assert syncs and float(syncs.group(1)) > 0, metrics[-2000:]
        assert re.search(r"^gateway_usage_sync_up 1\.0$", metrics, re.M)
        assert re.search(r"^gateway_usage_sync_failures_total 0\.0$", metrics, re.M)
