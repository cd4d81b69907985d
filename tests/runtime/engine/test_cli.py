"""Bad input through ``python -m runtime.generate``, run as a user would: a subprocess.

Every bad input must exit with code 2 and print one ``error: ...`` line to stderr that names the
problem, never a traceback. One happy path on the tiny GGUF checks that stdout carries only the
generated text and stderr the timings.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import gguf
import pytest

from tests.support.tiny_gguf import reference_greedy, write_tiny_llama

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    tiny = write_tiny_llama(d)
    data = tiny.path.read_bytes()
    (d / "notes.gguf").write_text("these are my notes, not a model\n")
    (d / "truncated_header.gguf").write_bytes(data[:4096])  # valid magic, cut inside the metadata
    (d / "truncated_tensors.gguf").write_bytes(data[: len(data) - 1000])  # cut inside the tensor data
    write_tiny_llama(d, "mamba.gguf", arch="mamba")
    # A block format the gguf package (our dequantizer) cannot decode.
    write_tiny_llama(d, "q8_1.gguf", tensor_type_override={"blk.0.attn_q.weight": gguf.GGMLQuantizationType.Q8_1})
    return tiny, d


def run_cli(*args: str, cache_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAXSERVE_COMPILATION_CACHE": str(cache_dir)}
    return subprocess.run(
        [sys.executable, "-m", "runtime.generate", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )


def assert_clean_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert result.stdout == ""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    assert result.stderr.strip().splitlines()[-1] == errors[0]
    for fragment in fragments:
        assert fragment in errors[0], (fragment, errors[0])


@pytest.mark.parametrize(
    "case",
    [
        "missing",
        "not_gguf",
        "truncated_header",
        "truncated_tensors",
        "mamba",
        "unsupported_type",
        "empty_prompt",
        "too_long",
        "unknown_preset",
    ],
)
def test_bad_input_exits_2_with_one_error_line(files, tmp_path, case):
    tiny, d = files
    model = ["--gguf", str(tiny.path)]
    args, fragments = {
        "missing": (["--gguf", "/nonexistent.gguf", "--prompt", "hi"], ["not found", "/nonexistent.gguf"]),
        "not_gguf": (["--gguf", str(d / "notes.gguf"), "--prompt", "hi"], ["notes.gguf", "not a GGUF file"]),
        "truncated_header": (
            ["--gguf", str(d / "truncated_header.gguf"), "--prompt", "hi"],
            ["truncated_header.gguf", "truncated"],
        ),
        "truncated_tensors": (
            ["--gguf", str(d / "truncated_tensors.gguf"), "--prompt", "hi"],
            ["truncated_tensors.gguf", "truncated"],
        ),
        "mamba": (["--gguf", str(d / "mamba.gguf"), "--prompt", "hi"], ["mamba.gguf", "architecture 'mamba'"]),
        "unsupported_type": (["--gguf", str(d / "q8_1.gguf"), "--prompt", "hi"], ["Q8_1", "blk.0.attn_q.weight"]),
        "empty_prompt": ([*model, "--prompt", ""], ["prompt is empty"]),
        "too_long": (
            [*model, "--prompt", "hello world " * 10, "--max-model-len", "8"],
            ["prompt is", "context is 8 tokens"],
        ),
        "unknown_preset": (["--model", "no-such-model", "--prompt", "hi"], ["no-such-model", "smollm2-135m"]),
    }[case]
    assert_clean_error(run_cli(*args, cache_dir=tmp_path), *fragments)


def test_happy_path_text_on_stdout_timings_on_stderr(files, tmp_path):
    tiny, _ = files
    from runtime.loading.tokenizer import Tokenizer

    tok = Tokenizer.from_gguf(tiny.path)
    text = "in the hall"
    ids = tok.encode(text)
    expected, gap = reference_greedy(tiny, ids, 6, stop_ids=tok.stop_token_ids)
    assert gap > 1e-3, "near-tie: a greedy comparison would be fragile"
    result = run_cli("--gguf", str(tiny.path), "--prompt", text, "--max-tokens", "6", cache_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "error" not in result.stderr
    assert result.stdout == tok.decode(expected) + "\n"
    assert f"[{len(ids)} prompt tokens, {len(expected)} generated" in result.stderr
    assert "TTFT" in result.stderr and "tok/s" in result.stderr
