"""Small fakes for the pipeline's unit tests: no model, no engine thread, no cache index.

``FakeBackend`` speaks the backend interface (``gateway.backends``) with scripted outputs and records what
it was asked; ``FakeRequest`` is the part of ``web.Request`` the admission and outcome steps read; ``call``
runs one handler behind an aiohttp test server on loopback, for the steps that write a real response.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

from gateway.api.schemas import parse_chat_request
from gateway.backends import BackendError
from gateway.config.tiers import parse_tiers
from gateway.observability.metrics import GatewayMetrics
from runtime.api import RequestMetrics, RequestOutput
from tests.support.gateway_server import chat_body
from tests.support.tiers import two_tiers

TIERS = two_tiers(big={"timeout_s": 5}, lil={"timeout_s": 5})


def spec(**big):
    """The two-tier spec (big falls back to lil), with ``big``'s settings overridden."""
    data = {**TIERS, "tiers": [{**TIERS["tiers"][0], **big}, TIERS["tiers"][1]]}
    return parse_tiers(data, ["tiny"], env={})


def chat(content="hello there", model="big", **kw):
    return parse_chat_request(chat_body(model, content, **kw), max_messages=16)


def metrics() -> GatewayMetrics:
    return GatewayMetrics(lambda: {})


def sample(m: GatewayMetrics, name: str, **labels) -> float:
    """A metric's value, 0 when it was never touched."""
    return m.registry.get_sample_value(name, labels) or 0.0


class FakeRequest(dict):
    """Headers, a body, and the per-request mapping (``request[keys.ANSWERED]``)."""

    def __init__(self, body: bytes = b"", headers: dict | None = None):
        super().__init__()
        self.headers = {"Content-Type": "application/json", **(headers or {})}
        self.body = body

    async def read(self) -> bytes:
        return self.body


class FakeBackend:
    """Answers ``pieces`` one output each (one token per piece), the last one finished.

    fail_after: raise BackendError("failed") before piece number ``fail_after``; stall: seconds before the
    first output; encode_error / generate_error: raised by encode / on the first output; end_early: stop
    without a finished output. Records every assistant prefix, the params and how each generation ended."""

    def __init__(
        self,
        pieces=("Hel", "lo"),
        *,
        ready=True,
        prompt_len=5,
        max_model_len=256,
        finish="stop",
        fail_after=None,
        stall=None,
        encode_error=None,
        generate_error=None,
        end_early=False,
        replica=None,
    ):
        self.pieces, self.ready, self.prompt_len, self.max_model_len = list(pieces), ready, prompt_len, max_model_len
        self.finish, self.fail_after, self.stall = finish, fail_after, stall
        self.encode_error, self.generate_error = encode_error, generate_error
        self.end_early, self.replica = end_early, replica
        self.prefixes, self.params, self.runs = [], [], []  # runs: "done" | "aborted" | "failed"

    async def encode(self, messages, assistant_prefix=""):
        self.prefixes.append(assistant_prefix)
        if self.encode_error is not None:
            raise self.encode_error
        return list(range(self.prompt_len))

    async def generate(self, prompt_ids, params, request_id):
        self.params.append(params)
        how = "failed"
        try:
            if self.stall:
                await asyncio.sleep(self.stall)
            if self.generate_error is not None:
                raise self.generate_error
            for i, piece in enumerate(self.pieces):
                if self.fail_after is not None and i >= self.fail_after:
                    raise BackendError("failed", "injected failure")
                last = i == len(self.pieces) - 1 and not self.end_early
                if last:
                    how = "done"  # a consumer may close it once it has the finished output: no abort
                yield RequestOutput(
                    request_id,
                    piece,
                    [i],
                    finished=last,
                    finish_reason=self.finish if last else None,
                    prompt_tokens=len(prompt_ids),
                    completion_tokens=i + 1,
                    metrics=RequestMetrics(queue_s=0.01) if last else None,
                    replica=self.replica or None,
                )
        except (GeneratorExit, asyncio.CancelledError):
            if how != "done":
                how = "aborted"  # closed before its end: what aborts a real engine's request
            raise
        finally:
            self.runs.append(how)


def call(handler, *, headers=None) -> tuple[int, dict, str]:
    """POST to an app whose one route is ``handler`` (behind the error middleware, as in the gateway),
    over a real loopback connection: (status, headers, body text)."""
    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    from runtime.serving.errors import error_middleware

    async def go():
        app = web.Application(middlewares=[error_middleware])
        app.router.add_post("/", handler)
        async with TestClient(TestServer(app)) as client:
            resp = await client.post("/", data=b"{}", headers=headers or {})
            return resp.status, dict(resp.headers), await resp.text()

    return asyncio.run(go())


def events(body: str) -> list:
    """The ``data:`` events of an SSE body, JSON-decoded (``[DONE]`` kept as is), and the comments."""
    out = []
    for block in body.split("\n\n"):
        if block.startswith("data: "):
            out.append("[DONE]" if block == "data: [DONE]" else json.loads(block[6:]))
        elif block.startswith(":"):
            out.append(block)
    return out


class FakeRecorder:
    """Keeps what ``Recorder.record`` is given (``gateway.advise.recording``)."""

    def __init__(self):
        self.lines = []

    def record(self, **line):
        self.lines.append(line)


def exchange(request, chats, backends, *, lookup=None, text_api=False, recorder=None, tiers=None):
    """An ``Exchange`` admitted and routed to big (falling back to lil), on an app state of fakes."""
    from gateway import keys
    from gateway.accounting.usage import Caller, UsageLedger
    from gateway.config.gateway import Limits
    from gateway.config.tiers import KeyPolicy, KeysConfig
    from gateway.observability.repeats import RepeatTracker
    from gateway.pipeline.exchange import Exchange
    from gateway.pipeline.outcome import Outcome
    from gateway.pipeline.routing import Decision, Router

    m = metrics()
    state = keys.GatewayState(
        backends=dict(backends),
        router=Router(tiers or spec()),
        ledger=UsageLedger(KeysConfig()),
        inflight={name: 0 for name in backends},
        repeats=RepeatTracker(),
        recorder=recorder,
    )
    # what the pipeline reads of a GatewayConfig (building a real one takes seconds: it checks the models)
    config = SimpleNamespace(limits=Limits(default_max_tokens=16), log_content=False)
    return Exchange(
        request,
        Outcome(m, request),
        Caller("key:abc", "abc", KeyPolicy(name="abc")),
        list(chats),
        Decision("big", ("big", "lil"), "explicit model 'big'"),
        text_api,
        state,
        config,
        m,
        lookup=lookup,
    )
