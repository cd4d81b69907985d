"""The benchmark scripts: bench_serving's seeded workload and its report against a real gateway (tiny
model, loopback port); the accelerator run's spec table, byte and FLOP counts, its refusal to time the
host CPU and its --smoke mode; every result names the CPU it ran on ("cpu")."""

from __future__ import annotations

import glob
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.config.gateway import Limits
from runtime.platform import cpu_info
from tests.support.scripts import load_script
from tests.support.tiny_gateway import tiny_gateway
from tests.support.tiny_gguf import write_tiny_llama

ROOT = Path(__file__).resolve().parents[2]


bench_serving = load_script("bench_serving")


# ---- the workload ------------------------------------------------------------------------------


def test_workload_is_seeded():
    a = bench_serving.make_workload(60, seed=3)
    assert a == bench_serving.make_workload(60, seed=3)
    assert a != bench_serving.make_workload(60, seed=4)
    assert [r["id"] for r in a] == list(range(60))


def test_workload_honours_repeat_and_paraphrase_shares():
    reqs = bench_serving.make_workload(200, seed=1, repeat_share=0.3, paraphrase_share=0.5)
    kinds = [r["kind"] for r in reqs]
    assert kinds[0] == "fresh"
    assert kinds.count("repeat") + kinds.count("paraphrase") == 60  # round(0.3 * 200)
    assert kinds.count("paraphrase") == 30  # round(0.5 * 60)
    for r in reqs:
        if r["kind"] == "fresh":
            assert r["source"] is None
            continue
        src = reqs[r["source"]]
        assert src["kind"] == "fresh" and src["id"] < r["id"]
        assert r["max_tokens"] == src["max_tokens"]  # the cache scope includes max_tokens
        assert r["messages"][:-1] == src["messages"][:-1]  # same notes / system prompt
        same = r["messages"][-1] == src["messages"][-1]
        assert same == (r["kind"] == "repeat")
    none = bench_serving.make_workload(50, seed=1, repeat_share=0.0)
    assert {r["kind"] for r in none} == {"fresh"}


def test_workload_lengths_have_the_configured_means():
    reqs = bench_serving.make_workload(
        3000, seed=2, prompt_len="lognormal:80,0.6,4,1000", output_len="lognormal:120,0.6,2,2000"
    )
    fresh = [r for r in reqs if r["kind"] == "fresh"]
    prompt = np.mean([r["prompt_words"] for r in fresh])
    output = np.mean([r["max_tokens"] for r in fresh])
    assert abs(prompt - 80) / 80 < 0.1, prompt
    assert abs(output - 120) / 120 < 0.1, output
    assert all(2 <= r["max_tokens"] <= 2000 for r in reqs)
    # the words are questions, not random tokens
    assert all(
        r["messages"][-1]["content"].split("?")[0].split()[0]
        in {"What", "Can", "Explain", "Describe", "How", "Give", "Tell", "When", "In"}
        for r in fresh
    )
    fixed = bench_serving.make_workload(20, seed=0, output_len="fixed:7")
    assert {r["max_tokens"] for r in fixed} == {7}


def test_length_dist_rejects_bad_specs():
    for spec in ("gaussian:1,2", "lognormal:10,1", "uniform:9,3", "fixed:x"):
        with pytest.raises(ValueError):
            bench_serving.LengthDist.parse(spec)


def test_poisson_arrivals():
    t = bench_serving.arrival_times(4000, 5.0, seed=0)
    assert t[0] == 0 and all(b >= a for a, b in zip(t, t[1:]))
    assert abs(t[-1] / 4000 - 0.2) < 0.02  # mean gap 1 / rate
    assert t == bench_serving.arrival_times(4000, 5.0, seed=0)
    assert bench_serving.arrival_times(3, math.inf) == [0.0, 0.0, 0.0]


def test_summary_arithmetic():
    R = bench_serving.RequestResult
    rs = [
        R(0, "fresh", 8, ok=True, ttft=0.1, e2e=0.8, completion_tokens=8, itl=[0.1] * 7, served_by="small"),
        R(1, "repeat", 8, ok=True, ttft=2.0, e2e=2.1, completion_tokens=3, cache="hit", served_by="small"),
        R(2, "fresh", 8, error="HTTP 429: slow down"),
    ]
    s = bench_serving.summarize(rs, duration=2.0, ttft_slo=1.0, tpot_slo=0.2)
    assert s["completed"] == 2 and s["failed"] == 1 and s["errors"] == {"HTTP 429: slow down": 1}
    assert rs[0].tpot == pytest.approx(0.1)  # (0.8 - 0.1) / 7
    assert s["good_requests"] == 1 and s["goodput"] == 0.5 and s["goodput_fraction"] == pytest.approx(1 / 3, abs=1e-4)
    assert s["cache_hit_share"] == 0.5 and s["requests_by_tier"] == {"small": 2}
    assert s["output_token_throughput"] == 5.5
    assert bench_serving._inter_token_latencies([0.0, 1.0, 2.0], 5) == ([0.5, 0.5], True)


# ---- end to end against a gateway --------------------------------------------------------------


@pytest.fixture(scope="module")
def gateway(tiny_path):
    # 16 tokens per step: three step programs to compile (sequences 1, 2, 4) instead of six
    limits = Limits(default_max_tokens=16)
    srv = tiny_gateway(tiny_path, {"max_num_batched_tokens": 16}, limits=limits, cache_enabled=False)
    yield srv
    srv.stop()


def test_bench_serving_end_to_end(gateway, tmp_path, capsys):
    out = tmp_path / "serving.json"
    # The tiny model's tokenizer is close to one token per byte and its context is 256: questions only.
    rc = bench_serving.main(
        [
            "--url",
            gateway.url,
            "--model",
            "auto",
            "--request-rate",
            "20",
            "--num-prompts",
            "20",
            "--seed",
            "5",
            "--prompt-len-dist",
            "fixed:1",
            "--max-tokens-dist",
            "uniform:2,12",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(out.read_text())
    assert report["completed"] == 20 and report["failed"] == 0, report["errors"]
    for metric in ("ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"):
        m = report[metric]
        assert m["n"] > 0 and 0 <= m["p50"] <= m["p90"] <= m["p99"], (metric, m)
    assert report["ttft_ms"]["p99"] <= report["e2e_ms"]["p99"]
    assert report["completion_tokens"] <= report["max_tokens_requested"]
    assert (
        report["output_token_throughput"] > 0 and report["total_token_throughput"] > report["output_token_throughput"]
    )
    assert sum(report["requests_by_tier"].values()) == 20 and set(report["requests_by_tier"]) == {"tiny"}
    assert report["cache_hit_share"] == 0.0  # cache off in this gateway
    for key in ("goodput", "goodput_fraction", "good_requests", "slo"):
        assert key in report
    assert 0 <= report["goodput"] <= report["request_throughput"]
    assert 0 <= report["goodput_fraction"] <= 1
    assert report["workload"]["kinds"]["fresh"] == 14  # 30% of 20 revisit an earlier question
    assert report["cpu"] == cpu_info()


# ---- every result names its CPU ----------------------------------------------------------------


def test_json_lines_name_the_cpu(capsys):
    """Scripts that print JSON lines put "cpu" on every line (bench_report reads them by "bench")."""
    line = load_script("bench_cache").summary("miss", [0.1, 0.3], cache="shipped")
    assert line["bench"] == "miss" and line["p50_ms"] == 200.0 and line["cpu"] == cpu_info()
    load_script("bench_engine").emit({"bench": "limits", "device": "cpu"})
    record = json.loads(capsys.readouterr().out)
    assert record == {"bench": "limits", "device": "cpu", "cpu": cpu_info()}


def test_bench_report_names_the_recorded_cpu(tmp_path):
    """The report's header names the CPUs its raw files recorded, or says they recorded none."""
    report = load_script("bench_report")
    assert report.recorded_cpus(tmp_path) == []
    (tmp_path / "old.json").write_text(json.dumps({"bench": "prefix_caching"}))
    assert report.recorded_cpus(tmp_path) == []
    here = cpu_info()
    (tmp_path / "a.json").write_text(json.dumps({"bench": "prefix_caching", "cpu": here}, indent=2))
    (tmp_path / "b.stdout.jsonl").write_text(
        "not json\n" + "".join(json.dumps({"bench": b, "cpu": here}) + "\n" for b in ("miss", "exact_hit"))
    )
    assert report.recorded_cpus(tmp_path) == [here]
    other = cpu_info("flags : avx2 fma f16c", machine="x86_64")
    (tmp_path / "c.json").write_text(json.dumps([{"workload": "w", "cpu": other}]))
    assert report.recorded_cpus(tmp_path) == [here, other]
    assert "kernel ISA path avx2, SIMD: avx2 fma f16c" in report.describe_cpu(other)


# ---- the accelerator run (scripts/bench_accelerator.sh, bench_accelerator.py, bench_kernel.py) -----

bench_kernel = load_script("bench_kernel")


def test_device_spec_table():
    """Spec-sheet peaks by jax device_kind; an unknown device gets none (fractions null, never a guess)."""
    expect = {
        "NVIDIA H200": (4800, 989),
        "NVIDIA H100 80GB HBM3": (3350, 989),
        "NVIDIA A100-SXM4-80GB": (2000, 312),
        "TPU v5 lite": (819, 197),
        "TPU v6 lite": (1640, 918),
        "TPU v5": (2760, 459),
        "TPU v5p": (2760, 459),
        "TPU v4": (1200, 275),
    }
    for kind, (gbs, tflops) in expect.items():
        spec = bench_kernel.device_spec(kind)
        assert spec is not None and (spec.hbm_gbs, spec.bf16_tflops) == (gbs, tflops), kind
    for kind in ("NVIDIA H100 PCIe", "cpu", "NVIDIA L4", "TPU v3"):
        assert bench_kernel.device_spec(kind) is None, kind


def test_decode_bytes_and_prefill_flops_by_hand():
    s = dict(seqs=2, kv_len=10, q_len=1, num_q_heads=4, num_kv_heads=2, head_dim=8, dtype="bfloat16", kv_dtype="float")
    b = bench_kernel.decode_bytes(s)
    assert b["kv_bytes"] == 2 * 10 * 2 * 8 * 2 * 2  # 20 tokens, 2 kv heads, 8 dims, K and V, 2 bytes
    assert b["scale_bytes"] == 0 and b["q_bytes"] == b["out_bytes"] == 2 * 4 * 8 * 2
    assert b["bytes"] == 1280 + 2 * 128
    q8 = bench_kernel.decode_bytes({**s, "kv_dtype": "int8"})
    assert q8["kv_bytes"] == 640 and q8["scale_bytes"] == 20 * 2 * 2 * 2  # a bf16 scale per token, kv head, K/V
    # a fresh 3-token prompt: rows see 1, 2, 3 keys -> 6; 4 FLOPs per key, head and dim
    p = dict(seqs=2, kv_len=3, q_len=3, num_q_heads=4, head_dim=8)
    assert bench_kernel.prefill_flops(p) == 4 * 2 * 6 * 4 * 8
    # a chunk of 2 on a context of 5: rows at positions 3 and 4 see 4 and 5 keys
    assert bench_kernel.prefill_flops({**p, "seqs": 1, "kv_len": 5, "q_len": 2}) == 4 * 9 * 4 * 8


def _cpu_env():
    return {**os.environ, "JAX_PLATFORMS": "cpu"}


def test_accelerator_scripts_refuse_to_time_the_cpu(tmp_path):
    """No accelerator: nothing is timed on the host CPU; the scripts say so and exit 2."""
    # Decided apart from the script, so a script that fails to refuse fails here instead of skipping.
    if shutil.which("nvidia-smi") or glob.glob("/dev/accel*") or os.environ.get("TPU_NAME"):
        pytest.skip("this machine has an accelerator: the script would time it")  # never on the dev/CI machines
    out = tmp_path / "acc.json"
    p = subprocess.run(
        ["bash", str(ROOT / "scripts" / "bench_accelerator.sh"), "--out", str(out)],
        cwd=ROOT,
        env=_cpu_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "nothing is timed on the host CPU" in p.stderr, p.stderr[-2000:]
    assert not out.exists()
    for script in ("bench_accelerator.py", "bench_kernel.py"):
        p = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / script), "--out", str(out)],
            cwd=ROOT,
            env=_cpu_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 2 and "nothing is timed on the host CPU" in p.stderr, (script, p.stderr[-2000:])
        assert not out.exists()


def test_bench_accelerator_smoke_on_cpu(tmp_path):
    """--smoke: every step of the accelerator run on tiny shapes (kernels interpreted, the engine on the
    tiny model), one JSON with every timing null. 30-70 s here."""
    out = tmp_path / "acc.json"
    tiny = write_tiny_llama(tmp_path)
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "bench_accelerator.py"),
            "--smoke",
            "--engine-gguf",
            str(tiny.path),
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=_cpu_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(out.read_text())
    assert json.loads(p.stdout) == report
    assert report["mode"] == "smoke" and report["complete"] and report["passed"]
    assert report["cpu"] == cpu_info()
    assert report["platform"] == "cpu" and report["peak"] is None
    assert report["jax_matches_pin"] == (report["jax_version"] == report["jax_pinned"])
    for check in ("attention_check", "quant_matmul_check"):
        cases = report[check]["cases"]
        assert report[check]["passed"] and {c["impl"] for c in cases} >= {
            "pallas_gpu_interpret",
            "pallas_tpu_interpret",
        }
    decode, prefill = report["decode"], report["prefill"]
    assert {(d["impl"], d["kv_dtype"]) for d in decode} >= {
        ("pallas_gpu_interpret", "float32"),
        ("pallas_tpu_interpret", "float32"),
        ("xla", "int8"),
    }
    for d in decode:
        assert "error" not in d, d
        assert d["median_ms"] is None and d["p90_ms"] is None and d["hbm_fraction"] is None
        assert d["bytes"] == d["kv_bytes"] + d["scale_bytes"] + d["q_bytes"] + d["out_bytes"] > 0
    for r in prefill:
        assert "error" not in r and r["flops"] > 0 and r["median_ms"] is None and r["flops_fraction"] is None
    engine = report["engine"]
    from runtime.worker.attention import resolve_backend

    # auto on CPU: the C++ kernel where it builds (a compiler is on this machine), else the XLA path
    assert engine["attention_backend"] == resolve_backend("auto", "cpu") and [
        b["batch"] for b in engine["batches"]
    ] == [1, 2]
    for b in engine["batches"]:
        assert "error" not in b, b
        assert b["output_tokens"] == b["batch"] * engine["output_tokens"]
        assert b["decode_tokens_per_s"] is None and b["output_tokens_per_s"] is None and b["mbu"] is None
    summary = report["summary"]
    assert summary["checks_passed"] and summary["decode_hbm_fraction"] is None
    assert summary["engine_decode_tokens_per_s"] == {"1": None, "2": None}


def test_bench_step_rows_times_every_decode_bucket(tiny_path, capsys):
    """scripts/bench_step_rows.py on the tiny model: a step time (median, p99) for each decode bucket (1, 2, 4, 8, 16
    rows), its time per row, and as cliffs exactly the row counts that cost more per row than the one before."""
    bench = load_script("bench_step_rows")
    assert bench.main(["--model", "tiny", "--gguf", tiny_path, "--weight-quant", "int8", "--runs", "2"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["benchmark"] == "step_rows" and out["cpu"] == cpu_info()
    assert list(out["rows"]) == ["1", "2", "4", "8", "16"]
    per_row = [r["ms_per_row"] for r in out["rows"].values()]
    assert all(
        r["ms_p99"] >= r["ms"] > 0 and math.isclose(r["ms_per_row"], r["ms"] / int(k), abs_tol=0.01)
        for k, r in out["rows"].items()
    )
    assert out["cliffs"] == [k for k, a, b in zip(list(out["rows"])[1:], per_row, per_row[1:]) if b > a]
