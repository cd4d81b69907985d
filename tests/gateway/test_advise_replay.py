"""gateway.advise.replay on the tiny model (runtime.replay driving the engine): a recorded shape replays
with its prefix sharing (the prefix cache finds it only where it is on), an exact cache answers repeats of
answered requests, costs follow the tier prices, and bad keys are refused plainly."""

from __future__ import annotations

import json

import pytest

from gateway.advise import main
from gateway.advise.recording import cache_outcome, load, prompt_of
from gateway.advise.replay import parse_try, replay
from tests.support.engines import tiny_config

PRICES = {"small": (0.1, 0.4), "large": (0.6, 2.4)}


def shapes():
    """Six requests 50 ms apart, all starting with the same 3 blocks (48 tokens); requests 3-5 ask what 0-2
    asked (``asked`` 0-2 again), arriving after those were answered."""
    out = []
    for i in range(6):
        t = 0.05 * i if i < 3 else 1.0 + 0.05 * i
        out.append(
            {"t": t, "tier": "small", "prompt_tokens": 60, "output_tokens": 4, "blocks": [0, 1, 2], "asked": i % 3}
        )
    return out


def test_a_shape_keeps_its_prefix_sharing_and_nothing_else():
    a, b = prompt_of(shapes()[0], 0, 500), prompt_of(shapes()[1], 1, 500)
    assert len(a) == len(b) == 60 and a[:48] == b[:48] and a[48:] != b[48:]


@pytest.mark.slow
def test_replay_current_against_proposed(tiny_path):
    """Current: no prefix cache, no cache (compiling as it goes). Proposed: both, priced at the large tier
    (warmed up first, so the first three are answered well before their repeats arrive at 1 s)."""
    kw = dict(time_scale=1.0, ttft_slo=60.0, tpot_slo=60.0, prices=PRICES)
    cold = replay(shapes(), tiny_config(tiny_path, enable_prefix_caching=False), warmup=False, **kw)
    assert cold["prefix_cache_hit_rate"] == 0.0 and cold["requests"] == 6 and cold["cache_hits"] == 0
    assert cold["cost_usd"] == pytest.approx(6 * (60 * 0.1 + 4 * 0.4) / 1e6)  # each at its recorded tier
    warm = replay(shapes(), tiny_config(tiny_path), cache="exact", tier="large", **kw)
    assert warm["cache_hits"] == 3 and warm["goodput"] == 1.0  # the repeats never reached the engine
    assert warm["cost_usd"] == pytest.approx(3 * (60 * 0.6 + 4 * 2.4) / 1e6)
    # the 2nd and 3rd find at most the 3 shared blocks (fewer when they arrive mid-way through the 1st's prefill)
    assert 0 < warm["prefix_cache_hit_rate"] <= 2 * 48 / 180
    assert warm["ttft_s"]["p50"] is not None and warm["peak_kv_usage"] > 0
    # per request, in order: the three cache hits within the levels; the engine's three timed
    assert warm["within"] == [True] * 6 and len(warm["ttfts"]) == 3 and len(warm["tpots"]) == 3
    strict = replay(shapes(), tiny_config(tiny_path), **{**kw, "ttft_slo": 1e-9}, cache="exact")
    assert strict["within"] == [False] * 3 + [True] * 3 and strict["goodput"] == 0.5  # only the hits


LOOKUPS = [  # (recorded cache outcome, lookup, best similarity)
    ("hit", "exact", 1.0),
    ("hit", "semantic", 0.93),
    ("miss", "miss", 0.88),  # its best candidate was under the recording's threshold
    ("miss", "guard_rejected", 0.95),  # the checker refused it: its verdict stands at any threshold
    ("miss", "miss", None),  # no candidate at all
    ("bypass", "bypass", None),
]


def test_a_cache_threshold_is_re_decided_from_each_recorded_lookup():
    lines = [{"cache": c, "lookup": k, "similarity": s} for c, k, s in LOOKUPS]
    assert [cache_outcome(x, None) for x in lines] == ["hit", "hit", "miss", "miss", "miss", "miss"]
    assert [cache_outcome(x, 0.95) for x in lines] == ["hit", "miss", "miss", "miss", "miss", "miss"]
    assert [cache_outcome(x, 0.85) for x in lines] == ["hit", "hit", "unchecked", "miss", "miss", "miss"]


@pytest.mark.slow
def test_a_stricter_threshold_sends_the_semantic_hits_to_the_engine(tiny_path):
    lines = [
        {
            "t": 0.02 * i,
            "tier": "small",
            "prompt_tokens": 20,
            "output_tokens": 3,
            "cache": c,
            "lookup": k,
            "similarity": s,
        }
        for i, (c, k, s) in enumerate(LOOKUPS)
    ]
    kw = dict(time_scale=1.0, ttft_slo=60.0, tpot_slo=60.0, prices=PRICES, warmup=False)
    config = tiny_config(tiny_path)
    as_recorded = replay(lines, config, **kw)
    stricter = replay(lines, config, cache_threshold=0.95, **kw)
    looser = replay(lines, config, cache_threshold=0.85, **kw)
    assert (as_recorded["cache_hits"], stricter["cache_hits"], looser["cache_hits"]) == (2, 1, 3)
    assert looser["cache_hits_unchecked"] == 1 and as_recorded["cache_hits_unchecked"] == 0
    one = (20 * 0.1 + 3 * 0.4) / 1e6  # an engine request at the small tier's prices; hits are free
    assert as_recorded["cost_usd"] == pytest.approx(4 * one) and stricter["cost_usd"] == pytest.approx(5 * one)
    assert looser["cost_usd"] == pytest.approx(3 * one) and all(r["goodput"] == 1.0 for r in (as_recorded, looser))


def test_keys_are_checked_and_recordings_filtered(tmp_path, capsys):
    assert parse_try(["max_num_seqs=8", "kv_dtype=int8", "models[].engine.enable_prefix_caching=false"]) == {
        "max_num_seqs": 8,
        "kv_dtype": "int8",
        "enable_prefix_caching": False,
    }
    assert parse_try(["cache=exact", "tier=small"]) == {"cache": "exact", "tier": "small"}
    assert parse_try(["cache_threshold=0.9"]) == {"cache_threshold": 0.9}
    for bad in ("max_num_sequences=8", "cache=semantic", "novalue", "cache_threshold=1.5", "cache_threshold=high"):
        with pytest.raises(SystemExit, match="error"):
            parse_try([bad])
    rec = tmp_path / "r.jsonl"
    rec.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"t": 2.0, "prompt_tokens": 5, "cache": "miss"},
                {"t": 1.0, "prompt_tokens": 3, "cache": "hit"},  # never reached a model: not replayed
                {"t": 0.5, "prompt_tokens": 7, "cache": "bypass"},
            ]
        )
    )
    assert [x["t"] for x in load(rec)] == [0.5, 2.0]
    empty = tmp_path / "e.jsonl"
    empty.write_text(json.dumps({"t": 1.0, "prompt_tokens": 3, "cache": "hit"}))
    assert main(["--replay", str(empty)]) == 2 and "no request that reached a model" in capsys.readouterr().err


@pytest.mark.slow
def test_a_second_run_on_the_same_engine_starts_with_an_empty_prefix_cache(tiny_path):
    """Two runs of the same shapes on one engine (what Replayer does for a configuration replayed again):
    the second finds no block the first left behind. Six 60-token prompts sharing 3 blocks (48 tokens):
    from an empty cache the first finds nothing and the other five at most 48 each, 240 of 360 tokens;
    with the first run's blocks left, the first would find 48 too (up to 288 of 360)."""
    from runtime.replay import open_engine

    config = tiny_config(tiny_path)
    engine = open_engine(config, warmup=False)
    kw = dict(time_scale=1.0, ttft_slo=60.0, tpot_slo=60.0, prices=PRICES, warmup=False, engine=engine)
    first, second = replay(shapes(), config, **kw), replay(shapes(), config, **kw)
    assert 0 < first["prefix_cache_hit_rate"] <= 240 / 360 + 1e-9
    assert 0 < second["prefix_cache_hit_rate"] <= 240 / 360 + 1e-9


def test_the_replayer_keeps_its_two_last_engines_for_their_configurations_only(monkeypatch):
    """The tuner's confirmation alternates the current configuration and a leader: both engines stay open.
    A third configuration releases the least recently used one first."""
    import runtime.replay
    from gateway.advise.replay import Replayer

    opened = []
    monkeypatch.setattr(runtime.replay, "open_engine", lambda config, warmup: opened.append(config) or object())
    r = Replayer([], 1.0, 0.1)
    a = r.engine_for("config A")
    assert r.engine_for("config A") is a and opened == ["config A"]
    b = r.engine_for("config B")
    assert b is not a and opened == ["config A", "config B"]
    for _ in range(3):  # interleaved: no rebuild
        assert r.engine_for("config A") is a and r.engine_for("config B") is b
    assert len(opened) == 2
    c = r.engine_for("config C")  # A was used least recently: released
    assert r.engine_for("config B") is b and r.engine_for("config C") is c and len(opened) == 3
    assert r.engine_for("config A") is not a and opened[-1] == "config A"
    r.close()
    assert r.engine_for("config B") is not b and len(opened) == 5
    one = Replayer([], 1.0, 0.1, keep=1)
    x = one.engine_for("config X")
    one.engine_for("config Y")
    assert one.engine_for("config X") is not x and opened[-3:] == ["config X", "config Y", "config X"]
