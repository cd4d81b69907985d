"""Serving and graceful shutdown of one gateway process (``python -m gateway``).

    start:    AppRunner.setup() (cleanup_ctx: cache, engines warming up) -> TCPSite listening
    SIGTERM / SIGINT:
      drain:  state.draining = True; the listener stays open so that new requests get an explicit
              503 + Retry-After (code "draining", OpenAI body) instead of a refused connection;
              /readyz answers 503 too, so a load balancer stops sending; requests already in flight
              (streams included) run to their end, up to ``drain_timeout_s``
      close:  AppRunner.cleanup(): listener and idle connections closed, engines stopped, the cache
              closed (the file store flushes atomically: temp file, fsync, rename); exit status 0
    the same signal again within ``shutdown.REPEAT_S``: the same stop, delivered twice (``kill -TERM`` to the
      process group of ``make serve`` reaches the gateway directly and through make, which forwards it)
    a second signal during the drain: stop waiting for the in-flight requests (cancelled), close, exit
      status 1; a close still running ``ABANDON_CLOSE_S`` later (an XLA compile cannot be interrupted),
      or a third signal, ends the process at once (``os._exit(1)``)

``drain_middleware`` does the counting and the refusing; ``create_app`` installs it, so an app run by
any runner (tests' ``ServerThread``) can be drained with ``drain(app, timeout)``.

``cache_ctx``, ``ledger_ctx`` and ``recorder_ctx`` open and close the long-lived resources ``create_app``
puts in its ``cleanup_ctx`` (the backends' own context stays in ``gateway.app``: it builds in-process
engines).

``take_terminal`` is for ``make serve`` (the Makefile sets JAXSERVE_TAKE_TERMINAL=1): Ctrl-C sends SIGINT to
the terminal's whole foreground job, make included, and a make that gets SIGINT exits 130 whatever the
gateway does. Run from a terminal's foreground, the gateway moves to a process group of its own and takes
the terminal, so Ctrl-C reaches it alone; make then exits with its status (0 after a drain).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time

from aiohttp import web

from gateway import keys
from gateway.api.schemas import ChatRequest
from gateway.config.gateway import GatewayConfig, RecordConfig
from gateway.config.tiers import SharedLedgerConfig
from gateway.observability.metrics import GatewayMetrics
from gateway.pipeline.exchange import answer_alone, fallback_chain
from runtime.serving import shutdown
from runtime.serving.errors import APIError

log = logging.getLogger("gateway")

DRAIN_RETRY_AFTER_S = "5"
shutdown.REPEAT_S = 1.0  # the same signal again this soon is the first one delivered twice, not a second Ctrl-C
ABANDON_CLOSE_S = 5.0  # after a second signal, the close gets this long before the process just ends
CLOSE_GRACE_S = 1.0  # AppRunner's wait for handlers at close: the drain has already waited for them
ALWAYS_SERVED = frozenset({"/healthz", "/metrics"})  # alive and observable while draining


@web.middleware
async def drain_middleware(request: web.Request, handler):
    state = request.app[keys.STATE]
    if state.draining and request.path not in ALWAYS_SERVED:
        raise APIError(
            503,
            "the gateway is shutting down; retry shortly (another replica may answer now)",
            type="service_unavailable",
            code="draining",
            headers={"Retry-After": DRAIN_RETRY_AFTER_S},
        )
    state.active_requests += 1
    try:
        return await handler(request)  # a stream's handler returns after its last event
    finally:
        state.active_requests -= 1


async def drain(app: web.Application, timeout_s: float, *, abandon: asyncio.Event | None = None) -> bool:
    """Refuse new requests, then wait until the in-flight ones have finished (True) or ``timeout_s``
    passed or ``abandon`` was set (False)."""
    state = app[keys.STATE]
    state.draining = True
    deadline = time.monotonic() + timeout_s
    while state.active_requests > 0 or state.background_pending:
        if time.monotonic() >= deadline or (abandon is not None and abandon.is_set()):
            log.warning(
                "drain: %d request(s) still in flight, %d answer(s) still being stored; closing anyway",
                state.active_requests,
                state.background_pending,
            )
            return False
        await asyncio.sleep(0.05)
    return True


def exit_now(why: str, *args) -> None:
    """End the gateway at once, status 1, after logging ``why`` (``runtime.serving.shutdown.exit_now``)."""
    shutdown.exit_now(log, 1, why, *args)


def take_terminal() -> None:
    shutdown.take_terminal(log)


async def serve(
    app: web.Application, host: str, port: int, *, drain_timeout_s: float = 60.0, backlog: int = 1024
) -> int:
    """Serve until SIGTERM or SIGINT, then drain and close (see the module docstring); the exit status:
    0, or 1 after a second signal."""
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=CLOSE_GRACE_S)
    loop = asyncio.get_running_loop()
    stop, abandon = asyncio.Event(), asyncio.Event()
    first: list = []  # (signal, time) of the one that started the stop

    def on_signal(sig: signal.Signals) -> None:
        now = time.monotonic()
        if not first:
            first.append((sig, now))
            log.info(
                "%s: draining (new requests get 503), waiting up to %.0f s for %d in flight; "
                "a second signal stops waiting",
                sig.name,
                drain_timeout_s,
                app[keys.STATE].active_requests,
            )
            stop.set()
        elif sig == first[0][0] and now - first[0][1] < shutdown.REPEAT_S:
            log.info(
                "%s again within %.0f s: the same one, delivered twice (make forwards SIGTERM)",
                sig.name,
                shutdown.REPEAT_S,
            )
        elif not abandon.is_set():
            log.warning(
                "%s again: closing without waiting for %d in-flight request(s); exiting with status 1",
                sig.name,
                app[keys.STATE].active_requests,
            )
            abandon.set()
            loop.call_later(
                ABANDON_CLOSE_S, exit_now, "still closing %.0f s after the second signal; exiting now", ABANDON_CLOSE_S
            )
        else:
            exit_now("%s a third time: exiting now, without closing", sig.name)

    # Before setup: a signal while the engines load stops the gateway once they have (no traceback).
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig)
    await runner.setup()
    try:
        if not stop.is_set():
            # backlog: a burst of hundreds of clients connecting at once must queue, not be refused
            await web.TCPSite(runner, host, port, backlog=backlog).start()
            await stop.wait()
        t = time.monotonic()
        drained = await drain(app, drain_timeout_s, abandon=abandon)
        log.info("drain %s in %.2f s; closing", "complete" if drained else "cut short", time.monotonic() - t)
    finally:
        await runner.cleanup()
    log.info("gateway stopped")
    return 1 if abandon.is_set() else 0


# ---------------------------------------------------------------- long-lived resources (create_app's cleanup_ctx)


def cache_ctx(state: keys.GatewayState, config: GatewayConfig, cache=None, enabled: bool | None = None):
    """The semantic cache (``cache``, or one built from ``config.cache`` unless disabled), with live
    verification when configured: its second opinions come from the tier alone, outside the metrics."""
    quiet_metrics = GatewayMetrics(lambda: {})  # verification answers stay out of the serving metrics

    async def verification_answer(chat: ChatRequest, tier: str) -> str:
        return await answer_alone(fallback_chain(state, config, quiet_metrics), chat, tier)

    async def ctx(app: web.Application):
        c = cache
        on = enabled if enabled is not None else config.cache.get("enabled", True)
        if c is None and on:
            from gateway.cache import CacheConfig, SemanticCache

            c = SemanticCache(CacheConfig.from_mapping(config.cache))
        verifying = c is not None and (c.config.verify_share > 0 or c.config.verify_first > 0)
        if verifying and c.verifier is None and c.config.enabled:
            verifier = c.attach_verifier(verification_answer)

            async def stop_verifying(app: web.Application) -> None:  # before the backends close under it
                await verifier.close()

            app.on_shutdown.append(stop_verifying)
        if c is not None and c.config.enabled and c.config.learn and c.learner is None:
            c.attach_learner()  # labels from near-misses; thresholds refit below the calibrated ones
        if c is not None:
            await c.start()
        state.cache = c
        state.cache_ready = True
        yield
        if c is not None:
            await c.close()

    return ctx


def ledger_ctx(state: keys.GatewayState, shared: SharedLedgerConfig):
    """``keys.shared``: the ledger syncs with the other replicas through Redis in the background."""

    async def ctx(app: web.Application):
        from gateway.accounting.sync import LedgerSync

        sync = state.ledger_sync = LedgerSync(state.ledger, shared)
        await sync.start()
        yield
        await sync.close()

    return ctx


def recorder_ctx(state: keys.GatewayState, record: RecordConfig):
    """``record:``: every request's shape to a recording (``gateway.advise.recording``)."""

    async def ctx(app: web.Application):
        from gateway.advise.recording import Recorder

        state.recorder = Recorder(record.path, max_requests=record.max_requests)
        yield
        state.recorder.close()

    return ctx
