"""Accelerator defaults, proven on CPU with faked platforms and memory stats: the serving dtype, the KV
budget from the device's memory (kv_cache_memory_fraction), and kv_calc's "how many sequences fit"."""

from __future__ import annotations

import json
import logging

import jax
import jax.numpy as jnp
import pytest

from gateway.config.gateway import ConfigError, load_config
from runtime import kv_calc
from runtime.api import EngineConfig
from runtime.core.kv_sizing import (
    DEFAULT_KV_CACHE_BYTES,
    KVShape,
    blocks_for_budget,
    kv_budget_from_memory,
    kv_bytes_per_block,
    max_concurrent_requests,
)
from runtime.engine.builder import plan_kv_cache
from runtime.engine.llm_engine import LLMEngine
from runtime.kv_calc import weight_bytes
from runtime.loading.gguf import load_gguf
from runtime.platform import platform_family, resolve_dtype
from runtime.worker.model_runner import params_to_device
from tests.support.engines import tiny_config
from tests.support.tiny_gguf import write_tiny_llama

GiB, MiB = 2**30, 2**20
SMOLLM2 = KVShape(num_layers=30, num_kv_heads=3, head_dim=64)


def fake_stats(limit: int, in_use: int):
    return lambda: {"bytes_limit": limit, "bytes_in_use": in_use}


def no_stats():
    raise AssertionError("memory stats must not be read here")


def smollm2_plan(platform: str, memory_stats, kv_dtype: str = "bfloat16", *, num_devices: int = 1, **config):
    """plan_kv_cache for SmolLM2's KV shape and ``EngineConfig(**config)`` on ``platform``."""
    return plan_kv_cache(
        EngineConfig(**config), SMOLLM2, kv_dtype, platform=platform, memory_stats=memory_stats, num_devices=num_devices
    )


# ---- dtype


@pytest.mark.parametrize(
    "platform,want",
    [("cpu", "float32"), ("gpu", "bfloat16"), ("cuda", "bfloat16"), ("rocm", "bfloat16"), ("tpu", "bfloat16")],
)
def test_auto_dtype_per_platform(platform, want):
    assert resolve_dtype(None, platform) == resolve_dtype("auto", platform) == want
    for explicit in ("float32", "bfloat16"):  # an explicit value is kept everywhere
        assert resolve_dtype(explicit, platform) == explicit


def test_platform_family():
    assert [platform_family(p) for p in ("cpu", "gpu", "cuda", "rocm", "tpu", "TPU")] == [
        "cpu",
        "gpu",
        "gpu",
        "gpu",
        "tpu",
        "tpu",
    ]
    assert platform_family() == "cpu"  # this machine


def test_engine_config_defaults_and_validation():
    cfg = EngineConfig()
    assert cfg.dtype is None and cfg.kv_cache_bytes is None and cfg.num_blocks is None
    assert cfg.kv_cache_memory_fraction == 0.9
    EngineConfig(dtype="auto")
    EngineConfig(kv_cache_memory_fraction=1.0)
    with pytest.raises(ValueError, match="dtype must be auto or one of"):
        EngineConfig(dtype="float16")
    for bad in (0, 0.0, -0.5, 1.01, True):
        with pytest.raises(ValueError, match=r"kv_cache_memory_fraction must be in \(0, 1\]"):
            EngineConfig(kv_cache_memory_fraction=bad)
    with pytest.raises(ValueError, match="kv_cache_bytes must be > 0"):
        EngineConfig(kv_cache_bytes=0)
    with pytest.raises(ValueError, match="num_blocks must be >= 2"):
        EngineConfig(num_blocks=1)


# ---- the KV budget


def test_budget_from_device_memory():
    # 0.5 x 16 GiB = 8 GiB the engine may use; 2 GiB in use after the weights -> 6 GiB for the KV cache
    assert kv_budget_from_memory(16 * GiB, 2 * GiB, 0.5) == 6 * GiB
    plan = smollm2_plan("tpu", fake_stats(16 * GiB, 2 * GiB), kv_cache_memory_fraction=0.5)
    # SmolLM2 bfloat16: 2 x 30 x 3 x 64 x 2 B = 23,040 B per token, x 16 = 368,640 B per block;
    # 6 GiB = 6,442,450,944 B / 368,640 = 17,476.3 -> 17,476 blocks (the null block included)
    assert plan.budget_bytes == 6 * GiB
    assert plan.num_blocks == blocks_for_budget(SMOLLM2, "bfloat16", 16, 6 * GiB) == 17476
    assert "kv_cache_memory_fraction 0.5" in plan.source and "2.00 GiB in use" in plan.source


def test_budget_with_tensor_parallel_is_per_device():
    plan = smollm2_plan("gpu", fake_stats(16 * GiB, 2 * GiB), num_devices=4, kv_cache_memory_fraction=0.5)
    assert plan.budget_bytes == 4 * 6 * GiB


def test_no_room_left_by_the_weights():
    with pytest.raises(
        ValueError,
        match=r"15.00 GiB is in use after the weights loaded, and "
        r"kv_cache_memory_fraction 0.9 allows 14.40 GiB of the device's 16.00 GiB",
    ):
        kv_budget_from_memory(16 * GiB, 15 * GiB, 0.9)
    with pytest.raises(ValueError, match="no room for the KV cache"):
        smollm2_plan("cuda", fake_stats(GiB, GiB))
    with pytest.raises(ValueError, match="holds 1 blocks"):  # room, but for less than 2 blocks
        smollm2_plan("tpu", fake_stats(GiB, GiB - 400_000), kv_cache_memory_fraction=1.0)


def test_what_decides_the_budget():
    # CPU: the fixed default, the device is not asked
    plan = smollm2_plan("cpu", no_stats, "float32")
    assert plan.budget_bytes == DEFAULT_KV_CACHE_BYTES == 256 * MiB
    assert plan.num_blocks == blocks_for_budget(SMOLLM2, "float32", 16, 256 * MiB)
    # explicit kv_cache_bytes or num_blocks win over the fraction on an accelerator
    plan = smollm2_plan("tpu", no_stats, kv_cache_bytes=64 * MiB)
    assert (plan.budget_bytes, plan.source) == (64 * MiB, "kv_cache_bytes")
    plan = smollm2_plan("gpu", no_stats, num_blocks=100, kv_cache_bytes=64 * MiB)
    assert (plan.num_blocks, plan.budget_bytes) == (100, None)
    # an accelerator that reports no memory: the fixed default
    plan = smollm2_plan("gpu", lambda: None)
    assert plan.budget_bytes == DEFAULT_KV_CACHE_BYTES


# ---- the engine


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("tiny"))


def accelerator_config(tiny, **kw) -> EngineConfig:
    """The tiny engine with its KV cache sized from the (faked) device, not a block count."""
    return tiny_config(tiny.path, **{"num_blocks": None, "attention_backend": "xla", **kw})


def test_engine_on_a_faked_accelerator(tiny, caplog):
    caplog.set_level(logging.INFO, logger="runtime.engine")
    read = []

    def stats():
        read.append(True)
        return {"bytes_limit": 8 * MiB, "bytes_in_use": 2 * MiB}

    eng = LLMEngine(accelerator_config(tiny, kv_cache_memory_fraction=0.5), platform="gpu", memory_stats=stats)
    shape = KVShape.of(eng.model_config)
    # 0.5 x 8 MiB - 2 MiB = 2 MiB, less the step's working memory at its largest bucket (compiled first);
    # tiny bfloat16: 2 x 2 layers x 2 kv heads x 16 x 2 B x 16 tokens = 4 KiB a block
    step = eng.kv_cache_plan.step_bytes
    assert read == [True] and step > 0 and eng.kv_cache_plan.budget_bytes == 2 * MiB - step
    blocks = (2 * MiB - step) // 4096
    assert eng.num_blocks == blocks_for_budget(shape, "bfloat16", 16, 2 * MiB - step) == blocks
    assert eng.dtype == eng.kv_dtype == "bfloat16"
    assert eng.runner.params["layers_0"]["attn"]["q"]["kernel"].dtype == jnp.bfloat16
    assert eng.runner.kv_caches[0][0].dtype == jnp.bfloat16 and eng.runner.kv_caches[0][0].shape[0] == blocks
    assert eng.runner.kv_cache_bytes() == blocks * kv_bytes_per_block(shape, "bfloat16", 16)
    assert f"KV cache: {blocks} blocks of 16 tokens" in caplog.text and "kv_cache_memory_fraction 0.5" in caplog.text
    assert "for the compiled step's working memory" in caplog.text


def test_the_step_working_memory_grows_with_the_bucket(tiny):
    # More sequences a step: the sampler's [S, vocab] rows and the step's activations grow, and the cache
    # gets what they leave.
    stats = fake_stats(64 * MiB, 2 * MiB)
    small = LLMEngine(accelerator_config(tiny, max_num_seqs=2), platform="tpu", memory_stats=stats).kv_cache_plan
    big = LLMEngine(
        accelerator_config(tiny, max_num_seqs=64, max_num_batched_tokens=256), platform="tpu", memory_stats=stats
    ).kv_cache_plan
    assert 0 < small.step_bytes < big.step_bytes
    assert big.budget_bytes == small.budget_bytes - (big.step_bytes - small.step_bytes)


def test_a_step_that_leaves_no_room_is_refused_with_the_figures(tiny):
    # Room for the weights, not for the step's working memory at 64 sequences: refused before the cache
    # is allocated, naming the step's figure and the settings that shrink it.
    config = accelerator_config(tiny, max_num_seqs=64, max_num_batched_tokens=256, kv_cache_memory_fraction=0.5)
    with pytest.raises(
        ValueError, match=r"the step's working memory at its largest bucket takes [\d.]+ MiB.*lower max_num_seqs"
    ):
        LLMEngine(config, platform="tpu", memory_stats=fake_stats(8 * MiB, 3 * MiB + 900 * 1024))


def test_engine_on_cpu_keeps_float32(tiny):
    eng = LLMEngine(accelerator_config(tiny, num_blocks=8), memory_stats=no_stats)
    assert eng.platform == "cpu" and eng.dtype == eng.kv_dtype == "float32"
    assert eng.runner.kv_caches[0][0].dtype == jnp.float32
    # the KV fingerprint (prefix-cache salt, KV transfer check) names the resolved dtype, as before
    assert "|float32|float32|" in eng.kv_fingerprint


def test_engine_without_room_names_the_option(tiny):
    with pytest.raises(ValueError, match="kv_cache_memory_fraction 0.5 allows 4.0 MiB"):
        LLMEngine(
            accelerator_config(tiny, kv_cache_memory_fraction=0.5),
            platform="tpu",
            memory_stats=fake_stats(8 * MiB, 7 * MiB),
        )


# ---- kv_calc: how many sequences of length L fit on a device


def run_kv_calc(capsys, *args) -> tuple[int, dict | None, str]:
    rc = kv_calc.main(list(args))
    out, err = capsys.readouterr()
    return rc, (json.loads(out) if out.strip() else None), err


def test_kv_calc_hypothetical_device(tiny, capsys):
    rc, s, err = run_kv_calc(
        capsys,
        "--gguf",
        str(tiny.path),
        "--context",
        "4096",
        "--device-memory-gib",
        "141",
        "--weights-gib",
        "1",
        "--memory-fraction",
        "0.9",
        "--kv-dtype",
        "int8",
    )
    assert rc == 0
    shape = KVShape.of(load_gguf(tiny.path).config)
    budget = int(0.9 * 141 * GiB) - GiB  # exactly what the engine computes with these memory stats
    assert s["budget_bytes"] == s["device"]["budget_bytes"] == budget
    assert s["blocks_in_budget"] == blocks_for_budget(shape, "int8", 16, budget)
    assert s["max_concurrency_in_budget"] == max_concurrent_requests(shape, "int8", 16, budget, 4096)
    plan = plan_kv_cache(
        EngineConfig(kv_dtype="int8"), shape, "int8", platform="cuda", memory_stats=fake_stats(141 * GiB, GiB)
    )
    assert plan.num_blocks == s["blocks_in_budget"]
    assert f"{s['max_concurrency_in_budget']} sequences of 4096 tokens" in err


def test_kv_calc_estimates_the_weights(tiny, capsys):
    rc, s, _ = run_kv_calc(capsys, "--gguf", str(tiny.path), "--context", "256", "--device-memory-gib", "1")
    assert rc == 0
    loaded = load_gguf(tiny.path)
    served = sum(x.nbytes for x in jax.tree.leaves(params_to_device(loaded.params, jnp.bfloat16)))
    assert s["device"]["weights_bytes"] == weight_bytes(loaded.config, "bfloat16") == served
    assert s["device"]["dtype"] == "bfloat16"  # a device's default
    assert s["budget_bytes"] == int(0.9 * GiB) - served


def test_kv_calc_this_device_on_cpu(tiny, capsys):
    rc, s, err = run_kv_calc(capsys, "--gguf", str(tiny.path), "--context", "1024", "--device")
    assert rc == 0 and s["budget_bytes"] == DEFAULT_KV_CACHE_BYTES and s["device"]["device"] == "cpu"
    assert "fixed default" in err


def test_kv_calc_plain_output_unchanged(tiny, capsys):
    rc, s, _ = run_kv_calc(capsys, "--gguf", str(tiny.path), "--context", "100", "--budget-gib", "0.5")
    assert rc == 0 and "device" not in s and s["budget_bytes"] == GiB // 2


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--device", "--budget-gib", "1"], "not both"),
        (["--device-memory-gib", "80", "--memory-fraction", "0"], "kv_cache_memory_fraction must be in"),
        (["--device-memory-gib", "1", "--weights-gib", "2"], "no room for the KV cache"),
        (["--weights-gib", "1"], "--weights-gib"),
    ],
)
def test_kv_calc_errors(tiny, capsys, args, msg):
    rc, _, err = run_kv_calc(capsys, "--gguf", str(tiny.path), "--context", "100", *args)
    assert rc == 2 and msg in err


# ---- where the keys come in: gateway YAML and the runtime server's flags


def test_gateway_yaml_accepts_the_fraction():
    cfg = load_config(
        overrides={"models": [{"name": "m", "engine": {"kv_cache_memory_fraction": 0.8, "dtype": "auto"}}]}
    )
    assert cfg.models[0].engine.kv_cache_memory_fraction == 0.8
    with pytest.raises(ConfigError, match=r"models\[0\].engine.*kv_cache_memory_fraction"):
        load_config(overrides={"models": [{"name": "m", "engine": {"kv_cache_memory_fraction": 1.5}}]})


def test_server_flags_leave_the_budget_to_the_device():
    from runtime.serving.server import build_parser, config_from_args

    cfg = config_from_args(build_parser().parse_args(["--model", "smollm2-135m"]))
    assert cfg.kv_cache_bytes is None and cfg.dtype == "auto" and cfg.kv_cache_memory_fraction == 0.9
    cfg = config_from_args(
        build_parser().parse_args(
            ["--model", "smollm2-135m", "--kv-cache-mb", "32", "--kv-cache-memory-fraction", "0.5"]
        )
    )
    assert cfg.kv_cache_bytes == 32 * MiB and cfg.kv_cache_memory_fraction == 0.5
    with pytest.raises(ValueError, match="--kv-cache-memory-fraction"):
        config_from_args(build_parser().parse_args(["--model", "smollm2-135m", "--kv-cache-memory-fraction", "2"]))
