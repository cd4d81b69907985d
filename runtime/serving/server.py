"""``python -m runtime.server``: one model behind a small HTTP API, for gateways in other processes.

    python -m runtime.server --model smollm2-135m [--gguf PATH] [--host 127.0.0.1] [--port 8101]
                             [--dtype auto] [--max-num-seqs N] [--max-num-batched-tokens N]
                             [--max-model-len N] [--kv-cache-mb MB | --kv-cache-memory-fraction F]
                             [--attention-backend auto] [--max-waiting N] [--no-warmup] [-v]
                             [--role both|prefill|decode] [--prefill-url URL] [--local-prefill-tokens N]

Data flow (the event loop serves HTTP; the engine steps on its own thread through ``AsyncLLMEngine``,
wrapped in ``runtime.serving.local.LocalEngine``, the same object an in-process gateway uses):

    start-up:  cleanup_ctx loads the weights (a worker thread) -> the socket listens -> warm-up
               (compiling every bucket) runs in the background; /healthz answers at once, /readyz
               and /v1/generate answer 503 until it is done
    POST /v1/encode     {"messages", "assistant_prefix"} -> {"prompt_ids"}        (chat template)
    POST /v1/generate   {"prompt_ids", "params", "request_id"} -> application/x-ndjson, one line per
                        engine output: {"text", "n_tokens", "token_ids", "finished", "finish_reason",
                        "prompt_tokens", "completion_tokens"}
    GET  /v1/stats, /v1/models, /healthz, /readyz, /metrics (Prometheus, vLLM's metric names)
    POST /v1/prefill    (--role prefill) the same body -> the prompt's KV, binary (runtime/distributed/kv_transfer.py);
                        a --role decode server's /v1/generate fetches it first (runtime/serving/disagg.py)

``gateway.backends.remote.RemoteBackend`` is the client; both sides of the wire format are
``runtime/serving/protocol.py``. Every error is an OpenAI-shaped JSON body; a bad
request is a 400 *before* the stream starts (the handler waits for the engine's first output before
sending headers, so a request the engine rejects never opens a stream). 503 + Retry-After has code
"not_ready" (warming up) or "overloaded" (``--max-waiting`` requests already wait: bounded
admission). A client that disconnects mid-stream cancels its handler (``handler_cancellation=True``),
which closes the engine's output iterator and so aborts the request: its KV blocks are freed before
the next step.

Stopping (``serve_until_signalled``): the first SIGINT (Ctrl-C) or SIGTERM closes the listener (new
connections are refused: a gateway's ``RemoteBackend`` then sees the tier down and falls back), lets the
requests in flight run to their end for up to ``--drain-timeout`` seconds, then stops the step thread
through ``cleanup_ctx``; the exit status is 0. During warm-up the process exits without waiting for the
compile in progress. The same signal again within ``shutdown.REPEAT_S`` is that one delivered twice (``kill -TERM``
to the process group of ``make serve-large`` also comes through make, which forwards it); a second
signal exits at once, status 1. ``make serve-large`` sets JAXSERVE_TAKE_TERMINAL=1: see ``runtime.serving.shutdown``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import itertools
import logging
import os
import signal
import sys
import time
from pathlib import Path

from aiohttp import web

# Importing JAX (through the engine) initializes nothing; ``main`` calls ``configure_xla()`` before
# the engine's first computation, which is when XLA reads its flags.
from runtime.api import DEFAULT_MEMORY_FRACTION, EngineConfig, RequestError, RequestOutput
from runtime.distributed import multihost
from runtime.distributed.multihost import ProcessLost
from runtime.engine.llm_engine import LLMEngine
from runtime.loading.presets import resolve_gguf
from runtime.platform import configure_xla
from runtime.serving import disagg, shutdown
from runtime.serving.errors import APIError, error_middleware, invalid
from runtime.serving.local import LocalEngine
from runtime.serving.metrics import ServerMetrics
from runtime.serving.protocol import (
    ENCODE_PATH,
    GENERATE_PATH,
    NDJSON,
    PREFILL_PATH,
    STATS_PATH,
    ServerState,
    error_line,
    not_ready,
    output_line,
    parse_generate,
    read_object,
)
from runtime.worker.attention import BACKENDS

log = logging.getLogger("runtime.server")

STATE = web.AppKey("state", ServerState)
METRICS = web.AppKey("metrics", ServerMetrics)


# ---------------------------------------------------------------- handlers


async def healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    st = request.app[STATE]
    body = {"ready": st.ready, "model": st.name}
    if st.backend is not None and st.backend.failed:
        body["error"] = st.backend.failed
    return web.json_response(body, status=200 if st.ready else 503)


def process_lost(why: str) -> APIError:
    """503 for good (no Retry-After): a process of this multi-process job is gone; the message names it."""
    return APIError(503, why, type="service_unavailable", code="process_lost")


async def list_models(request: web.Request) -> web.Response:
    st = request.app[STATE]
    entry = {
        "id": st.name,
        "object": "model",
        "created": st.started,
        "owned_by": "jaxserve",
        "max_model_len": st.backend.max_model_len if st.backend else None,
    }
    return web.json_response({"object": "list", "data": [entry]})


async def stats(request: web.Request) -> web.Response:
    st = request.app[STATE]
    body = {"model": st.name, "ready": st.ready}
    if st.role != "both":
        body["role"] = st.role
    if st.backend is not None:
        body["max_model_len"] = st.backend.max_model_len
        body.update(dataclasses.asdict(st.backend.stats()))
    return web.json_response(body)


async def metrics(request: web.Request) -> web.Response:
    return web.Response(
        body=request.app[METRICS].render(), headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
    )


async def encode(request: web.Request) -> web.Response:
    """Chat messages (or a text ``prompt``) -> prompt ids (works before warm-up: only the tokenizer is
    needed)."""
    st = request.app[STATE]
    if st.backend is None:
        raise not_ready(st.name)
    body = await read_object(request)
    messages = body.get("messages")
    if "prompt" in body and messages is None:
        messages = body["prompt"]
        if not isinstance(messages, str):
            raise invalid("prompt must be a string", "prompt")
    # A list of ints would be taken for token ids by ``LLMEngine.encode``: only objects here.
    elif not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise invalid("messages must be a list of {role, content} objects", "messages")
    prefix = body.get("assistant_prefix") or ""
    if not isinstance(prefix, str):
        raise invalid("assistant_prefix must be a string", "assistant_prefix")
    try:
        ids = await st.backend.encode(messages, prefix)
    except RequestError as exc:
        raise invalid(str(exc), "messages") from None
    return web.json_response({"prompt_ids": ids})


class GenerateHandler:
    """POST /v1/generate: admission, then the engine's outputs as NDJSON lines."""

    def __init__(self, state: ServerState, metrics: ServerMetrics):
        self.state = state
        self.metrics = metrics
        self._seq = itertools.count()

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        st = self.state
        if st.backend is not None and st.backend.failed:
            raise process_lost(st.backend.failed)
        if not st.ready:
            raise not_ready(st.name)
        prompt_ids, params, request_id = parse_generate(await read_object(request))
        st.admit()
        # Unique per call even if a client reuses an id (a retry racing the abort of the attempt it replaces).
        engine_id = f"{request_id}.{next(self._seq)}"
        # Leaving this block any way but the final output (a client gone: the handler is cancelled)
        # closes the iterator, which aborts the request in the engine.
        generate = st.generate or st.backend.generate
        async with contextlib.aclosing(generate(prompt_ids, params, engine_id)) as outputs:
            first = await self._first(outputs)
            self.metrics.observe(first, first=True)
            resp = web.StreamResponse(headers={"Content-Type": NDJSON, "Cache-Control": "no-cache"})
            await resp.prepare(request)
            await resp.write(output_line(first))
            try:
                async for out in outputs:
                    self.metrics.observe(out, first=False)
                    await resp.write(output_line(out))
            except ProcessLost as exc:  # headers are sent: the error is the last line
                await resp.write(error_line(process_lost(str(exc))))
            except RuntimeError as exc:  # the engine step failed; headers are sent, so it is the last line
                await resp.write(error_line(APIError(500, str(exc), type="server_error")))
        await resp.write_eof()
        return resp

    async def _first(self, outputs) -> RequestOutput:
        """The first output, or a 400 (the engine rejected the request) / 500 before any header is sent."""
        self.state.pending += 1
        try:
            return await anext(outputs)
        except RequestError as exc:
            raise invalid(str(exc), exc.param or "prompt_ids") from None
        except StopAsyncIteration:
            raise APIError(500, "the engine ended the request without output", type="server_error") from None
        except ProcessLost as exc:
            raise process_lost(str(exc)) from None
        except RuntimeError as exc:  # the engine step failed (the engine logged it)
            raise APIError(500, str(exc), type="server_error") from None
        finally:
            self.state.pending -= 1


# ---------------------------------------------------------------- the factory


def create_app(
    engine_config: EngineConfig,
    *,
    warmup: bool = True,
    max_waiting: int = 256,
    engine: LLMEngine | None = None,
    role: str = "both",
    prefill_url: str | None = None,
    transport: disagg.KVTransport | None = None,
    local_prefill_tokens: int = 0,
    leader: multihost.Leader | None = None,
) -> web.Application:
    """The server for ``engine_config``, served as ``engine_config.model``.

    The weights load in ``cleanup_ctx`` before the socket listens (a broken file stops start-up);
    warm-up then runs as a background task. ``engine``: an ``LLMEngine`` already built (tests,
    embedding); the app still owns its step thread. ``leader``: process 0 of a multi-process job
    (``runtime.distributed.multihost``): the engine's device calls are mirrored to the other processes.
    """
    if leader is not None and role != "both":
        raise ValueError("a multi-process job serves --role both (prefill/decode roles run on one process each)")
    if max_waiting < 0:
        raise ValueError(f"max_waiting must be >= 0; got {max_waiting}")
    if role not in disagg.ROLES:
        raise ValueError(f"role must be one of {', '.join(disagg.ROLES)}; got {role!r}")
    if (role == "decode") != bool(prefill_url or transport):
        raise ValueError("a decode server needs --prefill-url (and only a decode server takes one)")
    if local_prefill_tokens < 0 or (local_prefill_tokens and role != "decode"):
        raise ValueError(
            f"--local-prefill-tokens must be >= 0, and only a decode server takes it; got {local_prefill_tokens}"
        )
    app = web.Application(middlewares=[error_middleware], client_max_size=16 * 2**20)
    st = app[STATE] = ServerState(
        name=engine_config.model, max_waiting=max_waiting, started=int(time.time()), role=role
    )
    m = app[METRICS] = ServerMetrics(st.name, lambda: {st.name: st.backend} if st.backend is not None else {})

    async def engine_ctx(app: web.Application):
        if engine is not None:
            st.backend = LocalEngine(st.name, engine)
        else:  # loading weights takes seconds: off the event loop
            st.backend = await asyncio.to_thread(LocalEngine.from_config, st.name, engine_config)
        if leader is not None:
            st.backend.engine.runner.mirror = leader
            leader.watch(st.backend.front.fail)
        disagg.prepare_engine(st.backend.engine, role)
        kv_transport = transport or (disagg.HTTPKVTransport(prefill_url) if role == "decode" else None)
        if kv_transport is not None:
            st.generate = disagg.DecodeGenerate(
                st.backend.front, kv_transport, local_prefill_tokens=local_prefill_tokens
            )
        st.warmup_task = asyncio.create_task(start_backend(st.backend, warmup))
        yield
        st.warmup_task.cancel()
        if kv_transport is not None:
            await kv_transport.close()
        await st.backend.close()
        if leader is not None:
            leader.stop()

    app.cleanup_ctx.append(engine_ctx)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/v1/models", list_models)
    app.router.add_get(STATS_PATH, stats)
    app.router.add_get("/metrics", metrics)
    app.router.add_post(ENCODE_PATH, encode)
    app.router.add_post(GENERATE_PATH, GenerateHandler(st, m).__call__)  # a coroutine function, as aiohttp wants
    if role == "prefill":
        app.router.add_post(PREFILL_PATH, disagg.PrefillHandler(st).__call__)
    return app


async def start_backend(backend: LocalEngine, warmup: bool) -> None:
    try:
        await backend.start(warmup=warmup)
    except asyncio.CancelledError:
        raise
    except Exception:  # the server stays up and not ready: /readyz says so
        log.exception("warm-up of %s failed", backend.name)
        return
    log.info("model %s ready", backend.name)


# ---------------------------------------------------------------- CLI


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one "error: ..." line, exit 2 (argparse's code)
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m runtime.server", description="Serve one model to gateways over HTTP")
    p.add_argument("--model", required=True, help="preset name (with --gguf: the name the model is served as)")
    p.add_argument("--gguf", help="GGUF file to load instead of the preset's")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8101)
    p.add_argument(
        "--dtype",
        default="auto",
        help="weights and activations: float32, bfloat16, or auto (bfloat16 on TPU/GPU, float32 on CPU)",
    )
    p.add_argument("--max-num-seqs", type=int, default=32)
    p.add_argument("--max-num-batched-tokens", type=int, default=256)
    p.add_argument("--max-model-len", type=int, default=2048)
    p.add_argument(
        "--kv-cache-mb",
        type=float,
        help="KV cache budget in MiB (default: on TPU/GPU --kv-cache-memory-fraction of the device, on CPU 256)",
    )
    p.add_argument(
        "--kv-cache-memory-fraction",
        type=float,
        default=DEFAULT_MEMORY_FRACTION,
        help="on TPU/GPU without --kv-cache-mb: share of the device's memory the engine may use in all "
        "(weights + KV cache + working memory); the KV cache gets what the weights leave of it",
    )
    p.add_argument(
        "--attention-backend",
        default="auto",
        choices=BACKENDS,
        help="auto: pallas_tpu on TPU, pallas_gpu on GPU, xla on CPU (runtime/worker/attention.py)",
    )
    p.add_argument("--kv-dtype", help="KV cache storage: float32, bfloat16, int8 or fp8 (default: --dtype)")
    p.add_argument("--weight-quant", default="none", help="weight-only quantization: none, int8 or int4")
    p.add_argument("--weight-quant-group", type=int, default=64, help="int4 group size: 32, 64 or 128")
    p.add_argument(
        "--tensor-parallel",
        type=int,
        default=1,
        help="split the model over this many devices (heads, MLP columns, KV cache by kv head)",
    )
    mh = p.add_argument_group(
        "several processes (hosts)",
        "one mesh over every process's devices: process 0 serves HTTP, the others follow "
        "(runtime/distributed/multihost.py); --tensor-parallel counts the devices of all of them",
    )
    mh.add_argument("--coordinator", metavar="HOST:PORT", help="process 0's address (JAX_COORDINATOR_ADDRESS)")
    mh.add_argument("--num-processes", type=int, help="processes in the job (JAX_NUM_PROCESSES)")
    mh.add_argument("--process-id", type=int, help="this process's index, 0 leads (JAX_PROCESS_ID)")
    mh.add_argument(
        "--distributed",
        choices=("auto",),
        help="auto: let JAX find the job itself (a TPU pod slice, SLURM) instead of the three flags above",
    )
    mh.add_argument(
        "--heartbeat-timeout",
        type=int,
        default=10,
        metavar="S",
        help="a process silent this long is gone: serving stops with 503s naming it (default 10)",
    )
    mh.add_argument(
        "--step-timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="a step running this long means a stuck process: serving stops the same way (default 120)",
    )
    p.add_argument(
        "--speculative",
        default="none",
        choices=("none", "ngram"),
        help="speculative decoding: ngram drafts tokens from the request's own text (prompt lookup)",
    )
    p.add_argument("--num-speculative-tokens", type=int, default=3, help="draft tokens per request and step")
    p.add_argument(
        "--max-waiting",
        type=int,
        default=256,
        help="answer 503 + Retry-After once this many requests wait for the engine",
    )
    p.add_argument("--no-warmup", action="store_true", help="compile buckets on first use instead of at start")
    p.add_argument(
        "--role",
        default="both",
        choices=disagg.ROLES,
        help="prefill/decode disaggregation: prefill (serves POST /v1/prefill: a prompt's KV), decode "
        "(its /v1/generate pulls the prefill from --prefill-url), both (colocated)",
    )
    p.add_argument("--prefill-url", help="the prefill server of a --role decode server, e.g. http://127.0.0.1:8102")
    p.add_argument(
        "--local-prefill-tokens",
        type=int,
        default=0,
        help="--role decode: prefill prompts of at most this many tokens here instead (0: none)",
    )
    p.add_argument(
        "--drain-timeout",
        type=float,
        default=60.0,
        metavar="S",
        help="on SIGTERM/SIGINT: seconds to let the requests in flight finish (default 60)",
    )
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def config_from_args(args: argparse.Namespace) -> EngineConfig:
    """The engine config, or ValueError / FileNotFoundError saying which flag is wrong."""
    if args.gguf:
        if not Path(args.gguf).is_file():
            raise FileNotFoundError(f"--gguf {args.gguf}: no such file")
    else:
        resolve_gguf(args.model)  # a clear message for an unknown preset or a missing package
    if args.kv_cache_mb is not None and args.kv_cache_mb <= 0:
        raise ValueError(f"--kv-cache-mb must be > 0; got {args.kv_cache_mb}")
    if not 0 < args.kv_cache_memory_fraction <= 1:
        raise ValueError(f"--kv-cache-memory-fraction must be in (0, 1]; got {args.kv_cache_memory_fraction}")
    if args.max_waiting < 0:
        raise ValueError(f"--max-waiting must be >= 0; got {args.max_waiting}")
    if not 0 <= args.port < 65536:
        raise ValueError(f"--port must be in [0, 65535]; got {args.port}")
    if args.drain_timeout < 0:
        raise ValueError(f"--drain-timeout must be >= 0; got {args.drain_timeout}")
    return EngineConfig(
        model=args.model,
        gguf_path=args.gguf,
        dtype=args.dtype,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
        max_model_len=args.max_model_len,
        kv_cache_bytes=None if args.kv_cache_mb is None else int(args.kv_cache_mb * 2**20),
        kv_cache_memory_fraction=args.kv_cache_memory_fraction,
        kv_dtype=args.kv_dtype,
        attention_backend=args.attention_backend,
        weight_quant=args.weight_quant,
        weight_quant_group=args.weight_quant_group,
        tensor_parallel=args.tensor_parallel,
        speculative=args.speculative,
        num_speculative_tokens=args.num_speculative_tokens,
    )


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    configure_xla()  # before the engine's first computation
    joined = False  # this process joined a multi-process job (jax.distributed)
    try:
        config = config_from_args(args)
        mh = multihost.MultiHost.from_flags(
            args.coordinator,
            args.num_processes,
            args.process_id,
            auto=args.distributed == "auto",
            heartbeat_timeout_s=args.heartbeat_timeout,
            step_timeout_s=args.step_timeout,
        )
        leader = None
        if mh is not None:
            if args.role != "both":
                raise ValueError("a multi-process job serves --role both")
            multihost.initialize(mh)
            joined = True
            multihost.check_mesh(config.tensor_parallel)
            if multihost.process_index() != 0:
                return follow_main(config, warmup=not args.no_warmup)
            leader = multihost.Leader(mh)
        app = create_app(
            config,
            warmup=not args.no_warmup,
            max_waiting=args.max_waiting,
            role=args.role,
            prefill_url=args.prefill_url,
            local_prefill_tokens=args.local_prefill_tokens,
            leader=leader,
        )
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        if joined:  # JAX's exit hook would wait for the other processes of the job, then abort
            sys.stderr.flush()
            multihost.leave_together()
            os._exit(2)
        return 2
    url = f"http://{args.host}:{args.port}"
    shutdown.take_terminal(log)
    loop = asyncio.new_event_loop()
    serve_until_signalled(loop, app, args.drain_timeout)
    try:
        # run_app calls ``print`` once the socket listens; the first signal ends it (see the module docstring).
        web.run_app(
            app,
            host=args.host,
            port=args.port,
            loop=loop,
            handle_signals=False,
            shutdown_timeout=args.drain_timeout,
            handler_cancellation=True,
            access_log=None,
            print=lambda _: log.info("serving %s on %s", config.model, url),
        )
    except (ValueError, FileNotFoundError) as exc:  # the weights did not load (bad file, KV budget too small)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # the port is taken
        print(f"error: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    backend = app[STATE].backend
    if backend is not None and not args.no_warmup and not backend.engine.warmed_up:
        # Stopped during warm-up: its thread is inside an XLA compile that cannot be interrupted,
        # and the interpreter would wait for it (tens of seconds) before exiting.
        exit_now(0, "stopped during warm-up; exiting without waiting for it")
    log.info("stopped")
    return 0


def follow_main(config: EngineConfig, *, warmup: bool) -> int:
    """A process other than 0: the same engine, built in step with the leader's (the weights are placed
    and the KV block count agreed together), its step programs compiled, then the leader's device calls
    until it stops (``multihost.follow``). No HTTP."""
    engine = LLMEngine(config)
    if warmup:
        engine.runner.warmup(background=True)  # a bucket the leader runs first compiles on demand
    log.info("process %d follows process 0 (%d KV blocks)", multihost.process_index(), engine.num_blocks)
    signal.signal(signal.SIGTERM, lambda *_: exit_now(0, "SIGTERM: the follower exits"))
    try:
        multihost.follow(engine.runner)
    except ProcessLost as exc:
        exit_now(1, "%s: another process of the job is gone; exiting", exc)
    # At once: the coordination service lives in process 0, which is exiting too, and JAX's exit hook
    # would call it to shut down (and abort the process when it is gone).
    exit_now(0, "process 0 stopped serving; process %d exits", multihost.process_index())
    return 0  # not reached


def serve_until_signalled(loop: asyncio.AbstractEventLoop, app: web.Application, drain_timeout_s: float) -> None:
    """SIGINT/SIGTERM handlers on ``loop`` for ``web.run_app(loop=loop, handle_signals=False,
    shutdown_timeout=drain_timeout_s)`` (see the module docstring)."""
    first: list = []  # (signal, time) of the one that started the stop

    def on_signal(sig: signal.Signals) -> None:
        now = time.monotonic()
        if not first:
            first.append((sig, now))
            try:  # only to say so: nothing may keep this handler from stopping the server
                running = app[STATE].backend.stats().num_running
            except Exception:
                running = "the"
            log.info(
                "%s: stopping; %s request(s) in flight get up to %.0f s to finish (a second signal exits at once)",
                sig.name,
                running,
                drain_timeout_s,
            )
            raise web.GracefulExit()  # run_app closes the listener, waits for the handlers, then cleanup_ctx
        if sig == first[0][0] and now - first[0][1] < shutdown.REPEAT_S:
            log.info(
                "%s again within %.0f s: the same one, delivered twice (make forwards SIGTERM)",
                sig.name,
                shutdown.REPEAT_S,
            )
            return
        exit_now(1, "%s again: exiting now, without waiting for the requests in flight", sig.name)

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)


def exit_now(status: int, why: str, *args) -> None:
    shutdown.exit_now(log, status, why, *args)


if __name__ == "__main__":
    sys.exit(main())
