"""The OpenAI chat-completions API as pydantic models: the one source of its request and response shapes.

    body (decoded JSON) -> ChatCompletionRequest (validation; else a 400 APIError naming the field)
                        -> ChatRequest (what the pipeline uses: text contents, developer read as system,
                           defaults filled in)
    Completion -> ChatCompletion (JSON) or ChatCompletionChunk (each SSE event)

``gateway.api.openapi`` publishes the models' JSON Schema at ``GET /openapi.json``.

Fields, one policy: nothing a client asks for is silently dropped. A field is honoured (OpenAI's
sampling fields, and vLLM's extensions ``top_k``, ``min_p``, ``repetition_penalty``, ``min_tokens``,
``stop_token_ids``), or accepted and ignored because it cannot change the answer (``IGNORED``: ``store``,
``metadata``, ...), or rejected with a 400 naming it: a field we do not implement (``UNSUPPORTED``:
``functions``, ``function_call``, ``audio``, ``modalities``) or a field we do not know. ``n`` > 1,
``tools`` and ``response_format`` (``json_object``, ``json_schema``) are honoured. The sampling bounds are
``runtime.api``'s, the ones ``SamplingParams`` checks.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, WrapValidator, field_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from gateway.config.typed import describe, location
from runtime.api import (
    LOGIT_BIAS,
    MAX_LOGPROBS,
    MAX_TOKENS,
    MIN_P,
    MIN_TOKENS,
    PENALTY,
    REPETITION_PENALTY,
    TEMPERATURE,
    TOP_P,
)
from runtime.serving.errors import APIError, invalid
from runtime.structured.spec import TOOL_CALL_MARKER, StructuredSpec, error_field

MAX_STOP = 4
OPENAI_MAX_TEMPERATURE = 2.0  # OpenAI's API stops at 2; the runtime takes any finite temperature >= 0
UNSUPPORTED = ("functions", "function_call", "audio", "modalities")
NOT_ASKED = (None, False, {}, [], "none", ["text"])  # what an SDK sends for a feature it does not ask for
# Fields that cannot change the answer: accepted with any value, and ignored.
IGNORED = ("store", "metadata", "service_tier", "prompt_cache_key", "safety_identifier")
UNKNOWN_FIELD = (
    "unknown field: this server takes OpenAI's chat-completions fields and vLLM's top_k, min_p, "
    "repetition_penalty, min_tokens and stop_token_ids (README, API)"
)
MAX_LOGIT_BIAS = 1024  # entries of logit_bias
MAX_N = 8  # choices per request
MAX_TOOLS = 64
MAX_PROMPTS = 16  # prompts of one /v1/completions request
MAX_COMPLETION_LOGPROBS = 5  # OpenAI's limit for /v1/completions
# Request fields that a tier's sampling defaults fill in when a request leaves them out.
DEFAULTED = ("temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty")
MAX_STOP_TOKEN_IDS = 64


def one_error(message: str) -> WrapValidator:
    """One error at the field for a value that fits none of a union's shapes, instead of one per shape."""

    def wrap(value: Any, handler) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise PydanticCustomError("invalid", message) from None

    return WrapValidator(wrap)


# ---------------------------------------------------------------- request


class _Request(BaseModel):
    # strict: "9" is not a number, nor 1.5 an integer; JSON's integers still pass as floats
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


def _token_id(key: str) -> int:
    if not key.isdigit():
        raise PydanticCustomError("token_id", "keys must be token ids (digits), got '{key}'", {"key": key})
    return int(key)


class TextPart(_Request):
    type: Literal["text"]
    text: str


Content = Annotated[
    str | list[TextPart], one_error("must be a string or a list of text parts ({'type': 'text', 'text': ...})")
]
StopString = Annotated[str, Field(min_length=1)]
Stop = Annotated[
    StopString | Annotated[list[StopString], Field(max_length=MAX_STOP)],
    one_error(f"must be a non-empty string or a list of at most {MAX_STOP} of them"),
]


class FunctionCall(_Request):
    name: str = Field(min_length=1)
    arguments: str = Field(description="a JSON object, as text")


class ToolCall(_Request):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(_Request):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: Content | None = None  # None only for an assistant turn that called tools
    name: str | None = None
    tool_calls: list[ToolCall] | None = None  # an assistant turn's calls
    tool_call_id: str | None = None  # a tool turn: the call it answers

    @property
    def text(self) -> str:
        """What the model reads: the content, an assistant turn's calls in the format the tool grammar
        makes it write (``<tool_call>`` then the calls as JSON), a tool turn's result."""
        text = self.content if isinstance(self.content, str) else "".join(p.text for p in self.content or ())
        if self.tool_calls:
            calls = [
                {"name": c.function.name, "arguments": _json_or_text(c.function.arguments)} for c in self.tool_calls
            ]
            text = (text + "\n" if text else "") + TOOL_CALL_MARKER + json.dumps(calls, ensure_ascii=False)
        return text


def _json_or_text(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


class StreamOptions(_Request):
    include_usage: bool = False


@dataclass(frozen=True)
class ChatRequest:
    """A validated request as the pipeline reads it (built by ``ChatCompletionRequest.to_chat``)."""

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
    top_k: int = 0
    min_p: float = 0.0
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    logit_bias: tuple[tuple[int, float], ...] = ()
    min_tokens: int = 0
    stop_token_ids: tuple[int, ...] = ()
    logprobs: int | None = None  # None: not asked; else top_logprobs (0 when only the chosen token's)
    n: int = 1  # choices
    truncation: str | None = None  # None: the tier's; "auto": drop the oldest turns to fit; "disabled"
    prompt: str | tuple[int, ...] | None = None  # /v1/completions: the text (or token ids) to continue
    echo: bool = False  # /v1/completions: the answer starts with the prompt
    omitted: frozenset[str] = frozenset()  # DEFAULTED fields the client left out

    structured: StructuredSpec | None = None  # SamplingParams.structured: response_format / tools

    @property
    def needs(self) -> str:
        """The capability a tier needs to answer this request (``gateway.config.tiers.CAPABILITIES``)."""
        if self.prompt is not None:
            return "completion"
        if self.structured is not None:
            return "tools" if self.structured.tool_mode is not None else "json"
        return "chat"

    def with_defaults(self, defaults: dict[str, float]) -> ChatRequest:
        """The request with a tier's sampling defaults in the fields the client left out."""
        fill = {k: v for k, v in defaults.items() if k in self.omitted}
        if "top_k" in fill:
            fill["top_k"] = max(int(fill["top_k"]), 0)
        return dataclasses.replace(self, **fill, omitted=self.omitted - fill.keys()) if fill else self

    def answer_params(self) -> dict[str, Any]:
        """Every parameter that changes the answer (part of the cache scope); the ``sampling_fields``
        left at their default are left out, so a scope made before a field existed still matches."""
        params = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "seed": self.seed,
        }
        extra = self.sampling_fields()
        del extra["logprobs"]  # a request with logprobs bypasses the cache
        extra["min_tokens"] = self.min_tokens
        defaults = {"repetition_penalty": 1.0}
        for k, v in extra.items():
            if v != defaults.get(k, type(v)()):
                params[k] = [list(p) for p in v] if k == "logit_bias" else list(v) if isinstance(v, tuple) else v
        return params

    def sampling_fields(self) -> dict[str, Any]:
        """The ``SamplingParams`` fields this request sets beyond temperature, top_p, seed and min_tokens
        (which the fallback chain adjusts for tokens already streamed)."""
        return {
            "top_k": self.top_k,
            "min_p": self.min_p,
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
            "repetition_penalty": self.repetition_penalty,
            "logit_bias": self.logit_bias,
            "stop_token_ids": self.stop_token_ids,
            "logprobs": self.logprobs,
        }


class _SamplingRequest(_Request):
    """The fields chat and text completions share: sampling, stopping, streaming, the vLLM extensions."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    model: str = Field(min_length=1, description="a tier, the model a tier serves, or auto")
    temperature: float | None = Field(None, **TEMPERATURE.limits, le=OPENAI_MAX_TEMPERATURE, allow_inf_nan=False)
    top_p: float | None = Field(None, **TOP_P.limits, allow_inf_nan=False)
    max_tokens: int | None = Field(None, **MAX_TOKENS.limits)
    max_completion_tokens: int | None = Field(None, **MAX_TOKENS.limits, description="preferred to max_tokens")
    stop: Stop | None = None
    seed: int | None = Field(None, ge=-(2**63), le=2**64 - 1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None
    n: int | None = Field(None, ge=1, le=MAX_N, description="choices, sharing the prompt's KV blocks")
    presence_penalty: float | None = Field(None, **PENALTY.limits, allow_inf_nan=False)
    frequency_penalty: float | None = Field(None, **PENALTY.limits, allow_inf_nan=False)
    logit_bias: dict[str, Annotated[float, Field(**LOGIT_BIAS.limits, allow_inf_nan=False)]] | None = Field(
        None, max_length=MAX_LOGIT_BIAS, description="token id (as a string) -> bias added to its logit"
    )
    # vLLM's extensions
    top_k: int | None = Field(None, ge=-1, description="keep the k likeliest tokens; 0 or -1: off")
    min_p: float | None = Field(None, **MIN_P.limits, allow_inf_nan=False)
    repetition_penalty: float | None = Field(None, **REPETITION_PENALTY.limits, allow_inf_nan=False)
    min_tokens: int | None = Field(None, **MIN_TOKENS.limits)
    stop_token_ids: list[Annotated[int, Field(ge=0)]] | None = Field(None, max_length=MAX_STOP_TOKEN_IDS)
    truncation: Literal["auto", "disabled"] | None = Field(
        None, description="auto: drop the oldest turns (never the system prompt) until the prompt fits"
    )
    # Accepted and ignored: they cannot change the answer.
    store: SkipJsonSchema[Any] = None
    metadata: SkipJsonSchema[Any] = None
    service_tier: SkipJsonSchema[Any] = None
    prompt_cache_key: SkipJsonSchema[Any] = None
    safety_identifier: SkipJsonSchema[Any] = None

    @field_validator("logit_bias")
    @classmethod
    def _token_ids(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for key in value or {}:
            _token_id(key)
        return value

    @field_validator("min_tokens")
    @classmethod
    def _within_max_tokens(cls, value: int | None, info: ValidationInfo) -> int | None:
        limit = info.data.get("max_completion_tokens") or info.data.get("max_tokens")
        if value is not None and limit is not None and value > limit:
            raise PydanticCustomError("min_over_max", "must be <= max_tokens ({limit})", {"limit": limit})
        return value

    @field_validator("n", mode="before")
    @classmethod
    def _not_a_bool(cls, value: Any) -> Any:
        """``True == 1`` in Python, so ``int`` alone would take ``n: true``; JSON's true is not a number."""
        if isinstance(value, bool):
            raise PydanticCustomError("not_a_number", "must be a number, got {value}", {"value": str(value).lower()})
        return value

    @property
    def max_tokens_asked(self) -> int | None:
        return self.max_completion_tokens if self.max_completion_tokens is not None else self.max_tokens

    def _common(self, max_tokens: int | None, logprobs: int | None) -> dict[str, Any]:
        """``ChatRequest`` keyword arguments of the shared fields (``omitted``: those left out, which the
        tier's defaults fill in)."""
        omitted = frozenset(k for k in DEFAULTED if getattr(self, k, None) is None)
        return dict(
            model=self.model,
            temperature=1.0 if self.temperature is None else self.temperature,  # OpenAI's default
            top_p=1.0 if self.top_p is None else self.top_p,
            max_tokens=max_tokens,
            stop=(self.stop,) if isinstance(self.stop, str) else tuple(self.stop or ()),
            seed=self.seed,
            stream=self.stream,
            include_usage=self.stream_options is not None and self.stream_options.include_usage,
            user=self.user,
            top_k=max(self.top_k or 0, 0),
            min_p=self.min_p or 0.0,
            presence_penalty=self.presence_penalty or 0.0,
            frequency_penalty=self.frequency_penalty or 0.0,
            repetition_penalty=1.0 if self.repetition_penalty is None else self.repetition_penalty,
            logit_bias=tuple(sorted((_token_id(k), float(v)) for k, v in (self.logit_bias or {}).items())),
            min_tokens=self.min_tokens or 0,
            stop_token_ids=tuple(self.stop_token_ids or ()),
            logprobs=logprobs,
            n=self.n or 1,
            truncation=self.truncation,
            omitted=omitted,
        )


class ChatCompletionRequest(_SamplingRequest):
    """The last message must have role 'user'. Prompt plus max_tokens must fit the tier's context (else
    400 context_length_exceeded, or with ``truncation: auto`` the oldest turns go). Fields that would
    change the answer in ways this server does not implement (audio) are rejected, and so are fields it
    does not know; those in ``IGNORED`` cannot change the answer and are accepted."""

    messages: list[Message] = Field(min_length=1)
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=MAX_LOGPROBS, description="with logprobs: true")
    # Grammar-constrained answers (runtime.structured): checked by StructuredSpec.from_openai
    response_format: dict[str, Any] | None = Field(None, description="text, json_object or json_schema")
    tools: list[dict[str, Any]] | None = Field(None, max_length=MAX_TOOLS, description="function tools")
    tool_choice: str | dict[str, Any] | None = Field(None, description="none, auto, required or a function")
    parallel_tool_calls: bool | None = None
    # Not in the schema: accepted only as an SDK sends them when the feature is not asked for.
    functions: SkipJsonSchema[Any] = None
    function_call: SkipJsonSchema[Any] = None
    audio: SkipJsonSchema[Any] = None
    modalities: SkipJsonSchema[Any] = None

    @field_validator("messages", mode="before")
    @classmethod
    def _within_limit(cls, value: Any, info: ValidationInfo) -> Any:
        """Counted before the messages are validated: a body of 10,000 messages is refused cheaply."""
        limit = (info.context or {}).get("max_messages")
        if limit is not None and isinstance(value, list) and len(value) > limit:
            raise PydanticCustomError(
                "too_many_messages", "has {n} messages; the limit is {limit}", {"n": len(value), "limit": limit}
            )
        return value

    @field_validator("messages")
    @classmethod
    def _last_from_user(cls, value: list[Message]) -> list[Message]:
        if value[-1].role not in ("user", "tool"):
            raise PydanticCustomError("last_not_user", "the last message must have role 'user' (or 'tool')")
        for m in value:
            if m.content is None and not (m.role == "assistant" and m.tool_calls):
                raise PydanticCustomError("no_content", "content may be null only on an assistant turn with tool_calls")
        return value

    @field_validator("top_logprobs")
    @classmethod
    def _with_logprobs(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and not info.data.get("logprobs"):
            raise PydanticCustomError("needs_logprobs", "needs logprobs: true")
        return value

    @field_validator(*UNSUPPORTED)
    @classmethod
    def _not_asked(cls, value: Any, info: ValidationInfo) -> Any:
        if value in NOT_ASKED:
            return value
        raise PydanticCustomError("unsupported", "not supported by this server")

    def structured(self) -> StructuredSpec | None:
        """``SamplingParams.structured``: the spec of the response_format / tools parts, or None when the
        answer is free text; a bad schema or tool is a 400 naming its field. Parsed once, here: the schemas
        keep their key order (the grammar emits properties in the order the schema lists them)."""
        parts = {
            k: v
            for k, v in (
                ("response_format", self.response_format),
                ("tools", self.tools),
                ("tool_choice", self.tool_choice),
                ("parallel_tool_calls", self.parallel_tool_calls),
            )
            if v is not None
        }
        if not parts:
            return None
        try:
            return StructuredSpec.from_openai(**parts)
        except ValueError as exc:
            raise invalid(str(exc), error_field(exc)) from None

    def to_chat(self) -> ChatRequest:
        structured = self.structured()
        messages = tuple(
            {"role": "system" if m.role == "developer" else m.role, "content": m.text} for m in self.messages
        )
        if structured is not None:
            messages = with_instructions(messages, structured, self.tools)
        return ChatRequest(
            messages=messages,
            structured=structured,
            **self._common(self.max_tokens_asked, (self.top_logprobs or 0) if self.logprobs else None),
        )


PromptIds = Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=1)]


class CompletionRequest(_SamplingRequest):
    """``POST /v1/completions``: text continuation, for any tier (a pretrained model too). ``prompt`` is a
    string, a list of strings (a choice each), token ids, or a list of token-id lists."""

    prompt: Annotated[
        str
        | Annotated[list[str], Field(min_length=1, max_length=MAX_PROMPTS)]
        | PromptIds
        | Annotated[list[PromptIds], Field(min_length=1, max_length=MAX_PROMPTS)],
        one_error(f"must be a string, a list of at most {MAX_PROMPTS} strings, token ids or lists of token ids"),
    ]
    echo: bool = False
    logprobs: int | None = Field(None, ge=0, le=MAX_COMPLETION_LOGPROBS, description="top tokens per position")
    suffix: SkipJsonSchema[Any] = None
    best_of: int | None = Field(None, ge=1, le=MAX_N, description="only best_of == n is supported")

    @field_validator("suffix")
    @classmethod
    def _no_suffix(cls, value: Any) -> Any:
        if value in (None, ""):
            return value
        raise PydanticCustomError("unsupported", "not supported by this server (no fill-in-the-middle)")

    @field_validator("best_of")
    @classmethod
    def _best_of_is_n(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and value != (info.data.get("n") or 1):
            raise PydanticCustomError("unsupported", "only best_of == n is supported")
        return value

    def to_chats(self) -> list[ChatRequest]:
        """One ``ChatRequest`` per prompt (its ``prompt`` set; ``messages`` holds it as one user turn, for
        the router)."""
        p = self.prompt
        prompts = [p] if isinstance(p, str) or (p and isinstance(p[0], int)) else list(p)
        out = []
        for prompt in prompts:
            text = prompt if isinstance(prompt, str) else ""
            out.append(
                ChatRequest(
                    messages=({"role": "user", "content": text},),
                    prompt=prompt if isinstance(prompt, str) else tuple(prompt),
                    echo=self.echo,
                    **self._common(16 if self.max_tokens_asked is None else self.max_tokens_asked, self.logprobs),
                )
            )
        return out


def with_instructions(messages: tuple[dict, ...], spec, tools: list[dict] | None = None) -> tuple[dict, ...]:
    """The messages with a system note telling the model the answer's shape (the grammar enforces it; a
    small model answers better knowing it): the JSON schema, or the tools and how to call them."""
    if spec.tool_mode is not None:
        described = {
            (t.get("function") or {}).get("name"): (t.get("function") or {}).get("description") for t in tools or ()
        }
        tools = [
            {"name": t.name, "description": described.get(t.name) or "", "parameters": json.loads(t.parameters)}
            for t in spec.tools
        ]
        how = {
            "auto": f"To call tools, write {TOOL_CALL_MARKER} then a JSON list of calls; otherwise answer in text.",
            "required": "Answer with a JSON list of calls.",
            "function": f"Answer with one call of {spec.tools[0].name if spec.tools else 'the function'}.",
        }[spec.tool_mode]
        note = (
            "You can call these functions: "
            + json.dumps(tools, ensure_ascii=False)
            + ' A call is {"name": <function name>, "arguments": <its arguments as a JSON object>}. '
            + how
        )
    elif spec.format == "json_schema":
        note = "Answer with a JSON object that matches this schema: " + spec.schema
    else:
        note = "Answer with a JSON object."
    if messages and messages[0]["role"] == "system":
        return ({"role": "system", "content": messages[0]["content"] + "\n\n" + note}, *messages[1:])
    return ({"role": "system", "content": note}, *messages)


def request_error(exc: ValidationError) -> APIError:
    """A 400 naming the first bad field as ``param``; the message lists every problem found."""
    errors = exc.errors(include_url=False)
    problems = []
    for error in errors:
        where, what = location(error), describe(error, mapping="a JSON object")
        if error["type"] == "extra_forbidden":
            what = UNKNOWN_FIELD
        problems.append(f"{where}: {what}" if where else f"the request body {what}")
    return invalid("; ".join(problems), location(errors[0]) or None)


def parse_chat_request(body: Any, *, max_messages: int = 256) -> ChatRequest:
    try:
        request = ChatCompletionRequest.model_validate(body, context={"max_messages": max_messages})
    except ValidationError as exc:
        raise request_error(exc) from None
    return request.to_chat()


def parse_completion_request(body: Any) -> list[ChatRequest]:
    try:
        request = CompletionRequest.model_validate(body)
    except ValidationError as exc:
        raise request_error(exc) from None
    return request.to_chats()


# ---------------------------------------------------------------- responses


class _Response(BaseModel):
    model_config = ConfigDict(frozen=True)


def _absent(value: Any) -> bool:
    return value is None


class PromptTokensDetails(_Response):
    cached_tokens: int = Field(0, description="prompt tokens found in the serving engine's prefix cache")


class Usage(_Response):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails | None = Field(None, exclude_if=_absent)
    truncated_prompt_tokens: int | None = Field(
        None, exclude_if=_absent, description="truncation: auto: prompt tokens of the oldest turns left out"
    )
    cost_saved_usd: float | None = Field(
        None, exclude_if=_absent, description="a semantic-cache hit: what the answer would have cost"
    )

    @classmethod
    def of(cls, prompt_tokens: int, completion_tokens: int, extras: dict | None = None) -> Usage:
        """``extras``: ``cached_tokens``, ``truncated_prompt_tokens``, ``cost_saved_usd`` (each optional)."""
        extras = dict(extras or {})
        cached = extras.pop("cached_tokens", None)
        return cls(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
            prompt_tokens_details=None if cached is None else PromptTokensDetails(cached_tokens=cached),
            **extras,
        )


class AssistantMessage(_Response):
    role: Literal["assistant"] = "assistant"
    content: str | None
    tool_calls: list[dict] | None = Field(None, exclude_if=_absent)


def read_answer(text: str, spec, finish_reason: str | None) -> tuple[str | None, list[dict] | None, str | None]:
    """(content, tool_calls, finish_reason) of a finished answer: a structured one's tool calls parsed out
    (finish_reason ``tool_calls``); a call cut short by max_tokens stays text, ``length``."""
    if spec is None or spec.tool_mode is None:
        return text, None, finish_reason
    from runtime.structured import parse_output

    try:
        content, calls = parse_output(text, spec)
    except ValueError:
        return text, None, finish_reason
    return content, calls, ("tool_calls" if calls else finish_reason)


# The engine's finish reasons: "stop" (end of sequence or a stop string) or "length" (max_tokens).
FINISH_REASON = (
    "stop (the answer ended, or met a stop string), length (max_tokens reached) or tool_calls (the answer is calls)"
)


class TopLogprob(_Response):
    token: str
    logprob: float
    bytes: list[int] | None


class TokenLogprob(TopLogprob):
    top_logprobs: list[TopLogprob]


class ChoiceLogprobs(_Response):
    """``logprobs: true``: one entry per token of the content, the model's own log-probabilities."""

    content: list[TokenLogprob] | None


class Choice(_Response):
    index: int = 0
    message: AssistantMessage
    finish_reason: str = Field(description=FINISH_REASON)
    logprobs: ChoiceLogprobs | None = None


class _Completion(_Response):
    """The fields an answer and each event of a streamed one share, in OpenAI's order (a subclass that
    narrows ``object``, ``choices`` or ``usage`` keeps the field where it stands)."""

    id: str
    object: str
    created: int
    model: str
    choices: list
    usage: Usage | None
    system_fingerprint: None = None


class ChatCompletion(_Completion):
    object: Literal["chat.completion"] = "chat.completion"
    choices: list[Choice]
    usage: Usage


class Delta(_Response):
    """What an event adds: the role first, then pieces of the content; absent keys are left out."""

    role: Literal["assistant"] | None = Field(None, exclude_if=_absent)
    content: str | None = Field(None, exclude_if=_absent)
    tool_calls: list[dict] | None = Field(None, exclude_if=_absent, description="with their index, whole")


class ChunkChoice(_Response):
    index: int = 0
    delta: Delta
    finish_reason: str | None = Field(None, description="on the last content event: " + FINISH_REASON)
    logprobs: ChoiceLogprobs | None = None


class ChatCompletionChunk(_Completion):
    """One server-sent event of a streamed answer (``data: <chunk>``; the stream ends with ``data: [DONE]``).
    With ``stream_options.include_usage``, a last chunk has no choices and the usage."""

    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    choices: list[ChunkChoice]
    usage: Usage | None = Field(None, exclude_if=_absent)


class CompletionLogprobs(_Response):
    """``/v1/completions`` with ``logprobs: k``: per generated token, its text, log-probability, the k
    likeliest tokens and their log-probabilities, and where its text starts in the choice's text."""

    tokens: list[str]
    token_logprobs: list[float]
    top_logprobs: list[dict[str, float]]
    text_offset: list[int]

    @classmethod
    def of(cls, entries: list[dict], offset: int = 0) -> CompletionLogprobs:
        """From the chat-format entries the engine gives (``RequestOutput.logprobs``)."""
        offsets = []
        for e in entries:
            offsets.append(offset)
            offset += len(e["token"])
        return cls(
            tokens=[e["token"] for e in entries],
            token_logprobs=[e["logprob"] for e in entries],
            top_logprobs=[{t["token"]: t["logprob"] for t in e["top_logprobs"]} for e in entries],
            text_offset=offsets,
        )


class TextChoice(_Response):
    text: str
    index: int = 0
    logprobs: CompletionLogprobs | None = None
    finish_reason: str | None = Field(None, description=FINISH_REASON)


class TextCompletion(_Completion):
    """``POST /v1/completions``: the whole answer, or (streamed) each event, with the same object name."""

    object: Literal["text_completion"] = "text_completion"
    choices: list[TextChoice]
    usage: Usage | None = Field(None, exclude_if=_absent)


class ModelCard(_Response):
    """One name a request may use as ``model``: ``auto``, a tier, or the model a tier serves."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str
    tier: str | None = Field(None, description="the tier this name routes to (None for auto)")
    context_length: int | None = Field(None, description="tokens, prompt + answer (None while unknown)")
    capabilities: list[str] = Field(default_factory=list, description="chat, completion, json, tools")
    sampling_defaults: dict[str, float] = Field(
        default_factory=dict, description="used when a request leaves the field out"
    )
    price: dict[str, float] | None = Field(None, description="USD per million tokens, input and output")


class ModelList(_Response):
    """``GET /v1/models``: ``auto``, every tier and every model a tier serves."""

    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(_Response):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorResponse(_Response):
    """The body of every error (``runtime.serving.errors.APIError.body``)."""

    error: ErrorDetail


def new_completion_id(prefix: str = "chatcmpl") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:24]}"


@dataclass
class Completion:
    """One answer's identity, and its JSON or SSE shapes."""

    id: str
    model: str
    created: int = field(default_factory=lambda: int(time.time()))

    def response(
        self,
        text: str,
        finish_reason: str,
        prompt_tokens: int,
        completion_tokens: int,
        logprobs: list[dict] | None = None,
        extras: dict | None = None,
        spec=None,
    ) -> dict:
        """``spec``: a structured request's ``StructuredSpec`` (its tool calls are read out of the text)."""
        lp = None if logprobs is None else ChoiceLogprobs(content=logprobs)
        content, calls, finish_reason = read_answer(text, spec, finish_reason)
        message = AssistantMessage(content=content, tool_calls=calls)
        return ChatCompletion(
            id=self.id,
            created=self.created,
            model=self.model,
            choices=[Choice(message=message, finish_reason=finish_reason, logprobs=lp)],
            usage=Usage.of(prompt_tokens, completion_tokens, extras),
        ).model_dump()

    def chunk(
        self, delta: dict, finish_reason: str | None = None, logprobs: list[dict] | None = None, index: int = 0
    ) -> dict:
        lp = None if logprobs is None else ChoiceLogprobs(content=logprobs)
        return ChatCompletionChunk(
            id=self.id,
            created=self.created,
            model=self.model,
            choices=[ChunkChoice(index=index, delta=Delta(**delta), finish_reason=finish_reason, logprobs=lp)],
        ).model_dump()

    def usage_chunk(self, prompt_tokens: int, completion_tokens: int, extras: dict | None = None) -> dict:
        return ChatCompletionChunk(
            id=self.id,
            created=self.created,
            model=self.model,
            choices=[],
            usage=Usage.of(prompt_tokens, completion_tokens, extras),
        ).model_dump()
