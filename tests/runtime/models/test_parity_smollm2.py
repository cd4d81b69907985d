"""Model-level parity: our JAX SmolLM2 against Hugging Face transformers loading the same GGUF file.

Both dequantize the same Q4_1/Q8_0 blocks to float32, so remaining differences are float summation
order only: logits are compared elementwise with the float32 row of the tolerance table.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.parity_prompts import GREEDY_CASES, PROMPTS, greedy_against_hf, hf_reference

pytestmark = pytest.mark.slow

# One table per dtype: (rtol, atol) on logits whose magnitudes reach ~30.
TOLERANCES = {"float32": (1e-4, 5e-4)}


@pytest.fixture(scope="module")
def hf():
    return hf_reference("smollm2-135m")


@pytest.mark.parametrize("prompt", PROMPTS, ids=range(len(PROMPTS)))
def test_last_position_logits_match_hf(hf, smollm2, prompt):  # hf first: where it skips, no engine is built
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


@pytest.mark.parametrize("case", GREEDY_CASES)
def test_greedy_32_token_continuation_matches_hf(hf, smollm2, case):
    ref, stats = greedy_against_hf(smollm2, hf[1], case)
    stop_ids = set(smollm2.tokenizer.stop_token_ids)
    if ref and ref[-1] in stop_ids:  # HF keeps the end token; we report it as finish_reason="stop"
        ref = ref[:-1]
        assert stats.finish_reason == "stop"
    assert stats.token_ids == ref
