"""Tokenizer and chat template, built from a GGUF file's metadata alone.

Data flow (all on the caller's thread; nothing here touches JAX):

    GGUF metadata dict ──► Tokenizer.from_gguf_metadata ──► a `tokenizers.Tokenizer` (Rust, fast)
                                                             + special ids, stop ids, BOS policy
    messages ──► render_chat_template (jinja2 sandbox) ──► prompt text
    messages ──► apply_chat_template ──► prompt token ids (template specials = control ids,
                                                           message text = plain text, always)
    generated ids ──► IncrementalDetokenizer.add ──► text deltas, never half a UTF-8 character

A GGUF file carries no `tokenizer.json`; it describes the tokenizer with llama.cpp's keys
(`tokenizer.ggml.model`, `.pre`, `.tokens`, `.merges`, `.scores`, `.token_type`, ...). We rebuild
the equivalent `tokenizers` pipeline from those keys. Two flavors:

* ``gpt2``: byte-level BPE. The vocabulary and merges are spelled in GPT-2's byte alphabet and the
  pre-tokenizer is chosen by ``tokenizer.ggml.pre`` (the regex cascade llama.cpp applies for it).
* ``llama``: SentencePiece-style BPE (Llama 2, Gemma). Spaces become ``▁``, characters missing from
  the vocabulary fall back to ``<0xXX>`` byte tokens, and the merges (the file has none) are derived
  from the vocabulary: a pair ``(l, r)`` may merge when ``l + r`` is a token, and higher-priority
  results merge first. That is exactly llama.cpp's SPM rule "merge the adjacent pair whose
  concatenation has the highest score", expressed as BPE ranks so the Rust BPE can run it.

Chat template: the caller's override, else the file's ``tokenizer.chat_template``, else the
architecture's fallback (``runtime.models.config.FALLBACK_CHAT_TEMPLATES``: Gemma's turn format for a
pretrained Gemma 3 file, which carries none).

Special tokens: ids marked CONTROL (token_type 3) are registered as special. Whether a control
token's text typed in the input becomes that control id is the caller's choice
(``parse_special``); the default is no, and chat messages are never parsed (see
``apply_chat_template``). USER_DEFINED tokens (type 4) are always matched whole, as llama.cpp does.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache
from os import PathLike
from typing import Any

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment
from tokenizers import AddedToken, Regex, decoders, models, normalizers, pre_tokenizers
from tokenizers import Tokenizer as _Backend

from runtime.loading.gguf import read_gguf_metadata  # re-exported: the tokenizer is built from this dict
from runtime.models.config import FALLBACK_CHAT_TEMPLATES

__all__ = [
    "ChatTemplateError",
    "IncrementalDetokenizer",
    "Tokenizer",
    "UnsupportedTokenizerError",
    "read_gguf_metadata",
]

# llama.cpp's `llama_token_type` values, as stored in `tokenizer.ggml.token_type`.
TOKEN_UNDEFINED, TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_USER_DEFINED, TOKEN_UNUSED, TOKEN_BYTE = range(7)

SPM_SPACE = "\u2581"  # ▁, SentencePiece's visible space

# Texts llama.cpp also treats as end-of-generation when present in the vocabulary, on top of the
# eos/eot/eom ids the file names: a chat model can end a turn with either.
_END_OF_GENERATION_TEXTS = (
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end|>",
    "<|end_of_text|>",
    "<end_of_turn>",
    "<EOT>",
)

# ---------------------------------------------------------------------------------------------
# Byte-level pre-tokenizers, keyed by `tokenizer.ggml.pre`.
#
# llama.cpp applies a cascade of regexes; each later regex splits the pieces the earlier one made.
# `ByteLevel(use_regex=True)` is GPT-2's regex
#     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# so the "digits first" family is `Digits(individual_digits=True)` then that.
# ---------------------------------------------------------------------------------------------

_LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

_GPT2_PRE = frozenset({"gpt2", "gpt-2", "mpt", "olmo", "jais"})
# llama.cpp: STARCODER, REFACT, COMMAND_R, SMOLLM, CODESHELL, EXAONE, MINERVA share
# {"\p{N}", gpt2 regex}: every digit is its own piece before the GPT-2 regex runs.
_DIGITS_FIRST_PRE = frozenset({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva"})
_SPLIT_PRE = {
    "llama-bpe": _LLAMA3_SPLIT,
    "llama3": _LLAMA3_SPLIT,
    "llama-v3": _LLAMA3_SPLIT,
    "smaug-bpe": _LLAMA3_SPLIT,
    "qwen2": _QWEN2_SPLIT,
    "deepseek-r1-qwen": _QWEN2_SPLIT,
}
SUPPORTED_MODELS = ("gpt2", "llama")
SUPPORTED_BYTE_LEVEL_PRE = tuple(sorted(_GPT2_PRE | _DIGITS_FIRST_PRE | set(_SPLIT_PRE)))


class UnsupportedTokenizerError(ValueError):
    """The GGUF describes a tokenizer model or pre-tokenizer this module does not build."""


class ChatTemplateError(ValueError):
    """The chat template failed to render, raised an exception itself, or is missing."""


# ---------------------------------------------------------------------------------------------
# Building the backend
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _byte_alphabet() -> dict[int, str]:
    """GPT-2's byte -> printable character table (printable bytes map to themselves)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


@lru_cache(maxsize=1)
def _inverse_byte_alphabet() -> dict[str, int]:
    return {c: b for b, c in _byte_alphabet().items()}


def _byte_level_pre_tokenizer(pre: str) -> pre_tokenizers.PreTokenizer:
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in _GPT2_PRE:
        return byte_level
    if pre in _DIGITS_FIRST_PRE:
        return pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    if pre in _SPLIT_PRE:
        return pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_SPLIT_PRE[pre]), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    raise UnsupportedTokenizerError(
        f"unsupported tokenizer.ggml.pre {pre!r} for a byte-level (gpt2) tokenizer; "
        f"supported: {', '.join(SUPPORTED_BYTE_LEVEL_PRE)}"
    )


def _first_id_vocab(tokens: Sequence[str]) -> dict[str, int]:
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        vocab.setdefault(token, index)  # a duplicated spelling keeps its first id, like llama.cpp
    return vocab


def _build_byte_level(meta: Mapping[str, Any], tokens: list[str], types: list[int]) -> _Backend:
    pre = str(meta.get("tokenizer.ggml.pre", "gpt2"))
    pre_tokenizer = _byte_level_pre_tokenizer(pre)  # fail on an unknown `pre` before the heavy work
    merges_raw = meta.get("tokenizer.ggml.merges")
    if merges_raw is None:
        raise ValueError("GGUF metadata for a gpt2 tokenizer has no tokenizer.ggml.merges")
    alphabet = _byte_alphabet()
    spelled = set(alphabet.values())
    # Normal tokens are stored in the byte alphabet; control/user-defined ones as raw text, which is
    # both their vocabulary key and the text an AddedToken matches. A normal token using other
    # characters is respelled byte by byte (what transformers does too).
    keys = [
        t
        if types[i] in (TOKEN_CONTROL, TOKEN_USER_DEFINED) or set(t) <= spelled
        else "".join(alphabet[b] for b in t.encode("utf-8"))
        for i, t in enumerate(tokens)
    ]
    merges = []
    for line in merges_raw:
        left, sep, right = str(line).partition(" ")
        if not sep:
            raise ValueError(f"malformed tokenizer.ggml.merges entry {line!r}: expected 'left right'")
        merges.append((left, right))
    backend = _Backend(models.BPE(vocab=_first_id_vocab(keys), merges=merges, fuse_unk=False, byte_fallback=False))
    backend.pre_tokenizer = pre_tokenizer
    backend.decoder = decoders.ByteLevel()
    return backend


def _spm_merges(tokens: list[str], types: list[int], priority: Sequence[float]) -> list[tuple[str, str]]:
    """BPE merges equivalent to SentencePiece/llama.cpp SPM's "highest-scoring pair first".

    Only NORMAL tokens are merge results or operands: control, byte and user-defined tokens are
    never reachable by merging plain text in llama.cpp either (the latter are matched whole first).
    Ranks: higher priority first, then lower id, so the order is total and deterministic.
    """
    normal = {}
    for i, t in enumerate(tokens):
        if types[i] in (TOKEN_NORMAL, TOKEN_UNDEFINED):
            normal.setdefault(t, i)
    ranked = []
    for token, index in normal.items():
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in normal and right in normal:
                ranked.append((-priority[index], index, normal[left], left, right))
    ranked.sort()
    return [(left, right) for *_, left, right in ranked]


def _build_spm(meta: Mapping[str, Any], tokens: list[str], types: list[int]) -> _Backend:
    scores = meta.get("tokenizer.ggml.scores")
    architecture = str(meta.get("general.architecture", ""))
    if architecture.startswith("gemma"):
        # Gemma's scores do not follow its merge order but the file order does (transformers,
        # integrations/gguf: gemma_tokenizer); checked against it on Gemma 3 270M's file.
        priority: Sequence[float] = [-i for i in range(len(tokens))]
    elif scores is not None:
        priority = [float(s) for s in scores]
        if len(priority) != len(tokens):
            raise ValueError(f"tokenizer.ggml.scores has {len(priority)} entries for {len(tokens)} tokens")
    else:
        raise ValueError("GGUF metadata for a llama (SentencePiece) tokenizer has no tokenizer.ggml.scores")
    # A normal token made only of spaces can be stored with real spaces; the text it must match has ▁.
    keys = [
        t.replace(" ", SPM_SPACE) if types[i] == TOKEN_NORMAL and t and not t.strip(" ") else t
        for i, t in enumerate(tokens)
    ]
    unk_id = meta.get("tokenizer.ggml.unknown_token_id")
    model = models.BPE(
        vocab=_first_id_vocab(keys),
        merges=_spm_merges(keys, types, priority),
        unk_token=keys[int(unk_id)] if unk_id is not None else None,
        fuse_unk=True,
        byte_fallback=True,
    )
    backend = _Backend(model)
    add_space_prefix = bool(meta.get("tokenizer.ggml.add_space_prefix", True))
    steps: list[normalizers.Normalizer] = [normalizers.Replace(" ", SPM_SPACE)]
    decode_steps: list[decoders.Decoder] = [decoders.Replace(SPM_SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    if add_space_prefix:
        # Applied per piece between added tokens, i.e. after every special, as llama.cpp does.
        steps.insert(0, normalizers.Prepend(SPM_SPACE))
        decode_steps.append(decoders.Strip(" ", 1, 0))
    backend.normalizer = normalizers.Sequence(steps)
    backend.decoder = decoders.Sequence(decode_steps)
    return backend


def _gemma_space_runs_as_normal(tokens: list[str], types: list[int]) -> list[int]:
    """Gemma files mark runs of 2-31 spaces USER_DEFINED and spell them with real spaces.

    In Gemma's SentencePiece model they are pieces of ``▁`` runs that text reaches after spaces
    become ``▁``; transformers' Gemma tokenizer accordingly respells them ``▁▁...`` and merges into
    them (runs of spaces then tokenize by merge priority, next to the neighbouring word pieces)
    instead of matching the raw spaces first. Treating them as NORMAL does the same here: the
    space-only respelling and the merge derivation below apply to NORMAL tokens.
    """
    return [
        TOKEN_NORMAL if kind == TOKEN_USER_DEFINED and token and not token.strip(" ") else kind
        for token, kind in zip(tokens, types)
    ]


def _register_added_tokens(backend: _Backend, tokens: list[str], types: list[int]) -> None:
    control = [
        AddedToken(t, special=True, normalized=False) for i, t in enumerate(tokens) if types[i] == TOKEN_CONTROL and t
    ]
    user = [
        AddedToken(t, special=False, normalized=False)
        for i, t in enumerate(tokens)
        if types[i] == TOKEN_USER_DEFINED and t
    ]
    size = backend.get_vocab_size(with_added_tokens=False)
    backend.add_special_tokens(control)
    backend.add_tokens(user)
    if backend.get_vocab_size(with_added_tokens=True) != size:
        # AddedToken reuses the vocabulary id of its text; a new id would not exist in the model.
        raise ValueError("a control or user-defined token's text is missing from the vocabulary")


# ---------------------------------------------------------------------------------------------
# Chat templates
# ---------------------------------------------------------------------------------------------


def _raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, separators=None, sort_keys=False):
    # Jinja's own `tojson` HTML-escapes; templates expect plain JSON (transformers overrides it too).
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


@lru_cache(maxsize=8)
def _compile_template(source: str) -> jinja2.Template:
    # Same environment as transformers' apply_chat_template: the template comes from the model
    # file, so it is untrusted code and runs sandboxed and immutable.
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
    try:
        return env.from_string(source)
    except jinja2.TemplateError as exc:
        raise ChatTemplateError(f"chat template does not compile: {exc}") from exc


def _validated_messages(messages: Any) -> list[dict[str, str]]:
    """Plain copies of the messages: every value a `str` (no subclasses reach the template)."""
    if not isinstance(messages, (list, tuple)):
        raise ValueError(
            f"messages must be a list of {{'role': str, 'content': str}} dicts, got {type(messages).__name__}"
        )
    plain = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise ValueError(f"messages[{i}] must be a dict with 'role' and 'content', got {type(message).__name__}")
        for key in ("role", "content"):
            if key not in message:
                raise ValueError(f"messages[{i}] has no {key!r}")
        copy = {}
        for key, value in message.items():
            if not isinstance(key, str):
                raise ValueError(f"messages[{i}] has a non-string key {key!r}")
            if not isinstance(value, str):
                raise ValueError(f"messages[{i}][{key!r}] must be a string, got {type(value).__name__}")
            copy[key] = str.__str__(value)
        if not copy["role"]:
            raise ValueError(f"messages[{i}]['role'] is empty")
        plain.append(copy)
    return plain


# ---------------------------------------------------------------------------------------------
# Tokenizer
# ---------------------------------------------------------------------------------------------


class Tokenizer:
    """Text <-> token ids for one model, plus its chat template.

    Build with ``Tokenizer.from_gguf_metadata(meta)`` or ``Tokenizer.from_gguf(path)``. Immutable
    after construction and safe to share between threads (the Rust backends are only read).

    Two backends share one vocabulary: ``_parse`` turns control-token text into control ids,
    ``_plain`` (``encode_special_tokens=True``) leaves it as plain text. Toggling one backend's flag
    per call would race between threads.
    """

    def __init__(
        self,
        backend_json: str,
        *,
        model: str,
        pre: str | None,
        tokens: Sequence[str],
        control_token_ids: Iterable[int],
        bos_token_id: int | None,
        eos_token_id: int | None,
        stop_token_ids: Iterable[int],
        add_bos: bool,
        chat_template: str | None,
    ) -> None:
        self._parse = _Backend.from_str(backend_json)
        self._plain = _Backend.from_str(backend_json)
        self._plain.encode_special_tokens = True
        self.model = model
        self.pre = pre
        self._tokens = tuple(tokens)
        self.control_token_ids = frozenset(control_token_ids)
        self.bos_token_id = bos_token_id
        self.eos_token_id = eos_token_id
        self.stop_token_ids = frozenset(stop_token_ids)
        self.add_bos = add_bos
        self.chat_template = chat_template
        # Leftmost-longest over control texts, the rule the backend uses to split them out.
        texts = sorted({self._tokens[i] for i in self.control_token_ids}, key=lambda t: (-len(t), t))
        self._control_re = re.compile("|".join(map(re.escape, texts))) if texts else None

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_gguf(cls, path: str | PathLike[str], *, chat_template: str | None = None) -> Tokenizer:
        return cls.from_gguf_metadata(read_gguf_metadata(path), chat_template=chat_template)

    @classmethod
    def from_gguf_metadata(cls, meta: Mapping[str, Any], *, chat_template: str | None = None) -> Tokenizer:
        """Build from GGUF key/values. ``chat_template`` overrides ``tokenizer.chat_template``."""
        model = meta.get("tokenizer.ggml.model")
        if model not in SUPPORTED_MODELS:
            raise UnsupportedTokenizerError(
                f"unsupported tokenizer.ggml.model {model!r}; supported: {', '.join(SUPPORTED_MODELS)}"
            )
        if "tokenizer.ggml.tokens" not in meta:
            raise ValueError("GGUF metadata has no tokenizer.ggml.tokens")
        tokens = [str(t) for t in meta["tokenizer.ggml.tokens"]]
        raw_types = meta.get("tokenizer.ggml.token_type")
        types = [int(t) for t in raw_types] if raw_types is not None else [TOKEN_NORMAL] * len(tokens)
        if len(types) != len(tokens):
            raise ValueError(f"tokenizer.ggml.token_type has {len(types)} entries for {len(tokens)} tokens")

        if model == "gpt2":
            backend = _build_byte_level(meta, tokens, types)
            pre = str(meta.get("tokenizer.ggml.pre", "gpt2"))
        else:
            if str(meta.get("general.architecture", "")).startswith("gemma"):
                types = _gemma_space_runs_as_normal(tokens, types)
            backend = _build_spm(meta, tokens, types)
            pre = None
        _register_added_tokens(backend, tokens, types)

        def token_id(key: str) -> int | None:
            value = meta.get(f"tokenizer.ggml.{key}")
            if value is None:
                return None
            if not 0 <= int(value) < len(tokens):
                raise ValueError(f"tokenizer.ggml.{key} = {value} is outside the vocabulary (size {len(tokens)})")
            return int(value)

        bos, eos = token_id("bos_token_id"), token_id("eos_token_id")
        stops = {i for i in (eos, token_id("eot_token_id"), token_id("eom_token_id")) if i is not None}
        vocab = _first_id_vocab(tokens)
        stops |= {vocab[t] for t in _END_OF_GENERATION_TEXTS if t in vocab}
        # llama.cpp's default when the key is absent: SentencePiece vocabularies add BOS, BPE ones do not.
        add_bos = bool(meta.get("tokenizer.ggml.add_bos_token", model == "llama"))
        if add_bos and bos is None:
            raise ValueError("tokenizer.ggml.add_bos_token is set but there is no tokenizer.ggml.bos_token_id")
        return cls(
            backend.to_str(),
            model=model,
            pre=pre,
            tokens=tokens,
            control_token_ids=(i for i, t in enumerate(types) if t == TOKEN_CONTROL),
            bos_token_id=bos,
            eos_token_id=eos,
            stop_token_ids=stops,
            add_bos=add_bos,
            chat_template=chat_template
            if chat_template is not None
            else (meta.get("tokenizer.chat_template") or FALLBACK_CHAT_TEMPLATES.get(meta.get("general.architecture"))),
        )

    # -- vocabulary ----------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return len(self._tokens)

    def id_to_token(self, token_id: int) -> str:
        """The token as the GGUF spells it (byte-alphabet or ▁ spelling for normal tokens)."""
        return self._tokens[token_id]

    def token_to_id(self, token: str) -> int | None:
        return self._parse.token_to_id(token)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for in generated text (OpenAI's logprobs ``bytes``): a byte-level
        token's characters mapped back through GPT-2's byte alphabet; a SentencePiece token's text with
        ▁ as a space, or its ``<0xNN>`` byte; a control token's own text."""
        token = self._tokens[token_id]
        if token_id in self.control_token_ids:
            return token.encode()
        if self.model == "gpt2":
            inverse = _inverse_byte_alphabet()
            return bytes(inverse[c] for c in token) if all(c in inverse for c in token) else token.encode()
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            return bytes([int(token[3:5], 16)])
        return token.replace(SPM_SPACE, " ").encode()

    def token_text(self, token_id: int) -> str:
        """``token_bytes`` as text (an incomplete UTF-8 sequence shows as U+FFFD)."""
        return self.token_bytes(token_id).decode("utf-8", errors="replace")

    @property
    def bos_token(self) -> str | None:
        return None if self.bos_token_id is None else self._tokens[self.bos_token_id]

    @property
    def eos_token(self) -> str | None:
        return None if self.eos_token_id is None else self._tokens[self.eos_token_id]

    # -- encode / decode -----------------------------------------------------------------------

    def encode(self, text: str, *, add_bos: bool | None = None, parse_special: bool = False) -> list[int]:
        """Token ids for ``text``.

        ``add_bos``: prepend BOS; ``None`` follows the file (``tokenizer.ggml.add_bos_token``).
        ``parse_special``: turn control-token text such as ``<|im_start|>`` into its control id.
        Off by default, so text from users can never forge one.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        backend = self._parse if parse_special else self._plain
        ids = backend.encode(text, add_special_tokens=False).ids
        if self.add_bos if add_bos is None else add_bos:
            if self.bos_token_id is None:
                raise ValueError("add_bos requested but the model has no BOS token")
            ids.insert(0, self.bos_token_id)
        return ids

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Text for ``ids``; control tokens are dropped unless ``skip_special_tokens=False``.

        Invalid UTF-8 (e.g. a cut multi-byte character) decodes to U+FFFD.
        """
        return self._parse.decode(list(ids), skip_special_tokens=skip_special_tokens)

    # -- chat ----------------------------------------------------------------------------------

    def render_chat_template(
        self,
        messages: Sequence[Mapping[str, str]],
        add_generation_prompt: bool = True,
        *,
        chat_template: str | None = None,
        **template_kwargs: Any,
    ) -> str:
        """The prompt text the chat template makes of ``messages`` (for display and logs)."""
        return self._render(_validated_messages(messages), add_generation_prompt, chat_template, template_kwargs)

    def apply_chat_template(
        self,
        messages: Sequence[Mapping[str, str]],
        add_generation_prompt: bool = True,
        *,
        chat_template: str | None = None,
        **template_kwargs: Any,
    ) -> list[int]:
        """Prompt token ids for ``messages``: what transformers' ``apply_chat_template`` gives.

        Control tokens written by the template become control ids; the same text inside a message
        stays plain text. How: before rendering, each control-token text inside a message value is
        replaced by a sentinel (private-use characters around a per-call random number), so the
        rendered prompt contains control text only where the template wrote it. The prompt is cut at
        those, and each piece between them gets its sentinels restored and is encoded as plain text
        in one go. Benign messages therefore render byte-for-byte as transformers renders them, and
        text spanning template and message (``"user\\n" + content``) is tokenized together, as
        there. No BOS is added: templates that want one write ``bos_token`` themselves.
        """
        plain = _validated_messages(messages)
        escaped, originals, restore = self._escape_messages(plain)
        prompt = self._render(escaped, add_generation_prompt, chat_template, template_kwargs)

        def encode_piece(piece: str) -> list[int]:
            if originals:
                piece = restore.sub(lambda m: originals[int(m.group(1))], piece)
            return self._plain.encode(piece, add_special_tokens=False).ids if piece else []

        if self._control_re is None:
            return encode_piece(prompt)
        ids: list[int] = []
        start = 0
        for match in self._control_re.finditer(prompt):
            ids += encode_piece(prompt[start : match.start()])
            ids.append(self._parse.token_to_id(match.group()))
            start = match.end()
        ids += encode_piece(prompt[start:])
        return ids

    def _escape_messages(self, messages: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[str], re.Pattern]:
        nonce = secrets.randbelow(10**12)
        open_mark, close_mark = "\ue000", "\ue001"
        restore = re.compile(re.escape(f"{open_mark}{nonce}.") + r"(\d+)" + re.escape(close_mark))
        originals: list[str] = []
        if self._control_re is None:
            return messages, originals, restore

        def sentinel(match: re.Match) -> str:
            originals.append(match.group())
            return f"{open_mark}{nonce}.{len(originals) - 1}{close_mark}"

        escaped = [{k: self._control_re.sub(sentinel, v) for k, v in m.items()} for m in messages]
        return escaped, originals, restore

    def _render(
        self,
        messages: list[dict[str, str]],
        add_generation_prompt: bool,
        chat_template: str | None,
        template_kwargs: Mapping[str, Any],
    ) -> str:
        source = chat_template if chat_template is not None else self.chat_template
        if source is None:
            raise ChatTemplateError("the model file has no tokenizer.chat_template; pass chat_template=")
        template = _compile_template(source)
        try:
            return template.render(
                messages=messages,
                add_generation_prompt=bool(add_generation_prompt),
                bos_token=self.bos_token or "",
                eos_token=self.eos_token or "",
                **template_kwargs,
            )
        except jinja2.TemplateError as exc:
            raise ChatTemplateError(f"chat template failed: {exc}") from exc


# ---------------------------------------------------------------------------------------------
# Streaming detokenization
# ---------------------------------------------------------------------------------------------


class IncrementalDetokenizer:
    """Turns generated ids into text deltas, one id at a time (vLLM's prefix/read offsets).

    ::

        ids:  p0 p1 p2 p3 | g0 g1 g2 ...
                 ^prefix  ^read
        delta = decode(ids[prefix:])[len(decode(ids[prefix:read])):]

    Decoding a window that starts a few ids back keeps context the decoder needs (a leading space
    a SentencePiece decoder would strip at the start of text). While the window's text ends in
    U+FFFD, its last character is an incomplete UTF-8 sequence: nothing is emitted and the offsets
    stay, so a character split over several byte tokens comes out whole. ``flush`` emits whatever
    is held back at the end (genuinely invalid bytes then appear as U+FFFD, as in ``decode``).
    The deltas concatenate to ``decode(generated ids)``.
    """

    _CONTEXT = 5  # prompt ids kept as decoding context, as vLLM does

    def __init__(
        self, tokenizer: Tokenizer, prompt_ids: Sequence[int] | None = None, *, skip_special_tokens: bool = True
    ) -> None:
        self._tokenizer = tokenizer
        self._skip = skip_special_tokens
        self._ids: list[int] = list(prompt_ids or ())
        self._read = len(self._ids)
        self._prefix = max(self._read - self._CONTEXT, 0)

    def _decode(self, ids: Sequence[int]) -> str:
        return self._tokenizer.decode(ids, skip_special_tokens=self._skip)

    def add(self, token_id: int) -> str:
        """Append one generated id; return the text it completes ('' while a character is partial)."""
        self._ids.append(int(token_id))
        prefix_text = self._decode(self._ids[self._prefix : self._read])
        new_text = self._decode(self._ids[self._prefix :])
        if len(new_text) <= len(prefix_text) or new_text.endswith("\ufffd"):
            return ""
        self._prefix, self._read = self._read, len(self._ids)
        return new_text[len(prefix_text) :]

    def flush(self) -> str:
        """The held-back tail, once generation has ended."""
        prefix_text = self._decode(self._ids[self._prefix : self._read])
        new_text = self._decode(self._ids[self._prefix :])
        self._prefix = self._read = len(self._ids)
        return new_text[len(prefix_text) :] if len(new_text) > len(prefix_text) else ""
