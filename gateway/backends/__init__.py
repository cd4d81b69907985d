"""Model backends behind the gateway: one per tier.

The gateway only uses this narrow interface, ``Backend``, so an in-process engine
(``runtime.serving.local.LocalEngine``), a runtime server in another process
(``gateway.backends.remote.RemoteBackend``) and a tier's replicas (``gateway.backends.replicas.ReplicaSet``)
are interchangeable:

    name: str; ready: bool; compiling: bool; max_model_len: int
    async start(warmup: bool) / async close()
    async encode(messages, assistant_prefix="") -> list[int]     # RequestError: the request is bad (400);
                                                                 # messages may be a str: a text prompt
    generate(prompt_ids, params, request_id) -> AsyncIterator[RequestOutput]
    stats() -> EngineStats

``RequestError`` means the request itself is wrong (no other tier would do better); ``BackendError``
means this backend could not serve it (down, overloaded, timed out, broke mid-answer) and the router
may try the next tier of the fallback chain. ``assistant_prefix`` continues an answer another tier
started: its tokens follow the chat template's generation prompt.

``runtime.serving.local.LocalEngine`` owns an ``LLMEngine`` in this process (its step loop on its own
thread through ``AsyncLLMEngine``); it is imported only when a tier runs in-process, so a gateway whose
tiers are all remote never loads JAX.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from runtime.api import EngineStats, RequestOutput, SamplingParams


@runtime_checkable
class Backend(Protocol):
    """One tier's model, however it is served. ``compiling``: step programs still compiling in the
    background (the tier serves meanwhile); always False for a backend that compiles nothing here."""

    name: str

    @property
    def ready(self) -> bool: ...

    @property
    def compiling(self) -> bool: ...

    @property
    def max_model_len(self) -> int: ...

    async def start(self, warmup: bool = True) -> None: ...

    async def close(self) -> None: ...

    async def encode(self, messages: Sequence[dict] | str, assistant_prefix: str = "") -> list[int]: ...

    def generate(
        self, prompt_ids: list[int], params: SamplingParams, request_id: str
    ) -> AsyncIterator[RequestOutput]: ...

    def stats(self) -> EngineStats: ...


class BackendError(Exception):
    """This backend cannot serve the request now; ``cause`` is one of CAUSES (a metrics label)."""

    CAUSES = ("unavailable", "overloaded", "timeout", "failed")

    def __init__(self, cause: str, message: str, retry_after: float | None = None):
        if cause not in self.CAUSES:
            raise ValueError(f"unknown cause {cause!r}")
        super().__init__(message)
        self.cause = cause
        self.retry_after = retry_after
