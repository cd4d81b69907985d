"""A live monitoring dashboard: ``GET /dashboard`` (one self-contained HTML page) and ``GET /dashboard/data``.

Data flow (everything on the event loop; reading the registry is a few dict walks):

    sampler task (cleanup_ctx), every ``interval`` s          GET /dashboard/data
      read_registry(app's Prometheus registry) -> Snapshot      ring snapshots + one fresh Snapshot
      -> ring buffer (the last ``keep`` snapshots)              -> build_data(): series and summary
                                                                -> JSON, polled by the page every 2 s

A Snapshot holds *cumulative* counter values, cumulative histogram bucket counts and gauge readings,
exactly as the registry exposes them. Rates and percentiles are never stored: they are computed from
differences of counters between two snapshots (per interval for the hit rate, over a sliding ``window``
of bucket-count deltas for the latency percentiles, interpolated like PromQL's histogram_quantile).
Gauges (KV usage, running, waiting) are plotted as read.

The page draws its own SVG charts in plain JS and makes no request outside this gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aiohttp import web

from gateway import keys
from gateway.advise import metrics, symptoms, tune
from gateway.advise.history import DiagnosisHistory
from runtime.serving.errors import APIError, invalid

log = logging.getLogger("gateway.dashboard")

PAGE = Path(__file__).parent / "static" / "dashboard.html"

HIT_KINDS = ("exact", "semantic")
LOOKUP_KINDS = ("exact", "semantic", "guard_rejected", "miss", "bypass", "error")  # plotted in this order

# The families the dashboard reads (everything else in the registry is skipped, keeping the ring small).
COUNTERS = (
    "gateway_cache_lookups",
    "gateway_cost_usd",
    "gateway_cost_saved_usd",
    "gateway_cache_tokens_saved",
    "gateway_requests",
    "gateway_route_decisions",
    "gateway_fallbacks",
)
HISTOGRAMS = ("time_to_first_token_seconds", "inter_token_latency_seconds", "e2e_request_latency_seconds")
GAUGES = ("kv_cache_usage_perc", "num_requests_running", "num_requests_waiting")

Labels = tuple[tuple[str, str], ...]  # sorted (label, value) pairs: hashable, order-independent


@dataclass(frozen=True)
class Snapshot:
    """The registry at one instant. ``values[sample][labels]``; samples are named as Prometheus exposes
    them: ``<counter>_total``, ``<histogram>_bucket`` (with an ``le`` label), ``<gauge>``."""

    t: float  # unix seconds
    values: Mapping[str, Mapping[Labels, float]]
    # Aggregates computed from ``values`` (sum_by, buckets), kept because a snapshot lives in the ring for
    # its whole 10 minutes and is re-read by every poll: each poll then costs O(snapshots), not
    # O(snapshots x samples).
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def get(self, sample: str) -> Mapping[Labels, float]:
        return self.values.get(sample, {})


# ---------------------------------------------------------------- pure functions: reading


def read_registry(registry, t: float) -> Snapshot:
    """One Snapshot of the families the dashboard uses (``registry``: a prometheus_client CollectorRegistry)."""
    wanted = {f"{c}_total" for c in COUNTERS} | {f"{h}_bucket" for h in HISTOGRAMS} | set(GAUGES)
    values: dict[str, dict[Labels, float]] = {}
    for family in registry.collect():
        for s in family.samples:
            if s.name in wanted:
                values.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = float(s.value)
    return Snapshot(t, values)


def total(snap: Snapshot, sample: str, **where: str) -> float:
    """Sum of ``sample`` over the label sets matching ``where`` (PromQL ``sum(sample{where})``)."""
    by = tuple(sorted(where))
    if not by:
        return sum_by(snap, sample).get((), 0.0)
    return sum_by(snap, sample, *by).get(tuple(where[b] for b in by), 0.0)


def sum_by(snap: Snapshot, sample: str, *by: str) -> Mapping[tuple[str, ...], float]:
    """``sum by (by...) (sample)``: label-value tuple -> sum (memoized on the snapshot: do not mutate)."""
    memo = snap._memo.get(("sum_by", sample, by))
    if memo is not None:
        return memo
    out: dict[tuple[str, ...], float] = {}
    for labels, v in snap.get(sample).items():
        d = dict(labels)
        key = tuple(d.get(b, "") for b in by)
        out[key] = out.get(key, 0.0) + v
    snap._memo[("sum_by", sample, by)] = out
    return out


def counter_delta(new: float, old: float) -> float:
    """Increase of a counter between two readings; a reset (new < old) counts from zero, as PromQL does."""
    return new - old if new >= old else new


def buckets(snap: Snapshot, histogram: str) -> dict[float, float]:
    """``le`` -> cumulative count of ``<histogram>_bucket``, summed over all other labels."""
    memo = snap._memo.get(("buckets", histogram))
    if memo is None:  # "+Inf" parses to inf
        memo = snap._memo[("buckets", histogram)] = {
            float(le): v for (le,), v in sum_by(snap, f"{histogram}_bucket", "le").items()
        }
    return memo


def bucket_deltas(new: Snapshot, old: Snapshot, histogram: str) -> list[tuple[float, float]]:
    """(le, observations between the two snapshots at or below le), sorted by le."""
    b_new, b_old = buckets(new, histogram), buckets(old, histogram)
    return sorted((le, counter_delta(c, b_old.get(le, 0.0))) for le, c in b_new.items())


histogram_quantile = metrics.histogram_quantile  # Prometheus' interpolation, shared with the advisor


# ---------------------------------------------------------------- pure functions: series


def hit_rate_series(snaps: Sequence[Snapshot]) -> tuple[list[float], list[float | None]]:
    """Per interval between consecutive snapshots: (hits exact+semantic) / (all lookups), stamped at the
    interval's end; None where the interval saw no lookup."""
    ts, values = [], []
    for old, new in zip(snaps, snaps[1:]):
        lookups = counter_delta(total(new, "gateway_cache_lookups_total"), total(old, "gateway_cache_lookups_total"))
        hits = sum(
            counter_delta(
                total(new, "gateway_cache_lookups_total", result=k), total(old, "gateway_cache_lookups_total", result=k)
            )
            for k in HIT_KINDS
        )
        ts.append(new.t)
        values.append(hits / lookups if lookups > 0 else None)
    return ts, values


def window_start(snaps: Sequence[Snapshot], i: int, window: float) -> int:
    """Index of the oldest snapshot no more than ``window`` seconds before snapshot i (never i itself)."""
    j = i - 1
    while j > 0 and snaps[i].t - snaps[j - 1].t <= window:
        j -= 1
    return j


def quantile_series(
    snaps: Sequence[Snapshot], histogram: str, qs: Iterable[float], window: float
) -> tuple[list[float], dict[str, list[float | None]]]:
    """For each snapshot after the first: each q-quantile over the bucket-count deltas of the last
    ``window`` seconds (None where that window saw no observation). Keys are "p50", "p99", ..."""
    qs = tuple(qs)
    ts: list[float] = []
    series: dict[str, list[float | None]] = {f"p{round(q * 100):g}": [] for q in qs}
    for i in range(1, len(snaps)):
        deltas = bucket_deltas(snaps[i], snaps[window_start(snaps, i, window)], histogram)
        ts.append(snaps[i].t)
        for q, name in zip(qs, series):
            series[name].append(histogram_quantile(q, deltas))
    return ts, series


def totals_series(
    snaps: Sequence[Snapshot], sample: str, by: str, order: Sequence[str] = ()
) -> tuple[list[float], dict[str, list[float]]]:
    """Cumulative totals of ``sample`` per value of label ``by`` at every snapshot (``order`` first, always
    present; other values seen in any snapshot follow, sorted)."""
    seen = {key[0] for s in snaps for key in sum_by(s, sample, by)}
    names = [*order, *sorted(seen - set(order))]
    series: dict[str, list[float]] = {n: [] for n in names}
    for s in snaps:
        sums = sum_by(s, sample, by)
        for n in names:
            series[n].append(sums.get((n,), 0.0))
    return [s.t for s in snaps], series


def gauge_series(snaps: Sequence[Snapshot], gauge: str, by: str = "model") -> tuple[list[float], dict[str, list]]:
    """A gauge as read, per value of label ``by`` (None where a snapshot lacks that label value)."""
    names = sorted({key[0] for s in snaps for key in sum_by(s, gauge, by)})
    series: dict[str, list[float | None]] = {n: [] for n in names}
    for s in snaps:
        sums = sum_by(s, gauge, by)
        for n in names:
            series[n].append(sums.get((n,)))
    return [s.t for s in snaps], series


def bars(
    snap: Snapshot,
    sample: str,
    group: str | Sequence[str],
    stack: str,
    classify: Callable[[str], str] = str,
    order: Sequence[str] = (),
) -> dict:
    """Cumulative counts as bars: one bar per value of ``group`` (several labels are joined with " → "),
    split into series by ``classify(value of stack)``. Shape: {"labels": [...], "series": {name: [...]}}."""
    group = (group,) if isinstance(group, str) else tuple(group)
    cells: dict[tuple[str, str], float] = {}
    for key, v in sum_by(snap, sample, *group, stack).items():
        cell = (" → ".join(key[:-1]), classify(key[-1]))
        cells[cell] = cells.get(cell, 0.0) + v
    labels = sorted({g for g, _ in cells})
    stacks = [*order, *sorted({s for _, s in cells} - set(order))]
    return {"labels": labels, "series": {s: [cells.get((g, s), 0.0) for g in labels] for s in stacks}}


def status_class(status: str) -> str:
    return f"{status[0]}xx" if len(status) == 3 and status.isdigit() else "other"


def summary(snap: Snapshot) -> dict:
    lookups = total(snap, "gateway_cache_lookups_total")
    hits = sum(total(snap, "gateway_cache_lookups_total", result=k) for k in HIT_KINDS)
    return {
        "requests": total(snap, "gateway_requests_total"),
        "lookups": lookups,
        "hits": hits,
        "hit_rate": hits / lookups if lookups > 0 else None,
        "cost_usd": total(snap, "gateway_cost_usd_total"),
        "cost_saved_usd": total(snap, "gateway_cost_saved_usd_total"),
        "tokens_saved": total(snap, "gateway_cache_tokens_saved_total"),
    }


def _timeseries(ts: Sequence[float], series: Mapping[str, Sequence], **extra) -> dict:
    return {"t": [round(t, 3) for t in ts], "series": {k: [_num(v) for v in vs] for k, vs in series.items()}, **extra}


def _num(v: float | None) -> float | None:
    return None if v is None or math.isnan(v) else float(f"{v:.6g}")


def build_data(snaps: Sequence[Snapshot], *, window: float, interval: float) -> dict:
    """Everything ``/dashboard/data`` answers, from snapshots oldest first (the last one is "now")."""
    now = snaps[-1]
    ts, hit = hit_rate_series(snaps)
    spent_t, spent = totals_series(snaps, "gateway_cost_usd_total", "tier")
    _, saved = totals_series(snaps, "gateway_cost_saved_usd_total", "tier")
    # summed over tiers; both lines appear once either counter has a sample (none before any request)
    cost = (
        {
            "spent": [sum(v) for v in zip(*spent.values())] or [0.0] * len(snaps),
            "saved": [sum(v) for v in zip(*saved.values())] or [0.0] * len(snaps),
        }
        if spent or saved
        else {}
    )

    def latency(histogram: str) -> dict:
        present = any(s.get(f"{histogram}_bucket") for s in snaps)
        t, q = quantile_series(snaps, histogram, (0.5, 0.99), window) if present else ([], {})
        return _timeseries(t, q, available=present, unit="seconds")

    kv_t, kv = gauge_series(snaps, "kv_cache_usage_perc")
    _, running = gauge_series(snaps, "num_requests_running")
    _, waiting = gauge_series(snaps, "num_requests_waiting")
    several = len(running | waiting) > 1
    engine = {
        **{(f"running · {m}" if several else "running"): v for m, v in running.items()},
        **{(f"waiting · {m}" if several else "waiting"): v for m, v in waiting.items()},
    }
    by_kind_t, by_kind = totals_series(snaps, "gateway_cache_lookups_total", "result", LOOKUP_KINDS)
    return {
        "now": round(now.t, 3),
        "interval_s": interval,
        "window_s": window,
        "samples": len(snaps),
        "summary": {k: _num(v) for k, v in summary(now).items()},
        "hit_rate": _timeseries(ts, {"hit rate": hit}),
        "lookups_by_kind": _timeseries(by_kind_t, by_kind),
        "cost": _timeseries(spent_t, cost, unit="USD"),
        "ttft": latency("time_to_first_token_seconds"),
        "tpot": latency("inter_token_latency_seconds"),
        "e2e": latency("e2e_request_latency_seconds"),
        "kv_usage": _timeseries(kv_t, kv, unit="fraction"),
        "engine_requests": _timeseries(kv_t, engine),
        "requests_by_tier": bars(now, "gateway_requests_total", "model", "status", status_class, ("2xx", "4xx", "5xx")),
        "route_decisions": bars(now, "gateway_route_decisions_total", "tier", "how", order=("auto", "explicit")),
        "fallbacks": bars(now, "gateway_fallbacks_total", ("tier", "to"), "cause"),
    }


# ---------------------------------------------------------------- the advisor's window


def parse_window(text: str) -> float:
    """``90s``, ``15m``, ``2h`` or a bare number of seconds -> seconds (> 0)."""
    units = {"s": 1, "m": 60, "h": 3600}
    t = text.strip().lower()
    scale = units.get(t[-1:], None)
    number = t[:-1] if scale else t
    try:
        seconds = float(number) * (scale or 1)
    except ValueError:
        raise ValueError(f"window must look like 90s, 15m or 2h, got {text!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"window must be > 0, got {text!r}")
    return seconds


# ---------------------------------------------------------------- the app side


class Dashboard:
    """The ring of snapshots and the two handlers. A ``deque(maxlen=keep)`` is the ring: appending drops
    the oldest snapshot in O(1), and the series are rebuilt from it on each request (a few hundred
    snapshots of a few hundred samples: milliseconds)."""

    def __init__(
        self,
        registry_of: Callable[[], object],
        *,
        interval: float = 2.0,
        keep: int = 300,
        window: float = 30.0,
        clock: Callable[[], float] = time.time,
    ):
        self.registry_of = registry_of
        self.interval, self.window, self.clock = interval, window, clock
        self.ring: deque[Snapshot] = deque(maxlen=keep)
        self._page: bytes | None = None
        self.history = DiagnosisHistory(registry_of, clock=clock)
        self.prices_of: Callable[[], dict] = dict  # tier -> output price per Mtok (setup_dashboard sets it)

    def sample(self) -> Snapshot | None:
        """A snapshot now, or None when the registry cannot be read (a backend's ``stats()`` failing
        must neither stop the sampler nor the gateway's start-up)."""
        try:
            return read_registry(self.registry_of(), self.clock())
        except Exception:
            log.warning("dashboard: reading the metrics registry failed", exc_info=True)
            return None

    def _record(self) -> None:
        snap = self.sample()
        if snap is not None:
            self.ring.append(snap)
        self.history.tick()

    async def sampler(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self._record()

    async def ctx(self, app: web.Application):
        self._record()
        task = asyncio.create_task(self.sampler())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def page(self, request: web.Request) -> web.Response:
        if self._page is None:
            self._page = await asyncio.to_thread(PAGE.read_bytes)
        return web.Response(body=self._page, content_type="text/html", charset="utf-8")

    async def data(self, request: web.Request) -> web.Response:
        now = self.sample()  # fresh: a page opened right after traffic shows it without waiting a tick
        snaps = [*self.ring, *([now] if now is not None else [])]
        if not snaps:
            raise web.HTTPServiceUnavailable(text="the metrics registry cannot be read yet")
        body = build_data(snaps, window=self.window, interval=self.interval)
        return web.json_response(body, headers={"Cache-Control": "no-store"})

    async def diagnosis(self, request: web.Request) -> web.Response:
        """The advisor's findings over a window (``?window=15m&ttft_slo=1.0&tpot_slo=0.1``):
        ``python -m gateway.advise --window`` and the page's Diagnosis panel read this."""
        q = request.query
        try:
            window = parse_window(q.get("window", "15m"))
        except ValueError as exc:
            raise invalid(str(exc), param="window") from None
        slo = {}
        for name, default in (("ttft_slo", symptoms.TTFT_SLO), ("tpot_slo", symptoms.TPOT_SLO), ("peak_gbs", None)):
            if default is None and name not in q:
                continue
            try:
                slo[name] = float(q.get(name, default))
            except ValueError:
                raise invalid(f"{name} must be a number, got {q[name]!r}", param=name) from None
            if not math.isfinite(slo[name]) or slo[name] <= 0:
                raise invalid(f"{name} must be > 0, got {q[name]!r}", param=name)
        try:
            delta, covered = self.history.window(window)
        except Exception:
            log.warning("diagnosis: reading the metrics registry failed", exc_info=True)
            raise web.HTTPServiceUnavailable(text="the metrics registry cannot be read") from None
        # A gauge read now says little about a window: KV usage is its peak over the window's samples
        # (every ``interval`` s), which is what "the cache filled up" means.
        since = self.clock() - window
        kv = delta["values"].get("kv_cache_usage_perc", {})
        for snap in self.ring:
            if snap.t >= since:
                for labels, v in snap.get("kv_cache_usage_perc").items():
                    kv[labels] = max(kv.get(labels, 0.0), v)
        body = symptoms.report(delta, window_s=covered, prices=self.prices_of(), **slo)
        body["requested_window_s"] = window
        return web.json_response(body, headers={"Cache-Control": "no-store"})


def setup_dashboard(
    app: web.Application,
    *,
    interval: float = 2.0,
    keep: int = 300,
    window: float = 30.0,
    prices_of: Callable[[], dict] = dict,
) -> None:
    """Register ``GET /dashboard``, ``/dashboard/data`` and ``/dashboard/diagnosis`` and the sampler's
    cleanup context. ``prices_of()``: tier -> output price per million tokens (the advisor's cost branch)."""
    dash = Dashboard(lambda: app[keys.METRICS].registry, interval=interval, keep=keep, window=window)
    dash.prices_of = prices_of
    app.cleanup_ctx.append(dash.ctx)
    app.router.add_get("/dashboard", dash.page)
    app.router.add_get("/dashboard/data", dash.data)
    app.router.add_get("/dashboard/diagnosis", dash.diagnosis)
    app.router.add_get("/dashboard/tuning", tuning)
    app.router.add_get("/dashboard/verification", verification)
    app.router.add_post("/dashboard/evict", evict)


def _verifier(request: web.Request):
    cache = request.app[keys.STATE].cache
    return cache, (cache.verifier if cache is not None else None)


async def tuning(request: web.Request) -> web.Response:
    """The last ``python -m gateway.advise --tune`` result (``tune.last``, read from
    ``tune.last_tuning_path()``), or ``{"tuning": null}``: the Diagnosis panel shows it under the findings."""
    body = await asyncio.to_thread(tune.read_last)
    return web.json_response({"tuning": body}, headers={"Cache-Control": "no-store"})


async def verification(request: web.Request) -> web.Response:
    """Live cache verification (``gateway/cache/verify.py``): per kind and tier the estimated false-hit
    rate with its 95% interval beside the hit counts, tightened scopes, the latest disagreements
    (tenants hashed), and with ``cache.learn`` the learner's labels and threshold moves
    (``gateway/cache/learn.py``). The page's Verification panel polls it."""
    cache, verifier = _verifier(request)
    if verifier is None:
        return web.json_response({"enabled": False}, headers={"Cache-Control": "no-store"})
    stats = cache.stats()
    body = {
        "enabled": True,
        **verifier.stats(),
        "lookups": stats["lookups"],
        "thresholds": stats["thresholds"],
        "learning": stats.get("learning"),  # None: cache.learn is off
    }
    return web.json_response(body, headers={"Cache-Control": "no-store"})


async def evict(request: web.Request) -> web.Response:
    """``POST /dashboard/evict`` ``{"entry_id": "..."}`` (admin key): remove a cached answer."""
    if request.app[keys.CONFIG].admin is None:  # an open dashboard may show, but never change, the cache
        raise APIError(
            403,
            "evicting needs an admin key: set admin.key in the gateway config",
            type="permission_error",
            code="admin_key_required",
        )
    cache, _ = _verifier(request)
    if cache is None:
        raise invalid("this gateway has no cache", param="entry_id")
    try:
        body = await request.json()
    except Exception:
        raise invalid('the body must be JSON: {"entry_id": "..."}', param="entry_id") from None
    entry_id = body.get("entry_id") if isinstance(body, dict) else None
    if not isinstance(entry_id, str) or not entry_id.strip() or len(entry_id) > 200:
        raise invalid("entry_id must be a non-empty string", param="entry_id")
    evicted = await cache.evict(entry_id)
    if cache.verifier is not None:
        for d in cache.verifier.disagreements:
            if d["entry_id"] == entry_id:
                d["evicted"] = d["evicted"] or evicted
    return web.json_response({"entry_id": entry_id, "evicted": evicted}, headers={"Cache-Control": "no-store"})
