"""The advisor's tree on metrics as the gateway renders them (``GatewayMetrics`` with engines' gauges):
each branch's symptom gives that cause and remedy, a healthy gateway and too little traffic give none."""

from __future__ import annotations

import pytest

from gateway.advise import MIN_REQUESTS, diagnose, main
from gateway.observability.metrics import GatewayMetrics
from runtime.api import EngineStats


class Engine:
    def __init__(
        self, running=4, kv=0.3, preemptions=0, queries=0, hits=0, decode=None, bits=32, shared=(0, 0), chunk=256
    ):
        steps, seqs, seconds, weights = decode or (0, 0, 0.0, 0)
        stats = (running, 0, kv, preemptions, 100, 64, queries, hits, 0, 0, steps, seqs, seconds, weights, bits)
        self.s = EngineStats(*stats, *shared, chunk)  # shared: (prompt tokens admitted, of which a shared prefix)

    def stats(self):
        return self.s


def render(n=40, ttft=0.1, queue=0.01, itl=0.02, prompt=200, engine=None, cost=None):
    m = GatewayMetrics(lambda: {"small": engine or Engine()})
    for _ in range(n):
        m.ttft.labels("small", "miss").observe(ttft)
        m.queue.labels("small").observe(queue)
        m.itl.labels("small").observe(itl)
        m.prompt_tokens.labels("small").inc(prompt)
        m.prompt_lengths.labels("small").observe(prompt)
    for tier, usd in (cost or {}).items():
        m.cost.labels(tier).inc(usd)
    return m.render().decode()


def only(findings):
    assert len(findings) == 1, findings
    return findings[0]


def test_healthy_and_too_little_traffic_give_no_finding():
    assert diagnose(render()) == []
    assert diagnose(render(n=MIN_REQUESTS - 1, ttft=5.0, itl=1.0)) == []


@pytest.mark.parametrize(
    "kwargs, cause, key",
    [
        ({"ttft": 3.0, "queue": 2.5}, "queueing", "max_num_seqs: 8"),  # TPOT has room: batch 4 -> 8
        ({"ttft": 3.0, "queue": 2.5, "itl": 0.08}, "queueing", "tiers[].urls"),  # it has not: a replica
        ({"ttft": 3.0, "prompt": 3000}, "context too long and the prefix cache is off", "enable_prefix_caching: true"),
        # queued too, but behind prefills the prefix cache would not redo: the prompts first, not capacity
        ({"ttft": 3.0, "queue": 2.5, "prompt": 3000}, "context too long and the prefix cache", "enable_prefix_caching"),
        (
            {"ttft": 3.0, "prompt": 3000, "engine": Engine(queries=120000, hits=0)},
            "context too long",
            "truncation: auto",
        ),
        (
            {"ttft": 3.0, "prompt": 3000, "engine": Engine(queries=120000, hits=100000)},
            "prefill compute",
            "--role decode",
        ),
        ({"ttft": 3.0, "prompt": 100}, "prefill compute", "--role decode"),
        # the engines count what a prefix cache could reuse, on or off
        (
            {"ttft": 3.0, "prompt": 3000, "engine": Engine(shared=(120000, 96000))},
            "context too long and the prefix cache is off",
            "enable_prefix_caching: true",
        ),
        (  # long and unshared: a prefix cache would find nothing, turning it on is no remedy
            {"ttft": 3.0, "prompt": 3000, "engine": Engine(shared=(120000, 4800))},
            "context too long: long prompts are prefilled anew",
            "truncation: auto",
        ),
        (  # shared, but the cache on finds little: the shared blocks do not stay resident
            {"ttft": 3.0, "prompt": 3000, "engine": Engine(queries=120000, hits=6000, shared=(120000, 96000))},
            "context too long, and the shared prefixes are evicted",
            "kv_cache_mb",
        ),
    ],
)
def test_ttft_branches(kwargs, cause, key):
    f = only(diagnose(render(**kwargs)))
    assert f.symptom == "ttft" and f.cause.startswith(cause) and key in f.key, f
    assert f.evidence["ttft_p99_s"] > f.evidence["ttft_slo_s"]
    prompt = kwargs.get("prompt", 200)  # every request this long: interpolated inside its bucket (x2 wide)
    assert prompt / 2 < f.evidence["prompt_tokens_p50"] <= f.evidence["prompt_tokens_p99"] <= 2 * prompt
    engine = kwargs.get("engine")
    if engine is not None and engine.s.shared_prefix_queries:
        assert f.evidence["shared_prefix_share"] == engine.s.shared_prefix_tokens / engine.s.shared_prefix_queries
    if cause == "queueing":
        assert any("raises" in t and "TPOT" in t for t in f.traps)  # the trap of raising the batch
        assert f.proposal == ({"max_num_seqs": 8} if "max_num_seqs" in key else {})
    else:
        assert any("not slow decode" in t for t in f.traps)


def test_tpot_branches_memory_and_cost():
    f = only(diagnose(render(itl=0.3, engine=Engine(running=1))))
    assert (f.symptom, f.key) == ("tpot", "models[].engine.weight_quant: int8")
    f = only(diagnose(render(itl=0.3, engine=Engine(running=16))))
    assert f.symptom == "tpot" and "max_num_seqs" in f.key
    # The engines' decode steps outweigh the instant's gauge: 1.2 sequences per step at 50 ms, reading
    # 540 MB of weights each time (10.8 GB/s), while 16 happen to be running at the scrape.
    # below: TPOT p50 ~75 ms, about one decode step (50-90 ms), p99 over a 50 ms level
    f = only(
        diagnose(
            render(itl=0.08, engine=Engine(running=16, decode=(1000, 1200, 50.0, 540e6))), peak_gbs=100, tpot_slo=0.05
        )
    )
    assert (f.symptom, f.key) == ("tpot", "models[].engine.weight_quant: int8")
    e = f.evidence
    assert (e["mean_decode_batch"], e["mean_decode_step_ms"], e["weight_mb"]) == (1.2, 50.0, 540.0)
    assert e["weights_read_gb_per_s"] == 10.8 and e["roofline_step_ms"] == 5.4
    f = only(diagnose(render(itl=0.08, engine=Engine(running=1, decode=(100, 2400, 9.0, 540e6))), tpot_slo=0.05))
    assert "max_num_seqs" in f.key and f.evidence["mean_decode_batch"] == 24 and f.proposal == {"max_num_seqs": 6}
    # Already quantized: int8 weights are offered int4, 4-bit ones a faster device (nothing to replay)
    decode = (1000, 1000, 50.0, 135e6)
    assert only(diagnose(render(itl=0.08, engine=Engine(decode=decode, bits=8)), tpot_slo=0.05)).proposal == {
        "weight_quant": "int4"
    }
    f = only(diagnose(render(itl=0.08, engine=Engine(decode=decode, bits=4)), tpot_slo=0.05))
    assert f.proposal == {} and "faster device" in f.key
    # TPOT p50 ~175 ms while the engine's own decode steps take 15 ms: prefill chunks in between
    f = only(diagnose(render(itl=0.3, engine=Engine(running=1, decode=(100, 100, 1.5, 540e6)))))
    assert f.cause.startswith("prefill interference") and f.proposal == {"max_num_batched_tokens": 128}
    assert f.evidence["tpot_p50_in_decode_steps"] > 3 and any("TTFT rises" in t for t in f.traps)
    f = only(diagnose(render(itl=0.3, engine=Engine(running=1, decode=(100, 100, 1.5, 540e6), chunk=16))))
    assert f.proposal == {} and "--role decode" in f.key  # the chunk cannot shrink: prefill elsewhere
    f = only(diagnose(render(engine=Engine(kv=0.97, preemptions=5))))
    assert (f.symptom, f.key) == ("memory", "models[].engine.kv_dtype: int8") and f.evidence["preemptions"] == 5
    assert diagnose(render(engine=Engine(kv=0.97, preemptions=0))) == []  # full but not thrashing: fine
    prices = {"large": 2.4, "small": 0.4}
    f = only(diagnose(render(cost={"large": 0.9, "small": 0.05}), prices=prices))
    assert f.symptom == "cost" and f.evidence["priciest"] == "large"
    assert diagnose(render(cost={"large": 0.3, "small": 0.2}), prices=prices) == []


class Ready(Engine):
    """A backend that is up and serves nothing: the tests fill the gateway's metrics themselves."""

    name, ready, compiling, max_model_len = "tiny", True, False, 256  # the gateway.backends.Backend members

    async def start(self, warmup):
        pass

    async def close(self):
        pass


def live_gateway():
    from gateway.app import create_app
    from gateway.config.gateway import GatewayConfig, ModelEntry
    from runtime.api import EngineConfig
    from tests.support.gateway_server import ServerThread

    config = GatewayConfig(port=0, models=(ModelEntry("tiny", EngineConfig()),))
    app = create_app(config, backends={"tiny": Ready()}, cache_enabled=False)
    return app, ServerThread(app).start()


def test_the_command_reads_a_live_gateway(capsys):
    import json

    _, srv = live_gateway()
    try:
        assert main(["--url", srv.url, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["findings"] == []  # no traffic: no finding
        assert main(["--url", srv.url]) == 0 and "no finding" in capsys.readouterr().out
    finally:
        srv.stop()
    assert main(["--url", "http://127.0.0.1:9"]) == 2  # nothing listening: a clear error, status 2


def test_the_recorder_keeps_shapes_and_sharing_never_tokens(tmp_path):
    from gateway.advise.recording import Recorder, load

    clock = iter([100.0, 100.5, 101.0, 102.0]).__next__
    rec = Recorder(tmp_path / "r.jsonl", max_requests=3, clock=clock)
    system = list(range(1000, 1032))  # two blocks every request shares
    for i, tail in enumerate(([7] * 20, [8] * 40, [9] * 3)):
        rec.record(
            arrived=clock(),
            tier="small",
            prompt_tokens=len(system) + len(tail),
            output_tokens=5 + i,
            prompt_ids=system + tail,
            cache="miss",
            stream=False,
            max_tokens=None,
        )
    rec.record(
        arrived=103.0,
        tier="small",
        prompt_tokens=1,
        output_tokens=1,
        prompt_ids=[1],
        cache="miss",
        stream=False,
        max_tokens=None,
    )  # past max_requests: not written
    rec.close()
    lines = load(tmp_path / "r.jsonl", reached_a_model=False)
    assert [x["t"] for x in lines] == [0.5, 1.0, 2.0] and [x["output_tokens"] for x in lines] == [5, 6, 7]
    assert [x["blocks"][:2] for x in lines] == [[0, 1]] * 3  # the shared prefix: the same numbers
    assert lines[0]["blocks"][2:] == [2] and lines[1]["blocks"][2:] == [3, 4] and lines[2]["blocks"] == [0, 1]
    text = (tmp_path / "r.jsonl").read_text()
    assert "1000" not in text and "1031" not in text  # no token id is written


def test_a_window_sees_only_what_happened_in_it():
    """Slow requests long ago and fast ones lately: the lifetime figures still breach the service level,
    the last window's do not; a reset counter counts from zero; gauges are read, not differenced."""
    from gateway.advise import parse, subtract
    from gateway.advise.history import DiagnosisHistory

    m = GatewayMetrics(lambda: {"small": Engine(kv=0.5)})
    now = [1000.0]
    hist = DiagnosisHistory(lambda: m.registry, interval=30.0, clock=lambda: now[0])
    for ttft, queue in ((4.0, 3.5), (0.05, 0.01)):  # the first minute slow, the next fast
        hist.tick()
        for _ in range(40):
            m.ttft.labels("small", "miss").observe(ttft)
            m.queue.labels("small").observe(queue)
            m.prompt_tokens.labels("small").inc(100)
        now[0] += 60
    assert only(diagnose(hist.window(7200)[0])).cause.startswith("queueing")  # all of it
    recent, covered = hist.window(60)
    assert covered == 60 and diagnose(recent) == []
    ttft = recent["hists"][("time_to_first_token_seconds", (("cache", "miss"), ("model", "small")))]
    assert ttft.count == 40 and ttft.quantile(0.99) <= 0.05
    assert recent["values"]["prompt_tokens_total"][(("model", "small"),)] == 4000
    assert recent["values"]["kv_cache_usage_perc"][(("model", "small"),)] == 0.5  # a gauge: as read
    old = parse(m.render().decode())
    fresh = GatewayMetrics(lambda: {})  # a restarted gateway: its counters went down
    fresh.prompt_tokens.labels("small").inc(7)
    assert subtract(parse(fresh.render().decode()), old)["values"]["prompt_tokens_total"][(("model", "small"),)] == 7


def test_the_diagnosis_endpoint_and_the_windowed_command(capsys):
    import json
    import urllib.error
    import urllib.request

    from gateway import keys

    app, srv = live_gateway()
    try:
        metrics = app[keys.METRICS]
        for _ in range(30):  # slow and queued: one finding over any window that holds them
            metrics.ttft.labels("tiny", "miss").observe(5.0)
            metrics.queue.labels("tiny").observe(4.5)
        with urllib.request.urlopen(srv.url + "/dashboard/diagnosis?window=15m&ttft_slo=2", timeout=10) as r:
            body = json.loads(r.read())
        assert body["requests"] == 30 and body["requested_window_s"] == 900 and body["slo"]["ttft_p99_s"] == 2
        assert [f["symptom"] for f in body["findings"]] == ["ttft"] and "queueing" in body["findings"][0]["cause"]
        for bad in ("window=soon", "window=-5m", "ttft_slo=fast", "tpot_slo=0"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(srv.url + "/dashboard/diagnosis?" + bad, timeout=10)
            assert e.value.code == 400 and json.loads(e.value.read())["error"]["type"] == "invalid_request_error"
        assert main(["--url", srv.url, "--window", "15m", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["findings"][0]["symptom"] == "ttft"
        assert main(["--url", srv.url, "--window", "15m"]) == 0
        out = capsys.readouterr().out
        assert "30 answered requests" in out and "[ttft] queueing" in out and "trap:" in out
        assert main(["--url", srv.url, "--window", "soon"]) == 2  # the gateway's 400, said plainly
        assert "400" in capsys.readouterr().err
    finally:
        srv.stop()


def test_repeated_calls_without_a_cache_ask_for_the_cache():
    m = GatewayMetrics(lambda: {"small": Engine()})
    for i in range(40):
        m.ttft.labels("small", "miss").observe(0.1)
        m.cost.labels("small").inc(0.001)
        if i >= 10:  # 30 of 40 asked what an earlier one asked
            m.repeated.labels("small").inc()
            m.repeated_cost.labels("small").inc(0.001)
    f = only(diagnose(m.render().decode()))
    assert f.symptom == "cost" and f.cause.startswith("repeated calls") and f.key.startswith("cache.enabled: true")
    assert f.evidence["repeated_share_of_spend"] == 0.75 and f.evidence["repeated_requests"] == 30
    for _ in range(40):  # the same, with a cache that every lookup bypasses (sampled requests)
        m.cache_lookups.labels("bypass", "small").inc()
    assert "cache_sampled" in only(diagnose(m.render().decode())).key


def test_the_repeat_tracker_remembers_digests_in_a_bounded_lru():
    from gateway.observability.repeats import RepeatTracker

    t = RepeatTracker(capacity=2)
    a, b, c = (t.key("t", "small", [{"role": "user", "content": q}], {"temperature": 0}) for q in "abc")
    assert len(a) == 16 and a != t.key("other tenant", "small", [{"role": "user", "content": "a"}], {"temperature": 0})
    assert [t.seen(k) for k in (a, a, b, c)] == [False, True, False, False]
    assert t.seen(a) is False  # pushed out by b and c
    with pytest.raises(ValueError):
        RepeatTracker(capacity=0)
