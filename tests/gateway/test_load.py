"""The load test, shortened for ``make test``: 64 streaming clients for 15 s against a real
``python -m gateway`` process (SmolLM2 in-process, the semantic cache on a file store), through
``scripts/load_test.py``'s own functions. Same properties as the 60 s run in docs/RELIABILITY.md:
only completed answers or explicit 429/503 with Retry-After, p99 TTFT reported, every KV block back
in the pool afterwards, memory back near its idle level, SIGTERM -> exit 0.

The tier's capacity is 16 here (make serve's is 64) so that 64 clients overflow it: the bounded
admission is exercised, not just allowed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support.scripts import load_script

load_test = load_script("load_test")

# The engine shape of tests/gateway/test_tiers_e2e.py and tests/gateway/test_faults.py: one set of compiled programs.
ENGINE = {"dtype": "float32", "max_num_seqs": 8, "max_num_batched_tokens": 128, "max_model_len": 512, "kv_cache_mb": 32}


def gateway_config(tmp_path: Path, capacity: int = 16) -> Path:
    config = {
        "host": "127.0.0.1",
        "port": 0,
        "models": [{"name": "smollm2-135m", "preset": "smollm2-135m", "engine": ENGINE}],
        "tiers": {
            "tiers": [
                {
                    "name": "small",
                    "model": "smollm2-135m",
                    "capacity": capacity,
                    "timeout_s": 60,
                    "price": {"input_per_mtok": 0.1, "output_per_mtok": 0.4},
                }
            ],
            "router": {"default": "small"},
        },
        "limits": {"default_max_tokens": 32},
        "cache": {
            "enabled": True,
            "store": "file",
            "path": str(tmp_path / "cache.jsonl"),
            "embed_quantize": "int8",
            "threshold": 0.78,
            "cache_sampled": "always",
        },
    }
    path = tmp_path / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.parametrize(
    "url", ["http://10.1.2.3:8000", "http://0.0.0.0:8000", "http://[2001:db8::1]:80/", "ftp://127.0.0.1/", "not a url"]
)
def test_refuses_anything_but_loopback(url):
    with pytest.raises(ValueError):
        load_test.require_loopback(url)
    assert load_test.main(["--url", url, "--duration", "1", "--clients", "1", "--out", ""]) == 2


def test_loopback_is_accepted():
    assert load_test.require_loopback("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert load_test.require_loopback("http://localhost:1") == "http://localhost:1"
    assert load_test.require_loopback("http://[::1]:1") == "http://[::1]:1"


def test_bounded_arguments():
    with pytest.raises(ValueError):
        load_test.LoadConfig(clients=0)
    with pytest.raises(ValueError):
        load_test.LoadConfig(duration_s=7200)


@pytest.mark.slow
def test_64_streaming_clients_for_15_seconds(tmp_path):
    # shorter prompts and answers than the 60 s run's, from 4 keys
    workload = dict(keys=4, seed=1, max_tokens="lognormal:20,0.5,6,40", prompt_len="lognormal:16,0.5,4,64")
    timeouts = dict(request_timeout_s=120, settle_timeout_s=30)
    cfg = load_test.LoadConfig(clients=64, duration_s=15, warmup_burst=4, progress=False, **workload, **timeouts)
    report = load_test.run(cfg, config=str(gateway_config(tmp_path)), drain_timeout_s=30, ready_timeout_s=600)
    print(json.dumps({k: report[k] for k in ("requests", "latency_ms", "memory", "properties", "shutdown")}, indent=1))
    req = report["requests"]
    assert req["errors"] == 0, req["error_samples"]
    assert report["properties"] == {k: True for k in report["properties"]}, report["properties"]
    assert set(report["properties"]) >= {
        "no_errors",
        "rejections_explicit",
        "kv_blocks_free",
        "memory_returned",
        "clean_shutdown",
        "no_server_5xx",
        "all_clients_active",
    }
    assert req["completed"] >= 8
    assert req["rejected_503"] > 0, "64 clients on a capacity of 16: the admission bound must have been hit"
    assert req["rejected_without_retry_after_or_body"] == 0
    assert report["concurrency"]["clients_active"] == 64
    # the gateway's own count agrees: a stream whose client hung up after [DONE] is still a 200
    assert report["server"]["gateway_requests_by_status"] == {"200": req["completed"], "503": req["rejected_503"]}
    assert report["latency_ms"]["ttft"]["p99"] > 0
    assert all(
        e["kv_usage"] == 0 and e["running"] == 0 and e["waiting"] == 0
        for e in report["server"]["engines_after"].values()
    )
    mem = report["memory"]
    assert mem["idle_mib"] > 100 and mem["after_mib"] <= mem["allowed_after_mib"]
    assert report["shutdown"]["exit_code"] == 0
