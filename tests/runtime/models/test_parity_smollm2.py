"""Model-level parity: our JAX SmolLM2 against Hugging Face transformers loading the same GGUF file.

Both dequantize the same Q4_1/Q8_0 blocks to float32, so remaining differences are float summation
order only: logits are compared elementwise with the float32 row of the tolerance table.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.parity_prompts import CHAT, PROMPTS

pytestmark = pytest.mark.slow

# One table per dtype: (rtol, atol) on logits whose magnitudes reach ~30.
TOLERANCES = {"float32": (1e-4, 5e-4)}


@pytest.fixture(scope="module")
def hf():
    import torch  # a dev dependency: missing, fail rather than skip
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from runtime.loading.presets import resolve_gguf

    path = resolve_gguf("smollm2-135m")
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    model.eval()
    return tok, model


@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_last_position_logits_match_hf(smollm2, hf, prompt):
    import torch

    tok, model = hf
    ids = tok(prompt)["input_ids"]
    assert ids == smollm2.tokenizer.encode(prompt)
    with torch.no_grad():
        ref = model(torch.tensor([ids])).logits[0, -1].numpy()
    ours = smollm2.prompt_logits(ids)
    rtol, atol = TOLERANCES["float32"]
    np.testing.assert_allclose(ours, ref, rtol=rtol, atol=atol)
    assert int(ours.argmax()) == int(ref.argmax())


def _hf_greedy(model, ids, n):
    import torch

    x = torch.tensor([ids])
    with torch.no_grad():
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(ids) :].tolist()


@pytest.mark.parametrize("case", range(len(PROMPTS[:3]) + len(CHAT)))
def test_greedy_32_token_continuation_matches_hf(smollm2, hf, case):
    from runtime.api import SamplingParams

    tok, model = hf
    if case < 3:
        ids = smollm2.tokenizer.encode(PROMPTS[case])
    else:
        ids = smollm2.tokenizer.apply_chat_template(CHAT[case - 3], add_generation_prompt=True)
    ref = _hf_greedy(model, ids, 32)
    _, stats = smollm2.generate(ids, SamplingParams(max_tokens=32))
    stop_ids = set(smollm2.tokenizer.stop_token_ids)
    if ref and ref[-1] in stop_ids:  # HF keeps the end token; we report it as finish_reason="stop"
        ref = ref[:-1]
        assert stats.finish_reason == "stop"
    assert stats.token_ids == ref
