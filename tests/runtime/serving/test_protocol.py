"""The /v1/generate wire format, both sides: what the client builds the server parses back exactly, and
what the server writes the client reads back exactly. No engine, no sockets."""

from __future__ import annotations

import dataclasses
import json

import pytest

from runtime.api import RequestMetrics, RequestOutput, SamplingParams
from runtime.serving import protocol
from runtime.serving.errors import APIError
from runtime.structured.spec import StructuredSpec
from tests.support.processes import modules_loaded_by

PARAMS = SamplingParams(
    temperature=0.7,
    top_p=0.9,
    top_k=40,
    max_tokens=33,
    stop_token_ids=(5, 7),
    seed=123,
    ignore_eos=True,
    stop=("\n\n", "END"),
    structured=StructuredSpec.from_openai(
        response_format={"type": "json_schema", "json_schema": {"name": "c", "schema": {"type": "object"}}},
        tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        tool_choice="required",
    ),
)


def test_every_sampling_field_is_on_the_wire():
    assert protocol.GENERATE_PARAMS == tuple(f.name for f in dataclasses.fields(SamplingParams))
    assert set(protocol.PREFILL_PARAMS) < set(protocol.GENERATE_PARAMS)


@pytest.mark.parametrize("params", [SamplingParams(), PARAMS], ids=["defaults", "every_field_set"])
def test_generate_body_round_trips_through_json(params):
    body = json.loads(json.dumps(protocol.generate_body((3, 4, 5), params, "req-1")))
    assert protocol.parse_generate(body) == ([3, 4, 5], params, "req-1")


def test_prefill_body_carries_only_the_first_tokens_sampling():
    body = json.loads(json.dumps(protocol.prefill_body([3], PARAMS, "p")))
    assert set(body["params"]) == set(protocol.PREFILL_PARAMS)
    _, parsed, _ = protocol.parse_generate(body)
    assert (parsed.temperature, parsed.top_p, parsed.top_k, parsed.seed) == (0.7, 0.9, 40, 123)
    assert parsed.max_tokens == SamplingParams().max_tokens and parsed.stop == ()


@pytest.mark.parametrize(
    "body,param",
    [
        ({"prompt_ids": []}, "prompt_ids"),
        ({"prompt_ids": [1, True]}, "prompt_ids"),
        ({"prompt_ids": [1], "params": []}, "params"),
        ({"prompt_ids": [1], "params": {"temprature": 1.0}}, "params"),
        ({"prompt_ids": [1], "params": {"top_p": 0}}, "params"),
        ({"prompt_ids": [1], "request_id": 5}, "request_id"),
        ({"prompt_ids": [1], "params": {"structured": '{"response_format": {"type": "yaml"}}'}}, "response_format"),
        ({"prompt_ids": [1], "params": {"structured": '{"tools": [{"type": "function"}]}'}}, "tools"),
        ({"prompt_ids": [1], "params": {"structured": '{"colour": 1}'}}, "structured"),
        ({"prompt_ids": [1], "params": {"structured": "not json"}}, "structured"),
    ],
)
def test_bad_bodies_are_400s_naming_the_field(body, param):
    with pytest.raises(APIError) as exc:
        protocol.parse_generate(body)
    assert exc.value.status == 400 and exc.value.param == param


def test_unknown_params_are_listed_with_the_known_ones():
    with pytest.raises(APIError, match=r"unknown sampling parameters: temprature; known: temperature, top_p"):
        protocol.parse_generate({"prompt_ids": [1], "params": {"temprature": 1.0}})


@pytest.mark.parametrize(
    "out",
    [
        RequestOutput("r", "Pa", [12, 13], prompt_tokens=9, completion_tokens=2),
        RequestOutput("r", "ris ✓", [14], True, "stop", 9, 3, RequestMetrics(ttft_s=0.25, e2e_s=1.5)),
    ],
    ids=["delta", "final"],
)
def test_output_lines_round_trip(out):
    line = protocol.output_line(out)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert protocol.parse_output_line(line, "r") == (out, True)


def test_a_line_without_token_ids_gets_placeholders():
    line = json.dumps(
        {
            "text": "ab",
            "n_tokens": 2,
            "finished": False,
            "finish_reason": None,
            "prompt_tokens": 3,
            "completion_tokens": 2,
        }
    )
    out, has_ids = protocol.parse_output_line(line, "r")
    assert out.token_ids == [0, 0] and not has_ids


def test_error_lines_and_bad_lines():
    with pytest.raises(protocol.StreamError, match="engine step failed"):
        protocol.parse_output_line(protocol.error_line(APIError(500, "engine step failed", type="server_error")), "r")
    for bad in (b"not json\n", b"[]\n", b'{"text": "a"}\n', b'{"error": "flat"}\n'):
        with pytest.raises(protocol.MalformedLine):
            protocol.parse_output_line(bad, "r")


def test_error_bodies():
    body = json.dumps(APIError(503, "warming up", type="service_unavailable", code="not_ready").body()).encode()
    assert protocol.parse_error(body) == ("warming up", "not_ready", None)
    assert protocol.parse_error(b"<html>502</html>") is None


def test_the_protocol_loads_no_jax():
    """The gateway speaks it without loading the engine."""
    client = "runtime.serving.protocol, gateway.backends.remote, gateway.backends.replicas"
    assert modules_loaded_by(client, ("jax",)) == []


def test_metrics_wire_form_takes_each_fields_kind_from_its_annotation():
    back = RequestMetrics.from_dict({"ttft_s": 1, "num_preemptions": 2.0, "cached_tokens": 16, "newer": "x"})
    assert back == RequestMetrics(ttft_s=1.0, num_preemptions=2, cached_tokens=16)
    assert type(back.ttft_s) is float and type(back.num_preemptions) is int
    with pytest.raises(ValueError, match="cached_tokens must be a whole number"):
        RequestMetrics.from_dict({"cached_tokens": 2.5})
    with pytest.raises(ValueError, match="tpot_s must be a number"):
        RequestMetrics.from_dict({"tpot_s": "fast"})
