"""Real server processes on loopback ports, for end-to-end tests and benchmarks.

    with ServerProcess(["-m", "runtime.server", "--model", "gemma3-270m"], name="large") as large:
        ... large.url, large.kill() ...

The process is started with this interpreter, waited for on ``/readyz`` (its output goes to a log file
whose tail is shown if it dies or never gets ready) and always stopped on exit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.support.gateway_server import free_port

ROOT = Path(__file__).resolve().parents[2]


class ServerProcess:
    def __init__(
        self,
        args: list[str],
        *,
        name: str,
        port: int | None = None,
        ready_timeout: float = 600,
        env: dict | None = None,
        wait_ready: bool = True,
    ):
        self.port = port or free_port()
        self.args = [sys.executable, *args, "--port", str(self.port)]
        self.name = name
        self.url = f"http://127.0.0.1:{self.port}"
        self.ready_timeout = ready_timeout
        self.env = {**os.environ, **(env or {})}
        self.wait_ready = wait_ready
        self.log_path = Path(tempfile.mkstemp(prefix=f"{name}-", suffix=".log")[1])
        self.proc: subprocess.Popen | None = None

    def start(self) -> ServerProcess:
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            self.args, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )
        if self.wait_ready:
            self.wait()
        return self

    def wait(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.ready_timeout)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=5) as r:
                    if r.status == 200:
                        return
            except Exception:
                pass
            time.sleep(0.25)
        raise TimeoutError(f"{self.name} not ready after {timeout or self.ready_timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL: the process dies mid-request, as a crash would."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
        self.log_path.unlink(missing_ok=True)
