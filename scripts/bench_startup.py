"""Start-up time: how long ``make serve`` (or ``make serve-large``) takes to answer ``/readyz`` 200, and when
its last step program finished compiling in the background.

Starts the command as ``make serve`` would (``python -m gateway --config configs/gateway.yaml`` or
``python -m runtime.server --model gemma3-270m``) on a free loopback port, polls the readiness URL every
0.1 s, reads the server's log for the "compiled N/N step programs" line, then stops it with SIGTERM.
``--runs`` repeats that (the first run of a fresh machine fills the persistent compilation cache: a
cold start; the rest are warm); the JSON has every run and the median of the warm ones.

    python scripts/bench_startup.py [--target gateway|large] [--runs 3] [--out docs/results/bench_startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMPILED = re.compile(r"compiled (\d+)/(\d+) step programs .* in ([\d.]+) s")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(target: str, port: int) -> tuple[list[str], str]:
    py = sys.executable
    if target == "gateway":
        return [
            py,
            "-m",
            "gateway",
            "--config",
            "configs/gateway.yaml",
            "--port",
            str(port),
        ], f"http://127.0.0.1:{port}/readyz"
    return [
        py,
        "-m",
        "runtime.server",
        "--model",
        "gemma3-270m",
        "--port",
        str(port),
    ], f"http://127.0.0.1:{port}/readyz"


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except Exception:
        return False


def one_run(target: str, timeout: float) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        cmd, url = command(target, port)
        log_path = Path(tmp) / "server.log"
        with open(log_path, "w") as log:
            t0 = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
            try:
                ready_s = None
                while time.perf_counter() - t0 < timeout:
                    if proc.poll() is not None:
                        raise RuntimeError(f"the server exited with {proc.returncode}:\n{log_path.read_text()[-2000:]}")
                    if ready(url):
                        ready_s = time.perf_counter() - t0
                        break
                    time.sleep(0.1)
                if ready_s is None:
                    raise RuntimeError(f"not ready within {timeout} s")
                # The background compilation: wait for its last line (N/N), bounded.
                all_s = None
                while time.perf_counter() - t0 < timeout:
                    m = [x for x in COMPILED.finditer(log_path.read_text()) if x.group(1) == x.group(2)]
                    if m:
                        all_s = float(m[-1].group(3))
                        break
                    time.sleep(0.5)
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
        text = log_path.read_text()
        warm = re.search(r"warmed up in ([\d.]+) s", text)
    return {
        "ready_s": round(ready_s, 2),
        "warmup_before_ready_s": float(warm.group(1)) if warm else None,
        "all_programs_compiled_s_after_warmup_start": all_s,
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", choices=("gateway", "large"), default="gateway")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    runs = []
    for i in range(args.runs):
        runs.append(one_run(args.target, args.timeout))
        print(f"run {i + 1}: ready after {runs[-1]['ready_s']} s", file=sys.stderr)
    warm = runs[1:] or runs
    from runtime.platform import cpu_info

    result = {
        "cpu": cpu_info(),
        "target": "make serve" if args.target == "gateway" else "make serve-large",
        "runs": runs,
        "warm_ready_s_median": statistics.median(r["ready_s"] for r in warm),
        "note": "run 1 may be cold (it fills the persistent compilation cache); the median is over runs 2..",
        "load_average": os.getloadavg()[0],
    }
    line = json.dumps(result)
    print(line)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
