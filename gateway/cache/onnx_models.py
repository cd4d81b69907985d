"""ONNX Runtime backend for the cache's BERT-style models: the MiniLM embedder and a cross-encoder, int8.

Export (once, then cached on disk)::

    path = ensure_onnx(model_dir, "embedder")            # ~/.cache/jaxserve/onnx/<key>/model.onnx
    emb = OnnxEmbedder()                                 # drop-in for Embedder: embed / embed_many / start / close
    ce = OnnxCrossEncoder(cross_encoder_dir)             # logits(pairs), predict(pairs) = sigmoid(logits)

``export_onnx`` writes the graph from the model's weights (``gateway.cache.onnx_graph``: BERT op by op with
``onnx.helper``, no torch and no transformers, so a cold cache is filled on any Python; until issue 47 it was
traced with torch's TorchScript exporter), batch and sequence axes dynamic, then quantizes it with
``onnxruntime.quantization.quantize_dynamic``: int8 weights per output channel (QInt8; activations are
quantized to uint8 per batch at run time, so on x86 the U8S8 VNNI kernels run). Measured on the traced graph,
this 2-core AMD EPYC (AVX-512 VNNI), 200 varied questions, cosine to torch float32, time of ``session.run``
alone on 1 thread (scripts/bench_embedder.py measures the whole path, tokenizer included):

    weights              min cos   one question   16 questions
    QInt8 per tensor     0.943     0.54-0.68 ms   26 ms
    QInt8 per channel    0.990     0.59-0.75 ms   27 ms      <- the one used
    QUInt8 per tensor    0.976     0.84-1.1 ms    44 ms
    QUInt8 per channel   0.990     0.90-1.1 ms    44 ms
    float32              1.000     2.4-2.6 ms     56 ms

(also tried: onnxruntime.transformers' BERT optimizer first: no faster, its attention fusion does not match
this graph; MatMul-only quantization, embeddings left in float: same accuracy, 58 MB instead of 22 MB;
the FFN down projections left in float: min cos 0.995 but half the speed.)

The embedder graph does the mean pooling over the attention mask and the L2 normalisation itself (output
``sentence_embedding`` [batch, 384]): as fast as pooling in NumPy after the session (0.64 vs 0.66 ms p50 for
one question, the same for 16) and nothing left to do in Python. The cross-encoder graph outputs ``logits``
[batch, num_labels].

Int8 caveat: activation scales are computed over the whole batch, so a text's vector moves slightly with
the other texts of its micro-batch (cosine >= 0.995 to itself embedded alone, measured in the tests).

Neither serving nor an export imports torch, transformers or sentence-transformers: the cache key is computed
from the source files and package versions read with ``importlib.metadata``, and the graph from
``model.safetensors`` (``safetensors.numpy``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.metadata
import json
import logging
import os
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gateway.cache.embedder import Embedder, find_model_dir
from gateway.cache.onnx_graph import OPSET, OUTPUT_NAMES

log = logging.getLogger(__name__)

# Bump when the exported graph changes (inputs, outputs, pooling, quantization recipe): old cache entries
# are then simply never looked up again.
EXPORTER_VERSION = 2  # 2: the graph written from the weights (gateway/cache/onnx_graph.py), not traced by torch
KINDS = ("embedder", "cross_encoder")
QUANTIZE_MODES = ("none", "int8")
DEFAULT_MAX_LENGTH = 256  # all-MiniLM-L6-v2's sentence-transformers max_seq_length
CACHE_ENV = "JAXSERVE_ONNX_CACHE"
# The packages whose versions can change the exported bytes: part of the cache key.
_KEY_PACKAGES = ("onnx", "onnxruntime", "safetensors")
# Source files that never change the model (a model card, git metadata).
_SKIP_FILES = {"README.md", ".gitattributes"}


def _check(kind: str, quantize: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if quantize not in QUANTIZE_MODES:
        raise ValueError(f"quantize must be one of {QUANTIZE_MODES}, got {quantize!r}")


# -- model folders (JSON only: no torch, no sentence-transformers) ------------------------------------


def transformer_dir(model_dir: str | os.PathLike) -> Path:
    """The Hugging Face model folder inside a sentence-transformers folder (its Transformer module's path),
    or ``model_dir`` itself for a plain Hugging Face folder."""
    model_dir = Path(model_dir)
    modules = model_dir / "modules.json"
    if modules.is_file():
        for module in json.loads(modules.read_text()):
            if module.get("type", "").endswith("Transformer"):
                return model_dir / module.get("path", "")
    return model_dir


def _sentence_max_length(hf_dir: Path) -> int:
    cfg = hf_dir / "sentence_bert_config.json"
    if cfg.is_file():
        value = json.loads(cfg.read_text()).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    return DEFAULT_MAX_LENGTH


def _check_mean_pooling(model_dir: Path) -> None:
    """OnnxEmbedder reproduces mean pooling + normalisation; refuse a bi-encoder that pools otherwise."""
    modules = model_dir / "modules.json"
    if not modules.is_file():
        return  # a plain Hugging Face encoder: mean pooling is the convention
    for module in json.loads(modules.read_text()):
        if module.get("type", "").endswith("Pooling"):
            cfg = json.loads((model_dir / module["path"] / "config.json").read_text())
            if isinstance(cfg.get("pooling_mode"), str):  # newer configs: {"pooling_mode": "mean", ...}
                modes = {cfg["pooling_mode"]}
            else:  # {"pooling_mode_mean_tokens": true, "pooling_mode_cls_token": false, ...}
                modes = {k.removeprefix("pooling_mode_") for k, v in cfg.items() if k.startswith("pooling_mode_") and v}
            if modes not in ({"mean"}, {"mean_tokens"}):
                raise ValueError(f"{model_dir}: only mean pooling is supported, the model's pooling is {cfg}")


# -- export --------------------------------------------------------------------------------------------


def export_onnx(
    model_dir: str | os.PathLike, out_path: str | os.PathLike, kind: str, *, quantize: str = "int8"
) -> Path:
    """Write ``model_dir`` (kind "embedder": a sentence-transformers bi-encoder or a BERT folder; kind
    "cross_encoder": a BertForSequenceClassification folder) as ONNX at ``out_path``, int8-quantized unless
    ``quantize="none"``. The graph is written from the weights (``gateway.cache.onnx_graph``: no torch, no
    transformers); offline and deterministic (same inputs and package versions, same bytes)."""
    import onnx

    from gateway.cache.onnx_graph import build_graph

    _check(kind, quantize)
    model_dir, out_path = Path(model_dir), Path(out_path)
    if kind == "embedder":
        _check_mean_pooling(model_dir)
    t0 = time.perf_counter()
    model = build_graph(transformer_dir(model_dir), kind)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_path.parent, prefix=".export-") as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        onnx.save(model, str(fp32))
        if quantize == "int8":
            from onnxruntime.quantization import QuantType, quantize_dynamic

            result = Path(tmp) / "int8.onnx"
            # The quantizer logs each tensor it leaves alone on the root logger: keep that out of a server log.
            quiet = _DropRecordsFrom(str(Path(quantize_dynamic.__code__.co_filename).parent))
            logging.root.addFilter(quiet)
            try:
                quantize_dynamic(str(fp32), str(result), weight_type=QuantType.QInt8, per_channel=True)
            finally:
                logging.root.removeFilter(quiet)
        else:
            result = fp32
        os.replace(result, out_path)
    log.info("exported %s (%s, %s) to %s in %.1fs", model_dir, kind, quantize, out_path, time.perf_counter() - t0)
    return out_path


class _DropRecordsFrom(logging.Filter):
    def __init__(self, folder: str):
        super().__init__()
        self.folder = folder

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.pathname.startswith(self.folder) or record.levelno >= logging.ERROR


def _session(path: str | os.PathLike | bytes, num_threads: int | None = 1):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = num_threads or 0  # 0: onnxruntime's default (one per physical core)
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # No spin-waiting between ops on a shared CPU (see the note on OpenMP in embedder.py); moot with 1 thread.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3  # errors only
    return ort.InferenceSession(str(path) if isinstance(path, Path) else path, opts, providers=["CPUExecutionProvider"])


# -- the on-disk cache of exported files ---------------------------------------------------------------


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "jaxserve" / "onnx")


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def cache_key(model_dir: str | os.PathLike, kind: str, quantize: str = "int8") -> str:
    """sha256 over the source files (relative path + content), kind, quantize, exporter and package versions."""
    _check(kind, quantize)
    model_dir = Path(model_dir)
    h = hashlib.sha256()
    recipe = {
        "kind": kind,
        "quantize": quantize,
        "exporter": EXPORTER_VERSION,
        "opset": OPSET,
        "packages": {p: _package_version(p) for p in _KEY_PACKAGES},
    }
    h.update(json.dumps(recipe, sort_keys=True).encode())
    files = sorted(
        p
        for p in model_dir.rglob("*")
        if p.is_file()
        and p.name not in _SKIP_FILES
        and not any(part.startswith(".") for part in p.relative_to(model_dir).parts)
    )
    if not files:
        raise FileNotFoundError(f"no model files in {model_dir}")
    for p in files:
        with open(p, "rb") as f:
            digest = hashlib.file_digest(f, "sha256").hexdigest()
        h.update(f"{p.relative_to(model_dir).as_posix()}\0{digest}\n".encode())
    return h.hexdigest()[:32]


_thread_locks: dict[str, threading.Lock] = {}
_thread_locks_guard = threading.Lock()


@contextlib.contextmanager
def _exclusive(lock_path: Path):
    """Held by one thread of one process at a time (flock between processes, a Lock within one)."""
    with _thread_locks_guard:
        tlock = _thread_locks.setdefault(str(lock_path), threading.Lock())
    with tlock, open(lock_path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def ensure_onnx(model_dir: str | os.PathLike, kind: str, quantize: str = "int8") -> Path:
    """The exported model for (``model_dir``, ``kind``, ``quantize``): from the cache, or exported into it
    once. Two processes racing: one exports under a file lock, the other waits and reuses the file; the file
    appears under its final name only complete (written aside, then renamed)."""
    _check(kind, quantize)
    model_dir = Path(model_dir)
    entry = cache_root() / cache_key(model_dir, kind, quantize)
    path = entry / "model.onnx"
    if path.is_file():
        return path
    entry.mkdir(parents=True, exist_ok=True)
    with _exclusive(entry / ".lock"):
        if path.is_file():  # another process finished it while we waited
            return path
        meta = {
            "source": str(model_dir.resolve()),
            "kind": kind,
            "quantize": quantize,
            "exporter": EXPORTER_VERSION,
            "opset": OPSET,
            "output": OUTPUT_NAMES[kind],
            "packages": {p: _package_version(p) for p in _KEY_PACKAGES},
        }
        (entry / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        export_onnx(model_dir, path, kind, quantize=quantize)  # renames into place when complete
    return path


# -- tokenization --------------------------------------------------------------------------------------


def load_tokenizer(hf_dir: str | os.PathLike, max_length: int):
    """The fast tokenizer of ``hf_dir`` (tokenizer.json), truncating to ``max_length`` (longest first for pairs)
    and padding to the longest text of each batch (a saved tokenizer.json often pads to a fixed 128)."""
    from tokenizers import Tokenizer

    path = Path(hf_dir) / "tokenizer.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found (a fast tokenizer is needed)")
    tok = Tokenizer.from_file(str(path))
    pad = tok.padding or {}
    pad_token = pad.get("pad_token") or "[PAD]"
    pad_id = pad.get("pad_id", tok.token_to_id(pad_token))
    if pad_id is None:
        raise ValueError(f"{path}: no padding token")
    tok.no_truncation()
    tok.enable_truncation(max_length, strategy="longest_first")
    tok.enable_padding(pad_id=pad_id, pad_type_id=pad.get("pad_type_id", 0), pad_token=pad_token, length=None)
    return tok


def encode(tok, inputs: Sequence) -> dict[str, np.ndarray]:
    """int64 input_ids, attention_mask, token_type_ids [batch, longest] for texts or (text, text) pairs."""
    encs = tok.encode_batch(list(inputs))
    return {
        "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
        "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
    }


# -- serving -------------------------------------------------------------------------------------------


class OnnxEmbedder(Embedder):
    """Embedder on ONNX Runtime (int8 by default): the same interface and micro-batching worker.

    ``onnx_path`` skips the export cache (a file exported elsewhere; ``model_dir`` still gives the tokenizer).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike | None = None,
        *,
        quantize: str = "int8",
        max_length: int | None = None,
        onnx_path: str | os.PathLike | None = None,
        **kwargs,
    ):
        """``kwargs``: Embedder's (max_batch, max_wait_ms, num_threads); the device must be the CPU."""
        if kwargs.get("device", "cpu") != "cpu":
            raise ValueError(f"OnnxEmbedder runs on the CPU only, got device={kwargs['device']!r}")
        super().__init__(model_dir, quantize=quantize, **kwargs)
        self.max_length = max_length
        self.onnx_path = Path(onnx_path) if onnx_path else None
        self._tokenizer = self._counter = None
        self.seq_limit: int | None = None  # the word pieces a text is cut to (set by load)

    def load(self) -> None:
        with self._load_lock:
            if self._model is not None:
                return
            t0 = time.perf_counter()
            model_dir = self.model_dir or find_model_dir()
            path = self.onnx_path or ensure_onnx(model_dir, "embedder", self.quantize)
            hf_dir = transformer_dir(model_dir)
            self.seq_limit = self.max_length or _sentence_max_length(hf_dir)
            self._tokenizer = load_tokenizer(hf_dir, self.seq_limit)
            self._counter = load_tokenizer(hf_dir, self.seq_limit)
            self._counter.no_truncation()
            self._counter.no_padding()
            session = _session(path, self.num_threads)
            dims = session.get_outputs()[0].shape
            if dims[-1] != self.dim:
                raise ValueError(f"{path}: output {dims}, expected [batch, {self.dim}]")
            self._output = session.get_outputs()[0].name
            self._inputs = {i.name for i in session.get_inputs()}
            self._model = session
            log.info("onnx embedder (%s) loaded from %s in %.2fs", self.quantize, path, time.perf_counter() - t0)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Each text's word pieces, [CLS] and [SEP] included, before truncation to ``seq_limit`` (after ``load``)."""
        return [len(e.ids) for e in self._counter.encode_batch(list(texts))]

    def _forward(self, texts: list[str]) -> np.ndarray:
        # One text per run. Dynamic int8 quantization takes its activation scales over the whole input
        # tensor, padding included, so in a batch a text's vector depends on its batch mates (cosine down
        # to 0.97 measured) and the same question could hit alone and miss under load. One at a time is
        # also faster here: 0.67 ms a question vs 1.2 ms per text at batch 16 (scripts/bench_embedder.py).
        vecs = np.concatenate(
            [
                self._model.run(
                    [self._output], {k: v for k, v in encode(self._tokenizer, [t]).items() if k in self._inputs}
                )[0]
                for t in texts
            ],
            axis=0,
        )
        self.forward_passes += 1
        self.texts_embedded += len(texts)
        self.max_batch_seen = max(self.max_batch_seen, len(texts))
        return np.ascontiguousarray(vecs, dtype=np.float32)


class OnnxCrossEncoder:
    """A BERT cross-encoder (num_labels=1) on ONNX Runtime: ``logits(pairs)`` and ``predict(pairs)`` (sigmoid).

    ``source`` is an exported ``.onnx`` file (then ``tokenizer_dir`` is required) or the model folder
    (exported through the cache with ``quantize``; its tokenizer is used unless ``tokenizer_dir`` is given).
    Pairs are tokenised as BERT sentence pairs: [CLS] a [SEP] b [SEP], token_type_ids 0 then 1.
    """

    def __init__(
        self,
        source: str | os.PathLike,
        tokenizer_dir: str | os.PathLike | None = None,
        num_threads: int | None = 1,
        max_length: int = DEFAULT_MAX_LENGTH,
        *,
        quantize: str = "int8",
        batch_size: int = 1,  # > 1 only for float32: int8 scores depend on batch mates (OnnxEmbedder._forward)
    ):
        source = Path(source)
        if source.is_dir():
            self.onnx_path = ensure_onnx(source, "cross_encoder", quantize)
            tokenizer_dir = tokenizer_dir or transformer_dir(source)
        else:
            if tokenizer_dir is None:
                raise ValueError("tokenizer_dir is required with an .onnx file")
            self.onnx_path = source
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        self.batch_size = batch_size
        self._tokenizer = load_tokenizer(tokenizer_dir, max_length)
        self._session = _session(self.onnx_path, num_threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._output = self._session.get_outputs()[0].name

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """float32 [N] (one label) or [N, num_labels] logits."""
        out = []
        for i in range(0, len(pairs), self.batch_size):
            chunk = [(str(a), str(b)) for a, b in pairs[i : i + self.batch_size]]
            feeds = {k: v for k, v in encode(self._tokenizer, chunk).items() if k in self._inputs}
            out.append(self._session.run([self._output], feeds)[0])
        if not out:
            labels = self._session.get_outputs()[0].shape[-1]
            return np.zeros((0,) if labels == 1 else (0, labels), np.float32)
        logits = np.concatenate(out, axis=0).astype(np.float32, copy=False)
        return logits[:, 0] if logits.shape[1] == 1 else logits

    score = logits

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Sigmoid of the logits: probabilities in (0, 1), what sentence_transformers.CrossEncoder.predict returns."""
        x = self.logits(pairs)
        return (0.5 * (1.0 + np.tanh(0.5 * x))).astype(np.float32)  # sigmoid without overflow for large |x|
