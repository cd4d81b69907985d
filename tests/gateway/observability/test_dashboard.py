"""The monitoring dashboard: pure series arithmetic by hand, then a real gateway, real traffic and a real
headless Chromium (Debian's, driven by Playwright) that must draw the charts without leaving loopback.

Chromium comes from ``scripts/ensure_chromium.sh`` (``make test`` runs it); without it the browser test
fails, it does not skip.
"""

from __future__ import annotations

import json
import math
import os
import re
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram

from gateway.observability.dashboard import (
    Snapshot,
    bucket_deltas,
    build_data,
    histogram_quantile,
    hit_rate_series,
    read_registry,
    window_start,
)
from tests.support.cached_gateway import chat, file_cache, start, stop_for

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
OUT = Path(__file__).resolve().parents[3] / "out"
INF = math.inf


def lookups(t: float, **by_result: float) -> Snapshot:
    return Snapshot(
        t, {"gateway_cache_lookups_total": {(("model", "tiny"), ("result", r)): v for r, v in by_result.items()}}
    )


def ttft_buckets(t: float, counts: dict[float, float]) -> Snapshot:
    return Snapshot(
        t,
        {
            "time_to_first_token_seconds_bucket": {
                (("cache", "miss"), ("le", "+Inf" if le == INF else str(le)), ("model", "tiny")): c
                for le, c in counts.items()
            }
        },
    )


# ---------------------------------------------------------------- pure functions, by hand


def test_quantile_from_bucket_deltas():
    old = ttft_buckets(0.0, {0.1: 1, 0.5: 3, 1.0: 3, INF: 3})
    new = ttft_buckets(30.0, {0.1: 3, 0.5: 9, 1.0: 11, INF: 13})
    # deltas (new - old), cumulative: le 0.1 -> 2, le 0.5 -> 6, le 1.0 -> 8, +Inf -> 10 observations
    deltas = bucket_deltas(new, old, "time_to_first_token_seconds")
    assert deltas == [(0.1, 2), (0.5, 6), (1.0, 8), (INF, 10)]
    # p50: rank 0.5*10 = 5 falls in (0.1, 0.5], which holds 6-2 = 4 observations, 5-2 = 3 of them
    #      up to the rank: 0.1 + (0.5-0.1) * 3/4 = 0.4
    assert histogram_quantile(0.5, deltas) == pytest.approx(0.4)
    # p20: rank 2 is reached in the first bucket, which starts at 0: 0 + 0.1 * 2/2 = 0.1
    assert histogram_quantile(0.2, deltas) == pytest.approx(0.1)
    # p70: rank 7 in (0.5, 1.0] holding 8-6 = 2: 0.5 + 0.5 * (7-6)/2 = 0.75
    assert histogram_quantile(0.7, deltas) == pytest.approx(0.75)
    # p99: rank 9.9 > 8 lands in the +Inf bucket: the largest finite bound, 1.0 (as Prometheus answers)
    assert histogram_quantile(0.99, deltas) == 1.0
    # no observation in the window: no value (the chart shows a gap, not a zero)
    assert histogram_quantile(0.5, bucket_deltas(old, old, "time_to_first_token_seconds")) is None
    assert histogram_quantile(0.5, []) is None


def test_hit_rate_from_two_snapshots():
    a = lookups(100.0, exact=2, semantic=1, miss=5, bypass=2)
    b = lookups(102.0, exact=5, semantic=2, miss=7, bypass=2, guard_rejected=1)
    # in the interval: hits (5-2) + (2-1) = 4; lookups (5+2+7+2+1) - (2+1+5+2) = 17 - 10 = 7 -> 4/7
    ts, rate = hit_rate_series([a, b])
    assert ts == [102.0] and rate == [pytest.approx(4 / 7)]
    # an idle interval is a gap, not a zero; a reset counter counts from zero (like PromQL's rate)
    c = lookups(104.0, exact=5, semantic=2, miss=7, bypass=2, guard_rejected=1)
    d = lookups(106.0, exact=1, miss=1)
    assert hit_rate_series([b, c, d])[1] == [None, pytest.approx(1 / 2)]


def test_window_start_keeps_window_seconds():
    snaps = [Snapshot(float(t), {}) for t in (0, 2, 4, 6, 8, 40)]
    assert window_start(snaps, 4, 4.0) == 2  # 8 - 4 <= 4, 8 - 2 > 4
    assert window_start(snaps, 1, 30.0) == 0
    assert window_start(snaps, 5, 30.0) == 4  # a gap longer than the window: the previous snapshot


def test_build_data_from_a_registry_without_tpot():
    r = CollectorRegistry()
    looks = Counter("gateway_cache_lookups", "", ["result", "model"], registry=r)
    ttft = Histogram("time_to_first_token_seconds", "", ["model", "cache"], buckets=(0.1, 1.0), registry=r)
    reqs = Counter("gateway_requests", "", ["model", "status"], registry=r)
    first = read_registry(r, 0.0)
    looks.labels("miss", "small").inc()
    looks.labels("exact", "small").inc(3)
    ttft.labels("small", "miss").observe(0.5)
    reqs.labels("small", "200").inc(4)
    reqs.labels("small", "429").inc()
    data = build_data([first, read_registry(r, 2.0)], window=30.0, interval=2.0)
    assert data["summary"]["hit_rate"] == 0.75 and data["summary"]["requests"] == 5
    assert data["hit_rate"] == {"t": [2.0], "series": {"hit rate": [0.75]}}
    assert data["lookups_by_kind"]["series"]["exact"] == [0, 3]
    assert data["lookups_by_kind"]["series"]["semantic"] == [0, 0]  # every kind is present, even unseen
    # one observation in (0.1, 1.0]: p50 = 0.1 + 0.9 * 0.5/1 = 0.55
    assert data["ttft"]["series"]["p50"] == [pytest.approx(0.55)] and data["ttft"]["available"]
    assert data["tpot"] == {"t": [], "series": {}, "available": False, "unit": "seconds"}
    assert data["requests_by_tier"] == {"labels": ["small"], "series": {"2xx": [4], "4xx": [1], "5xx": [0]}}
    assert data["kv_usage"]["series"] == {} and data["fallbacks"] == {"labels": [], "series": {}}
    assert data["cost"]["series"] == {}  # no priced request yet: "no data", not a flat $0 line
    json.dumps(data, allow_nan=False)  # strict JSON: gaps are null, never NaN


def test_page_names_no_outside_resource():
    from gateway.observability.dashboard import PAGE

    html = PAGE.read_text()
    # the only absolute URL is the SVG namespace, an identifier that is never fetched
    assert set(re.findall(r"(?:https?:)?//[\w.-]+\.[a-z]{2,}[^\s\"'<>)]*", html)) == {"http://www.w3.org/2000/svg"}
    assert "@import" not in html and '<link rel="stylesheet"' not in html


# ---------------------------------------------------------------- end to end, in a real browser


@pytest.fixture(scope="module")
def server(tiny_path, tmp_path_factory):
    # no warm-up: the few step programs this traffic needs compile on first use (about half the time)
    srv = start(tiny_path, file_cache(tmp_path_factory), warmup=False)
    yield srv
    srv.stop()


def send_traffic(server) -> None:
    """Misses, then exact repeats that hit (answers made cacheable by a stop string), one streamed."""
    for question in ("the cat sat on the mat", "tell me about rivers"):
        q = [{"role": "user", "content": question}]
        stop = stop_for(server, question)  # a miss (no-store)
        h, _ = chat(server, q, stop=[stop])
        assert h["x-cache"] == "miss"
        for stream in (False, True):
            h, _ = chat(server, q, stop=[stop], stream=stream)
            assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "exact"


@pytest.mark.browser
def test_dashboard_in_a_real_browser(server):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[dev]'")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: run `bash scripts/ensure_chromium.sh` (installs Debian's chromium)")

    send_traffic(server)
    with urllib.request.urlopen(server.url + "/dashboard/data", timeout=10) as r:
        data = json.load(r)
    assert data["summary"]["hits"] == 4 and data["summary"]["hit_rate"] > 0
    assert set(data) >= {
        "summary",
        "hit_rate",
        "lookups_by_kind",
        "cost",
        "ttft",
        "tpot",
        "e2e",
        "kv_usage",
        "engine_requests",
        "requests_by_tier",
        "route_decisions",
        "fallbacks",
    }

    requested, blocked, errors = [], [], []

    def only_loopback(route):
        url = route.request.url
        if urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    charts = ("chart-hit-rate", "chart-hits-by-kind", "chart-ttft", "chart-requests-by-tier")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            context.route("**/*", only_loopback)
            page = context.new_page()
            page.on("request", lambda req: requested.append(req.url))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            resp = page.goto(server.url + "/dashboard")
            assert resp.status == 200 and resp.headers["content-type"].startswith("text/html")
            page.wait_for_function(
                "ids => document.body.dataset.rendered && ids.every(id => "
                "+document.getElementById(id).getAttribute('data-points') > 0)",
                arg=list(charts),
                timeout=20_000,
            )
            points = {c: int(page.get_attribute(f"#{c}", "data-points")) for c in charts}
            hit_rate = page.inner_text("#summary-hit-rate")
            # The Diagnosis panel: a few requests, none slow: nothing to judge yet, and it says so.
            page.wait_for_function("document.getElementById('findings').dataset.findings !== '-1'", timeout=20_000)
            findings = page.get_attribute("#findings", "data-findings")
            diagnosis = page.inner_text("#diagnosis")
            OUT.mkdir(exist_ok=True)
            page.screenshot(path=str(OUT / "dashboard.png"), full_page=True)
        finally:
            browser.close()

    assert not errors, errors
    assert findings == "0" and "fewer than 20 requests" in diagnosis and "TTFT p99" in diagnosis, diagnosis
    assert all(n > 0 for n in points.values()), points
    assert points["chart-hits-by-kind"] >= 2  # misses and exact hits at least
    m = re.fullmatch(r"([\d.]+)%", hit_rate)
    assert m and float(m.group(1)) > 0, hit_rate
    assert not blocked, f"the page tried to leave loopback: {blocked}"
    outside = [u for u in requested if not u.startswith("data:") and urlparse(u).hostname != "127.0.0.1"]
    assert requested and not outside, outside


# ---------------------------------------------------------------- the Diagnosis panel's last tuning result

TUNED = {  # tune.last's shape: a recommendation over the current configuration, one candidate not replayed
    "finished_at": 1_700_000_000.0,
    "recording": "shapes.jsonl",
    "baseline": 0.5,
    "alpha": 0.05,
    "verdict": "recommended: max_num_seqs=8 (goodput 0.500 -> 0.800 over 6 + 6 interleaved replays; one-sided"
    " permutation p = 0.001 <= 0.025; effect +0.300, Cliff's delta +1.00)",
    "recommended": "max_num_seqs=8",
    "rows": [
        {"candidate": "max_num_seqs=8", "source": "finding", "recommended": True, "goodput": 0.8}
        | {"ttft_p50_s": 0.1, "ttft_p99_s": 0.4, "tpot_p50_s": 0.02, "tpot_p99_s": 0.05}
        | {"tokens_per_s": 42.0, "cost_usd": 0.001, "vs_current": 0.3, "runs": 6, "p_value": 0.001082},
        {"candidate": "current", "source": "current", "recommended": False, "goodput": 0.5}
        | {"ttft_p50_s": 0.9, "ttft_p99_s": 2.5, "tpot_p50_s": 0.02, "tpot_p99_s": None}
        | {"tokens_per_s": 30.0, "cost_usd": 0.001, "vs_current": 0.0},
    ],
    "not_replayed": ["max_num_seqs=16"],
    "elapsed_s": 61.0,
    "fragment": None,
}


def test_the_tuning_endpoint_answers_the_last_result_or_null(tmp_path, monkeypatch):
    import asyncio

    from aiohttp import web
    from aiohttp.test_utils import TestClient, TestServer

    from gateway.advise import tune
    from gateway.observability.dashboard import tuning

    monkeypatch.setenv("JAXSERVE_STATE_DIR", str(tmp_path))

    async def get() -> tuple[int, dict]:
        app = web.Application()
        app.router.add_get("/dashboard/tuning", tuning)
        async with TestClient(TestServer(app)) as client:
            r = await client.get("/dashboard/tuning")
            return r.status, await r.json()

    assert asyncio.run(get()) == (200, {"tuning": None})
    tune.save_last(TUNED)
    assert asyncio.run(get()) == (200, {"tuning": TUNED})


@pytest.mark.browser
def test_the_diagnosis_panel_shows_the_last_tuning_result(server, tmp_path, monkeypatch):
    """The page before any tuning says there is none; after ``--tune`` wrote its result, the panel shows
    the verdict and the ranked rows, the recommended one marked, and the candidate the budget cut."""
    from playwright.sync_api import sync_playwright

    from gateway.advise import tune

    monkeypatch.setenv("JAXSERVE_STATE_DIR", str(tmp_path))  # the in-process gateway reads it per request
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto(server.url + "/dashboard")
            page.wait_for_function("document.getElementById('tuning').dataset.rows === '0'", timeout=20_000)
            empty = page.inner_text("#tuning")
            tune.save_last(TUNED)
            page.reload()
            page.wait_for_function("document.getElementById('tuning').dataset.rows === '2'", timeout=20_000)
            text = page.inner_text("#tuning")
            marked = page.inner_text("#tuning tr.recommended")
        finally:
            browser.close()
    assert "no tuning result yet" in empty, empty
    assert TUNED["verdict"] in text and "on shapes.jsonl (61 s of replays)" in text, text
    assert "★ max_num_seqs=8" in marked and "0.80" in marked and "+0.30" in marked and "400 ms" in marked, marked
    assert "\t6\t0.001\t" in marked, marked  # its 6 confirmation replays and the test's p
    assert "max_num_seqs=16" in text and "not replayed: the search budget ran out" in text
