"""Load test: many concurrent streaming clients against a gateway on this machine, then its recovery.

In: a gateway on a loopback address, either spawned here from a config (``--config``, default
``configs/gateway.yaml``: what ``make serve`` runs, with the cache file moved to a temporary folder)
or a running one (``--url`` and optionally ``--pid`` for its memory). Non-loopback URLs are refused.
Out: one JSON report on stdout and in ``--out``; a progress bar on stderr; exit status 1 when a
property fails (2 for bad arguments or a gateway that never got ready).

    python scripts/load_test.py --clients 256 --duration 60            # spawns make serve's gateway
    python scripts/load_test.py --url http://127.0.0.1:8000 --pid 1234  # attaches to a running one

What happens, all on one asyncio loop in this process::

    spawn (or attach) -> wait for /readyz
    warm-up: one request, then a burst of --warmup-burst at once (every batch size runs once)
             -> wait until the engines are idle -> RSS "idle" (from /proc/PID/status)
    load:    --clients tasks, each a loop until --duration: POST a streaming chat request from a
             seeded workload (scripts/bench_serving.py's, with repeats and paraphrases so the cache
             has something to hit), read the SSE stream to [DONE]; on 429/503 check Retry-After and
             the OpenAI error body, then wait Retry-After like a well-behaved client. RSS sampled
             twice a second ("peak").
    after:   wait for every engine to be idle and every KV block free (/metrics), then RSS "after".
    stop:    a spawned gateway gets SIGTERM: it drains and must exit 0.

A request is *completed* when its stream ended with ``data: [DONE]`` after a chunk with
``finish_reason`` stop or length and no error event; *rejected* when the answer was 429 or 503 (it
counts as explicit only with ``Retry-After`` and an ``{"error": {"message", "type"}}`` body);
anything else (other statuses, a broken or incomplete stream, a connection error, a timeout) is an
*error*. TTFT is from sending the request to the first non-empty content delta.

Properties checked (the report's ``properties``; all must hold):
    no_errors               errors == 0
    rejections_explicit     every 429/503 had Retry-After and an OpenAI error body
    completed_some          at least one request completed
    all_clients_active      every client sent at least one request
    no_server_5xx           the gateway's own counters show no 5xx other than 503
    kv_blocks_free          after the run: kv_cache_usage_perc 0 (every usable block back in the
                            pool) and no request running or waiting, for every model
    memory_returned         RSS after <= idle + tolerance (see ``rss_tolerance_mib``)
    clean_shutdown          (spawned gateway only) SIGTERM -> exit status 0

The memory tolerance: RSS "idle" is measured after the warm-up, so XLA's buffers for every batch size
and Python's allocator arenas are already at their working size. What may legitimately remain after
the run is allocator high-water (glibc keeps freed arenas mapped; CPython keeps freed small-object
pools) and the cache entries the run stored (a few KB each). Default tolerance: the larger of 64 MiB
and 5 % of idle. A leak per request or per stream (256 clients x hundreds of requests) would exceed it.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import ipaddress
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.support.processes: the spawned gateway

from tests.support.processes import ServerProcess  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "results" / "load_test.json"


def _bench_serving():
    spec = importlib.util.spec_from_file_location("bench_serving", ROOT / "scripts" / "bench_serving.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_serving", module)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- safety: loopback only


def require_loopback(url: str) -> str:
    """The URL, without a trailing slash, if every address its host resolves to is loopback; else ValueError."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 80, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ValueError(f"cannot resolve {parts.hostname!r}: {exc}") from None
    addrs = {ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos}
    if not addrs or not all(a.is_loopback for a in addrs):
        raise ValueError(
            f"refusing to load-test {parts.hostname!r} ({', '.join(map(str, sorted(addrs, key=str)))}):"
            " only loopback addresses (127.0.0.0/8, ::1) are allowed"
        )
    return url.rstrip("/")


# ---------------------------------------------------------------- the gateway process


def rss_mib(pid: int) -> float | None:
    """Resident set size of ``pid`` in MiB (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class SpawnedGateway(ServerProcess):
    """``python -m gateway`` from ``config`` on a free loopback port, its cache file in a temporary folder
    (a load test must not fill the user's cache), its output in a log file (``log_path``)."""

    def __init__(
        self,
        config: str | Path,
        *,
        port: int | None = None,
        extra_args: tuple[str, ...] = (),
        drain_timeout_s: float = 60.0,
    ):
        self.config = Path(config)
        self.tmp = Path(tempfile.mkdtemp(prefix="load-test-"))
        self.drain_timeout_s = drain_timeout_s
        config_path = self.tmp / "gateway.yaml"
        args = ["-m", "gateway", "--config", str(config_path), "--drain-timeout", str(drain_timeout_s), *extra_args]
        super().__init__(args, name="the gateway", port=port, wait_ready=False)

    def _write_config(self) -> Path:
        data = yaml.safe_load(self.config.read_text()) or {}
        data["host"], data["port"] = "127.0.0.1", self.port
        cache = data.get("cache")
        if isinstance(cache, dict):
            data["cache"] = {**cache, "path": str(self.tmp / "cache.jsonl")}
        if isinstance(data.get("tiers"), str):  # relative to the original config's folder
            data["tiers"] = str((self.config.parent / data["tiers"]).resolve())
        path = self.tmp / "gateway.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self, ready_timeout: float = 900.0) -> SpawnedGateway:
        self._write_config()
        super().start()
        try:
            self.wait(ready_timeout)
            self.wait_compiled(ready_timeout)
        except TimeoutError:
            self.kill()
            raise
        return self

    def wait_compiled(self, timeout: float) -> None:
        """Until /readyz lists no tier still compiling in the background: the idle memory baseline must
        include every step program (they are not a leak)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(self.url + "/readyz", timeout=5) as r:
                if not json.loads(r.read()).get("compiling"):
                    return
            time.sleep(0.5)
        raise TimeoutError(f"the gateway still compiling after {timeout:.0f} s")

    def terminate(self) -> tuple[int | None, float]:
        """SIGTERM, then wait for the drain and the exit: (exit status, seconds)."""
        t = time.monotonic()
        if self.proc is None or self.proc.poll() is not None:
            return (self.proc.returncode if self.proc else None), 0.0
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(self.drain_timeout_s + 60)
        except subprocess.TimeoutExpired:
            self.kill()
            code = None
        return code, time.monotonic() - t


# ---------------------------------------------------------------- /metrics


def parse_metrics(text: str) -> dict[str, dict[tuple, float]]:
    """Prometheus text -> {metric name: {sorted label pairs: value}} (enough for our own exposition)."""
    out: dict[str, dict[tuple, float]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, _, value = line.rpartition(" ")
        if "{" in name_labels:
            name, labels = name_labels.split("{", 1)
            pairs = []
            for item in labels.rstrip("}").split('",'):
                if "=" in item:
                    k, v = item.split("=", 1)
                    pairs.append((k.strip(), v.strip().strip('"')))
            key = tuple(sorted(pairs))
        else:
            name, key = name_labels, ()
        try:
            out.setdefault(name, {})[key] = float(value)
        except ValueError:
            continue
    return out


async def scrape(
    session: aiohttp.ClientSession, url: str, admin_key: str | None = None
) -> dict[str, dict[tuple, float]]:
    headers = {"Authorization": f"Bearer {admin_key}"} if admin_key else {}
    async with session.get(url + "/metrics", headers=headers, timeout=aiohttp.ClientTimeout(total=30)) as resp:
        if resp.status != 200:
            raise RuntimeError(f"GET /metrics answered {resp.status} (an admin key? --admin-key-env)")
        return parse_metrics(await resp.text())


def engine_state(m: dict) -> dict[str, dict[str, float]]:
    """Per model: running, waiting, kv_usage."""
    out: dict[str, dict[str, float]] = {}
    for metric, field_name in (
        ("num_requests_running", "running"),
        ("num_requests_waiting", "waiting"),
        ("kv_cache_usage_perc", "kv_usage"),
    ):
        for labels, value in m.get(metric, {}).items():
            out.setdefault(dict(labels).get("model", "?"), {})[field_name] = value
    return out


def idle(state: dict) -> bool:
    return bool(state) and all(
        s.get("running", 0) == 0 and s.get("waiting", 0) == 0 and s.get("kv_usage", 0) == 0 for s in state.values()
    )


async def wait_idle(session, url: str, timeout: float, admin_key: str | None = None) -> tuple[bool, dict, float]:
    t = time.monotonic()
    state: dict = {}
    while time.monotonic() - t < timeout:
        state = engine_state(await scrape(session, url, admin_key))
        if idle(state):
            return True, state, time.monotonic() - t
        await asyncio.sleep(0.25)
    return False, state, time.monotonic() - t


# ---------------------------------------------------------------- one request


@dataclass
class Result:
    kind: str  # completed | rejected | error
    status: int | None
    elapsed: float
    ttft: float | None = None
    completion_tokens: int = 0
    finish_reason: str | None = None
    cache: str | None = None
    retry_after: float | None = None
    explicit: bool = False  # a rejection with Retry-After and an OpenAI error body
    detail: str = ""


def _error_body_ok(raw: bytes) -> bool:
    try:
        err = json.loads(raw)["error"]
        return isinstance(err.get("message"), str) and bool(err["message"]) and isinstance(err.get("type"), str)
    except (ValueError, KeyError, TypeError, AttributeError):
        return False


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


async def one_request(
    session: aiohttp.ClientSession, url: str, body: dict, headers: dict, timeout: aiohttp.ClientTimeout
) -> Result:
    t0 = time.perf_counter()
    try:
        async with session.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=timeout) as resp:
            if resp.status in (429, 503):
                raw = await resp.read()
                ra = _retry_after(resp.headers.get("Retry-After"))
                return Result(
                    "rejected",
                    resp.status,
                    time.perf_counter() - t0,
                    retry_after=ra,
                    explicit=ra is not None and _error_body_ok(raw),
                    detail=raw[:200].decode(errors="replace"),
                )
            if resp.status != 200:
                raw = await resp.read()
                return Result("error", resp.status, time.perf_counter() - t0, detail=raw[:300].decode(errors="replace"))
            ttft = finish = None
            tokens, done = 0, False
            async for line in resp.content:  # one SSE line at a time
                line = line.strip()
                if not line.startswith(b"data: "):
                    continue  # blank separators and ": comment" lines (a tier handing over mid-answer)
                data = line[6:]
                if data == b"[DONE]":
                    done = True
                    break
                event = json.loads(data)
                if "error" in event:
                    return Result(
                        "error",
                        200,
                        time.perf_counter() - t0,
                        detail=f"error event mid-stream: {json.dumps(event)[:200]}",
                    )
                if event.get("usage"):
                    tokens = int(event["usage"].get("completion_tokens", 0))
                for choice in event.get("choices", []):
                    if ttft is None and (choice.get("delta") or {}).get("content"):
                        ttft = time.perf_counter() - t0
                    finish = choice.get("finish_reason") or finish
            elapsed = time.perf_counter() - t0
            if not done or finish not in ("stop", "length"):
                return Result("error", 200, elapsed, detail=f"incomplete stream (done={done}, finish_reason={finish})")
            return Result(
                "completed",
                200,
                elapsed,
                ttft=ttft,
                completion_tokens=tokens,
                finish_reason=finish,
                cache=resp.headers.get("x-cache"),
            )
    except TimeoutError:
        return Result("error", None, time.perf_counter() - t0, detail="client timeout")
    except (aiohttp.ClientError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        return Result("error", None, time.perf_counter() - t0, detail=f"{type(exc).__name__}: {exc}"[:300])


# ---------------------------------------------------------------- the load


@dataclass
class LoadConfig:
    clients: int = 256
    duration_s: float = 60.0
    model: str = "smollm2-135m"
    keys: int = 8  # API keys the clients share (client i uses key i % keys): per-key rate limits and cache scopes
    seed: int = 0
    prompt_len: str = "lognormal:24,0.6,4,160"  # words (bench_serving.LengthDist)
    max_tokens: str = "lognormal:40,0.5,8,96"
    repeat_share: float = 0.3
    temperature: float = 0.0
    request_timeout_s: float = 300.0  # one request, from sending to [DONE]
    max_requests: int = 100_000  # a hard cap on requests sent, whatever the duration
    max_retry_wait_s: float = 10.0  # a client never waits longer than this on Retry-After
    warmup_burst: int = 32
    settle_timeout_s: float = 60.0
    rss_tolerance_mib: float | None = None  # None: max(64 MiB, 5 % of idle)
    progress: bool = True
    admin_key: str | None = field(default=None, repr=False)  # for /metrics when the gateway has an admin key

    def __post_init__(self):
        if not 1 <= self.clients <= 4096:
            raise ValueError("clients must be in 1..4096")
        if not 0 < self.duration_s <= 3600:
            raise ValueError("duration must be in (0, 3600] seconds")
        if self.keys < 1 or self.max_requests < 1 or self.warmup_burst < 0:
            raise ValueError("keys and max_requests must be >= 1, warmup_burst >= 0")


@dataclass
class Tally:
    results: list[Result] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    per_client: Counter = field(default_factory=Counter)
    sent: int = 0

    def count(self, kind: str) -> int:
        return sum(1 for r in self.results if r.kind == kind)


def _body(req: dict, cfg: LoadConfig) -> dict:
    return {
        "model": cfg.model,
        "messages": req["messages"],
        "max_tokens": int(req["max_tokens"]),
        "temperature": cfg.temperature,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def _client(
    i: int,
    session,
    url: str,
    cfg: LoadConfig,
    workloads: list[list[dict]],
    cursors: list[int],
    tally: Tally,
    deadline: float,
    rng: random.Random,
) -> None:
    group = i % cfg.keys
    headers = {"Authorization": f"Bearer load-test-key-{group}"}
    timeout = aiohttp.ClientTimeout(total=cfg.request_timeout_s, sock_connect=30)
    await asyncio.sleep(rng.random() * min(1.0, cfg.duration_s / 10))  # a ramp, not one SYN flood
    while time.monotonic() < deadline and tally.sent < cfg.max_requests:
        work = workloads[group]
        req = work[cursors[group] % len(work)]
        cursors[group] += 1
        tally.sent += 1
        tally.per_client[i] += 1
        tally.in_flight += 1
        tally.peak_in_flight = max(tally.peak_in_flight, tally.in_flight)
        try:
            r = await one_request(session, url, _body(req, cfg), headers, timeout)
        finally:
            tally.in_flight -= 1
        tally.results.append(r)
        if r.kind == "rejected":
            wait = min(r.retry_after if r.retry_after is not None else 1.0, cfg.max_retry_wait_s)
            await asyncio.sleep(min(wait * (0.5 + rng.random()), max(0.0, deadline - time.monotonic())))
        elif r.kind == "error":
            await asyncio.sleep(min(1.0, max(0.0, deadline - time.monotonic())))  # never a hot error loop


async def _progress(tally: Tally, cfg: LoadConfig, start: float, deadline: float, stop: asyncio.Event) -> None:
    from tqdm import tqdm

    total = int(math.ceil(cfg.duration_s))
    with tqdm(
        total=total,
        unit="s",
        desc=f"{cfg.clients} clients",
        file=sys.stderr,
        disable=not cfg.progress,
        bar_format="{desc}: {bar} {n_fmt}/{total_fmt} s {postfix}",
    ) as bar:
        while not stop.is_set():
            elapsed = min(total, int(time.monotonic() - start))
            bar.update(elapsed - bar.n)
            bar.set_postfix_str(
                f"done {tally.count('completed')} 429 {_n(tally, 429)} 503 {_n(tally, 503)} "
                f"errors {tally.count('error')} in flight {tally.in_flight}",
                refresh=True,
            )
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass


def _n(tally: Tally, status: int) -> int:
    return sum(1 for r in tally.results if r.kind == "rejected" and r.status == status)


def _pcts_ms(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    a = np.asarray(values) * 1000
    return {
        "n": len(values),
        "p50": round(float(np.percentile(a, 50)), 1),
        "p90": round(float(np.percentile(a, 90)), 1),
        "p99": round(float(np.percentile(a, 99)), 1),
        "max": round(float(a.max()), 1),
    }


async def _sample_rss(pid: int | None, samples: list[float], stop: asyncio.Event) -> None:
    while pid is not None and not stop.is_set():
        v = rss_mib(pid)
        if v is not None:
            samples.append(v)
        try:
            await asyncio.wait_for(stop.wait(), 0.5)
        except TimeoutError:
            pass


async def _warmup(session, url: str, cfg: LoadConfig) -> None:
    """One request, then a burst at once: every batch-size program and the allocators reach working size.
    Distinct prompts and no-store: the warm-up leaves nothing in the cache."""
    timeout = aiohttp.ClientTimeout(total=cfg.request_timeout_s)
    headers = {"Authorization": "Bearer load-test-warmup", "Cache-Control": "no-cache, no-store"}

    def body(j):
        return {
            "model": cfg.model,
            "messages": [{"role": "user", "content": f"Warm-up {j}: name a colour."}],
            "max_tokens": 16,
            "temperature": cfg.temperature,
            "stream": True,
        }

    first = await one_request(session, url, body(0), headers, timeout)
    if first.kind != "completed":
        raise RuntimeError(f"the warm-up request failed: {first}")
    await asyncio.gather(*(one_request(session, url, body(j + 1), headers, timeout) for j in range(cfg.warmup_burst)))


async def run_load(url: str, cfg: LoadConfig, pid: int | None = None) -> dict:
    """Warm up, measure idle, run the load, wait for recovery; the report (without shutdown) as a dict."""
    url = require_loopback(url)
    bs = _bench_serving()
    n_work = max(64, min(cfg.max_requests, 4096))
    workloads = [
        bs.make_workload(
            n_work, cfg.seed + g, repeat_share=cfg.repeat_share, prompt_len=cfg.prompt_len, output_len=cfg.max_tokens
        )
        for g in range(cfg.keys)
    ]
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as session:
        await _warmup(session, url, cfg)
        await wait_idle(session, url, cfg.settle_timeout_s, cfg.admin_key)
        await asyncio.sleep(1.0)
        idle_rss = rss_mib(pid) if pid else None
        before = await scrape(session, url, cfg.admin_key)

        tally, samples, stop = Tally(), [], asyncio.Event()
        start = time.monotonic()
        deadline = start + cfg.duration_s
        background = [
            asyncio.create_task(_progress(tally, cfg, start, deadline, stop)),
            asyncio.create_task(_sample_rss(pid, samples, stop)),
        ]
        rngs = [random.Random(cfg.seed * 100_003 + i) for i in range(cfg.clients)]
        cursors = [0] * cfg.keys  # one per key group, shared by its clients: they walk one workload together
        await asyncio.gather(
            *(_client(i, session, url, cfg, workloads, cursors, tally, deadline, rngs[i]) for i in range(cfg.clients))
        )
        load_s = time.monotonic() - start
        stop.set()
        await asyncio.gather(*background)

        recovered, state, settle_s = await wait_idle(session, url, cfg.settle_timeout_s, cfg.admin_key)
        await asyncio.sleep(2.0)  # let the allocator hand back what it will
        after_rss = rss_mib(pid) if pid else None
        after = await scrape(session, url, cfg.admin_key)
    return _report(
        cfg, url, pid, tally, load_s, recovered, state, settle_s, idle_rss, samples, after_rss, before, after
    )


def _gateway_statuses(before: dict, after: dict) -> dict[str, int]:
    out: Counter = Counter()
    for labels, v in after.get("gateway_requests_total", {}).items():
        out[dict(labels).get("status", "?")] += int(v - before.get("gateway_requests_total", {}).get(labels, 0))
    return {k: v for k, v in sorted(out.items()) if v}


def _report(
    cfg, url, pid, tally: Tally, load_s, recovered, state, settle_s, idle_rss, samples, after_rss, before, after
) -> dict:
    res = tally.results
    completed = [r for r in res if r.kind == "completed"]
    rejected = [r for r in res if r.kind == "rejected"]
    errors = [r for r in res if r.kind == "error"]
    statuses = Counter(str(r.status) for r in res)
    gw = _gateway_statuses(before, after)
    server_5xx = {k: v for k, v in gw.items() if k.startswith("5") and k != "503"}
    tolerance = cfg.rss_tolerance_mib if cfg.rss_tolerance_mib is not None else max(64.0, 0.05 * (idle_rss or 0))
    memory = None
    if idle_rss is not None:
        peak = max([idle_rss, *samples])
        memory = {
            "idle_mib": round(idle_rss, 1),
            "peak_mib": round(peak, 1),
            "after_mib": round(after_rss, 1) if after_rss is not None else None,
            "tolerance_mib": round(tolerance, 1),
            "allowed_after_mib": round(idle_rss + tolerance, 1),
        }
    props = {
        "no_errors": not errors,
        "rejections_explicit": all(r.explicit for r in rejected),
        "completed_some": bool(completed),
        "all_clients_active": len(tally.per_client) == cfg.clients,
        "no_server_5xx": not server_5xx,
        "kv_blocks_free": recovered and idle(state),
    }
    if memory is not None:
        props["memory_returned"] = (
            memory["after_mib"] is not None and memory["after_mib"] <= memory["allowed_after_mib"]
        )
    tokens = sum(r.completion_tokens for r in completed)
    return {
        "target": {"url": url, "pid": pid},
        "workload": {
            "clients": cfg.clients,
            "duration_s": cfg.duration_s,
            "model": cfg.model,
            "keys": cfg.keys,
            "seed": cfg.seed,
            "prompt_words": cfg.prompt_len,
            "max_tokens": cfg.max_tokens,
            "repeat_share": cfg.repeat_share,
            "temperature": cfg.temperature,
            "request_timeout_s": cfg.request_timeout_s,
            "max_requests": cfg.max_requests,
            "warmup_burst": cfg.warmup_burst,
        },
        "requests": {
            "sent": tally.sent,
            "completed": len(completed),
            "rejected_429": _n(tally, 429),
            "rejected_503": _n(tally, 503),
            "rejected_without_retry_after_or_body": sum(not r.explicit for r in rejected),
            "errors": len(errors),
            "by_status": dict(sorted(statuses.items())),
            "finish_reasons": dict(Counter(r.finish_reason for r in completed)),
            "cache_hits": sum(r.cache == "hit" for r in completed),
            "error_samples": [{"status": r.status, "detail": r.detail} for r in errors[:10]],
            "rejection_samples": sorted({r.detail for r in rejected})[:3],
        },
        "latency_ms": {
            "ttft": _pcts_ms([r.ttft for r in completed if r.ttft is not None]),
            "ttft_miss": _pcts_ms([r.ttft for r in completed if r.ttft is not None and r.cache != "hit"]),
            "ttft_hit": _pcts_ms([r.ttft for r in completed if r.ttft is not None and r.cache == "hit"]),
            "e2e": _pcts_ms([r.elapsed for r in completed]),
            "rejection": _pcts_ms([r.elapsed for r in rejected]),
        },
        "throughput": {
            "load_s": round(load_s, 1),
            "completed_per_s": round(len(completed) / load_s, 2),
            "output_tokens_per_s": round(tokens / load_s, 1),
            "output_tokens": tokens,
        },
        "concurrency": {
            "clients": cfg.clients,
            "clients_active": len(tally.per_client),
            "peak_requests_in_flight": tally.peak_in_flight,
        },
        "server": {
            "recovered": recovered,
            "settle_s": round(settle_s, 2),
            "engines_after": state,
            "gateway_requests_by_status": gw,
            "gateway_5xx_other_than_503": server_5xx,
        },
        "memory": memory,
        "properties": props,
    }


# ---------------------------------------------------------------- the command


def run(
    args_cfg: LoadConfig,
    *,
    url: str | None = None,
    pid: int | None = None,
    config: str | None = None,
    drain_timeout_s: float = 60.0,
    ready_timeout_s: float = 900.0,
    gateway_args: tuple[str, ...] = (),
) -> dict:
    """Spawn (``config``) or attach to (``url``) a gateway, run the load, stop a spawned one; the report."""
    gateway = None
    if url is None:
        gateway = SpawnedGateway(
            config or ROOT / "configs" / "gateway.yaml", drain_timeout_s=drain_timeout_s, extra_args=gateway_args
        )
        t = time.monotonic()
        gateway.start(ready_timeout_s)
        url, pid = gateway.url, gateway.pid
        ready_s = time.monotonic() - t
    try:
        report = asyncio.run(run_load(url, args_cfg, pid))
    except BaseException:
        if gateway is not None:
            gateway.kill()
        raise
    if gateway is not None:
        report["target"].update(
            {"spawned": True, "config": str(config or "configs/gateway.yaml"), "ready_s": round(ready_s, 1)}
        )
        code, stop_s = gateway.terminate()
        report["shutdown"] = {"signal": "SIGTERM", "exit_code": code, "seconds": round(stop_s, 2)}
        report["properties"]["clean_shutdown"] = code == 0
        if code != 0:
            report["shutdown"]["log_tail"] = gateway.log_tail()
            report["shutdown"]["log"] = str(gateway.log_path)  # kept for a look
        else:
            shutil.rmtree(gateway.tmp, ignore_errors=True)
            gateway.log_path.unlink(missing_ok=True)
    else:
        report["target"]["spawned"] = False
    report["passed"] = all(report["properties"].values())
    report["generated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["machine"] = {"cpus": os.cpu_count(), "platform": sys.platform}
    from runtime.platform import cpu_info

    report["cpu"] = cpu_info()
    return report


# LoadConfig's fields that are command-line flags of the same name (their dests).
CONFIG_FLAGS = (
    "clients",
    "duration_s",
    "model",
    "keys",
    "seed",
    "prompt_len",
    "max_tokens",
    "repeat_share",
    "request_timeout_s",
    "max_requests",
    "warmup_burst",
    "rss_tolerance_mib",
)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--config", help="spawn `python -m gateway` with this config (default: configs/gateway.yaml)")
    where.add_argument("--url", help="attach to a running gateway (loopback only)")
    p.add_argument("--pid", type=int, help="with --url: the gateway's process id, to measure its memory")
    p.add_argument("--clients", type=int, default=256)
    p.add_argument(
        "--duration", dest="duration_s", type=float, default=60.0, help="seconds during which new requests start"
    )
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--keys", type=int, default=8, help="API keys shared by the clients (rate limits, cache scopes)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-tokens-dist", dest="max_tokens", default=LoadConfig.max_tokens)
    p.add_argument("--prompt-len-dist", dest="prompt_len", default=LoadConfig.prompt_len)
    p.add_argument("--repeat-share", type=float, default=LoadConfig.repeat_share)
    p.add_argument("--request-timeout", dest="request_timeout_s", type=float, default=LoadConfig.request_timeout_s)
    p.add_argument("--max-requests", type=int, default=LoadConfig.max_requests)
    p.add_argument("--warmup-burst", type=int, default=LoadConfig.warmup_burst)
    p.add_argument("--rss-tolerance-mib", type=float, help="default: max(64, 5%% of idle)")
    p.add_argument("--drain-timeout", type=float, default=60.0, help="the spawned gateway's --drain-timeout")
    p.add_argument(
        "--admin-key-env",
        default="JAXSERVE_ADMIN_KEY",
        help="environment variable holding the gateway's admin key, sent for /metrics if set",
    )
    p.add_argument("--out", default=str(DEFAULT_OUT), help="JSON report (default: docs/results/load_test.json)")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    if args.pid is not None and args.url is None:
        p.error("--pid needs --url")
    try:
        if args.url:
            require_loopback(args.url)
        cfg = LoadConfig(
            **{name: getattr(args, name) for name in CONFIG_FLAGS},
            progress=not args.no_progress,
            admin_key=os.environ.get(args.admin_key_env) or None,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        report = run(cfg, url=args.url, pid=args.pid, config=args.config, drain_timeout_s=args.drain_timeout)
    except (RuntimeError, TimeoutError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    report["command"] = "python scripts/load_test.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    failed = [k for k, v in report["properties"].items() if not v]
    if failed:
        print(f"FAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
