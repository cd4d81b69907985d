"""End to end on the real model: SmolLM2 behind the gateway, driven by the official openai client."""

from __future__ import annotations

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from tests.support.cached_gateway import PLUMBING
from tests.support.gateway_server import smollm2_gateway

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("cache") / "cache.jsonl")
    # plumbing thresholds: the paraphrase below is a semantic hit at them; the shipped, calibrated ones
    # (cosine 0.96 under the 1% bound) are measured in docs/CACHE_EVAL.md, not asserted here
    srv = smollm2_gateway(cache, max_num_seqs=2, default_max_tokens=48, cache=PLUMBING)
    yield srv
    srv.stop()


def test_smollm2_answers_through_the_openai_client(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="k1", max_retries=0)
    question = [{"role": "user", "content": "What is the capital of France?"}]
    r = client.chat.completions.with_raw_response.create(model="smollm2-135m", messages=question, temperature=0)
    first = r.parse()
    assert r.headers["x-cache"] == "miss"
    assert "Paris" in first.choices[0].message.content
    assert first.choices[0].finish_reason == "stop"
    # The same question again: answered from the cache, same shape, streaming included.
    r2 = client.chat.completions.with_raw_response.create(model="smollm2-135m", messages=question, temperature=0)
    assert r2.headers["x-cache"] == "hit"
    assert r2.parse().choices[0].message.content == first.choices[0].message.content
    stream = client.chat.completions.create(model="smollm2-135m", messages=question, temperature=0, stream=True)
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == first.choices[0].message.content


def ask(client, content: str, **params):
    r = client.chat.completions.with_raw_response.create(
        model="smollm2-135m", messages=[{"role": "user", "content": content}], temperature=0, **params
    )
    return r.headers, r.parse()


def test_the_cache_serves_what_users_asked_for(server):
    """Issue 16 through the official client on the real model: a greedy answer cut at max_tokens is a hit
    the second time and is exactly what the model gives for that max_tokens; a paraphrase is a hit; look-
    alikes (another entity, a negation, another number) miss."""
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="k2", max_retries=0)
    q = "How do volcanoes form?"
    h1, first = ask(client, q, max_tokens=16)
    h2, second = ask(client, q, max_tokens=16)
    assert h1["x-cache"] == "miss" and first.choices[0].finish_reason == "length"
    assert h2["x-cache"] == "hit" and second.choices[0].message.content == first.choices[0].message.content
    assert second.choices[0].finish_reason == "length" and second.usage.completion_tokens == 16
    # fewer tokens: the stored answer cut, identical to what the model itself gives (cache bypassed)
    h3, cut = ask(client, q, max_tokens=5)
    _, model = ask(client, q, max_tokens=5, extra_headers={"Cache-Control": "no-cache, no-store"})
    assert h3["x-cache"] == "hit" and cut.choices[0].message.content == model.choices[0].message.content
    assert cut.choices[0].finish_reason == "length" and cut.usage.completion_tokens == 5
    # an answer that finished by itself serves a larger max_tokens whole, with "stop"
    fact = "What is the capital of Italy?"
    _, whole = ask(client, fact, max_tokens=40)
    assert whole.choices[0].finish_reason == "stop"
    h4, more = ask(client, fact, max_tokens=200)
    assert h4["x-cache"] == "hit" and more.choices[0].message.content == whole.choices[0].message.content
    assert more.choices[0].finish_reason == "stop"
    # a paraphrase hits; look-alikes miss
    h5, para = ask(client, "What's the capital city of Italy?", max_tokens=40)
    assert h5["x-cache"] == "hit" and h5["x-cache-lookup"] == "semantic", dict(h5)
    for look_alike in ("What is the capital of Spain?", "What was the capital of Italy in 1850?"):
        h, _ = ask(client, look_alike, max_tokens=8)
        assert h["x-cache"] == "miss", (look_alike, dict(h))
