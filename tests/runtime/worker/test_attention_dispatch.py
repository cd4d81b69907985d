"""Attention backend dispatch per platform (faked platform strings), and the engine step built from shapes only.

No accelerator is needed: ``resolve_backend`` takes the platform as a string, the kernels are replaced by
recording fakes where only the dispatch is under test, and the abstract step is lowered for "cpu".
"""

from __future__ import annotations

import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from runtime.api import EngineConfig
from runtime.engine.llm_engine import LLMEngine
from runtime.loading.gguf import load_gguf
from runtime.models.kv_cache import AttentionMetadata
from runtime.quant.kv import QuantizedPages, allocate_pages, split_pages
from runtime.worker import cpu_attention
from runtime.worker.attention import BACKENDS, make_attend_fn, resolve_backend
from runtime.worker.model_runner import DTYPES, KV_DTYPES, abstract_params, abstract_step, params_to_device
from tests.support.engines import tiny_config, tiny_engine
from tests.support.tiny_gguf import write_tiny_llama

PLATFORMS = ("cpu", "gpu", "cuda", "rocm", "tpu")
ERR = None  # the pair must fail with a ValueError naming attention_backend
# auto on CPU: the C++ kernel where it builds (g++ here), else the XLA path (test_auto_on_cpu_without_the_kernel).
CPU_AUTO = "cpu" if cpu_attention.kernel_available() else "xla"

# (backend, platform) -> the backend that runs, or ERR. Every pair is listed: a new name or platform must be added here.
TABLE = {
    "auto": {"cpu": CPU_AUTO, "gpu": "pallas_gpu", "cuda": "pallas_gpu", "rocm": "pallas_gpu", "tpu": "pallas_tpu"},
    "xla": dict.fromkeys(PLATFORMS, "xla"),
    "cpu": {"cpu": "cpu", "gpu": ERR, "cuda": ERR, "rocm": ERR, "tpu": ERR},
    "pallas": {"cpu": ERR, "gpu": "pallas_gpu", "cuda": "pallas_gpu", "rocm": "pallas_gpu", "tpu": "pallas_tpu"},
    "pallas_gpu": {"cpu": ERR, "gpu": "pallas_gpu", "cuda": "pallas_gpu", "rocm": "pallas_gpu", "tpu": ERR},
    "pallas_tpu": {"cpu": ERR, "gpu": ERR, "cuda": ERR, "rocm": ERR, "tpu": "pallas_tpu"},
    "pallas_gpu_interpret": dict.fromkeys(PLATFORMS, "pallas_gpu_interpret"),
    "pallas_tpu_interpret": dict.fromkeys(PLATFORMS, "pallas_tpu_interpret"),
    "pallas_interpret": dict.fromkeys(PLATFORMS, "pallas_gpu_interpret"),  # the old name
}


def test_table_covers_every_backend():
    assert set(TABLE) == set(BACKENDS)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_resolve_backend(backend, platform):
    want = TABLE[backend][platform]
    if want is ERR:
        with pytest.raises(ValueError, match="attention_backend") as exc:
            resolve_backend(backend, platform)
        msg = str(exc.value)
        assert repr(backend) in msg and "'xla'" in msg  # names the choice and says what would run
        family = "gpu" if platform in ("gpu", "cuda", "rocm") else platform
        if family != "cpu":  # the platform's own kernel is offered
            assert f"'pallas' (pallas_{family})" in msg
    else:
        assert resolve_backend(backend, platform) == want


def test_unknown_backend_and_platform():
    with pytest.raises(ValueError, match="attention_backend must be one of .*pallas_tpu"):
        resolve_backend("triton", "gpu")
    assert resolve_backend("auto", "metal") == "xla"  # another platform: the XLA path
    with pytest.raises(ValueError, match="attention_backend 'pallas'"):
        resolve_backend("pallas", "metal")
    assert resolve_backend("auto") == CPU_AUTO  # this machine is a CPU one


def test_auto_on_cpu_without_the_kernel(monkeypatch):
    """No compiler (the kernel does not build): auto runs the XLA path on CPU, and the error messages say so."""
    monkeypatch.setattr(cpu_attention, "kernel_available", lambda: False)
    assert resolve_backend("auto", "cpu") == "xla"
    assert resolve_backend("cpu", "cpu") == "cpu"  # asked for by name: it falls back inside (one warning)
    with pytest.raises(ValueError, match=r"'auto' \(xla here\)"):
        resolve_backend("pallas", "cpu")


def test_engine_config_names_the_option():
    with pytest.raises(ValueError, match="attention_backend must be one of"):
        EngineConfig(attention_backend="triton")
    for backend in BACKENDS:
        EngineConfig(attention_backend=backend)  # valid names pass; the platform is checked at start


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_llama(tmp_path_factory.mktemp("tiny"))


@pytest.mark.parametrize(
    "backend,platform",
    [
        ("pallas_tpu", None),
        ("pallas_gpu", None),
        ("pallas", None),
        ("pallas_tpu", "gpu"),
        ("pallas_gpu", "tpu"),
        ("pallas_tpu", "cuda"),
    ],
)
def test_engine_start_fails_on_a_backend_the_platform_cannot_run(tiny, backend, platform):
    cfg = tiny_config(tiny.path, attention_backend=backend, num_blocks=8)
    with pytest.raises(ValueError, match=f"attention_backend '{backend}'.*cannot run|attention_backend 'pallas'"):
        LLMEngine(cfg, platform=platform)


def test_engine_resolves_auto(tiny):
    eng = tiny_engine(tiny.path, num_blocks=8)
    assert eng.attention_backend == CPU_AUTO and eng.platform == "cpu"


# ---- dispatch: which function each backend calls, with which interpret flag (the kernels are faked)


def _fake_kernel(calls: list, name: str):
    def kernel(q, k_pages, v_pages, kv_lens, page_indices, cu_q_lens, num_seqs, **kw):
        calls.append((name, kw))
        return jnp.zeros_like(q)

    return kernel


def one_sequence(T: int) -> AttentionMetadata:
    """One sequence of ``T`` = 4 tokens (a first prefill) on page 1: the dispatch tests' metadata."""
    return AttentionMetadata(
        np.zeros(T, np.int32),
        np.array([T], np.int32),
        np.array([[1]], np.int32),
        np.array([0, T], np.int32),
        np.array([1], np.int32),
    )


@pytest.mark.parametrize(
    "backend,platform,kernel,interpret",
    [
        ("auto", "cpu", CPU_AUTO, None),
        ("cpu", "cpu", "cpu", None),
        ("xla", "tpu", "xla", None),
        ("pallas_tpu", "tpu", "tpu", False),
        ("auto", "tpu", "tpu", False),
        ("pallas_tpu_interpret", "cpu", "tpu", True),
        ("pallas_gpu", "cuda", "gpu", False),
        ("pallas", "gpu", "gpu", False),
        ("pallas_gpu_interpret", "cpu", "gpu", True),
        ("pallas_interpret", "cpu", "gpu", True),
    ],
)
def test_make_attend_fn_dispatch(monkeypatch, backend, platform, kernel, interpret):
    calls: list = []
    tpu_module = types.ModuleType("pallas_kernels.ragged_paged_attention.tpu")
    tpu_module.ragged_paged_attention_tpu = _fake_kernel(calls, "tpu")
    tpu_module.ragged_paged_attention_tpu_lanes = _fake_kernel(calls, "tpu_lanes")
    monkeypatch.setitem(sys.modules, "pallas_kernels.ragged_paged_attention.tpu", tpu_module)
    import pallas_kernels.ragged_paged_attention as rpa

    monkeypatch.setattr(rpa, "ragged_paged_attention", _fake_kernel(calls, "gpu"))
    monkeypatch.setattr(rpa, "ragged_paged_attention_xla", _fake_kernel(calls, "xla"))
    monkeypatch.setattr(cpu_attention, "ragged_paged_attention_cpu", _fake_kernel(calls, "cpu"))
    attend = make_attend_fn(backend, sm_scale=0.25, sliding_window=8, soft_cap=30.0, platform=platform)
    T, H, KVH, D, P, page = 4, 2, 1, 8, 3, 4
    md = one_sequence(T)
    pages = jnp.zeros((P, page, KVH, D))
    out = attend(jnp.ones((T, H, D)), pages, pages, md)
    assert out.shape == (T, H, D)
    [(name, kw)] = calls
    assert name == kernel
    want = dict(sm_scale=0.25, sliding_window=8, soft_cap=30.0, k_scales=None, v_scales=None)
    if interpret is not None:
        want["interpret"] = interpret
    assert kw == want  # no block_sizes: each kernel takes its table's for the device


@pytest.mark.parametrize("kv_dtype", [jnp.float32, jnp.int8])
def test_the_tpu_kernel_gets_lane_pages_as_they_are(monkeypatch, kv_dtype):
    """The engine's TPU cache (LanePages; 8-bit: LaneScales beside it) goes to the lanes entry untouched, with
    its kv head count; a [P, page, KVH, D] cache to the heads entry (test above)."""
    calls: list = []
    tpu_module = types.ModuleType("pallas_kernels.ragged_paged_attention.tpu")
    tpu_module.ragged_paged_attention_tpu = _fake_kernel(calls, "tpu")
    tpu_module.ragged_paged_attention_tpu_lanes = lambda q, k, v, *rest, **kw: calls.append((k, v, kw)) or q
    monkeypatch.setitem(sys.modules, "pallas_kernels.ragged_paged_attention.tpu", tpu_module)
    attend = make_attend_fn("pallas_tpu_interpret", sm_scale=0.25, platform="cpu")
    T, H, KVH, D, P, page = 4, 2, 2, 8, 3, 4
    pages = allocate_pages((P, page, KVH, D), kv_dtype, lane_groups=1)
    attend(jnp.ones((T, H, D), kv_dtype if kv_dtype == jnp.float32 else jnp.float32), pages, pages, one_sequence(T))
    [(k, v, kw)] = calls
    codes, scales = split_pages(pages)
    assert k is codes.data and k.shape == (P, page, 128) and kw["num_kv_heads"] == KVH
    if kv_dtype == jnp.int8:
        assert kw["k_scales"] is scales.data and scales.shape == (P, 1, 128)
    else:
        assert "k_scales" not in kw


# ---- the engine step from shapes only (for the lowering check)


def test_abstract_params_match_the_served_params(tiny):
    loaded = load_gguf(tiny.path)
    for name in ("float32", "bfloat16"):
        abstract = abstract_params(loaded.config, name)
        real = params_to_device(loaded.params, DTYPES[name])
        assert jax.tree.structure(abstract) == jax.tree.structure(real)
        assert [(a.shape, a.dtype) for a in jax.tree.leaves(abstract)] == [
            (r.shape, r.dtype) for r in jax.tree.leaves(real)
        ]


@pytest.mark.parametrize(
    "dtype,kv_dtype", [("float32", None), ("bfloat16", "bfloat16"), ("bfloat16", "int8"), ("bfloat16", "fp8")]
)
def test_abstract_step_lowers_for_cpu(tiny, dtype, kv_dtype):
    config = load_gguf(tiny.path).config
    T, S, P, page, width = 64, 8, 4096, 16, 32  # 4,096 pages: shapes only, nothing is allocated
    shapes = dict(num_tokens=T, num_seqs=S, num_pages=P, page_size=page, pages_per_seq=width)
    step, (params, kv, state, inputs) = abstract_step(
        config, attention_backend="auto", platform="cpu", dtype=dtype, kv_dtype=kv_dtype, **shapes
    )
    assert all(isinstance(x, jax.ShapeDtypeStruct) for x in jax.tree.leaves((params, kv, inputs)))
    want_kv = KV_DTYPES[kv_dtype or dtype]
    k = kv[0][0]
    if kv_dtype in ("int8", "fp8"):
        assert isinstance(k, QuantizedPages) and k.codes.dtype == want_kv and k.scales.shape == (P, page, 2)
    else:
        assert k.dtype == want_kv
    assert k.shape == (P, page, 2, 16) and len(kv) == config.num_layers
    assert inputs.tokens.shape == (T,) and inputs.metadata.page_indices.shape == (S, width)
    assert state.counts.shape == (S + 1, config.vocab_size)  # a sampler-state row per sequence, and the null row
    lowered = step.trace(params, kv, state, inputs).lower(lowering_platforms=("cpu",))
    out, out_kv, out_state = lowered.out_info
    assert out.tokens.shape == (S,) and out.tokens.dtype == jnp.int32 and out.top_ids.shape == (S, 20)
    assert jax.tree.structure(out_kv) == jax.tree.structure(kv)
    assert jax.tree.structure(out_state) == jax.tree.structure(state)


def test_abstract_step_of_gemma3_lowers_for_cpu(tmp_path):
    from tests.runtime.models.test_gemma3_tiny import write_tiny_gemma3

    config = load_gguf(write_tiny_gemma3(tmp_path).path).config
    shapes = dict(num_tokens=32, num_seqs=4, num_pages=256, page_size=16, pages_per_seq=8)
    step, args = abstract_step(config, attention_backend="xla", dtype="bfloat16", kv_dtype="int8", **shapes)
    step.trace(*args).lower(lowering_platforms=("cpu",))


def test_abstract_step_resolves_the_backend_for_the_target_platform(tiny):
    config = load_gguf(tiny.path).config
    kw = dict(num_tokens=16, num_seqs=1, num_pages=8, page_size=16, pages_per_seq=2)
    with pytest.raises(ValueError, match="attention_backend 'pallas_tpu'"):
        abstract_step(config, attention_backend="pallas_tpu", platform="cuda", **kw)
    with pytest.raises(ValueError, match="attention_backend 'pallas_gpu'"):
        abstract_step(config, attention_backend="pallas_gpu", platform="tpu", **kw)


@pytest.mark.parametrize(
    "device_kind, kv, kernel",
    [
        ("NVIDIA H100 80GB HBM3", "bfloat16", "mosaic_gpu"),  # Hopper, bfloat16 cache: the Mosaic GPU kernel
        ("NVIDIA H100 80GB HBM3", "int8", "gpu"),  # an 8-bit cache: Triton (Mosaic GPU reads bfloat16 only)
        ("NVIDIA A100-SXM4-80GB", "bfloat16", "gpu"),  # sm_80: no WGMMA/TMA, Triton
        ("", "bfloat16", "gpu"),  # an unknown GPU: Triton, which runs from sm_80
    ],
)
def test_the_compiled_gpu_kernel_is_chosen_by_compute_capability(monkeypatch, device_kind, kv, kernel):
    """``pallas_gpu`` (and ``auto`` on a GPU) picks per call, by the target's compute capability and the cache."""
    import pallas_kernels.devices as devices
    import pallas_kernels.ragged_paged_attention as rpa
    import pallas_kernels.ragged_paged_attention.mosaic_gpu as mgpu
    from runtime.quant.kv import QuantizedPages

    calls: list = []
    monkeypatch.setattr(rpa, "ragged_paged_attention", _fake_kernel(calls, "gpu"))
    monkeypatch.setattr(mgpu, "ragged_paged_attention_mosaic_gpu", _fake_kernel(calls, "mosaic_gpu"))
    monkeypatch.setattr(devices, "target_device_kind", lambda platform: device_kind)
    attend = make_attend_fn("auto", sm_scale=0.125, platform="cuda")
    T, H, KVH, D, P, page = 4, 2, 1, 64, 3, 16  # a shape the Mosaic GPU kernel's rule tiles
    md = one_sequence(T)
    pages = jnp.zeros((P, page, KVH, D), jnp.bfloat16)
    if kv == "int8":
        pages = QuantizedPages(jnp.zeros((P, page, KVH, D), jnp.int8), jnp.ones((P, page, KVH), jnp.bfloat16))
    attend(jnp.ones((T, H, D), jnp.bfloat16), pages, pages, md)
    [(name, kw)] = calls
    assert name == kernel
    assert kw["interpret"] is False and (kw["k_scales"] is None) == (kv == "bfloat16")
