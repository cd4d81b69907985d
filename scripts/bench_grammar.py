"""Grammar-constrained decoding libraries, measured on the project's real tokenizers.

What it measures, per library (llguidance, xgrammar, outlines-core) and tokenizer (SmolLM2-135M, vocab
49152; optionally Gemma 3 270M, vocab 262144):

* tokenizer preparation: the one-off per-model cost (token trie / vocabulary tables);
* grammar compile time for ``json_object`` (any JSON object) and for a nested JSON schema (objects,
  arrays, enums, required fields, integers), median over a few fresh compiles with caches off;
* per-token mask-fill time, median and p99, while walking a ~100-token valid JSON answer (the answer is
  the tokenizer's own encoding of a valid instance; every token must be accepted and EOS must be allowed
  at the end, or the run is reported as failed);
* install footprint: the package's size on disk and its declared run-time dependencies.

Roofline note: grammar masking is branchy host-side work (a token trie walk per step), so there is no
memory-bandwidth fraction to report; the figure that matters is the mask time against a decode step
(SmolLM2 decodes in ~2-5 ms per step on an accelerator), since the host mask must be ready before the
sampler runs.

xgrammar pulls torch, transformers and triton (a 286 MB wheel) into the environment, so it is not in the
project's venv: install the peers into a side directory and point ``--peers`` at it::

    .venv/bin/pip install --no-deps --target /tmp/bench_peers xgrammar==0.2.9 apache-tvm-ffi outlines-core==0.2.14
    .venv/bin/python scripts/bench_grammar.py --peers /tmp/bench_peers

Prints JSON and writes docs/results/bench_grammar.json.
"""

from __future__ import annotations

import argparse
import functools
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "role": {"enum": ["admin", "editor", "viewer"]},
        "active": {"type": "boolean"},
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "integer"}},
            "required": ["street", "city", "zip"],
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "scores": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"subject": {"type": "string"}, "value": {"type": "integer"}},
                "required": ["subject", "value"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["name", "age", "role", "active", "address", "tags", "scores"],
    "additionalProperties": False,
}

ANSWER = {
    "name": "Ada Lovelace",
    "age": 36,
    "role": "editor",
    "active": True,
    "address": {"street": "12 St James's Square", "city": "London", "zip": 10115},
    "tags": ["mathematics", "poetry", "engines", "notes"],
    "scores": [
        {"subject": "analysis", "value": 97},
        {"subject": "algebra", "value": 91},
        {"subject": "bernoulli numbers", "value": 99},
    ],
}

JSON_OBJECT_SCHEMA = {"type": "object"}


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def summarize_ms(samples_s: list[float]) -> dict[str, float]:
    ms = [s * 1e3 for s in samples_s]
    return {
        "median_ms": round(statistics.median(ms), 4),
        "p99_ms": round(percentile(ms, 99), 4),
        "max_ms": round(max(ms), 4),
        "n": len(ms),
    }


def timed(fn, repeats: int) -> tuple[list[float], object]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


# --- footprint ------------------------------------------------------------------------------


def footprint(dist_name: str, peers: str | None) -> dict:
    paths = [peers] if peers else None
    try:
        dist = next(iter(importlib.metadata.distributions(name=dist_name, path=paths))) if paths else None
        dist = dist or importlib.metadata.distribution(dist_name)
    except (StopIteration, importlib.metadata.PackageNotFoundError):
        return {"installed": False}
    size = 0
    for f in dist.files or []:
        p = Path(dist.locate_file(f))
        if p.is_file():
            size += p.stat().st_size
    requires = [r for r in (dist.requires or []) if "extra ==" not in r]
    return {"version": dist.version, "installed_mb": round(size / 2**20, 1), "requires": requires}


def import_seconds(module: str, peers: str | None) -> float:
    env = dict(os.environ)
    if peers:
        env["PYTHONPATH"] = peers + os.pathsep + env.get("PYTHONPATH", "")
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    return round(float(out.stdout.strip().splitlines()[-1]), 3) if out.returncode == 0 else float("nan")


# --- the libraries --------------------------------------------------------------------------


class LLGuidanceBench:
    """The shipped path: ``runtime.structured.GrammarCompiler`` (cache cleared before each compile, so
    every compile is a miss) and ``CompiledGrammar.matcher()`` (a deep copy of the compiled prototype)."""

    name = "llguidance"
    dist = "llguidance"
    module = "llguidance"

    def __init__(self, tok) -> None:
        from runtime.structured import GrammarCompiler

        self.tok = tok
        times, self.compiler = timed(lambda: GrammarCompiler(tok), 1)
        self.prepare_s = times[0]

    def compile(self, schema: dict):
        from runtime.structured import StructuredSpec

        if schema == JSON_OBJECT_SCHEMA:
            spec = StructuredSpec.from_openai({"type": "json_object"})
        else:
            spec = StructuredSpec(format="json_schema", schema=json.dumps(schema))
        self.compiler._cache.clear()
        return self.compiler.compile(spec)

    def matcher(self, compiled):
        return compiled.matcher()

    @staticmethod
    def fill(matcher, row: np.ndarray) -> None:
        matcher.fill_bitmask(row)

    @staticmethod
    def accept(matcher, token: int) -> bool:
        return matcher.accept(token)


class XGrammarBench:
    name = "xgrammar"
    dist = "xgrammar"
    module = "xgrammar"

    def __init__(self, tok) -> None:
        import xgrammar as xgr

        self.tok = tok

        def prepare():
            vocab = [tok.token_bytes(i) for i in range(tok.vocab_size)]
            info = xgr.TokenizerInfo(
                vocab, xgr.VocabType.RAW, vocab_size=tok.vocab_size, stop_token_ids=sorted(tok.stop_token_ids)
            )
            return info

        times, self.info = timed(prepare, 1)
        self.prepare_s = times[0]

    def compile(self, schema: dict):
        import xgrammar as xgr

        compiler = xgr.GrammarCompiler(self.info, max_threads=2, cache_enabled=False)
        return compiler.compile_json_schema(json.dumps(schema), any_whitespace=True)

    def matcher(self, compiled):
        import xgrammar as xgr

        return xgr.GrammarMatcher(compiled)

    @staticmethod
    def fill(matcher, row: np.ndarray) -> None:
        matcher.fill_next_token_bitmask(row[None, :])

    @staticmethod
    def accept(matcher, token: int) -> bool:
        return matcher.accept_token(token)


class OutlinesCoreBench:
    """A regex DFA index over the whole vocabulary, built ahead of time: no recursion, so
    ``json_object`` is a depth-limited regex (its compile time is the point of the comparison)."""

    name = "outlines-core"
    dist = "outlines-core"
    module = "outlines_core"

    def __init__(self, tok) -> None:
        import outlines_core as oc

        self.tok = tok

        def prepare():
            eos = tok.eos_token_id
            mapping: dict[bytes, list[int]] = {}
            for i in range(tok.vocab_size):
                if i == eos or i in tok.control_token_ids:
                    continue
                mapping.setdefault(tok.token_bytes(i), []).append(i)
            return oc.Vocabulary(eos, mapping)

        times, self.vocab = timed(prepare, 1)
        self.prepare_s = times[0]

    def compile(self, schema: dict):
        import outlines_core as oc
        from outlines_core.json_schema import build_regex_from_schema

        return oc.Index(build_regex_from_schema(json.dumps(schema)), self.vocab)

    def matcher(self, index):
        import outlines_core as oc

        return oc.Guide(index)

    @staticmethod
    def fill(guide, row: np.ndarray) -> None:
        guide.write_mask_into(row.ctypes.data, row.size, row.itemsize)

    @staticmethod
    def accept(guide, token: int) -> bool:
        guide.advance(token, return_tokens=False)
        return True


# --- the runs -------------------------------------------------------------------------------


def walk(bench, compiled, answer_tokens: list[int], eos: int, words: int, runs: int) -> dict:
    """Fill a mask before each answer token (timed), check the token is allowed, accept it."""
    samples, first = [], []
    ok = True
    for _ in range(runs):
        m = bench.matcher(compiled)
        row = np.zeros(words, dtype=np.int32)
        for step, token in enumerate(answer_tokens):
            t0 = time.perf_counter()
            bench.fill(m, row)
            dt = time.perf_counter() - t0
            (first if step == 0 else samples).append(dt)
            if not (int(row[token >> 5]) >> (token & 31)) & 1 or not bench.accept(m, token):
                ok = False
                break
        bench.fill(m, row)
        ok = ok and bool((int(row[eos >> 5]) >> (eos & 31)) & 1)
    out = summarize_ms(samples) if samples else {}
    out["first_mask_ms"] = round(statistics.median(first) * 1e3, 4) if first else None
    out["answer_accepted_and_eos_allowed"] = ok
    return out


def run_model(model: str, libs: list[str], compile_repeats: int, runs: int, timeout_s: float) -> dict:
    from runtime.loading.presets import resolve_gguf
    from runtime.loading.tokenizer import Tokenizer

    tok = Tokenizer.from_gguf(resolve_gguf(model))
    answer_text = json.dumps(ANSWER)
    answer_tokens = tok.encode(answer_text, add_bos=False)
    words = (tok.vocab_size + 31) // 32
    eos = tok.eos_token_id
    result = {"vocab_size": tok.vocab_size, "answer_tokens": len(answer_tokens), "libraries": {}}
    classes = {"llguidance": LLGuidanceBench, "xgrammar": XGrammarBench, "outlines-core": OutlinesCoreBench}
    for lib in libs:
        print(f"[{model}] {lib}", file=sys.stderr, flush=True)
        try:
            bench = classes[lib](tok)
        except ImportError as e:
            result["libraries"][lib] = {"error": f"not importable: {e}"}
            continue
        entry: dict = {"tokenizer_prepare_s": round(bench.prepare_s, 3)}
        for label, schema in (("json_object", JSON_OBJECT_SCHEMA), ("nested_schema", NESTED_SCHEMA)):
            t_start = time.perf_counter()
            try:
                times, compiled = timed(functools.partial(bench.compile, schema), 1)
                if times[0] < timeout_s:  # a slow compile is measured once; it is the finding
                    more, compiled = timed(functools.partial(bench.compile, schema), compile_repeats - 1)
                    times += more
            except Exception as e:  # a library that cannot compile the grammar: that is the result
                entry[label] = {"error": f"{type(e).__name__}: {e}"[:300], "after_s": time.perf_counter() - t_start}
                continue
            sub = {"compile_ms_median": round(statistics.median(times) * 1e3, 2), "compiles": len(times)}
            sub["mask"] = walk(bench, compiled, answer_tokens, eos, words, runs)
            entry[label] = sub
        result["libraries"][lib] = entry
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peers", default=None, help="directory with xgrammar / outlines-core installed (--target)")
    ap.add_argument("--models", nargs="+", default=["smollm2-135m", "gemma3-270m"])
    ap.add_argument("--libs", nargs="+", default=["llguidance", "xgrammar", "outlines-core"])
    ap.add_argument("--compile-repeats", type=int, default=7)
    ap.add_argument("--runs", type=int, default=5, help="walks of the answer per grammar")
    ap.add_argument("--slow-compile-s", type=float, default=5.0, help="compile once only above this")
    ap.add_argument("--out", default=str(ROOT / "docs/results/bench_grammar.json"))
    args = ap.parse_args()
    if args.peers:
        sys.path.append(args.peers)

    from runtime.platform import cpu_info

    report = {
        "benchmark": "grammar-constrained decoding: compile and per-token mask fill (host CPU)",
        "cpu": cpu_info(),
        "host": {"cpu_count": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version()},
        "nested_schema": NESTED_SCHEMA,
        "answer": ANSWER,
        "footprint": {},
        "models": {},
    }
    dists = {"llguidance": "llguidance", "xgrammar": "xgrammar", "outlines-core": "outlines-core"}
    modules = {"llguidance": "llguidance", "xgrammar": "xgrammar", "outlines-core": "outlines_core"}
    for lib in args.libs:
        fp = footprint(dists[lib], args.peers if lib != "llguidance" else None)
        fp["import_s"] = import_seconds(modules[lib], args.peers)
        report["footprint"][lib] = fp
    report["footprint"]["notes"] = (
        "xgrammar's requires also pull triton 3.9.0 (a 286 MB wheel) on Linux x86_64 and apache-tvm-ffi "
        "(13 MB); torch (754 MB here) and transformers (129 MB) are already in this venv for "
        "sentence-transformers. llguidance and outlines-core have no run-time dependencies."
    )
    for model in args.models:
        report["models"][model] = run_model(model, args.libs, args.compile_repeats, args.runs, args.slow_compile_s)
    text = json.dumps(report, indent=2)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
