"""The sampling fields of the chat API end to end: the official openai client -> gateway -> SmolLM2's engine
(its jitted sampler) and back, streaming and not; and the runtime server protocol carrying them."""

from __future__ import annotations

import math

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from runtime.api import RequestOutput, SamplingParams
from runtime.serving import protocol
from tests.support.gateway_server import smollm2_gateway

QUESTION = [{"role": "user", "content": "Name three colours."}]


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = str(tmp_path_factory.mktemp("cache") / "cache.jsonl")
    srv = smollm2_gateway(cache, max_num_seqs=4, default_max_tokens=24)
    yield openai.OpenAI(base_url=srv.url + "/v1", api_key="k", max_retries=0)
    srv.stop()


def ask(client, messages=QUESTION, **params):
    r = client.chat.completions.with_raw_response.create(
        model="smollm2-135m",
        messages=messages,
        **{"temperature": 0, "max_tokens": 16, "extra_headers": {"Cache-Control": "no-store"}, **params},
    )
    return r.headers, r.parse()


@pytest.mark.slow
def test_logprobs_whole_and_streamed(client):
    h, r = ask(client, logprobs=True, top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert h["x-cache-lookup"] == "bypass"  # a stored answer has no log-probabilities
    assert "".join(e.token for e in content) == r.choices[0].message.content
    assert len(content) == r.usage.completion_tokens or r.choices[0].finish_reason == "stop"
    for e in content:
        assert e.logprob <= 0 and len(e.top_logprobs) == 3
        assert e.top_logprobs[0].token == e.token  # greedy: the chosen token is the likeliest
        assert e.top_logprobs[0].logprob >= e.top_logprobs[1].logprob >= e.top_logprobs[2].logprob
        assert bytes(e.bytes).decode() == e.token
    stream = client.chat.completions.create(
        model="smollm2-135m", messages=QUESTION, temperature=0, max_tokens=16, logprobs=True, stream=True
    )
    text, entries = "", []
    for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
            if chunk.choices[0].logprobs is not None:
                entries += chunk.choices[0].logprobs.content
    assert text == r.choices[0].message.content
    assert [e.token for e in entries] == [e.token for e in content]
    assert all(math.isclose(a.logprob, b.logprob, abs_tol=1e-4) for a, b in zip(entries, content))
    assert all(e.top_logprobs == [] for e in entries)  # top_logprobs not asked for
    _, plain = ask(client)
    assert plain.choices[0].logprobs is None and plain.choices[0].message.content == r.choices[0].message.content


@pytest.mark.slow
def test_sampling_fields_change_the_answer_as_they_should(client):
    _, greedy = ask(client)
    # top_k=1 at temperature 1 is greedy; so is min_p=1
    _, k1 = ask(client, temperature=1.0, seed=5, extra_body={"top_k": 1})
    _, p1 = ask(client, temperature=1.0, seed=5, extra_body={"min_p": 1.0})
    assert k1.choices[0].message.content == p1.choices[0].message.content == greedy.choices[0].message.content
    # a large logit_bias forces a token ("!" is one token)
    _, forced = ask(client, max_tokens=5, logit_bias={"17": 100})
    assert forced.choices[0].message.content == "!!!!!" and forced.usage.completion_tokens == 5
    # min_tokens holds the end back: the short answer runs on to max_tokens
    _, short = ask(client, [{"role": "user", "content": "Say hi."}], max_tokens=40)
    assert short.choices[0].finish_reason == "stop" and short.usage.completion_tokens < 30
    _, held = ask(client, [{"role": "user", "content": "Say hi."}], max_tokens=40, extra_body={"min_tokens": 40})
    assert held.usage.completion_tokens == 40 and held.choices[0].finish_reason == "length"
    # penalties: a repetitive answer gets less repetitive
    repeat = [{"role": "user", "content": "Write the word 'cat' twenty times."}]
    _, plain = ask(client, repeat, max_tokens=30)
    _, pen = ask(client, repeat, max_tokens=30, frequency_penalty=2.0, presence_penalty=1.0)
    cats = plain.choices[0].message.content.lower().count("cat")
    assert cats >= 10  # the precondition: it repeats
    assert pen.choices[0].message.content.lower().count("cat") < cats / 2
    _, rep = ask(client, repeat, max_tokens=30, extra_body={"repetition_penalty": 2.0})
    assert rep.choices[0].message.content.lower().count("cat") < cats / 2


@pytest.mark.slow
def test_the_cache_keeps_answers_of_different_sampling_fields_apart(client):
    q = [{"role": "user", "content": "What is the largest ocean?"}]
    store = {"extra_headers": {}}
    h1, first = ask(client, q, **store)
    h2, biased = ask(client, q, logit_bias={"17": 100}, max_tokens=5, **store)
    assert h1["x-cache"] == "miss" and h2["x-cache"] == "miss" and biased.choices[0].message.content == "!!!!!"
    h3, again = ask(client, q, logit_bias={"17": 100}, max_tokens=5, **store)
    assert h3["x-cache"] == "hit" and again.choices[0].message.content == "!!!!!"
    h4, plain = ask(client, q, **store)
    assert h4["x-cache"] == "hit" and plain.choices[0].message.content == first.choices[0].message.content


@pytest.mark.slow
def test_refused_fields_are_400s_that_name_them(client):
    for body, param in [
        ({"extra_body": {"foo": 1}}, "foo"),
        ({"n": 9}, "n"),
        ({"logit_bias": {"1000000": 5}}, "logit_bias"),  # outside the vocabulary: the engine refuses it
        ({"extra_body": {"stop_token_ids": [1000000]}}, "stop_token_ids"),
        ({"top_logprobs": 2}, "top_logprobs"),  # without logprobs
        ({"extra_body": {"min_tokens": 50}, "max_tokens": 10}, "min_tokens"),
    ]:
        with pytest.raises(openai.BadRequestError) as exc:
            ask(client, **body)
            pytest.fail(f"{body} was answered")
        err = exc.value.body
        assert exc.value.status_code == 400 and err["type"] == "invalid_request_error", err
        assert err["param"] == param, err
    _, ok = ask(client, store=False, metadata={"app": "t"}, extra_body={"service_tier": "auto"})  # ignored fields
    assert ok.choices[0].message.content


def test_the_runtime_protocol_carries_the_fields_and_the_logprobs():
    sp = SamplingParams(
        max_tokens=9,
        temperature=0.7,
        top_k=5,
        min_p=0.1,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        repetition_penalty=1.3,
        logit_bias={4: -3.0, 2: 1.5},
        min_tokens=2,
        stop_token_ids=[7],
        logprobs=3,
        seed=11,
    )
    ids, parsed, rid = protocol.parse_generate(protocol.generate_body([1, 2, 3], sp, "r1"))
    assert (ids, parsed, rid) == ([1, 2, 3], sp, "r1")
    entry = {
        "token": "a",
        "logprob": -0.5,
        "bytes": [97],
        "top_logprobs": [{"token": "a", "logprob": -0.5, "bytes": [97]}],
    }
    out = RequestOutput("r1", "a", [97], False, None, 3, 1, logprobs=[entry])
    back, _ = protocol.parse_output_line(protocol.output_line(out), "r1")
    assert back.logprobs == [entry]
    plain, _ = protocol.parse_output_line(protocol.output_line(RequestOutput("r1", "a", [97])), "r1")
    assert plain.logprobs is None
