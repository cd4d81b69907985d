"""Prefill/decode disaggregation under a mixed load: TTFT and TPOT, colocated vs disaggregated, one run.

Two set-ups of the same model and limits, run one after the other on loopback ports:

    colocated       one ``python -m runtime.server --role both``: every step mixes the streams' decode
                    tokens with chunks of whatever long prompt just arrived
    disaggregated   ``--role prefill`` + ``--role decode --prefill-url ...``: long prompts are computed
                    in the prefill process; the decode process receives their KV (HTTP, binary) and
                    only ever runs decode steps

The same seeded load goes to each (to the decode server when disaggregated): ``--streams`` clients that
keep short chats decoding back to back (``--stream-tokens`` each), and ``--long`` long prompts
(``--long-tokens``, each unique so no prefix cache helps) arriving every ``--interval`` seconds, each
answered with ``--long-out`` tokens. Times are the client's: TTFT = request sent -> first NDJSON line,
TPOT = (last line - first line) / (tokens - 1), inter-token latency = the gaps between lines. All
three servers run from the start (an idle one costs nothing) and the set-ups take ``--repeats`` turns
each, in alternating order, each turn with its own long prompts; the figures pool every turn (and
``runs`` keeps each turn's own). The JSON report (stdout and ``--out``) has p50/p99 of
both, per request class, side by side with their ratios (disaggregated / colocated: < 1 is better),
plus the KV payload per prompt and what moving it costs (a prefill the prefill server finds in its
prefix cache is nearly all transfer: gather, encode, HTTP, decode).

    python scripts/bench_disagg.py [--streams 4] [--long 6] [--long-tokens 600] [--interval 3] [--repeats 3]
        [--pin] [--local-prefill-tokens N] [--prefill-env CUDA_VISIBLE_DEVICES=0 --decode-env CUDA_VISIBLE_DEVICES=1]
        [--out PATH]

On one host the two processes share its cores (``--pin`` gives the prefill process the first half of
the CPUs and the decode process the second half; colocated gets all of them). On a machine with
several accelerators give each role its own device with ``--prefill-env`` / ``--decode-env`` (for
JAX on GPUs also ``XLA_PYTHON_CLIENT_MEM_FRACTION`` if two processes share one device).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent

sys.path.insert(0, str(ROOT))  # runtime.distributed.kv_transfer, for decoding one payload; tests.support.processes

from tests.support.processes import ServerProcess, engine_flags  # noqa: E402

TOPICS = [
    "the harbour",
    "a mountain village",
    "the old railway",
    "a spice market",
    "the river delta",
    "a lighthouse",
    "the northern forest",
    "a desert town",
]
SHORT_QUESTIONS = [
    "Say hello in three languages.",
    "Name a colour and a fruit.",
    "What is two plus two?",
    "Give me a short tip for sleeping well.",
    "Describe the sea in one line.",
    "What do cats like?",
    "Name a famous bridge.",
    "Write a four-word poem.",
]


# ---------------------------------------------------------------- server processes


def server(name: str, args: list[str], *, cpus: str | None = None, env: dict | None = None) -> ServerProcess:
    """``python -m runtime.server`` on a loopback port, optionally pinned to ``cpus`` (taskset); not started."""
    proc = ServerProcess(["-m", "runtime.server", *args], name=name, env=env, wait_ready=False)
    if cpus:
        proc.args = ["taskset", "-c", cpus, *proc.args]
    return proc


# ---------------------------------------------------------------- the load


@dataclass
class Result:
    kind: str  # "stream" | "long"
    sent: float
    ttft: float | None = None
    tpot: float | None = None
    gaps: list[float] = field(default_factory=list)  # between consecutive NDJSON lines (inter-token latency)
    tokens: int = 0
    error: str | None = None


@dataclass
class Load:
    short_prompts: list[list[int]]
    long_prompts: list[list[int]]
    stream_tokens: int
    long_out: int
    streams: int
    interval: float
    lead: float
    results: list[Result] = field(default_factory=list)


async def encode(session: aiohttp.ClientSession, url: str, text: str) -> list[int]:
    async with session.post(url + "/v1/encode", json={"messages": [{"role": "user", "content": text}]}) as r:
        r.raise_for_status()
        return (await r.json())["prompt_ids"]


def long_text(i: int, notes: list[str]) -> str:
    """A unique document (its first words differ, so no prefix is shared between two of them)."""
    return f"Report {i} on {TOPICS[i % len(TOPICS)]}. " + " ".join(notes) + " Summarise the report in one sentence."


async def long_prompt(s, url: str, i: int, n_tokens: int, rng: random.Random) -> list[int]:
    """Chat prompt ids of report ``i`` grown note by note to at least ``n_tokens`` tokens."""
    notes: list[str] = []
    ids = await encode(s, url, long_text(i, notes))
    while len(ids) < n_tokens:
        per_note = max(1.0, (len(ids) - 30) / len(notes)) if notes else 20.0
        for _ in range(max(1, int((n_tokens - len(ids)) / per_note))):
            topic = rng.choice(TOPICS)
            notes.append(
                f"Note {len(notes) + 1}: {topic} saw {rng.randrange(2, 999)} visitors and sent "
                f"{rng.randrange(2, 99)} letters."
            )
        ids = await encode(s, url, long_text(i, notes))
    return ids


async def build_load(url: str, args, rng: random.Random) -> tuple[Load, list[int]]:
    """The load, and one more long prompt for warming up (never part of the measured run)."""
    async with aiohttp.ClientSession() as s:
        short = [await encode(s, url, q) for q in SHORT_QUESTIONS]
        long = [await long_prompt(s, url, i, args.long_tokens, rng) for i in range(args.long * args.repeats + 1)]
    return Load(short, long[:-1], args.stream_tokens, args.long_out, args.streams, args.interval, args.lead), long[-1]


async def one_request(session, url: str, kind: str, prompt_ids: list[int], max_tokens: int) -> Result:
    body = {"prompt_ids": prompt_ids, "params": {"max_tokens": max_tokens, "ignore_eos": True}}
    res = Result(kind, time.perf_counter())
    times, tokens = [], 0
    try:
        async with session.post(url + "/v1/generate", json=body) as r:
            if r.status != 200:
                res.error = f"{r.status}: {(await r.text())[:200]}"
                return res
            async for line in r.content:
                if line.strip():
                    times.append(time.perf_counter())
                    tokens += json.loads(line).get("n_tokens", 0)
    except aiohttp.ClientError as exc:
        res.error = f"{type(exc).__name__}: {exc}"
        return res
    res.tokens = tokens
    if times:
        res.ttft = times[0] - res.sent
        if tokens > 1:
            res.tpot = (times[-1] - times[0]) / (tokens - 1)
        res.gaps = list(np.diff(times))
    return res


async def run_load(url: str, load: Load, label: str, deadline_s: float) -> list[Result]:
    """Streams decode back to back; long prompts arrive on a timer; ends when the last long one is done."""
    results: list[Result] = []
    stop = asyncio.Event()
    progress = Progress(label, len(load.long_prompts))
    timeout = aiohttp.ClientTimeout(total=deadline_s)
    async with aiohttp.ClientSession(timeout=timeout) as session:

        async def stream(i: int):
            k = i
            while not stop.is_set():
                results.append(
                    await one_request(
                        session, url, "stream", load.short_prompts[k % len(load.short_prompts)], load.stream_tokens
                    )
                )
                k += load.streams

        async def long(i: int, prompt):
            await asyncio.sleep(load.lead + i * load.interval)
            results.append(await one_request(session, url, "long", prompt, load.long_out))
            progress.step()

        streams = [asyncio.create_task(stream(i)) for i in range(load.streams)]
        try:
            await asyncio.wait_for(asyncio.gather(*(long(i, p) for i, p in enumerate(load.long_prompts))), deadline_s)
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*streams, return_exceptions=True), deadline_s)
            progress.done()
    return results


class Progress:
    """One line on stderr: ``label [#####.....] 3/6 long prompts answered``."""

    def __init__(self, label: str, total: int):
        self.label, self.total, self.n = label, total, 0
        self._draw()

    def _draw(self):
        bar = "#" * self.n + "." * (self.total - self.n)
        print(
            f"\r{self.label:>18} [{bar}] {self.n}/{self.total} long prompts answered",
            end="",
            file=sys.stderr,
            flush=True,
        )

    def step(self):
        self.n += 1
        self._draw()

    def done(self):
        print(file=sys.stderr, flush=True)


# ---------------------------------------------------------------- report


def pct(values, q) -> float | None:
    values = [v for v in values if v is not None]
    return round(float(np.percentile(values, q)) * 1e3, 1) if values else None


def summarize(results: list[Result], wall: float) -> dict:
    out = {"wall_s": round(wall, 1), "errors": [r.error for r in results if r.error][:5]}
    for kind in ("stream", "long"):
        rs = [r for r in results if r.kind == kind and not r.error]
        out[kind] = {
            "requests": len(rs),
            "tokens": sum(r.tokens for r in rs),
            "ttft_ms": {"p50": pct([r.ttft for r in rs], 50), "p99": pct([r.ttft for r in rs], 99)},
            "tpot_ms": {"p50": pct([r.tpot for r in rs], 50), "p99": pct([r.tpot for r in rs], 99)},
            # per-request TPOT is a mean; a decode step stalled behind a prefill chunk shows here
            "itl_ms": {
                "p50": pct([g for r in rs for g in r.gaps], 50),
                "p99": pct([g for r in rs for g in r.gaps], 99),
                "max": pct([g for r in rs for g in r.gaps], 100),
            },
        }
    out["decode_tokens_per_s"] = round(sum(r.tokens for r in results if not r.error) / wall, 1)
    return out


def ratios(colo: dict, dis: dict) -> dict:
    out = {}
    for kind in ("stream", "long"):
        for metric in ("ttft_ms", "tpot_ms", "itl_ms"):
            for q in ("p50", "p99"):
                a, b = colo[kind][metric][q], dis[kind][metric][q]
                out[f"{kind}_{metric[:-3]}_{q}"] = round(b / a, 2) if a and b else None
    return out


def table(colo: dict, dis: dict, rat: dict) -> str:
    rows = ["| request | metric | colocated | disaggregated | ratio (disagg / colo) |", "|---|---|---|---|---|"]
    for kind, name in (("stream", "steady streams"), ("long", "long prompts")):
        for metric in ("ttft_ms", "tpot_ms", "itl_ms"):
            for q in ("p50", "p99"):
                rows.append(
                    f"| {name} | {metric[:-3].upper()} {q} (ms) | {colo[kind][metric][q]} | "
                    f"{dis[kind][metric][q]} | {rat[f'{kind}_{metric[:-3]}_{q}']} |"
                )
    return "\n".join(rows)


async def measure_transfer(prefill_url: str, prompt_ids: list[int]) -> dict:
    """POST /v1/prefill for a prompt the prefill server has just computed (its blocks are in its prefix
    cache, so only the last partial block is recomputed): the time is mostly moving the KV."""
    from runtime.distributed.kv_transfer import decode_prefilled

    async with aiohttp.ClientSession() as s:
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            async with s.post(prefill_url + "/v1/prefill", json={"prompt_ids": prompt_ids}) as r:
                data = await r.read()
                r.raise_for_status()
                prefill_ms = float(r.headers["X-Prefill-Ms"])
            decode_prefilled(data)
            total_ms = (time.perf_counter() - t) * 1e3
            runs.append((total_ms - prefill_ms, total_ms, prefill_ms, float(r.headers["X-Encode-Ms"])))
    move_ms, total_ms, prefill_ms, encode_ms = min(runs)
    return {
        "prompt_tokens": len(prompt_ids),
        "payload_bytes": len(data),
        "bytes_per_token": len(data) // len(prompt_ids),
        "round_trip_ms": round(total_ms, 1),
        "prefill_and_gather_ms": round(prefill_ms, 1),
        "encode_ms": round(encode_ms, 1),
        "encode_http_decode_ms": round(move_ms, 1),
        "wire_mb_per_s": round(len(data) / move_ms / 1e3, 1),
    }


# ---------------------------------------------------------------- main


# What every server is given, with this script's defaults: runtime.server's flags of the same names.
SERVER_FLAGS = {
    "model": "smollm2-135m",
    "dtype": "float32",
    "max_num_seqs": 8,
    "max_num_batched_tokens": 128,
    "max_model_len": 1024,
    "kv_cache_mb": 128,
}


def server_args(args) -> list[str]:
    return engine_flags(**{name: getattr(args, name) for name in SERVER_FLAGS})


def env_pairs(pairs: list[str]) -> dict:
    out = {}
    for p in pairs:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise SystemExit(f"error: expected KEY=VALUE, got {p!r}")
        out[key] = value
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in SERVER_FLAGS.items():
        p.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    p.add_argument("--streams", type=int, default=4, help="clients decoding short chats back to back")
    p.add_argument("--stream-tokens", type=int, default=48)
    p.add_argument("--long", type=int, default=6, help="long prompts arriving during the run")
    p.add_argument("--long-tokens", type=int, default=600)
    p.add_argument("--long-out", type=int, default=16)
    p.add_argument("--interval", type=float, default=3.0, help="seconds between long-prompt arrivals")
    p.add_argument("--lead", type=float, default=3.0, help="seconds of streams alone before the first long prompt")
    local = "the decode server prefills prompts of at most this many tokens itself (0: none)"
    p.add_argument("--local-prefill-tokens", type=int, default=0, help=local)
    p.add_argument("--pin", action="store_true", help="prefill on the first half of the CPUs, decode on the rest")
    p.add_argument("--prefill-env", action="append", default=[], help="KEY=VALUE for the prefill process")
    p.add_argument("--decode-env", action="append", default=[], help="KEY=VALUE for the decode process")
    p.add_argument("--ready-timeout", type=float, default=900)
    p.add_argument("--phase-timeout", type=float, default=600, help="bound on each set-up's load, seconds")
    p.add_argument("--repeats", type=int, default=3, help="turns of each set-up (alternating order), pooled")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="docs/results/bench_disagg.json")
    args = p.parse_args(argv)
    if args.long_tokens * 1.1 + args.long_out > args.max_model_len:
        p.error("--long-tokens (+10%) + --long-out must fit in --max-model-len")

    ncpu = len(os.sched_getaffinity(0))
    half = max(1, ncpu // 2)
    cpus = (f"0-{half - 1}", f"{half}-{ncpu - 1}") if args.pin and ncpu > 1 else (None, None)
    common = server_args(args)
    from runtime.platform import cpu_info

    report: dict = {
        "benchmark": "bench_disagg",
        "cpu": cpu_info(),
        "host": {
            "cpus": ncpu,
            "machine": platform.machine(),
            "python": platform.python_version(),
            # other work on the host moves every figure here
            "loadavg_1m_at_start": os.getloadavg()[0],
        },
        "config": {k: v for k, v in vars(args).items() if k != "out"},
    }

    # All three servers up at once (an idle server costs no CPU); the set-ups then take turns, the
    # order alternating per repeat, so a change in the machine's background load hits both alike.
    servers = {"colocated": server("colocated", [*common, "--role", "both"])}
    servers["prefill"] = server(
        "prefill", [*common, "--role", "prefill"], cpus=cpus[0], env=env_pairs(args.prefill_env)
    )
    servers["decode"] = server(
        "decode",
        [
            *common,
            "--role",
            "decode",
            "--prefill-url",
            servers["prefill"].url,
            "--local-prefill-tokens",
            str(args.local_prefill_tokens),
        ],
        cpus=cpus[1],
        env=env_pairs(args.decode_env),
    )
    urls = {"colocated": servers["colocated"].url, "disaggregated": servers["decode"].url}
    results: dict[str, list[Result]] = {"colocated": [], "disaggregated": []}
    walls = {"colocated": 0.0, "disaggregated": 0.0}
    runs = []
    with contextlib.ExitStack() as stack:  # every server stopped on the way out, its log deleted
        for srv in servers.values():
            stack.enter_context(srv)
        for srv in servers.values():
            srv.wait(args.ready_timeout)
        # The same token ids for both set-ups; every repeat gets its own long prompts (a repeated one
        # would be found in the prefix cache).
        load, warm = asyncio.run(build_load(urls["colocated"], args, random.Random(args.seed)))
        for mode, url in urls.items():
            asyncio.run(run_load(url, Load(load.short_prompts, [warm], 4, 4, 1, 0, 0), f"warm-up {mode[:6]}", 300))
        for r in range(args.repeats):
            part = Load(
                load.short_prompts,
                load.long_prompts[r * args.long : (r + 1) * args.long],
                load.stream_tokens,
                load.long_out,
                load.streams,
                load.interval,
                load.lead,
            )
            for mode in list(urls) if r % 2 == 0 else list(urls)[::-1]:
                t = time.perf_counter()
                res = asyncio.run(run_load(urls[mode], part, f"{mode} {r + 1}/{args.repeats}", args.phase_timeout))
                wall = time.perf_counter() - t
                results[mode] += res
                walls[mode] += wall
                runs.append({"repeat": r + 1, "mode": mode, **summarize(res, wall)})
        transfer = asyncio.run(measure_transfer(servers["prefill"].url, load.long_prompts[-1]))

    report["host"]["loadavg_1m_at_end"] = os.getloadavg()[0]
    colocated, disaggregated = (summarize(results[m], walls[m]) for m in ("colocated", "disaggregated"))
    rat = ratios(colocated, disaggregated)
    report.update(
        workload={
            "long_prompt_tokens": [len(x) for x in load.long_prompts],
            "short_prompt_tokens": [len(x) for x in load.short_prompts],
        },
        colocated=colocated,
        disaggregated=disaggregated,
        ratios=rat,
        kv_transfer=transfer,
        table=table(colocated, disaggregated, rat),
        runs=runs,
        ratios_per_repeat=[
            ratios(a, b)
            for a, b in zip(
                [x for x in runs if x["mode"] == "colocated"], [x for x in runs if x["mode"] == "disaggregated"]
            )
        ],
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    print("\n" + report["table"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
