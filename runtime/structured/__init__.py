"""Grammar-constrained decoding for OpenAI ``response_format`` and ``tools`` / ``tool_choice``.

Data flow::

    gateway/engine front:  StructuredSpec.from_openai(response_format, tools, tool_choice)  -> spec | None
                           (ValueError naming the field -> HTTP 400)
    engine, once per model: GrammarCompiler(tokenizer, vocab_size=model vocab)
    per request:            compiler.compile(spec).matcher() -> Matcher        (LRU-cached compile)
    per decode step (host): matcher.fill_bitmask(row)  or  BatchFiller.fill([(matcher, row), ...], bitmask)
    in the jitted sampler:  runtime.structured.bitmask.apply_bitmask(logits, bitmask, enabled)
    after sampling:         matcher.accept(token); matcher.is_terminated() -> finish the request
    at the end:             parse_output(text, spec) -> (content, tool_calls)

``runtime.structured.bitmask`` (JAX) is imported separately so the gateway can build and check specs
without loading JAX.

Why llguidance (scripts/bench_grammar.py on this 2-core host, one run; docs/results/bench_grammar.json).
Masks are per token over a 125-token (SmolLM2) / 118-token (Gemma) valid answer, 5 walks; compiles are
medians of 7 cache misses (1 for outlines-core's slow ones)::

    SmolLM2-135M, V=49152        llguidance 1.9.1     xgrammar 0.2.9        outlines-core 0.2.14
    tokenizer prepare            0.29 s               0.23 s                0.38 s
    compile json_object          0.61 ms              13.4 ms               12.7 s (depth-limited regex)
    compile nested schema        1.32 ms              15.8 ms               411 ms
    mask json_object  med / p99  13 / 48 us           23 / 51 us            167 / 226 us
    mask nested       med / p99  15 / 46 us           4.8 / 44 us           4.4 / 224 us
    Gemma 3 270M, V=262144
    tokenizer prepare            1.97 s               0.45 s                0.89 s
    compile json_object / nested 1.06 / 2.2 ms        74.5 / 74.7 ms        40 s / 5.5 s
    mask json_object  med / p99  44 / 134 us          60 / 143 us           680 / 1089 us
    mask nested       med / p99  30 / 98 us           7.5 / 108 us          5.7 / 1306 us
    install                      7.5 MB, no deps      3.6 MB + apache-tvm-ffi 13 MB, torch,    5.2 MB, no deps
                                 import 0.09 s        transformers, triton (286 MB wheel);
                                                      import 2.6 s (torch)

llguidance because: (1) compile is 10-70x faster than xgrammar's, and tool schemas differ per request,
so the compile sits on the request path (1-2 ms, not 15-75 ms of time to first token); (2) per-token
masks are in the same range: xgrammar's median is lower on a fixed schema (5-8 us vs 15-30 us, its
precomputed adaptive cache) but the p99s match and all are far below a decode step; (3) Lark with
regex ``&``/``~`` expresses the ``tool_choice="auto"`` grammar (text that never contains the marker,
or text then marker then calls) in one lexer, plus rollback and a GIL-free parallel batch filler;
(4) no dependencies, where xgrammar brings torch and triton into a JAX server. outlines-core compiles a
whole-vocabulary DFA per schema ahead of time: seconds to tens of seconds, no recursive JSON.
The price: llguidance's one-off tokenizer preparation is ~2 s for Gemma's 262144 ids (once per model).
"""

from typing import TYPE_CHECKING

from runtime.structured.spec import (
    TOOL_CALL_MARKER,
    WHITESPACE_MAX,
    StructuredSpec,
    ToolFunction,
    parse_output,
    parse_tool_calls,
)

# The matcher (llguidance's tokenizer side and NumPy bitmasks) loads on first use, so importing
# ``runtime.structured.spec`` (as the JAX- and NumPy-free contract ``runtime.api`` does, to type
# ``SamplingParams.structured``) stays pure Python.
if TYPE_CHECKING:  # what __getattr__ below hands out, for type checkers and readers
    from runtime.structured.matcher import (
        BatchFiller,
        CompiledGrammar,
        GrammarCompiler,
        Matcher,
        bitmask_words,
        build_ll_tokenizer,
    )

_MATCHER_NAMES = ("BatchFiller", "CompiledGrammar", "GrammarCompiler", "Matcher", "bitmask_words", "build_ll_tokenizer")


def __getattr__(name: str):
    if name in _MATCHER_NAMES:
        from runtime.structured import matcher

        return getattr(matcher, name)
    raise AttributeError(f"module 'runtime.structured' has no attribute {name!r}")


__all__ = [
    "TOOL_CALL_MARKER",
    "WHITESPACE_MAX",
    "BatchFiller",
    "CompiledGrammar",
    "GrammarCompiler",
    "Matcher",
    "StructuredSpec",
    "ToolFunction",
    "bitmask_words",
    "build_ll_tokenizer",
    "parse_output",
    "parse_tool_calls",
]
