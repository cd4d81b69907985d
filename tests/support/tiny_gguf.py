"""Write a tiny random-weight Llama GGUF file, the way llama.cpp's converter would lay it out.

In: a directory (and a few knobs). Out: ``TinyGGUF``: the file's path, its dimensions, and the
ORIGINAL weights (Hugging Face layout ``[out, in]``, Q/K rows not permuted) as float32 after the same
quantization round trip the file went through, so a test can compare what the loader returns, and run
an independent forward pass, without reading the file back through our own code.

What the file holds:

* architecture ``llama``: hidden 64, 2 layers, 4 heads, 2 KV heads (head_dim 16), FFN 128, context
  256, a non-default rope theta (so a test notices if the loader ignores it), tied embeddings (no
  ``output.weight``);
* weights stored as a mix of F32, F16 and Q8_0 (``gguf.quants.quantize``); norms stay F32;
* Q and K rows permuted as ``convert_hf_to_gguf.py`` does for llama::

      w.reshape(n_head, 2, head_dim // 2, in).swapaxes(1, 2).reshape(out, in)
      rows of one head: [x0 .. x7 | y0 .. y7]  ->  [x0 y0 x1 y1 .. x7 y7]

  Quantization is row-wise (blocks run along ``in``), so permuting rows commutes with the round trip;
* a byte-level BPE tokenizer (``gpt2`` / pre ``gpt2``): the 256 byte-alphabet characters, a few
  merges, and control tokens ``<|im_start|>``, ``<|im_end|>``, ``<|endoftext|>`` (token_type 3);
  eos = ``<|im_end|>``; a ChatML chat template.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np

HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN, CONTEXT = 64, 2, 4, 2, 16, 128, 256
ROPE_THETA = 50000.0
RMS_EPS = 1e-5
EMBED_STD = 0.3  # small next to the attention/MLP outputs: a tied head then does not just repeat the last token

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
MERGES = ["Ġ t", "h e", "Ġt he", "l l", "i n", "e r"]
CONTROL_TOKENS = ["<|im_start|>", "<|im_end|>", "<|endoftext|>"]

Q = gguf.GGMLQuantizationType
# Storage type per tensor (suffix after "blk.N."); everything not listed is F32. Layer 1 swaps
# F16 and Q8_0 so each kind of weight is read in two formats.
LAYER_TYPES = [
    {
        "attn_q": Q.Q8_0,
        "attn_k": Q.F16,
        "attn_v": Q.F32,
        "attn_output": Q.Q8_0,
        "ffn_gate": Q.F16,
        "ffn_up": Q.Q8_0,
        "ffn_down": Q.F32,
    },
    {
        "attn_q": Q.F16,
        "attn_k": Q.Q8_0,
        "attn_v": Q.Q8_0,
        "attn_output": Q.F16,
        "ffn_gate": Q.Q8_0,
        "ffn_up": Q.F16,
        "ffn_down": Q.Q8_0,
    },
]
EMBED_TYPE = Q.Q8_0


def byte_alphabet() -> list[str]:
    """GPT-2's 256 byte characters, in byte order (bytes_to_unicode)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return [table[b] for b in range(256)]


def vocabulary() -> tuple[list[str], list[int]]:
    tokens = byte_alphabet() + [m.replace(" ", "") for m in MERGES] + CONTROL_TOKENS
    types = [1] * (len(tokens) - len(CONTROL_TOKENS)) + [3] * len(CONTROL_TOKENS)
    return tokens, types


def permute_qk(w: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's converter permutation (``LlamaModel.permute``), rows [out, in]."""
    out_dim, in_dim = w.shape
    return w.reshape(n_heads, 2, out_dim // n_heads // 2, in_dim).swapaxes(1, 2).reshape(out_dim, in_dim)


def round_trip(w: np.ndarray, qtype) -> tuple[np.ndarray, np.ndarray]:
    """(what to store, float32 values a reader gets back) for ``w`` stored as ``qtype``."""
    if qtype == Q.F32:
        stored = w.astype(np.float32)
        return stored, stored.copy()
    if qtype == Q.F16:
        stored = w.astype(np.float16)
        return stored, stored.astype(np.float32)
    stored = gguf.quants.quantize(w.astype(np.float32), qtype)
    return stored, gguf.quants.dequantize(stored, qtype).astype(np.float32)


def new_writer(
    path: Path, arch: str, name: str, context: int, hidden: int, layers: int, ffn: int, heads: int, kv_heads: int
) -> gguf.GGUFWriter:
    """A GGUFWriter for ``path`` with the name and the dimensions every tiny model file states."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_context_length(context)
    w.add_embedding_length(hidden)
    w.add_block_count(layers)
    w.add_feed_forward_length(ffn)
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    return w


@dataclass(frozen=True)
class TinyGGUF:
    path: Path
    vocab_size: int
    tokens: list[str]
    eos_token_id: int
    bos_token_id: int
    # HF names, [out, in] float32, unpermuted, after the storage round trip:
    # embed [V, D]; final_norm [D]; layers[i][name] for attn_norm, ffn_norm, q, k, v, o, gate, up, down.
    embed: np.ndarray
    final_norm: np.ndarray
    layers: list[dict[str, np.ndarray]]

    hidden_size: int = HIDDEN
    num_layers: int = LAYERS
    num_heads: int = HEADS
    num_kv_heads: int = KV_HEADS
    head_dim: int = HEAD_DIM
    intermediate_size: int = FFN
    context_length: int = CONTEXT
    rope_theta: float = ROPE_THETA
    rms_norm_eps: float = RMS_EPS


def write_tiny_llama(
    directory: str | Path,
    name: str = "tiny-llama.gguf",
    *,
    seed: int = 0,
    arch: str = "llama",
    tensor_type_override: dict[str, object] | None = None,
    heads: int = HEADS,
) -> TinyGGUF:
    """Write the file into ``directory`` and return it with its original weights.

    ``arch``: the ``general.architecture`` written (the keys and tensors stay Llama's), for tests of
    unknown architectures. ``tensor_type_override``: ``{gguf tensor name: GGMLQuantizationType}``;
    a type without a quantizer in ``gguf.quants`` is written as zero bytes of the right size (for
    tests of unsupported types), and its original weights are then meaningless. ``heads``: query heads
    (head_dim becomes HIDDEN / heads; the kv heads stay KV_HEADS), e.g. 8 to split over 8 devices.
    """
    head_dim = HIDDEN // heads
    rng = np.random.default_rng(seed)
    tokens, types = vocabulary()
    V = len(tokens)
    path = Path(directory) / name
    w = new_writer(path, arch, "tiny-llama", CONTEXT, HIDDEN, LAYERS, FFN, heads, KV_HEADS)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(ROPE_THETA)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(MERGES)
    eos, bos = tokens.index("<|im_end|>"), tokens.index("<|endoftext|>")
    w.add_eos_token_id(eos)
    w.add_bos_token_id(bos)
    w.add_add_bos_token(False)
    w.add_chat_template(CHATML_TEMPLATE)

    override = dict(tensor_type_override or {})

    def put(gguf_name: str, value: np.ndarray, qtype, *, permute_heads: int | None = None) -> np.ndarray:
        qtype = override.pop(gguf_name, qtype)
        if qtype not in (Q.F32, Q.F16) and qtype not in (Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1):
            # No quantizer: raw zero blocks of the right byte size.
            block, nbytes = gguf.GGML_QUANT_SIZES[qtype]
            raw = np.zeros((value.shape[0], value.shape[1] // block * nbytes), np.uint8)
            w.add_tensor(gguf_name, raw, raw_dtype=qtype)
            return value.astype(np.float32)
        stored_value = permute_qk(value, permute_heads) if permute_heads else value
        stored, _ = round_trip(stored_value, qtype)
        _, original = round_trip(value, qtype)  # row-wise: same values, unpermuted order
        w.add_tensor(gguf_name, stored, raw_dtype=None if qtype in (Q.F32, Q.F16) else qtype)
        return original

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    embed = put("token_embd.weight", normal((V, HIDDEN), EMBED_STD), EMBED_TYPE)
    layers = []
    for i in range(LAYERS):
        t, b = LAYER_TYPES[i], f"blk.{i}."
        layer = {
            "attn_norm": put(b + "attn_norm.weight", 1.0 + normal(HIDDEN, 0.1), Q.F32),
            "ffn_norm": put(b + "ffn_norm.weight", 1.0 + normal(HIDDEN, 0.1), Q.F32),
            # Q/K larger than 1/sqrt(in) so attention is far from uniform.
            "q": put(
                b + "attn_q.weight",
                normal((heads * head_dim, HIDDEN), 2.0 / HIDDEN**0.5),
                t["attn_q"],
                permute_heads=heads,
            ),
            "k": put(
                b + "attn_k.weight",
                normal((KV_HEADS * head_dim, HIDDEN), 2.0 / HIDDEN**0.5),
                t["attn_k"],
                permute_heads=KV_HEADS,
            ),
            "v": put(b + "attn_v.weight", normal((KV_HEADS * head_dim, HIDDEN), 1.0 / HIDDEN**0.5), t["attn_v"]),
            "o": put(b + "attn_output.weight", normal((HIDDEN, heads * head_dim), 1.0 / HIDDEN**0.5), t["attn_output"]),
            "gate": put(b + "ffn_gate.weight", normal((FFN, HIDDEN), 1.0 / HIDDEN**0.5), t["ffn_gate"]),
            "up": put(b + "ffn_up.weight", normal((FFN, HIDDEN), 1.0 / HIDDEN**0.5), t["ffn_up"]),
            "down": put(b + "ffn_down.weight", normal((HIDDEN, FFN), 1.0 / FFN**0.5), t["ffn_down"]),
        }
        layers.append(layer)
    final_norm = put("output_norm.weight", 1.0 + normal(HIDDEN, 0.1), Q.F32)
    if override:
        raise ValueError(f"tensor_type_override names unknown tensors: {sorted(override)}")

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return TinyGGUF(
        path=path,
        vocab_size=V,
        tokens=tokens,
        eos_token_id=eos,
        bos_token_id=bos,
        embed=embed,
        final_norm=final_norm,
        layers=layers,
        num_heads=heads,
        head_dim=head_dim,
    )


# ---------------------------------------------------------------- independent NumPy reference
# Written from Hugging Face's modeling_llama (not from runtime/): float64, dense, no cache.


def rms_norm(x, scale, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * scale


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rope(x, positions, theta):
    """x [P, heads, Dh] at ``positions`` [P] -> rotated (HF: cos/sin of cat(freqs, freqs))."""
    Dh = x.shape[-1]
    inv_freq = 1.0 / theta ** (np.arange(0, Dh, 2) / Dh)
    angles = np.asarray(positions, np.float64)[:, None] * inv_freq[None, :]
    emb = np.concatenate([angles, angles], axis=-1)[:, None, :]  # [P, 1, Dh]
    return x * np.cos(emb) + rotate_half(x) * np.sin(emb)


def causal_attention(q, k, v):
    """q [P, H, Dh], k/v [P, KVH, Dh] -> [P, H, Dh]; query head h reads KV head h // (H // KVH)."""
    P, H, Dh = q.shape
    k, v = np.repeat(k, H // k.shape[1], axis=1), np.repeat(v, H // v.shape[1], axis=1)  # HF repeat_kv
    scores = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(Dh)
    scores = np.where(np.tril(np.ones((P, P), bool))[None], scores, -np.inf)
    probs = np.exp(scores - scores.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    return np.einsum("hqk,khd->qhd", probs, v)


def reference_logits(tiny: TinyGGUF, ids) -> np.ndarray:
    """[P, V] float64 logits at every position (``LlamaForCausalLM`` on the original weights)."""
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    P, H, KVH, Dh = len(ids), tiny.num_heads, tiny.num_kv_heads, tiny.head_dim
    eps = float(np.float32(tiny.rms_norm_eps))  # the file stores float32
    positions = np.arange(P)
    x = f64(tiny.embed)[np.asarray(ids)]
    for layer in tiny.layers:
        w = {k: f64(v) for k, v in layer.items()}
        h = rms_norm(x, w["attn_norm"], eps)
        q = rope((h @ w["q"].T).reshape(P, H, Dh), positions, tiny.rope_theta)
        k = rope((h @ w["k"].T).reshape(P, KVH, Dh), positions, tiny.rope_theta)
        v = (h @ w["v"].T).reshape(P, KVH, Dh)
        x = x + causal_attention(q, k, v).reshape(P, H * Dh) @ w["o"].T
        h = rms_norm(x, w["ffn_norm"], eps)
        gate, up = h @ w["gate"].T, h @ w["up"].T
        x = x + (gate / (1.0 + np.exp(-gate)) * up) @ w["down"].T  # SwiGLU: silu(gate) * up
    return rms_norm(x, f64(tiny.final_norm), eps) @ f64(tiny.embed).T  # tied LM head


def reference_greedy(tiny: TinyGGUF, ids, steps: int, stop_ids=()) -> tuple[list[int], float]:
    """Greedy continuation by recomputing the whole sequence each step (no KV cache).

    Returns (tokens, smallest top-1/top-2 logit gap seen): callers check the gap so a comparison
    with a float32 implementation cannot hinge on a near-tie. Stops after a token in ``stop_ids``
    (which is not returned).
    """
    seq, out, gap = list(ids), [], np.inf
    for _ in range(steps):
        logits = reference_logits(tiny, seq)[-1]
        top2 = np.sort(logits)[-2:]
        gap = min(gap, float(top2[1] - top2[0]))
        token = int(np.argmax(logits))
        if token in stop_ids:
            break
        out.append(token)
        seq.append(token)
    return out, gap
