"""Drive one engine with requests that arrive on a clock, and time each of them: the replay's engine half.

    open_engine(EngineConfig, warmup=True) -> engine       compiled (and primed, if the config says so)
    reset(engine)                                          its prefix cache emptied: a second run starts cold
    drive(engine, [Arrival(t, id, prompt ids, max tokens)], admit=...) -> Run

``drive`` runs on the caller's thread: it adds each request when the clock reaches its arrival time
(``ignore_eos``, so it answers exactly ``max_tokens`` tokens), steps the engine until every request has
finished, and returns each request's arrival, first-token and finish times, its token count, and the
engine's peak KV usage, preemptions and prefix-cache hit rate over the run. ``admit(arrival, finished)``,
asked at arrival time with the ids finished so far, may answer a request without the engine (False: a
cache would have answered it); it then has no timing.

Knows nothing of where the arrivals come from: the gateway's recording format, its cache, prices and
service levels are the gateway's (``gateway.advise.replay``), which builds the arrivals and scores the run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Arrival:
    t: float  # seconds after the run's start
    request_id: str
    prompt_ids: list[int]
    max_tokens: int


@dataclass
class Timing:
    arrival: float  # perf_counter seconds
    first: float | None = None
    done: float | None = None
    tokens: int = 0


@dataclass
class Run:
    timings: dict[str, Timing] = field(default_factory=dict)  # the requests the engine served
    wall_s: float = 0.0
    peak_kv_usage: float = 0.0
    preemptions: int = 0
    prefix_cache_hit_rate: float = 0.0


def open_engine(config, *, warmup: bool = True):
    """An ``LLMEngine`` on ``config``; ``warmup=False`` (tests) compiles as it goes. Sets this process's XLA
    flags first (``configure_xla``: they count when the first engine starts JAX's backend)."""
    from runtime.engine.llm_engine import LLMEngine
    from runtime.platform import configure_xla

    configure_xla()

    engine = LLMEngine(config)
    if warmup:
        engine.warmup()
    return engine


def reset(engine) -> None:
    """Empty an idle engine's prefix cache, so that another ``drive`` on it starts as cold as on a fresh
    engine (its compiled programs stay: that is what reusing it saves). Raises ``RuntimeError`` on an engine
    with unfinished requests or a held block."""
    if engine.has_unfinished_requests() or not engine.scheduler.kv_cache_manager.reset_prefix_cache():
        raise RuntimeError("reset needs an idle engine")


def drive(engine, arrivals: list[Arrival], *, admit: Callable[[Arrival, set[str]], bool] | None = None) -> Run:
    """Run ``arrivals`` (sorted by ``t``) through ``engine`` in real time; see the module's docstring."""
    from runtime.api import SamplingParams

    run = Run()
    finished: set[str] = set()
    pending = list(arrivals)
    before = engine.stats()
    t0 = time.perf_counter()
    while pending or engine.has_unfinished_requests():
        now = time.perf_counter() - t0
        while pending and pending[0].t <= now:
            a = pending.pop(0)
            if admit is not None and not admit(a, finished):
                continue
            engine.add_request(a.prompt_ids, SamplingParams(max_tokens=a.max_tokens, ignore_eos=True), a.request_id)
            run.timings[a.request_id] = Timing(time.perf_counter())
        if not engine.has_unfinished_requests():
            if pending:
                time.sleep(max(0.0, min(0.05, pending[0].t - now)))
            continue
        for o in engine.step():
            t = time.perf_counter()
            timing = run.timings[o.request_id]
            if o.token_ids and timing.first is None:
                timing.first = t
            timing.tokens += len(o.token_ids)
            if o.finished:
                timing.done = t
                finished.add(o.request_id)
        run.peak_kv_usage = max(run.peak_kv_usage, engine.stats().kv_cache_usage)
    run.wall_s = time.perf_counter() - t0
    after = engine.stats()
    queries = after.prefix_cache_queries - before.prefix_cache_queries
    run.preemptions = after.num_preemptions_total - before.num_preemptions_total
    run.prefix_cache_hit_rate = (after.prefix_cache_hits - before.prefix_cache_hits) / queries if queries else 0.0
    run.peak_kv_usage = round(run.peak_kv_usage, 3)
    return run
