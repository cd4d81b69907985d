"""The HTTP protocol a runtime server speaks, both sides of it in one module: request bodies, the NDJSON
output lines, error bodies, and the state and helpers the server's handlers share.

JAX-free: it imports ``runtime.api``, aiohttp, ``runtime.serving.errors`` (aiohttp only) and
``runtime.structured.spec`` (pure Python: the structured-output spec's wire form), so the
gateway's ``RemoteBackend`` speaks it without loading the engine. Who uses what::

    gateway.backends.remote (client)        runtime.serving.server / disagg (server)
    generate_body(ids, params, id) ------>  POST /v1/generate  parse_generate(body) -> (ids, params, id)
    parse_output_line(line)        <------  application/x-ndjson, output_line(out) per engine output;
                                            error_line(APIError) as a last line if the engine fails
    parse_error(body)              <------  any non-200: APIError.body(), OpenAI-shaped
    disagg.HTTPKVTransport:
    prefill_body(ids, params, id)  ------>  POST /v1/prefill  parse_generate(body) -> the prompt's KV
                                            (binary: runtime/distributed/kv_transfer.py)

Bodies and lines::

    request  {"prompt_ids": [int, ...], "params": {<SamplingParams field>: value, ...}, "request_id": str}
    line     {"text", "n_tokens", "token_ids", "finished", "finish_reason", "prompt_tokens",
              "completion_tokens"[, "metrics" on the final line]}
    error    {"error": {"message", "type", "param", "code"}}

``params`` may hold any field of ``SamplingParams`` (``GENERATE_PARAMS`` is derived from the dataclass,
so a new field is on the wire with no edit here); left out, a field takes its default. Tuples travel as
JSON lists; ``structured`` travels as its wire form (``StructuredSpec.to_json``: a JSON object of the request
parts, as text) and a bad one is a 400 naming its field. A prefill sends only ``PREFILL_PARAMS``: the first token is drawn with them, while length and
stop rules are the decode side's business.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aiohttp import web

from runtime.api import RequestMetrics, RequestOutput, SamplingParams
from runtime.serving.errors import APIError, invalid, read_json
from runtime.structured.spec import StructuredSpec, error_field

if TYPE_CHECKING:
    from runtime.serving.local import LocalEngine

ENCODE_PATH, GENERATE_PATH, PREFILL_PATH, STATS_PATH = "/v1/encode", "/v1/generate", "/v1/prefill", "/v1/stats"
NDJSON = "application/x-ndjson"
GENERATE_PARAMS = tuple(f.name for f in dataclasses.fields(SamplingParams))
# What the first token is drawn with on a prefill server (its log-probabilities stay there: not sent)
PREFILL_PARAMS = (
    "temperature",
    "top_p",
    "top_k",
    "seed",
    "min_p",
    "presence_penalty",
    "frequency_penalty",
    "repetition_penalty",
    "logit_bias",
)
RETRY_AFTER_S = "1"  # what a 503 asks the client to wait


# ---------------------------------------------------------------- client side


def params_json(params: SamplingParams, fields: Sequence[str] = GENERATE_PARAMS) -> dict:
    """``params``' fields as JSON values (tuples as lists)."""
    out = {}
    for name in fields:
        value = getattr(params, name)
        if isinstance(value, StructuredSpec):
            value = value.to_json()
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


def generate_body(prompt_ids: Sequence[int], params: SamplingParams, request_id: str) -> dict:
    """The JSON body of ``POST /v1/generate``."""
    return {"prompt_ids": list(prompt_ids), "params": params_json(params), "request_id": request_id}


def prefill_body(prompt_ids: Sequence[int], params: SamplingParams, request_id: str) -> dict:
    """The JSON body of ``POST /v1/prefill``: the sampling fields the first token is drawn with."""
    return {"prompt_ids": list(prompt_ids), "params": params_json(params, PREFILL_PARAMS), "request_id": request_id}


class StreamError(Exception):
    """The server ended the stream with an error line: the engine failed after the answer began."""


class MalformedLine(ValueError):
    """An output line that is not one of this protocol's."""


def parse_output_line(line: bytes | str, request_id: str) -> tuple[RequestOutput, bool]:
    """One NDJSON line -> (the ``RequestOutput``, whether it carried its token ids).

    A server that sends only ``n_tokens`` (an older one) gets placeholder ids, 0, and False.
    Raises ``StreamError`` for an error line, ``MalformedLine`` for anything else unreadable."""
    try:
        d = json.loads(line)
        if "error" in d:
            raise StreamError(d["error"].get("message", "the engine failed"))
        has_ids = isinstance(d.get("token_ids"), list)
        ids = [int(t) for t in d["token_ids"]] if has_ids else [0] * int(d["n_tokens"])
        out = RequestOutput(
            request_id,
            d["text"],
            ids,
            bool(d["finished"]),
            d["finish_reason"],
            int(d["prompt_tokens"]),
            int(d["completion_tokens"]),
            RequestMetrics.from_dict(d["metrics"]) if d.get("metrics") else None,
            logprobs=d.get("logprobs"),
        )
        if out.logprobs is not None and not isinstance(out.logprobs, list):
            raise ValueError("logprobs must be a list")
        return out, has_ids
    except StreamError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise MalformedLine(f"unreadable output line {line[:200]!r}") from exc


def parse_error(data: bytes) -> tuple[str, str | None, str | None] | None:
    """(message, code, param) of an error body (``APIError.body()``); None when the body is not one."""
    try:
        err = json.loads(data)["error"]
        return str(err["message"]), err.get("code"), err.get("param")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


# ---------------------------------------------------------------- server side


def parse_generate(body: dict) -> tuple[list[int], SamplingParams, str]:
    """(prompt_ids, params, request_id) from a /v1/generate or /v1/prefill body; raises a 400 APIError."""
    prompt_ids = body.get("prompt_ids")
    if (
        not isinstance(prompt_ids, list)
        or not prompt_ids
        or not all(isinstance(t, int) and not isinstance(t, bool) for t in prompt_ids)
    ):
        raise invalid("prompt_ids must be a non-empty list of ints", "prompt_ids")
    params = body.get("params", {})
    if not isinstance(params, dict):
        raise invalid("params must be an object", "params")
    unknown = sorted(set(params) - set(GENERATE_PARAMS))
    if unknown:
        raise invalid(
            f"unknown sampling parameters: {', '.join(unknown)}; known: {', '.join(GENERATE_PARAMS)}", "params"
        )
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items() if v is not None}
    try:
        if "structured" in params:
            params["structured"] = StructuredSpec.from_json(params["structured"])
    except ValueError as exc:
        raise invalid(str(exc), error_field(exc) or "structured") from None
    try:
        sp = SamplingParams(**params)
    except (TypeError, ValueError) as exc:
        raise invalid(str(exc), "params") from None
    request_id = body.get("request_id") or f"gen-{uuid.uuid4().hex[:16]}"
    if not isinstance(request_id, str):
        raise invalid("request_id must be a string", "request_id")
    return prompt_ids, sp, request_id


def output_line(out: RequestOutput) -> bytes:
    line = {
        "text": out.text,
        "n_tokens": len(out.token_ids),
        "token_ids": list(out.token_ids),
        "finished": out.finished,
        "finish_reason": out.finish_reason,
        "prompt_tokens": out.prompt_tokens,
        "completion_tokens": out.completion_tokens,
    }
    if out.finished and out.metrics:  # queue, TTFT, TPOT, e2e seconds as the engine measured them
        line["metrics"] = out.metrics.to_dict()
    if out.logprobs is not None:
        line["logprobs"] = out.logprobs
    return (json.dumps(line, ensure_ascii=False) + "\n").encode()


def error_line(exc: APIError) -> bytes:
    """The last line of a stream whose headers are sent when the engine fails."""
    return (json.dumps(exc.body()) + "\n").encode()


@dataclass
class ServerState:
    """What the server's ``cleanup_ctx`` opens; the handlers (generate, prefill, ...) read it."""

    name: str
    max_waiting: int
    backend: LocalEngine | None = None  # once the weights are loaded
    warmup_task: asyncio.Task | None = None
    pending: int = 0  # admitted /v1/generate or /v1/prefill requests still waiting for their first output
    started: int = 0
    role: str = "both"  # prefill/decode disaggregation (runtime/serving/disagg.py): both | prefill | decode
    generate: Callable | None = None  # the decode role's generate (prefill fetched first); else the backend's

    @property
    def ready(self) -> bool:
        return self.backend is not None and self.backend.ready

    def admit(self, what: str = "requests") -> None:
        """503 ``overloaded`` once ``max_waiting`` requests wait. ``pending`` also counts requests still
        in the engine's command queue, which its ``num_waiting`` cannot see yet: a burst is bounded too."""
        waiting = max(self.pending, self.backend.stats().num_waiting)
        if waiting >= self.max_waiting:
            raise retry_later("overloaded", f"{waiting} {what} are already waiting for model {self.name!r}")


def retry_later(code: str, why: str) -> APIError:
    """503 with ``Retry-After``: the model cannot take the request now, but will soon."""
    return APIError(
        503, f"{why}; retry shortly", type="service_unavailable", code=code, headers={"Retry-After": RETRY_AFTER_S}
    )


def not_ready(name: str) -> APIError:
    return retry_later("not_ready", f"model {name!r} is warming up")


async def read_object(request: web.Request) -> dict:
    body = await read_json(request)
    if not isinstance(body, dict):
        raise invalid(f"the request body must be a JSON object, got {type(body).__name__}")
    return body
