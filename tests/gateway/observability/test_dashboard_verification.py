"""The dashboard's Cache verification panel in a real headless Chromium (Debian's, driven by Playwright),
over a real gateway whose store plants wrong answers for a share of its entries
(tests/support/planting_store.py), every hit verified by the model in the background.

What must hold: the panel shows what ``GET /dashboard/verification`` says (the estimate row, the
disagreements, the tightened scopes), without leaving loopback and without a page error; a disagreement
whose entry is still cached has an Evict button that POSTs ``/dashboard/evict`` with the browser's own
admin credentials and then reads "evicted" (and the JSON and the cache agree); one already evicted has
its button disabled; a failed POST shows the error's message and leaves the button usable. A full-page
screenshot goes to out/dashboard_verification.png (ignored by git, as test_dashboard.py's: a test run leaves the
tree clean; docs/results/dashboard_verification.png is a copy of one, committed by hand).

Chromium comes from ``scripts/ensure_chromium.sh``; without it the test fails, it does not skip.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.support.cached_gateway import chat
from tests.support.planting_store import WRONG, stored_misses, verifying_gateway

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SCREENSHOT = Path(__file__).resolve().parents[3] / "out" / "dashboard_verification.png"
ADMIN_KEY = "adm-key"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
N = 30  # hits, one per question: about 10 planted; at least 3 but for 3.5e-4 of runs
SHOWN = 12  # the page shows the latest 12 disagreements
FAILED_POST = "the cache store is unavailable: try again"  # what the one intercepted POST answers


def get_json(server, path):
    req = urllib.request.Request(server.url + path, headers=ADMIN)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def fmt_rate(v: float) -> str:
    """The page's fmtRate: three significant digits of a percentage, trailing zeros dropped."""
    return f"{float(f'{v * 100:.3g}'):g}%"


@pytest.fixture(scope="module")
def gateway(tiny_path, tmp_path_factory):
    server, cache, store = verifying_gateway(
        tiny_path,
        tmp_path_factory.mktemp("verify-dash"),
        planted=0.35,
        admin_key=ADMIN_KEY,
        verify_max_pending=64,
        verify_min_window=3,  # a scope with wrong hits in its first 3 verified is tightened: the panel shows it
        learn=True,  # every question after the first has a close sibling: a near-miss, labelled in the background
    )
    yield server, cache, store
    server.stop()


def send_traffic(server) -> tuple[dict[str, str], int]:
    """Misses that store the model's answer (a stop string makes it finish), then one exact hit each.
    Returns the stop strings and how many hits served a planted answer (the store's own count also holds
    the learner's reads of near-miss candidates)."""
    stops = stored_misses(server, N)
    planted = 0
    for q, stop in stops.items():
        h, body = chat(server, [{"role": "user", "content": q}], stop=[stop])
        assert h["x-cache"] == "hit" and h["x-cache-lookup"] == "exact", h
        planted += json.loads(body)["choices"][0]["message"]["content"] == WRONG
    return stops, planted


def wait_settled(server, failing, timeout=120.0) -> dict:
    """Every hit verified, the queue empty, and each disagreement's automatic eviction tried."""
    deadline = time.monotonic() + timeout
    while True:
        v = get_json(server, "/dashboard/verification")
        done = sum(e["verified"] for e in v["estimates"])
        dis = v["disagreements"]
        learning = v["learning"] or {}
        if done >= N and v["pending"] == 0 and learning.get("pending") == 0 and failing["calls"] >= len(dis):
            if sum(d["evicted"] for d in dis) == len(dis) // 2:
                return v
        assert time.monotonic() < deadline, f"not settled in {timeout} s: {done} of {N} verified: {v}"
        time.sleep(0.2)


def test_page_inserts_server_text_as_text():
    from gateway.observability.dashboard import PAGE

    html = PAGE.read_text()
    # questions, answers, tenants, tiers: textContent and text nodes only, never parsed as HTML
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "DOMParser",
        "createContextualFragment",
    ):
        assert sink not in html, sink
    assert 'id="verification"' in html and 'data-estimates="-1"' in html


@pytest.mark.browser
def test_verification_panel_in_a_real_browser(gateway):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[dev]'")
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"{CHROMIUM} not found: run `bash scripts/ensure_chromium.sh` (installs Debian's chromium)")
    server, cache, store = gateway

    # Every other eviction of the verifier's own fails, as a store outage makes cache.evict fail (False):
    # those wrong entries stay cached until the operator evicts them from the page.
    real_evict, failing = cache.verifier.evict, {"calls": 0}

    async def flaky_evict(entry_id):
        failing["calls"] += 1
        return False if failing["calls"] % 2 else await real_evict(entry_id)

    cache.verifier.evict = flaky_evict
    stops, planted = send_traffic(server)
    v = wait_settled(server, failing)
    (est,) = v["estimates"]
    assert (est["kind"], est["tier"], est["verified"]) == ("single", "tiny", N)
    dis = v["disagreements"]
    assert len(dis) == est["wrong"] == planted >= 3, (est, planted, store.served)
    assert all(d["served"] == WRONG[:300] for d in dis)
    shown = dis[:SHOWN]  # newest first
    cached = [d for d in shown if not d["evicted"]]  # every other one: those whose eviction "failed"
    assert len(cached) >= 2 and len(cached) < len(shown)

    requested, blocked, errors, posts = [], [], [], []

    def only_loopback(route):
        url = route.request.url
        if urlparse(url).hostname == "127.0.0.1":
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    def evict_route(route):  # the first POST fails the way the gateway's errors look; the rest go through
        posts.append(json.loads(route.request.post_data))
        if len(posts) == 1:
            body = {
                "error": {"message": FAILED_POST, "type": "server_error", "param": None, "code": "store_unavailable"}
            }
            route.fulfill(status=503, content_type="application/json", body=json.dumps(body))
        else:
            route.fallback()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(
                viewport={"width": 1440, "height": 900}, http_credentials={"username": "admin", "password": ADMIN_KEY}
            )
            context.route("**/*", only_loopback)
            page = context.new_page()
            page.route("**/dashboard/evict", evict_route)
            page.on("request", lambda req: requested.append(req.url))
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            resp = page.goto(server.url + "/dashboard")
            assert resp.status == 200
            page.wait_for_function(
                "n => document.getElementById('verification').dataset.estimates === '1' && "
                "document.getElementById('disagreements') && "
                "+document.getElementById('disagreements').dataset.count === n",
                arg=len(dis),
                timeout=20_000,
            )
            assert page.get_attribute("#verification", "data-enabled") == "true"

            # the estimate row: the JSON's counts, rate and interval, with its bar
            row = page.locator("#estimates tr.estimate")
            assert row.count() == 1
            assert (row.get_attribute("data-kind"), row.get_attribute("data-tier")) == ("single", "tiny")
            assert row.locator("td.verified").inner_text() == str(est["verified"])
            assert row.locator("td.wrong").inner_text() == str(est["wrong"])
            assert row.locator("td.rate").inner_text() == fmt_rate(est["rate"])
            lo, hi = est["ci95"]
            ci = row.locator("td.ci").inner_text()
            assert f"{fmt_rate(lo)} – {fmt_rate(hi)}" in ci and f"bound {fmt_rate(est['bound'])}" in ci, ci
            assert row.locator("svg.ci rect").count() == 2 and row.locator("svg.ci circle").count() == 1
            assert row.locator("td.verdict").inner_text() == (
                "over the bound" if lo > est["bound"] else "not yet shown within"
            )
            # the hit counts beside it, the thresholds in force, the tightened scopes
            lookups = v["lookups"]
            assert page.inner_text("#verification-hits") == str(lookups["exact"] + lookups["semantic"])
            assert page.inner_text("#thresholds tr[data-kind=single] td.source") == v["thresholds"]["source"]["single"]
            assert page.get_attribute("#tightened", "data-count") == str(len(v["tightened"]))
            # the learner's labels: near-misses (each stored question's siblings) and the verified hits
            lc = v["learning"]["counts"]
            assert lc["near_miss"] >= N // 2 and lc["verified"] == N, lc
            assert page.get_attribute("#learning", "data-enabled") == "true"
            assert page.get_attribute("#learning", "data-labels") == str(lc["near_miss"] + lc["verified"])
            single = page.locator("#learning tr[data-kind=single]")
            assert single.get_attribute("data-labels") == str(v["learning"]["kinds"]["single"]["labels"])
            assert page.get_attribute("#learning", "data-moves") == str(len(v["learning"]["moves"]))
            assert page.locator("#tightened .scope li").count() == sum(len(s["moves"]) for s in v["tightened"])

            # the disagreements, newest first; text inserted as text
            items = page.locator("#disagreements .disagreement")
            assert items.count() == len(shown) == int(page.get_attribute("#disagreements", "data-shown"))
            for i, d in enumerate(shown):
                item = items.nth(i)
                assert item.get_attribute("data-entry-id") == d["entry_id"]
                assert item.locator(".question").inner_text() == d["question"].strip()
                assert d["tenant"] in item.locator(".facts").inner_text()
                button = item.locator("button.evict")
                assert button.inner_text() == ("evicted" if d["evicted"] else "Evict")
                assert button.is_disabled() == d["evicted"]
            assert page.locator("#disagreements .served .text").first.inner_text() == WRONG

            target = cached[0]
            item = page.locator(f"#disagreements .disagreement[data-entry-id='{target['entry_id']}']")
            # a failed POST: its message, and the button usable again
            item.locator("button.evict").click()
            page.wait_for_function(
                "id => { const e = document.querySelector(`.disagreement[data-entry-id='${id}'] .evict-error`);"
                " return e && e.textContent.length > 0; }",
                arg=target["entry_id"],
                timeout=10_000,
            )
            assert FAILED_POST in item.locator(".evict-error").inner_text()
            assert item.locator("button.evict").inner_text() == "Evict" and item.locator("button.evict").is_enabled()
            # the real POST, with the browser's Basic credentials
            item.locator("button.evict").click()
            page.wait_for_function(
                "id => { const b = document.querySelector(`.disagreement[data-entry-id='${id}'] button.evict`);"
                " return b && b.textContent === 'evicted' && b.disabled; }",
                arg=target["entry_id"],
                timeout=10_000,
            )
            assert item.get_attribute("data-evicted") == "true" and item.locator(".evict-error").inner_text() == ""
            assert page.locator("#disagreements button.evict:enabled").count() == len(cached) - 1
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            browser.close()

    assert not errors, errors
    assert posts == [{"entry_id": target["entry_id"]}] * 2
    after = {d["entry_id"]: d for d in get_json(server, "/dashboard/verification")["disagreements"]}
    assert after[target["entry_id"]]["evicted"]
    assert [e for e in (c["entry_id"] for c in cached[1:]) if after[e]["evicted"]] == []  # only the one clicked
    # the cache agrees: the evicted question misses now
    h, _ = chat(server, [{"role": "user", "content": target["question"]}], stop=[stops[target["question"]]])
    assert h["x-cache"] == "miss"
    assert not blocked, f"the page tried to leave loopback: {blocked}"
    outside = [u for u in requested if not u.startswith("data:") and urlparse(u).hostname != "127.0.0.1"]
    assert requested and not outside, outside
