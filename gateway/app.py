"""The gateway: an aiohttp app speaking the OpenAI chat-completions API in front of the cache and models.

Request flow (all on the event loop; the engines step on their own threads). ``POST /v1/chat/completions``
(``chat_completions``) and ``POST /v1/completions`` compose the steps of ``gateway.pipeline``, each tested
on its own, around one ``Exchange`` (the request's typed state, from admission to finish):

    Exchange.admit    who is calling (401), rate limit (429), parse + validate (4xx, OpenAI error body);
                      routing: the tier for "model" or "auto", with a reason (404, 403); budget (429)
    Exchange.look_up  chat with n = 1: the cache lookup in the request's scope (tenant, routed tier,
                      system prompt, history, parameters)
    respond           the one responder: the choices (a hit replayed, or each run's fallback chain:
                      the first tier that can answer, 503 when none) as JSON or server-sent events;
                      a client that disconnects aborts its generations (KV blocks freed)
    Exchange.finish   billing, the recorder, the repeat counter, the outcome metrics, the cache store
    Outcome           every request counted by tier and status (499: the client hung up)

``create_app(config, backends=..., cache=...)`` builds everything; nothing happens at import time.
Long-lived resources (engine threads, the cache's embedder and store, the ledger's sync, the recorder)
open and close in ``cleanup_ctx`` (``gateway.lifecycle``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from aiohttp import web

from gateway import keys
from gateway.accounting.usage import UsageLedger
from gateway.api.schemas import ModelCard
from gateway.backends import Backend
from gateway.config.gateway import GatewayConfig
from gateway.embeddings import EMBEDDING_MODEL, setup_embeddings
from gateway.http_headers import setup_headers
from gateway.lifecycle import cache_ctx, drain_middleware, ledger_ctx, recorder_ctx
from gateway.observability.dashboard import setup_dashboard
from gateway.observability.metrics import GatewayMetrics
from gateway.observability.repeats import RepeatTracker
from gateway.pipeline.exchange import Exchange
from gateway.pipeline.outcome import Outcome
from gateway.pipeline.respond import respond
from gateway.pipeline.routing import AUTO, Router
from gateway.security import setup_security
from runtime.serving.errors import APIError, error_middleware


async def chat_completions(request: web.Request) -> web.StreamResponse:
    """``POST /v1/chat/completions``: admission -> routing -> cache (n = 1) -> the choices -> finish."""
    with Outcome(request.app[keys.METRICS], request) as outcome:
        exchange = await Exchange.admit(request, outcome, text_api=False)
        if exchange.chats[0].n == 1:  # n > 1 bypasses the cache: a stored answer is one sample, not n
            await exchange.look_up()
        return outcome.done(await respond(exchange))


async def completions(request: web.Request) -> web.StreamResponse:
    """``POST /v1/completions``: admission -> routing (a tier that can complete text) -> the choices, one
    fallback chain each. No semantic cache: text continuation is not a question."""
    with Outcome(request.app[keys.METRICS], request) as outcome:
        exchange = await Exchange.admit(request, outcome, text_api=True)
        return outcome.done(await respond(exchange))


def model_cards(state: keys.GatewayState) -> list[ModelCard]:
    """Every name a request may use as ``model``: ``auto``, each tier, each model a tier serves (the first
    tier serving it), and the embedding model; with context length, capabilities and sampling defaults."""
    spec, router = state.router.spec, state.router
    cards = []
    all_caps = sorted(set().union(*(t.can for t in spec.tiers)))
    cards.append(ModelCard(id=AUTO, created=state.started, owned_by="jaxserve", capabilities=all_caps))
    seen = {AUTO}
    for t in spec.tiers:
        backend = state.backends.get(t.name)
        served = (backend.max_model_len or None) if backend is not None else None
        context = min(x for x in (t.max_context, served) if x) if (t.max_context or served) else None
        card = dict(
            created=state.started,
            owned_by="jaxserve",
            tier=t.name,
            context_length=context,
            capabilities=sorted(t.can),
            sampling_defaults=t.sampling_defaults,
            price={"input_per_mtok": t.price.input_per_mtok, "output_per_mtok": t.price.output_per_mtok},
        )
        for name in (t.name, t.model):
            if name not in seen and router.resolve(name) == t.name:
                seen.add(name)
                cards.append(ModelCard(id=name, **card))
    cards.append(ModelCard(id=EMBEDDING_MODEL, created=state.started, owned_by="jaxserve", capabilities=["embeddings"]))
    return cards


async def list_models(request: web.Request) -> web.Response:
    data = [c.model_dump() for c in model_cards(request.app[keys.STATE])]
    return web.json_response({"object": "list", "data": data})


async def get_model(request: web.Request) -> web.Response:
    name = request.match_info["model"]
    cards = model_cards(request.app[keys.STATE])
    card = next((c for c in cards if c.id == name), None)
    if card is None:
        raise APIError(
            404,
            f"the model {name!r} does not exist; available: {', '.join(c.id for c in cards)}",
            param="model",
            code="model_not_found",
        )
    return web.json_response(card.model_dump())


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
    # Tiers still compiling step programs in the background (they serve meanwhile, padded to compiled ones).
    compiling = sorted(name for name, b in st.backends.items() if b.compiling)
    body = {"ready": ready, "models": state, "compiling": compiling}
    return web.json_response(body, status=200 if ready else 503)


async def usage(request: web.Request) -> web.Response:
    """``GET /v1/usage``: the calling key's spend, savings and limits in the current period."""
    ledger = request.app[keys.STATE].ledger
    return web.json_response(ledger.usage(ledger.identify(request)))


async def metrics(request: web.Request) -> web.Response:
    body = request.app[keys.METRICS].render()
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


# ---------------------------------------------------------------- the factory


def create_app(
    config: GatewayConfig,
    *,
    backends: Mapping[str, Backend] | None = None,
    cache=None,
    cache_enabled: bool | None = None,
    clock=time.time,
) -> web.Application:
    """Build the gateway. ``backends`` (tier name -> backend) and ``cache`` may be given (tests,
    embedding); otherwise they are built from ``config`` when the app starts."""
    app = web.Application(
        middlewares=[error_middleware, drain_middleware], client_max_size=config.limits.max_body_bytes
    )
    app[keys.CONFIG] = config
    spec = config.tier_spec
    state = app[keys.STATE] = keys.GatewayState(
        backends=dict(backends or {}),
        started=int(time.time()),
        router=Router(spec),
        ledger=UsageLedger(spec.keys, clock=clock),
        inflight={t.name: 0 for t in spec.tiers},
        repeats=RepeatTracker(),
    )
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

    if config.record is not None:
        app.cleanup_ctx.append(recorder_ctx(state, config.record))
    app.cleanup_ctx.append(cache_ctx(state, config, cache, cache_enabled))
    if spec.keys.shared is not None:
        app.cleanup_ctx.append(ledger_ctx(state, spec.keys.shared))
    app.cleanup_ctx.append(models_ctx)
    app.router.add_post("/v1/chat/completions", chat_completions)
    app.router.add_post("/v1/completions", completions)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get("/v1/models/{model}", get_model)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/v1/usage", usage)
    setup_embeddings(app)
    setup_dashboard(app, prices_of=lambda: {t.name: t.price.output_per_mtok for t in app[keys.STATE].router.spec.tiers})
    setup_headers(app, config.cors)
    setup_security(app, config.admin)  # the admin key for /metrics and the dashboard; GET /openapi.json
    return app
