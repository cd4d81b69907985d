"""The compile check (tools/compile_check.py): it fails on kernels broken on purpose, reports a
compiler that aborts, sizes the engine's KV cache as the engine does, and refuses fp8 below sm_89.

The broken-kernel tests run the device compilers, which live in ``.venvs/tpu`` and ``.venvs/cuda``
(``make compile-envs``). Without them they skip, except under ``make test``, which builds them and sets
``JAXSERVE_REQUIRE_COMPILERS=1``: there a missing compiler is a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pallas_kernels.devices import check_gpu_kv_dtype, gpu_compute_capability
from tools import compile_check as cc
from tools import lowering_check as lc

REQUIRED = os.environ.get("JAXSERVE_REQUIRE_COMPILERS") == "1"


def need_compiler(platform: str) -> None:
    if cc.compiler_python(platform) is None:
        if REQUIRED:
            pytest.fail(f"no {platform} compiler (make compile-envs builds it)")
        pytest.skip(f"no {platform} compiler here: `make compile-envs` builds {cc.VENVS[platform]}")


def run_check(*args: str, timeout: float = 900) -> tuple[int, list[dict]]:
    proc = subprocess.run(
        [sys.executable, "-m", "tools.compile_check", *args],
        cwd=cc.REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    records = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, records


# One small matmul shape on the command line: two cases (int8, int4) per kernel and target.
SHAPE = ("--no-engine", "--head-dim", "64", "--num-heads", "2", "--num-kv-heads", "2", "--tokens", "16")


def by_kernel(records: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in records:
        if not r.get("summary"):
            out.setdefault(r["kernel"], []).append(r)
    return out


@pytest.mark.slow
def test_tpu_compiler_fails_an_unaligned_dma_and_a_vmem_overflow():
    need_compiler("tpu")
    code, records = run_check("--registry", "tests.support.broken_kernels:KERNELS", "--platform", "tpu-v5e", *SHAPE)
    kernels = by_kernel(records)
    assert code == 1
    assert records[-1]["summary"] and records[-1]["failed"] == 4
    for r in kernels["unaligned_dma_tpu"]:
        assert not r["ok"] and "Mosaic failed to compile" in r["error"] and "128" in r["error"], r["error"]
    for r in kernels["vmem_overflow_tpu"]:
        assert not r["ok"] and "vmem" in r["error"].lower() and "exceed" in r["error"], r["error"]
    # The control: the real kernel compiles in the same run.
    assert [r["ok"] for r in kernels["quant_matmul_tpu"]] == [True, True]
    assert all("tpu_custom_call" in r["custom_calls"] for r in kernels["quant_matmul_tpu"])


@pytest.mark.slow
def test_a_tpu_cache_relaid_out_before_the_kernel_fails_the_check():
    """SmolLM2's attention (3 kv heads of 64) over the [P, page, KVH, D] cache: XLA relays every page out
    before the kernel, and the check fails it; the kernel over the engine's lanes layout passes beside it."""
    need_compiler("tpu")
    shape = ("--head-dim", "64", "--num-heads", "9", "--num-kv-heads", "3", "--page-size", "16", "--no-engine")
    code, records = run_check("--registry", "tests.support.broken_kernels:RELAYOUT", "--platform", "tpu-v5e", *shape)
    kernels = by_kernel(records)
    assert code == 1
    (bad,) = kernels["relaid_out_attention_tpu"]
    assert not bad["ok"] and "relaid out" in bad["error"] and bad["temp_share_of_kv"] >= cc.CACHE_TEMP_LIMIT
    (good,) = kernels["ragged_paged_attention_tpu"]
    assert good["ok"] and good["shape"]["lanes"] == 256 and good["temp_share_of_kv"] < cc.CACHE_TEMP_LIMIT


@pytest.mark.slow
def test_gpu_compiler_fails_a_block_too_big_for_shared_memory():
    need_compiler("cuda")
    code, records = run_check("--registry", "tests.support.broken_kernels:KERNELS", "--platform", "h100", *SHAPE)
    kernels = by_kernel(records)
    assert code == 1
    for r in kernels["smem_overflow_gpu"]:
        assert not r["ok"] and "Shared memory size limit exceeded" in r["error"], r["error"]
        assert str(cc.GPU_SPECS["h100"].shared_memory_per_block_optin) in r["error"]  # the target's own limit
    assert [r["ok"] for r in kernels["quant_matmul_gpu"]] == [True, True]


@pytest.mark.slow
def test_a_compiler_that_aborts_fails_the_cases_it_did_not_reach():
    need_compiler("tpu")
    code, records = run_check(
        "--registry", "tests.support.broken_kernels:ABORTING", "--platform", "tpu-v5e", *SHAPE, timeout=300
    )
    assert code == 1
    cases = [r for r in records if not r.get("summary")]
    assert len(cases) == 2 and not any(r["ok"] for r in cases)
    assert all("compiler process ended with status" in r["error"] for r in cases)
    assert records[-1] == {**records[-1], "total": 2, "ok": 0, "failed": 2}


def test_no_compiler_is_a_failure_that_says_how_to_get_one(monkeypatch):
    monkeypatch.setattr(cc, "compiler_python", lambda platform: None)
    import io

    out = io.StringIO()
    code = cc.main(["--platform", "tpu-v6e", *SHAPE, "--kernels", "quant_matmul_tpu"], out=out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code == 1
    assert [r["ok"] for r in records[:-1]] == [False, False]
    assert "make compile-envs" in records[0]["error"]


def test_worker_argv_replaces_the_platforms():
    argv = ["--platform", "h100", "--head-dim", "64", "--platform=a100", "--kernels", "quant"]
    assert cc._worker_argv(argv, ["tpu-v5e", "tpu-v6e"]) == [
        "--head-dim",
        "64",
        "--kernels",
        "quant",
        "--platform",
        "tpu-v5e",
        "--platform",
        "tpu-v6e",
        "--worker",
    ]


def test_engine_pages_are_the_engines_arithmetic():
    """fraction x HBM - bfloat16 weights, in blocks: recomputed by hand from kv_sizing's formula."""
    from runtime.api import DEFAULT_MEMORY_FRACTION
    from runtime.kv_calc import weight_bytes

    config = lc.model_config("smollm2-135m")
    target = cc.TARGETS["tpu-v5e"]
    shape = lc.EngineShape("smollm2-135m", page_size=16)
    budget = int(DEFAULT_MEMORY_FRACTION * target.hbm_bytes) - weight_bytes(config, "bfloat16")
    # K and V, bfloat16, in the TPU kernel's lanes layout: SmolLM2's 3 x 64 lanes padded to 256
    per_block = 2 * config.num_layers * 256 * 2 * 16
    assert cc.engine_pages(shape, target) == budget // per_block
    h100 = cc.TARGETS["h100"]  # a GPU stores [P, page, KVH, D]: no padding
    gpu_budget = int(DEFAULT_MEMORY_FRACTION * h100.hbm_bytes) - weight_bytes(config, "bfloat16")
    assert cc.engine_pages(shape, h100) == gpu_budget // (2 * config.num_layers * 3 * 64 * 2 * 16)
    # the step's working memory (compiled first) comes off the budget, as in the engine
    step = 3 * 2**30
    assert cc.engine_pages(shape, target, step) == (budget - step) // per_block
    assert cc.engine_pages(lc.EngineShape("smollm2-135m", num_pages=77), target) == 77  # a given count wins
    with pytest.raises(ValueError, match="step's working memory at its largest bucket takes 16.00 GiB"):
        cc.engine_pages(shape, target, 16 * 2**30)  # refused, as the engine refuses it at start-up


def test_engine_defaults_are_the_engine_configs_largest_bucket():
    from runtime.api import EngineConfig

    e = EngineConfig()
    shapes = cc.engine_defaults()
    assert [s.model for s in shapes] == ["smollm2-135m", "gemma3-270m"] * 2
    assert all(
        (s.tokens, s.max_seqs, s.page_size) == (e.max_num_batched_tokens, e.max_num_seqs, e.block_size)
        for s in shapes[:2]
    )
    assert all((s.tokens, s.max_seqs) == (2048, cc.BUSY_SEQS) == (2048, 256) for s in shapes[2:])  # max_num_seqs 256


def test_target_configs_carry_the_chips_limits():
    h100, a100 = cc.GPU_SPECS["h100"].target_config(), cc.GPU_SPECS["a100"].target_config()
    assert "major: 9 minor: 0" in h100 and "shared_memory_per_block_optin: 232448" in h100
    assert "major: 8 minor: 0" in a100 and 'device_description_str: "NVIDIA A100-SXM4-80GB"' in a100


def test_fp8_kv_is_refused_below_sm89_with_a_clear_error():
    assert gpu_compute_capability("NVIDIA A100-SXM4-80GB") == (8, 0)
    assert gpu_compute_capability("NVIDIA H100 80GB HBM3") == (9, 0)
    assert gpu_compute_capability("NVIDIA L4") == (8, 9)
    import jax.numpy as jnp

    with pytest.raises(ValueError, match=r"kv_dtype fp8 needs a GPU of compute capability 8\.9.*A100.*8\.0"):
        check_gpu_kv_dtype(jnp.float8_e4m3fn, "NVIDIA A100-SXM4-80GB")
    check_gpu_kv_dtype(jnp.float8_e4m3fn, "NVIDIA H100 80GB HBM3")  # Hopper compiles it
    check_gpu_kv_dtype(jnp.int8, "NVIDIA A100-SXM4-80GB")  # int8 needs nothing special
    check_gpu_kv_dtype(jnp.float8_e4m3fn, "a GPU nobody knows")  # unknown: let the compiler decide


def test_the_gpu_kernel_refuses_fp8_for_an_a100_before_compiling():
    """Cross-lowered for an A100 (an abstract mesh of that kind), the kernel raises at trace time: on a real
    A100 the compiler would abort the process instead."""
    from pallas_kernels.lowering import lower_for_cuda

    shape = lc.AttentionShape(64, 4, 2, 16, "fp8", tokens=16, max_seqs=4, max_model_len=64, num_pages=16)
    fn, args, _ = lc.build_attention_gpu(shape, lc.TARGETS["cuda"])
    with pytest.raises(ValueError, match="compute capability 8.9"):
        lower_for_cuda(fn, *args, device_kind="NVIDIA A100-SXM4-80GB")
    assert "triton" in lower_for_cuda(fn, *args, device_kind="NVIDIA H100 80GB HBM3")
