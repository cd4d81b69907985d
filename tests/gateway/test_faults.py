"""Faults, each under real traffic on real components (SmolLM2, Redis, gateway processes):

- Redis killed (SIGKILL) while 8 clients keep asking: no request fails while it is down (the cache
  bypasses itself, the model answers), and cache hits resume once a new Redis is up on the same port.
- A client disconnects mid-stream: its generation stops within one engine step (the request gains at
  most the token of the step already running, then it is aborted) and every KV block is back in the pool.
- SIGTERM to a `python -m gateway` process with streams in flight: those streams finish completely,
  new requests during the drain get 503 + Retry-After with an OpenAI error body, the process exits 0,
  and the embedded cache file reloads intact, with the answers stored during the drain.
- A tier's runtime server killed mid-run: tests/gateway/test_tiers_e2e.py::test_killing_the_large_tier_loses_no_request
  (120 requests, the Gemma runtime server SIGKILLed a quarter of the way: all answered by the fallback
  tier). Not repeated here: it is the expensive part (a second model in its own process).

Greedy SmolLM2 answers rarely end on their own within a few tokens, so answers that must be cached are
asked with a stop string taken from the same question's earlier greedy answer: they then finish with
"stop", which is what the cache stores.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import os
import signal
import threading
import time
from http.client import HTTPConnection

import pytest
import yaml

from gateway import keys
from gateway.app import create_app
from gateway.cache.store import FileStore
from gateway.config.gateway import GatewayConfig, Limits, ModelEntry
from runtime.api import EngineConfig
from runtime.core.request import RequestStatus
from tests.support.gateway_server import ServerThread, chat_body, http
from tests.support.processes import ServerProcess
from tests.support.redis_server import RedisServer

pytestmark = [pytest.mark.slow, pytest.mark.redis]

MODEL = "smollm2-135m"
# The engine shape of tests/gateway/test_tiers_e2e.py and tests/gateway/test_load.py: one set of compiled programs.
ENGINE = EngineConfig(
    model=MODEL, max_num_seqs=8, max_num_batched_tokens=128, max_model_len=512, kv_cache_bytes=32 << 20
)
ENGINE_YAML = {
    "dtype": "float32",
    "max_num_seqs": 8,
    "max_num_batched_tokens": 128,
    "max_model_len": 512,
    "kv_cache_mb": 32,
}
NO_CACHE = {"Cache-Control": "no-cache, no-store"}
QUESTIONS = [
    "What is the capital of France?",
    "Name three primary colours.",
    "What do bees make?",
    "Why is the sea salty?",
]


# ---------------------------------------------------------------- helpers


def ask(url, content, *, stop=None, max_tokens=16, stream=False, headers=None, timeout=120):
    body = chat_body(MODEL, content, temperature=0, max_tokens=max_tokens, stream=stream)
    if stop:
        body["stop"] = [stop]
    status, h, raw = http(url, body, headers=headers, timeout=timeout)
    return status, {k.lower(): v for k, v in h.items()}, raw.decode()


def answer_of(stream: bool, raw: str) -> tuple[str, str | None]:
    """(text, finish_reason) of a whole answer; AssertionError for a broken or unfinished one."""
    if not stream:
        choice = json.loads(raw)["choices"][0]
        return choice["message"]["content"], choice["finish_reason"]
    events = [e[6:] for e in raw.split("\n\n") if e.startswith("data: ")]
    assert events and events[-1] == "[DONE]", raw[-300:]
    chunks = [json.loads(e) for e in events[:-1]]
    assert not any("error" in c for c in chunks), raw[-300:]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices"))
    return text, chunks[-1]["choices"][0]["finish_reason"]


def stop_after(text: str, frac: float) -> str:
    """A piece of ``text`` whose first occurrence starts at or after ``frac`` of it: asked with it as a
    stop string, the same greedy answer ends there with finish_reason "stop"."""
    for pos in range(int(len(text) * frac), len(text) - 3):
        for end in range(pos + 4, min(pos + 24, len(text)) + 1):
            piece = text[pos:end]
            if text.find(piece) == pos and piece.strip():
                return piece
    raise AssertionError(f"no stop string after {frac:.0%} of {text!r}")


def learn_stops(url, questions, *, max_tokens, frac) -> dict[str, tuple[str, str]]:
    """question -> (stop string, the answer it yields), from greedy answers that are not cached
    (asked together: the engine batches them)."""

    def one(q):
        status, _, raw = ask(url, q, max_tokens=max_tokens, headers=NO_CACHE)
        assert status == 200, raw
        text = json.loads(raw)["choices"][0]["message"]["content"]
        stop = stop_after(text, frac)
        return q, (stop, text[: text.find(stop)])

    with concurrent.futures.ThreadPoolExecutor(len(questions)) as pool:
        return dict(pool.map(one, questions))


# ---------------------------------------------------------------- an in-process gateway on its own Redis


@pytest.fixture(scope="module")
def redis():
    with RedisServer.running() as r:
        yield r


@pytest.fixture(scope="module")
def gateway(redis):
    cache = {
        "store": "redis",
        "redis_url": redis.url,
        "redis_retry_s": 0.2,
        "redis_prefix": f"faults{time.time_ns()}:",
        # no live verification here: its background answers would keep the engine busy between tests,
        # and these tests count the engine's own requests (verification: tests/gateway/cache/test_verify*)
        "verify_share": 0.0,
        "verify_first": 0,
    }
    config = GatewayConfig(
        port=0, models=(ModelEntry(MODEL, ENGINE),), cache=cache, limits=Limits(default_max_tokens=16)
    )
    srv = ServerThread(create_app(config)).start(ready_timeout=600)
    yield srv
    srv.stop()


def engine_of(srv):
    return srv.app[keys.STATE].backends[MODEL].engine


# ---------------------------------------------------------------- Redis killed during load


def test_redis_killed_during_load(gateway, redis):
    url = gateway.url
    stops = learn_stops(url, QUESTIONS, max_tokens=16, frac=0.3)
    results = []  # (question, phase, stream, status, x-cache, x-cache-lookup, text, finish_reason)
    lock = threading.Lock()
    killed_at = restarting_at = restarted_at = math.inf  # monotonic times of the outage's edges
    stop = threading.Event()

    def phase_of(start: float, end: float) -> str:
        # under load a request's lookup can run seconds after it was sent (a busy event loop), so a
        # request counts as "down" only when Redis was dead from its first byte to its last
        if end < killed_at:
            return "up"
        if start >= killed_at and end <= restarting_at:
            return "down"
        if start >= restarted_at:
            return "restarted"
        return "mixed"

    def client(i):
        n = 0
        while not stop.is_set():
            q = QUESTIONS[(i + n) % len(QUESTIONS)]
            stream = (i + n) % 2 == 0
            started = time.monotonic()
            status, h, raw = ask(url, q, stop=stops[q][0], stream=stream)
            text, finish = answer_of(stream, raw) if status == 200 else (raw, None)
            with lock:  # the phase is the whole request's: one that overlaps a kill or a restart is "mixed"
                results.append(
                    (
                        q,
                        phase_of(started, time.monotonic()),
                        stream,
                        status,
                        h.get("x-cache"),
                        h.get("x-cache-lookup"),
                        text,
                        finish,
                    )
                )
            n += 1

    def count(where):
        with lock:
            return sum(1 for r in results if where(r))

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 60
        while count(lambda r: r[4] == "hit") < 8:  # Redis up: answers stored, then served from it
            assert time.monotonic() < deadline, "no cache hits before the outage"
            time.sleep(0.1)
        redis.kill()
        killed_at = down_at = time.monotonic()
        while time.monotonic() - down_at < 4 or count(lambda r: r[1] == "down") < 8:
            assert time.monotonic() - down_at < 60, "too few requests while Redis was down"
            time.sleep(0.1)
        restarting_at = time.monotonic()
        redis.start()  # a new, empty Redis on the same port
        restarted_at = time.monotonic()
        deadline = time.monotonic() + 30
        while count(lambda r: r[1] == "restarted" and r[4] == "hit") < 4:
            assert time.monotonic() < deadline, "hits did not resume after Redis came back"
            time.sleep(0.1)
    finally:
        stop.set()
        for t in threads:
            t.join(120)
    failed = [r for r in results if r[3] != 200 or r[7] != "stop"]
    assert not failed, failed[:5]
    for q, _, _, _, _, _, text, _ in results:  # every answer, hit or not, is the greedy one
        assert text == stops[q][1], (q, text)
    down = [r for r in results if r[1] == "down"]
    assert len(down) >= 8 and all(r[4] == "miss" for r in down)
    assert sum(r[5] == "error" for r in down) >= 4, "lookups during the outage were not counted as errors"
    _, _, metrics = http(url, path="/metrics", method="GET")
    assert 'gateway_cache_lookups_total{model="smollm2-135m",result="error"}' in metrics.decode()
    assert not any(r[3] >= 500 for r in results)
    print(
        f"\n{len(results)} requests: {sum(r[4] == 'hit' for r in results)} hits; {len(down)} while Redis was "
        f"down, all answered by the model"
    )


# ---------------------------------------------------------------- client disconnect mid-stream


def test_client_disconnect_stops_generation_within_one_step(gateway):
    engine = engine_of(gateway)
    assert not engine.has_unfinished_requests()
    conn = HTTPConnection("127.0.0.1", gateway.port, timeout=60)
    body = json.dumps(
        {
            "model": MODEL,
            "messages": [{"role": "user", "content": "Tell me a long story about a dragon."}],
            "temperature": 0,
            "max_tokens": 400,
            "stream": True,
        }
    )
    conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json", **NO_CACHE})
    resp = conn.getresponse()
    assert resp.status == 200
    events = 0
    while events < 6:  # a few tokens streamed: the request is decoding
        if resp.readline().startswith(b"data: "):
            events += 1
    (req,) = list(engine.scheduler.requests.values())
    conn.sock.shutdown(2)  # walk away mid-stream
    conn.sock.close()
    tokens_at_close, steps_at_close = req.num_output_tokens, engine.num_steps
    deadline = time.monotonic() + 30
    while req.status.is_finished is False and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.5)  # any further step would show now
    assert req.status is RequestStatus.FINISHED_ABORTED, req.status
    extra_tokens, extra_steps = req.num_output_tokens - tokens_at_close, engine.num_steps - steps_at_close
    print(
        f"\nafter the disconnect: {extra_tokens} more token(s), {extra_steps} more step(s); "
        f"{req.num_output_tokens} of 400 generated"
    )
    assert extra_tokens <= 1 and extra_steps <= 1, (extra_tokens, extra_steps)
    assert req.num_output_tokens < 400
    pool = engine.scheduler.kv_cache_manager
    assert not engine.has_unfinished_requests()
    assert pool.num_free_blocks == engine.num_blocks - 1  # every usable block (all but the null block)
    assert engine.stats().kv_cache_usage == 0


# ---------------------------------------------------------------- SIGTERM with streams in flight


def test_sigterm_drains_then_exits_with_the_cache_file_intact(tmp_path):
    cache_path = tmp_path / "cache" / "cache.jsonl"
    config = {
        "host": "127.0.0.1",
        "models": [{"name": MODEL, "preset": MODEL, "engine": ENGINE_YAML}],
        "limits": {"default_max_tokens": 16},
        "cache": {"enabled": True, "store": "file", "path": str(cache_path), "flush_interval_s": 0.5},
    }
    (tmp_path / "gateway.yaml").write_text(yaml.safe_dump(config))
    gw = ServerProcess(
        ["-m", "gateway", "--config", str(tmp_path / "gateway.yaml"), "--drain-timeout", "90"], name="gateway-sigterm"
    ).start()
    try:
        primed = learn_stops(gw.url, QUESTIONS[:2], max_tokens=16, frac=0.3)
        for q, (stop, _) in primed.items():  # stored before the signal
            assert ask(gw.url, q, stop=stop)[1]["x-cache"] == "miss"
            assert ask(gw.url, q, stop=stop)[1]["x-cache"] == "hit"
        long_qs = [
            "Describe a walk through a forest in autumn.",
            "Explain how a bicycle works.",
            "Write a short letter to a friend about a trip to the sea.",
            "What makes a good breakfast?",
        ]
        in_flight = learn_stops(gw.url, long_qs, max_tokens=48, frac=0.7)

        from openai import OpenAI

        client = OpenAI(base_url=gw.url + "/v1", api_key="sigterm-test", max_retries=0, timeout=120)
        started = threading.Barrier(len(long_qs) + 1, timeout=120)
        streamed: dict[str, tuple[str, str | None]] = {}

        def stream_one(q):
            stop, _ = in_flight[q]
            chunks = client.chat.completions.create(
                model=MODEL,
                stream=True,
                temperature=0,
                max_tokens=48,
                stop=[stop],
                messages=[{"role": "user", "content": q}],
            )
            text, finish, first = [], None, True
            for chunk in chunks:
                if chunk.choices and chunk.choices[0].delta.content:
                    text.append(chunk.choices[0].delta.content)
                    if first:
                        first = False
                        started.wait()
                if chunk.choices and chunk.choices[0].finish_reason:
                    finish = chunk.choices[0].finish_reason
            streamed[q] = ("".join(text), finish)

        threads = [threading.Thread(target=stream_one, args=(q,), daemon=True) for q in long_qs]
        for t in threads:
            t.start()
        started.wait()  # every stream has its first tokens
        t_signal = time.monotonic()
        os.kill(gw.proc.pid, signal.SIGTERM)
        refused = []
        while any(t.is_alive() for t in threads) and time.monotonic() - t_signal < 60:
            try:
                refused.append(ask(gw.url, f"A new question at {time.monotonic()}", headers=NO_CACHE))
                refused.append(http(gw.url, path="/readyz", method="GET"))
            except OSError:  # the drain ended between the check above and this request: closed, as it should be
                if any(t.is_alive() for t in threads):
                    raise
                break
            time.sleep(0.2)
        for t in threads:
            t.join(120)
        code = gw.proc.wait(120)
    finally:
        gw.stop()
    log = gw.log_tail(80)
    assert code == 0, log
    assert refused, "the streams ended before any new request could be sent during the drain"
    for status, headers, raw in refused:
        headers = {k.lower(): v for k, v in headers.items()}
        err = json.loads(raw)["error"]
        assert status == 503 and int(headers["retry-after"]) > 0, (status, raw)
        assert err["code"] == "draining" and err["type"] == "service_unavailable" and err["message"]
    assert set(streamed) == set(long_qs), "an in-flight stream did not finish"
    for q, (text, finish) in streamed.items():
        assert finish == "stop" and text == in_flight[q][1], (q, text, finish)
    assert "drain complete" in log

    # the file the closing cache wrote: a header, then one JSON entry per line, no temp file left over
    lines = cache_path.read_text(encoding="utf-8").splitlines()
    header, entries = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert header["entries"] == len(entries)
    assert not [p for p in cache_path.parent.iterdir() if p.name != cache_path.name]
    store = FileStore(cache_path, ttl_seconds=3600, max_entries=1000)
    asyncio.run(store.open())
    reloaded = {e.question: e for e in asyncio.run(_entries(store))}
    expected = {q: a for q, (_, a) in {**primed, **in_flight}.items()}
    assert set(reloaded) == set(expected), (set(reloaded), set(expected))  # drained answers were flushed at close
    for q, e in reloaded.items():
        assert e.answer == expected[q] and e.finish_reason == "stop" and e.embedding is not None


async def _entries(store):
    return [e async for e in store.iter_entries()]
