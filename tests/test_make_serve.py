"""``make serve`` end to end on the Python that runs the tests (``make test PYTHON=python3.13`` serves on 3.13, its
venv and the newest JAX; ``make test`` on 3.11 and jax 0.10.2): the shipped ``configs/gateway.yaml`` (SmolLM2,
int8, in-process; the semantic cache; ``/v1/embeddings``) with only its port and its cache file moved into a
temporary folder. The official ``openai`` client asks a chat question, asks it again and gets the cached answer
(``x-cache: hit``, the same text), and embeds two texts; then Ctrl-C drains and make exits 0. On 3.13 nothing
of torch is installed, so this is also the gateway serving without it."""

from __future__ import annotations

import time

import numpy as np
import openai
import pytest
import yaml

from tests.support.gateway_server import free_port
from tests.support.processes import ROOT
from tests.test_shutdown import EXIT_BOUND_S, TerminalJob, wait_exit, wait_ready

pytestmark = pytest.mark.slow
READY_S = 600  # start-up compiles on a loaded 2-core machine: a hang guard, not a speed target


def shipped_config_in(folder, port: int):
    """configs/gateway.yaml with its port and cache file moved (``tiers:`` made absolute: it is relative)."""
    shipped = ROOT / "configs" / "gateway.yaml"
    data = yaml.safe_load(shipped.read_text())
    data["port"] = port
    data["cache"]["path"] = str(folder / "cache.jsonl")
    if isinstance(data.get("tiers"), str):
        data["tiers"] = str((shipped.parent / data["tiers"]).resolve())
    path = folder / "gateway.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_make_serve_answers_chat_embeddings_and_cache_hits(tmp_path):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    config = shipped_config_in(tmp_path, port)
    with TerminalJob("serve", f"ARGS=--config {config}") as job:
        wait_ready(url, job.proc, job.output, timeout=READY_S)
        client = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0, timeout=300)
        ask = dict(
            model="smollm2-135m",
            messages=[{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=16,
            temperature=0,
        )
        first = client.chat.completions.with_raw_response.create(**ask)
        assert first.headers["x-cache"] == "miss"
        answer = first.parse().choices[0].message.content
        assert answer.strip()
        # the answer is stored after it is sent: ask again until it is there (a bounded wait, not a timing)
        for _ in range(40):
            again = client.chat.completions.with_raw_response.create(**ask)
            if again.headers["x-cache"] == "hit":
                break
            time.sleep(0.25)
        assert again.headers["x-cache"] == "hit", job.output()[-3000:]
        assert again.parse().choices[0].message.content == answer
        texts = ["How do I boil an egg?", "The weather is nice today."]
        emb = client.embeddings.create(model="all-minilm-l6-v2", input=texts, encoding_format="float")
        vecs = np.array([d.embedding for d in emb.data], np.float32)
        assert vecs.shape == (2, 384) and emb.usage.prompt_tokens > 0
        np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
        job.ctrl_c()
        code, _ = wait_exit(job.proc, EXIT_BOUND_S, job.output)
        out = job.output()
        assert code == 0, out
        assert "Traceback" not in out, out
