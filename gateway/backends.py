"""Model backends behind the gateway: one per served model name.

``LocalBackend`` owns an ``LLMEngine`` in this process (its step loop on its own thread through
``AsyncLLMEngine``). The gateway only uses the narrow interface below, so a backend that talks to a
runtime server over HTTP can stand in for it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import AsyncIterator, Sequence

from runtime.engine import AsyncLLMEngine, EngineConfig, LLMEngine, RequestError, RequestOutput
from runtime.request import SamplingParams

log = logging.getLogger("gateway.backends")


class LocalBackend:
    def __init__(self, name: str, engine: LLMEngine):
        self.name = name
        self.engine = engine
        self.front = AsyncLLMEngine(engine)
        self.ready = False
        self.warmup_seconds: float | None = None

    @classmethod
    def from_config(cls, name: str, config: EngineConfig) -> "LocalBackend":
        return cls(name, LLMEngine(config))

    @property
    def max_model_len(self) -> int:
        return self.engine.max_model_len

    async def start(self, warmup: bool = True) -> None:
        """Compile every bucket off the event loop, then start the step loop and report ready."""
        if warmup and not self.engine.warmed_up:
            t = time.perf_counter()
            await asyncio.to_thread(self.engine.warmup)
            self.warmup_seconds = time.perf_counter() - t
            log.info("model %s warmed up in %.1f s", self.name, self.warmup_seconds)
        self.front.start()
        self.ready = True

    async def close(self) -> None:
        self.ready = False
        await asyncio.to_thread(self.front.shutdown)

    def encode(self, messages: Sequence[dict]) -> list[int]:
        """Chat messages -> prompt token ids through the model's chat template (raises RequestError)."""
        try:
            return self.engine.encode(list(messages))
        except RequestError:
            raise
        except ValueError as exc:
            raise RequestError(str(exc)) from None

    def generate(self, prompt_ids: list[int], params: SamplingParams, request_id: str) -> AsyncIterator[RequestOutput]:
        return self.front.generate(prompt_ids, params, request_id=request_id)

    def stats(self):
        return self.engine.stats()
