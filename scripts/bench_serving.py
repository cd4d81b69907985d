"""Serving benchmark against a running gateway: Poisson arrivals, streamed answers, TTFT/TPOT/ITL/e2e, goodput.

In: the URL of a running gateway (``make serve``) and a seeded synthetic chat workload
(``make_workload``). Out: one JSON report on stdout and in ``--out``; a tqdm bar on stderr.

Data flow, all on one asyncio loop in this process::

    make_workload(n, seed)  -> requests [{messages, max_tokens, kind, ...}]   (no network, reproducible)
    arrival_times(n, rate)  -> seeded Poisson offsets (exponential gaps; rate inf: all at t = 0)
    run_benchmark(...)      -> one task per request, started at its offset, gated by --max-concurrency;
                               each POSTs /v1/chat/completions with stream + include_usage and
                               timestamps every content delta -> RequestResult
    summarize(results)      -> throughputs, TTFT / TPOT / ITL / e2e percentiles, cache hit share,
                               requests by serving tier, goodput under the SLOs

The workload reads like chat traffic: questions built from templates and word lists below, a share
of them asking an earlier question again (exactly, or paraphrased) so that the semantic cache has
something to hit. Prompt lengths (in words, not tokens: the client has no tokenizer; the server's
token counts come back in the usage chunk) and output lengths (``max_tokens``) are drawn from seeded
log-normal distributions. The gateway has no ``ignore_eos``, so ``max_tokens`` is a cap: an answer
that ends on its own is shorter, and the report gives requested and produced tokens side by side.

    python scripts/bench_serving.py --url http://127.0.0.1:8000 --model auto --request-rate 2 \\
        --num-prompts 100 --seed 0 [--max-concurrency 8] [--repeat-share 0.3] [--paraphrase-share 0.5] \\
        [--prompt-len-dist lognormal:64,0.8,4,512] [--max-tokens-dist lognormal:96,0.8,4,512] \\
        [--ttft-slo 1.0] [--tpot-slo 0.05] [--no-cache-header] [--out out/bench_serving.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

# ---------------------------------------------------------------- workload text
# (phrasing A, phrasing B) per template; a paraphrase swaps A for B with the same slot value. Pairs
# keep every number and name, so the cache's precision guard has no reason to reject them.
QUESTIONS: dict[str, list[tuple[str, str]]] = {
    "thing": [
        ("What is {x} and why does it matter?", "Can you explain what {x} is and why it is important?"),
        ("Explain {x} in simple terms.", "Describe {x} in plain language."),
        ("What do people often get wrong about {x}?", "What are common misconceptions about {x}?"),
    ],
    "skill": [
        ("How do I {x}?", "What is the best way to {x}?"),
        ("What are some beginner tips to {x}?", "Give me a few tips for a beginner who wants to {x}."),
    ],
    "place": [
        ("What should I see on a first trip to {x}?", "What are the must-see sights for a first visit to {x}?"),
        ("What is the food like in {x}?", "Tell me about the typical food of {x}."),
    ],
    "tech": [
        ("Explain {x} to a new programmer.", "How would you explain {x} to a beginner programmer?"),
        ("When should I use {x}?", "In which situations is {x} the right choice?"),
    ],
}
SLOTS: dict[str, list[str]] = {
    "thing": [
        "photosynthesis",
        "gravity",
        "plate tectonics",
        "the water cycle",
        "the immune system",
        "electricity",
        "magnetism",
        "a black hole",
        "inflation",
        "DNA",
        "a vaccine",
        "a glacier",
        "a coral reef",
        "a rainbow",
        "an earthquake",
        "the greenhouse effect",
        "a lunar eclipse",
        "compound interest",
        "evolution",
        "a volcano",
    ],
    "skill": [
        "bake sourdough bread",
        "learn a new language",
        "start running",
        "write a cover letter",
        "save money each month",
        "grow tomatoes",
        "tie a tie",
        "sleep better",
        "take better photos",
        "study for exams",
        "make friends in a new city",
        "keep a houseplant alive",
    ],
    "place": [
        "Japan",
        "Peru",
        "Iceland",
        "Morocco",
        "Canada",
        "Vietnam",
        "Portugal",
        "Kenya",
        "New Zealand",
        "Norway",
        "Mexico",
        "Greece",
    ],
    "tech": [
        "a hash table",
        "recursion",
        "binary search",
        "a REST API",
        "a database index",
        "garbage collection",
        "a linked list",
        "TCP",
        "a compiler",
        "a cache",
        "unit testing",
        "version control",
    ],
}
QUALIFIERS = [
    "",
    "",
    "",
    " Keep it short.",
    " Please answer briefly.",
    " Use an example.",
    " I am a complete beginner.",
    " Answer in a few sentences.",
]

# Context sentences (a "notes" system message) pad a prompt to its drawn length.
SENTENCES = [
    "The {adj} {noun} near the {place} was {verb} by a {adj2} {noun2}.",
    "Last {time}, a {noun} in the {place} {verb} every {noun2} it could find.",
    "Most people agree that a {adj} {noun} is better than a {adj2} {noun2}.",
    "In the {place}, the {noun} and the {noun2} were {verb} before {time}.",
    "My notes say the {adj} {noun} was never {verb} in the {place}.",
]
WORDS: dict[str, list[str]] = {
    "adj": ["quiet", "bright", "old", "heavy", "curious", "narrow", "warm", "simple", "rapid", "gentle"],
    "adj2": ["small", "patient", "noisy", "careful", "tall", "modern", "rusty", "clever", "pale", "steady"],
    "noun": ["river", "teacher", "engine", "garden", "letter", "market", "bridge", "library", "storm", "lamp"],
    "noun2": ["student", "ladder", "window", "neighbour", "recipe", "map", "violin", "bicycle", "harbour", "clock"],
    "verb": [
        "repaired",
        "painted",
        "visited",
        "measured",
        "described",
        "moved",
        "cleaned",
        "studied",
        "opened",
        "counted",
    ],
    "place": ["valley", "old town", "station", "museum", "village", "workshop", "park", "school", "kitchen", "port"],
    "time": ["week", "spring", "year", "winter", "summer", "month", "night", "autumn"],
}
NOTES_HEADER = "You are a helpful assistant. The user shared these notes:"


@dataclass(frozen=True)
class LengthDist:
    """A seeded length distribution, from a spec string.

    ``lognormal:MEAN,SIGMA,MIN,MAX``  (MEAN is the mean of the log-normal before clipping: mu is set
                                       to ln(MEAN) - SIGMA^2 / 2), ``uniform:MIN,MAX``, ``fixed:N``.
    """

    kind: str
    mean: float
    sigma: float = 0.0
    lo: int = 1
    hi: int = 1 << 20

    @classmethod
    def parse(cls, spec: str) -> LengthDist:
        kind, _, rest = spec.partition(":")
        try:
            nums = [float(x) for x in rest.split(",")] if rest else []
        except ValueError:
            raise ValueError(f"length distribution {spec!r}: numbers expected after ':'") from None
        shapes = {"lognormal": 4, "uniform": 2, "fixed": 1}
        if kind not in shapes or len(nums) != shapes[kind]:
            raise ValueError(
                f"length distribution {spec!r}: expected lognormal:MEAN,SIGMA,MIN,MAX, uniform:MIN,MAX or fixed:N"
            )
        if kind == "lognormal":
            d = cls(kind, nums[0], nums[1], int(nums[2]), int(nums[3]))
        elif kind == "uniform":
            d = cls(kind, (nums[0] + nums[1]) / 2, 0.0, int(nums[0]), int(nums[1]))
        else:
            d = cls(kind, nums[0], 0.0, int(nums[0]), int(nums[0]))
        if not (1 <= d.lo <= d.hi) or d.mean <= 0 or d.sigma < 0:
            raise ValueError(f"length distribution {spec!r}: need 1 <= MIN <= MAX, MEAN > 0, SIGMA >= 0")
        return d

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        if self.kind == "lognormal":
            x = rng.lognormal(math.log(self.mean) - self.sigma**2 / 2, self.sigma, n)
        elif self.kind == "uniform":
            x = rng.uniform(self.lo, self.hi + 1, n)  # integers lo..hi after the floor below
        else:
            x = np.full(n, self.mean)
        return np.clip(np.floor(x + (0.5 if self.kind != "uniform" else 0.0)), self.lo, self.hi).astype(int)


DEFAULT_PROMPT_LEN = "lognormal:64,0.8,4,512"  # words; 512 words + 512 tokens stay inside a 2048 context
DEFAULT_OUTPUT_LEN = "lognormal:96,0.8,4,512"  # max_tokens


def _question(rng: np.random.Generator) -> tuple[str, int, str, str]:
    """(slot kind, template index, slot value, qualifier) of a fresh question."""
    kind = list(QUESTIONS)[rng.integers(len(QUESTIONS))]
    return (
        kind,
        int(rng.integers(len(QUESTIONS[kind]))),
        SLOTS[kind][rng.integers(len(SLOTS[kind]))],
        QUALIFIERS[rng.integers(len(QUALIFIERS))],
    )


def _phrase(q: tuple[str, int, str, str], paraphrase: bool) -> str:
    kind, t, x, qual = q
    return QUESTIONS[kind][t][1 if paraphrase else 0].format(x=x) + qual


def _notes(rng: np.random.Generator, n_words: int) -> str:
    """A notes message of exactly ``n_words`` words (header included when it fits)."""
    words = NOTES_HEADER.split()
    while len(words) < n_words:
        s = SENTENCES[rng.integers(len(SENTENCES))]
        words += s.format(**{k: v[rng.integers(len(v))] for k, v in WORDS.items()}).split()
    return " ".join(words[:n_words])


def make_workload(
    n: int,
    seed: int = 0,
    *,
    repeat_share: float = 0.3,
    paraphrase_share: float = 0.5,
    prompt_len: LengthDist | str = DEFAULT_PROMPT_LEN,
    output_len: LengthDist | str = DEFAULT_OUTPUT_LEN,
) -> list[dict]:
    """``n`` seeded chat requests (same arguments -> the same list).

    Each is ``{"id", "kind", "messages", "max_tokens", "prompt_words", "source"}``. ``kind`` is
    ``fresh``, ``repeat`` (an earlier fresh request's messages and max_tokens, verbatim) or
    ``paraphrase`` (its notes and max_tokens, the question in its other phrasing); ``source`` is the
    id of that earlier request. Exactly ``round(repeat_share * n)`` requests (never the first) revisit
    an earlier one, ``round(paraphrase_share * that)`` of them as paraphrases. A repeat keeps the
    original's max_tokens because the cache scope includes it. A fresh prompt is the question alone
    when its drawn length is no longer than the question, else a notes system message fills the rest.
    """
    if not 0 <= repeat_share <= 1 or not 0 <= paraphrase_share <= 1:
        raise ValueError("repeat_share and paraphrase_share must be in [0, 1]")
    prompt_len = LengthDist.parse(prompt_len) if isinstance(prompt_len, str) else prompt_len
    output_len = LengthDist.parse(output_len) if isinstance(output_len, str) else output_len
    rng = np.random.default_rng(seed)
    prompt_words = prompt_len.sample(rng, n)
    max_tokens = output_len.sample(rng, n)
    n_repeat = min(round(repeat_share * n), max(n - 1, 0))
    repeat_at = rng.choice(np.arange(1, n), n_repeat, replace=False) if n_repeat else np.array([], int)
    n_para = round(paraphrase_share * n_repeat)
    paraphrase_at = set(rng.permutation(repeat_at)[:n_para].tolist())
    repeat_at = set(repeat_at.tolist())

    out: list[dict] = []
    fresh: list[tuple[int, tuple]] = []  # (request id, question) of fresh requests so far
    seen: set[str] = set()
    for i in range(n):
        if i in repeat_at:
            src, q = fresh[rng.integers(len(fresh))]
            orig = out[src]
            if i in paraphrase_at:
                messages = orig["messages"][:-1] + [{"role": "user", "content": _phrase(q, paraphrase=True)}]
                kind = "paraphrase"
            else:
                messages, kind = [dict(m) for m in orig["messages"]], "repeat"
            out.append(
                {
                    "id": i,
                    "kind": kind,
                    "messages": messages,
                    "max_tokens": orig["max_tokens"],
                    "prompt_words": _count_words(messages),
                    "source": src,
                }
            )
            continue
        for _ in range(20):  # a fresh question should not accidentally repeat an earlier one
            q = _question(rng)
            if _phrase(q, False) not in seen:
                break
        text = _phrase(q, False)
        seen.add(text)
        messages = [{"role": "user", "content": text}]
        room = int(prompt_words[i]) - len(text.split())
        if room > 0:
            messages.insert(0, {"role": "system", "content": _notes(rng, room)})
        fresh.append((i, q))
        out.append(
            {
                "id": i,
                "kind": "fresh",
                "messages": messages,
                "max_tokens": int(max_tokens[i]),
                "prompt_words": _count_words(messages),
                "source": None,
            }
        )
    return out


def _count_words(messages: list[dict]) -> int:
    return sum(len(m["content"].split()) for m in messages)


def arrival_times(n: int, request_rate: float, seed: int = 0) -> list[float]:
    """Seconds from the start at which each request is sent: a Poisson process (exponential gaps of
    mean 1 / rate, seeded); ``inf`` sends everything at once. The first request goes at t = 0."""
    if request_rate <= 0:
        raise ValueError("request_rate must be > 0 (inf: all at once)")
    if math.isinf(request_rate):
        return [0.0] * n
    gaps = np.random.default_rng(seed + 1).exponential(1.0 / request_rate, n)  # own stream: not the workload's
    gaps[0] = 0.0
    return np.cumsum(gaps).tolist()


# ---------------------------------------------------------------- one request


@dataclass
class RequestResult:
    id: int
    kind: str
    max_tokens: int
    ok: bool = False
    status: int | None = None
    error: str | None = None
    ttft: float | None = None  # s, to the first non-empty content delta
    e2e: float | None = None  # s, to the end of the stream
    itl: list[float] = field(default_factory=list)  # s per token (see _inter_token_latencies)
    deltas: int = 0  # non-empty content deltas received
    completion_tokens: int = 0  # from the usage chunk (deltas when the server sent none)
    prompt_tokens: int = 0
    cache: str | None = None  # x-cache
    served_by: str | None = None  # x-served-by
    itl_estimated: bool = False  # some delta carried several tokens

    @property
    def tpot(self) -> float | None:
        if not self.ok or self.completion_tokens < 2:
            return None
        return (self.e2e - self.ttft) / (self.completion_tokens - 1)


def _inter_token_latencies(times: list[float], completion_tokens: int) -> tuple[list[float], bool]:
    """Per-token gaps from the arrival times of content deltas.

    Usually one delta is one token and the gaps are exact. A delta can carry several tokens (the
    detokenizer holds back an incomplete UTF-8 character; a cache hit replays its answer in a few
    pieces): then each gap is divided by the average tokens per delta after the first,
    (completion_tokens - 1) / (deltas - 1). That is an estimate, flagged in the result.
    """
    gaps = np.diff(np.asarray(times)).tolist()
    if not gaps:
        return [], False
    per_delta = (completion_tokens - 1) / len(gaps)
    if per_delta <= 1:
        return gaps, False
    return [g / per_delta for g in gaps], True


async def send_request(
    session, url: str, model: str, req: dict, *, headers: dict, temperature: float, timeout_s: float
) -> RequestResult:
    """Stream one chat completion and time it. Never raises for a failed request: the failure is
    recorded (non-200 status, a broken stream, an error event, a stream without ``[DONE]``)."""
    import aiohttp

    res = RequestResult(id=req["id"], kind=req["kind"], max_tokens=req["max_tokens"])
    body = {
        "model": model,
        "messages": req["messages"],
        "max_tokens": req["max_tokens"],
        "temperature": temperature,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    times: list[float] = []
    done = False
    t0 = time.perf_counter()
    try:
        async with session.post(url, json=body, headers=headers, timeout=aiohttp.ClientTimeout(total=timeout_s)) as r:
            res.status = r.status
            res.cache, res.served_by = r.headers.get("x-cache"), r.headers.get("x-served-by")
            if r.status != 200:
                text = await r.text()
                try:
                    text = json.loads(text)["error"]["message"]
                except (ValueError, KeyError, TypeError):
                    pass
                res.error = f"HTTP {r.status}: {str(text)[:200]}"
                return res
            async for raw in r.content:  # one SSE line at a time
                line = raw.decode("utf-8", "replace").strip()
                if not line.startswith("data:"):
                    continue  # blank separators, ": comment" lines (e.g. a tier fallback notice)
                data = line[len("data:") :].strip()
                if data == "[DONE]":
                    done = True
                    break
                event = json.loads(data)
                if "error" in event:
                    res.error = f"error event: {str(event['error'].get('message', event['error']))[:200]}"
                    return res
                for choice in event.get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        times.append(time.perf_counter())
                if event.get("usage"):
                    res.completion_tokens = int(event["usage"].get("completion_tokens", 0))
                    res.prompt_tokens = int(event["usage"].get("prompt_tokens", 0))
    except (TimeoutError, aiohttp.ClientError, ValueError) as exc:  # ValueError: a bad JSON event
        res.error = f"{type(exc).__name__}: {str(exc)[:200]}"
        return res
    if not done:
        res.error = "stream ended without [DONE]"
        return res
    res.e2e = time.perf_counter() - t0
    res.deltas = len(times)
    if not times:
        res.error = "no content in the answer"
        return res
    res.ok = True
    res.ttft = times[0] - t0
    res.completion_tokens = res.completion_tokens or len(times)
    res.itl, res.itl_estimated = _inter_token_latencies(times, res.completion_tokens)
    return res


# ---------------------------------------------------------------- the run


async def run_benchmark(
    url: str,
    requests: list[dict],
    *,
    model: str = "auto",
    request_rate: float = math.inf,
    max_concurrency: int | None = None,
    seed: int = 0,
    ttft_slo: float = 1.0,
    tpot_slo: float = 0.05,
    no_cache: bool = False,
    api_key: str | None = "bench-serving",
    temperature: float = 0.0,
    timeout_s: float = 600.0,
    progress: bool = True,
    return_results: bool = False,
) -> dict:
    """Send ``requests`` (from ``make_workload``) to the gateway at ``url`` and return ``summarize``'s
    report. Arrivals follow ``arrival_times(len(requests), request_rate, seed)``; at most
    ``max_concurrency`` are in flight (a request that arrives when all slots are busy waits, and its
    latency counts from when it is sent). ``no_cache`` sends ``Cache-Control: no-cache, no-store``
    (the cache neither answers nor stores). With ``return_results`` the report has a ``requests``
    list (one dict per request)."""
    import aiohttp
    from tqdm import tqdm

    endpoint = url.rstrip("/") + "/v1/chat/completions"
    headers = {"Cache-Control": "no-cache, no-store"} if no_cache else {}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    offsets = arrival_times(len(requests), request_rate, seed)
    sem = asyncio.Semaphore(max_concurrency) if max_concurrency else None
    bar = tqdm(total=len(requests), desc="requests", file=sys.stderr, disable=not progress)

    async def one(session, req, offset, start):
        await asyncio.sleep(max(0.0, start + offset - time.perf_counter()))
        if sem is None:
            res = await send_request(
                session, endpoint, model, req, headers=headers, temperature=temperature, timeout_s=timeout_s
            )
        else:
            async with sem:
                res = await send_request(
                    session, endpoint, model, req, headers=headers, temperature=temperature, timeout_s=timeout_s
                )
        bar.update(1)
        return res

    connector = aiohttp.TCPConnector(limit=max_concurrency or 0)  # 0: no client-side cap
    async with aiohttp.ClientSession(connector=connector) as session:
        start = time.perf_counter()
        results = await asyncio.gather(*(one(session, r, o, start) for r, o in zip(requests, offsets)))
        duration = time.perf_counter() - start
    bar.close()
    report = summarize(results, duration, ttft_slo=ttft_slo, tpot_slo=tpot_slo)
    report["config"] = {
        "url": url,
        "model": model,
        "request_rate": request_rate if math.isfinite(request_rate) else "inf",
        "max_concurrency": max_concurrency,
        "seed": seed,
        "num_prompts": len(requests),
        "no_cache": no_cache,
        "temperature": temperature,
    }
    report["workload"] = workload_stats(requests)
    if return_results:
        report["requests"] = [{**asdict(r), "tpot": r.tpot} for r in results]
    return report


def _stats_ms(values: list[float]) -> dict:
    if not values:
        return {"mean": None, "p50": None, "p90": None, "p99": None, "n": 0}
    a = np.asarray(values) * 1000
    p50, p90, p99 = np.percentile(a, [50, 90, 99])
    return {
        "mean": round(float(a.mean()), 3),
        "p50": round(float(p50), 3),
        "p90": round(float(p90), 3),
        "p99": round(float(p99), 3),
        "n": len(values),
    }


def summarize(results: list[RequestResult], duration: float, *, ttft_slo: float = 1.0, tpot_slo: float = 0.05) -> dict:
    """The report of one run. Percentiles in ms; throughputs per second of ``duration`` (first send to
    last answer). Goodput: completed requests with TTFT < ttft_slo and TPOT < tpot_slo (an answer of
    one token has no TPOT and meets that SLO), per second; goodput_fraction is their share of all
    requests sent, failed ones included."""
    ok = [r for r in results if r.ok]
    failed = [r for r in results if not r.ok]
    out_tokens = sum(r.completion_tokens for r in ok)
    prompt_tokens = sum(r.prompt_tokens for r in ok)
    good = [r for r in ok if r.ttft < ttft_slo and (r.tpot is None or r.tpot < tpot_slo)]
    tiers: dict[str, int] = {}
    hits_by_tier: dict[str, int] = {}
    for r in ok:
        tier = r.served_by or "unknown"
        tiers[tier] = tiers.get(tier, 0) + 1
        if r.cache == "hit":
            hits_by_tier[tier] = hits_by_tier.get(tier, 0) + 1
    errors: dict[str, int] = {}
    for r in failed:
        errors[r.error or "unknown"] = errors.get(r.error or "unknown", 0) + 1
    hits = sum(1 for r in ok if r.cache == "hit")
    misses = [r for r in ok if r.cache != "hit"]
    d = max(duration, 1e-9)
    return {
        "completed": len(ok),
        "failed": len(failed),
        "duration_s": round(duration, 3),
        "request_throughput": round(len(ok) / d, 4),
        "output_token_throughput": round(out_tokens / d, 3),
        "total_token_throughput": round((prompt_tokens + out_tokens) / d, 3),
        "prompt_tokens": prompt_tokens,
        "completion_tokens": out_tokens,
        "max_tokens_requested": sum(r.max_tokens for r in ok),
        "ttft_ms": _stats_ms([r.ttft for r in ok]),
        "tpot_ms": _stats_ms([r.tpot for r in ok if r.tpot is not None]),
        "itl_ms": _stats_ms([g for r in ok for g in r.itl]),
        "e2e_ms": _stats_ms([r.e2e for r in ok]),
        # hits replay a stored answer: the engine's own latency shows without them
        "ttft_ms_misses": _stats_ms([r.ttft for r in misses]),
        "tpot_ms_misses": _stats_ms([r.tpot for r in misses if r.tpot is not None]),
        "itl_estimated_requests": sum(1 for r in ok if r.itl_estimated),
        "cache_hits": hits,
        "cache_hit_share": round(hits / len(ok), 4) if ok else 0.0,
        "requests_by_tier": tiers,
        "cache_hits_by_tier": hits_by_tier,
        "slo": {"ttft_s": ttft_slo, "tpot_s": tpot_slo},
        "good_requests": len(good),
        "goodput": round(len(good) / d, 4),
        "goodput_fraction": round(len(good) / len(results), 4) if results else 0.0,
        "errors": errors,
    }


def workload_stats(requests: list[dict]) -> dict:
    kinds: dict[str, int] = {}
    for r in requests:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    pw = [r["prompt_words"] for r in requests]
    mt = [r["max_tokens"] for r in requests]
    return {
        "kinds": kinds,
        "prompt_words_mean": round(float(np.mean(pw)), 1) if pw else 0,
        "prompt_words_max": max(pw, default=0),
        "max_tokens_mean": round(float(np.mean(mt)), 1) if mt else 0,
        "max_tokens_max": max(mt, default=0),
    }


# ---------------------------------------------------------------- CLI


def _rate(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError("must be > 0 (or inf)")
    return value


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--model", default="auto", help="'auto' lets the gateway's router pick the tier")
    p.add_argument(
        "--request-rate", type=_rate, default=math.inf, help="Poisson arrivals per second (inf: all at once)"
    )
    p.add_argument("--max-concurrency", type=int, default=None, help="at most this many requests in flight")
    p.add_argument("--num-prompts", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeat-share", type=float, default=0.3, help="share of requests asking an earlier question again")
    p.add_argument("--paraphrase-share", type=float, default=0.5, help="share of those repeats that are paraphrased")
    p.add_argument(
        "--prompt-len-dist",
        default=DEFAULT_PROMPT_LEN,
        help="prompt length in words: lognormal:MEAN,SIGMA,MIN,MAX | uniform:MIN,MAX | fixed:N",
    )
    p.add_argument("--max-tokens-dist", default=DEFAULT_OUTPUT_LEN, help="max_tokens, same forms")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--ttft-slo", type=float, default=1.0, help="seconds")
    p.add_argument("--tpot-slo", type=float, default=0.05, help="seconds")
    p.add_argument(
        "--no-cache-header",
        action="store_true",
        help="send Cache-Control: no-cache, no-store (measure the engines, not the cache)",
    )
    p.add_argument("--api-key", default="bench-serving")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per request")
    p.add_argument("--save-requests", action="store_true", help="add every request's measurements to the JSON")
    p.add_argument("--out", default="out/bench_serving.json")
    args = p.parse_args(argv)
    if args.num_prompts < 1:
        p.error("--num-prompts must be >= 1")
    if args.max_concurrency is not None and args.max_concurrency < 1:
        p.error("--max-concurrency must be >= 1")
    try:
        requests = make_workload(
            args.num_prompts,
            args.seed,
            repeat_share=args.repeat_share,
            paraphrase_share=args.paraphrase_share,
            prompt_len=args.prompt_len_dist,
            output_len=args.max_tokens_dist,
        )
    except ValueError as exc:
        p.error(str(exc))
    report = asyncio.run(
        run_benchmark(
            args.url,
            requests,
            model=args.model,
            request_rate=args.request_rate,
            max_concurrency=args.max_concurrency,
            seed=args.seed,
            ttft_slo=args.ttft_slo,
            tpot_slo=args.tpot_slo,
            no_cache=args.no_cache_header,
            api_key=args.api_key,
            temperature=args.temperature,
            timeout_s=args.timeout,
            return_results=args.save_requests,
        )
    )
    from runtime.platform import cpu_info

    report["cpu"] = cpu_info()  # this client's host; the gateway may run on another
    text = json.dumps(report, indent=None)
    print(text, flush=True)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0 if report["completed"] else 1


if __name__ == "__main__":
    sys.exit(main())
