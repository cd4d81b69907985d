"""``GET /openapi.json``: an OpenAPI 3.1 document of every route the gateway serves.

Built per request from the app (its config gives the model names and limits), so it names what this
gateway accepts. ``OPERATIONS`` is written by hand, one entry per (path, method); tests compare it with
``app.router`` both ways, so a route added without its description fails CI rather than drifting. The
fuzzer (tests/gateway/test_fuzz.py) draws its schema-valid chat requests from this document.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from gateway.config import keys

ERROR_RESPONSE = {"description": "an OpenAI-style error", "content": {"application/json": {
    "schema": {"$ref": "#/components/schemas/Error"}}}}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict:
    return {str(s): ERROR_RESPONSE for s in statuses}


def _schemas(model_names: list[str], max_messages: int) -> dict[str, Any]:
    text_part = {"type": "object", "required": ["type", "text"], "properties": {
        "type": {"const": "text"}, "text": {"type": "string"}}}
    message = {
        "type": "object", "required": ["role", "content"],
        "properties": {
            "role": {"enum": ["system", "developer", "user", "assistant"]},
            "content": {"oneOf": [{"type": "string"}, {"type": "array", "items": text_part}]},
            "name": {"type": "string"},
        },
    }
    nullable_int = {"type": ["integer", "null"], "minimum": 1}
    request = {
        "type": "object",
        "required": ["model", "messages"],
        "description": "The last message must have role 'user'. Prompt plus max_tokens must fit the tier's "
                       "context (else 400 context_length_exceeded). Fields that would change the answer in "
                       "ways this server does not implement (n > 1, penalties, logprobs, tools) are rejected; "
                       "other unknown fields are ignored.",
        "properties": {
            "model": {"type": "string", "enum": model_names, "description": "a tier, the model a tier serves, or auto"},
            "messages": {"type": "array", "minItems": 1, "maxItems": max_messages, "items": message},
            "temperature": {"type": ["number", "null"], "minimum": 0, "maximum": 2},
            "top_p": {"type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1},
            "max_tokens": nullable_int,
            "max_completion_tokens": nullable_int,
            "stop": {"oneOf": [{"type": "null"}, {"type": "string", "minLength": 1},
                               {"type": "array", "maxItems": 4, "items": {"type": "string", "minLength": 1}}]},
            "seed": {"type": ["integer", "null"], "minimum": -(2**63), "maximum": 2**64 - 1},
            "stream": {"type": "boolean"},
            "stream_options": {"type": ["object", "null"], "properties": {"include_usage": {"type": "boolean"}}},
            "user": {"type": ["string", "null"]},
            "n": {"type": ["integer", "null"], "const": 1},
            "presence_penalty": {"type": ["number", "null"], "const": 0},
            "frequency_penalty": {"type": ["number", "null"], "const": 0},
        },
    }
    usage = {"type": "object", "required": ["prompt_tokens", "completion_tokens", "total_tokens"], "properties": {
        "prompt_tokens": {"type": "integer"}, "completion_tokens": {"type": "integer"},
        "total_tokens": {"type": "integer"}}}
    completion = {
        "type": "object", "required": ["id", "object", "created", "model", "choices", "usage"],
        "properties": {
            "id": {"type": "string"}, "object": {"const": "chat.completion"}, "created": {"type": "integer"},
            "model": {"type": "string"}, "usage": {"$ref": "#/components/schemas/Usage"},
            "choices": {"type": "array", "items": {"type": "object", "properties": {
                "index": {"type": "integer"},
                "message": {"type": "object", "properties": {"role": {"const": "assistant"},
                                                             "content": {"type": "string"}}},
                "finish_reason": {"enum": ["stop", "length"]}}}},
        },
    }
    error = {
        "type": "object", "required": ["error"],
        "properties": {"error": {"type": "object", "required": ["message", "type", "param", "code"], "properties": {
            "message": {"type": "string"}, "type": {"type": "string"},
            "param": {"type": ["string", "null"]}, "code": {"type": ["string", "null"]}}}},
    }
    return {"ChatCompletionRequest": request, "ChatCompletion": completion, "Usage": usage, "Error": error}


# (path, method) -> operation. Every route of create_app must be here (tests/gateway/test_fuzz.py checks it).
OPERATIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("/v1/chat/completions", "post"): {
        "summary": "Create a chat completion (JSON, or server-sent events with stream: true)",
        "security": [{"apiKey": []}, {}],
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": "#/components/schemas/ChatCompletionRequest"}}}},
        "responses": {
            "200": {"description": "the answer; headers x-cache, x-route-tier, x-cost-usd, ...", "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ChatCompletion"}},
                "text/event-stream": {"schema": {"type": "string"}}}},
            **_errors(400, 401, 403, 404, 405, 413, 415, 429, 503),
        },
    },
    ("/v1/models", "get"): {
        "summary": "The tiers (and auto) a request may name as model",
        "responses": {"200": _json({"type": "object", "required": ["object", "data"], "properties": {
            "object": {"const": "list"}, "data": {"type": "array", "items": {"type": "object"}}}}, "models")},
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
        "responses": {"200": {"description": "Prometheus text format",
                              "content": {"text/plain": {"schema": {"type": "string"}}}}, **_errors(401)},
    },
    ("/dashboard", "get"): {
        "summary": "The live dashboard page (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {"200": {"description": "HTML", "content": {"text/html": {"schema": {"type": "string"}}}},
                      **_errors(401)},
    },
    ("/dashboard/data", "get"): {
        "summary": "The dashboard's series and summary as JSON (behind the admin key when one is configured)",
        "security": [{"adminKey": []}, {"adminBasic": []}, {}],
        "responses": {"200": _json({"type": "object"}, "series"), **_errors(401, 503)},
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
        "info": {"title": "jaxserve gateway", "version": "1", "description":
                 "OpenAI-compatible chat completions with a semantic cache and cost tiers. Every error "
                 "has the body {'error': {'message', 'type', 'param', 'code'}} and a 4xx status "
                 "(503 only while warming up, draining, or when no tier can answer)."},
        "paths": paths,
        "components": {
            "schemas": _schemas(names, config.limits.max_messages),
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer", "description": "an API key from keys.entries"},
                "adminKey": {"type": "http", "scheme": "bearer", "description": "the admin key (admin: in gateway.yaml)"},
                "adminBasic": {"type": "http", "scheme": "basic", "description": "the admin key as the password"},
            },
        },
    }


async def openapi_json(request: web.Request) -> web.Response:
    return web.json_response(document(request.app))
