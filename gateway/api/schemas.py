"""OpenAI chat-completions request parsing and response shapes.

In: the decoded JSON body. Out: ``ChatRequest`` (validated, typed) or an ``APIError`` (400) naming the
offending field. Unknown fields are ignored, as OpenAI's SDKs send some that do not apply here;
fields whose non-default value would change the answer in a way we do not implement (``n > 1``,
penalties, logprobs, tools) are rejected rather than silently ignored.
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from runtime.serving.errors import invalid

ROLES = ("system", "developer", "user", "assistant")
MAX_STOP = 4


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: tuple[dict[str, str], ...]  # {"role", "content"} with content flattened to text
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    stream: bool = False
    include_usage: bool = False
    user: str | None = None

    def answer_params(self) -> dict[str, Any]:
        """Every parameter that changes the answer (part of the cache scope)."""
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens,
                "stop": list(self.stop), "seed": self.seed}


def _number(body: dict, key: str, default, lo: float, hi: float, *, lo_open: bool = False):
    if key not in body or body[key] is None:
        return default
    v = body[key]
    # ints are compared as ints: math.isfinite() / float() raise OverflowError past ~1e308
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        raise invalid(f"'{key}' must be a number", key)
    if v < lo or v > hi or (lo_open and v == lo):
        bracket = "(" if lo_open else "["
        raise invalid(f"'{key}' must be in {bracket}{lo}, {hi}]; got {_short(v)}", key)
    return float(v)


def _short(v) -> str:
    """A number for an error message: a 4,000-digit integer is not echoed whole."""
    text = str(v)
    return text if len(text) <= 32 else f"{text[:12]}...({len(text)} digits)"


def _int(body: dict, key: str, lo: int | None = None) -> int | None:
    if key not in body or body[key] is None:
        return None
    v = body[key]
    if isinstance(v, bool) or not isinstance(v, int):
        raise invalid(f"'{key}' must be an integer", key)
    if lo is not None and v < lo:
        raise invalid(f"'{key}' must be >= {lo}; got {_short(v)}", key)
    return v


def _content_text(content: Any, i: int) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: only text is supported
        parts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise invalid(f"messages[{i}].content[{j}]: only text parts ({{'type': 'text', 'text': ...}}) are supported",
                              f"messages[{i}].content")
            parts.append(part["text"])
        return "".join(parts)
    raise invalid(f"messages[{i}].content must be a string or a list of text parts", f"messages[{i}].content")


def _messages(body: dict, max_messages: int) -> tuple[dict[str, str], ...]:
    msgs = body.get("messages")
    if msgs is None:
        raise invalid("'messages' is required", "messages")
    if not isinstance(msgs, list):
        raise invalid("'messages' must be a list of message objects", "messages")
    if not msgs:
        raise invalid("'messages' must contain at least one message", "messages")
    if len(msgs) > max_messages:
        raise invalid(f"'messages' has {len(msgs)} messages; the limit is {max_messages}", "messages")
    out = []
    for i, m in enumerate(msgs):
        if not isinstance(m, dict):
            raise invalid(f"messages[{i}] must be an object with 'role' and 'content'", f"messages[{i}]")
        role = m.get("role")
        if role not in ROLES:
            raise invalid(f"messages[{i}].role must be one of {', '.join(ROLES)}; got {role!r}", f"messages[{i}].role")
        if "content" not in m or m["content"] is None:
            raise invalid(f"messages[{i}].content is required", f"messages[{i}].content")
        out.append({"role": "system" if role == "developer" else role, "content": _content_text(m["content"], i)})
    if out[-1]["role"] != "user":
        raise invalid("the last message must have role 'user'", f"messages[{len(out) - 1}].role")
    return tuple(out)


def _stop(body: dict) -> tuple[str, ...]:
    stop = body.get("stop")
    if stop is None:
        return ()
    if isinstance(stop, str):
        stop = [stop]
    if not isinstance(stop, list) or not all(isinstance(s, str) for s in stop):
        raise invalid("'stop' must be a string or a list of strings", "stop")
    if len(stop) > MAX_STOP:
        raise invalid(f"'stop' takes at most {MAX_STOP} strings", "stop")
    if any(not s for s in stop):
        raise invalid("'stop' strings must not be empty", "stop")
    return tuple(stop)


def parse_chat_request(body: Any, *, max_messages: int = 256) -> ChatRequest:
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise invalid("'model' is required and must be a non-empty string", "model")
    n = _int(body, "n", lo=1)
    if n not in (None, 1):
        raise invalid("only n=1 is supported", "n")
    for key in ("presence_penalty", "frequency_penalty"):
        if _number(body, key, 0.0, -2.0, 2.0) != 0.0:
            raise invalid(f"'{key}' is not supported (only 0)", key)
    for key in ("logprobs", "tools", "functions", "tool_choice", "logit_bias", "response_format"):
        if body.get(key) not in (None, False, {}, [], "none") and not (key == "response_format" and body[key] == {"type": "text"}):
            raise invalid(f"'{key}' is not supported by this server", key)
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise invalid("'stream' must be a boolean", "stream")
    stream_options = body.get("stream_options") or {}
    if not isinstance(stream_options, dict):
        raise invalid("'stream_options' must be an object", "stream_options")
    max_tokens = _int(body, "max_completion_tokens", lo=1)
    if max_tokens is None:
        max_tokens = _int(body, "max_tokens", lo=1)
    user = body.get("user")
    if user is not None and not isinstance(user, str):
        raise invalid("'user' must be a string", "user")
    seed = _int(body, "seed")
    if seed is not None and not (-(2**63) <= seed < 2**64):
        raise invalid("'seed' is out of range", "seed")
    return ChatRequest(
        model=model,
        messages=_messages(body, max_messages),
        temperature=_number(body, "temperature", 1.0, 0.0, 2.0),
        top_p=_number(body, "top_p", 1.0, 0.0, 1.0, lo_open=True),
        max_tokens=max_tokens,
        stop=_stop(body),
        seed=seed,
        stream=stream,
        include_usage=bool(stream_options.get("include_usage", False)),
        user=user,
    )


# ---------------------------------------------------------------- responses

def new_completion_id() -> str:
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


@dataclass
class Completion:
    id: str
    model: str
    created: int = field(default_factory=lambda: int(time.time()))

    def response(self, text: str, finish_reason: str, prompt_tokens: int, completion_tokens: int) -> dict:
        return {
            "id": self.id, "object": "chat.completion", "created": self.created, "model": self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish_reason, "logprobs": None}],
            "usage": usage(prompt_tokens, completion_tokens),
            "system_fingerprint": None,
        }

    def chunk(self, delta: dict, finish_reason: str | None = None) -> dict:
        return {
            "id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
            "system_fingerprint": None,
        }

    def usage_chunk(self, prompt_tokens: int, completion_tokens: int) -> dict:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [], "usage": usage(prompt_tokens, completion_tokens)}


def usage(prompt_tokens: int, completion_tokens: int) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}
