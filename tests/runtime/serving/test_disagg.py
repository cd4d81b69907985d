"""Prefill/decode disaggregation: KV export/import between engines, the wire format, and real processes.

In-process (a tiny random Llama, tests/support/tiny_gguf.py): a prefill engine exports each finished prefill, the
payload goes through the binary wire format, a decode engine with another block size imports it and
decodes; the greedy tokens must equal a colocated engine's, for float and int8 KV caches, with the decode
engine's prefix cache hit on a repeated prompt, and under a KV pool small enough to preempt. Then the real
thing: SmolLM2 in a ``--role prefill`` and a ``--role decode`` server process against an in-process
colocated engine, plus the HTTP errors of the new endpoints.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import struct
from pathlib import Path

import numpy as np
import pytest

from runtime.api import EngineConfig, RequestError, SamplingParams
from runtime.distributed.kv_transfer import KVTransferError, PrefilledKV, decode_prefilled, encode_prefilled
from runtime.engine.llm_engine import LLMEngine
from tests.support.engines import tiny_config, tiny_engine

TINY_PROMPTS = [
    "hello there",
    "the cat sat on the mat and then the dog came in and sat down on it too",
    "in",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z",
]


@pytest.fixture(scope="module")
def engines(tiny_path):
    """Per KV dtype: one engine that serves both as the colocated reference and as the prefill side
    (a prefill-only request is an ordinary request that stops after its first token), and a decode
    engine with another block size (the KV travels per token, not per page). Built once: compiling
    is most of what these tests cost."""
    cache = {}

    def get(kv_dtype: str = "float32"):
        if kv_dtype not in cache:
            cache[kv_dtype] = (
                tiny_engine(tiny_path, kv_dtype=kv_dtype, compilation_cache=True),
                tiny_engine(tiny_path, kv_dtype=kv_dtype, block_size=8, num_blocks=80, compilation_cache=True),
            )
        return cache[kv_dtype]

    return get


def prefill_all(engine: LLMEngine, prompts, params: SamplingParams) -> list[PrefilledKV]:
    ids = [engine.add_prefill_request(p, params) for p in prompts]
    done: dict[str, PrefilledKV] = {}
    while engine.has_unfinished_requests():
        for out in engine.step():
            assert out.finished and out.prefilled is not None and len(out.token_ids) == 1
            assert out.prefilled.first_token == out.token_ids[0]
            done[out.request_id] = out.prefilled
    assert not engine.handover.exports  # nothing left behind
    return [done[i] for i in ids]


def decode_all(engine: LLMEngine, payloads, params: SamplingParams) -> list[list[int]]:
    """Import each payload (through the wire format), decode to the end; token ids per request."""
    tokens: dict[str, list[int]] = {}
    for p in payloads:
        first = engine.add_prefilled_request(decode_prefilled(encode_prefilled(p)), params)
        tokens[first.request_id] = list(first.token_ids)
    order = list(tokens)
    while engine.has_unfinished_requests():
        for out in engine.step():
            tokens[out.request_id].extend(out.token_ids)
    assert engine.scheduler.kv_cache_manager.block_pool.usage == 0.0  # every block freed
    return [tokens[i] for i in order]


@pytest.mark.parametrize("kv_dtype", ["float32", "int8"])
def test_prefill_on_one_engine_decode_on_another_matches_colocated(engines, kv_dtype):
    params = SamplingParams(max_tokens=12, ignore_eos=True)
    prefill, decode = engines(kv_dtype)
    colocated = [o.token_ids for o in prefill.generate(TINY_PROMPTS, params)]
    payloads = prefill_all(prefill, TINY_PROMPTS, params)
    p = payloads[1]
    cfg = prefill.model_config
    assert p.k.shape == (cfg.num_layers, p.num_tokens, cfg.num_kv_heads, cfg.head_dim)
    assert (p.k_scales is not None) == (kv_dtype == "int8")
    assert p.num_cached_tokens >= 16  # the prefill side hit its own prefix cache (the generate above)
    hits = decode.stats().prefix_cache_hits
    assert decode_all(decode, payloads, params) == colocated
    # The same prompts again: the decode engine now finds their full blocks in its own prefix cache and
    # imports only the tokens after them; still the same tokens.
    assert decode_all(decode, payloads, params) == colocated
    assert decode.stats().prefix_cache_hits > hits


def test_imported_blocks_serve_later_local_requests(engines):
    """The decode engine registers imported blocks in its prefix cache: a plain local request with the
    same prompt reuses them and must still produce the colocated tokens (right KV under the right hash)."""
    params = SamplingParams(max_tokens=8, ignore_eos=True)
    prompt = TINY_PROMPTS[3] + " once more"
    prefill, decode = engines()
    want = prefill.generate([prompt], params)[0].token_ids
    decode_all(decode, prefill_all(prefill, [prompt], params), params)
    hits = decode.stats().prefix_cache_hits
    assert decode.generate([prompt], params)[0].token_ids == want
    assert decode.stats().prefix_cache_hits - hits >= 16


def test_decode_engine_preempts_and_recomputes_imported_requests(engines, tiny_path):
    # 7 usable blocks of 16 tokens for 4 requests of 40-80 tokens: imports wait for blocks and running
    # requests get preempted (recomputed locally from their tokens); the answers must not change.
    params = SamplingParams(max_tokens=40, ignore_eos=True)
    prefill, _ = engines()
    colocated = [o.token_ids for o in prefill.generate(TINY_PROMPTS, params)]
    payloads = prefill_all(prefill, TINY_PROMPTS, params)
    small = tiny_engine(tiny_path, num_blocks=8, compilation_cache=True)
    assert decode_all(small, payloads, params) == colocated
    assert small.stats().num_preemptions_total > 0
    # Aborting imports, admitted or still queued for blocks, frees everything.
    ids = [small.add_prefilled_request(p, params).request_id for p in payloads]
    small.step()
    assert small.scheduler.num_running >= 1 and len(small.scheduler.prefilled) >= 1
    for rid in ids:
        assert small.abort_request(rid)
    assert not small.has_unfinished_requests() and not small.handover.imports
    assert small.scheduler.kv_cache_manager.block_pool.usage == 0.0


def test_first_token_can_finish_the_request_and_seeded_sampling_continues(engines):
    prefill, decode = engines()
    [p] = prefill_all(prefill, ["hello there"], SamplingParams())
    first = decode.add_prefilled_request(p, SamplingParams(max_tokens=1))
    assert first.finished and first.finish_reason == "length" and first.completion_tokens == 1
    assert not decode.has_unfinished_requests() and not decode.handover.imports
    # Sampled with a seed: each token is drawn from (seed, position), so the split changes nothing.
    sp = SamplingParams(temperature=1.0, top_p=0.9, seed=7, max_tokens=10, ignore_eos=True)
    want = [o.token_ids for o in prefill.generate(TINY_PROMPTS, sp)]
    assert decode_all(decode, prefill_all(prefill, TINY_PROMPTS, sp), sp) == want


def test_import_refuses_kv_from_another_engine_and_bad_requests(engines):
    params = SamplingParams(max_tokens=4)
    prefill, decode = engines()
    [p] = prefill_all(prefill, ["hello there"], params)
    with pytest.raises(KVTransferError, match="computed by"):
        decode.add_prefilled_request(dataclasses.replace(p, fingerprint="other-model|float32"), params)
    with pytest.raises(KVTransferError, match="does not fit"):
        decode.add_prefilled_request(dataclasses.replace(p, k=p.k[:1], v=p.v[:1]), params)
    with pytest.raises(KVTransferError, match="does not fit"):
        decode.add_prefilled_request(dataclasses.replace(p, kv_dtype="int8"), params)
    with pytest.raises(RequestError, match="maximum context"):
        decode.add_prefilled_request(p, SamplingParams(max_tokens=200))
    with pytest.raises(RequestError, match="token ids"):
        decode.add_prefilled_request(dataclasses.replace(p, prompt_token_ids=[10**6] * p.num_tokens), params)
    assert not decode.has_unfinished_requests() and not decode.handover.imports


# ---------------------------------------------------------------- the wire format


def _payload(quantized: bool) -> PrefilledKV:
    rng = np.random.default_rng(0)
    if quantized:
        k, v = (rng.integers(-127, 128, (2, 5, 2, 4)).astype(np.int8) for _ in range(2))
        ks, vs = (rng.random((2, 5, 2)).astype(np.float32).astype(encode_dtype("bfloat16")) for _ in range(2))
        return PrefilledKV([1, 2, 3, 4, 5], 9, "m|int8", "int8", k, v, ks, vs)
    k, v = (rng.standard_normal((2, 5, 2, 4)).astype(np.float32) for _ in range(2))
    return PrefilledKV([1, 2, 3, 4, 5], 9, "m|float32", "float32", k, v, num_cached_tokens=4)


def encode_dtype(name):
    from runtime.distributed.kv_transfer import WIRE_DTYPES

    return WIRE_DTYPES[name]


@pytest.mark.parametrize("quantized", [False, True])
def test_wire_format_round_trip_is_exact(quantized):
    p = _payload(quantized)
    data = encode_prefilled(p)
    assert data[:4] == b"JXKV"
    q = decode_prefilled(data)
    assert (q.prompt_token_ids, q.first_token, q.fingerprint, q.kv_dtype, q.num_cached_tokens) == (
        p.prompt_token_ids,
        p.first_token,
        p.fingerprint,
        p.kv_dtype,
        p.num_cached_tokens,
    )
    for name, a in p.arrays().items():
        b = q.arrays()[name]
        assert b.dtype == a.dtype and b.shape == a.shape
        assert a.tobytes() == b.tobytes()  # bit-exact, bfloat16 scales included
    assert len(data) == q.nbytes + len(data) - sum(a.nbytes for a in p.arrays().values())


def _with_header(data: bytes, edit) -> bytes:
    (n,) = struct.unpack_from("<I", data, 8)
    header = json.loads(data[12 : 12 + n])
    edit(header)
    head = json.dumps(header).encode()
    return data[:8] + struct.pack("<I", len(head)) + head + data[12 + n :]


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d[:10], "shorter than"),
        (lambda d: b"NOPE" + d[4:], "not a KV payload"),
        (lambda d: d[:4] + struct.pack("<I", 99) + d[8:], "version 99"),
        (lambda d: d[:8] + struct.pack("<I", 10**9) + d[12:], "header length"),
        (lambda d: d[:-1], "runs past the end"),
        (lambda d: d + b"x", "left over"),
        (lambda d: _with_header(d, lambda h: h["arrays"][0].update(dtype="object")), "dtype 'object'"),
        (lambda d: _with_header(d, lambda h: h["arrays"][0].update(name="w")), "unknown array"),
        (lambda d: _with_header(d, lambda h: h["arrays"][0].update(nbytes=8)), "bytes declared"),
        (lambda d: _with_header(d, lambda h: h.update(first_token="a")), "first_token"),
        (lambda d: _with_header(d, lambda h: h.update(prompt_token_ids=[1, 2])), "must both be"),
        (lambda d: _with_header(d, lambda h: h["arrays"][1].update(name="k")), "appears twice"),
    ],
)
def test_wire_format_rejects_malformed_payloads(mutate, message):
    with pytest.raises(KVTransferError, match=message):
        decode_prefilled(mutate(encode_prefilled(_payload(False))))


# ---------------------------------------------------------------- real SmolLM2 in two server processes

SMOL_LIMITS = [
    "--max-num-seqs",
    "4",
    "--max-num-batched-tokens",
    "64",
    "--max-model-len",
    "512",
    "--kv-cache-mb",
    "16",
    "--no-warmup",
]  # the shapes test_runtime_server compiles: cache hits


@pytest.fixture(scope="module")
def smol_pair():
    """A ``--role prefill`` and a ``--role decode`` SmolLM2 server, started side by side."""
    from tests.support.gateway_server import free_port
    from tests.support.processes import ServerProcess

    port = free_port()
    prefill = ServerProcess(
        ["-m", "runtime.server", "--model", "smollm2-135m", "--role", "prefill", *SMOL_LIMITS],
        name="prefill",
        port=port,
        wait_ready=False,
        ready_timeout=300,
    )
    decode = ServerProcess(
        [
            "-m",
            "runtime.server",
            "--model",
            "smollm2-135m",
            "--role",
            "decode",
            "--prefill-url",
            f"http://127.0.0.1:{port}",
            *SMOL_LIMITS,
        ],
        name="decode",
        wait_ready=False,
        ready_timeout=300,
    )
    with prefill, decode:
        prefill.wait()
        decode.wait()
        yield prefill, decode


def _post(url: str, path: str, body=None, raw: bytes | None = None):
    from tests.support.gateway_server import http

    status, headers, data = http(url, body, raw=raw, path=path, timeout=120)
    return status, headers, data


def _lines(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode().splitlines()]


@pytest.mark.slow
def test_smollm2_prefill_and_decode_processes_give_the_colocated_greedy_tokens(smol_pair):
    """The prefill server is also a whole engine: its own /v1/generate is the colocated reference (same
    weights, config and programs). Every streamed line (text delta and token count) must be identical
    through the decode server, which got the prompt's KV from the prefill server over HTTP."""
    prefill, decode = smol_pair
    questions = [
        "What is the capital of France?",
        "Name three primary colours.",
        # ~170 prompt tokens: 11 blocks of 16, prefilled in 3 chunks of the 64-token budget
        "Summarise this in one sentence: "
        + " ".join(f"Step {i}: the engine schedules tokens, allocates KV blocks and samples." for i in range(12)),
    ]
    params = {"max_tokens": 20, "ignore_eos": True}
    prompts = []
    for q in questions:
        status, _, data = _post(decode.url, "/v1/encode", {"messages": [{"role": "user", "content": q}]})
        assert status == 200
        prompts.append(json.loads(data)["prompt_ids"])
    assert len(prompts[2]) > 160

    def generate(server, ids):
        status, _, data = _post(server.url, "/v1/generate", {"prompt_ids": ids, "params": params})
        assert status == 200, data
        return [(line["text"], line["n_tokens"], line["finish_reason"]) for line in _lines(data)]

    want = [generate(prefill, ids) for ids in prompts]
    # Concurrently through the decode server (its imports batch with each other's decode steps); the
    # third prompt twice: the second time the decode side finds its blocks in its own prefix cache.
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda ids: generate(decode, ids), [*prompts, prompts[2]]))
    assert got == [*want, want[2]]
    assert sum(n for _, n, _ in got[2]) == 20 and "".join(t for t, _, _ in got[2]).strip()
    stats = json.loads(_get(decode.url, "/v1/stats"))
    assert stats["role"] == "decode" and stats["num_running"] == 0 and stats["kv_cache_usage"] == 0.0

    # The gateway's client, unchanged, against the decode server.
    from gateway.backends.remote import RemoteBackend

    async def through_remote():
        backend = RemoteBackend("smol", decode.url)
        await backend.start()
        try:
            return [o async for o in backend.generate(prompts[0], SamplingParams(**params), "r1")]
        finally:
            await backend.close()

    outs = asyncio.run(through_remote())
    assert [(o.text, len(o.token_ids), o.finish_reason) for o in outs] == want[0]


def _get(url: str, path: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url + path, timeout=10) as r:
        return r.read()


@pytest.mark.slow
def test_smollm2_bad_input_to_the_disaggregated_endpoints_is_a_4xx_json_error(smol_pair):
    prefill, decode = smol_pair
    cases = [
        (prefill, "/v1/prefill", None, b"{not json", 400),
        (prefill, "/v1/prefill", {"prompt_ids": "hello"}, None, 400),
        (prefill, "/v1/prefill", {"prompt_ids": [1, 2], "params": {"bogus": 1}}, None, 400),
        (prefill, "/v1/prefill", {"prompt_ids": [1] * 600}, None, 400),  # longer than the context
        (prefill, "/v1/prefill", {"prompt_ids": [10**9]}, None, 400),  # not a token id
        (decode, "/v1/generate", {"prompt_ids": [1] * 600}, None, 400),  # the prefill server's 400, passed on
        (decode, "/v1/generate", {"prompt_ids": [1, 2, 3], "params": {"max_tokens": 510}}, None, 400),
        (decode, "/v1/generate", {"prompt_ids": [1, 2], "params": {"temperature": -1}}, None, 400),
        (decode, "/v1/prefill", {"prompt_ids": [1, 2]}, None, 404),  # only a prefill server has it
    ]
    for server, path, body, raw, want in cases:
        status, headers, data = _post(server.url, path, body, raw)
        assert status == want, (path, body, data)
        assert headers["Content-Type"].startswith("application/json")
        assert json.loads(data)["error"]["message"], data
    # A good prefill: the binary payload, with the KV of every prompt token.
    status, headers, data = _post(prefill.url, "/v1/prefill", {"prompt_ids": [1, 2, 3, 4, 5]})
    assert status == 200 and headers["Content-Type"] == "application/x-jaxserve-kv"
    assert float(headers["X-Prefill-Ms"]) > 0 and float(headers["X-Encode-Ms"]) >= 0
    p = decode_prefilled(data)
    assert p.prompt_token_ids == [1, 2, 3, 4, 5] and p.k.shape == (30, 5, 3, 64) and p.k.dtype == np.float32
    assert np.isfinite(p.k).all() and np.abs(p.v).max() > 0


def test_a_decode_server_without_its_prefill_server_answers_503(tiny_path):
    """In-process decode role (tiny model, no warm-up) whose prefill URL has nobody listening: a prompt
    for the prefill server gets 503 + Retry-After with code prefill_unavailable, so a gateway falls
    back; a prompt within --local-prefill-tokens is prefilled on the decode server and still answered."""
    from runtime.serving.server import create_app
    from tests.support.gateway_server import ServerThread, free_port

    app = create_app(
        tiny_config(tiny_path, model="tiny", num_blocks=16, max_num_seqs=2, max_num_batched_tokens=16),
        warmup=False,
        role="decode",
        prefill_url=f"http://127.0.0.1:{free_port()}",
        local_prefill_tokens=4,
    )
    server = ServerThread(app).start()
    try:
        status, headers, data = _post(server.url, "/v1/generate", {"prompt_ids": [1, 2, 3, 4, 5]})
        assert (
            status == 503 and headers.get("Retry-After") and json.loads(data)["error"]["code"] == "prefill_unavailable"
        )
        status, _, data = _post(
            server.url, "/v1/generate", {"prompt_ids": [1, 2, 3, 4], "params": {"max_tokens": 3, "ignore_eos": True}}
        )
        assert status == 200 and _lines(data)[-1]["completion_tokens"] == 3, data
        assert json.loads(_get(server.url, "/v1/stats"))["role"] == "decode"
    finally:
        server.stop()
    with pytest.raises(ValueError, match="local-prefill-tokens"):
        create_app(EngineConfig(model="tiny", gguf_path=tiny_path), local_prefill_tokens=8)
    with pytest.raises(ValueError, match="prefill-url"):
        create_app(EngineConfig(model="tiny", gguf_path=tiny_path), role="decode")
    with pytest.raises(ValueError, match="role"):
        create_app(EngineConfig(model="tiny", gguf_path=tiny_path), role="middle")


def test_bench_disagg_report_arithmetic():
    """The benchmark's percentiles, ratios and table from hand-made request timings."""
    from tests.support.scripts import load_script

    bench = load_script("bench_disagg")
    R = bench.Result

    def run(scale):
        return [
            R("stream", 0, ttft=0.1 * scale, tpot=0.05 * scale, gaps=[0.05 * scale] * 3, tokens=4),
            R("stream", 0, ttft=0.3 * scale, tpot=0.07 * scale, gaps=[0.07 * scale] * 3, tokens=4),
            R("long", 0, ttft=2.0 * scale, tpot=0.1 * scale, gaps=[0.1 * scale], tokens=2),
            R("long", 0, error="503: busy"),
        ]

    colo, dis = bench.summarize(run(1.0), wall=2.0), bench.summarize(run(0.5), wall=2.0)
    assert colo["stream"]["ttft_ms"] == {"p50": 200.0, "p99": 298.0}  # linear interpolation of 100, 300
    assert colo["long"]["requests"] == 1 and colo["errors"] == ["503: busy"]
    assert colo["decode_tokens_per_s"] == 5.0  # 10 tokens in 2 s
    assert colo["stream"]["itl_ms"]["max"] == 70.0
    rat = bench.ratios(colo, dis)
    assert rat["stream_ttft_p50"] == 0.5 and rat["long_tpot_p99"] == 0.5
    assert "| long prompts | TTFT p50 (ms) | 2000.0 | 1000.0 | 0.5 |" in bench.table(colo, dis, rat)


TP_IMPORT = r"""
import sys
from runtime.engine.llm_engine import EngineConfig, LLMEngine
from runtime.core.request import SamplingParams
cfg = dict(gguf_path=sys.argv[1], max_num_seqs=4, max_num_batched_tokens=32, max_model_len=128, num_blocks=40)
prompts = ["hello there", "the cat sat on the mat and then the dog came in and sat down on it too"]
sp = SamplingParams(max_tokens=12, ignore_eos=True)
prefill = LLMEngine(EngineConfig(**cfg))
want = [o.token_ids for o in prefill.generate(prompts, sp)]
ids = [prefill.add_prefill_request(p, sp) for p in prompts]
kv = {}
while prefill.has_unfinished_requests():
    kv.update({o.request_id: o.prefilled for o in prefill.step()})
decode = LLMEngine(EngineConfig(**cfg, tensor_parallel=2))
firsts = [decode.add_prefilled_request(kv[i], sp) for i in ids]
got = {o.request_id: list(o.token_ids) for o in firsts}
while decode.has_unfinished_requests():
    for o in decode.step():
        got[o.request_id].extend(o.token_ids)
assert decode.runner.kv_caches[0][0].sharding.spec[2] == "model", decode.runner.kv_caches[0][0].sharding
assert [got[o.request_id] for o in firsts] == want, (got, want)
print("ok")
"""


def test_a_tensor_parallel_decode_engine_imports_a_single_device_prefill(tiny_path):
    """The decode engine's cache is split by kv head over 2 (emulated CPU) devices; the imported KV is
    scattered into the sharded pages and decoding gives the colocated tokens. Own process: the device
    count is fixed when JAX starts."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XLA_FLAGS": os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"}
    proc = subprocess.run(
        [sys.executable, "-c", TP_IMPORT, tiny_path],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=str(Path(__file__).resolve().parents[3]),
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-3000:]
