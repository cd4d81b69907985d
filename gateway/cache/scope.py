"""The scope of a cached answer: everything besides the question that can change the answer.

A cached answer is only ever served inside the scope it was stored in; the scope key partitions both
the exact-match table and the FAISS indexes, so a hit across tenants, models, system prompts,
conversations or sampling parameters is impossible by construction, not by a similarity threshold.

``CacheScope.from_request(tenant, model, messages, params)`` splits an OpenAI ``messages`` list:

    [system..., (user|assistant|tool|system)..., user]
     ^^^^^^^^^  ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^  ^^^^
     system     history (earlier turns)          question (returned separately)

and returns one of three kinds of scope:

    single        no history: the question is the last message
    history       a conversation kept exact: every earlier turn, the assistant's included, is in the scope
                  as it was sent. This is what every conversation gets by default
                  (``conversations="exact"``, ``cache.conversation_match: exact``), and what anything
                  richer than plain user and assistant text gets in any mode (tool results, content
                  parts, names, a system message mid-conversation)
    conversation  ``conversations="semantic"`` only, a history of plain user and assistant text: the
                  question is the conversation's key, **all** its user turns joined
                  (``conversation_key``), so a follow-up such as "cancel it" is compared together with
                  what "it" is; and the scope holds the conversation's **facts** (``conversation_facts``:
                  every number, amount and name in any turn, the assistant's included), so two chats
                  that differ in which merchant, amount, account or product they name are in different
                  scopes and can never answer for each other, however alike their last turns are

Why exact is the default: one API key often serves many end users of an app, and an assistant turn can
carry one end user's account details. A key made of the last few user turns let a generic follow-up
("which merchant was that again?") of one user hit another user's answer. Semantic conversation
matching is opt-in, behind the calibrated false-hit bound (``cache.max_false_hit_rate``).

and keeps from ``params`` every request field that can change the answer (anything except the fields
in ``NEUTRAL_PARAMS``: transport and bookkeeping). ``key()`` is a sha256 over a canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SCOPE_VERSION = 3  # 3: conversations exact by default; semantic keys hold every user turn and the facts
CONVERSATION_MODES = ("exact", "semantic")
TURN_SEPARATOR = " | "

# Request fields that never change the text of the answer. Everything else the client sends is part
# of the scope (an unknown parameter is assumed to matter: a spurious miss is cheap, a wrong hit not).
NEUTRAL_PARAMS = frozenset(
    {"messages", "model", "stream", "stream_options", "user", "metadata", "store", "service_tier"}
)
# Aliases folded onto one name so that equivalent requests share a scope.
PARAM_ALIASES = {"max_completion_tokens": "max_tokens"}


def _canonical(value: Any) -> Any:
    """JSON-ready canonical value: 0.0 == 0, a lone stop string == [string], dict keys sorted."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    raise ValueError(f"parameter value of type {type(value).__name__} is not cacheable")


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_params(params: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    """Sorted ``(name, canonical JSON value)`` pairs of the answer-changing params; None values dropped."""
    out: dict[str, str] = {}
    for name, value in (params or {}).items():
        name = PARAM_ALIASES.get(name, name)
        if name in NEUTRAL_PARAMS or value is None:
            continue
        if name == "stop" and isinstance(value, str):
            value = [value]
        out[name] = _dumps(_canonical(value))
    return tuple(sorted(out.items()))


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one chat message. Plain string content is returned as is; anything richer
    (content parts, tool calls, names) becomes canonical JSON so that it still takes part in the
    scope exactly."""
    content = message.get("content")
    extras = {k: v for k, v in message.items() if k not in ("role", "content") and v is not None}
    if isinstance(content, str) and not extras:
        return content
    if content is None and not extras:
        return ""
    if (
        isinstance(content, list)
        and not extras
        and all(isinstance(p, Mapping) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content)
    ):
        return "\n".join(p["text"] for p in content)
    return _dumps(_canonical({"content": content, **extras}))


def _plain(turns: Sequence[Mapping[str, Any]]) -> bool:
    for m in turns:
        extras = [k for k, v in m.items() if k not in ("role", "content") and v is not None]
        if m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), str) or extras:
            return False
    return True


def conversation_key(turns: Sequence[Mapping[str, Any]]) -> str | None:
    """The text a conversation (history + the last user message, no leading system messages) is keyed
    by in semantic mode: all its user turns joined with ``TURN_SEPARATOR``. None when a turn is not
    plain user or assistant text (the history then stays in the scope whole)."""
    if not _plain(turns):
        return None
    users = [" ".join(m["content"].split()) for m in turns if m["role"] == "user"]
    return TURN_SEPARATOR.join(users) if users else None


# A fact: a number (digits, with decimals, thousands separators, a currency sign or a unit glued on),
# a code (letters and digits mixed: AB12, #4471) or a name (a capitalized word that does not start a
# sentence, or an all-caps word of 2+ letters). Names are folded to lower case.
_FACT = re.compile(r"[#$\u00a3\u20ac]?\d[\d,.:/-]*\w*|\b[A-Za-z]+\d\w*|\b[A-Z][\w'&-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n]\s*|[\"(]\s*)$")
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok", "okay"})


def conversation_facts(turns: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    """The facts a plain conversation names anywhere, the assistant's turns included: numbers, codes and
    names (see ``_FACT``), sorted and deduplicated. Equal facts are necessary for a semantic
    conversation hit; a chat retyped in lower case loses its names and so misses (the safe side)."""
    out: set[str] = set()
    for m in turns:
        text = str(m.get("content") or "")
        for match in _FACT.finditer(text):
            word = match.group(0).rstrip(".,:/-")
            if not word:
                continue
            if word[0].isalpha() and not any(c.isdigit() for c in word):
                if len(word) < 2 or word.lower() in _NOT_NAMES:
                    continue
                caps = word.isupper() and len(word) >= 2
                if not caps and _SENTENCE_START.search(text[: match.start()]):
                    continue  # a capital that starts a sentence says nothing
            out.add(word.lower().replace(",", ""))
    return tuple(sorted(out))


def _turn_key(message: Mapping[str, Any]) -> str:
    from gateway.cache.normalize import normalize_question

    text = message_text(message)
    plain = isinstance(message.get("content"), str) and text == message.get("content")
    return normalize_question(text) if plain else text


def pair_text(x: str | Sequence[Mapping[str, Any]], conversations: str = "semantic") -> str | None:
    """What the cache compares for a question string or a ``messages`` list (evaluation and training
    data): the question, the conversation key, or None (a history the cache keeps exact)."""
    if isinstance(x, str):
        return x
    scope, question = CacheScope.from_request("", "", x, conversations=conversations)
    return None if scope.kind == "history" else question


@dataclass(frozen=True)
class CacheScope:
    tenant: str  # API key (or its hash) or the OpenAI `user` field
    model: str  # tier / model name the answer came from
    system_prompt: str = ""
    history: tuple[tuple[str, str], ...] = ()  # (role, content) of the turns before the question
    params: tuple[tuple[str, str], ...] = ()  # sorted (name, canonical JSON value)
    kind: str = "single"  # "single" | "conversation" | "history" (module docstring)
    facts: tuple[str, ...] = ()  # conversations: every number, code and name of any turn
    # Conversations: the assistant's turn just before the follow-up. Not part of the key (reworded
    # histories reword it too); the cache compares its embedding instead (cache.conversation_reply_threshold).
    reply: str = field(default="", compare=False)

    def key(self) -> str:
        """Stable sha256 hex of the canonical JSON form (same across processes and restarts)."""
        blob = _dumps(
            {
                "v": SCOPE_VERSION,
                "kind": self.kind,
                "tenant": self.tenant,
                "model": self.model,
                "system": self.system_prompt,
                "history": [list(turn) for turn in self.history],
                "params": [list(p) for p in self.params],
                "facts": list(self.facts),
            }
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def param(self, name: str, default: Any = None) -> Any:
        """A param's value (decoded from its canonical JSON), e.g. ``scope.param("temperature")``."""
        for k, v in self.params:
            if k == name:
                return json.loads(v)
        return default

    @classmethod
    def from_request(
        cls,
        tenant: str,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        params: Mapping[str, Any] | None = None,
        *,
        conversations: str = "exact",
    ) -> tuple[CacheScope, str]:
        """Split an OpenAI chat request into ``(scope, question)``. ``conversations``: "exact" (a history
        stays in the scope whole) or "semantic" (plain conversations keyed by their user turns and facts).

        Raises ValueError when the request cannot be cached: no messages, the last message is not
        from the user, or the question is not plain text (images, audio)."""
        if not messages:
            raise ValueError("messages is empty")
        last = messages[-1]
        if last.get("role") != "user":
            raise ValueError("the last message is not from the user")
        content = last.get("content")
        if isinstance(content, list):
            if not all(isinstance(p, Mapping) and p.get("type") == "text" for p in content):
                raise ValueError("the question has non-text content parts")
            question = "\n".join(str(p.get("text", "")) for p in content)
        elif isinstance(content, str):
            question = content
        else:
            raise ValueError("the question has no text content")
        extra = {k: v for k, v in last.items() if k not in ("role", "content") and v is not None}

        leading_system: list[str] = []
        i = 0
        while i < len(messages) - 1 and messages[i].get("role") in ("system", "developer"):
            leading_system.append(message_text(messages[i]))
            i += 1
        if conversations not in CONVERSATION_MODES:
            raise ValueError(f"conversations must be one of {CONVERSATION_MODES}, got {conversations!r}")
        turns = messages[i:]
        semantic = conversations == "semantic" and len(turns) > 1 and not extra
        key = conversation_key(turns) if semantic else None
        reply, facts = "", ()
        if key is not None:
            kind, question, history = "conversation", key, []
            facts = conversation_facts(turns)
            if turns[-2].get("role") == "assistant":
                reply = " ".join(str(turns[-2].get("content") or "").split())
        else:
            kind = "single" if len(turns) == 1 else "history"
            # plain turns normalized as the question is (case, spacing, trailing punctuation): "ok" / "OK."
            history = [(str(m.get("role")), _turn_key(m)) for m in turns[:-1]]
            if extra:  # e.g. a `name` on the question: keep it in the scope rather than drop it
                history.append(("__question_extra__", _dumps(_canonical(extra))))
        scope = cls(
            tenant=str(tenant),
            model=str(model),
            system_prompt="\n\n".join(leading_system),
            history=tuple(history),
            params=canonical_params(params),
            kind=kind,
            facts=facts,
            reply=reply,
        )
        return scope, question
