"""Run a gateway app on a loopback port in a background thread, for tests with real HTTP clients."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import urllib.request

from aiohttp import web


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
            self._runner = web.AppRunner(self.app, handler_cancellation=True, access_log=None)
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
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(60)
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
