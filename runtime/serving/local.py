"""``LocalEngine``: an ``LLMEngine`` in this process behind the backend interface the gateway programs
against (``gateway/backends/__init__.py``): its step loop runs on its own thread through
``AsyncLLMEngine``. The runtime server serves one; an in-process gateway tier is one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence

from runtime.api import EngineConfig, RequestError, RequestOutput, SamplingParams
from runtime.engine.async_engine import AsyncLLMEngine
from runtime.engine.llm_engine import LLMEngine

log = logging.getLogger("runtime.serving")


class LocalEngine:
    def __init__(self, name: str, engine: LLMEngine):
        self.name = name
        self.engine = engine
        self.front = AsyncLLMEngine(engine)
        self._ready = False
        self.warmup_seconds: float | None = None

    @classmethod
    def from_config(cls, name: str, config: EngineConfig) -> LocalEngine:
        return cls(name, LLMEngine(config))

    @property
    def ready(self) -> bool:
        return self._ready and self.front.failed is None

    @ready.setter
    def ready(self, value: bool) -> None:  # tests take a tier down and up
        self._ready = value

    @property
    def failed(self) -> str | None:
        """Why this engine stopped for good (a process of a multi-process job is gone), else None."""
        return None if self.front.failed is None else str(self.front.failed)

    @property
    def compiling(self) -> bool:
        """Step programs still compiling on the background thread (``EngineConfig.background_compile``)."""
        return self.ready and not self.engine.runner.all_compiled

    @property
    def max_model_len(self) -> int:
        return self.engine.max_model_len

    async def start(self, warmup: bool = True) -> None:
        """Compile the step's buckets off the event loop, then start the step loop and report ready.

        With ``EngineConfig.background_compile`` (the default) ready comes after two buckets (the
        largest and the one-token one) and the rest compile on a background thread, logged when done."""
        if warmup and not self.engine.warmed_up:
            t = time.perf_counter()
            total, done = len(self.engine.runner.buckets), [0]

            def progress(tokens: int, seqs: int) -> None:
                done[0] += 1
                if done[0] == total or done[0] % max(1, total // 4) == 0:
                    log.info(
                        "model %s: compiled %d/%d step programs (tokens %d, sequences %d) in %.1f s",
                        self.name,
                        done[0],
                        total,
                        tokens,
                        seqs,
                        time.perf_counter() - t,
                    )

            background = self.engine.config.background_compile
            await asyncio.to_thread(self.engine.warmup, progress, background=background)
            self.warmup_seconds = time.perf_counter() - t
            log.info(
                "model %s warmed up in %.1f s%s",
                self.name,
                self.warmup_seconds,
                f" ({done[0]} of {total} step programs; the rest compile in the background)" if done[0] < total else "",
            )
        self.front.start()
        self._ready = True

    async def close(self) -> None:
        self._ready = False
        await asyncio.to_thread(self.engine.runner.stop_background)  # a compile thread must not outlive us
        await asyncio.to_thread(self.front.shutdown)

    async def encode(self, messages: Sequence[dict] | str, assistant_prefix: str = "") -> list[int]:
        """Chat messages -> prompt token ids through the model's chat template, or a text prompt (a str:
        /v1/completions) as it is; raises RequestError."""
        return encode_chat(self.engine, messages, assistant_prefix)

    def generate(self, prompt_ids: list[int], params: SamplingParams, request_id: str) -> AsyncIterator[RequestOutput]:
        return self.front.generate(prompt_ids, params, request_id=request_id)

    def stats(self):
        return self.engine.stats()


def encode_chat(engine: LLMEngine, messages: Sequence[dict] | str, assistant_prefix: str = "") -> list[int]:
    """The chat template with its generation prompt (or, for a str, the text as it is, with the model's
    BOS), then ``assistant_prefix`` as plain text (never control tokens). Shared by ``LocalEngine`` and
    the runtime server."""
    try:
        ids = engine.encode(messages if isinstance(messages, str) else list(messages))
        if assistant_prefix:
            ids = ids + engine.tokenizer.encode(assistant_prefix, add_bos=False)
        return ids
    except RequestError:
        raise
    except (TypeError, ValueError) as exc:
        raise RequestError(str(exc)) from None
