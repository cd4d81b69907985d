"""The cache's BERT models as ONNX graphs written from their weights: no torch, no transformers.

``build_graph(model_dir, kind)`` reads the Hugging Face folder's ``config.json`` and ``model.safetensors``
(``safetensors.numpy``) and writes the encoder op by op with ``onnx.helper``: the same computation as
transformers' ``BertModel`` in eager mode (embeddings, LayerNorm, scaled dot-product attention with an
additive padding mask, exact GELU, residual LayerNorms), then, for kind ``"embedder"``, sentence-transformers'
mean pooling and L2 normalisation, or, for ``"cross_encoder"``, ``BertForSequenceClassification``'s pooler
(tanh of a dense layer over the first token) and classifier::

    input_ids, attention_mask, token_type_ids  int64 [batch, sequence]
      -> word + position + token type embeddings -> LayerNorm
      -> layers x [ q/k/v, softmax(q k^T / sqrt(d) + mask) v, o, + residual, LayerNorm,
                    up, gelu, down, + residual, LayerNorm ]
      -> embedder: sentence_embedding [batch, hidden] (mean over the mask, unit length)
         cross_encoder: logits [batch, num_labels]

Why written, not traced: the traced export (``torch.onnx.export``) needs torch and transformers at run time
on a machine whose cache is cold, and those exist for Python 3.11 only here (issue 47). The graph is small
(seven op kinds a layer) and its output is checked against the model's own full-precision vectors from
sentence-transformers (tests/gateway/cache/test_onnx_graph.py, where torch is installed). The build is
deterministic: the same folder gives the same bytes (node names, initializer order and the model's
metadata are fixed; nothing reads a clock), which the tests check too.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

OPSET = 17  # LayerNormalization is one op from 17 on
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAMES = {"embedder": "sentence_embedding", "cross_encoder": "logits"}
PRODUCER = "jaxserve.gateway.cache.onnx_graph"


def _weights(hf_dir: Path) -> tuple[dict[str, np.ndarray], str]:
    """The float32 tensors of the folder's ``model.safetensors`` and the encoder's name prefix ("" for a
    ``BertModel``, "bert." for a ``BertForSequenceClassification``)."""
    from safetensors.numpy import load_file

    path = hf_dir / "model.safetensors"
    if not path.is_file():
        raise FileNotFoundError(f"{hf_dir}: no model.safetensors (the graph builder reads the weights from it)")
    weights = load_file(str(path))
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
    if f"{prefix}embeddings.word_embeddings.weight" not in weights:
        raise ValueError(f"{path}: not a BERT checkpoint (no embeddings.word_embeddings.weight)")
    return {k: np.asarray(v, np.float32) if v.dtype != np.int64 else v for k, v in weights.items()}, prefix


class _Builder:
    """Nodes and initializers in the order they are added; every name is derived from a counter or a weight."""

    def __init__(self):
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes, self.inits, self._n = [], [], 0

    def const(self, name: str, value) -> str:
        self.inits.append(self.numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        self._n += 1
        out = f"{op_type.lower()}_{self._n}"
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], name=f"n{self._n}", **attrs))
        return out

    def linear(self, x: str, weights: dict, key: str) -> str:
        """x [..., in] . W^T + b for the checkpoint's ``{key}.weight`` ([out, in], as torch stores it) and
        ``{key}.bias``; W kept as [in, out] for MatMul (the form onnxruntime's dynamic quantizer quantizes per
        output channel), named ``{key}.weight.T``."""
        w = self.const(f"{key}.weight.T", np.ascontiguousarray(weights[f"{key}.weight"].T))
        return self.op("Add", self.op("MatMul", x, w), self.const(f"{key}.bias", weights[f"{key}.bias"]))

    def layer_norm(self, x: str, weights: dict, key: str, eps: float) -> str:
        scale, bias = (
            self.const(f"{key}.weight", weights[f"{key}.weight"]),
            self.const(f"{key}.bias", weights[f"{key}.bias"]),
        )
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def build_graph(model_dir: str | Path, kind: str):
    """The float32 ``onnx.ModelProto`` of the Hugging Face BERT folder ``model_dir`` (a sentence-transformers
    folder's Transformer module, or a sequence-classification folder for ``kind="cross_encoder"``)."""
    from onnx import TensorProto, checker, helper

    if kind not in OUTPUT_NAMES:
        raise ValueError(f"kind must be one of {tuple(OUTPUT_NAMES)}, got {kind!r}")
    hf_dir = Path(model_dir)
    cfg = json.loads((hf_dir / "config.json").read_text())
    if cfg.get("model_type") != "bert" or cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{hf_dir}: only BERT with absolute positions is supported, got {cfg.get('model_type')}")
    if cfg.get("hidden_act") != "gelu":
        raise ValueError(f"{hf_dir}: only the exact GELU is supported, got {cfg.get('hidden_act')!r}")
    w, pre = _weights(hf_dir)
    hidden, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], float(cfg["layer_norm_eps"])
    head_dim = hidden // heads
    g = _Builder()

    # Embeddings: word + position (0..S-1) + token type, then LayerNorm.
    e = f"{pre}embeddings"
    table = {
        name: g.const(f"{e}.{name}_embeddings.weight", w[f"{e}.{name}_embeddings.weight"])
        for name in ("word", "position", "token_type")
    }
    words = g.op("Gather", table["word"], "input_ids")
    seq = g.op("Gather", g.op("Shape", "input_ids"), g.const("one", np.asarray(1, np.int64)))
    positions = g.op("Range", g.const("zero", np.asarray(0, np.int64)), seq, "one")
    pos = g.op("Gather", table["position"], positions)
    types = g.op("Gather", table["token_type"], "token_type_ids")
    x = g.layer_norm(g.op("Add", g.op("Add", words, pos), types), w, f"{e}.LayerNorm", eps)

    # The padding mask as transformers' eager path adds it: (1 - mask) * float32 min, [batch, 1, 1, sequence].
    keep = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    drop = g.op("Sub", g.const("onef", np.asarray(1.0, np.float32)), keep)
    additive = g.op("Mul", drop, g.const("float_min", np.asarray(np.finfo(np.float32).min, np.float32)))
    additive = g.op("Unsqueeze", additive, g.const("axes_1_2", np.asarray([1, 2], np.int64)))
    split_heads = g.const("split_heads", np.asarray([0, 0, heads, head_dim], np.int64))
    merge_heads = g.const("merge_heads", np.asarray([0, 0, hidden], np.int64))
    scale = g.const("attn_scale", np.asarray(1.0 / math.sqrt(head_dim), np.float32))
    inv_sqrt2 = g.const("inv_sqrt2", np.asarray(1.0 / math.sqrt(2.0), np.float32))
    half = g.const("half", np.asarray(0.5, np.float32))

    for i in range(cfg["num_hidden_layers"]):
        L = f"{pre}encoder.layer.{i}"

        def heads_of(proj: str, perm: list[int], x=x, L=L) -> str:
            y = g.linear(x, w, f"{L}.attention.self.{proj}")
            return g.op("Transpose", g.op("Reshape", y, split_heads), perm=perm)

        q = heads_of("query", [0, 2, 1, 3])  # [B, heads, S, d]
        k = heads_of("key", [0, 2, 3, 1])  # [B, heads, d, S]
        v = heads_of("value", [0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), additive)
        ctx = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        ctx = g.op("Reshape", g.op("Transpose", ctx, perm=[0, 2, 1, 3]), merge_heads)
        attn = g.linear(ctx, w, f"{L}.attention.output.dense")
        x = g.layer_norm(g.op("Add", attn, x), w, f"{L}.attention.output.LayerNorm", eps)
        up = g.linear(x, w, f"{L}.intermediate.dense")
        gelu = g.op("Mul", g.op("Mul", up, half), g.op("Add", g.op("Erf", g.op("Mul", up, inv_sqrt2)), "onef"))
        x = g.layer_norm(g.op("Add", g.linear(gelu, w, f"{L}.output.dense"), x), w, f"{L}.output.LayerNorm", eps)

    if kind == "embedder":  # sentence-transformers: mean over the real tokens, then unit length
        weights = g.op("Unsqueeze", keep, g.const("axis_last", np.asarray([-1], np.int64)))
        axis1 = g.const("axis_1", np.asarray([1], np.int64))
        total = g.op("ReduceSum", g.op("Mul", x, weights), axis1, keepdims=0)
        count = g.op(
            "Max", g.op("ReduceSum", weights, axis1, keepdims=0), g.const("min_count", np.asarray(1e-9, np.float32))
        )
        mean = g.op("Div", total, count)
        norm = g.op("Sqrt", g.op("ReduceSum", g.op("Mul", mean, mean), axis1, keepdims=1))
        out = g.op("Div", mean, g.op("Max", norm, g.const("min_norm", np.asarray(1e-12, np.float32))))
        width = hidden
    else:  # BertForSequenceClassification: tanh(dense(first token)), then the classifier
        first = g.op("Gather", x, g.const("zero_index", np.asarray(0, np.int64)), axis=1)
        pooled = g.op("Tanh", g.linear(first, w, f"{pre}pooler.dense"))
        out = g.linear(pooled, w, "classifier")
        width = int(w["classifier.weight"].shape[0])
    g.nodes.append(helper.make_node("Identity", [out], [OUTPUT_NAMES[kind]], name="output"))

    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in INPUT_NAMES]
    outputs = [helper.make_tensor_value_info(OUTPUT_NAMES[kind], TensorProto.FLOAT, ["batch", width])]
    graph = helper.make_graph(g.nodes, f"bert_{kind}", inputs, outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name=PRODUCER)
    model.ir_version = 8  # onnxruntime 1.1x and later read it; fixed, so the bytes do not follow the onnx package
    checker.check_model(model)
    return model
