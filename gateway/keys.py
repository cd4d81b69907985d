"""Typed application keys, in one place (aiohttp ``web.AppKey``)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from gateway.config.gateway import GatewayConfig

if TYPE_CHECKING:  # the types only: observability, the pipeline and the cache import these keys at run time
    from gateway.accounting.sync import LedgerSync
    from gateway.accounting.usage import UsageLedger
    from gateway.advise.recording import Recorder
    from gateway.backends import Backend
    from gateway.cache import SemanticCache
    from gateway.observability.metrics import GatewayMetrics
    from gateway.observability.repeats import RepeatTracker
    from gateway.pipeline.routing import Router


@dataclass
class GatewayState:
    """What the cleanup contexts open: filled in at start-up, read by handlers."""

    backends: dict[str, Backend] = field(default_factory=dict)  # tier name -> backend
    cache: SemanticCache | None = None  # None: no semantic cache
    cache_ready: bool = False
    started: int = 0
    router: Router | None = None  # create_app sets it
    ledger: UsageLedger | None = None  # create_app sets it
    inflight: dict[str, int] = field(default_factory=dict)  # tier -> requests in flight through this gateway
    draining: bool = False  # shutting down: new requests get 503 (gateway.lifecycle)
    active_requests: int = 0  # HTTP requests being handled now, streams until their last event
    ledger_sync: LedgerSync | None = None  # while keys.shared is set
    recorder: Recorder | None = None  # while config.record is set
    repeats: RepeatTracker | None = None  # create_app sets it
    background: set[asyncio.Task] = field(default_factory=set)  # tasks outliving their request (cache stores)

    def in_background(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task:
        """Run ``coro`` in its own task, which finishes even if the handler that started it is cancelled
        (aiohttp cancels a handler whose client went away, and a streaming client goes away as soon as
        it has read ``[DONE]``: without this, streamed answers were never stored in the cache). The
        drain (``gateway.lifecycle``) waits for these before the cache closes."""
        task = asyncio.ensure_future(coro)
        self.background.add(task)
        task.add_done_callback(self.background.discard)
        return task

    @property
    def background_pending(self) -> int:
        return sum(not t.done() for t in self.background)


CONFIG = web.AppKey("config", GatewayConfig)
STATE = web.AppKey("state", GatewayState)
METRICS: web.AppKey[GatewayMetrics] = web.AppKey("metrics")
ANSWERED = web.RequestKey("answered", int)  # the status of a response already sent in full
