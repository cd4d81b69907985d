"""Tiers end to end: Gemma 3 270M in a runtime server process as the large tier, SmolLM2 in the
gateway's process as the small one, real HTTP throughout.

The headline check: the large tier's process is killed (SIGKILL) in the middle of a run of 120
requests, streaming and not, and every request is still answered, by the fallback tier.
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time

import pytest

from gateway.app import create_app
from gateway.config.gateway import GatewayConfig, Limits, ModelEntry
from gateway.config.tiers import parse_tiers
from runtime.api import EngineConfig
from tests.support.gateway_server import ServerThread, chat_body, http
from tests.support.processes import ServerProcess

ENGINE_FLAGS = [
    "--max-num-seqs",
    "8",
    "--max-num-batched-tokens",
    "128",
    "--max-model-len",
    "512",
    "--kv-cache-mb",
    "32",
]


@pytest.fixture(scope="module")
def tiers():
    large = ServerProcess(["-m", "runtime.server", "--model", "gemma3-270m", *ENGINE_FLAGS], name="large").start()
    spec = parse_tiers(
        {
            "tiers": [
                {
                    "name": "large",
                    "model": "gemma3-270m",
                    "url": large.url,
                    "fallback": ["small"],
                    "timeout_s": 30,
                    "price": {"input_per_mtok": 0.6, "output_per_mtok": 2.4},
                },
                {"name": "small", "model": "smollm2-135m", "price": {"input_per_mtok": 0.1, "output_per_mtok": 0.4}},
            ],
            "router": {"default": "small", "escalate_to": "large"},
            "keys": {"entries": [{"name": "tight", "key_env": "E2E_TIGHT_KEY", "budget_usd": 0.00001}]},
        },
        ["smollm2-135m"],
        env={"E2E_TIGHT_KEY": "sk-tight"},
    )
    engine = EngineConfig(
        model="smollm2-135m", max_num_seqs=8, max_num_batched_tokens=128, max_model_len=512, kv_cache_bytes=32 << 20
    )
    config = GatewayConfig(
        port=0, models=(ModelEntry("smollm2-135m", engine),), tiers=spec, limits=Limits(default_max_tokens=8)
    )
    try:  # a gateway that never starts must not leave the large tier's process behind
        gateway = ServerThread(create_app(config, cache_enabled=False)).start()
    except BaseException:
        large.stop()
        raise
    deadline = time.monotonic() + 30  # the gateway polls the runtime server once a second
    try:
        while json.loads(http(gateway.url, path="/readyz", method="GET")[2])["models"]["large"] is not True:
            assert time.monotonic() < deadline, "the large tier never showed up as ready"
            time.sleep(0.2)
        yield gateway, large
    finally:
        gateway.stop()
        large.stop()


def ask(url, content, model="auto", stream=False, key="e2e", max_tokens=8, timeout=120):
    body = chat_body(model, content, temperature=0, max_tokens=max_tokens, stream=stream)
    status, headers, raw = http(url, body, headers={"Authorization": f"Bearer {key}"}, timeout=timeout)
    return status, {k.lower(): v for k, v in headers.items()}, raw.decode()


def complete(stream: bool, body: str) -> bool:
    """A whole answer: a finish_reason, and for a stream the closing [DONE] and no error event."""
    if not stream:
        return json.loads(body)["choices"][0]["finish_reason"] in ("stop", "length")
    events = [e[6:] for e in body.split("\n\n") if e.startswith("data: ")]
    chunks = [json.loads(e) for e in events[:-1]]
    return (
        events[-1] == "[DONE]"
        and not any("error" in c for c in chunks)
        and chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    )


def test_routing_and_budgets_across_processes(tiers):
    gateway, _ = tiers
    # auto never gives a chat request to the pretrained model (it cannot chat): maths goes to small
    status, h, body = ask(gateway.url, "What is 17 * 23?")
    assert status == 200 and h["x-route-tier"] == "small" and h["x-served-by"] == "small", body
    assert "maths markers" in h["x-route-reason"] and "large cannot do chat" in h["x-route-reason"]
    assert json.loads(body)["model"] == "smollm2-135m"  # the model that answered
    # ... but text continuation is what it does: auto escalates a maths completion to it
    status, h, body = http(
        gateway.url,
        {"model": "auto", "prompt": "Question: what is 17 * 23?\nAnswer:", "max_tokens": 6, "temperature": 0},
        path="/v1/completions",
        headers={"Authorization": "Bearer e2e"},
    )
    out = json.loads(body)
    assert status == 200 and h["x-served-by"] == "large" and out["model"] == "gemma3-270m", body
    assert out["object"] == "text_completion" and out["usage"]["completion_tokens"] > 0
    # named explicitly, a tier answers chat whatever its model (the reason says what it is made for)
    status, h, body = ask(gateway.url, "What is 17 * 23?", model="large")
    assert status == 200 and h["x-served-by"] == "large" and "not made for chat" in h["x-route-reason"], body
    assert float(h["x-cost-usd"]) > 0
    status, h, _ = ask(gateway.url, "Hello! How are you today?")
    assert status == 200 and h["x-served-by"] == "small" and h["x-route-reason"] == "short general request"
    _, _, raw = http(gateway.url, path="/v1/usage", method="GET", headers={"Authorization": "Bearer e2e"})
    usage = json.loads(raw)
    assert set(usage["by_tier"]) == {"large", "small"} and usage["cost_usd"] > 0
    # a key whose budget one large answer exceeds: the next request is 429, and says why
    assert ask(gateway.url, "What is 2 * 21?", key="sk-tight", model="large")[0] == 200
    status, h, body = ask(gateway.url, "What is 2 * 21?", key="sk-tight", model="large")
    err = json.loads(body)["error"]
    assert status == 429 and err["code"] == "budget_exceeded" and int(h["retry-after"]) > 0


def test_killing_the_large_tier_loses_no_request(tiers):
    gateway, large = tiers
    n = 120
    prompts = [f"Solve {i} + {i * 7} step by step." if i % 2 else f"What is {i} * 3?" for i in range(n)]
    done, took = [], []
    lock = threading.Lock()

    def one(i):
        stream = i % 3 == 0
        t = time.perf_counter()
        # The chain may take up to the large tier's timeout_s (30 s) and then the small tier's (60 s) per
        # token before it answers: a client limit below that would test this machine's load, not fallback.
        try:
            status, h, body = ask(gateway.url, prompts[i], model="large", stream=stream, timeout=300)
        except OSError as exc:  # named in the failure below, with how long it waited
            status, h, body = None, {}, f"{exc!r} after {time.perf_counter() - t:.0f} s"
        with lock:
            done.append(i)
            took.append((time.perf_counter() - t, i))
        return i, stream, status, h, body

    killed_after = None
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(one, i) for i in range(n)]
        while True:  # kill the large tier a quarter of the way through, with requests in flight
            with lock:
                if len(done) >= n // 4:
                    killed_after = len(done)
                    break
            time.sleep(0.05)
        large.kill()
        results = [f.result(timeout=600) for f in futures]
    print("slowest requests (s, index):", sorted(took)[-5:], "killed after", killed_after)
    failed = [(i, s, b[:200]) for i, _, s, _, b in results if s != 200]
    assert not failed, failed
    incomplete = [i for i, stream, _, _, body in results if not complete(stream, body)]
    assert not incomplete, incomplete
    by = [h["x-served-by"] for *_, h, _ in results]
    assert by.count("large") >= killed_after  # everything before the kill was the large tier's
    fell = [h for *_, h, _ in results if h.get("x-fallback")]
    assert len(fell) >= n // 2  # after the kill: answered by the fallback tier
    assert all(h["x-served-by"] == "small" and h["x-fallback"].startswith("large->small") for h in fell)
    assert all(h["x-route-tier"] == "large" for *_, h, _ in results)
    status, _, raw = http(gateway.url, path="/readyz", method="GET")
    assert status == 200 and json.loads(raw)["models"] == {"large": False, "small": True}
    _, _, metrics = http(gateway.url, path="/metrics", method="GET")
    assert 'gateway_fallbacks_total{cause="unavailable",tier="large",to="small"}' in metrics.decode()
