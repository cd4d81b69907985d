"""Serving and graceful shutdown of one gateway process (``python -m gateway``).

    start:    AppRunner.setup() (cleanup_ctx: cache, engines warming up) -> TCPSite listening
    SIGTERM / SIGINT:
      drain:  state.draining = True; the listener stays open so that new requests get an explicit
              503 + Retry-After (code "draining", OpenAI body) instead of a refused connection;
              /readyz answers 503 too, so a load balancer stops sending; requests already in flight
              (streams included) run to their end, up to ``drain_timeout_s``
      close:  AppRunner.cleanup(): listener and idle connections closed, engines stopped, the cache
              closed (the file store flushes atomically: temp file, fsync, rename)
    a second signal during the drain stops waiting for the in-flight requests.

``drain_middleware`` does the counting and the refusing; ``create_app`` installs it, so an app run by
any runner (tests' ``ServerThread``) can be drained with ``drain(app, timeout)``.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time

from aiohttp import web

from gateway import keys
from runtime.serving.errors import APIError

log = logging.getLogger("gateway")

DRAIN_RETRY_AFTER_S = "5"
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


async def serve(
    app: web.Application, host: str, port: int, *, drain_timeout_s: float = 60.0, backlog: int = 1024
) -> None:
    """Serve until SIGTERM or SIGINT, then drain and close (see the module docstring)."""
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    try:
        # backlog: a burst of hundreds of clients connecting at once must queue, not be refused
        await web.TCPSite(runner, host, port, backlog=backlog).start()
        loop = asyncio.get_running_loop()
        stop, abandon = asyncio.Event(), asyncio.Event()

        def on_signal(sig: signal.Signals) -> None:
            if stop.is_set():
                log.warning("%s again: closing without waiting for in-flight requests", sig.name)
                abandon.set()
            else:
                log.info(
                    "%s: draining (new requests get 503), waiting up to %.0f s for %d in flight",
                    sig.name,
                    drain_timeout_s,
                    app[keys.STATE].active_requests,
                )
                stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, on_signal, sig)
        await stop.wait()
        t = time.monotonic()
        drained = await drain(app, drain_timeout_s, abandon=abandon)
        log.info("drain %s in %.2f s; closing", "complete" if drained else "cut short", time.monotonic() - t)
    finally:
        await runner.cleanup()
    log.info("gateway stopped")
