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
    conversation  a history of plain user and assistant text: the question is the conversation's key,
                  its last ``CONTEXT_TURNS`` user turns joined (``conversation_key``), so a follow-up
                  such as "cancel it" is compared together with what "it" is, and the history leaves
                  the scope: the same follow-up after reworded or padded turns can hit, after turns about
                  something else it cannot (the precision checker reads the whole key). Assistant turns
                  are not part of the key: they are the model's answers to the user turns before them
    history       anything else in the history (tool results, content parts, names, a system message
                  mid-conversation): the whole history stays in the scope, exactly, as before

and keeps from ``params`` every request field that can change the answer (anything except the fields
in ``NEUTRAL_PARAMS``: transport and bookkeeping). ``key()`` is a sha256 over a canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

SCOPE_VERSION = 2  # bump when the canonical form changes: old entries then simply miss
CONTEXT_TURNS = 3  # user turns in a conversation's key, the follow-up included
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


def conversation_key(turns: Sequence[Mapping[str, Any]]) -> str | None:
    """The text a conversation (history + the last user message, no leading system messages) is keyed
    by: its last ``CONTEXT_TURNS`` user turns joined with ``TURN_SEPARATOR``. None when a turn is not
    plain user or assistant text (the history then stays in the scope whole)."""
    users = []
    for m in turns:
        extras = [k for k, v in m.items() if k not in ("role", "content") and v is not None]
        if m.get("role") not in ("user", "assistant") or not isinstance(m.get("content"), str) or extras:
            return None
        if m["role"] == "user":
            users.append(" ".join(m["content"].split()))
    return TURN_SEPARATOR.join(users[-CONTEXT_TURNS:]) if users else None


def pair_text(x: str | Sequence[Mapping[str, Any]]) -> str | None:
    """What the cache compares for a question string or a ``messages`` list (evaluation and training
    data): the question, the conversation key, or None (a history the cache keeps exact)."""
    if isinstance(x, str):
        return x
    scope, question = CacheScope.from_request("", "", x)
    return None if scope.kind == "history" else question


@dataclass(frozen=True)
class CacheScope:
    tenant: str  # API key (or its hash) or the OpenAI `user` field
    model: str  # tier / model name the answer came from
    system_prompt: str = ""
    history: tuple[tuple[str, str], ...] = ()  # (role, content) of the turns before the question
    params: tuple[tuple[str, str], ...] = ()  # sorted (name, canonical JSON value)
    kind: str = "single"  # "single" | "conversation" | "history" (module docstring)
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
        cls, tenant: str, model: str, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None
    ) -> tuple[CacheScope, str]:
        """Split an OpenAI chat request into ``(scope, question)``.

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
        turns = messages[i:]
        key = conversation_key(turns) if len(turns) > 1 and not extra else None
        reply = ""
        if key is not None:
            kind, question, history = "conversation", key, []
            if turns[-2].get("role") == "assistant":
                reply = " ".join(str(turns[-2].get("content") or "").split())
        else:
            kind = "single" if len(turns) == 1 else "history"
            history = [(str(m.get("role")), message_text(m)) for m in turns[:-1]]
            if extra:  # e.g. a `name` on the question: keep it in the scope rather than drop it
                history.append(("__question_extra__", _dumps(_canonical(extra))))
        scope = cls(
            tenant=str(tenant),
            model=str(model),
            system_prompt="\n\n".join(leading_system),
            history=tuple(history),
            params=canonical_params(params),
            kind=kind,
            reply=reply,
        )
        return scope, question
