"""``python -m runtime.server`` as a real process over real HTTP, and ``RemoteBackend`` as its client.

A tiny random Llama (tests/support/tiny_gguf.py) serves most tests, so its server starts in seconds; the real
SmolLM2 checks parity with an in-process engine and the abort of a request whose client leaves (its
steps are slow enough that the request is surely still running when the client goes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from aiohttp import web

from gateway.backends import BackendError
from gateway.backends.remote import RemoteBackend
from runtime.api import EngineConfig, EngineStats, RequestError, SamplingParams
from runtime.engine.llm_engine import LLMEngine
from runtime.serving.local import encode_chat
from tests.support.gateway_server import ServerThread, free_port
from tests.support.processes import ROOT, ServerProcess

TINY_LIMITS = dict(max_num_seqs=4, max_num_batched_tokens=32, max_model_len=256, kv_cache_mb=1)
SMOL_LIMITS = dict(max_num_seqs=4, max_num_batched_tokens=64, max_model_len=512, kv_cache_mb=16)
MSG = [{"role": "user", "content": "hello there"}]


def engine_config(model: str, gguf: str | None, limits: dict) -> EngineConfig:
    """The config ``runtime.server`` builds from the same flags (same compiled shapes, same cache)."""
    return EngineConfig(
        model=model,
        gguf_path=gguf,
        max_num_seqs=limits["max_num_seqs"],
        max_num_batched_tokens=limits["max_num_batched_tokens"],
        max_model_len=limits["max_model_len"],
        kv_cache_bytes=int(limits["kv_cache_mb"] * 2**20),
    )


def runtime_server(model: str, *flags: str, gguf: str | None = None, limits: dict | None = None) -> ServerProcess:
    """``python -m runtime.server`` on a free loopback port; `with` starts it, waits for /readyz, stops it."""
    args = ["-m", "runtime.server", "--model", model, *flags]
    if gguf:
        args += ["--gguf", gguf]
    for k, v in (limits or {}).items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    return ServerProcess(args, name=model, ready_timeout=240)


def request(server, path: str, body=None, *, raw: bytes | None = None, timeout: float = 60):
    """(status, headers, parsed JSON or text); status 0 when nothing answers."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(
        server.url + path,
        data=data,
        headers={"Content-Type": "application/json"},
        method="GET" if data is None else "POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            status, headers, payload = r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        status, headers, payload = e.code, dict(e.headers), e.read()
    except OSError:
        return 0, {}, None
    try:
        return status, headers, json.loads(payload)
    except ValueError:
        return status, headers, payload.decode()


def get(server, path: str):
    return request(server, path, timeout=5)


def run(coro_fn, server, *args, **backend_kw):
    """``coro_fn(backend, *args)`` with a started RemoteBackend for ``server`` (closed afterwards)."""

    async def main():
        backend = RemoteBackend(getattr(server, "name", "remote"), server.url, **backend_kw)
        await backend.start()
        try:
            return await coro_fn(backend, *args)
        finally:
            await backend.close()

    return asyncio.run(main())


async def collect(backend, prompt_ids, params, request_id="t"):
    async with contextlib.aclosing(backend.generate(prompt_ids, params, request_id)) as outputs:
        return [o async for o in outputs]


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"not within {timeout} s: {what}")


# ---------------------------------------------------------------- the tiny model


@pytest.fixture(scope="module")
def tiny_server(tiny_path):
    with runtime_server("tiny", gguf=tiny_path, limits=TINY_LIMITS) as srv:
        yield srv


@pytest.fixture(scope="module")
def tiny_engine(tiny_path) -> LLMEngine:
    return LLMEngine(engine_config("tiny", tiny_path, TINY_LIMITS))


def test_health_ready_stats_models(tiny_server):
    assert get(tiny_server, "/healthz")[::2] == (200, {"status": "ok"})
    assert get(tiny_server, "/readyz")[::2] == (200, {"ready": True, "model": "tiny"})
    status, _, stats = get(tiny_server, "/v1/stats")
    assert status == 200
    assert set(stats) == {
        "model",
        "ready",
        "max_model_len",
        "num_running",
        "num_waiting",
        "kv_cache_usage",
        "num_preemptions_total",
        "num_steps",
        "num_blocks",
        "prefix_cache_queries",
        "prefix_cache_hits",
        "spec_draft_tokens",
        "spec_accepted_tokens",
        "decode_steps",
        "decode_seqs",
        "decode_seconds",
        "weight_bytes",
        "weight_bits",
        "shared_prefix_queries",
        "shared_prefix_tokens",
        "max_num_batched_tokens",
    }
    assert stats["weight_bytes"] > 0 and stats["weight_bits"] == 32  # what each decode step reads
    assert stats["model"] == "tiny" and stats["ready"] is True and stats["max_model_len"] == 256
    # 1 MiB of float32 KV: 2 (K, V) x 2 layers x 2 kv heads x 16 dims x 16 tokens x 4 bytes = 8 KiB a block
    assert stats["num_blocks"] == 128
    status, _, models = get(tiny_server, "/v1/models")
    assert status == 200 and models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["tiny"] and models["data"][0]["object"] == "model"


def test_encode_matches_the_in_process_engine(tiny_server, tiny_engine):
    convo = [{"role": "system", "content": "be brief"}, *MSG]

    async def both(backend):
        return await backend.encode(convo), await backend.encode(convo, assistant_prefix="the cat")

    plain, prefixed = run(both, tiny_server)
    assert plain == tiny_engine.encode(convo)
    assert (
        prefixed
        == encode_chat(tiny_engine, convo, "the cat")
        == plain + tiny_engine.tokenizer.encode("the cat", add_bos=False)
    )


def test_greedy_generate_matches_the_in_process_engine(tiny_server, tiny_engine):
    ids = tiny_engine.encode(MSG)
    cases = [
        SamplingParams(max_tokens=12, ignore_eos=True),
        SamplingParams(max_tokens=40),
        SamplingParams(temperature=0.8, top_p=0.9, top_k=20, seed=3, max_tokens=10),
    ]
    expected = tiny_engine.generate([ids] * len(cases), cases)

    async def all_cases(backend):
        return [await collect(backend, ids, p, f"case-{i}") for i, p in enumerate(cases)]

    for outs, want in zip(run(all_cases, tiny_server), expected):
        assert len(outs) > 1  # streamed: one output per step
        assert [o.finished for o in outs] == [False] * (len(outs) - 1) + [True]
        last = outs[-1]
        assert "".join(o.text for o in outs) == want.text
        assert sum(len(o.token_ids) for o in outs) == len(want.token_ids)
        assert (last.finish_reason, last.prompt_tokens, last.completion_tokens) == (
            want.finish_reason,
            want.prompt_tokens,
            want.completion_tokens,
        )
        assert last.request_id.startswith("case-")


@pytest.mark.parametrize(
    "path, body, param",
    [
        ("/v1/generate", {"prompt_ids": [1, 2], "params": {"temperature": -1}}, "params"),
        ("/v1/generate", {"prompt_ids": [1, 2], "params": {"temprature": 0.5}}, "params"),
        ("/v1/generate", {"prompt_ids": [1, 2], "params": {"max_tokens": "8"}}, "params"),
        ("/v1/generate", {"prompt_ids": [1, 2], "params": {"stop": [""]}}, "params"),
        ("/v1/generate", {"prompt_ids": []}, "prompt_ids"),
        ("/v1/generate", {"prompt_ids": "hello"}, "prompt_ids"),
        ("/v1/generate", {"prompt_ids": [1, 2, 10**9]}, "prompt_ids"),  # outside the vocabulary
        ("/v1/generate", {"prompt_ids": [5] * 300}, "prompt_ids"),  # longer than the 256-token context
        ("/v1/generate", {"prompt_ids": [5] * 200, "params": {"max_tokens": 100}}, "prompt_ids"),
        ("/v1/generate", [1, 2, 3], None),
        ("/v1/encode", {"messages": []}, "messages"),
        ("/v1/encode", {"messages": [1, 2, 3]}, "messages"),  # not taken for token ids
        ("/v1/encode", {"messages": [{"role": "user"}]}, "messages"),
        ("/v1/encode", {"messages": MSG, "assistant_prefix": 7}, "assistant_prefix"),
    ],
)
def test_bad_requests_are_400_in_the_openai_shape(tiny_server, path, body, param):
    status, headers, err = request(tiny_server, path, body)
    assert status == 400, err
    assert headers["Content-Type"].startswith("application/json")
    assert set(err["error"]) == {"message", "type", "param", "code"}
    assert err["error"]["type"] == "invalid_request_error" and err["error"]["message"]
    assert err["error"]["param"] == param


def test_invalid_json_and_unknown_paths(tiny_server):
    for raw in (b"{not json", b""):
        status, _, err = request(tiny_server, "/v1/generate", raw=raw)
        assert status == 400 and err["error"]["type"] == "invalid_request_error"
    status, _, err = get(tiny_server, "/v1/nothing")
    assert status == 404 and set(err["error"]) == {"message", "type", "param", "code"}


def test_remote_backend_raises_request_error_for_bad_requests(tiny_server):
    async def bad(backend):
        with pytest.raises(RequestError, match="empty"):
            await backend.encode([])
        with pytest.raises(RequestError, match="maximum context"):
            await collect(backend, [5] * 300, SamplingParams())
        return backend.ready  # a bad request says nothing about the server

    assert run(bad, tiny_server) is True


def test_metrics_use_vllm_names(tiny_server, tiny_engine):
    run(collect, tiny_server, tiny_engine.encode(MSG), SamplingParams(max_tokens=4, ignore_eos=True))
    status, headers, text = get(tiny_server, "/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    for name in (
        "num_requests_running",
        "num_requests_waiting",
        "kv_cache_usage_perc",
        "num_preemptions_total",
        "time_to_first_token_seconds_bucket",
        "inter_token_latency_seconds_bucket",
        "e2e_request_latency_seconds_bucket",
        "request_queue_time_seconds_bucket",
        "prompt_tokens_total",
        "generation_tokens_total",
    ):
        assert f'{name}{{le="' in text or f'{name}{{model="tiny"' in text, name
    samples = dict(line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#"))
    assert float(samples['generation_tokens_total{model="tiny"}']) >= 4
    assert float(samples['e2e_request_latency_seconds_count{model="tiny"}']) >= 1


def test_a_full_queue_and_a_dead_server_are_backend_errors(tiny_path):
    # --max-waiting 0 turns every generation away: the 503 path, deterministically.
    with runtime_server("tiny", "--no-warmup", "--max-waiting", "0", gguf=tiny_path, limits=TINY_LIMITS) as srv:

        async def scenario(backend):
            assert backend.ready and backend.max_model_len == 256
            with pytest.raises(BackendError) as full:
                await collect(backend, [5, 6, 7], SamplingParams())
            assert full.value.cause == "overloaded" and full.value.retry_after == 1.0
            ids = await backend.encode(MSG)  # encoding is not queued
            srv.kill()  # returns once the process is gone: every poll that starts from here on fails
            polls_after_kill = 0
            poll = backend.poll

            async def counted_poll():
                nonlocal polls_after_kill
                polls_after_kill += 1
                return await poll()

            backend.poll = counted_poll  # the poller looks it up on the instance at each round
            t0 = time.monotonic()
            while backend.ready:
                assert time.monotonic() - t0 < 30, "the death was never noticed: a hang"
                await asyncio.sleep(0.05)
            with pytest.raises(BackendError) as gen:
                await collect(backend, ids, SamplingParams())
            with pytest.raises(BackendError) as enc:
                await backend.encode(MSG)
            return polls_after_kill, gen.value.cause, enc.value.cause, backend.ready

        polls, gen_cause, enc_cause, ready = run(scenario, srv)  # the default poll interval: 1 s
    # Noticed at the first poll after the death (0 if the poll in flight at the kill failed), which is
    # "within about one interval" by construction; not a wall-clock bound.
    assert polls <= 1 and not ready, polls
    assert gen_cause == enc_cause == "unavailable"


def test_a_backend_started_without_a_server_is_not_ready():
    async def main():
        backend = RemoteBackend("nobody", f"http://127.0.0.1:{free_port()}", poll_interval=0.1)
        await backend.start()  # does not raise
        try:
            assert not backend.ready and backend.stats().num_running == 0 and backend.max_model_len == 0
            with pytest.raises(BackendError) as exc:
                await backend.encode(MSG)
            assert exc.value.cause == "unavailable"
        finally:
            await backend.close()

    asyncio.run(main())


STATS = {
    "model": "fake",
    "ready": True,
    "max_model_len": 100,
    "num_running": 3,
    "num_waiting": 1,
    "kv_cache_usage": 0.5,
    "num_preemptions_total": 2,
    "num_steps": 7,
    "num_blocks": 10,
}


def fake_runtime_server() -> web.Application:
    """Answers like a runtime server, then misbehaves as each request_id asks."""
    line = {
        "text": "a",
        "n_tokens": 1,
        "finished": False,
        "finish_reason": None,
        "prompt_tokens": 2,
        "completion_tokens": 1,
    }

    async def generate(request: web.Request) -> web.StreamResponse:
        how = (await request.json())["request_id"]
        if how == "http500":
            return web.json_response(
                {"error": {"message": "boom", "type": "server_error", "param": None, "code": None}}, status=500
            )
        resp = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await resp.prepare(request)
        await resp.write((json.dumps(line) + "\n").encode())
        if how == "error-line":
            await resp.write(b'{"error": {"message": "engine step failed: XlaRuntimeError"}}\n')
        elif how == "garbage":
            await resp.write(b"<html>\n")
        elif how == "cut":  # the process dies mid-answer
            request.transport.close()
            return resp
        await resp.write_eof()  # "truncated": a clean end, but no final output
        return resp

    async def stats(request):
        return web.json_response(STATS)

    async def encode(request):
        return web.Response(status=502, text="bad gateway")

    app = web.Application()
    app.router.add_get("/readyz", stats)
    app.router.add_get("/v1/stats", stats)
    app.router.add_post("/v1/generate", generate)
    app.router.add_post("/v1/encode", encode)
    return app


def test_a_misbehaving_server_gives_failed_backend_errors():
    srv = ServerThread(fake_runtime_server()).start()

    async def scenario(backend):
        assert backend.ready and backend.max_model_len == 100
        assert backend.stats() == EngineStats(3, 1, 0.5, 2, 7, 10)
        causes = {}
        for how in ("truncated", "error-line", "garbage", "cut", "http500"):
            outs = []
            with pytest.raises(BackendError) as exc:
                async with contextlib.aclosing(backend.generate([1, 2], SamplingParams(), how)) as gen:
                    async for out in gen:
                        outs.append(out)
            causes[how] = (exc.value.cause, len(outs))
        with pytest.raises(BackendError) as enc:
            await backend.encode(MSG)
        return causes, enc.value.cause

    try:
        causes, enc_cause = run(scenario, srv)
    finally:
        srv.stop()
    assert causes == {
        "truncated": ("failed", 1),
        "error-line": ("failed", 1),
        "garbage": ("failed", 1),
        "cut": ("failed", 1),
        "http500": ("failed", 0),
    }
    assert enc_cause == "failed"


def test_bad_command_lines_exit_2_with_one_error_line(tmp_path):
    cases = [
        ["--model", "no-such-model"],
        ["--model", "tiny", "--gguf", str(tmp_path / "missing.gguf")],
        ["--model", "smollm2-135m", "--max-num-seqs", "0"],
        ["--model", "smollm2-135m", "--dtype", "float8"],
        ["--port", "1"],  # no --model
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "runtime.server", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for args in cases
    ]
    for args, proc in zip(cases, procs):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 2, (args, err)
        lines = [line for line in err.splitlines() if "error" in line.lower()]
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, err)
        assert "Traceback" not in err


# ---------------------------------------------------------------- the real model


@pytest.fixture(scope="module")
def smol_server():
    # --no-warmup: only the buckets these tests use get compiled (the in-process engine compiles the
    # same programs into the shared compilation cache).
    with runtime_server("smollm2-135m", "--no-warmup", limits=SMOL_LIMITS) as srv:
        yield srv


@pytest.mark.slow
def test_smollm2_greedy_matches_the_in_process_engine(smol_server):
    engine = LLMEngine(engine_config("smollm2-135m", None, SMOL_LIMITS))
    question = [{"role": "user", "content": "What is the capital of France?"}]
    params = SamplingParams(max_tokens=24)
    want = engine.generate([engine.encode(question)], params)[0]

    async def ask(backend):
        ids = await backend.encode(question)
        return ids, await collect(backend, ids, params)

    ids, outs = run(ask, smol_server)
    assert ids == engine.encode(question)
    assert "".join(o.text for o in outs) == want.text and "Paris" in want.text
    assert sum(len(o.token_ids) for o in outs) == len(want.token_ids) and len(outs) > 1
    assert (outs[-1].finish_reason, outs[-1].completion_tokens) == (want.finish_reason, want.completion_tokens)


@pytest.mark.slow
def test_smollm2_client_that_leaves_aborts_its_request(smol_server):
    def num_running() -> int:
        return get(smol_server, "/v1/stats")[2]["num_running"]

    async def leave_early(backend):
        ids = await backend.encode([{"role": "user", "content": "Count from one to one hundred."}])
        gen = backend.generate(ids, SamplingParams(max_tokens=250, ignore_eos=True), "leaver")
        outs = [await anext(gen) for _ in range(3)]
        running = await asyncio.to_thread(num_running)  # ~250 steps of ~20+ ms remain: surely running
        await gen.aclose()
        return outs, running

    outs, running_while_streaming = run(leave_early, smol_server)
    assert not any(o.finished for o in outs) and running_while_streaming == 1
    wait_for(lambda: num_running() == 0, 2.0, "the engine aborts the request of a client that left")
    assert get(smol_server, "/v1/stats")[2]["kv_cache_usage"] == 0.0
