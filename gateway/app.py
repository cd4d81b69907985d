"""The gateway: an aiohttp app speaking the OpenAI chat-completions API in front of the cache and models.

Request flow (all on the event loop; the engines step on their own threads):

    POST /v1/chat/completions
      -> parse + validate (4xx with an OpenAI error body on anything wrong)
      -> backend for "model" (404 if unknown, 503 + Retry-After until warmed up)
      -> cache lookup in the request's scope (tenant, model, system prompt, history, parameters)
           hit:  answer replayed in exactly the shape of a miss (JSON or SSE), x-cache: hit
           miss: engine.generate -> JSON or SSE stream; a completed answer (finish_reason "stop")
                 is stored; a client that disconnects aborts its generation (KV blocks freed)

``create_app(config, backends=..., cache=...)`` builds everything; nothing happens at import time.
Long-lived resources (engine threads, the cache's embedder and store) open and close in
``cleanup_ctx``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import time
from typing import Any, AsyncIterator, Mapping

from aiohttp import web

from gateway import keys
from gateway.backends import LocalBackend
from gateway.config import GatewayConfig
from gateway.errors import APIError, from_http_exception, invalid
from gateway.metrics import GatewayMetrics
from gateway.schemas import ChatRequest, Completion, new_completion_id, parse_chat_request
from runtime.engine import RequestError
from runtime.request import SamplingParams

log = logging.getLogger("gateway")

HIT_CHUNK_WORDS = 4  # a cached answer is streamed a few words per event, like a live one


# ---------------------------------------------------------------- middleware

@web.middleware
async def error_middleware(request: web.Request, handler):
    try:
        return await handler(request)
    except APIError as exc:
        return exc.response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return from_http_exception(exc).response()
    except (asyncio.CancelledError, ConnectionResetError):
        raise
    except Exception:  # a bug: log it, answer in the OpenAI shape, never leak a traceback
        log.exception("unhandled error on %s %s", request.method, request.path)
        return APIError(500, "internal server error", type="server_error").response()


# ---------------------------------------------------------------- helpers

def tenant_of(request: web.Request, chat: ChatRequest) -> str:
    """API key (hashed) if the client sent one, else the OpenAI ``user`` field, else anonymous."""
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return "key:" + hashlib.sha256(auth[7:].strip().encode()).hexdigest()[:32]
    if chat.user:
        return "user:" + chat.user
    return "anonymous"


def cache_control(request: web.Request) -> tuple[bool, bool]:
    """(no_cache: skip the lookup, no_store: do not store the answer) from Cache-Control."""
    directives = {d.strip().lower() for d in request.headers.get("Cache-Control", "").split(",")}
    return "no-cache" in directives, "no-store" in directives


async def read_json(request: web.Request) -> Any:
    ctype = request.headers.get("Content-Type", "application/json").split(";")[0].strip().lower()
    if ctype not in ("application/json", ""):
        raise APIError(415, f"Content-Type must be application/json, got {ctype!r}")
    raw = await request.read()  # raises 413 past client_max_size
    if not raw:
        raise invalid("the request body is empty; expected a JSON object")
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise invalid(f"the request body is not valid JSON: {exc}") from None


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def split_for_stream(text: str, words: int = HIT_CHUNK_WORDS) -> list[str]:
    parts = text.split(" ")
    return [" ".join(parts[i:i + words]) + (" " if i + words < len(parts) else "") for i in range(0, len(parts), words)] or [""]


# ---------------------------------------------------------------- handlers

class ChatHandler:
    def __init__(self, app: web.Application):
        self.app = app

    @property
    def config(self) -> GatewayConfig:
        return self.app[keys.CONFIG]

    @property
    def metrics(self) -> GatewayMetrics:
        return self.app[keys.METRICS]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        t0 = time.perf_counter()
        model = "unknown"
        status = 500
        try:
            chat = parse_chat_request(await read_json(request), max_messages=self.config.limits.max_messages)
            backend = self.app[keys.STATE].backends.get(chat.model)
            if backend is None:
                raise APIError(404, f"the model {chat.model!r} does not exist; available: "
                               f"{', '.join(self.app[keys.STATE].backends)}", param="model", code="model_not_found")
            model = chat.model
            if not backend.ready:
                raise APIError(503, f"model {chat.model!r} is warming up; retry shortly", type="service_unavailable",
                               headers={"Retry-After": "5"})
            response = await self._complete(request, chat, backend, t0)
            status = response.status
            return response
        except APIError as exc:
            status = exc.status
            raise
        finally:
            self.metrics.requests.labels(model, str(status)).inc()

    async def _complete(self, request, chat: ChatRequest, backend, t0: float) -> web.StreamResponse:
        try:
            prompt_ids = backend.encode(chat.messages)
        except RequestError as exc:
            raise invalid(str(exc), "messages") from None
        room = backend.max_model_len - len(prompt_ids)
        if room < 1:
            raise invalid(f"the messages are {len(prompt_ids)} tokens; this model's context is {backend.max_model_len} "
                          "tokens and at least one must be left for the answer", "messages", "context_length_exceeded")
        if chat.max_tokens is not None and chat.max_tokens > room:
            raise invalid(f"messages ({len(prompt_ids)} tokens) + max_tokens ({chat.max_tokens}) exceed this model's "
                          f"context of {backend.max_model_len} tokens", "max_tokens", "context_length_exceeded")
        max_tokens = chat.max_tokens or min(self.config.limits.default_max_tokens, room)
        try:
            params = SamplingParams(temperature=chat.temperature, top_p=chat.top_p, max_tokens=max_tokens,
                                    stop=chat.stop, seed=None if chat.seed is None else chat.seed % 2**32)
        except ValueError as exc:
            raise invalid(str(exc)) from None
        completion = Completion(new_completion_id(), chat.model)
        cache = self.app[keys.STATE].cache
        no_cache, no_store = cache_control(request)
        scope = question = None
        headers = {"x-cache": "miss"}
        if cache is not None and self._cacheable(chat):
            scope, question = cache_scope(tenant_of(request, chat), chat)
        if scope is not None:
            lookup = await cache.lookup(scope, question, no_cache=no_cache)
            self.metrics.cache_lookups.labels(lookup.kind, chat.model).inc()
            if lookup.similarity is not None:
                self.metrics.cache_similarity.observe(lookup.similarity)
            headers["x-cache-lookup"] = lookup.kind
            if lookup.similarity is not None:
                headers["x-cache-similarity"] = f"{lookup.similarity:.4f}"
            if lookup.kind in ("exact", "semantic"):
                headers["x-cache"] = "hit"
                return await self._respond_hit(request, chat, completion, lookup.entry, len(prompt_ids), headers, t0)
        else:
            headers["x-cache-lookup"] = "bypass"
            if cache is not None:
                self.metrics.cache_lookups.labels("bypass", chat.model).inc()
        store = None
        if scope is not None and not no_store:
            async def store(text: str, finish_reason: str, usage: dict) -> None:
                await cache.store(scope, question, text, finish_reason, usage, chat.model)
        if chat.stream:
            return await self._stream(request, chat, backend, completion, prompt_ids, params, headers, store, t0)
        return await self._whole(chat, backend, completion, prompt_ids, params, headers, store, t0)

    def _cacheable(self, chat: ChatRequest) -> bool:
        cache = self.app[keys.STATE].cache
        return cache.accepts(temperature=chat.temperature, seed=chat.seed)

    # -- miss: the engine answers

    async def _whole(self, chat, backend, completion, prompt_ids, params, headers, store, t0) -> web.Response:
        text, finish, n_out, ttft = [], None, 0, None
        async with contextlib.aclosing(backend.generate(prompt_ids, params, completion.id)) as outputs:
            async for out in outputs:
                if ttft is None and out.token_ids:
                    ttft = time.perf_counter() - t0
                text.append(out.text)
                if out.finished:
                    finish, n_out = out.finish_reason, out.completion_tokens
        answer = "".join(text)
        self._observe(chat.model, "miss", len(prompt_ids), n_out, ttft, t0)
        if store is not None and finish == "stop":
            await store(answer, finish, {"prompt_tokens": len(prompt_ids), "completion_tokens": n_out})
        return web.json_response(completion.response(answer, finish, len(prompt_ids), n_out), headers=headers)

    async def _stream(self, request, chat, backend, completion, prompt_ids, params, headers, store, t0):
        resp = await self._open_stream(request, headers)
        await resp.write(sse(completion.chunk({"role": "assistant", "content": ""})))
        text, finish, n_out, ttft = [], None, 0, None
        try:
            async with contextlib.aclosing(backend.generate(prompt_ids, params, completion.id)) as outputs:
                async for out in outputs:
                    if ttft is None and out.token_ids:
                        ttft = time.perf_counter() - t0
                    if out.text:
                        text.append(out.text)
                        await resp.write(sse(completion.chunk({"content": out.text})))
                    if out.finished:
                        finish, n_out = out.finish_reason, out.completion_tokens
        except RequestError as exc:  # rejected by the engine after the stream opened
            await resp.write(sse(APIError(400, str(exc)).body()))
            await resp.write(b"data: [DONE]\n\n")
            return resp
        await resp.write(sse(completion.chunk({}, finish)))
        if chat.include_usage:
            await resp.write(sse(completion.usage_chunk(len(prompt_ids), n_out)))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        self._observe(chat.model, "miss", len(prompt_ids), n_out, ttft, t0)
        if store is not None and finish == "stop":
            await store("".join(text), finish, {"prompt_tokens": len(prompt_ids), "completion_tokens": n_out})
        return resp

    # -- hit: replay the stored answer in the same shape

    async def _respond_hit(self, request, chat, completion, entry, prompt_tokens, headers, t0):
        n_out = int(entry.usage.get("completion_tokens", 0))
        self.metrics.cache_tokens_saved.labels(chat.model).inc(n_out)
        if not chat.stream:
            self._observe(chat.model, "hit", 0, 0, time.perf_counter() - t0, t0)
            return web.json_response(completion.response(entry.answer, entry.finish_reason, prompt_tokens, n_out),
                                     headers=headers)
        resp = await self._open_stream(request, headers)
        await resp.write(sse(completion.chunk({"role": "assistant", "content": ""})))
        for piece in split_for_stream(entry.answer):
            await resp.write(sse(completion.chunk({"content": piece})))
        await resp.write(sse(completion.chunk({}, entry.finish_reason)))
        if chat.include_usage:
            await resp.write(sse(completion.usage_chunk(prompt_tokens, n_out)))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        self._observe(chat.model, "hit", 0, 0, time.perf_counter() - t0, t0)
        return resp

    async def _open_stream(self, request, headers) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           **headers})
        await resp.prepare(request)
        return resp

    def _observe(self, model, cache, prompt_tokens, completion_tokens, ttft, t0) -> None:
        m = self.metrics
        if ttft is not None:
            m.ttft.labels(model, cache).observe(ttft)
        m.e2e.labels(model, cache).observe(time.perf_counter() - t0)
        m.prompt_tokens.labels(model).inc(prompt_tokens)
        m.generation_tokens.labels(model).inc(completion_tokens)


def cache_scope(tenant: str, chat: ChatRequest):
    """(scope, question), or (None, None) when the request cannot be cached (the cache is bypassed)."""
    from gateway.cache import CacheScope

    try:
        return CacheScope.from_request(tenant, chat.model, list(chat.messages), chat.answer_params())
    except ValueError:
        return None, None


async def list_models(request: web.Request) -> web.Response:
    created = request.app[keys.STATE].started
    data = [{"id": name, "object": "model", "created": created, "owned_by": "jaxserve"}
            for name in request.app[keys.STATE].backends]
    return web.json_response({"object": "list", "data": data})


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    st = request.app[keys.STATE]
    state = {name: b.ready for name, b in st.backends.items()}
    ready = bool(state) and all(state.values()) and st.cache_ready
    return web.json_response({"ready": ready, "models": state}, status=200 if ready else 503)


async def metrics(request: web.Request) -> web.Response:
    body = request.app[keys.METRICS].render()
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


# ---------------------------------------------------------------- the factory

def create_app(config: GatewayConfig, *, backends: Mapping[str, Any] | None = None, cache=None,
               cache_enabled: bool | None = None) -> web.Application:
    """Build the gateway. ``backends`` / ``cache`` may be given (tests, embedding); otherwise they are
    built from ``config`` when the app starts."""
    app = web.Application(middlewares=[error_middleware], client_max_size=config.limits.max_body_bytes)
    app[keys.CONFIG] = config
    state = app[keys.STATE] = keys.GatewayState(backends=dict(backends or {}), started=int(time.time()))
    app[keys.METRICS] = GatewayMetrics(lambda: state.backends)

    async def models_ctx(app: web.Application):
        if not state.backends:
            for m in config.models:  # loading weights takes seconds: off the event loop
                state.backends[m.name] = await asyncio.to_thread(LocalBackend.from_config, m.name, m.engine)
        tasks = [asyncio.create_task(b.start(warmup=config.warmup)) for b in state.backends.values()]
        yield
        for t in tasks:
            t.cancel()
        for b in state.backends.values():
            await b.close()

    async def cache_ctx(app: web.Application):
        c = cache
        enabled = cache_enabled if cache_enabled is not None else config.cache.get("enabled", True)
        if c is None and enabled:
            from gateway.cache import CacheConfig, SemanticCache

            c = SemanticCache(CacheConfig.from_mapping(config.cache))
        if c is not None:
            await c.start()
        state.cache = c
        state.cache_ready = True
        yield
        if c is not None:
            await c.close()

    app.cleanup_ctx.append(cache_ctx)
    app.cleanup_ctx.append(models_ctx)
    app.router.add_post("/v1/chat/completions", ChatHandler(app).handle)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app
