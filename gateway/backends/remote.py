"""``RemoteBackend``: a model served by ``python -m runtime.server`` in another process, over HTTP.

It has the interface of ``runtime.serving.local.LocalEngine`` (see the top of ``gateway/backends/__init__.py``),
so the gateway and its router cannot tell the two apart:

    start()     opens one aiohttp session and a poller task: GET /v1/stats every ``poll_interval``
                seconds sets ``ready``, ``max_model_len`` and the cached ``stats()``; any failure sets
                ``ready = False`` (a dead server is noticed within about one interval). A server that
                is down at start is not an error: the backend just stays not ready.
    encode()    POST /v1/encode
    generate()  POST /v1/generate, one ``RequestOutput`` per NDJSON line; closing the iterator early
                closes the connection, and the server then aborts the request

Errors: a 400 is ``RequestError`` (the request is bad, no tier would do better); everything else is
``BackendError`` with a cause: "unavailable" (cannot connect, or the server is warming up),
"overloaded" (503 from a full queue, with its Retry-After), "timeout", "failed" (5xx, a broken or
truncated stream). Each output carries its new token ids (a server that sends only ``n_tokens`` gets
placeholder ids, 0, and ``sends_token_ids`` turns False); a ``ReplicaSet`` resumes a broken answer
on another replica from them. ``on_poll`` (if set) is called after every good poll.

The wire format (bodies, NDJSON lines, error bodies) is ``runtime/serving/protocol.py``, which the
server uses too; it imports no JAX.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence

import aiohttp

from gateway.backends import BackendError
from runtime.api import EngineStats, RequestError, RequestOutput, SamplingParams
from runtime.serving import protocol

# A runtime server's 400 naming one of these fields names the chat request's field of the same name; its
# other fields (prompt_ids, ...) are the runtime protocol's own.
REQUEST_FIELDS = frozenset({"logit_bias", "stop_token_ids"})

log = logging.getLogger("gateway.remote")

NO_STATS = EngineStats(
    num_running=0, num_waiting=0, kv_cache_usage=0.0, num_preemptions_total=0, num_steps=0, num_blocks=0
)


class RemoteBackend:
    def __init__(
        self,
        name: str,
        url: str,
        *,
        poll_interval: float = 1.0,
        connect_timeout: float = 2.0,
        encode_timeout: float = 30.0,
    ):
        self.name = name
        self.url = url.rstrip("/")
        self.poll_interval = poll_interval
        self.connect_timeout = connect_timeout
        self.encode_timeout = encode_timeout
        self.ready = False
        self.max_model_len = 0
        self._stats = NO_STATS
        self._session: aiohttp.ClientSession | None = None
        self._poller: asyncio.Task | None = None
        self.on_poll: Callable[[], None] | None = None  # after each good poll (a ReplicaSet's load estimate)
        self.sends_token_ids = True  # False once a server (an older one) sends only token counts

    @property
    def compiling(self) -> bool:
        """Nothing compiles here: the runtime server's own ``/readyz`` says what it is compiling."""
        return False

    def __repr__(self) -> str:
        return f"RemoteBackend({self.name!r}, {self.url!r}, ready={self.ready})"

    # ------------------------------------------------------------ lifecycle

    async def start(self, warmup: bool = True) -> None:
        """Open the session, poll once (so a live server is ready on return), then keep polling.

        ``warmup`` is the server's business (its ``--no-warmup``); accepted for the interface.
        """
        if self._session is None:
            # No total timeout: a generation streams as long as it takes; each call sets its own limits.
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.connect_timeout)
            )
        await self.poll()
        if self._poller is None:
            self._poller = asyncio.create_task(self._poll_forever(), name=f"poll {self.name}")

    async def close(self) -> None:
        self.ready = False
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
            self._poller = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            await self.poll()

    async def poll(self) -> bool:
        """One GET /v1/stats: updates ``ready``, ``max_model_len`` and ``stats()``; never raises."""
        try:
            timeout = aiohttp.ClientTimeout(total=max(self.connect_timeout, self.poll_interval))
            async with self._require_session().get(self.url + protocol.STATS_PATH, timeout=timeout) as resp:
                resp.raise_for_status()
                body = await resp.json()
            # counters a server of another version may lack (the prefix cache's) default to 0
            self._stats = EngineStats(**{k: body[k] for k in NO_STATS.__dataclass_fields__ if k in body})
            self.max_model_len = int(body["max_model_len"])
            self.ready = bool(body["ready"])
            if self.on_poll is not None:
                self.on_poll()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # down, hung, or answering nonsense: not ready until a good answer
            if self.ready:
                log.warning(
                    "runtime server %s at %s is not answering: %s",
                    self.name,
                    self.url,
                    exc.__class__.__name__ if not str(exc) else exc,
                )
            self.ready = False
        return self.ready

    def stats(self) -> EngineStats:
        """The engine's stats from the last successful poll (zeros before the first)."""
        return self._stats

    # ------------------------------------------------------------ requests

    async def encode(self, messages: Sequence[dict] | str, assistant_prefix: str = "") -> list[int]:
        """Chat messages, or a text prompt (a str), -> the server's prompt ids."""
        what = {"prompt": messages} if isinstance(messages, str) else {"messages": list(messages)}
        body = {**what, "assistant_prefix": assistant_prefix}
        timeout = aiohttp.ClientTimeout(total=self.encode_timeout, sock_connect=self.connect_timeout)
        try:
            async with self._require_session().post(
                self.url + protocol.ENCODE_PATH, json=body, timeout=timeout
            ) as resp:
                if resp.status != 200:
                    raise await self._error(resp)
                return list((await resp.json())["prompt_ids"])
        except (RequestError, BackendError):
            raise
        except Exception as exc:
            raise self._transport_error(exc, "encode") from exc

    async def generate(
        self, prompt_ids: list[int], params: SamplingParams, request_id: str
    ) -> AsyncIterator[RequestOutput]:
        body = protocol.generate_body(prompt_ids, params, request_id)
        session = self._require_session()
        try:
            resp = await session.post(self.url + protocol.GENERATE_PATH, json=body)
        except Exception as exc:
            raise self._transport_error(exc, "generate") from exc
        finished = False
        try:
            if resp.status != 200:
                raise await self._error(resp)
            while not finished:
                try:
                    line = await resp.content.readline()
                except Exception as exc:  # the server died or the connection broke mid-answer
                    raise BackendError("failed", f"{self.name}: the answer broke off: {_describe(exc)}") from exc
                if not line:
                    raise BackendError("failed", f"{self.name}: the answer ended before its final output")
                if not line.strip():
                    continue
                out = self._output(line, request_id)
                finished = out.finished
                yield out
        finally:
            # An early exit (the client left, an error) must not return the connection to the pool
            # with the answer still streaming: closing it is what tells the server to abort.
            if finished:
                resp.release()
            else:
                resp.close()

    # ------------------------------------------------------------ helpers

    def _require_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise BackendError("unavailable", f"{self.name}: the backend is not started")
        return self._session

    def _output(self, line: bytes, request_id: str) -> RequestOutput:
        try:
            out, has_token_ids = protocol.parse_output_line(line, request_id)
        except protocol.StreamError as exc:
            raise BackendError("failed", f"{self.name}: {exc}") from None
        except protocol.MalformedLine as exc:
            raise BackendError("failed", f"{self.name}: {exc}") from exc
        if not has_token_ids:
            self.sends_token_ids = False
        return out

    async def _error(self, resp: aiohttp.ClientResponse) -> Exception:
        """The exception for a non-200 answer (its OpenAI-shaped error body, when it has one)."""
        try:
            parsed = protocol.parse_error(await resp.read())
        except Exception:  # the body broke off
            parsed = None
        message, code, param = parsed or (f"HTTP {resp.status} {resp.reason or ''}".strip(), None, None)
        if resp.status in (400, 413, 422):
            return RequestError(message, param if param in REQUEST_FIELDS else None)
        retry_after = _retry_after(resp.headers.get("Retry-After"))
        if resp.status == 503 and code == "not_ready":
            self.ready = False
            return BackendError("unavailable", f"{self.name}: {message}", retry_after)
        if resp.status in (429, 503):
            return BackendError("overloaded", f"{self.name}: {message}", retry_after)
        return BackendError("failed", f"{self.name}: HTTP {resp.status}: {message}", retry_after)

    def _transport_error(self, exc: Exception, what: str) -> BackendError:
        if isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):  # refused, unreachable
            self.ready = False
            return BackendError("unavailable", f"{self.name}: cannot connect to {self.url}: {_describe(exc)}")
        if isinstance(exc, TimeoutError):  # connected, but no answer in time
            return BackendError("timeout", f"{self.name}: {what} timed out")
        return BackendError("failed", f"{self.name}: {what} failed: {_describe(exc)}")


def _retry_after(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _describe(exc: BaseException) -> str:
    return str(exc) or exc.__class__.__name__
