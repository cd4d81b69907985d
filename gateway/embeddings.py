"""``POST /v1/embeddings``: the gateway's embedding model (all-MiniLM-L6-v2, 384 dimensions) for clients.

It is the semantic cache's model, loaded on the first request in full precision: the float32 ONNX graph written
from the model's weights (``gateway/cache/onnx_graph.py``, on ONNX Runtime; within 2e-7 of sentence-transformers'
own vectors, and no torch at run time, so it serves on every Python). The cache itself runs the int8 export, whose
vectors move a little (cosine >= 0.96); a client gets the model's own normalized embeddings. ``input``: a string or a list of at most
``MAX_INPUTS`` strings; a text longer than the model's window (256 word pieces) is a 400, never silently
cut. ``encoding_format``: ``float`` or ``base64`` (little-endian float32, as OpenAI's SDK decodes it);
``dimensions`` must be left out or 384. Batches run on the embedder's thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Annotated, Any, Literal

import numpy as np
from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.api.schemas import one_error, request_error
from runtime.serving.errors import APIError, read_json

EMBEDDING_MODEL = "all-minilm-l6-v2"
ALIASES = (EMBEDDING_MODEL, "sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2")
DIM = 384
MAX_INPUTS = 256
EMBEDDER = web.AppKey("embeddings_model", object)


class EmbeddingRequest(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    input: Annotated[
        str | Annotated[list[str], Field(min_length=1, max_length=MAX_INPUTS)],
        one_error(f"must be a string or a list of at most {MAX_INPUTS} strings (token ids are not taken)"),
    ]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: int | None = Field(None, ge=1)
    user: str | None = None


class _Model:
    """The full-precision embedder, loaded once (a few seconds) on first use."""

    def __init__(self):
        self.model = None
        self.lock = asyncio.Lock()

    async def get(self):
        async with self.lock:
            if self.model is None:
                self.model = await asyncio.to_thread(_load)
        return self.model


def _load():
    from gateway.cache.onnx_models import OnnxEmbedder

    e = OnnxEmbedder(quantize="none")  # float32: the model's own vectors
    e.load()
    return e


def _embed(model, texts: list[str]) -> tuple[np.ndarray, list[int]]:
    counts = model.token_counts(texts)
    limit = model.seq_limit
    for i, n in enumerate(counts):
        if n > limit:
            raise APIError(
                400,
                f"input[{i}] is {n} tokens; the embedding model reads at most {limit}",
                param="input",
                code="context_length_exceeded",
            )
    return model.embed_many(texts, batch_size=32), counts


async def embeddings(request: web.Request) -> web.Response:
    try:
        body = EmbeddingRequest.model_validate(await read_json(request))
    except ValidationError as exc:
        raise request_error(exc) from None
    if body.model not in ALIASES:
        raise APIError(
            404,
            f"the embedding model {body.model!r} does not exist; available: {EMBEDDING_MODEL}",
            param="model",
            code="model_not_found",
        )
    if body.dimensions is not None and body.dimensions != DIM:
        raise APIError(400, f"dimensions: this model gives {DIM}, not {body.dimensions}", param="dimensions")
    texts = [body.input] if isinstance(body.input, str) else list(body.input)
    model = await request.app[EMBEDDER].get()
    vecs, counts = await asyncio.to_thread(_embed, model, texts)
    data: list[dict[str, Any]] = []
    for i, v in enumerate(vecs):
        emb = base64.b64encode(v.astype("<f4").tobytes()).decode() if body.encoding_format == "base64" else v.tolist()
        data.append({"object": "embedding", "index": i, "embedding": emb})
    n = sum(counts)
    return web.json_response(
        {"object": "list", "data": data, "model": EMBEDDING_MODEL, "usage": {"prompt_tokens": n, "total_tokens": n}}
    )


def setup_embeddings(app: web.Application) -> None:
    app[EMBEDDER] = _Model()
    app.router.add_post("/v1/embeddings", embeddings)
