"""``AsyncLLMEngine``: ``LLMEngine.step`` on its own thread, with an asyncio front.

Coroutines hand requests and aborts to the step thread through a queue of commands (``Add``,
``Prefill``, ``Import``, ``Abort``: small frozen dataclasses, drained between steps) and receive
``RequestOutput``s, or the exception that ended the request, on per-request ``asyncio.Queue``s
(``call_soon_threadsafe``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import queue
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass

from runtime.api import RequestError, RequestOutput, SamplingParams
from runtime.distributed.kv_transfer import KVTransferError, PrefilledKV
from runtime.distributed.multihost import ProcessLost
from runtime.engine.llm_engine import LLMEngine

log = logging.getLogger("runtime.engine")


# ---- commands from the event loop to the step thread


@dataclass(frozen=True)
class Add:
    """``LLMEngine.add_request``: a prompt (text, token ids or chat messages) to generate for."""

    request_id: str
    prompt: object
    params: SamplingParams


@dataclass(frozen=True)
class Prefill:
    """``LLMEngine.add_prefill_request``: compute the prompt's KV and first token only."""

    request_id: str
    prompt: object
    params: SamplingParams


@dataclass(frozen=True)
class Import:
    """``LLMEngine.add_prefilled_request``: decode a prompt another engine prefilled."""

    request_id: str
    prefilled: PrefilledKV
    params: SamplingParams
    arrival_time: float | None = None


@dataclass(frozen=True)
class Abort:
    request_id: str


Command = Add | Prefill | Import | Abort


class AsyncLLMEngine:
    """Runs ``LLMEngine.step`` on a dedicated thread; ``generate`` is an async iterator of outputs.

    Cancelling the consumer of ``generate`` (a client that disconnects) aborts the request: its blocks
    are freed before the next step.
    """

    def __init__(self, engine: LLMEngine):
        self.engine = engine
        self._commands: queue.SimpleQueue[Command] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._queues: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = {}
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._ids = itertools.count()
        self.last_error: BaseException | None = None
        self.failed: ProcessLost | None = None  # for good: a process of a multi-process job is gone

    def fail(self, exc: ProcessLost) -> None:
        """Serving over this engine has stopped for good (any thread: the step thread may be stuck in a
        collective): every request in flight ends with ``exc``, and every later one at once."""
        self.failed = self.last_error = exc
        self._stopping = True
        self._wake.set()
        for rid in list(self._queues):
            self._deliver(rid, exc)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="llm-engine-step", daemon=True)
            self._thread.start()

    def shutdown(self) -> None:
        self._stopping = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def generate(
        self, prompt, sampling_params: SamplingParams = SamplingParams(), request_id: str | None = None
    ) -> AsyncIterator[RequestOutput]:
        """Yield this request's outputs (text deltas) until the one with ``finished=True``.

        Raises ``RequestError`` for a request the engine rejects.
        """
        request_id = request_id or f"areq-{next(self._ids)}"
        return self._stream(Add(request_id, prompt, sampling_params))

    def prefill(
        self, prompt, sampling_params: SamplingParams = SamplingParams(), request_id: str | None = None
    ) -> AsyncIterator[RequestOutput]:
        """``LLMEngine.add_prefill_request`` through the step thread: one final output, whose
        ``prefilled`` holds the prompt's KV."""
        request_id = request_id or f"areq-{next(self._ids)}"
        return self._stream(Prefill(request_id, prompt, sampling_params))

    def generate_prefilled(
        self,
        prefilled: PrefilledKV,
        sampling_params: SamplingParams = SamplingParams(),
        request_id: str | None = None,
        arrival_time: float | None = None,
    ) -> AsyncIterator[RequestOutput]:
        """``LLMEngine.add_prefilled_request`` through the step thread: the first token's output, then
        the decoded ones, as ``generate``. Raises ``RequestError`` or ``KVTransferError``."""
        request_id = request_id or f"areq-{next(self._ids)}"
        return self._stream(Import(request_id, prefilled, sampling_params, arrival_time))

    async def _stream(self, command: Add | Prefill | Import) -> AsyncIterator[RequestOutput]:
        request_id = command.request_id
        if self.failed is not None:
            raise self.failed
        self.start()
        q: asyncio.Queue = asyncio.Queue()
        self._queues[request_id] = (asyncio.get_running_loop(), q)
        self._send(command)
        finished = False
        try:
            while True:
                item = await q.get()
                if isinstance(item, BaseException):
                    finished = True
                    raise item
                yield item
                if item.finished:
                    finished = True
                    return
        finally:
            self._queues.pop(request_id, None)
            if not finished:
                self.abort(request_id)

    def abort(self, request_id: str) -> None:
        self._send(Abort(request_id))

    def _send(self, command: Command) -> None:
        self._commands.put(command)
        self._wake.set()

    # ---- the step thread

    def _deliver(self, request_id: str, item) -> None:
        target = self._queues.get(request_id)
        if target is not None:
            loop, q = target
            try:
                loop.call_soon_threadsafe(q.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening
                pass

    def _drain_commands(self) -> None:
        while True:
            try:
                cmd = self._commands.get_nowait()
            except queue.Empty:
                return
            request_id = cmd.request_id
            if isinstance(cmd, Abort):
                self.engine.abort_request(request_id)
                continue
            if request_id not in self._queues:  # cancelled before it was queued
                continue
            try:
                if isinstance(cmd, Add):
                    self.engine.add_request(cmd.prompt, cmd.params, request_id=request_id)
                elif isinstance(cmd, Prefill):
                    self.engine.add_prefill_request(cmd.prompt, cmd.params, request_id=request_id)
                else:  # Import: its first token is known already
                    self._deliver(
                        request_id,
                        self.engine.add_prefilled_request(
                            cmd.prefilled, cmd.params, request_id=request_id, arrival_time=cmd.arrival_time
                        ),
                    )
            except KVTransferError as exc:  # not the request's fault: the prefill came from a mismatched engine
                self._deliver(request_id, exc)
            except (RequestError, ValueError) as exc:
                self._deliver(request_id, exc if isinstance(exc, RequestError) else RequestError(str(exc)))

    def _loop(self) -> None:
        while not self._stopping:
            self._drain_commands()
            if not self.engine.has_unfinished_requests():
                self._wake.wait(timeout=0.5)
                self._wake.clear()
                continue
            try:
                outputs = self.engine.step()
            except ProcessLost as exc:  # a multi-process job lost a process: nothing more can run
                self.fail(exc)
                return
            except Exception as exc:  # a bug or a device error: fail the in-flight requests, keep running
                log.exception("engine step failed")
                self.last_error = exc
                for rid in list(self._queues):
                    self.engine.abort_request(rid)
                    self._deliver(rid, RuntimeError(f"engine step failed: {type(exc).__name__}"))
                continue
            for o in outputs:
                self._deliver(o.request_id, o)
