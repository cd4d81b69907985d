"""The gateway with its semantic cache on: hits in the shape of misses, scopes, bypass headers, Redis outages.

The tiny model rarely ends on its own, so each test first learns its greedy answer, then asks with a
stop string taken from it: the answer then finishes with "stop" and is eligible for the cache.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from tests.support.cached_gateway import chat, file_cache, start, stop_for
from tests.support.redis_server import RedisServer


@pytest.fixture(scope="module")
def server(tiny_path, tmp_path_factory):
    from gateway.config.gateway import RecordConfig

    recording = tmp_path_factory.mktemp("rec") / "shapes.jsonl"
    srv = start(tiny_path, file_cache(tmp_path_factory), record=RecordConfig(str(recording)))
    srv.recording = recording
    yield srv
    srv.stop()


def sse_events(body: str) -> list:
    return [e[len("data: ") :] for e in body.split("\n\n") if e.startswith("data: ")]


def test_hit_has_the_shape_of_a_miss(server):
    q = [{"role": "user", "content": "the cat sat on the mat"}]
    stop = stop_for(server, q[0]["content"])
    h1, miss = chat(server, q, stop=[stop])
    h2, hit = chat(server, q, stop=[stop])
    assert h1["x-cache"] == "miss" and h2["x-cache"] == "hit" and h2["x-cache-lookup"] == "exact"
    miss, hit = json.loads(miss), json.loads(hit)
    assert miss["choices"][0]["finish_reason"] == "stop"
    for d in (miss, hit):
        d.pop("id"), d.pop("created")
    # the usage differs only where it should: a hit's whole prompt is cached, and it says what it saved
    u_miss, u_hit = miss.pop("usage"), hit.pop("usage")
    assert u_hit.pop("cost_saved_usd") >= 0 and "cost_saved_usd" not in u_miss
    assert u_hit.pop("prompt_tokens_details") == {"cached_tokens": u_hit["prompt_tokens"]}
    assert 0 <= u_miss.pop("prompt_tokens_details")["cached_tokens"] <= u_miss["prompt_tokens"]
    assert u_hit == u_miss
    assert hit == miss
    # streaming: same events, same content, whether it came from the engine or the cache
    _, s_hit = chat(server, q, stop=[stop], stream=True)
    _, s_miss = chat(server, q, stop=[stop], stream=True, headers={"Cache-Control": "no-cache, no-store"})
    ev_hit, ev_miss = sse_events(s_hit), sse_events(s_miss)
    assert ev_hit[-1] == ev_miss[-1] == "[DONE]"

    def content(events):
        return "".join(json.loads(e)["choices"][0]["delta"].get("content", "") for e in events[:-1])

    assert content(ev_hit) == content(ev_miss) == miss["choices"][0]["message"]["content"]
    assert json.loads(ev_hit[0])["choices"][0]["delta"]["role"] == "assistant"
    assert json.loads(ev_hit[-2])["choices"][0]["finish_reason"] == "stop"


def test_semantic_hit_and_scopes(server):
    q = [{"role": "user", "content": "How do I boil an egg?"}]
    stop = stop_for(server, q[0]["content"])
    chat(server, q, stop=[stop])
    h, _ = chat(server, [{"role": "user", "content": "how do I boil an egg"}], stop=[stop])
    assert h["x-cache"] == "hit"
    h, _ = chat(server, [{"role": "user", "content": "How should I boil an egg?"}], stop=[stop])
    assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "semantic" and float(h["x-cache-similarity"]) > 0.8
    # another tenant, another system prompt, other parameters, other history: never served
    assert chat(server, q, key="k2", stop=[stop])[0]["x-cache"] == "miss"
    sys_q = [{"role": "system", "content": "Answer in French."}] + q
    assert chat(server, sys_q, stop=[stop])[0]["x-cache"] == "miss"
    assert chat(server, q, stop=[stop], temperature=0.5, seed=3)[0]["x-cache"] == "miss"
    hist = [{"role": "user", "content": "I have a duck."}, {"role": "assistant", "content": "Nice."}] + q
    assert chat(server, hist, stop=[stop])[0]["x-cache"] == "miss"
    # a negated look-alike is rejected by the guard
    h, _ = chat(server, [{"role": "user", "content": "How do I not boil an egg?"}], stop=[stop])
    assert h["x-cache"] == "miss"


def test_the_recording_keeps_each_lookup_for_a_threshold_replay(server):
    """Every answered request's lookup kind and best similarity go to the recording (never its text), and
    a cache-threshold replay re-decides them: a stricter threshold turns the semantic hit into a miss."""
    from gateway.advise.recording import cache_outcome, load

    q = "Where do herons build their nests?"
    stop = stop_for(server, q)
    asked = [q, q, "where do herons build nests", "Where do herons not build their nests?"]
    seen = [chat(server, [{"role": "user", "content": x}], stop=[stop])[0] for x in asked]
    assert [h["x-cache-lookup"] for h in seen] == ["miss", "exact", "semantic", "guard_rejected"]
    lines = load(server.recording, reached_a_model=False)[-4:]
    assert [x["lookup"] for x in lines] == ["miss", "exact", "semantic", "guard_rejected"]
    assert [x["cache"] for x in lines] == ["miss", "hit", "hit", "miss"]
    for line, h in zip(lines, seen):
        assert line["similarity"] == (round(float(h["x-cache-similarity"]), 4) if "x-cache-similarity" in h else None)
    semantic = lines[2]["similarity"]
    assert [cache_outcome(x, None) for x in lines] == ["miss", "hit", "hit", "miss"]  # as recorded
    assert [cache_outcome(x, min(1.0, semantic + 0.001)) for x in lines] == ["miss", "hit", "miss", "miss"]
    assert "herons" not in server.recording.read_text()


def test_bypass_headers_and_truncated_answers(server):
    q = [{"role": "user", "content": "tell me about rivers"}]
    stop = stop_for(server, q[0]["content"])
    chat(server, q, stop=[stop], headers={"Cache-Control": "no-store"})
    assert chat(server, q, stop=[stop], headers={"Cache-Control": "no-store"})[0]["x-cache"] == "miss"
    chat(server, q, stop=[stop])  # stored now
    h, _ = chat(server, q, stop=[stop], headers={"Cache-Control": "no-cache"})
    assert h["x-cache"] == "miss" and h["x-cache-lookup"] == "bypass"
    assert chat(server, q, stop=[stop])[0]["x-cache"] == "hit"
    # sampled requests without a seed are not cached under the "seeded" policy
    assert chat(server, q, stop=[stop], temperature=0.7)[0]["x-cache-lookup"] == "bypass"
    # a seeded sampled answer that reached max_tokens is not stored (its length is part of its scope)
    for _ in range(2):
        h, _ = chat(server, q, temperature=0.7, seed=5, max_tokens=4)
    assert h["x-cache"] == "miss"


def test_greedy_answers_are_served_cut_to_max_tokens(server):
    """A greedy answer is one token sequence: a stored one serves any shorter max_tokens, cut, with the
    finish_reason the model gives; the same request twice is a hit even when it hit its limit."""
    q = [{"role": "user", "content": "the history of bridges"}]
    ref = {}
    for n in (3, 6, 12):  # the model's own answers, cache bypassed
        h, body = chat(server, q, max_tokens=n, headers={"Cache-Control": "no-cache, no-store"})
        ref[n] = json.loads(body)
    for d in ref.values():
        d.pop("id"), d.pop("created")
    assert all(ref[n]["choices"][0]["finish_reason"] == "length" for n in ref)
    h, _ = chat(server, q, max_tokens=6)
    assert h["x-cache"] == "miss"
    h, body = chat(server, q, max_tokens=6)  # the same request again: served whole
    assert h["x-cache"] == "hit"
    h, body = chat(server, q, max_tokens=3)  # fewer: the first 3 tokens, "length"
    d = json.loads(body)
    d.pop("id"), d.pop("created")
    (
        d["usage"].pop("cost_saved_usd"),
        d["usage"].pop("prompt_tokens_details"),
        ref[3]["usage"].pop("prompt_tokens_details"),
    )
    assert h["x-cache"] == "hit" and d == ref[3]
    h, _ = chat(server, q, max_tokens=12)  # more than it holds: a miss, and the longer answer replaces it
    assert h["x-cache"] == "miss"
    h, body = chat(server, q, max_tokens=6)
    d = json.loads(body)
    d.pop("id"), d.pop("created")
    (
        d["usage"].pop("cost_saved_usd"),
        d["usage"].pop("prompt_tokens_details"),
        ref[6]["usage"].pop("prompt_tokens_details"),
    )
    assert h["x-cache"] == "hit" and d == ref[6]


def test_openai_client_streaming_hit(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="k9", max_retries=0)
    q = [{"role": "user", "content": "a b c d e f"}]
    stop = stop_for(server, q[0]["content"])
    first = client.chat.completions.create(model="tiny", messages=q, temperature=0, max_tokens=16, stop=[stop])
    chunks = list(
        client.chat.completions.create(model="tiny", messages=q, temperature=0, max_tokens=16, stop=[stop], stream=True)
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == first.choices[0].message.content
    with urllib.request.urlopen(server.url + "/metrics") as r:
        assert r.status == 200
        body = r.read().decode()
    assert 'gateway_cache_lookups_total{model="tiny",result="exact"}' in body


# ---------------------------------------------------------------- Redis outage


@pytest.fixture(scope="module")
def redis():
    with RedisServer.running() as r:
        yield r


@pytest.mark.redis
def test_redis_outage_degrades_then_recovers(tiny_path, redis):
    srv = start(
        tiny_path,
        {"store": "redis", "redis_url": redis.url, "redis_retry_s": 0.2, "redis_prefix": f"t{time.time_ns()}:"},
    )
    try:
        q = [{"role": "user", "content": "the cat sat on the mat"}]
        stop = stop_for(srv, q[0]["content"])
        chat(srv, q, stop=[stop])
        assert chat(srv, q, stop=[stop])[0]["x-cache"] == "hit"
        redis.shutdown()
        for _ in range(3):  # still answered, by the model
            h, body = chat(srv, q, stop=[stop])
            assert json.loads(body)["choices"][0]["message"]["content"]
        metrics = urllib.request.urlopen(srv.url + "/metrics").read().decode()
        assert 'result="error"' in metrics
        redis.start()  # empty, on the same port
        deadline = time.monotonic() + 10
        hit = False
        while time.monotonic() < deadline and not hit:
            chat(srv, q, stop=[stop])  # stores again (the restarted Redis is empty)
            hit = chat(srv, q, stop=[stop])[0]["x-cache"] == "hit"
            time.sleep(0.2)
        assert hit, "hits did not resume after Redis came back"
    finally:
        srv.stop()
