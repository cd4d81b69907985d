"""Real server processes on loopback ports, for end-to-end tests and benchmarks.

    with ServerProcess(["-m", "runtime.server", "--model", "gemma3-270m"], name="large") as large:
        ... large.url, large.kill() ...

The process is started with this interpreter, waited for on ``/readyz`` (its output goes to a log file
whose tail is shown if it dies or never gets ready) and always stopped on exit.
"""

from __future__ import annotations

import ast
import concurrent.futures
import json
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


def engine_flags(**limits) -> list[str]:
    """``runtime.server`` flags from EngineConfig-style names: ``engine_flags(max_num_seqs=8)`` is
    ``["--max-num-seqs", "8"]``."""
    return [arg for name, value in limits.items() for arg in (f"--{name.replace('_', '-')}", str(value))]


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
        program: str | None = None,
        ready_path: str = "/readyz",
    ):
        self.port = port or free_port()
        # program: another server than this interpreter (llama.cpp's llama-server: ready_path="/health")
        self.args = [program or sys.executable, *args, "--port", str(self.port)]
        self.ready_path = ready_path
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
            try:
                self.wait()
            except BaseException:  # never left running behind a failed start
                self.kill()
                raise
        return self

    def wait(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.ready_timeout)
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.url + self.ready_path, timeout=5) as r:
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


# SmolLM2 as the runtime server of the replica tests and scripts/bench_replicas.py.
REPLICA_ENGINE_FLAGS = engine_flags(max_num_seqs=8, max_num_batched_tokens=64, max_model_len=512, kv_cache_mb=32)


def replica_model(name: str) -> ServerProcess:
    """A SmolLM2 runtime server with REPLICA_ENGINE_FLAGS (not started)."""
    args = ["-m", "runtime.server", "--model", "smollm2-135m", *REPLICA_ENGINE_FLAGS]
    return ServerProcess(args, name=name, wait_ready=False)


def replica_gateways(folder: Path, model_url: str, cache: dict, names: list[str]) -> list[ServerProcess]:
    """``python -m gateway`` processes (not started), one per name, with no model of their own: their one tier,
    "small", is the SmolLM2 runtime server at ``model_url``; ``cache``: the cache section all of them share."""
    config = Path(folder) / "gateway.yaml"
    tier = {"name": "small", "model": "smollm2-135m", "url": model_url, "timeout_s": 120}
    data = {
        "host": "127.0.0.1",
        "models": [],
        "tiers": {"tiers": [tier], "router": {"default": "small"}},
        "cache": cache,
    }
    config.write_text(json.dumps(data))  # JSON is YAML
    return [ServerProcess(["-m", "gateway", "--config", str(config)], name=name, wait_ready=False) for name in names]


def start_all(procs: list[ServerProcess], timeout: float | None = None) -> None:
    """Start every process, then wait for each to be ready: they load side by side."""
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.wait(timeout)


def stop_all(procs: list[ServerProcess]) -> None:
    """SIGTERM all, and wait for all at once."""
    with concurrent.futures.ThreadPoolExecutor(len(procs)) as ex:
        list(ex.map(lambda proc: proc.stop(), procs))


def modules_loaded_by(imports: str, watched: tuple[str, ...]) -> list[str]:
    """Which of ``watched`` a fresh interpreter has in sys.modules after ``import {imports}``."""
    code = f"import sys, {imports}; print(sorted(m for m in {watched!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return ast.literal_eval(out.stdout.strip())
