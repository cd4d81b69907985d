"""What both model parity tests (tests/runtime/models/test_parity_*.py) use: varied prompts (scripts, code,
whitespace runs), two chats, and Hugging Face transformers loading the same GGUF file as the reference."""

import contextlib
import os
from pathlib import Path

PROMPTS = [
    "The capital of France is",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "Les élèves ont étudié l'histoire de la Révolution française et",
    "   Whitespace   runs\n\n\tand tabs, numbers 12345 and 3.14159, symbols @#$%",
    "東京は日本の首都です。 Emoji 🚀✨ and more:",
]
CHAT = [
    [{"role": "user", "content": "What is 2 + 2?"}],
    [{"role": "system", "content": "You answer in one word."}, {"role": "user", "content": "Name a fruit."}],
]
GREEDY_CASES = range(3 + len(CHAT))  # the first three prompts, then each chat with a generation prompt


def hf_reference(preset: str):
    """(tokenizer, model): transformers on the preset's GGUF file, dequantized to float32, in eval mode.

    transformers' GGUF path (converting the tokenizer, dequantizing every block in NumPy) is most of a
    parity module's time (114 s of Gemma 3's, 49 s of SmolLM2's); its result is kept (tokenizer files,
    config, float32 tensors) under ~/.cache/jaxserve/hf-reference
    (``JAXSERVE_HF_REFERENCE``), named by the file's SHA-256 and the transformers version, and later runs
    load that: the same tokenizer files and float32 weights transformers made from this file."""
    import hashlib
    import shutil

    from tests.support.torch_reference import require

    torch = require("torch")  # a dev dependency on 3.11: missing there, fail rather than skip (3.12: skip)
    transformers = require("transformers")
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    from runtime.loading.presets import resolve_gguf

    path = resolve_gguf(preset)
    with path.open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()[:16]
    root = os.environ.get("JAXSERVE_HF_REFERENCE", os.path.expanduser("~/.cache/jaxserve/hf-reference"))
    kept = Path(root) / f"{preset}-{digest}-transformers-{transformers.__version__}"
    if (kept / "complete").is_file():
        tok = AutoTokenizer.from_pretrained(str(kept))
        model = AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(str(kept)), dtype=torch.float32)
        model.load_state_dict(torch.load(kept / "weights.pt", weights_only=True))
    else:
        with _gguf_parsed_once():
            tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
            model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
        partial = kept.with_name(kept.name + f".partial-{os.getpid()}")
        try:  # the model says it is "quantized with gguf" and refuses save_pretrained: its config and tensors
            tok.save_pretrained(str(partial))
            model.config.save_pretrained(str(partial))
            torch.save(model.state_dict(), partial / "weights.pt")
            (partial / "complete").touch()
            partial.rename(kept)  # whole or not at all: another worker may have kept it first
        except (OSError, RuntimeError, ValueError):  # only a cache: the reference stands without it
            shutil.rmtree(partial, ignore_errors=True)
    model.eval()
    return tok, model


@contextlib.contextmanager
def _gguf_parsed_once():
    """One ``gguf.GGUFReader`` per file while transformers loads it: it reads the file three times (config,
    tokenizer, weights; ``transformers.modeling_gguf_pytorch_utils.load_gguf_checkpoint`` makes a reader each
    time), and parsing the metadata is 15 s for Gemma 3's 262k-token vocabulary: 45 of a 71 s cold reference
    (cProfile, 2026-12-06). The reader only reads (a memory map); the dequantizing stays transformers' own."""
    import gguf

    original, readers = gguf.GGUFReader, {}

    def reader(path, *args, **kwargs):
        key = (os.fspath(path), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = original(path, *args, **kwargs)
        return readers[key]

    gguf.GGUFReader = reader
    try:
        yield
    finally:
        gguf.GGUFReader = original


def hf_greedy(model, ids: list[int], n: int) -> list[int]:
    """HF's greedy continuation of ``ids``: ``n`` new tokens at most, an end token kept."""
    import torch

    x = torch.tensor([ids])
    with torch.no_grad():
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(ids) :].tolist()


def greedy_against_hf(ours, model, case: int, n: int = 32):
    """(HF's greedy tokens, our generation stats) for GREEDY_CASES[case], ``n`` tokens: ``ours`` is a Generator."""
    from runtime.api import SamplingParams

    tok = ours.tokenizer
    ids = tok.encode(PROMPTS[case]) if case < 3 else tok.apply_chat_template(CHAT[case - 3], add_generation_prompt=True)
    _, stats = ours.generate(ids, SamplingParams(max_tokens=n))
    return hf_greedy(model, ids, n), stats
