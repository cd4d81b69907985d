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
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Mapping

from aiohttp import web

from gateway.config import keys
from gateway.backends import BackendError
from gateway.config.gateway import GatewayConfig
from gateway.observability.dashboard import setup_dashboard
from runtime.serving.errors import APIError, error_middleware, invalid, read_json
from gateway.lifecycle import drain_middleware
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.routing import AUTO, Decision, Router
from gateway.api.schemas import ChatRequest, Completion, new_completion_id, parse_chat_request
from gateway.security import log_content, setup_security
from gateway.accounting.usage import Caller, UsageLedger
from runtime.api import RequestError
from runtime.api import SamplingParams

log = logging.getLogger("gateway")

HIT_CHUNK_WORDS = 4  # a cached answer is streamed a few words per event, like a live one


# ---------------------------------------------------------------- helpers

def cache_control(request: web.Request) -> tuple[bool, bool]:
    """(no_cache: skip the lookup, no_store: do not store the answer) from Cache-Control."""
    directives = {d.strip().lower() for d in request.headers.get("Cache-Control", "").split(",")}
    return "no-cache" in directives, "no-store" in directives


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def split_for_stream(text: str, words: int = HIT_CHUNK_WORDS) -> list[str]:
    parts = text.split(" ")
    return [" ".join(parts[i:i + words]) + (" " if i + words < len(parts) else "") for i in range(0, len(parts), words)] or [""]


@dataclass
class Answer:
    """What the fallback chain produced for one request, filled in as it goes."""

    current: str | None = None  # the tier generating now
    served_by: str | None = None  # the tier that finished the answer
    replica: str | None = None  # which replica of a replicated tier (``gateway.replicas``) answered
    prompt_tokens: int = 0  # of the serving tier's prompt
    completion_tokens: int = 0  # all tiers together
    finish_reason: str | None = None
    ttft: float | None = None
    fallbacks: list = field(default_factory=list)  # (from, to, cause)
    charges: list = field(default_factory=list)  # (tier, prompt_tokens, completion_tokens)


class ChainFailed(Exception):
    pass


# ---------------------------------------------------------------- handlers

class ChatHandler:
    """``POST /v1/chat/completions``: who -> limits -> route -> cache -> fallback chain -> charge."""

    def __init__(self, app: web.Application):
        self.app = app

    @property
    def config(self) -> GatewayConfig:
        return self.app[keys.CONFIG]

    @property
    def metrics(self) -> GatewayMetrics:
        return self.app[keys.METRICS]

    @property
    def state(self) -> keys.GatewayState:
        return self.app[keys.STATE]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        t0 = time.perf_counter()
        label = "unknown"
        status = 500
        ledger = self.state.ledger
        try:
            caller = ledger.identify(request)
            try:
                ledger.check_rate(caller)
            except APIError:
                self.metrics.rate_limited.labels("rate").inc()
                raise
            chat = parse_chat_request(await read_json(request), max_messages=self.config.limits.max_messages)
            if chat.user and caller.tenant == "anonymous":
                caller = ledger.identify(request, chat.user)
            decision = self.state.router.route(chat, caller.policy, ledger.budget_left(caller))
            label = decision.tier
            try:
                ledger.check_budget(caller)
            except APIError:
                self.metrics.rate_limited.labels("budget").inc()
                raise
            self.metrics.routes.labels(decision.tier, "auto" if chat.model == AUTO else "explicit").inc()
            response = await self._complete(request, chat, caller, decision, t0)
            status = response.status
            return response
        except APIError as exc:
            status = exc.status
            raise
        except asyncio.CancelledError:  # the client closed the connection first (nginx's 499), not a 500,
            status = request.get(keys.ANSWERED, 499)  # unless its whole answer had been sent
            raise
        finally:
            self.metrics.requests.labels(label, str(status)).inc()

    async def _complete(self, request, chat: ChatRequest, caller: Caller, decision: Decision, t0: float):
        spec = self.state.router.spec
        tier = spec.tier(decision.tier)
        completion = Completion(new_completion_id(), chat.model if chat.model != AUTO else decision.tier)
        headers = {"x-route-tier": decision.tier, "x-route-reason": decision.reason, "x-cache": "miss"}
        log_content(self.config.log_content, "messages", completion.id, chat.messages)  # off by default
        cache = self.state.cache
        no_cache, no_store = cache_control(request)
        scope = question = None
        if cache is not None and cache.accepts(temperature=chat.temperature, seed=chat.seed):
            scope, question = cache_scope(caller.tenant, chat, decision.tier)
        if scope is not None:
            lookup = await cache.lookup(scope, question, no_cache=no_cache)
            self.metrics.cache_lookups.labels(lookup.kind, decision.tier).inc()
            if lookup.similarity is not None:
                self.metrics.cache_similarity.observe(lookup.similarity)
                headers["x-cache-similarity"] = f"{lookup.similarity:.4f}"
            headers["x-cache-lookup"] = lookup.kind
            if lookup.kind in ("exact", "semantic"):
                headers["x-cache"] = "hit"
                headers["x-served-by"] = decision.tier
                entry = lookup.entry
                p, c = int(entry.usage.get("prompt_tokens", 0)), int(entry.usage.get("completion_tokens", 0))
                saved = tier.cost(p, c)
                self.state.ledger.record_hit(caller, saved)
                self.metrics.cost_saved.labels(decision.tier).inc(saved)
                self.metrics.cache_tokens_saved.labels(decision.tier).inc(c)
                headers["x-cost-usd"] = "0"
                headers["x-cost-saved-usd"] = f"{saved:.9f}"
                return await self._respond_hit(request, chat, completion, entry, p, headers, t0)
        else:
            headers["x-cache-lookup"] = "bypass"
            if cache is not None:
                self.metrics.cache_lookups.labels("bypass", decision.tier).inc()
        store = None
        if scope is not None and not no_store:
            async def store(text: str, answer: Answer) -> None:
                if answer.finish_reason == "stop" and not answer.fallbacks:  # only the routed tier's own answers
                    usage = {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens}
                    await cache.store(scope, question, text, answer.finish_reason, usage, decision.tier)
        if chat.stream:
            return await self._stream(request, chat, caller, decision, completion, headers, store, t0)
        return await self._whole(chat, caller, decision, completion, headers, store, t0)

    # -- miss: the fallback chain answers

    async def _chain(self, chat: ChatRequest, decision: Decision, answer: Answer, t0: float, *,
                     continue_partial: bool) -> AsyncIterator[str | None]:
        """Yield text deltas from the first tier of the chain that can answer.

        A tier is skipped when it is down or at capacity; it is abandoned when it fails, or makes no
        progress for ``timeout_s``. What it already streamed stays: with ``continue_partial`` the next
        tier continues that text (a streaming client already has it), otherwise it starts over.
        Raises ``APIError`` for a bad request (400), ``ChainFailed`` when every tier failed.
        """
        spec = self.state.router.spec
        sent = ""
        for i, name in enumerate(decision.chain):
            tier, backend = spec.tier(name), self.state.backends[name]
            nxt = decision.chain[i + 1] if i + 1 < len(decision.chain) else "none"
            if not backend.ready:
                self._fell_back(answer, name, nxt, "unavailable")
                continue
            if self.state.inflight[name] >= tier.capacity:
                self._fell_back(answer, name, nxt, "overloaded")
                continue
            self.state.inflight[name] += 1
            partial, n_partial, prompt_len = [], 0, 0
            try:
                prompt_ids = await asyncio.wait_for(backend.encode(chat.messages, sent), tier.timeout_s)
                prompt_len = len(prompt_ids)
                answer.current = name
                params = self._params(chat, tier, backend, prompt_ids, answer.completion_tokens, first=(i == 0))
                gen = backend.generate(prompt_ids, params, f"{decision.tier}-{id(answer):x}-{i}")
                last = None
                async with contextlib.aclosing(gen):
                    while True:
                        try:
                            out = await asyncio.wait_for(anext(gen), tier.timeout_s)
                        except StopAsyncIteration:
                            raise BackendError("failed", f"tier {name!r} ended its answer without finishing") from None
                        now = time.perf_counter()
                        if last is not None and out.token_ids:
                            gap = (now - last) / len(out.token_ids)
                            for _ in out.token_ids:
                                self.metrics.itl.labels(name).observe(gap)
                        if out.token_ids:
                            last = now
                        n_partial += len(out.token_ids)
                        answer.replica = out.metrics.get("replica", answer.replica)
                        if answer.ttft is None and out.token_ids:
                            answer.ttft = time.perf_counter() - t0
                        if out.text:
                            partial.append(out.text)
                            yield out.text
                        if out.finished:
                            if out.metrics.get("queue_s") is not None:
                                self.metrics.queue.labels(name).observe(out.metrics["queue_s"])
                            answer.served_by = name
                            answer.prompt_tokens = prompt_len
                            answer.completion_tokens += out.completion_tokens
                            answer.finish_reason = out.finish_reason
                            answer.charges.append((name, prompt_len, out.completion_tokens))
                            return
            except (RequestError, APIError) as exc:
                if i == 0:
                    raise invalid(str(exc), "messages") if isinstance(exc, RequestError) else exc from None
                cause = "failed"  # a fallback tier that cannot take this request (e.g. a shorter context)
            except BackendError as exc:
                cause = exc.cause
            except asyncio.TimeoutError:
                cause = "timeout"
            finally:
                self.state.inflight[name] -= 1
            log.warning("tier %s %s for a request; falling back to %s", name, cause, nxt)
            if continue_partial and partial:  # the client has this text: keep it, charge it
                sent += "".join(partial)
                answer.completion_tokens += n_partial
                answer.charges.append((name, prompt_len, n_partial))
            self._fell_back(answer, name, nxt, cause)
            if partial:
                yield None  # a tier was abandoned mid-answer: the consumer continues or starts over
        raise ChainFailed("; ".join(f"{a} {c}" for a, _, c in answer.fallbacks))

    def _fell_back(self, answer: Answer, tier: str, to: str, cause: str) -> None:
        answer.fallbacks.append((tier, to, cause))
        self.metrics.fallbacks.labels(tier, to, cause).inc()

    def _params(self, chat, tier, backend, prompt_ids, already: int, first: bool) -> SamplingParams:
        context = min(tier.max_context or backend.max_model_len, backend.max_model_len)
        room = context - len(prompt_ids)
        if room < 1:
            raise invalid(f"the messages are {len(prompt_ids)} tokens; the {tier.name!r} tier's context is "
                          f"{context} tokens and at least one must be left for the answer", "messages",
                          "context_length_exceeded")
        if chat.max_tokens is not None and chat.max_tokens - already > room:
            raise invalid(f"messages ({len(prompt_ids)} tokens) + max_tokens ({chat.max_tokens}) exceed the "
                          f"{tier.name!r} tier's context of {context} tokens", "max_tokens", "context_length_exceeded")
        max_tokens = (chat.max_tokens or min(self.config.limits.default_max_tokens, room + already)) - already
        try:
            return SamplingParams(temperature=chat.temperature, top_p=chat.top_p, max_tokens=max(1, max_tokens),
                                  stop=chat.stop, seed=None if chat.seed is None else chat.seed % 2**32)
        except ValueError as exc:
            raise invalid(str(exc)) from None

    def _unavailable(self, decision: Decision, exc: ChainFailed) -> APIError:
        return APIError(503, f"no tier could answer ({exc}); tried {', '.join(decision.chain)}",
                        type="service_unavailable", code="tiers_unavailable", headers={"Retry-After": "5"})

    @staticmethod
    def _answer_headers(answer: Answer, cost: float | None = None) -> dict[str, str]:
        h = {"x-served-by": answer.served_by or answer.current or ""}
        if answer.replica:
            h["x-served-by-replica"] = answer.replica
        if answer.fallbacks:
            h["x-fallback"] = ", ".join(f"{a}->{b} ({c})" for a, b, c in answer.fallbacks)
        if cost is not None:
            h["x-cost-usd"] = f"{cost:.9f}"
        return h

    def _settle(self, caller: Caller, decision: Decision, answer: Answer, t0: float) -> float:
        """Charge the caller for what each tier produced; metrics; returns the cost."""
        spec = self.state.router.spec
        cost = 0.0
        for name, p, c in answer.charges:
            part = spec.tier(name).cost(p, c)
            cost += part
            self.state.ledger.charge(caller, name, p, c, part)
            self.metrics.cost.labels(name).inc(part)
            self.metrics.prompt_tokens.labels(name).inc(p)
            self.metrics.generation_tokens.labels(name).inc(c)
        self.state.ledger.count_request(caller, fallback=bool(answer.fallbacks))
        served = answer.served_by or decision.tier
        if answer.ttft is not None:
            self.metrics.ttft.labels(served, "miss").observe(answer.ttft)
        self.metrics.e2e.labels(served, "miss").observe(time.perf_counter() - t0)
        return cost

    async def _whole(self, chat, caller, decision, completion, headers, store, t0) -> web.Response:
        answer = Answer()
        text = []
        try:
            async with contextlib.aclosing(self._chain(chat, decision, answer, t0, continue_partial=False)) as deltas:
                async for delta in deltas:
                    if delta is None:  # an abandoned tier's partial text is not part of this answer
                        text.clear()
                    else:
                        text.append(delta)
        except ChainFailed as exc:
            self._settle(caller, decision, answer, t0)
            raise self._unavailable(decision, exc) from None
        cost = self._settle(caller, decision, answer, t0)
        headers.update(self._answer_headers(answer, cost))
        body = "".join(text)
        log_content(self.config.log_content, "answer", completion.id, body)
        if store is not None:
            await store(body, answer)
        return web.json_response(completion.response(body, answer.finish_reason, answer.prompt_tokens,
                                                     answer.completion_tokens), headers=headers)

    async def _stream(self, request, chat, caller, decision, completion, headers, store, t0):
        answer = Answer()
        text: list[str] = []
        resp = None
        chain = self._chain(chat, decision, answer, t0, continue_partial=True)
        try:
            async with contextlib.aclosing(chain) as deltas:
                async for delta in deltas:
                    if delta is None:  # mid-answer: the next tier continues the text the client has
                        frm, to, cause = answer.fallbacks[-1]
                        await resp.write(f": tier {frm} {cause}; {to} continues the answer\n\n".encode())
                        continue
                    if resp is None:  # headers go out with the first text: they name the serving tier
                        resp = await self._open_stream(request, {**headers, **self._answer_headers(answer)})
                        await resp.write(sse(completion.chunk({"role": "assistant", "content": ""})))
                    text.append(delta)
                    await resp.write(sse(completion.chunk({"content": delta})))
        except ChainFailed as exc:
            self._settle(caller, decision, answer, t0)
            err = self._unavailable(decision, exc)
            if resp is None:
                raise err from None
            await resp.write(sse(err.body()))
            await resp.write(b"data: [DONE]\n\n")
            return resp
        if resp is None:  # an empty answer
            resp = await self._open_stream(request, {**headers, **self._answer_headers(answer)})
            await resp.write(sse(completion.chunk({"role": "assistant", "content": ""})))
        self._settle(caller, decision, answer, t0)
        await resp.write(sse(completion.chunk({}, answer.finish_reason)))
        if chat.include_usage:
            await resp.write(sse(completion.usage_chunk(answer.prompt_tokens, answer.completion_tokens)))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        request[keys.ANSWERED] = resp.status  # a hang-up from here on is no failure
        log_content(self.config.log_content, "answer", completion.id, "".join(text))
        if store is not None:  # shielded: a client that closes right after [DONE] cancels this handler
            await self.state.shielded(store("".join(text), answer))
        return resp

    # -- hit: replay the stored answer in the same shape

    async def _respond_hit(self, request, chat, completion, entry, prompt_tokens, headers, t0):
        n_out = int(entry.usage.get("completion_tokens", 0))
        tier = headers["x-route-tier"]
        log_content(self.config.log_content, "answer (cache hit)", completion.id, entry.answer)
        if not chat.stream:
            self._observe_hit(tier, t0)
            return web.json_response(completion.response(entry.answer, entry.finish_reason, prompt_tokens, n_out),
                                     headers=headers)
        resp = await self._open_stream(request, headers)
        await resp.write(sse(completion.chunk({"role": "assistant", "content": ""})))
        for piece in split_for_stream(entry.answer):
            await resp.write(sse(completion.chunk({"content": piece})))
        await resp.write(sse(completion.chunk({}, entry.finish_reason)))
        if chat.include_usage:
            await resp.write(sse(completion.usage_chunk(prompt_tokens, n_out)))
        self._observe_hit(tier, t0)  # before [DONE]: the client may close (cancelling this handler) once it has it
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    def _observe_hit(self, tier: str, t0: float) -> None:
        elapsed = time.perf_counter() - t0
        self.metrics.ttft.labels(tier, "hit").observe(elapsed)
        self.metrics.e2e.labels(tier, "hit").observe(elapsed)

    async def _open_stream(self, request, headers) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache",
                                           **headers})
        await resp.prepare(request)
        return resp


def cache_scope(tenant: str, chat: ChatRequest, tier: str):
    """(scope, question), or (None, None) when the request cannot be cached (the cache is bypassed).

    The scope names the routed tier, not what the client typed: ``auto`` and an explicit tier share
    entries when they land on the same tier, and one tier never answers for another."""
    from gateway.cache import CacheScope

    try:
        return CacheScope.from_request(tenant, tier, list(chat.messages), chat.answer_params())
    except ValueError:
        return None, None


async def list_models(request: web.Request) -> web.Response:
    st = request.app[keys.STATE]
    data = [{"id": name, "object": "model", "created": st.started, "owned_by": "jaxserve"}
            for name in [*st.router.spec.names, AUTO]]
    return web.json_response({"object": "list", "data": data})


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    """Ready when the cache and every in-process tier are; a runtime-server tier that is down is
    reported but does not hold the gateway back (its requests fall back)."""
    st = request.app[keys.STATE]
    spec = st.router.spec
    state = {t.name: st.backends[t.name].ready if t.name in st.backends else False for t in spec.tiers}
    local = [state[t.name] for t in spec.tiers if not t.remote]
    ready = bool(state) and all(local) and any(state.values()) and st.cache_ready
    return web.json_response({"ready": ready, "models": state}, status=200 if ready else 503)


async def usage(request: web.Request) -> web.Response:
    """``GET /v1/usage``: the calling key's spend, savings and limits in the current period."""
    ledger = request.app[keys.STATE].ledger
    return web.json_response(ledger.usage(ledger.identify(request)))


async def metrics(request: web.Request) -> web.Response:
    body = request.app[keys.METRICS].render()
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


# ---------------------------------------------------------------- the factory

def create_app(config: GatewayConfig, *, backends: Mapping[str, Any] | None = None, cache=None,
               cache_enabled: bool | None = None, clock=time.time) -> web.Application:
    """Build the gateway. ``backends`` (tier name -> backend) and ``cache`` may be given (tests,
    embedding); otherwise they are built from ``config`` when the app starts."""
    app = web.Application(middlewares=[error_middleware, drain_middleware], client_max_size=config.limits.max_body_bytes)
    app[keys.CONFIG] = config
    spec = config.tier_spec
    state = app[keys.STATE] = keys.GatewayState(
        backends=dict(backends or {}), started=int(time.time()), router=Router(spec),
        ledger=UsageLedger(spec.keys, clock=clock), inflight={t.name: 0 for t in spec.tiers})
    app[keys.METRICS] = GatewayMetrics(lambda: state.backends, lambda: state.cache, lambda: state.ledger_sync)

    async def models_ctx(app: web.Application):
        if not state.backends:
            engines = {m.name: m.engine for m in config.models}
            local: dict = {}  # model name -> runtime.serving.local.LocalEngine
            for t in spec.tiers:
                if t.urls:  # data-parallel replicas: least-loaded dispatch
                    from gateway.backends.replicas import ReplicaSet

                    state.backends[t.name] = ReplicaSet.from_urls(t.name, t.urls)
                    continue
                if t.url is not None:
                    from gateway.backends.remote import RemoteBackend

                    state.backends[t.name] = RemoteBackend(t.name, t.url)
                    continue
                if t.model not in local:  # loading weights takes seconds: off the event loop
                    from runtime.serving.local import LocalEngine  # JAX loads only for an in-process tier

                    local[t.model] = await asyncio.to_thread(LocalEngine.from_config, t.model, engines[t.model])
                state.backends[t.name] = local[t.model]
        missing = [t.name for t in spec.tiers if t.name not in state.backends]
        if missing:
            raise ValueError(f"no backend for tier(s) {', '.join(missing)}")
        unique = list({id(b): b for b in state.backends.values()}.values())
        tasks = [asyncio.create_task(b.start(warmup=config.warmup)) for b in unique]
        yield
        for t in tasks:
            t.cancel()
        for b in unique:
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

    async def ledger_ctx(app: web.Application):
        """``keys.shared``: the ledger syncs with the other replicas through Redis in the background."""
        from gateway.accounting.sync import LedgerSync

        sync = state.ledger_sync = LedgerSync(state.ledger, spec.keys.shared)
        await sync.start()
        yield
        await sync.close()

    app.cleanup_ctx.append(cache_ctx)
    if spec.keys.shared is not None:
        app.cleanup_ctx.append(ledger_ctx)
    app.cleanup_ctx.append(models_ctx)
    app.router.add_post("/v1/chat/completions", ChatHandler(app).handle)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/v1/usage", usage)
    setup_dashboard(app)
    setup_security(app, config.admin)  # the admin key for /metrics and the dashboard; GET /openapi.json
    return app
