"""Typed application keys, in one place (aiohttp ``web.AppKey``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from gateway.config.gateway import GatewayConfig

if TYPE_CHECKING:  # the type only: config/ imports no gateway room above it (observability imports these keys)
    from gateway.observability.metrics import GatewayMetrics


@dataclass
class GatewayState:
    """What the cleanup contexts open: filled in at start-up, read by handlers."""

    backends: dict[str, Any] = field(default_factory=dict)  # model name -> backend
    cache: Any = None  # gateway.cache.SemanticCache or None
    cache_ready: bool = False
    started: int = 0
    router: Any = None  # gateway.pipeline.routing.Router
    ledger: Any = None  # gateway.accounting.usage.UsageLedger
    inflight: dict[str, int] = field(default_factory=dict)  # tier -> requests in flight through this gateway
    draining: bool = False  # shutting down: new requests get 503 (gateway.lifecycle)
    active_requests: int = 0  # HTTP requests being handled now, streams until their last event
    ledger_sync: Any = None  # gateway.accounting.sync.LedgerSync while keys.shared is set
    recorder: Any = None  # gateway.advise.recording.Recorder while config.record is set
    repeats: Any = None  # gateway.observability.repeats.RepeatTracker (create_app sets it)
    background: set = field(default_factory=set)  # asyncio tasks outliving their request (shielded stores)

    async def shielded(self, coro) -> None:
        """Await ``coro`` in its own task that finishes even if the awaiting handler is cancelled
        (aiohttp cancels a handler whose client went away, and a streaming client goes away as soon as
        it has read ``[DONE]``: without this, streamed answers were never stored in the cache). The
        drain (``gateway.lifecycle``) waits for these before the cache closes."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        await asyncio.shield(task)

    @property
    def background_pending(self) -> int:
        return sum(not t.done() for t in self.background)


CONFIG = web.AppKey("config", GatewayConfig)
STATE = web.AppKey("state", GatewayState)
METRICS: web.AppKey[GatewayMetrics] = web.AppKey("metrics")
ANSWERED = web.RequestKey("answered", int)  # the status of a response already sent in full
