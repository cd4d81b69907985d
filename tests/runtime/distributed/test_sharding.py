"""Tensor parallelism (runtime/distributed/sharding.py): sharded engines give the single-device engine's outputs.

The comparisons run ``tests/support/sharding_compare.py`` in a subprocess with emulated CPU devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=N``; a pytest worker's JAX already has one):
the real ``LLMEngine`` (scheduler, paged KV cache, continuous batching of several requests with
chunked prefill) on one device and tensor-parallel, greedy tokens and teacher-forced logits
(``LLMEngine.score``) compared, plus the layout of the sharded parameters and KV cache, so that a
transform that leaves everything on one device fails. The partition rules, the kv-head repetition
and the configuration errors are checked in-process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

from runtime.api import EngineConfig
from runtime.distributed.sharding import LAYER_RULES, VOCAB_RULES, TensorParallel, spec_for, valid_degrees
from runtime.models.config import ModelConfig
from runtime.quant.weights import quantize_params
from tests.support.engines import tiny_engine
from tests.support.tiny_gguf import write_tiny_llama

ROOT = Path(__file__).resolve().parents[3]
COMPARE = ROOT / "tests" / "support" / "sharding_compare.py"
# One tolerance per dtype, elementwise (CONVENTIONS 4). Sharding changes only the order of float32
# sums (the all-reduces after o and down add per-device partial sums); measured max |diff|: tiny
# models 2e-5 on logits up to 11, SmolLM2 1.3e-4 on logits up to 35. The difference is absolute,
# set by the hidden states' scale through 30 layers, not by the logit it lands on: a rerun measured
# 1.27e-4 on a logit of 0.22, past the old atol of 1e-4 (which sat below its own measured maximum and
# passed only while the worst element happened to be a large logit). atol 2e-4 covers the measured
# maximum with margin; a wrong shard or a missing all-reduce moves logits by O(1).
TOLERANCE = {"float32": dict(rtol=2e-5, atol=2e-4)}


def compare(*args: str, timeout: int = 600) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, str(COMPARE), *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def assert_same_outputs(result: dict, tp: int) -> None:
    single, sharded = result["single"], result[f"tp{tp}"]
    assert sharded["tokens"] == single["tokens"]  # every request's greedy tokens, in order
    assert all(len(t) > 0 for t in single["tokens"])
    assert sharded["steps"] == single["steps"]  # the same schedule: batching is unchanged
    got, want = np.array(sharded["logits"]), np.array(single["logits"])
    tolerance = dict(TOLERANCE["float32"])
    if "single_float_cache" in result:
        # An 8-bit cache rounds each K and V element to a code: the float32 order change above can put an
        # element on the other side of a rounding boundary, one code step (1/127 of its token's largest
        # value) apart, and the rows after it move by that. Such a flip is part of the cache's own rounding
        # error, so each row may move by as much as the 8-bit cache moves that row from an unquantized one
        # on the same tokens (``--float-cache-reference``). Measured (tiny Gemma 3, TP 4, int8, an Intel
        # Xeon): a flip moved rows 53-57 by up to 6.2e-3; the cache's own error there is 0.013-0.041 a row
        # (0.079 at most); a wrong shard moves logits by O(1).
        rounding = np.abs(want - np.array(result["single_float_cache"]["logits"])).max(axis=1, keepdims=True)
        allowed = tolerance["atol"] + rounding + tolerance["rtol"] * np.abs(want)
        worst = np.unravel_index(np.argmax(np.abs(got - want) - allowed), got.shape)
        assert (np.abs(got - want) <= allowed).all(), (
            f"row {worst[0]}: {got[worst]} vs {want[worst]}, allowed {allowed[worst]} (rounding {rounding[worst[0], 0]})"
        )
        return
    np.testing.assert_allclose(got, want, **tolerance)


def strip(spec: list) -> list:
    """A spec without trailing Nones (jit normalizes P(None, None, 'model', None) to that)."""
    while spec and spec[-1] is None:
        spec = spec[:-1]
    return spec


def assert_sharded_layout(layout: dict, tp: int, *, vocab_sharded: bool) -> None:
    for name, column in (
        ("layers_0/attn/q/kernel", True),
        ("layers_0/attn/k/kernel", True),
        ("layers_0/mlp/up/kernel", True),
        ("layers_0/attn/o/kernel", False),
        ("layers_0/mlp/down/kernel", False),
    ):
        leaf = layout[name]
        rows, cols = leaf["shape"]
        assert leaf["devices"] == tp, name
        assert strip(leaf["spec"]) == ([None, "model"] if column else ["model"]), name
        assert leaf["shard_shapes"] == [[rows, cols // tp] if column else [rows // tp, cols]], name
    norm = layout["layers_0/attn_norm/scale"]
    assert strip(norm["spec"]) == [] and norm["shard_shapes"] == [norm["shape"]]  # replicated
    embed = layout["embed"]
    V, D = embed["shape"]
    assert embed["shard_shapes"] == ([[V // tp, D]] if vocab_sharded else [[V, D]])
    kv = [v for k, v in layout.items() if k.startswith("kv/")]
    assert kv
    for leaf in kv:  # pages [P, page, KVH, D] (and int8 scales [P, page, KVH]): split on KVH
        assert strip(leaf["spec"]) == [None, None, "model"]
        shape = list(leaf["shape"])
        shape[2] //= tp
        assert leaf["shard_shapes"] == [shape] and leaf["devices"] == tp


# ---------------------------------------------------------------- sharded == single device


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    # 4 heads, 2 kv heads, MLP 128: TP=2 splits the kv heads, TP=4 repeats each on two devices.
    return write_tiny_llama(tmp_path_factory.mktemp("tiny_tp"))


def test_tiny_llama_tp2_tp4_equal_single_device(tiny_llama):
    result = compare("--gguf", str(tiny_llama.path), "--tp", "2", "4", "--collectives", "--compilation-cache")
    assert result["devices"] == 4
    for tp in (2, 4):
        assert_same_outputs(result, tp)
        assert_sharded_layout(result[f"tp{tp}"]["layout"], tp, vocab_sharded=False)  # 265 % tp != 0
        # Megatron's two all-reduces per layer (after o, after down) and nothing else: no gather of
        # the KV cache or of any weight, and the sampled tokens need no exchange either.
        assert result[f"tp{tp}"]["collectives"]["counts"] == {
            "all-reduce": 2 * tiny_llama.num_layers,
            "all-gather": 0,
            "all-to-all": 0,
            "collective-permute": 0,
            "reduce-scatter": 0,
        }
        # Attention is traced per device: its heads of q, its kv heads of the pages.
        kvh = result[f"tp{tp}"]["plan"]["num_kv_heads"]
        assert result[f"tp{tp}"]["attention_shapes"] == [
            {"q": [16, tiny_llama.num_heads // tp, tiny_llama.head_dim], "k_pages": [48, 8, kvh // tp, 16]}
        ]
    assert result["tp2"]["plan"]["num_kv_heads"] == 2  # split as it is
    assert result["tp4"]["plan"]["num_kv_heads"] == 4 and result["tp4"]["plan"]["source_num_kv_heads"] == 2
    print(
        {
            f"tp{tp}": float(np.abs(np.array(result[f"tp{tp}"]["logits"]) - np.array(result["single"]["logits"])).max())
            for tp in (2, 4)
        }
    )


def test_tiny_gemma3_tp4_int8_kv_pallas_equals_single_device(tmp_path):
    # Gemma 3: sliding-window and global layers (two attention functions), q/k norms, GeGLU; 2 kv
    # heads repeated to 4; an int8 KV cache (codes and scales both split by kv head); and the Pallas
    # kernel (interpret mode) inside shard_map, the path a GPU or TPU runs compiled.
    from tests.runtime.models.test_gemma3_tiny import write_tiny_gemma3

    tiny = write_tiny_gemma3(tmp_path)
    result = compare(
        "--gguf",
        str(tiny.path),
        "--tp",
        "4",
        "--kv-dtype",
        "int8",
        "--backend",
        "pallas_interpret",
        "--compilation-cache",
        "--float-cache-reference",
    )
    assert_same_outputs(result, 4)
    layout = result["tp4"]["layout"]
    assert_sharded_layout(layout, 4, vocab_sharded=False)
    assert {k for k in layout if k.startswith("kv/")} == {"kv/layer0/k.codes", "kv/layer0/k.scales"}


def test_tiny_llama_tp2_int8_kv_tpu_kernel_lanes_layout_equals_single_device(tiny_llama):
    # The TPU kernel (interpret mode) on the cache a TPU engine stores: LanePages [P, page, lanes], one lane group
    # per device (each device's one kv head of 16 padded to 128 lanes on its own), int8 codes in lanes and
    # scales split by kv head. The single device stores one group (2 x 16 -> 128 lanes): a different
    # layout, the same tokens.
    result = compare(
        "--gguf",
        str(tiny_llama.path),
        "--tp",
        "2",
        "--kv-dtype",
        "int8",
        "--backend",
        "pallas_tpu_interpret",
        "--compilation-cache",
        "--float-cache-reference",
    )
    assert_same_outputs(result, 2)
    layout = result["tp2"]["layout"]
    assert_sharded_layout(layout, 2, vocab_sharded=False)
    codes = [v for k, v in layout.items() if k.startswith("kv/layer0/k.codes")]
    assert len(codes) == 1 and codes[0]["shape"][2] == 2 * 128 and codes[0]["shard_shapes"][0][2] == 128
    assert result["tp2"]["attention_shapes"] == [
        {"q": [16, tiny_llama.num_heads // 2, tiny_llama.head_dim], "k_pages": [48, 8, 128]}
    ]


@pytest.mark.slow
def test_smollm2_tp3_equals_single_device():
    # The real SmolLM2-135M: 9 heads, 3 kv heads, MLP 1536, vocabulary 49,152: TP=3 divides all of
    # them, so every kv head lives on one device and the tied embedding / LM head is vocab-sharded.
    result = compare("--model", "smollm2-135m", "--tp", "3", "--prompts", "3", "--collectives", "--compilation-cache")
    assert_same_outputs(result, 3)
    assert_sharded_layout(result["tp3"]["layout"], 3, vocab_sharded=True)
    assert result["tp3"]["plan"]["num_kv_heads"] == 3
    # At least the two all-reduces per layer (30 layers); the vocabulary-sharded embedding and head
    # add a few more, and the sampler reduces over the vocabulary-split logits: only per-sequence
    # [S, ...] data may move between devices (gathered or permuted), never a weight or the KV cache.
    coll = result["tp3"]["collectives"]
    S = coll["bucket"][1]
    assert coll["counts"]["all-reduce"] >= 2 * 30
    assert all(len(shape) == 2 and shape[0] == S for shape in coll["moved_shapes"]), coll["moved_shapes"]


# ---------------------------------------------------------------- rules and transforms, in-process


def model_config(**kw) -> ModelConfig:
    """SmolLM2's dimensions, ``kw`` overriding them."""
    sizes = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_layers=30, max_position_embeddings=2048)
    heads = dict(num_heads=9, num_kv_heads=3, head_dim=64)
    return ModelConfig(**{"architecture": "llama", "name": "smollm2-like", **sizes, **heads, **kw})


def test_partition_rules_by_path():
    rules = tuple(LAYER_RULES) + tuple(VOCAB_RULES)
    expect = {
        "layers_3/attn/q/kernel": P(None, "model"),
        "layers_3/attn/k/kernel": P(None, "model"),
        "layers_3/attn/v/kernel": P(None, "model"),
        "layers_12/mlp/gate/kernel": P(None, "model"),
        "layers_12/mlp/up/kernel": P(None, "model"),
        "layers_0/attn/o/kernel": P("model", None),
        "layers_0/mlp/down/kernel": P("model", None),
        "embed": P("model", None),
        "lm_head/kernel": P(None, "model"),
        "layers_0/attn_norm/scale": P(),
        "layers_0/attn/q_norm/scale": P(),
        "final_norm/scale": P(),
    }
    for path, spec in expect.items():
        assert spec_for(path, rules) == spec, path
    assert spec_for("embed", LAYER_RULES) == P()  # vocab rules are dropped when N does not divide V


def test_replicated_kv_heads_keep_each_query_heads_kv():
    # 8 query heads, 2 kv heads, head_dim 2, TP=4: kv heads [a, b] -> [a, a, b, b]; query heads 0-1
    # (device 0) and 2-3 (device 1) read a, as before (group 4: heads 0-3 -> kv 0).
    cfg = model_config(hidden_size=16, num_heads=8, num_kv_heads=2, head_dim=2, intermediate_size=32, vocab_size=10)
    tp = TensorParallel(
        mesh=None,
        config=model_config(
            hidden_size=16, num_heads=8, num_kv_heads=4, head_dim=2, intermediate_size=32, vocab_size=10
        ),
        source_num_kv_heads=2,
        rules=LAYER_RULES,
    )
    k = np.arange(16 * 4, dtype=np.float32).reshape(16, 4)  # [D, 2 heads * Dh 2]
    v = -k
    params = {
        "embed": np.zeros((10, 16)),
        "layers_0": {"attn": {"k": {"kernel": k}, "v": {"kernel": v}, "q": {"kernel": np.ones((16, 16))}}},
    }
    out = tp.replicate_kv_heads(params)
    wide = out["layers_0"]["attn"]["k"]["kernel"]
    assert wide.shape == (16, 8)
    np.testing.assert_array_equal(wide, np.concatenate([k[:, 0:2], k[:, 0:2], k[:, 2:4], k[:, 2:4]], axis=1))
    np.testing.assert_array_equal(out["layers_0"]["attn"]["v"]["kernel"], -wide)
    assert out["layers_0"]["attn"]["q"]["kernel"] is params["layers_0"]["attn"]["q"]["kernel"]
    assert params["layers_0"]["attn"]["k"]["kernel"].shape == (16, 4)  # the input is not modified
    for h in range(cfg.num_heads):  # query head h: original kv head h // 4, served kv head h // 2
        served = h // (cfg.num_heads // 4)
        np.testing.assert_array_equal(wide[:, served * 2 : (served + 1) * 2], k[:, (h // 4) * 2 : (h // 4 + 1) * 2])


class FakeDevice:
    platform = "cpu"


def test_plan_accepts_and_rejects_by_model_shape():
    devices = [FakeDevice()] * 9
    cfg = model_config()
    assert valid_degrees(cfg) == [1, 3]  # 9 heads and MLP 1536: 3 divides both, 9 does not divide 1536
    assert TensorParallel.plan(cfg, 1) is None
    with pytest.raises(ValueError, match=r"tensor_parallel=2 .*9 attention heads \(num_heads\); valid values: 1, 3"):
        TensorParallel.plan(cfg, 2, devices=devices)
    with pytest.raises(ValueError, match=r"MLP width 100 \(intermediate_size\)"):
        TensorParallel.plan(model_config(intermediate_size=100), 3, devices=devices)
    with pytest.raises(ValueError, match=r"3 kv heads \(num_kv_heads\) can neither be split 2 ways nor repeated"):
        TensorParallel.plan(model_config(num_heads=12), 2, devices=devices)
    with pytest.raises(ValueError, match="weight_quant 'none'"):
        TensorParallel.plan(cfg, 3, weight_quant="int8", devices=devices)
    with pytest.raises(ValueError, match=r"needs 3 devices; JAX sees 1 .*xla_force_host_platform_device_count=3"):
        TensorParallel.plan(cfg, 3, devices=devices[:1])


def test_quantized_weights_are_rejected_by_the_transform():
    tp = TensorParallel(mesh=None, config=model_config(), source_num_kv_heads=3, rules=LAYER_RULES)
    params = quantize_params({"layers_0": {"attn": {"q": {"kernel": np.ones((64, 64), np.float32)}}}}, "int8")
    with pytest.raises(TypeError, match="layers_0/attn/q/kernel is a QuantizedMatrix"):
        tp.param_specs(params)


def test_engine_config_errors(tiny_llama):
    with pytest.raises(ValueError, match="tensor_parallel must be >= 1; got 0"):
        EngineConfig(tensor_parallel=0)
    # This pytest process has one CPU device: the message says how to emulate more.
    with pytest.raises(ValueError, match="tensor_parallel=2 needs 2 devices.*XLA_FLAGS"):
        tiny_engine(tiny_llama.path, tensor_parallel=2, num_blocks=8)
    with pytest.raises(ValueError, match=r"tensor_parallel=3 .*4 attention heads \(num_heads\); valid values: 1, 2, 4"):
        tiny_engine(tiny_llama.path, tensor_parallel=3, num_blocks=8)


def test_server_flag():
    from runtime.serving.server import build_parser, config_from_args

    args = build_parser().parse_args(["--model", "smollm2-135m", "--tensor-parallel", "3"])
    assert config_from_args(args).tensor_parallel == 3
    assert config_from_args(build_parser().parse_args(["--model", "smollm2-135m"])).tensor_parallel == 1
