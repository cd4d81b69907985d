"""The gateway over real HTTP: the official openai client, raw requests for bad input, a tiny real engine."""

from __future__ import annotations

import json
import time

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from gateway import keys
from gateway.config.gateway import Limits
from tests.support.gateway_server import http
from tests.support.tiny_gateway import tiny_gateway


@pytest.fixture(scope="module")
def server(tiny_path):
    limits = Limits(max_body_bytes=64 * 1024, max_messages=16, default_max_tokens=16)
    srv = tiny_gateway(tiny_path, limits=limits, cache_enabled=False)
    yield srv
    srv.stop()


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="test-key", max_retries=0)


def post(server, body, **kw):
    return http(server.url, body, **kw)


MSG = [{"role": "user", "content": "hello there"}]


def test_non_streaming_completion(client):
    r = client.chat.completions.create(model="tiny", messages=MSG, max_tokens=8, temperature=0)
    assert r.object == "chat.completion" and r.id.startswith("chatcmpl-") and r.model == "tiny"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.prompt_tokens > 0 and 0 < r.usage.completion_tokens <= 8
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_streaming_equals_non_streaming(client):
    whole = client.chat.completions.create(model="tiny", messages=MSG, max_tokens=12, temperature=0)
    chunks = list(
        client.chat.completions.create(
            model="tiny",
            messages=MSG,
            max_tokens=12,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == [whole.choices[0].finish_reason]
    assert chunks[-1].usage.completion_tokens == whole.usage.completion_tokens


def test_sampling_params_and_seed(client):
    kw = dict(model="tiny", messages=MSG, max_tokens=10, temperature=1.0, top_p=0.9, seed=7)
    a = client.chat.completions.create(**kw).choices[0].message.content
    b = client.chat.completions.create(**kw).choices[0].message.content
    assert a == b  # same seed, same answer


def test_stop_string(client):
    whole = client.chat.completions.create(model="tiny", messages=MSG, max_tokens=16, temperature=0)
    text = whole.choices[0].message.content
    assert len(text) >= 6, f"the tiny model's answer is too short to cut: {text!r}"
    stop = text[3:5]
    cut = client.chat.completions.create(model="tiny", messages=MSG, max_tokens=16, temperature=0, stop=[stop])
    assert cut.choices[0].message.content == text[: text.index(stop)]
    assert cut.choices[0].finish_reason == "stop"


def test_models_health_ready_metrics(server, client):
    cards = client.models.list().data
    assert [m.id for m in cards] == ["auto", "tiny", "all-minilm-l6-v2"]
    tiny = client.models.retrieve("tiny")
    assert tiny.tier == "tiny" and tiny.context_length > 0 and "chat" in tiny.capabilities
    with pytest.raises(openai.NotFoundError) as exc:
        client.models.retrieve("gpt-9")
    assert exc.value.body["code"] == "model_not_found" and "tiny" in exc.value.body["message"]
    for path in ("/healthz", "/readyz"):
        status, _, body = post(server, None, path=path, method="GET")
        assert status == 200, body
    client.chat.completions.create(model="tiny", messages=MSG, max_tokens=2)
    status, headers, body = post(server, None, path="/metrics", method="GET")
    text = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert 'gateway_requests_total{model="tiny",status="200"}' in text
    assert "num_requests_running" in text and "kv_cache_usage_perc" in text


BAD = [
    ("malformed json", None, b"{not json", {}, 400, None),
    ("empty body", None, b"", {}, 400, None),
    ("not an object", [1, 2], None, {}, 400, None),
    ("missing model", {"messages": MSG}, None, {}, 400, "model"),
    ("missing messages", {"model": "tiny"}, None, {}, 400, "messages"),
    ("empty messages", {"model": "tiny", "messages": []}, None, {}, 400, "messages"),
    ("messages not a list", {"model": "tiny", "messages": "hi"}, None, {}, 400, "messages"),
    (
        "bad role",
        {"model": "tiny", "messages": [{"role": "wizard", "content": "x"}]},
        None,
        {},
        400,
        "messages[0].role",
    ),
    (
        "content not text",
        {"model": "tiny", "messages": [{"role": "user", "content": 5}]},
        None,
        {},
        400,
        "messages[0].content",
    ),
    ("last not user", {"model": "tiny", "messages": [{"role": "assistant", "content": "x"}]}, None, {}, 400, None),
    ("temperature range", {"model": "tiny", "messages": MSG, "temperature": 5}, None, {}, 400, "temperature"),
    ("top_p zero", {"model": "tiny", "messages": MSG, "top_p": 0}, None, {}, 400, "top_p"),
    # past 1e308 an int has no float: math.isfinite() raised OverflowError (a 500, found by the fuzzer)
    (
        "temperature huge int",
        {"model": "tiny", "messages": MSG, "temperature": 7 * 10**400},
        None,
        {},
        400,
        "temperature",
    ),
    ("top_p huge negative int", {"model": "tiny", "messages": MSG, "top_p": -(10**400)}, None, {}, 400, "top_p"),
    ("max_tokens huge int", {"model": "tiny", "messages": MSG, "max_tokens": 10**400}, None, {}, 400, "max_tokens"),
    ("max_tokens zero", {"model": "tiny", "messages": MSG, "max_tokens": 0}, None, {}, 400, "max_tokens"),
    ("max_tokens type", {"model": "tiny", "messages": MSG, "max_tokens": "9"}, None, {}, 400, "max_tokens"),
    ("max_tokens too big", {"model": "tiny", "messages": MSG, "max_tokens": 100000}, None, {}, 400, "max_tokens"),
    ("stop too many", {"model": "tiny", "messages": MSG, "stop": ["a", "b", "c", "d", "e"]}, None, {}, 400, "stop"),
    ("n=9", {"model": "tiny", "messages": MSG, "n": 9}, None, {}, 400, "n"),
    ("stream type", {"model": "tiny", "messages": MSG, "stream": "yes"}, None, {}, 400, "stream"),
    ("too many messages", {"model": "tiny", "messages": MSG * 17}, None, {}, 400, "messages"),
    ("unknown model", {"model": "gpt-9", "messages": MSG}, None, {}, 404, "model"),
    ("wrong content type", None, b"model=tiny", {"Content-Type": "text/plain"}, 415, None),
    ("oversized body", {"model": "tiny", "messages": [{"role": "user", "content": "x" * 70000}]}, None, {}, 413, None),
]


@pytest.mark.parametrize("name,body,raw,headers,status,param", BAD, ids=[b[0] for b in BAD])
def test_bad_input_gets_openai_error(server, name, body, raw, headers, status, param):
    code, _, payload = post(server, body, raw=raw, headers=headers)
    assert code == status, payload
    err = json.loads(payload)["error"]
    assert set(err) >= {"message", "type", "param", "code"} and err["message"]
    if param:
        assert err["param"] == param


def test_wrong_method_and_path(server):
    code, headers, payload = post(server, None, method="GET")
    assert code == 405 and "error" in json.loads(payload)
    code, _, payload = post(server, {}, path="/v1/nope")
    assert code == 404 and "error" in json.loads(payload)


def test_openai_client_sees_errors(client):
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=MSG)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="tiny", messages=MSG, temperature=9)


def test_client_disconnect_aborts_generation(server):
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    body = json.dumps({"model": "tiny", "messages": MSG, "max_tokens": 200, "stream": True})
    conn.request("POST", "/v1/chat/completions", body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    assert resp.status == 200
    resp.readline()  # the first event arrived: the request is running
    conn.sock.close()  # walk away mid-stream
    conn.close()

    async def inspect():
        b = server.app[keys.STATE].backends["tiny"]
        return (
            b.engine.has_unfinished_requests(),
            b.engine.scheduler.kv_cache_manager.num_free_blocks,
            b.engine.num_blocks,
        )

    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        busy, free, total = server.call(inspect)
        if not busy:
            break
        time.sleep(0.1)
    assert not busy and free == total - 1
