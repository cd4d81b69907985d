"""Tiers: config validation, the auto router, budgets and rate limits, cost accounting and fallbacks.

Unit tests for the pure parts (config, router, ledger with a fake clock), then the gateway over real
HTTP with two tiers of a tiny real engine. Failure injection here wraps a real backend; the
end-to-end test with a runtime server process killed under load is in test_tiers_e2e.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import sys

import openai  # a dev dependency: missing, fail rather than skip
import pytest

from gateway import keys
from gateway.accounting.usage import Caller, UsageLedger
from gateway.api.schemas import parse_chat_request
from gateway.backends import BackendError
from gateway.config.gateway import ConfigError, Limits, load_config
from gateway.config.tiers import KeyPolicy, KeysConfig, parse_tiers
from gateway.config.typed import hash_secret
from gateway.pipeline.routing import Router
from runtime.serving.errors import APIError
from runtime.serving.local import LocalEngine
from tests.support.engines import tiny_engine
from tests.support.fakes import FakeClock
from tests.support.gateway_server import chat_body, http
from tests.support.tiers import PRICES, two_tiers
from tests.support.tiny_gateway import GATEWAY_ENGINE, tiny_gateway

TIERS = two_tiers(
    big={"timeout_s": 20},
    router={"long_prompt_chars": 400, "deep_conversation_turns": 4},
    keys={
        "default": {"requests_per_minute": 1000},
        "entries": [
            {"name": "broke", "key_env": "K_BROKE", "budget_usd": 0.0001},
            {"name": "slow", "key_env": "K_SLOW", "requests_per_minute": 3},
            {"name": "cheap", "key_env": "K_CHEAP", "tiers": ["lil"]},
        ],
    },
)
ENV = {"K_BROKE": "sk-broke", "K_SLOW": "sk-slow", "K_CHEAP": "sk-cheap"}


def spec(data=None, env=ENV):
    return parse_tiers(data or TIERS, ["tiny"], env=env)


def chat(model="auto", content="hello there", **kw):
    return parse_chat_request(chat_body(model, content, **kw), max_messages=64)


# ---------------------------------------------------------------- config


def _mutate(path, value):
    data = json.loads(json.dumps(TIERS))
    node = data
    for p in path[:-1]:
        node = node[p]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


CONFIG_ERRORS = [
    (("tiers", 0, "fallback"), ["medium"], "tiers[0].fallback: unknown tier 'medium'"),
    (("tiers", 1, "name"), "big", "duplicate name(s) big"),
    (("tiers", 0, "url"), "ftp://x", "url: must be http(s)"),
    (("tiers", 0, "price"), {"input_per_mtok": -1}, "prices must be >= 0"),
    (("tiers", 0, "price"), {"in": 1}, "price: unknown key(s) in"),
    (("tiers", 0, "capacity"), "lots", "tiers[0].capacity: must be an integer"),
    (("tiers", 0, "colour"), "red", "tiers[0]: unknown key(s) colour"),
    (("tiers", 0, "name"), "auto", "'auto' is reserved"),
    (("tiers", 1, "model"), "gpt-9", "tiers[1].model: 'gpt-9' is not one of the gateway's in-process models"),
    (("tiers", 0, "fallback"), ["big"], "cannot fall back to itself"),
    (("router", "default"), "medium", "router.default: unknown tier 'medium'"),
    (("router", "budget_reserve"), 2, "budget_reserve: must be in [0, 1)"),
    (("keys", "entries", 0, "key_env"), "K_NOT_SET", "the environment variable 'K_NOT_SET' is not set"),
    (("keys", "entries", 0, "key"), "sk-plain", "keys are not written in clear"),
    (("keys", "entries", 2, "tiers"), ["gold"], "unknown tier 'gold'"),
    (("keys", "default", "budget_usd"), "lots", "keys.default.budget_usd: must be a number"),
    (("tiers",), [], "tiers: must be a non-empty list"),
]


@pytest.mark.parametrize("path,value,message", CONFIG_ERRORS, ids=[m for _, _, m in CONFIG_ERRORS])
def test_config_errors_name_the_key(path, value, message):
    with pytest.raises(ConfigError) as exc:
        spec(_mutate(path, value))
    assert message in str(exc.value)


def test_keys_are_hashed_and_the_file_loads(tmp_path):
    s = spec()
    assert s.keys.entries[0].key_sha256 == hash_secret("sk-broke") and "sk-broke" not in repr(s)
    assert s.chain("big") == ("big", "lil") and s.chain("lil") == ("lil",)
    # the shipped config: gateway.yaml -> tiers.yaml
    shipped = load_config("configs/gateway.yaml").tier_spec
    assert shipped.names == ["large", "small"] and shipped.chain("large") == ("large", "small")
    # a tiers file with an error: the CLI says which key, exits 2
    (tmp_path / "tiers.yaml").write_text("tiers:\n  - {name: a, model: smollm2-135m, fallback: [b]}\n")
    (tmp_path / "gw.yaml").write_text("tiers: tiers.yaml\n")
    with pytest.raises(ConfigError, match=r"tiers\[0\]\.fallback: unknown tier 'b'"):
        load_config(tmp_path / "gw.yaml")
    r = subprocess.run(
        [sys.executable, "-m", "gateway", "--config", str(tmp_path / "gw.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and r.stderr.startswith("error:") and "fallback: unknown tier 'b'" in r.stderr
    (tmp_path / "gw.yaml").write_text("tiers: missing.yaml\n")
    with pytest.raises(ConfigError, match="tiers: file not found"):
        load_config(tmp_path / "gw.yaml")


# ---------------------------------------------------------------- router

ANY = KeyPolicy()


@pytest.mark.parametrize(
    "content,tier,reason",
    [
        ("hello there, how are you?", "lil", "short general request"),
        ("Why does my python script print a traceback?", "big", "code markers (code words)"),
        ("```\nx = 1\n```\nwhat does this do", "big", "code markers (```)"),
        ("def f(x):\n    return x\nexplain", "big", "def/class"),
        ("What is 12 * 7?", "big", "maths markers (arithmetic)"),
        ("Solve the equation for x", "big", "math words"),
        ("tell me a story " * 30, "big", "long prompt (480 chars > 400)"),
    ],
)
def test_auto_routes_with_a_reason(content, tier, reason):
    d = Router(spec()).route(chat(content=content), ANY)
    assert d.tier == tier and reason in d.reason
    assert d.chain == spec().chain(tier)


def test_router_depth_budget_keys_and_explicit_models():
    r = Router(spec())
    deep = parse_chat_request(
        {
            "model": "auto",
            "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}] * 3
            + [{"role": "user", "content": "and?"}],
        },
        max_messages=64,
    )
    assert r.route(deep, ANY).tier == "big" and "deep conversation (4 user turns >= 4)" in r.route(deep, ANY).reason
    # nearly out of budget: held to the default tier, and it says so
    d = r.route(chat(content="What is 12 * 7?"), ANY, budget_left=0.05)
    assert d.tier == "lil" and "budget 5% left < 10%: held to lil" in d.reason
    # a key limited to lil: auto goes there, an explicit big is 403, chains drop what it may not use
    cheap = KeyPolicy(name="cheap", tiers=("lil",))
    d = r.route(chat(content="What is 12 * 7?"), cheap)
    assert d.tier == "lil" and "key limited to lil" in d.reason and d.chain == ("lil",)
    with pytest.raises(APIError) as exc:
        r.route(chat(model="big"), cheap)
    assert exc.value.status == 403 and exc.value.code == "tier_not_allowed"
    # explicit: a tier name, or the model it serves; unknown is 404
    assert r.route(chat(model="big"), ANY).reason == "explicit model 'big'"
    assert r.route(chat(model="tiny"), ANY).tier == "big"  # the first tier serving the model
    with pytest.raises(APIError) as exc:
        r.route(chat(model="gpt-9"), ANY)
    assert exc.value.status == 404 and "available: auto, big, lil" in exc.value.message


def test_auto_only_routes_to_tiers_that_can_do_the_request():
    from gateway.api.schemas import parse_completion_request

    data = json.loads(json.dumps(TIERS))
    data["tiers"][0]["capabilities"] = ["completion"]  # big: a pretrained model, text continuation only
    r = Router(spec(data))
    d = r.route(chat(content="What is 12 * 7?"), ANY)  # maths would escalate to big: big cannot chat
    assert d.tier == "lil" and "big cannot do chat: lil" in d.reason and "big" not in d.chain
    completion = parse_completion_request({"model": "auto", "prompt": "12 * 7 ="})[0]
    assert r.route(completion, ANY).tier == "big"  # what big is good at
    assert "not made for chat" in r.route(chat(model="big"), ANY).reason  # named: honoured, and said
    data["tiers"][1]["capabilities"] = ["completion"]
    with pytest.raises(APIError) as exc:  # nobody can chat
        Router(spec(data)).route(chat(), ANY)
    assert exc.value.status == 400 and exc.value.code == "model_not_capable"
    with pytest.raises(ValueError, match="capabilities: unknown capability 'dance'"):
        data["tiers"][1]["capabilities"] = ["dance"]
        spec(data)


def test_capabilities_and_sampling_defaults_come_from_the_preset():
    from gateway.config.tiers import TierConfig

    gemma, smol = TierConfig("l", "gemma3-270m"), TierConfig("s", "smollm2-135m")
    assert gemma.can == {"completion"} and smol.can == {"chat", "completion", "json", "tools"}
    assert smol.sampling_defaults == {"temperature": 0.2, "top_p": 0.9}
    assert TierConfig("t", "tiny").can == {"chat", "completion", "json", "tools"}  # not a preset: everything
    own = parse_tiers(
        {"tiers": [{"name": "s", "model": "smollm2-135m", "sampling": {"temperature": 0.7}}]}, ["smollm2-135m"]
    )
    assert own.tiers[0].sampling_defaults == {"temperature": 0.7}
    with pytest.raises(ConfigError, match="temperature"):
        parse_tiers(
            {"tiers": [{"name": "s", "model": "smollm2-135m", "sampling": {"temperature": -1}}]}, ["smollm2-135m"]
        )
    # a request's own values win; only the fields it left out take the defaults
    c = chat(temperature=0.0).with_defaults({"temperature": 0.2, "top_p": 0.9, "top_k": 64})
    assert (c.temperature, c.top_p, c.top_k) == (0.0, 0.9, 64) and not {"top_p", "top_k"} & c.omitted


def test_truncation_drops_the_oldest_turn_keeping_system_and_last():
    from gateway.pipeline.fallback import truncated

    sys_, u1, a1, u2, a2, u3 = (
        {"role": r, "content": c}
        for r, c in [
            ("system", "s"),
            ("user", "1"),
            ("assistant", "a1"),
            ("user", "2"),
            ("assistant", "a2"),
            ("user", "3"),
        ]
    )
    assert truncated((sys_, u1, a1, u2, a2, u3)) == (sys_, u2, a2, u3)
    assert truncated((sys_, u2, a2, u3)) == (sys_, u3)
    assert truncated((sys_, u3)) is None and truncated((u3,)) is None
    assert truncated((a1, u3)) == (u3,)  # a leading assistant turn goes on its own


# ---------------------------------------------------------------- ledger


def test_rate_limit_is_a_sliding_minute():
    clock = FakeClock()
    ledger = UsageLedger(KeysConfig(), clock)
    caller = Caller("key:x", "x", KeyPolicy(name="x", requests_per_minute=3))
    for _ in range(3):
        ledger.check_rate(caller)
        clock.t += 10
    with pytest.raises(APIError) as exc:
        ledger.check_rate(caller)
    # the first request (at t0) leaves the window at t0 + 60; now is t0 + 30
    assert exc.value.status == 429 and exc.value.headers["Retry-After"] == "30"
    clock.t += 30
    ledger.check_rate(caller)  # one slot free again


def test_budget_per_period_and_usage():
    clock = FakeClock(86400 * 100 + 3600)  # 01:00 UTC
    ledger = UsageLedger(KeysConfig(), clock)
    caller = Caller("key:y", "y", KeyPolicy(name="y", budget_usd=0.001, period_seconds=86400))
    ledger.check_budget(caller)
    ledger.charge(caller, "big", 100, 50, 0.0006)
    ledger.count_request(caller)
    assert ledger.budget_left(caller) == pytest.approx(0.4)
    ledger.charge(caller, "lil", 10, 10, 0.0005)
    ledger.count_request(caller, fallback=True)
    ledger.record_hit(caller, 0.0002)
    with pytest.raises(APIError) as exc:
        ledger.check_budget(caller)
    assert exc.value.status == 429 and exc.value.type == "insufficient_quota"
    assert exc.value.headers["Retry-After"] == str(23 * 3600) and "resets in 23 h 0 min" in exc.value.message
    u = ledger.usage(caller)
    assert (u["requests"], u["cache_hits"], u["fallbacks"]) == (3, 1, 1)
    assert u["cost_usd"] == pytest.approx(0.0011) and u["saved_usd"] == pytest.approx(0.0002)
    assert u["remaining_usd"] == 0 and u["by_tier"]["big"]["prompt_tokens"] == 100
    clock.t += 23 * 3600  # the next day
    ledger.check_budget(caller)
    assert ledger.usage(caller)["cost_usd"] == 0


# ---------------------------------------------------------------- over HTTP


class Faulty:
    """A real backend that fails on purpose: after ``fail_after`` outputs with text, or before the first
    one by stalling ``stall`` seconds. Everything else is the wrapped backend's."""

    def __init__(self, inner, fail_after=None, stall=None):
        self.inner, self.fail_after, self.stall = inner, fail_after, stall

    def __getattr__(self, name):
        return getattr(self.inner, name)

    async def generate(self, prompt_ids, params, request_id):
        if self.stall:
            await asyncio.sleep(self.stall)
        n = 0
        async for out in self.inner.generate(prompt_ids, params, request_id):
            if self.fail_after is not None and n >= self.fail_after:
                raise BackendError("failed", "injected failure")
            n += bool(out.text)
            yield out


@pytest.fixture(scope="module")
def server(tiny_path):
    backends = {name: LocalEngine(name, tiny_engine(tiny_path, **GATEWAY_ENGINE)) for name in ("big", "lil")}
    limits = Limits(default_max_tokens=12)
    srv = tiny_gateway(tiny_path, backends=backends, cache_enabled=False, tiers=spec(), limits=limits)
    yield srv
    srv.stop()


def ask(server, content="hello there", model="auto", key=None, stream=False, max_tokens=12, **kw):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = chat_body(model, content, temperature=0, max_tokens=max_tokens, stream=stream, **kw)
    status, h, raw = http(server.url, body, headers=headers)
    h = {k.lower(): v for k, v in h.items()}
    return status, h, raw.decode()


def price(tier, usage):
    p = PRICES[tier]
    return (usage["prompt_tokens"] * p[0] + usage["completion_tokens"] * p[1]) / 1e6


def test_auto_routing_and_cost_headers(server):
    status, h, body = ask(server, "What is 12 * 7?", key="sk-costs")
    assert status == 200 and h["x-route-tier"] == "big" and h["x-served-by"] == "big"
    assert "maths markers" in h["x-route-reason"] and "x-fallback" not in h
    usage = json.loads(body)["usage"]
    assert float(h["x-cost-usd"]) == pytest.approx(price("big", usage), rel=1e-6)
    status, h2, body2 = ask(server, "hello there", key="sk-costs")
    assert h2["x-route-tier"] == "lil" and h2["x-route-reason"] == "short general request"
    usage2 = json.loads(body2)["usage"]
    status, _, raw = http(server.url, path="/v1/usage", method="GET", headers={"Authorization": "Bearer sk-costs"})
    u = json.loads(raw)
    assert status == 200 and u["requests"] == 2 and u["by_tier"]["big"]["requests"] == 1
    assert u["cost_usd"] == pytest.approx(price("big", usage) + price("lil", usage2), rel=1e-6)
    assert u["prompt_tokens"] == usage["prompt_tokens"] + usage2["prompt_tokens"]
    # another key sees only its own figures
    _, _, raw = http(server.url, path="/v1/usage", method="GET", headers={"Authorization": "Bearer sk-other"})
    assert json.loads(raw)["requests"] == 0
    _, _, metrics = http(server.url, path="/metrics", method="GET")
    text = metrics.decode()
    assert (
        'gateway_cost_usd_total{tier="big"}' in text and 'gateway_route_decisions_total{how="auto",tier="big"}' in text
    )


def test_budget_and_rate_limits_answer_429(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="sk-broke", max_retries=0)
    client.chat.completions.create(
        model="lil", messages=[{"role": "user", "content": "hi"}], max_tokens=12, temperature=0
    )  # lil: ~2e-5 USD of the 1e-4 budget; big spends the rest
    with pytest.raises(openai.RateLimitError) as exc:
        for _ in range(20):
            client.chat.completions.create(
                model="big", messages=[{"role": "user", "content": "hi"}], max_tokens=12, temperature=0
            )
    err = exc.value.body
    assert err["code"] == "budget_exceeded" and "budget spent" in err["message"]
    assert int(exc.value.response.headers["Retry-After"]) > 0
    statuses = [ask(server, key="sk-slow")[0] for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    status, h, body = ask(server, key="sk-slow")
    assert status == 429 and json.loads(body)["error"]["type"] == "rate_limit_error" and int(h["retry-after"]) > 0
    # a key held to lil: explicit big is 403, auto stays on lil and says why
    status, _, body = ask(server, model="big", key="sk-cheap")
    assert status == 403 and json.loads(body)["error"]["code"] == "tier_not_allowed"
    status, h, _ = ask(server, "What is 12 * 7?", key="sk-cheap")
    assert status == 200 and h["x-served-by"] == "lil" and "key limited to lil" in h["x-route-reason"]
    _, _, metrics = http(server.url, path="/metrics", method="GET")
    assert 'gateway_rejected_limits_total{limit="budget"}' in metrics.decode()


def test_fallback_when_a_tier_is_down(server):
    big = server.app[keys.STATE].backends["big"]
    _, _, direct = ask(server, model="lil")
    big.ready = False
    try:
        for stream in (False, True):
            status, h, body = ask(server, model="big", stream=stream, key="sk-fallback")
            assert status == 200 and h["x-route-tier"] == "big" and h["x-served-by"] == "lil"
            assert h["x-fallback"] == "big->lil (unavailable)"
            if not stream:
                assert json.loads(body)["choices"][0]["message"] == json.loads(direct)["choices"][0]["message"]
    finally:
        big.ready = True
    _, _, raw = http(server.url, path="/v1/usage", method="GET", headers={"Authorization": "Bearer sk-fallback"})
    u = json.loads(raw)
    assert u["fallbacks"] == 2 and list(u["by_tier"]) == ["lil"]  # charged at the tier that answered
    _, _, metrics = http(server.url, path="/metrics", method="GET")
    assert 'gateway_fallbacks_total{cause="unavailable",tier="big",to="lil"}' in metrics.decode()


def _swap(server, name, backend):
    backends = server.app[keys.STATE].backends
    old, backends[name] = backends[name], backend
    return old


def test_fallback_mid_answer_and_on_timeout(server):
    _, _, direct = ask(server, model="lil", max_tokens=24)
    direct_text = json.loads(direct)["choices"][0]["message"]["content"]
    big = _swap(server, "big", Faulty(server.app[keys.STATE].backends["big"], fail_after=1))
    try:
        # non-streaming: the abandoned partial answer is dropped, lil answers from the start
        status, h, body = ask(server, model="big", max_tokens=24)
        out = json.loads(body)
        assert status == 200 and h["x-served-by"] == "lil" and h["x-fallback"] == "big->lil (failed)"
        assert out["choices"][0]["message"]["content"] == direct_text
        # streaming: the client keeps what big sent; lil continues it; nothing is lost or repeated
        status, h, body = ask(server, model="big", stream=True, stream_options={"include_usage": True}, max_tokens=24)
        events = [e[6:] for e in body.split("\n\n") if e.startswith("data: ")]
        assert status == 200 and events[-1] == "[DONE]" and ": tier big failed; lil continues the answer" in body
        chunks = [json.loads(e) for e in events[:-1]]
        usage = chunks[-1]["usage"]
        assert usage["completion_tokens"] == 24  # some from big, the rest from lil: the max_tokens asked for
        assert chunks[-2]["choices"][0]["finish_reason"] == "length"
    finally:
        _swap(server, "big", big)
    _swap(server, "big", Faulty(big, stall=0.5))
    # timeout_s is per tier: lower big's to 0.1 s for this test
    spec_ = server.app[keys.STATE].router.spec
    tiers = tuple(t if t.name != "big" else type(t)(**{**t.__dict__, "timeout_s": 0.1}) for t in spec_.tiers)
    server.app[keys.STATE].router.spec = type(spec_)(tiers, spec_.router, spec_.keys)
    try:
        status, h, body = ask(server, model="big", max_tokens=24)
        assert status == 200 and h["x-fallback"] == "big->lil (timeout)"
        assert json.loads(body)["choices"][0]["message"]["content"] == direct_text
    finally:
        server.app[keys.STATE].router.spec = spec_
        _swap(server, "big", big)


def test_overflow_past_capacity_and_every_tier_down(server):
    # big has capacity 2: of 6 concurrent requests, some overflow to lil; none fails
    with concurrent.futures.ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda _: ask(server, model="big", stream=True, max_tokens=40), range(6)))
    assert all(s == 200 for s, _, _ in results)
    served = [h["x-served-by"] for _, h, _ in results]
    assert served.count("big") >= 1 and served.count("lil") >= 1
    assert all(h.get("x-fallback") == "big->lil (overloaded)" for _, h, _ in results if h["x-served-by"] == "lil")
    backends = server.app[keys.STATE].backends
    backends["big"].ready = backends["lil"].ready = False
    try:
        status, h, body = ask(server, model="big")
        err = json.loads(body)["error"]
        assert status == 503 and err["type"] == "service_unavailable" and int(h["retry-after"]) > 0
        assert "big unavailable" in err["message"] and "lil unavailable" in err["message"]
    finally:
        backends["big"].ready = backends["lil"].ready = True
