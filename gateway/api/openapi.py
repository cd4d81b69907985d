"""``GET /openapi.json``: an OpenAPI 3.1 document of every route the gateway serves.

    pydantic models (gateway.api.schemas) -> JSON Schema (models_json_schema, once)
      + this gateway's model names and message limit (from the app's config) -> the document, per request

``OPERATIONS`` lists one entry per (path, method): its summary, security and statuses; tests compare it
with ``app.router`` both ways, so a route added without its description fails CI rather than drifting.
The fuzzer (tests/gateway/test_fuzz.py) draws its schema-valid chat requests from this document.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from aiohttp import web
from pydantic.json_schema import models_json_schema

from gateway import keys
from gateway.api.schemas import ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ErrorResponse, ModelList

REF = "#/components/schemas/{model}"


def _ref(model: str) -> dict:
    return {"$ref": REF.format(model=model)}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


ERROR_RESPONSE = _json(_ref("ErrorResponse"), "an OpenAI-style error")


def _errors(*statuses: int) -> dict:
    return {str(s): ERROR_RESPONSE for s in statuses}


@functools.cache
def _model_schemas() -> dict[str, Any]:
    """The JSON Schema of every model the API reads or writes, keyed by model name (nested ones too)."""
    _, top = models_json_schema(
        [
            (ChatCompletionRequest, "validation"),
            (ChatCompletion, "serialization"),
            (ChatCompletionChunk, "serialization"),
            (ModelList, "serialization"),
            (ErrorResponse, "serialization"),
        ],
        ref_template=REF,
    )
    return top["$defs"]


def _schemas(model_names: list[str], max_messages: int) -> dict[str, Any]:
    """The models' schemas with what only this gateway knows: the names "model" may take, its message limit."""
    schemas = copy.deepcopy(_model_schemas())
    request = schemas["ChatCompletionRequest"]["properties"]
    request["model"]["enum"] = model_names
    request["messages"]["maxItems"] = max_messages
    return schemas


# (path, method) -> operation. Every route of create_app must be here (tests/gateway/test_fuzz.py checks it).
OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("/v1/chat/completions", "post"): {
        "summary": "Create a chat completion (JSON, or server-sent events with stream: true)",
        "security": [{"apiKey": []}, {}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("ChatCompletionRequest")}}},
        "responses": {
            "200": {
                "description": "the answer; headers x-cache, x-route-tier, x-cost-usd, ...",
                "content": {
                    "application/json": {"schema": _ref("ChatCompletion")},
                    "text/event-stream": {
                        "schema": {
                            "type": "string",
                            "description": "events 'data: <ChatCompletionChunk>', then 'data: [DONE]'",
                        }
                    },
                },
            },
            **_errors(400, 401, 403, 404, 405, 413, 415, 429, 503),
        },
    },
    ("/v1/models", "get"): {
        "summary": "The tiers (and auto) a request may name as model",
        "responses": {"200": _json(_ref("ModelList"), "models")},
    },
    ("/v1/completions", "post"): {
        "summary": "Text completion (OpenAI's legacy API): prompt string, list or token ids; echo, logprobs, n, stream",
        "responses": {"200": _json({"type": "object"}, "a text_completion (or its events)"), **_errors(400, 404, 503)},
    },
    ("/v1/embeddings", "post"): {
        "summary": "all-MiniLM-L6-v2 embeddings (384 dimensions, normalized), float or base64",
        "responses": {"200": _json({"type": "object"}, "a list of embeddings"), **_errors(400, 404)},
    },
    ("/v1/models/{model}", "get"): {
        "summary": "One name a request may use as model, with its card",
        "responses": {"200": _json(_ref("ModelCard"), "the model"), **_errors(404)},
    },
    ("/v1/usage", "get"): {
        "summary": "The calling key's requests, tokens, spend, savings and limits in the current period",
        "security": [{"apiKey": []}, {}],
        "responses": {"200": _json({"type": "object"}, "usage of the calling key"), **_errors(401)},
    },
    ("/healthz", "get"): {"summary": "Liveness", "responses": {"200": _json({"type": "object"}, "alive")}},
    ("/readyz", "get"): {
        "summary": "Readiness: 200 once every in-process model has warmed up",
        "responses": {"200": _json({"type": "object"}, "ready"), "503": _json({"type": "object"}, "not yet")},
    },
    ("/metrics", "get"): {
        "summary": "Prometheus metrics (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {
            "200": {"description": "Prometheus text format", "content": {"text/plain": {"schema": {"type": "string"}}}},
            **_errors(401),
        },
    },
    ("/dashboard", "get"): {
        "summary": "The live dashboard page (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {
            "200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}},
            **_errors(401),
        },
    },
    ("/dashboard/data", "get"): {
        "summary": "The dashboard's series and summary as JSON (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {"200": _json({"type": "object"}, "series"), **_errors(401, 503)},
    },
    ("/dashboard/diagnosis", "get"): {
        "summary": "The bottleneck advisor's findings over a window (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "parameters": [
            {"name": "window", "in": "query", "schema": {"type": "string", "default": "15m"}},
            {"name": "ttft_slo", "in": "query", "schema": {"type": "number", "default": 1.0}},
            {"name": "tpot_slo", "in": "query", "schema": {"type": "number", "default": 0.1}},
            {"name": "peak_gbs", "in": "query", "schema": {"type": "number"}, "description": "memory bandwidth, GB/s"},
        ],
        "responses": {"200": _json({"type": "object"}, "findings"), **_errors(400, 401, 503)},
    },
    ("/dashboard/tuning", "get"): {
        "summary": "The last `python -m gateway.advise --tune` result: candidates ranked by replayed goodput and "
        "the recommendation, or null (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {"200": _json({"type": "object"}, "tuning"), **_errors(401)},
    },
    ("/dashboard/verification", "get"): {
        "summary": "Live cache verification: the estimated false-hit rate per kind and tier with its 95% "
        "interval, tightened scopes, the latest disagreements (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {"200": _json({"type": "object"}, "verification"), **_errors(401)},
    },
    ("/dashboard/evict", "post"): {
        "summary": "Evict one cached answer by entry id (needs the admin key: 403 without one configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}],
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {"entry_id": {"type": "string"}},
                        "required": ["entry_id"],
                    }
                }
            },
        },
        "responses": {"200": _json({"type": "object"}, "evicted or not"), **_errors(400, 401, 403)},
    },
    ("/openapi.json", "get"): {
        "summary": "This document",
        "responses": {"200": _json({"type": "object"}, "OpenAPI 3.1")},
    },
}


def document(app: web.Application) -> dict[str, Any]:
    config = app[keys.CONFIG]
    names = list(app[keys.STATE].router.public_names)
    for t in config.tier_spec.tiers:  # a tier's model name picks that tier too
        if t.model not in names:
            names.append(t.model)
    paths: dict[str, dict] = {}
    for (path, method), op in OPERATIONS.items():
        paths.setdefault(path, {})[method] = op
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "jaxserve gateway",
            "version": "1",
            "description": "OpenAI-compatible chat completions with a semantic cache and cost tiers. Every error "
            "has the body {'error': {'message', 'type', 'param', 'code'}} and a 4xx status "
            "(503 only while warming up, draining, or when no tier can answer).",
        },
        "paths": paths,
        "components": {
            "schemas": _schemas(names, config.limits.max_messages),
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer", "description": "an API key from keys.entries"},
                "adminKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "the admin key (admin: in gateway.yaml)",
                },
                "adminBasic": {"type": "http", "scheme": "basic", "description": "the admin key as the password"},
            },
        },
    }


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(document(request.app))
