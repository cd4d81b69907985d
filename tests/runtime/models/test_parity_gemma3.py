"""Model-level parity: our JAX Gemma 3 270M against Hugging Face transformers loading the same GGUF file.

Both dequantize the same Q4_K/Q5_0/Q6_K/Q8_0 blocks to float32, so what remains is float summation
order: logits are compared elementwise with the float32 row of the tolerance table. Gemma-specific
paths each have a case: a prompt longer than the 512-token sliding window (local layers must forget
what global layers still see), runs of spaces, tabs and newlines (the tokenizer's user-defined
tokens), and the Gemma turn format (the file has no chat template; ours is the fallback).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.parity_prompts import CHAT, GREEDY_CASES, PROMPTS, greedy_against_hf, hf_reference

pytestmark = pytest.mark.slow

# One table per dtype: (rtol, atol) on logits whose magnitudes reach ~30. Measured on these prompts
# (oneDNN matmuls, 2-core x86): at most 4.2e-5 absolute, and within 3.4e-5 of rtol 1e-4 alone.
TOLERANCES = {"float32": (1e-4, 2e-4)}

TOKENIZER_TEXTS = PROMPTS + [
    "a  b   c    d     e\t\tf\n\n\ng \n h",
    " leading space, trailing space ",
    "Ünïcödé ﬁ ligature, combining é, Ω≈ç√∫, 𝔸𝔹ℂ, 👩‍👩‍👧 family",
    "camelCaseIdentifier snake_case_identifier kebab-case-identifier 0x1F 1e-9 $3,000.50",
    "<b>bold</b> <start_of_turn> not parsed unless asked [multimodal] \u0007 bell",
    "",
]


def long_prompt(n_sentences: int = 60) -> str:
    """~600 tokens of varied, seeded text: longer than the 512-token sliding window."""
    rng = np.random.default_rng(0)
    who = ["The engineer", "A farmer", "My neighbour", "The old captain", "Every student", "The mayor"]
    did = ["repaired", "painted", "sold", "counted", "described", "photographed"]
    what = ["the bridge", "seven lanterns", "a red bicycle", "the lighthouse", "forty apples", "the clock tower"]
    where = ["in Lisbon", "near the river", "before dawn", "after the storm", "in March", "at the market"]
    words = [who, did, what, where]
    return (
        " ".join(f"{i + 1}. " + " ".join(str(rng.choice(w)) for w in words) + "." for i in range(n_sentences))
        + " In summary, the first sentence said that"
    )


@pytest.fixture(scope="module")
def gemma3():
    from runtime.engine.offline import Generator
    from runtime.worker.model_runner import enable_compilation_cache

    enable_compilation_cache()
    return Generator("gemma3-270m", dtype="float32", attention_backend="xla")


@pytest.fixture(scope="module")
def hf():
    return hf_reference("gemma3-270m")


def test_config_matches_hf(gemma3, hf):
    _, model = hf
    ours, ref = gemma3.config, model.config
    assert (ours.num_layers, ours.hidden_size, ours.num_heads, ours.num_kv_heads, ours.head_dim) == (
        ref.num_hidden_layers,
        ref.hidden_size,
        ref.num_attention_heads,
        ref.num_key_value_heads,
        ref.head_dim,
    )
    assert ours.sliding_window == ref.sliding_window == 512
    assert [w is not None for w in ours.layer_sliding_windows] == [t == "sliding_attention" for t in ref.layer_types]
    assert ours.attn_scale == ref.query_pre_attn_scalar**-0.5
    assert ref.final_logit_softcapping is None and ours.final_logit_softcap is None
    assert ref.rope_parameters["full_attention"]["rope_theta"] == ours.rope_theta == 1e6
    assert ref.rope_parameters["sliding_attention"]["rope_theta"] == ours.rope_local_theta == 1e4


@pytest.mark.parametrize("text", TOKENIZER_TEXTS + [long_prompt()], ids=range(len(TOKENIZER_TEXTS) + 1))
def test_tokenizer_ids_match_hf(gemma3, hf, text):
    tok, _ = hf
    ours = gemma3.tokenizer
    # HF parses control-token text by default; ours only when asked.
    assert ours.encode(text, parse_special=True) == tok(text)["input_ids"]
    assert ours.decode(ours.encode(text)) == text


def test_tokenizer_special_ids_and_chat_template(gemma3, hf):
    tok, _ = hf
    ours = gemma3.tokenizer
    assert (ours.bos_token_id, ours.eos_token_id) == (tok.bos_token_id, tok.eos_token_id) == (2, 1)
    assert {ours.token_to_id("<end_of_turn>"), ours.eos_token_id} <= ours.stop_token_ids
    for messages in CHAT:
        text = ours.render_chat_template(messages, add_generation_prompt=True)
        assert text.startswith("<bos><start_of_turn>user\n") and text.endswith("<end_of_turn>\n<start_of_turn>model\n")
        assert ours.apply_chat_template(messages) == tok(text, add_special_tokens=False)["input_ids"]


def _hf_last_logits(model, ids):
    import torch

    with torch.no_grad():
        return model(torch.tensor([ids]), logits_to_keep=1).logits[0, -1].numpy()


@pytest.mark.parametrize("prompt", PROMPTS + ["<long>"], ids=range(len(PROMPTS) + 1))
def test_last_position_logits_match_hf(gemma3, hf, prompt):
    tok, model = hf
    if prompt == "<long>":
        prompt = long_prompt()
    ids = tok(prompt)["input_ids"]
    assert ids == gemma3.tokenizer.encode(prompt)
    ref = _hf_last_logits(model, ids)
    ours = gemma3.prompt_logits(ids)
    rtol, atol = TOLERANCES["float32"]
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)
    assert int(ours.argmax()) == int(ref.argmax())


def test_long_prompt_exercises_the_sliding_window(gemma3):
    """The long prompt is longer than the window, so local layers must drop its start."""
    assert len(gemma3.tokenizer.encode(long_prompt())) > gemma3.config.sliding_window + 32


@pytest.mark.parametrize("case", GREEDY_CASES)
def test_greedy_32_token_continuation_matches_hf(gemma3, hf, case):
    ref, stats = greedy_against_hf(gemma3, hf[1], case)
    stops = [i for i, t in enumerate(ref) if t in gemma3.tokenizer.stop_token_ids]
    if stops:  # HF stops at <eos> only (and keeps it); we also stop at <end_of_turn> and drop it
        ref = ref[: stops[0]]
        assert stats.finish_reason == "stop"
    assert stats.token_ids == ref
