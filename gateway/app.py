"""The gateway: an aiohttp app speaking the OpenAI chat-completions API in front of the cache and models.

Request flow (all on the event loop; the engines step on their own threads). ``POST /v1/chat/completions``
is ``ChatHandler``, a composition of the steps in ``gateway.pipeline``, each tested on its own:

    admission    who is calling (401), rate limit (429), parse + validate (4xx, OpenAI error body)
    routing      the tier for "model" or "auto", with a reason (404 unknown, 403 not for this key)
    admission    budget (429)
    cache_step   lookup in the request's scope (tenant, routed tier, system prompt, history, parameters)
      hit:       respond.Reply.hit: the stored answer in exactly the shape of a miss, x-cache: hit
      miss:      fallback.FallbackChain: the first tier of the chain that can answer (503 when none)
                 -> respond.Reply.whole (JSON) or .stream (sse.EventStream) -> billing -> cache store
                 of a finished answer; a client that disconnects aborts its generation (KV blocks freed)
    outcome      every request counted by tier and status (499: the client hung up), latency by tier

``create_app(config, backends=..., cache=...)`` builds everything; nothing happens at import time.
Long-lived resources (engine threads, the cache's embedder and store) open and close in
``cleanup_ctx``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from aiohttp import web

from gateway import keys
from gateway.accounting.usage import Caller, UsageLedger
from gateway.api.schemas import ChatRequest, Completion, ModelCard, new_completion_id
from gateway.backends import Backend
from gateway.config.gateway import GatewayConfig
from gateway.embeddings import EMBEDDING_MODEL, setup_embeddings
from gateway.http_headers import setup_headers
from gateway.lifecycle import drain_middleware
from gateway.observability.dashboard import setup_dashboard
from gateway.observability.metrics import GatewayMetrics
from gateway.observability.repeats import RepeatTracker
from gateway.pipeline.admission import Admission
from gateway.pipeline.billing import Billing
from gateway.pipeline.cache_step import CacheStep
from gateway.pipeline.choices import Choices, Shape, respond, runs_of
from gateway.pipeline.fallback import Answer, FallbackChain
from gateway.pipeline.outcome import Outcome
from gateway.pipeline.respond import Miss, Reply
from gateway.pipeline.routing import AUTO, Decision, Router
from gateway.security import log_content, setup_security
from runtime.serving.errors import APIError, error_middleware


class ChatHandler:
    """``POST /v1/chat/completions``: admission -> routing -> cache -> fallback chain -> billing -> reply.

    Only wiring: each step is a unit of ``gateway.pipeline``. The steps are built per request (a few small
    objects) from the app's state, which is filled in at start-up and may change under a running app
    (tests swap tiers and backends)."""

    def __init__(self, app: web.Application):
        self.app = app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        with Outcome(self.app[keys.METRICS], request) as outcome:
            caller, (chat,), decision = await admit_and_route(self.app, request, outcome, text=False)
            if chat.n > 1:
                return outcome.done(await answer_choices(self.app, request, outcome, caller, [chat], decision))
            return outcome.done(await self._answer(request, outcome, caller, chat, decision))

    async def _answer(
        self, request: web.Request, outcome: Outcome, caller: Caller, chat: ChatRequest, decision: Decision
    ) -> web.StreamResponse:
        config, state, metrics = self.app[keys.CONFIG], self.app[keys.STATE], self.app[keys.METRICS]
        # ``model`` in the answer: the model that answered (the routed tier's until one does; a fallback's after)
        completion = Completion(new_completion_id(), state.router.spec.tier(decision.tier).model)
        log_content(config.log_content, "messages", completion.id, chat.messages)  # off by default
        reply = Reply(
            request,
            chat,
            completion,
            {"x-route-tier": decision.tier, "x-route-reason": decision.reason},
            config.log_content,
        )
        billing = Billing(state.ledger, state.router.spec, metrics)
        step = CacheStep(state.cache, metrics, default_max_tokens=config.limits.default_max_tokens)
        cached = await step.lookup(request.headers, caller.tenant, chat, decision.tier)
        reply.headers.update(cached.headers)
        if cached.entry is not None:
            p, c = int(cached.entry.usage.get("prompt_tokens", 0)), cached.served.completion_tokens
            credit = billing.credit_hit(caller, decision.tier, {"prompt_tokens": p, "completion_tokens": c})
            reply.headers.update(credit)
            saved = float(credit["x-cost-saved-usd"])
            record(state, outcome, chat, decision.tier, p, c, None, "hit", looked=cached.headers)
            response = await reply.hit(cached.served, p, lambda: outcome.observe_hit(decision.tier), saved)
            cached.verify()  # after the answer is sent: the verification runs off the request's path
            return response

        answer = Answer(logprobs=[] if chat.logprobs is not None else None)
        chain = fallback_chain(state, config, metrics)

        def settle() -> float:  # latency under the tier that served (the routed one when none did)
            tier = answer.served_by or decision.tier
            outcome.observe_miss(tier, answer.ttft)
            lookup = "miss" if cached.store is not None else "bypass"
            asked = state.repeats.key(caller.tenant, decision.tier, list(chat.messages), chat.answer_params())
            p, c = answer.prompt_tokens, answer.completion_tokens
            record(state, outcome, chat, tier, p, c, answer.prompt_ids, lookup, asked, looked=cached.headers)
            cost = billing.charge(caller, answer)
            if state.repeats.seen(asked):
                metrics.repeated.labels(tier).inc()
                metrics.repeated_cost.labels(tier).inc(cost)
            return cost

        miss = Miss(
            # a tool call is sent whole at the end: a fallback tier may start it over
            chain.run(chat, decision, answer, outcome.t0, continue_partial=chat.stream and chat.needs != "tools"),
            answer,
            settle,
            cached.store,
        )
        return await (reply.stream(miss, state.shielded) if chat.stream else reply.whole(miss))


def fallback_chain(state, config: GatewayConfig, metrics: GatewayMetrics) -> FallbackChain:
    """The app's fallback chain for one request (``metrics``: where its latencies are counted)."""
    return FallbackChain(
        state.router.spec, state.backends, state.inflight, metrics, default_max_tokens=config.limits.default_max_tokens
    )


class CompletionsHandler:
    """``POST /v1/completions``: admission -> routing (a tier that can complete text) -> the choices, one
    fallback chain each (``gateway.pipeline.choices``). No semantic cache: text continuation is not a
    question."""

    def __init__(self, app: web.Application):
        self.app = app

    async def handle(self, request: web.Request) -> web.StreamResponse:
        with Outcome(self.app[keys.METRICS], request) as outcome:
            caller, chats, decision = await admit_and_route(self.app, request, outcome, text=True)
            return outcome.done(await answer_choices(self.app, request, outcome, caller, chats, decision, text=True))


async def admit_and_route(
    app: web.Application, request: web.Request, outcome: Outcome, *, text: bool
) -> tuple[Caller, list[ChatRequest], Decision]:
    """Admission (key, rate, body), routing (on the first prompt), the budget check, then the routed
    tier's sampling defaults in the fields the client left out (fallback tiers keep them)."""
    config, state, metrics = app[keys.CONFIG], app[keys.STATE], app[keys.METRICS]
    admission = Admission(state.ledger, metrics, max_messages=config.limits.max_messages)
    if text:
        caller, chats = await admission.admit_completions(request)
    else:
        caller, chat = await admission.admit(request)
        chats = [chat]
    decision = state.router.route(chats[0], caller.policy, state.ledger.budget_left(caller))
    outcome.tier = decision.tier  # a budget refusal is counted under the tier it would have used
    admission.check_budget(caller, chats[0], decision)
    defaults = state.router.spec.tier(decision.tier).sampling_defaults
    return caller, [c.with_defaults(defaults) for c in chats], decision


async def answer_choices(
    app: web.Application,
    request: web.Request,
    outcome: Outcome,
    caller: Caller,
    chats: list[ChatRequest],
    decision: Decision,
    *,
    text: bool = False,
) -> web.StreamResponse:
    """Several choices (chat ``n`` > 1, or /v1/completions), each its own fallback chain, charged together."""
    config, state, metrics = app[keys.CONFIG], app[keys.STATE], app[keys.METRICS]
    spec = state.router.spec
    for c in chats:
        log_content(config.log_content, "prompt" if text else "messages", decision.tier, c.prompt or c.messages)
    chain = fallback_chain(state, config, metrics)
    runs = runs_of(chats)
    choices = Choices(chain, decision, outcome.t0, runs, stream=chats[0].stream)
    shape = Shape(
        text, new_completion_id("cmpl" if text else "chatcmpl"), spec.tier(decision.tier).model, int(time.time())
    )
    billing = Billing(state.ledger, spec, metrics)

    def settle() -> float:
        first = runs[0].answer
        outcome.observe_miss(first.served_by or decision.tier, first.ttft)
        for r in runs:
            a = r.answer
            record(
                state,
                outcome,
                r.chat,
                a.served_by or decision.tier,
                a.prompt_tokens,
                a.completion_tokens,
                a.prompt_ids,
                "bypass",
            )
        return billing.charge_all(caller, [r.answer for r in runs])

    headers = {"x-route-tier": decision.tier, "x-route-reason": decision.reason, "x-cache": "bypass"}
    return await respond(request, choices, shape, headers, settle, chats[0].include_usage)


def record(
    state,
    outcome: Outcome,
    chat: ChatRequest,
    tier: str,
    prompt: int,
    output: int,
    ids,
    cache: str,
    asked=None,
    looked: dict | None = None,
) -> None:
    """One request's shape to the recorder, when recording (gateway/advise/recording.py); ``asked``: its repeat
    digest (gateway/observability/repeats.py), numbered there like the prefix blocks; ``looked``: the cache
    step's headers (its lookup's kind and best similarity, what a cache-threshold replay re-decides)."""
    if state.recorder is not None:
        looked = looked or {}
        similarity = looked.get("x-cache-similarity")
        state.recorder.record(
            lookup=looked.get("x-cache-lookup"),
            similarity=None if similarity is None else float(similarity),
            asked=asked,
            arrived=outcome.t0,
            tier=tier,
            prompt_tokens=prompt,
            output_tokens=output,
            prompt_ids=ids,
            cache=cache,
            stream=chat.stream,
            max_tokens=chat.max_tokens,
        )


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

    quiet_metrics = GatewayMetrics(lambda: {})  # verification answers stay out of the serving metrics

    async def verification_answer(chat: ChatRequest, tier: str) -> str:
        """A fresh answer of ``tier`` alone (no fallback) for live cache verification."""
        chain = fallback_chain(state, config, quiet_metrics)
        answer = Answer(logprobs=None)
        parts = []
        async for delta in chain.run(
            chat, Decision(tier, (tier,), "verify"), answer, time.perf_counter(), continue_partial=False
        ):
            if delta is None:
                parts.clear()
            else:
                parts.append(delta)
        return "".join(parts)

    async def cache_ctx(app: web.Application):
        c = cache
        enabled = cache_enabled if cache_enabled is not None else config.cache.get("enabled", True)
        if c is None and enabled:
            from gateway.cache import CacheConfig, SemanticCache

            c = SemanticCache(CacheConfig.from_mapping(config.cache))
        verifying = c is not None and (c.config.verify_share > 0 or c.config.verify_first > 0)
        if verifying and c.verifier is None and c.config.enabled:
            verifier = c.attach_verifier(verification_answer)

            async def stop_verifying(app: web.Application) -> None:  # before the backends close under it
                await verifier.close()

            app.on_shutdown.append(stop_verifying)
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

    async def recorder_ctx(app: web.Application):
        from gateway.advise.recording import Recorder

        state.recorder = Recorder(config.record.path, max_requests=config.record.max_requests)
        yield
        state.recorder.close()

    if config.record is not None:
        app.cleanup_ctx.append(recorder_ctx)
    app.cleanup_ctx.append(cache_ctx)
    if spec.keys.shared is not None:
        app.cleanup_ctx.append(ledger_ctx)
    app.cleanup_ctx.append(models_ctx)
    app.router.add_post("/v1/chat/completions", ChatHandler(app).handle)
    app.router.add_post("/v1/completions", CompletionsHandler(app).handle)
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
