"""Grammar-constrained decoding through SmolLM2's real engine: the llguidance masks enter the jitted
sampler row by row, so structured and free requests share a batch (and preemption) without changing
each other, every finished structured answer parses against its schema, and nothing recompiles."""

from __future__ import annotations

import json

import jsonschema
import pytest

from runtime.api import EngineConfig, SamplingParams
from runtime.engine.llm_engine import LLMEngine
from runtime.structured.spec import StructuredSpec

pytestmark = pytest.mark.slow

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "maxLength": 30},
        "population": {"type": "integer"},
        "districts": {"type": "array", "items": {"type": "string", "maxLength": 20}, "maxItems": 3},
        "coastal": {"type": "boolean"},
    },
    "required": ["city", "population", "districts", "coastal"],
}
FORMAT = StructuredSpec.from_openai(
    response_format={"type": "json_schema", "json_schema": {"name": "c", "schema": SCHEMA}}
)
TOOLS = StructuredSpec.from_openai(
    **{
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "parameters": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 40}}},
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "lookup"}},
    }
)
ASK = [{"role": "user", "content": "Describe a city as JSON."}]
FREE = [{"role": "user", "content": "List ten animals, one per line."}]


@pytest.fixture(scope="module")
def e() -> LLMEngine:
    """One engine for the module (a KV cache of 24 blocks: too small for eight requests at once)."""
    from runtime.loading.gguf import load_gguf
    from runtime.loading.presets import resolve_gguf

    config = EngineConfig(max_model_len=512, max_num_seqs=8, max_num_batched_tokens=32, num_blocks=24)
    return LLMEngine(config, loaded=load_gguf(resolve_gguf("smollm2-135m")))


def test_structured_and_free_requests_share_a_batch_and_preemption(e):
    """Eight requests, half constrained, in a KV cache too small for all: each answer equals the same
    request run alone, and every structured one parses and validates."""
    prompts, params = [], []
    for i in range(8):
        structured = FORMAT if i % 4 == 0 else TOOLS if i % 4 == 1 else None
        prompts.append(ASK if structured else FREE)
        params.append(SamplingParams(max_tokens=90, temperature=0.0, structured=structured))
    together = e.generate(prompts, params)
    assert e.stats().num_preemptions_total > 0, "the test must exercise preemption"
    alone = [e.generate([p], [sp])[0] for p, sp in zip(prompts, params)]
    for i, (a, t) in enumerate(zip(alone, together)):
        assert t.token_ids == a.token_ids, i
        if params[i].structured == FORMAT:
            assert t.finish_reason == "stop", t
            jsonschema.validate(json.loads(t.text), SCHEMA)
        elif params[i].structured == TOOLS:
            call = json.loads(t.text)
            assert call["name"] == "lookup" and isinstance(call["arguments"], dict), t.text
    # sampled: still always valid (a few seeds)
    sampled = e.generate(
        [ASK] * 3, [SamplingParams(max_tokens=90, temperature=1.0, seed=s, structured=FORMAT) for s in range(3)]
    )
    for o in sampled:
        assert o.finish_reason == "stop", o
        jsonschema.validate(json.loads(o.text), SCHEMA)


def test_the_grammar_adds_no_step_program_and_only_typed_specs_reach_the_engine(e):
    for _ in range(2):  # what the same plain request compiles: its prefill, then (a prefix hit) the rest of it
        e.generate([ASK], [SamplingParams(max_tokens=60, ignore_eos=True)])
    programs = (e.runner._logits._cache_size(), e.runner._sample._cache_size())
    out = e.generate([ASK], [SamplingParams(max_tokens=60, structured=FORMAT)])[0]
    jsonschema.validate(json.loads(out.text), SCHEMA)
    # same shapes: the bitmask is always an input (the model's program and the sampler's)
    assert (e.runner._logits._cache_size(), e.runner._sample._cache_size()) == programs
    # A spec is parsed (and every field checked) before it reaches the engine: the engine takes only a typed one
    with pytest.raises(ValueError, match="structured must be None or a StructuredSpec"):
        e.add_request(ASK, SamplingParams(structured=FORMAT.to_json()))
