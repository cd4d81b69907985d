"""Run a gateway app on a loopback port in a background thread, for tests with real HTTP clients."""

from __future__ import annotations

import asyncio
import faulthandler
import socket
import sys
import threading
import time
import urllib.request

from aiohttp import web

from gateway import keys
from gateway.lifecycle import CLOSE_GRACE_S, drain

# How long stopping a gateway may take, from the bounds its parts set themselves: the drain of in-flight
# requests (DRAIN_S), AppRunner's grace for handlers (CLOSE_GRACE_S, as `python -m gateway` closes), then
# each in-process engine's close (LocalEngine.close: the background compile thread's join, 60 s in
# ModelRunner.stop_background, then the step thread's, 30 s in AsyncLLMEngine.shutdown), and 30 s of slack
# for a loaded machine. A stop that takes longer is stuck: the threads' stacks are printed to say where.
DRAIN_S = 30.0
ENGINE_CLOSE_S = 60.0 + 30.0
STOP_TIMEOUT_S = DRAIN_S + CLOSE_GRACE_S + ENGINE_CLOSE_S + 30.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    def __init__(self, app: web.Application, port: int | None = None):
        self.app = app
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._started = threading.Event()
        self.error: BaseException | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def start():
            # A gateway app is closed as `python -m gateway` closes it (gateway.lifecycle.serve): drained
            # first, then a short grace. AppRunner's default grace is 60 s for any handler still open.
            grace = {"shutdown_timeout": CLOSE_GRACE_S} if keys.STATE in self.app else {}
            self._runner = web.AppRunner(self.app, handler_cancellation=True, access_log=None, **grace)
            await self._runner.setup()
            await web.TCPSite(self._runner, "127.0.0.1", self.port).start()

        try:
            self.loop.run_until_complete(start())
        except BaseException as exc:  # surfaced by start()
            self.error = exc
            self._started.set()
            return
        self._started.set()
        self.loop.run_forever()

    def start(self, ready_timeout: float = 300.0) -> ServerThread:
        self._thread.start()
        self._started.wait(ready_timeout)
        if self.error:
            raise self.error
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=5) as r:
                    if r.status == 200:
                        return self
            except Exception:
                pass
            time.sleep(0.2)
        raise TimeoutError("gateway did not become ready")

    def call(self, coro_fn, timeout: float = 60):
        """Run a coroutine on the server's loop (inspect engines, caches) and return its result."""
        return asyncio.run_coroutine_threadsafe(coro_fn(), self.loop).result(timeout)

    def stop(self) -> None:
        if self._runner is not None:

            async def close():
                if keys.STATE in self.app:
                    await drain(self.app, DRAIN_S)
                await self._runner.cleanup()

            future = asyncio.run_coroutine_threadsafe(close(), self.loop)
            try:
                future.result(STOP_TIMEOUT_S)
            except TimeoutError:
                print(f"gateway still closing after {STOP_TIMEOUT_S:.0f} s; threads:", file=sys.stderr)
                faulthandler.dump_traceback(file=sys.stderr)
                for task in asyncio.all_tasks(self.loop):
                    task.print_stack(limit=8, file=sys.stderr)
                raise
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)


def chat_body(model: str, content: str, **params) -> dict:
    """A /v1/chat/completions request body with one user message and ``params`` (temperature, max_tokens, ...)."""
    return {"model": model, "messages": [{"role": "user", "content": content}], **params}


def http(
    server_url: str,
    body=None,
    *,
    raw: bytes | None = None,
    headers=None,
    path="/v1/chat/completions",
    method="POST",
    timeout=60,
):
    """(status, headers, body bytes) of one HTTP call; error statuses are returned, not raised."""
    import json
    import urllib.error

    data = raw if raw is not None else json.dumps(body).encode()
    req = urllib.request.Request(
        server_url + path,
        data=data if method == "POST" else None,
        method=method,
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def smollm2_gateway(
    cache_path: str, *, max_num_seqs: int, default_max_tokens: int, cache: dict | None = None, **extra
) -> ServerThread:
    """The gateway with SmolLM2 in-process (a 64-block cache) and the semantic cache on a file, started;
    ``cache``: more cache settings; ``extra``: more ``GatewayConfig`` fields (cors, tiers, ...)."""
    from gateway.app import create_app
    from gateway.config.gateway import GatewayConfig, Limits, ModelEntry
    from runtime.api import EngineConfig

    engine = EngineConfig(
        model="smollm2-135m", max_num_seqs=max_num_seqs, max_num_batched_tokens=64, max_model_len=512, num_blocks=64
    )
    config = GatewayConfig(
        port=0,
        models=(ModelEntry("smollm2-135m", engine),),
        cache={"store": "file", "path": cache_path, **(cache or {})},
        limits=Limits(default_max_tokens=default_max_tokens),
        **extra,
    )
    return ServerThread(create_app(config)).start()
