"""A redis-server of a test's own on a free loopback port: started, killed (a crash) or shut down, and
restarted empty on the same port. The shared Redis on 6379 is never touched by tests that use this.

    @pytest.fixture(scope="module")
    def redis():
        with RedisServer.running() as r:
            yield r
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import time

from tests.support.gateway_server import free_port


class RedisServer:
    def __init__(self):
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @classmethod
    @contextlib.contextmanager
    def running(cls):
        """A started server, stopped afterwards; the test is skipped where redis-server is not installed
        (`make test` installs it)."""
        import pytest  # here: scripts/bench_replicas.py starts a server without pytest

        if not shutil.which("redis-server") or not shutil.which("redis-cli"):
            pytest.skip("redis-server is not installed (make test installs it)")
        server = cls().start()
        try:
            yield server
        finally:
            server.stop()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.wait(True)
        return self

    def kill(self) -> None:
        """SIGKILL: no shutdown, connections reset."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.wait(False)

    def shutdown(self) -> None:
        """A clean shutdown (SHUTDOWN NOSAVE): clients see the server go away politely."""
        subprocess.run(["redis-cli", "-p", str(self.port), "shutdown", "nosave"], capture_output=True)
        if self.proc is not None:
            self.proc.wait(10)
        self.wait(False)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)

    def keys(self) -> list[str]:
        out = subprocess.run(["redis-cli", "-p", str(self.port), "--scan"], capture_output=True, text=True)
        return out.stdout.split()

    def wait(self, up: bool) -> None:
        for _ in range(200):
            pong = subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True, text=True)
            if (pong.stdout.strip() == "PONG") == up:
                return
            time.sleep(0.05)
        raise TimeoutError(f"redis on {self.port} did not come {'up' if up else 'down'}")
