"""Data-parallel replicas of a tier (``gateway.backends.replicas.ReplicaSet``).

First the choice logic with fake replicas (exact choices: least loaded, the poll/in-flight estimate,
round-robin ties, down replicas skipped, failover before the first output, resumption mid-answer),
then the real thing: two ``python -m runtime.server`` processes serving SmolLM2 as replicas of one
tier behind a gateway; concurrent requests spread over both, and after one is killed (SIGKILL, with
answers in flight on it) every request is still answered, by the other.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import threading
import time

import pytest

from gateway.backends import BackendError
from gateway.backends.replicas import ReplicaSet, choose
from gateway.config.tiers import parse_tiers
from gateway.config.typed import ConfigError
from runtime.api import EngineStats, RequestOutput, SamplingParams
from tests.support.gateway_server import chat_body


def stats(running=0, waiting=0) -> EngineStats:
    return EngineStats(
        num_running=running, num_waiting=waiting, kv_cache_usage=0.0, num_preemptions_total=0, num_steps=0, num_blocks=0
    )


class FakeReplica:
    """A backend whose answers the test scripts: ``script`` is a list of outputs to yield, and/or an
    exception to raise after them. Records every generate call (prompt ids, params)."""

    def __init__(self, url: str, *, ready=True, running=0, waiting=0, max_model_len=512):
        self.url = url
        self.ready = ready
        self._stats = stats(running, waiting)
        self.max_model_len = max_model_len
        self.on_poll = None
        self.calls: list[tuple[list[int], SamplingParams]] = []
        self.script: list = [("hi", [5], True)]
        self.gate: asyncio.Event | None = None  # generate waits on it before its first output

    def stats(self):
        return self._stats

    def poll(self, running=0, waiting=0):
        """What a RemoteBackend poll does: new stats, then the hook."""
        self._stats = stats(running, waiting)
        if self.on_poll is not None:
            self.on_poll()

    async def start(self, warmup=True):
        pass

    async def close(self):
        pass

    async def encode(self, messages, assistant_prefix=""):
        if not self.ready:
            raise BackendError("unavailable", f"{self.url} down")
        return [1, 2, 3]

    async def generate(self, prompt_ids, params, request_id):
        self.calls.append((list(prompt_ids), params))
        if self.gate is not None:
            await self.gate.wait()
        done = 0
        for step in self.script:
            if isinstance(step, BaseException):
                raise step
            text, ids, finished = step
            done += len(ids)
            yield RequestOutput(
                request_id, text, list(ids), finished, "stop" if finished else None, len(prompt_ids), done
            )


def rset(*replicas) -> ReplicaSet:
    return ReplicaSet("small", list(replicas))


def run(coro):
    return asyncio.run(coro)


async def answer(rs: ReplicaSet, prompt=(1, 2, 3), max_tokens=8) -> list[RequestOutput]:
    return [o async for o in rs.generate(list(prompt), SamplingParams(max_tokens=max_tokens), "req")]


# ---------------------------------------------------------------- choice logic


def test_least_loaded_by_polled_counts():
    a, b = FakeReplica("http://a:1", running=3), FakeReplica("http://b:1", running=1, waiting=1)
    c = FakeReplica("http://c:1", waiting=1)
    rs = rset(a, b, c)
    assert [r.load() for r in rs.replicas] == [3, 2, 1]
    assert choose(rs.replicas, 0) == 2
    assert rs.replicas[2].label == "c:1"


def test_ties_round_robin_and_down_replicas_skipped():
    a, b, c = (FakeReplica(f"http://{n}:1") for n in "abc")
    rs = rset(a, b, c)
    assert [rs.pick() for _ in range(5)] == [0, 1, 2, 0, 1]
    b.ready = False
    assert [rs.pick() for _ in range(4)] == [2, 0, 2, 0]
    a.ready = c.ready = False
    assert rs.pick() is None and not rs.ready
    with pytest.raises(BackendError) as exc:
        run(answer(rs))
    assert exc.value.cause == "unavailable"


def test_in_flight_requests_count_until_the_next_poll_sees_them():
    """A burst from this gateway spreads evenly though the polled stats are a second old; a poll that
    sees our own requests does not count them twice; other gateways' requests (polled) do count."""
    a, b = FakeReplica("http://a:1"), FakeReplica("http://b:1")
    rs = rset(a, b)

    async def main():
        a.gate = b.gate = asyncio.Event()
        held = [asyncio.create_task(answer(rs)) for _ in range(4)]
        await asyncio.sleep(0.01)
        assert [len(a.calls), len(b.calls)] == [2, 2]
        assert [r.inflight for r in rs.replicas] == [2, 2]
        a.poll(running=2)  # the poll sees our 2 requests on a: still load 2, not 4
        b.poll(running=2 + 3)  # b also runs 3 requests of another gateway: load 5
        assert [r.load() for r in rs.replicas] == [2, 5]
        assert [rs.pick() for _ in range(3)] == [0, 0, 0]  # a stays the least loaded while nothing changes
        a.gate.set()
        await asyncio.gather(*held)
        assert [r.inflight for r in rs.replicas] == [0, 0]
        # after our requests finished, a's stale poll (2 running, all ours then) counts as 0
        assert [r.load() for r in rs.replicas] == [0, 3]
        assert [r.dispatched for r in rs.replicas] == [2, 2]

    run(main())


def test_failover_before_the_first_output():
    a, b = FakeReplica("http://a:1"), FakeReplica("http://b:1")
    a.script = [BackendError("unavailable", "connection refused")]
    rs = rset(a, b)
    outs = run(answer(rs))
    assert [o.text for o in outs] == ["hi"] and outs[-1].replica == "b:1"
    assert len(a.calls) == len(b.calls) == 1
    assert [r.failovers for r in rs.replicas] == [1, 0] and [r.resumes for r in rs.replicas] == [0, 0]
    # both fail: the last error is raised (the tier's fallback chain takes over)
    b.script = [BackendError("overloaded", "queue full")]
    with pytest.raises(BackendError) as exc:
        run(answer(rs))
    assert exc.value.cause in ("unavailable", "overloaded")


def test_a_broken_answer_resumes_on_another_replica():
    a, b = FakeReplica("http://a:1"), FakeReplica("http://b:1")
    a.script = [("The sky", [10, 11], False), (" is", [12], False), BackendError("failed", "connection reset")]
    b.script = [(" blue", [13], False), (".", [14], True)]
    rs = rset(a, b)
    outs = run(answer(rs, prompt=[1, 2, 3], max_tokens=8))
    assert "".join(o.text for o in outs) == "The sky is blue."
    assert [o.replica for o in outs] == ["a:1", "a:1", "b:1", "b:1"]
    # b continued from the prompt plus a's three tokens, with the tokens left of max_tokens
    prompt, params = b.calls[0]
    assert prompt == [1, 2, 3, 10, 11, 12] and params.max_tokens == 5
    final = outs[-1]
    assert final.finished and final.prompt_tokens == 3 and final.completion_tokens == 5
    assert [r.failovers for r in rs.replicas] == [1, 0] and [r.resumes for r in rs.replicas] == [1, 0]


def test_no_resumption_from_a_server_without_token_ids():
    """An older runtime server sends token counts only (placeholder ids): a broken answer is not
    resumed from them but raised, for the tier's fallback chain to handle."""
    a, b = FakeReplica("http://a:1"), FakeReplica("http://b:1")
    a.sends_token_ids = False
    a.script = [("The sky", [0, 0], False), BackendError("failed", "connection reset")]
    rs = rset(a, b)
    with pytest.raises(BackendError) as exc:
        run(answer(rs))
    assert exc.value.cause == "failed" and b.calls == []


def test_set_level_interface():
    a = FakeReplica("http://a:1", running=1, max_model_len=512)
    b = FakeReplica("http://b:1", running=2, waiting=1, max_model_len=256)
    rs = rset(a, b)
    assert rs.max_model_len == 256 and rs.stats().num_running == 3 and rs.stats().num_waiting == 1
    b.ready = False
    assert rs.max_model_len == 512
    assert run(rs.encode([{"role": "user", "content": "x"}])) == [1, 2, 3]
    assert [r["replica"] for r in rs.replica_stats()] == ["a:1", "b:1"]


# ---------------------------------------------------------------- configuration


def tiers_with(**small):
    return {"tiers": [{"name": "small", "model": "smollm2-135m", **small}], "router": {"default": "small"}}


def test_urls_config():
    spec = parse_tiers(tiers_with(urls=["http://127.0.0.1:8102", "http://127.0.0.1:8103/"]), [])
    t = spec.tier("small")
    assert t.remote and t.url is None and t.replica_urls == ("http://127.0.0.1:8102", "http://127.0.0.1:8103/")


@pytest.mark.parametrize(
    "small, message",
    [
        ({"urls": ["http://a:1", "ftp://b"]}, "tiers[0]: urls[1]: must be http(s)://host:port, got 'ftp://b'"),
        ({"urls": ["http://a:1", "http://a:1/"]}, "tiers[0]: urls: the same replica is listed twice (http://a:1)"),
        ({"urls": ["http://a:1"], "url": "http://b:1"}, "tiers[0]: url, urls: give one runtime server"),
        ({"urls": "http://a:1 http://b:1"}, "tiers[0]: urls[0]: must be http(s)://host:port"),
        ({"urls": [1, 2]}, "tiers[0].urls: must be a list of strings"),
        ({"urls": []}, "tiers[0].urls: must list at least one runtime server"),
        ({}, "tiers[0].model: 'smollm2-135m' is not one of the gateway's in-process models"),
    ],
)
def test_urls_config_errors(small, message):
    with pytest.raises(ConfigError) as exc:
        parse_tiers(tiers_with(**small), [])
    assert message in str(exc.value)


# ---------------------------------------------------------------- two real runtime servers


@pytest.fixture(scope="module")
def pool():
    from gateway.app import create_app
    from gateway.config.gateway import GatewayConfig, Limits
    from tests.support.gateway_server import ServerThread
    from tests.support.processes import replica_model, start_all, stop_all

    servers = [replica_model(f"replica{i}") for i in range(2)]
    try:
        start_all(servers)
        spec = parse_tiers(
            {
                "tiers": [
                    {"name": "small", "model": "smollm2-135m", "urls": [s.url for s in servers], "timeout_s": 60}
                ],
                "router": {"default": "small"},
            },
            [],
        )
        config = GatewayConfig(port=0, models=(), tiers=spec, limits=Limits(default_max_tokens=16))
        gateway = ServerThread(create_app(config, cache_enabled=False)).start()
        try:
            yield gateway, servers
        finally:
            gateway.stop()
    finally:
        stop_all(servers)


def label(server) -> str:
    return f"127.0.0.1:{server.port}"


def ask(url: str, content: str, *, stream=False, max_tokens=16, on_first_chunk=None):
    """(status, lower-cased headers, text, finish_reason) of one chat request over real HTTP."""
    import urllib.error
    import urllib.request

    body = chat_body("small", content, temperature=0, max_tokens=max_tokens, stream=stream)
    req = urllib.request.Request(
        url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=180) as r:
            headers = {k.lower(): v for k, v in r.headers.items()}
            if not stream:
                d = json.loads(r.read())
                return r.status, headers, d["choices"][0]["message"]["content"], d["choices"][0]["finish_reason"]
            text, finish, done = [], None, False
            for raw in r:
                line = raw.decode().strip()
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    done = True
                    break
                event = json.loads(line[6:])
                assert "error" not in event, event
                choice = event["choices"][0]
                if choice["delta"].get("content"):
                    if not text and on_first_chunk is not None:
                        on_first_chunk(headers)
                    text.append(choice["delta"]["content"])
                finish = choice["finish_reason"] or finish
            return r.status, headers, "".join(text), finish if done else None
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read().decode(), None


def served_counts(server) -> int:
    """Requests the runtime server itself finished (its own Prometheus counter)."""
    from tests.support.gateway_server import http

    _, _, raw = http(server.url, path="/metrics", method="GET")
    m = re.search(r'^e2e_request_latency_seconds_count\{model="smollm2-135m"\} (\S+)$', raw.decode(), re.M)
    return int(float(m.group(1))) if m else 0


def test_concurrent_requests_spread_over_both_replicas(pool):
    gateway, servers = pool
    before = [served_counts(s) for s in servers]
    n = 8
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        results = list(
            ex.map(lambda i: ask(gateway.url, f"Name a fruit that starts with the letter {'ABCDEFGH'[i]}."), range(n))
        )
    assert all(status == 200 and finish in ("stop", "length") for status, _, _, finish in results), results
    by = [h["x-served-by-replica"] for _, h, _, _ in results]
    counts = {label(s): by.count(label(s)) for s in servers}
    # least-loaded with in-flight counting: 8 requests arriving together split 4/4 (allow one early finisher)
    assert all(c >= n // 2 - 1 for c in counts.values()), counts
    # each server's own counter agrees with the gateway's headers
    assert [served_counts(s) - b for s, b in zip(servers, before)] == [counts[label(s)] for s in servers]
    print(f"\ndispatch spread over 2 replicas: {counts}")


def test_killing_a_replica_loses_no_request(pool):
    """SIGKILL one replica while it streams answers; those answers resume on the other, later requests
    go only to the survivor, and every request is answered in full."""
    from tests.support.gateway_server import http

    gateway, (a, b) = pool
    started_on_b = threading.Event()

    def first_chunk(headers):
        if headers.get("x-served-by-replica") == label(b):
            started_on_b.set()

    n = 12
    prompts = [f"Write one sentence about the number {i}." for i in range(n)]
    with concurrent.futures.ThreadPoolExecutor(n + 24) as ex:

        def submit(i):
            return ex.submit(
                ask, gateway.url, prompts[i], stream=(i % 2 == 0), max_tokens=32, on_first_chunk=first_chunk
            )

        futures = [submit(i) for i in range(n)]
        # On busy cores a replica's stats poll can time out, and the gateway then sends everything to
        # the other one for a while: keep adding streamed requests until one is streaming on b.
        deadline = time.monotonic() + 180
        while not started_on_b.wait(10):
            assert time.monotonic() < deadline and len(prompts) < n + 24, "no streamed answer started on replica b"
            prompts += [f"Write one sentence about the number {len(prompts) + k}." for k in (0, 1)]
            futures += [submit(len(prompts) - 2), submit(len(prompts) - 1)]
        b.kill()
        results = [f.result(timeout=300) for f in futures]
        after = list(ex.map(lambda i: ask(gateway.url, f"Say hello to person {i}."), range(4)))
    bad = [
        (i, r[0], r[2][:200]) for i, r in enumerate(results + after) if r[0] != 200 or r[3] not in ("stop", "length")
    ]
    assert not bad, bad
    assert all(h["x-served-by-replica"] == label(a) for _, h, _, _ in after)
    _, _, raw = http(gateway.url, path="/metrics", method="GET")
    metrics = raw.decode()

    def counter(name: str) -> float:
        m = re.search(rf'{name}\{{replica="{re.escape(label(b))}",tier="small"\}} (\S+)', metrics)
        return float(m.group(1)) if m else -1.0

    # at least the answer that was streaming on b when it died broke off and was resumed on a
    assert counter("gateway_replica_resumed_total") >= 1 and counter("gateway_replica_failovers_total") >= 1, metrics
    print(
        f"\nafter the kill: {counter('gateway_replica_resumed_total'):.0f} answers resumed, "
        f"{counter('gateway_replica_failovers_total'):.0f} failovers off the killed replica"
    )
    assert re.search(rf'gateway_replica_up\{{replica="{re.escape(label(b))}",tier="small"\}} 0.0', metrics)
    status, _, raw = http(gateway.url, path="/readyz", method="GET")
    assert status == 200 and json.loads(raw)["models"] == {"small": True}
    # a greedy answer resumed on the other replica reads like one answer: compare with the survivor's own
    resumed = [i for i, (_, h, _, _) in enumerate(results) if i % 2 == 0 and h["x-served-by-replica"] == label(b)]
    assert resumed
    for i in resumed[:2]:
        again = ask(gateway.url, prompts[i], max_tokens=32)
        assert again[2] == results[i][2], (results[i][2], again[2])


def test_a_gateway_without_in_process_models(tmp_path):
    from gateway.config.gateway import load_config

    cfg = tmp_path / "g.yaml"
    urls = ["http://127.0.0.1:8102", "http://127.0.0.1:8103"]
    cfg.write_text(json.dumps({"models": [], "tiers": tiers_with(urls=urls)}))
    config = load_config(cfg)
    assert config.models == () and config.tier_spec.tier("small").remote
    cfg.write_text(json.dumps({"models": []}))
    with pytest.raises(ConfigError, match="models: must be a non-empty list"):
        load_config(cfg)
    cfg.write_text(json.dumps({"models": [], "tiers": tiers_with()}))
    with pytest.raises(ConfigError, match=r"tiers\[0\].model: 'smollm2-135m' is not one of the gateway's in-process"):
        load_config(cfg)
