"""Where a loaded ``make serve`` spends its CPU: py-spy samples of the gateway process while
``bench_serving.py``'s workload runs at a given rate, by thread and by function.

In: the gateway config (default ``configs/gateway.yaml``, as shipped, ``--no-cache``). Out: one JSON object on
stdout and in ``--out``: each thread's CPU seconds during the run (``/proc``, exact: how many of the two cores the
step thread, XLA's pool and the event loop each used), and from py-spy per thread (the step thread ``llm-engine-step``, the event loop ``MainThread``, XLA's
pool, ...) its share of the samples in which it was on a CPU, and per thread the functions that were running
(the innermost frame of ours or the library's, ``--top`` of them); the run's bench_serving summary beside it.

    python scripts/profile_serving.py [--rate 4] [--num-prompts 30] [--seed 21] [--rate-hz 100] [--out FILE]

py-spy (``pip install py-spy``) samples with ``--native``, so time inside XLA's compiled step and the C++
kernels shows as native frames under the Python call that entered them. It needs ptrace rights on the
gateway (root, or ``kernel.yama.ptrace_scope=0``). Run it on a quiet machine: the samples count CPU time
of this process only, but the workload's timing is shared.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def parse_raw(text: str) -> list[tuple[str, list[str], int]]:
    """py-spy ``--format raw`` lines (``thread (idle?);frame;frame;... count``, outermost frame first) ->
    (thread, frames, count)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        parts = stack.split(";")
        out.append((parts[0], parts[1:], int(count)))
    return out


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds (user + system) each thread of ``pid`` has used so far, by ``name (tid)``, from
    ``/proc/<pid>/task/*/stat``: the exact split of the process's CPU time, GIL or not (py-spy's samples skip a
    thread that is inside XLA with the GIL released)."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        out[f"{name} ({task.name})"] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return out


def cpu_split(before: dict[str, float], after: dict[str, float], wall: float) -> dict[str, dict]:
    """Per thread: CPU seconds used between the two readings and their share of the wall time (1.0 = one core),
    busiest first; threads under 1% of a core are summed as ``others``."""
    used = {k: after[k] - before.get(k, 0.0) for k in after}
    rows, others = {}, 0.0
    for k, v in sorted(used.items(), key=lambda kv: -kv[1]):
        if v / wall < 0.01:
            others += v
        else:
            rows[k] = {"cpu_s": round(v, 2), "cores": round(v / wall, 3)}
    rows["others"] = {"cpu_s": round(others, 2), "cores": round(others / wall, 3)}
    return rows


def summarize_samples(samples: list[tuple[str, list[str], int]], top: int = 12) -> dict:
    """Per thread: samples, share of all, and its ``top`` innermost frames (function and file) by samples,
    plus the Python frame that entered native code (what a native-heavy sample was doing for us)."""
    total = sum(c for _, _, c in samples) or 1
    by_thread: dict[str, int] = collections.Counter()
    leaf: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    entry: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for thread, frames, count in samples:
        name = thread.strip().strip('"')
        by_thread[name] += count
        if frames:
            leaf[name][frames[-1]] += count
            python = [f for f in frames if ".py:" in f or ".py)" in f]
            if python:
                entry[name][python[-1]] += count
    return {
        "samples": total,
        "threads": {
            name: {
                "samples": n,
                "share": round(n / total, 4),
                "top_leaf_frames": [[f, c] for f, c in leaf[name].most_common(top)],
                "top_python_frames": [[f, c] for f, c in entry[name].most_common(top)],
            }
            for name, n in by_thread.most_common()
        },
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default=str(ROOT / "configs" / "gateway.yaml"))
    p.add_argument("--rate", type=float, default=4.0)
    p.add_argument("--num-prompts", type=int, default=30)
    p.add_argument("--seed", type=int, default=21)
    p.add_argument("--rate-hz", type=int, default=100, help="py-spy samples a second")
    p.add_argument("--top", type=int, default=12)
    p.add_argument("--no-native", action="store_true", help="Python frames only (cheaper sampling)")
    p.add_argument("--out", default=str(ROOT / "out" / "profile_serving.json"))
    args = p.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(spy).exists():
        p.error("py-spy is not installed: pip install py-spy")

    from bench_vs_llama_server import WARMUP_SEED, one_run, wait_compiled

    from runtime.platform import cpu_info
    from tests.support.processes import ServerProcess

    with ServerProcess(
        ["-m", "gateway", "--config", args.config, "--no-cache"], name="gateway", ready_timeout=900
    ) as gw:
        compiled_s = wait_compiled(gw.url)
        print(f"compiled after {compiled_s:.0f} s; warm-up run", file=sys.stderr)

        one_run(gw.url, "auto", args.rate, WARMUP_SEED, args.num_prompts)
        with tempfile.NamedTemporaryFile(suffix=".txt", delete=False) as f:
            raw_path = Path(f.name)
        cmd = [
            spy,
            "record",
            "--pid",
            str(gw.proc.pid),
            "--rate",
            str(args.rate_hz),
            "--format",
            "raw",
            "--threads",
            "--output",
            str(raw_path),
        ]
        # --native pauses the process for each sample (py-spy cannot read native stacks otherwise): the run is
        # a little slower than unprofiled, and the serving figures beside the profile say by how much
        cmd.append("--nonblocking" if args.no_native else "--native")
        spy_proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.0)
        cpu0 = thread_cpu_seconds(gw.proc.pid)
        t0 = time.perf_counter()
        report = one_run(gw.url, "auto", args.rate, args.seed, args.num_prompts)
        wall = time.perf_counter() - t0
        threads = cpu_split(cpu0, thread_cpu_seconds(gw.proc.pid), wall)
        spy_proc.send_signal(2)  # SIGINT: py-spy writes what it has
        try:
            _, err = spy_proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            spy_proc.kill()
            _, err = spy_proc.communicate()
    samples = parse_raw(raw_path.read_text()) if raw_path.exists() else []
    raw_path.unlink(missing_ok=True)
    if not samples:
        print(err.decode(errors="replace")[-2000:], file=sys.stderr)
        raise SystemExit("py-spy recorded nothing (ptrace rights?)")
    out = {
        "what": "py-spy samples of make serve's gateway under bench_serving's workload",
        "config": args.config,
        "rate": args.rate,
        "seed": args.seed,
        "sample_rate_hz": args.rate_hz,
        "wall_s": round(wall, 2),
        "cpu": {k: v for k, v in cpu_info().items() if k != "flags"},
        "thread_cpu": threads,  # /proc: CPU seconds per thread during the run, and in cores (1.0 = one core busy)
        "profile": summarize_samples(samples, args.top),
        "serving": {k: report[k] for k in ("completed", "output_token_throughput", "goodput", "tpot_ms", "ttft_ms")},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: out[k] for k in ("rate", "wall_s", "serving")}))
    for name, t in threads.items():
        print(f"{t['cores']:6.2f} cores  {name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
