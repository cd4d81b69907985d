"""A gateway over a tiny random Llama with the semantic cache on, and the calls its tests make
(tests/gateway/cache/test_gateway_cache.py, tests/gateway/observability/test_dashboard.py)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from gateway.config.gateway import Limits
from tests.support.gateway_server import ServerThread
from tests.support.tiny_gateway import tiny_gateway


def start(tiny_path: str, cache: dict, warmup: bool = True, **config) -> ServerThread:
    return tiny_gateway(tiny_path, cache=cache, limits=Limits(default_max_tokens=16), warmup=warmup, **config)


# The gateway tests are about the pipeline (scopes, headers, replay, the guard's reason reaching the
# client): they pin plumbing thresholds. The shipped ones come from the calibration under the operator's
# bound (tests/gateway/cache/test_calibration.py; docs/CACHE_EVAL.md).
PLUMBING = {"threshold": 0.53, "checker_threshold": 0.66}


def file_cache(tmp_path_factory) -> dict:
    """A file store in a fresh folder; sampled answers are cached when seeded. Live verification is off:
    the random tiny model answers a reworded question otherwise, so verifying a hit evicts its entry in
    the background, racing the test's next lookup (the verifier's own tests: test_verify_gateway.py)."""
    return {
        "store": "file",
        "path": str(tmp_path_factory.mktemp("c") / "cache.jsonl"),
        "cache_sampled": "seeded",
        "verify_share": 0.0,
        "verify_first": 0,
        **PLUMBING,
    }


def chat(server, messages, *, key="k1", headers=None, stream=False, **params):
    body = {"model": "tiny", "messages": messages, "temperature": 0, "max_tokens": 16, "stream": stream, **params}
    req = urllib.request.Request(
        server.url + "/v1/chat/completions",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}", **(headers or {})},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return dict(r.headers), r.read().decode()


def stop_for(server, question: str) -> str:
    _, body = chat(server, [{"role": "user", "content": question}], headers={"Cache-Control": "no-store"})
    text = json.loads(body)["choices"][0]["message"]["content"]
    # the first character that appears after the start (random tiny models babble: "YYY\x18\x18...")
    for i in range(1, len(text)):
        if text[i] != "\ufffd" and text.index(text[i]) == i:
            return text[i]
    pytest.fail(f"no usable stop string in {text!r}")
