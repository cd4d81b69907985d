"""The API models (gateway/api/schemas.py) and the document generated from them (gateway/api/openapi.py).

Unit tests, no model and no server: sampling bounds are the runtime's (a request the gateway accepts is
one ``SamplingParams`` accepts, at the edges too); every 400 names its field as ``param`` and in its
message; responses keep OpenAI's shapes; ``/openapi.json`` is the models' JSON Schema.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
from aiohttp import web

from gateway import keys
from gateway.api import openapi
from gateway.api.schemas import ChatCompletionRequest, Completion, ErrorResponse, parse_chat_request
from gateway.config.gateway import GatewayConfig, Limits
from runtime.api import MAX_TOKENS, TEMPERATURE, TOP_P, SamplingParams
from runtime.serving.errors import APIError, invalid

MSG = [{"role": "user", "content": "hi"}]


def body(**fields) -> dict:
    return {"model": "m", "messages": MSG, **fields}


def refused(data, max_messages: int = 256) -> APIError:
    with pytest.raises(APIError) as exc:
        parse_chat_request(data, max_messages=max_messages)
    assert exc.value.status == 400
    return exc.value


# ---------------------------------------------------------------- sampling bounds, once


@pytest.mark.parametrize(
    "key, value",
    [
        ("temperature", 0),
        ("temperature", 0.0),
        ("temperature", -1e-9),
        ("temperature", 1.5),
        ("top_p", 0),
        ("top_p", 1e-9),
        ("top_p", 1),
        ("top_p", 1.0000001),
        ("max_tokens", 0),
        ("max_tokens", 1),
        ("max_tokens", -3),
    ],
)
def test_the_gateway_and_the_runtime_share_sampling_bounds(key, value):
    """The request model declares runtime.api's bounds: it accepts a value exactly when SamplingParams does."""
    try:
        SamplingParams(**{key: value})
        runtime_ok = True
    except ValueError:
        runtime_ok = False
    try:
        parse_chat_request(body(**{key: value}))
        gateway_ok = True
    except APIError as exc:
        assert exc.param == key and exc.message.startswith(f"{key}: ")
        gateway_ok = False
    assert gateway_ok == runtime_ok, (key, value)


def test_bounds_in_the_schema_are_the_runtimes():
    props = ChatCompletionRequest.model_json_schema()["properties"]
    number = {
        key: next(s for s in props[key]["anyOf"] if s["type"] != "null")
        for key in ("temperature", "top_p", "max_tokens")
    }
    assert number["temperature"]["minimum"] == TEMPERATURE.ge and number["temperature"]["maximum"] == 2.0  # OpenAI's
    assert number["top_p"]["exclusiveMinimum"] == TOP_P.gt and number["top_p"]["maximum"] == TOP_P.le
    assert number["max_tokens"]["minimum"] == MAX_TOKENS.ge


# ---------------------------------------------------------------- errors name the field


@pytest.mark.parametrize(
    "data, param, message",
    [
        (body(temperature=2.5), "temperature", "temperature: must be <= 2.0"),
        (body(temperature="hot"), "temperature", "temperature: must be a number"),
        (body(temperature=True), "temperature", "temperature: must be a number"),
        (body(temperature=7 * 10**400), "temperature", "temperature: must be a number"),
        (body(top_p=float("nan")), "top_p", "top_p: must be a finite number"),
        (body(max_tokens="9"), "max_tokens", "max_tokens: must be an integer"),
        (body(seed=2**64), "seed", "seed: must be <= 18446744073709551615"),
        (body(stop=["a"] * 5), "stop", "stop: must be a non-empty string or a list of at most 4 of them"),
        (body(stop=""), "stop", "stop: must be a non-empty string"),
        (body(n=9), "n", "n: must be <= 8"),
        (body(presence_penalty=2.5), "presence_penalty", "presence_penalty: must be <= 2.0"),
        (body(n=True), "n", "n: must be a number, got true"),  # True == 1 in Python, not in JSON
        (body(frequency_penalty=False), "frequency_penalty", "frequency_penalty: must be a number"),
        (body(repetition_penalty=0), "repetition_penalty", "repetition_penalty: must be > 0"),
        (body(min_p=1.5), "min_p", "min_p: must be <= 1.0"),
        (body(top_k=-2), "top_k", "top_k: must be >= -1"),
        (body(min_tokens=-1), "min_tokens", "min_tokens: must be >= 0"),
        (body(stop_token_ids=[-1]), "stop_token_ids[0]", "stop_token_ids[0]: must be >= 0"),
        (body(logit_bias={"x": 1}), "logit_bias", "keys must be token ids (digits), got 'x'"),
        (body(logit_bias={"5": 101}), "logit_bias.5", "logit_bias.5: must be <= 100.0"),
        (body(top_logprobs=3), "top_logprobs", "top_logprobs: needs logprobs: true"),
        (body(logprobs=True, top_logprobs=21), "top_logprobs", "top_logprobs: must be <= 20"),
        (body(foo=1), "foo", "foo: unknown field"),
        (body(audio={"voice": "x"}), "audio", "audio: not supported by this server"),
        (body(tools=[{"type": "function"}]), "tools", "tools[0].function: required"),
        (body(response_format={"type": "yaml"}), "response_format", "response_format"),
        (body(stream="yes"), "stream", "stream: must be true or false"),
        (body(stream_options=[]), "stream_options", "stream_options: must be a JSON object"),
        ({"messages": MSG}, "model", "model: required"),
        (body(model=""), "model", "model: must be a non-empty string"),
        (body(messages=[]), "messages", "messages: must be a non-empty list"),
        (body(messages="hi"), "messages", "messages: must be a list"),
        (body(messages=[1]), "messages[0]", "messages[0]: must be a JSON object"),
        (
            body(messages=[{"role": "wizard", "content": "x"}]),
            "messages[0].role",
            "messages[0].role: must be 'system', 'developer', 'user', 'assistant' or 'tool'",
        ),
        (
            body(messages=[{"role": "user", "content": 5}]),
            "messages[0].content",
            "messages[0].content: must be a string or a list of text parts",
        ),
        (
            body(messages=[{"role": "user", "content": [{"type": "image_url", "image_url": "x"}]}]),
            "messages[0].content",
            "messages[0].content: must be a string or a list of text parts",
        ),
        (
            body(messages=[{"role": "user"}]),
            "messages",
            "content may be null only on an assistant turn with tool_calls",
        ),
        (body(messages=[{"role": "assistant", "content": "x"}]), "messages", "the last message must have role 'user'"),
        ([1, 2], None, "the request body must be a JSON object"),
    ],
)
def test_every_error_names_its_field(data, param, message):
    err = refused(data)
    assert err.param == param and message in err.message, (err.param, err.message)


def test_message_limit_and_all_problems_at_once():
    err = refused(body(messages=MSG * 9), max_messages=8)
    assert err.param == "messages" and err.message == "messages: has 9 messages; the limit is 8"
    err = refused(body(temperature=-1, top_p=2))
    assert err.param == "temperature" and err.message == "temperature: must be >= 0.0; top_p: must be <= 1.0"


def test_a_valid_request_as_the_pipeline_reads_it():
    chat = parse_chat_request(
        {
            "model": "auto",
            "store": False,  # IGNORED: cannot change the answer
            "metadata": {"k": "v"},
            "logprobs": False,
            "tool_choice": "none",
            "response_format": {"type": "text"},
            "modalities": ["text"],
            "n": 1,
            "presence_penalty": 0.5,
            "frequency_penalty": 0,
            "top_k": -1,
            "min_p": 0.1,
            "logit_bias": {"7": -100, "3": 2.5},
            "stop_token_ids": [2],
            "min_tokens": 1,
            "messages": [
                {"role": "developer", "content": [{"type": "text", "text": "Be "}, {"type": "text", "text": "brief."}]},
                {"role": "user", "content": "Hi", "name": "ann"},
            ],
            "max_tokens": 3,
            "max_completion_tokens": 5,
            "stop": "\n",
            "seed": -(2**63),
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": 0,
            "user": "u1",
        }
    )
    assert chat.messages == ({"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"})
    assert (chat.max_tokens, chat.stop, chat.seed, chat.temperature, chat.top_p) == (5, ("\n",), -(2**63), 0.0, 1.0)
    assert chat.stream and chat.include_usage and chat.user == "u1"
    assert (chat.presence_penalty, chat.top_k, chat.min_p, chat.logit_bias) == (0.5, 0, 0.1, ((3, 2.5), (7, -100.0)))
    assert (chat.stop_token_ids, chat.min_tokens, chat.logprobs, chat.repetition_penalty) == ((2,), 1, None, 1.0)
    assert chat.answer_params()["logit_bias"] == [[3, 2.5], [7, -100.0]] and "top_k" not in chat.answer_params()
    asked = parse_chat_request(body(logprobs=True, top_logprobs=4))
    assert asked.logprobs == 4 and parse_chat_request(body(logprobs=True)).logprobs == 0
    defaults = parse_chat_request(body())
    assert (defaults.temperature, defaults.top_p, defaults.max_tokens, defaults.stop) == (1.0, 1.0, None, ())
    assert not defaults.stream and not defaults.include_usage


# ---------------------------------------------------------------- responses


def test_response_shapes_are_openais():
    c = Completion("chatcmpl-x", "small", created=7)
    assert c.response("Hello", "stop", 3, 2) == {
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "created": 7,
        "model": "small",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello"},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        "system_fingerprint": None,
    }
    head = {"id": "chatcmpl-x", "object": "chat.completion.chunk", "created": 7, "model": "small"}
    assert c.chunk({"role": "assistant", "content": ""}) == {
        **head,
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None, "logprobs": None}
        ],
        "system_fingerprint": None,
    }
    assert c.chunk({"content": "Hel"})["choices"][0]["delta"] == {"content": "Hel"}  # absent keys left out
    assert c.chunk({}, "length")["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "length", "logprobs": None}
    assert c.usage_chunk(3, 2) == {
        **head,
        "choices": [],
        "system_fingerprint": None,
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def test_the_error_model_describes_api_error_bodies():
    for err in (invalid("temperature: must be <= 2.0", "temperature"), APIError(503, "warming up", type="x")):
        assert ErrorResponse.model_validate(err.body()).model_dump() == err.body()


# ---------------------------------------------------------------- /openapi.json


def _app(limits: Limits) -> web.Application:
    app = web.Application()
    app[keys.CONFIG] = GatewayConfig(limits=limits)
    app[keys.STATE] = keys.GatewayState(router=SimpleNamespace(public_names=["auto", "smollm2-135m"]))
    return app


def _refs(node):
    if isinstance(node, dict):
        if "$ref" in node:
            yield node["$ref"]
        for v in node.values():
            yield from _refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v)


def test_openapi_is_generated_from_the_models():
    doc = openapi.document(_app(Limits(max_messages=12)))
    json.dumps(doc)  # serializable as it is served
    schemas = doc["components"]["schemas"]
    request = schemas["ChatCompletionRequest"]
    generated = ChatCompletionRequest.model_json_schema(ref_template=openapi.REF)
    for name, schema in generated.pop("$defs").items():
        assert schemas[name] == schema, name
    served = copy.deepcopy(request)
    del served["properties"]["model"]["enum"], served["properties"]["messages"]["maxItems"]
    assert served == generated  # the model's schema, plus what only this gateway knows (below)
    props = request["properties"]
    assert {
        "model",
        "messages",
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "seed",
        "stream",
        "stream_options",
        "user",
        "n",
    } <= set(props) and request["required"] == ["model", "messages"]
    assert {"tools", "response_format", "tool_choice"} <= set(props) and "store" not in props  # ignored: hidden
    assert {"logprobs", "top_logprobs", "logit_bias", "presence_penalty", "top_k", "min_p"} <= set(props)
    # what only this gateway knows
    assert props["model"]["enum"] == ["auto", "smollm2-135m"] and props["messages"]["maxItems"] == 12
    assert "enum" not in ChatCompletionRequest.model_json_schema()["properties"]["model"]  # a copy was filled in
    # every reference resolves inside the document
    for ref in set(_refs(doc)):
        assert ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[1] in schemas, ref
    assert schemas["Message"]["properties"]["role"]["enum"] == ["system", "developer", "user", "assistant", "tool"]
    ops = doc["paths"]["/v1/chat/completions"]["post"]
    assert ops["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": openapi.REF.format(model="ErrorResponse")
    }
