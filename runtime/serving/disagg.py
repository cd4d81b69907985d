"""Prefill/decode disaggregation: one engine process only prefills, another only decodes.

Why: in a colocated engine every step carries the running requests' decode tokens *and* the chunks of
newly arrived prompts, so a long prompt stretches the steps of everyone decoding (TPOT), and a busy
batch delays the prompt (TTFT). Split, each role runs the work it is good at: prefill is
compute-bound, decode memory-bandwidth-bound, and each can be sized (and placed on devices)
separately. The price is moving the prompt's KV from one to the other.

Data flow of one request (``python -m runtime.server --role decode --prefill-url URL``)::

    client -> decode server POST /v1/generate {"prompt_ids", "params"}
      -> KVTransport.fetch(prompt_ids, params)           HTTPKVTransport: POST URL/v1/prefill
           prefill server (--role prefill): LLMEngine.add_prefill_request -> one step (or a few
           chunks) -> the prompt's KV gathered from its blocks -> encode_prefilled() bytes
      <- PrefilledKV (prompt ids, first token, per-layer K/V [+ int8/fp8 scales])
      -> AsyncLLMEngine.generate_prefilled: the first token is streamed at once; the scheduler
         admits the request for decode only, the KV is scattered into this engine's blocks
      -> NDJSON lines exactly as a colocated server sends them

So ``gateway.backends.remote.RemoteBackend`` points at the decode server unchanged. The prefill server's own
/v1/generate still works (it is a whole engine); a colocated server is ``--role both`` (the default).

The transport is an interface (``KVTransport``) so that the host round trip can be replaced.
``HTTPKVTransport`` copies the KV device -> host -> socket -> host -> device, which is fine on one host
or a fast network. On accelerators the same interface would move the pages device to device: the
prefill side keeps the gathered ``[L, T, KVH, D]`` arrays on its device and answers with the header
plus a transfer handle; ``fetch`` pulls the arrays over the interconnect (NCCL send/recv between GPUs,
ICI between TPU slices, or JAX's transfer server, ``jax.experimental.transfer``, which lets one
process ``await_pull`` arrays another offered) and returns a ``PrefilledKV`` whose arrays are
``jax.Array``s already on the decode device; ``ModelRunner.import_kv`` scatters them with no host
copy. Nothing else changes: the scheduler, the fingerprint check and the streaming stay as they are.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator
from typing import Protocol

import aiohttp
from aiohttp import web

from runtime.api import RequestError, RequestOutput, SamplingParams
from runtime.distributed.kv_transfer import KVTransferError, PrefilledKV, decode_prefilled, encode_prefilled, stage
from runtime.engine.async_engine import AsyncLLMEngine
from runtime.serving.errors import APIError, invalid
from runtime.serving.protocol import (
    PREFILL_PATH,
    ServerState,
    not_ready,
    parse_error,
    parse_generate,
    prefill_body,
    read_object,
)

log = logging.getLogger("runtime.disagg")

ROLES = ("both", "prefill", "decode")
KV_CONTENT_TYPE = "application/x-jaxserve-kv"


class PrefillUnavailable(Exception):
    """The prefill side could not be reached or failed (not the request's fault)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


class KVTransport(Protocol):
    """How a decode engine gets a prompt prefilled elsewhere.

    ``fetch`` raises ``RequestError`` when the prefill side rejects the request itself (bad ids, too
    long), ``PrefillUnavailable`` when it cannot serve it now, ``KVTransferError`` for a malformed
    payload."""

    async def fetch(self, prompt_ids: list[int], params: SamplingParams, request_id: str) -> PrefilledKV: ...

    async def close(self) -> None: ...


class HTTPKVTransport:
    """POST {url}/v1/prefill -> the binary payload of ``runtime.distributed.kv_transfer`` (one aiohttp session)."""

    def __init__(self, url: str, *, connect_timeout: float = 2.0, timeout: float | None = 600.0):
        self.url = url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout, sock_connect=connect_timeout)
        self._session: aiohttp.ClientSession | None = None
        self.bytes_received = 0
        self.fetches = 0

    async def fetch(self, prompt_ids: list[int], params: SamplingParams, request_id: str) -> PrefilledKV:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        body = prefill_body(prompt_ids, params, request_id)
        try:
            async with self._session.post(self.url + PREFILL_PATH, json=body) as resp:
                data = await resp.read()
                if resp.status == 200:
                    self.bytes_received += len(data)
                    self.fetches += 1
                    return decode_prefilled(data)
                message = (parse_error(data) or (data[:200].decode(errors="replace"),))[0]
                if resp.status == 400:
                    raise RequestError(message)
                retry = resp.headers.get("Retry-After")
                raise PrefillUnavailable(
                    f"prefill server answered {resp.status}: {message}",
                    float(retry) if retry and retry.replace(".", "", 1).isdigit() else None,
                )
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise PrefillUnavailable(f"prefill server {self.url} unreachable: {type(exc).__name__}: {exc}") from None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


# ---------------------------------------------------------------- the server roles


def prepare_engine(engine, role: str) -> None:
    """Before warm-up: also compile the KV transfer programs this role runs (nothing compiles while serving)."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    engine.transfer_warmup = (role == "prefill", role == "decode")


class PrefillHandler:
    """POST /v1/prefill {"prompt_ids", "params", "request_id"} -> 200 application/x-jaxserve-kv.

    Same admission as /v1/generate: 503 while warming up or when ``--max-waiting`` requests wait, 400
    for a bad body or a request the engine rejects."""

    def __init__(self, state: ServerState):
        self.state = state
        self._seq = itertools.count()
        self.num_served = 0

    async def __call__(self, request: web.Request) -> web.Response:
        st = self.state
        if not st.ready:
            raise not_ready(st.name)
        prompt_ids, params, request_id = parse_generate(await read_object(request))
        st.admit("prefills")
        st.pending += 1
        started = time.perf_counter()
        try:
            # Leaving early (the decode side hung up) closes the iterator, which aborts the prefill.
            async with contextlib.aclosing(
                st.backend.front.prefill(prompt_ids, params, f"{request_id}.p{next(self._seq)}")
            ) as outs:
                final: RequestOutput | None = None
                async for out in outs:
                    final = out
        except RequestError as exc:
            raise invalid(str(exc), "prompt_ids") from None
        except RuntimeError as exc:  # the engine step failed
            raise APIError(500, str(exc), type="server_error") from None
        finally:
            st.pending -= 1
        if final is None or final.prefilled is None:
            raise APIError(500, "the engine ended the prefill without its KV", type="server_error")
        computed = time.perf_counter()
        data = await asyncio.to_thread(encode_prefilled, final.prefilled)  # tens of MB: off the event loop
        self.num_served += 1
        # Where the time went (queue + compute + gather, then encoding), so a client can tell transfer from work.
        timing = {
            "X-Prefill-Ms": f"{(computed - started) * 1e3:.1f}",
            "X-Encode-Ms": f"{(time.perf_counter() - computed) * 1e3:.1f}",
        }
        return web.Response(body=data, content_type=KV_CONTENT_TYPE, headers=timing)


class DecodeGenerate:
    """The decode role's /v1/generate: fetch the prefill, then stream the decode from this engine.

    Has ``LocalEngine.generate``'s signature, so the server's generate handler (admission, NDJSON,
    aborts) is the same for every role. Errors before the first output become HTTP statuses there:
    ``RequestError`` 400, ``PrefillUnavailable`` 503 (code "prefill_unavailable"),
    ``KVTransferError`` 502 (code "prefill_incompatible").

    ``local_prefill_tokens``: a prompt of at most this many tokens is prefilled here, colocated
    (conditional disaggregation): a short prompt costs a decode step little, while sending it away
    costs two hops, a KV copy and a place in the prefill server's queue behind long prompts. 0 (the
    default): every prompt goes to the prefill server."""

    def __init__(self, front: AsyncLLMEngine, transport: KVTransport, *, local_prefill_tokens: int = 0):
        if local_prefill_tokens < 0:
            raise ValueError(f"local_prefill_tokens must be >= 0; got {local_prefill_tokens}")
        self.front = front
        self.transport = transport
        self.local_prefill_tokens = local_prefill_tokens
        self.num_local = self.num_remote = 0

    def __call__(self, prompt_ids: list[int], params: SamplingParams, request_id: str) -> AsyncIterator[RequestOutput]:
        # The prefill server draws the first token with PREFILL_PARAMS only: a request whose first token
        # needs more (a grammar, logprobs, min_tokens) is prefilled here.
        needs_local = params.structured is not None or params.logprobs is not None or params.min_tokens > 0
        if len(prompt_ids) <= self.local_prefill_tokens or needs_local:
            self.num_local += 1
            return self.front.generate(prompt_ids, params, request_id=request_id)
        self.num_remote += 1
        return self._remote(prompt_ids, params, request_id)

    async def _remote(
        self, prompt_ids: list[int], params: SamplingParams, request_id: str
    ) -> AsyncIterator[RequestOutput]:
        arrival = time.monotonic()  # TTFT counts the prefill and the transfer
        try:
            prefilled = await self.transport.fetch(prompt_ids, params, request_id)
            if prefilled.prompt_token_ids != list(prompt_ids):
                raise KVTransferError("the prefill came back for another prompt")
            # Padding and the host-to-device copy here, on a worker thread, not on the step thread.
            prefilled.staged = await asyncio.to_thread(stage, prefilled)
        except PrefillUnavailable as exc:
            retry = str(max(1, round(exc.retry_after or 1)))
            raise APIError(
                503, str(exc), type="service_unavailable", code="prefill_unavailable", headers={"Retry-After": retry}
            ) from None
        except KVTransferError as exc:
            raise APIError(
                502, f"bad KV from the prefill server: {exc}", type="server_error", code="prefill_incompatible"
            ) from None
        outputs = self.front.generate_prefilled(prefilled, params, request_id=request_id, arrival_time=arrival)
        async with contextlib.aclosing(outputs):
            try:
                async for out in outputs:
                    yield out
            except KVTransferError as exc:
                raise APIError(
                    502,
                    f"the prefill server's KV does not fit this engine: {exc}",
                    type="server_error",
                    code="prefill_incompatible",
                ) from None
