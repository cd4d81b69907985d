"""End to end on the real model: SmolLM2 behind the gateway, driven by the official openai client."""

from __future__ import annotations

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from gateway.app import create_app
from gateway.config.gateway import GatewayConfig, Limits, ModelEntry
from runtime.api import EngineConfig
from tests.support.gateway_server import ServerThread

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    engine = EngineConfig(
        model="smollm2-135m", max_num_seqs=2, max_num_batched_tokens=64, max_model_len=512, num_blocks=64
    )
    cache = {"store": "file", "path": str(tmp_path_factory.mktemp("cache") / "cache.jsonl")}
    config = GatewayConfig(
        port=0, models=(ModelEntry("smollm2-135m", engine),), cache=cache, limits=Limits(default_max_tokens=48)
    )
    srv = ServerThread(create_app(config)).start()
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
