"""Stopping the servers: Ctrl-C or SIGTERM drains, then the process (and ``make``) exits 0.

Real processes (SmolLM2 in a runtime server; a gateway whose one tier is that server), each in a process
group of its own, with a request streaming when the signal comes:

- Ctrl-C in a terminal to ``make serve-large`` / ``make serve`` (a pseudo-terminal here: ^C written to it,
  so the terminal sends SIGINT to its foreground process group, as it does for a shell's job): the stream
  runs to its end, and make exits 0 (the server takes the terminal, so make never gets the SIGINT).
- The same signal twice within REPEAT_S (as SIGTERM to the process group of ``make serve`` arrives: directly
  and through make, which forwards it) is one stop, not a second signal.
- A second signal, a while after the first, ends the process at once with status 1 and says why.
"""

from __future__ import annotations

import fcntl
import http.client
import json
import os
import pty
import signal
import subprocess
import sys
import termios
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.support.gateway_server import free_port
from tests.support.processes import ROOT, ServerProcess, engine_flags

pytestmark = pytest.mark.slow

MODEL = "smollm2-135m"
# --no-warmup: the two buckets these requests use compile on first use (and come from the persistent
# compilation cache after the first run), not the whole warm-up.
RUNTIME_FLAGS = [
    "--no-warmup",
    *engine_flags(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=512, kv_cache_mb=32),
]
TOKENS = 12  # a stream of exactly this many tokens (min_tokens / ignore_eos): seconds of decoding on a CPU
LONG = 300  # a stream still running when the second signal comes, 1.5 s after the first
EXIT_BOUND_S = 60  # the drain (the rest of the stream) and the close, with room for a loaded machine: a hang guard
# "At once" after a second signal is checked by what happened, not by seconds: status 1, the log's reason,
# and the in-flight stream cut before its end (a process that drained would finish it and exit 0).


# ---------------------------------------------------------------- helpers


class Stream(threading.Thread):
    """A streaming request in the background: NDJSON lines from a runtime server, or SSE events from a gateway."""

    def __init__(self, url: str, path: str, body: dict):
        super().__init__(daemon=True)
        self.url, self.path, self.body = url, path, body
        self.started = threading.Event()
        self.events: list[dict] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        host, port = self.url.removeprefix("http://").split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        try:
            conn.request("POST", self.path, json.dumps(self.body), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            assert resp.status == 200, (resp.status, resp.read())
            for raw in resp:
                line = raw.strip().removeprefix(b"data: ")
                if line and line != b"[DONE]":
                    self.events.append(json.loads(line))
                    self.started.set()
        except BaseException as exc:
            self.error = exc
        finally:
            conn.close()
            self.started.set()

    def wait_started(self) -> None:
        assert self.started.wait(120) and self.events, f"no first event: {self.error!r}"


def generate_stream(url: str, tokens: int = TOKENS) -> Stream:
    body = {"prompt_ids": [1, 2, 3, 4], "params": {"max_tokens": tokens, "ignore_eos": True}}
    return Stream(url, "/v1/generate", body)


def chat_stream(url: str, tokens: int = TOKENS) -> Stream:
    messages = [{"role": "user", "content": "Count from one to one hundred."}]
    body = {"model": MODEL, "stream": True, "max_tokens": tokens, "min_tokens": tokens, "messages": messages}
    return Stream(url, "/v1/chat/completions", body)


def wait_ready(url: str, proc: subprocess.Popen, log, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"exited with {proc.returncode}:\n{log()}"
        try:
            with urllib.request.urlopen(url + "/readyz", timeout=5) as r:
                if r.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        time.sleep(0.25)
    raise TimeoutError(f"{url} not ready:\n{log()}")


def wait_exit(proc: subprocess.Popen, bound: float, log) -> tuple[int, float]:
    t = time.monotonic()
    try:
        code = proc.wait(bound)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"still running {bound} s after the signal:\n{log()}") from None
    return code, time.monotonic() - t


def assert_complete_generate(stream: Stream) -> None:
    stream.join(60)
    assert stream.error is None, repr(stream.error)
    last = stream.events[-1]
    assert last["finished"] and last["finish_reason"] == "length" and last["completion_tokens"] == TOKENS, last


def assert_complete_chat(stream: Stream) -> None:
    stream.join(60)
    assert stream.error is None, repr(stream.error)
    finish = [c["finish_reason"] for e in stream.events for c in e.get("choices", []) if c.get("finish_reason")]
    assert finish == ["length"], stream.events[-3:]
    usage = [e["usage"] for e in stream.events if e.get("usage")]
    assert not usage or usage[-1]["completion_tokens"] == TOKENS, usage


class TerminalJob:
    """``make TARGET ...`` as a shell runs a job in a terminal: in a pseudo-terminal that is its controlling
    terminal, in the foreground process group; ``ctrl_c`` types ^C. Everything it started is killed at exit."""

    def __init__(self, *make_args: str):
        self.master, slave = pty.openpty()
        # PYTHON: this interpreter's version picks the venv (make test PYTHON=python3.13 serves on 3.13); -o: never
        # reinstall the venv from here (the stamp may be older than a just edited pyproject.toml)
        stamp = Path(sys.prefix).resolve().relative_to(ROOT) / ".installed"
        self.proc = subprocess.Popen(
            ["make", "--no-print-directory", f"PYTHON={sys.executable}", "-o", str(stamp), *make_args],
            cwd=ROOT,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,  # a session (and process group) led by make, then the terminal is its own:
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),  # make's group is the foreground
        )
        os.close(slave)
        self._out = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:  # EIO: every process holding the terminal is gone
                return
            if not data:
                return
            self._out += data

    def output(self) -> str:
        return self._out.decode(errors="replace")

    def ctrl_c(self) -> None:
        os.write(self.master, b"\x03")

    def foreground_group(self) -> int:
        return os.tcgetpgrp(self.master)

    def __enter__(self) -> TerminalJob:
        return self

    def __exit__(self, *exc) -> None:
        groups = {self.proc.pid}
        try:
            groups.add(self.foreground_group())
        except OSError:
            pass
        for pgid in groups - {0, os.getpgrp()}:  # 0 (no foreground group left) would be our own
            try:
                os.killpg(pgid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.proc.wait(10)
        self._reader.join(5)
        os.close(self.master)


def gateway_config(folder: Path, model_url: str, port: int) -> Path:
    """A gateway with no model of its own: its one tier is the runtime server at ``model_url``; no cache."""
    tier = {"name": "small", "model": MODEL, "url": model_url, "timeout_s": 120}
    data = {
        "host": "127.0.0.1",
        "port": port,
        "models": [],
        "tiers": {"tiers": [tier], "router": {"default": "small"}},
        "cache": {"enabled": False},
    }
    path = folder / "gateway.yaml"
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


@pytest.fixture(scope="module")
def model_server():
    with ServerProcess(["-m", "runtime.server", "--model", MODEL, *RUNTIME_FLAGS], name="shutdown-model") as srv:
        yield srv


# ---------------------------------------------------------------- the gateway


def test_ctrl_c_to_make_serve_drains_and_make_exits_0(model_server, tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = gateway_config(tmp_path, model_server.url, port)
    with TerminalJob("serve", f"ARGS=--config {config}") as job:
        wait_ready(url, job.proc, job.output)
        assert job.foreground_group() != job.proc.pid  # the gateway took the terminal from make
        stream = chat_stream(url)
        stream.start()
        stream.wait_started()
        job.ctrl_c()
        time.sleep(0.3)
        try:  # the drain: the listener stays open and answers 503 draining
            urllib.request.urlopen(url + "/readyz", timeout=5)
            raise AssertionError("/readyz answered 200 while draining")
        except urllib.error.HTTPError as exc:
            assert exc.code == 503
        code, took = wait_exit(job.proc, EXIT_BOUND_S, job.output)
        assert_complete_chat(stream)
        out = job.output()
        assert code == 0, out
        assert "SIGINT: draining" in out and "drain complete" in out and "gateway stopped" in out, out
        assert "make: ***" not in out and "Traceback" not in out, out


def test_a_second_signal_stops_the_gateway_at_once(model_server, tmp_path):
    port = free_port()
    config = gateway_config(tmp_path, model_server.url, port)
    gw = ServerProcess(["-m", "gateway", "--config", str(config)], name="shutdown-gateway", port=port).start()
    code, took, log, stream = signal_twice(gw, chat_stream(gw.url, LONG))
    assert code == 1, (code, took, log)
    assert "SIGINT again within 1 s: the same one" in log, log
    assert "SIGINT again: closing without waiting for 1 in-flight request(s)" in log, log
    stream.join(10)
    assert not any(c.get("finish_reason") for e in stream.events for c in e.get("choices", [])), "stream finished"


def signal_twice(server, stream):
    """With ``stream`` under way: SIGINT to the server's process group, the same again 0.1 s later (within
    REPEAT_S: the first one delivered twice, as make forwards SIGTERM), then a second Ctrl-C 1.5 s later.
    (exit code, seconds it took after the second, its log, the stream)."""
    try:
        stream.start()
        stream.wait_started()
        os.killpg(server.proc.pid, signal.SIGINT)
        time.sleep(0.1)
        os.killpg(server.proc.pid, signal.SIGINT)
        time.sleep(1.5)
        assert server.proc.poll() is None, server.log_tail()
        os.killpg(server.proc.pid, signal.SIGINT)
        code, took = wait_exit(server.proc, EXIT_BOUND_S, server.log_tail)
    finally:
        server.stop()
    log = server.log_tail(40)
    server.log_path.unlink(missing_ok=True)
    return code, took, log, stream


# ---------------------------------------------------------------- the runtime server


def test_ctrl_c_to_make_serve_large_drains_and_make_exits_0():
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # ARGS come after the recipe's own flags: the last --model and --port win (SmolLM2: a small model)
    args = " ".join(["--model", MODEL, "--port", str(port), *RUNTIME_FLAGS])
    with TerminalJob("serve-large", f"ARGS={args}") as job:
        wait_ready(url, job.proc, job.output)
        stream = generate_stream(url)
        stream.start()
        stream.wait_started()
        job.ctrl_c()
        code, took = wait_exit(job.proc, EXIT_BOUND_S, job.output)
        assert_complete_generate(stream)
        out = job.output()
        assert code == 0, out
        assert "SIGINT: stopping; 1 request(s) in flight" in out and "runtime.server: stopped" in out, out
        assert "make: ***" not in out and "Traceback" not in out, out


def test_a_second_signal_stops_the_runtime_server_at_once():
    srv = ServerProcess(["-m", "runtime.server", "--model", MODEL, *RUNTIME_FLAGS], name="shutdown-second").start()
    code, took, log, stream = signal_twice(srv, generate_stream(srv.url, LONG))
    assert code == 1, (code, took, log)
    assert "SIGINT again within 1 s: the same one" in log, log
    assert "SIGINT again: exiting now, without waiting for the requests in flight" in log, log
    stream.join(10)
    assert not (stream.events and stream.events[-1]["finished"]), "the stream finished"
