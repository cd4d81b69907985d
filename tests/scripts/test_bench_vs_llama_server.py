"""scripts/bench_vs_llama_server.py's own parts: the seeds (never shared between runs of one server), the
medians, ratios and checks it reports, the gateway config it writes for a variant, llama-server's build
commands per ISA and the plot. The servers themselves run in the script, not here (a llama.cpp build
takes ten minutes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
bench = load_script("bench_vs_llama_server")


def _run(rate, seed, **figures):
    base = {m: 1.0 for m in bench.METRICS}
    return {"rate": rate, "seed": seed, **base, **figures}


def test_every_run_of_a_server_gets_its_own_seed():
    plan = bench.run_seeds([1.0, 2.0, 4.0], 3)
    assert [r for r, _ in plan] == [1.0] * 3 + [2.0] * 3 + [4.0] * 3
    seeds = [s for _, s in plan]
    assert len(set(seeds)) == len(seeds)
    assert bench.WARMUP_SEED not in seeds
    # a plan that would cross the warm-up's seed steps over it
    crossing = bench.run_seeds([1.0], 4, first_seed=bench.WARMUP_SEED - 1)
    assert [s for _, s in crossing] == [bench.WARMUP_SEED - 1, *range(bench.WARMUP_SEED + 1, bench.WARMUP_SEED + 4)]


def test_medians_per_rate_and_ratios():
    runs = [
        _run(1.0, 3, goodput=0.5, tpot_p50_ms=10),
        _run(1.0, 4, goodput=0.9, tpot_p50_ms=30),
        _run(1.0, 5, goodput=0.7, tpot_p50_ms=20),
        _run(2.0, 6, goodput=1.0, tpot_p50_ms=None),  # a run whose answers were all one token: no TPOT
        _run(2.0, 7, goodput=2.0, tpot_p50_ms=40),
    ]
    med = bench.medians(runs)
    assert med["1.0"]["goodput"] == 0.7 and med["1.0"]["tpot_p50_ms"] == 20 and med["1.0"]["runs"] == 3
    assert med["2.0"]["goodput"] == 1.5 and med["2.0"]["tpot_p50_ms"] == 40
    peer = {"1.0": {**{m: 1.0 for m in bench.METRICS}, "goodput": 0.35, "tpot_p50_ms": 0}}
    r = bench.ratios(med, peer)
    assert r["1.0"]["goodput"] == 2.0
    assert r["1.0"]["tpot_p50_ms"] is None  # the peer's 0: no ratio
    assert all(v is None for v in r["2.0"].values())  # the peer did not run that rate


def test_checks_are_the_issue_targets():
    def med(goodput, tpot50, tpot99, tok_s):
        return {"goodput": goodput, "tpot_p50_ms": tpot50, "tpot_p99_ms": tpot99, "output_token_throughput": tok_s}

    peer = {"1.0": med(0.6, 20, 60, 30), "2.0": med(0.5, 60, 150, 60), "4.0": med(0.1, 50, 70, 140)}
    ours = {"1.0": med(0.7, 15, 80, 30), "2.0": med(1.5, 20, 101, 60), "4.0": med(0.1, 100, 150, 209)}
    c = bench.checks(ours, peer, "native")
    assert c["goodput_ge_llama_at_1"] and c["goodput_ge_llama_at_2"] and c["goodput_ge_llama_at_4"]  # ties pass
    assert c["tpot_p50_le_50ms_at_1"] and c["tpot_p99_le_100ms_at_1"]
    assert c["tpot_p50_le_50ms_at_2"] and not c["tpot_p99_le_100ms_at_2"]
    assert not c["output_tok_s_ge_1.5x_llama_at_4"]  # 209 < 1.5 * 140
    ours["4.0"]["output_token_throughput"] = 210
    assert bench.checks(ours, peer, "native")["output_tok_s_ge_1.5x_llama_at_4"]
    # AVX2: goodput at 1 and 2 only; a rate not run is None, not a pass
    c2 = bench.checks({"1.0": ours["1.0"]}, peer, "avx2")
    assert set(c2) == {"goodput_ge_llama_at_1", "goodput_ge_llama_at_2"}
    assert c2["goodput_ge_llama_at_1"] is True and c2["goodput_ge_llama_at_2"] is None


def test_gateway_config_variant(tmp_path):
    assert bench.gateway_config("shipped", tmp_path) == ROOT / "configs" / "gateway.yaml"
    path = bench.gateway_config("int8", tmp_path)
    data = yaml.safe_load(path.read_text())
    shipped = yaml.safe_load((ROOT / "configs" / "gateway.yaml").read_text())
    assert [m["engine"]["weight_quant"] for m in data["models"]] == ["int8"] * len(shipped["models"])
    assert Path(data["tiers"]).is_absolute() and Path(data["tiers"]).is_file()
    # everything else as shipped, and the gateway's own loader takes it
    from gateway.config.gateway import load_config

    cfg = load_config(path)
    assert cfg.models[0].engine.weight_quant == "int8"
    assert cfg.models[0].engine.max_num_seqs == shipped["models"][0]["engine"]["max_num_seqs"]


@pytest.mark.parametrize("isa", sorted(bench.ISA_BUILDS))
def test_llama_server_build_commands(isa, tmp_path):
    configure, build = bench.cmake_commands(tmp_path / "src", tmp_path / "b", isa)
    assert configure[:5] == ["cmake", "-S", str(tmp_path / "src"), "-B", str(tmp_path / "b")]
    assert "-DLLAMA_BUILD_SERVER=ON" in configure and "-DLLAMA_OPENSSL=OFF" in configure
    assert build[-4:] == ["--target", "llama-server", "-j", "2"]
    if isa == "avx2":  # the same ISA as our JAXSERVE_KERNEL_ISA=avx2: no AVX-512 on either side
        assert "-DGGML_NATIVE=OFF" in configure and "-DGGML_AVX512=OFF" in configure and "-DGGML_AVX2=ON" in configure
        assert bench.ISA_BUILDS[isa]["kernel_isa"] == "avx2"
    else:
        assert "-DGGML_NATIVE=ON" in configure and bench.ISA_BUILDS[isa]["kernel_isa"] is None
    assert bench.cache_dir(isa).name == f"{bench.LLAMA_VERSION}-{isa}"


def test_plot_writes_a_png(tmp_path):
    runs = [_run(1.0, 3), _run(2.0, 4, goodput=0.5)]
    server = {"medians": bench.medians(runs)}
    report = {
        "servers": {"llama-server": server, "ours": server},
        "cpu": {"model": "x", "logical_cores": 2},
        "isa_note": "native",
        "seeds_per_rate": 1,
    }
    out = tmp_path / "p.png"
    bench.plot(report, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    json.dumps(report)  # the report is JSON as it stands


def _report():
    runs = [_run(1.0, 3, goodput=0.8, output_token_throughput=60.0), _run(4.0, 4, goodput=0.1)]
    peer_runs = [_run(1.0, 3, goodput=0.4, output_token_throughput=30.0), _run(4.0, 4, goodput=0.2)]
    ours, peer = bench.medians(runs), bench.medians(peer_runs)
    return {
        "isa": "native",
        "isa_note": "native build",
        "cpu": {"model": "EPYC", "logical_cores": 2, "isa_path": "avx512"},
        "command": "python scripts/bench_vs_llama_server.py",
        "date": "2026-12-07",
        "seeds_per_rate": 1,
        "workload": {"num_prompts": 30},
        "rates": [1.0, 4.0],
        "servers": {"llama-server": {"medians": peer}, "ours (int8, as shipped)": {"medians": ours}},
        "ratios_vs_llama_server": {"ours (int8, as shipped)": bench.ratios(ours, peer)},
        "checks": {"ours (int8, as shipped)": bench.checks(ours, peer, "native")},
    }


def test_the_doc_section_shows_medians_ratios_and_checks(tmp_path):
    text = bench.markdown_section(_report(), "docs/results/bench_vs_llama_server_native.json")
    assert "| 1 | ours (int8, as shipped) | 0.80 (2.00x) |" in text
    assert "| 1 | llama-server | 0.40 |" in text and "60.0 (2.00x)" in text
    assert "goodput_ge_llama_at_1 **met**" in text and "goodput_ge_llama_at_4 **not met**" in text
    assert "goodput_ge_llama_at_2 **not run**" in text  # no 2 req/s run: not a pass
    assert "(results/bench_vs_llama_server_native.png)" in text


def test_the_doc_section_is_replaced_in_place_and_kept_by_bench_report(tmp_path):
    doc = tmp_path / "BENCHMARKS.md"
    doc.write_text("# Benchmarks\n\ntable\n")
    bench.update_doc(doc, "native", "first")
    bench.update_doc(doc, "avx2", "avx2 result")
    bench.update_doc(doc, "native", "second")
    text = doc.read_text()
    assert text.startswith("# Benchmarks\n\ntable\n") and "first" not in text
    assert text.index("second") < text.index("avx2 result")  # replaced where it was
    assert text.count(bench.SECTION_START.format(isa="native")) == 1
    report = load_script("bench_report")
    kept = report.kept_sections(text)
    assert "second" in kept and "avx2 result" in kept and "table" not in kept
