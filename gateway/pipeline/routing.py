"""Which tier answers a request, and why: cheap, explainable rules over the request itself.

In: a parsed ``ChatRequest``, the caller's ``KeyPolicy`` and the fraction of its budget left.
Out: a ``Decision`` (the tier, the fallback chain after it, a one-line reason for the
``x-route-reason`` header), or an ``APIError`` (404 unknown model, 403 a tier the key may not use).

``model`` names a tier (or the model a tier serves): that tier, no questions asked (its reason says so
when the tier's model cannot do what the request needs). ``model: "auto"`` escalates to
``router.escalate_to`` when the request shows code or maths markers, a long prompt or a deep
conversation, and otherwise takes ``router.default``; a key that is nearly out of budget, or limited to
some tiers, is held to what it may afford and use; and ``auto`` only ever picks, and falls back to,
tiers that can do the request (``TierConfig.can``: a pretrained model never gets a chat request; 400
``model_not_capable`` when no tier the key may use can). No model runs in the router: it costs
microseconds, and its reason names the rule that fired.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gateway.api.schemas import ChatRequest
from gateway.config.tiers import KeyPolicy, TiersSpec
from runtime.serving.errors import APIError

AUTO = "auto"

MARKER_SCAN_CHARS = 16384  # markers are looked for in the first this many characters (longer: "long prompt")


class _Then:
    """``first`` then ``then`` somewhere after it: what ``first.+then`` means, in linear time (that regex
    rescans the rest of the text from every occurrence of ``first``: O(n^2) on "SELECT " * 10000)."""

    def __init__(self, first: re.Pattern, then: re.Pattern):
        self.first, self.then = first, then

    def search(self, text: str):
        m = self.first.search(text)
        return m and self.then.search(text, m.end())


# Each marker is (label shown in the reason, pattern). Every pattern must run in linear time on any
# text (the router runs on the event loop before the request is known to fit a context): a number's
# match may only start where the number starts, hence the lookbehind. Cheap regexes, not a classifier: the point is
# that an operator can read why a request went where it went, and tune it.
CODE_MARKERS = (
    ("```", re.compile(r"```")),
    ("def/class", re.compile(r"\b(def|class)\s+\w+\s*[(:]")),
    ("function", re.compile(r"\bfunction\s*\w*\s*\(|=>\s*[{(]")),
    ("import", re.compile(r"^[ \t]*(import|from)\s+\w+|#include\s*<", re.M)),  # not ^\s*: across lines, O(n^2)
    ("sql", _Then(re.compile(r"\bSELECT\b", re.I), re.compile(r"\bFROM\b", re.I))),
    (
        "code words",
        re.compile(
            r"\b(python|javascript|typescript|rust|golang|java|c\+\+|regex|compile[rd]?|"
            r"stack ?trace|segfault|traceback|refactor|debug)\b",
            re.I,
        ),
    ),
)
MATH_MARKERS = (
    ("arithmetic", re.compile(r"(?<!\d)\d+(\.\d+)?\s*[-+*/^×÷=]\s*\d")),
    ("latex", re.compile(r"\\(frac|sum|int|sqrt|cdot)|\$[^$\n]+\$")),
    ("math symbols", re.compile(r"[∑∫√≤≥≠∞π]")),
    (
        "math words",
        re.compile(
            r"\b(solve|equation|integral|derivative|theorem|prove|proof|probability|"
            r"factorial|matrix|eigen\w*|polynomial|logarithm)\b",
            re.I,
        ),
    ),
)


@dataclass(frozen=True)
class Features:
    chars: int  # characters of all message contents
    user_turns: int
    code: tuple[str, ...]  # labels of the code markers found
    math: tuple[str, ...]

    @classmethod
    def of(cls, chat: ChatRequest) -> Features:
        text = "\n".join(m["content"] for m in chat.messages)
        last_user = next((m["content"] for m in reversed(chat.messages) if m["role"] == "user"), "")
        head, last_head = text[:MARKER_SCAN_CHARS], last_user[:MARKER_SCAN_CHARS]
        return cls(
            chars=len(text),
            user_turns=sum(m["role"] == "user" for m in chat.messages),
            code=tuple(label for label, rx in CODE_MARKERS if rx.search(head)),
            math=tuple(label for label, rx in MATH_MARKERS if rx.search(last_head)),
        )


@dataclass(frozen=True)
class Decision:
    tier: str
    chain: tuple[str, ...]  # tier first, then the fallbacks the caller may use
    reason: str


class Router:
    def __init__(self, spec: TiersSpec):
        self.spec = spec
        self._by_model = {}
        self._capable: dict[str, set[str]] = {}
        for t in spec.tiers:  # a model name picks the first tier that serves it
            self._by_model.setdefault(t.model, t.name)

    @property
    def public_names(self) -> list[str]:
        return [AUTO, *self.spec.names]

    def resolve(self, model: str) -> str | None:
        if model in self.spec.names:
            return model
        return self._by_model.get(model)

    def capable(self, need: str) -> set[str]:
        """The tiers that can do ``need`` (a capability: chat, completion, json, tools); fixed with the spec,
        so worked out once, not per request."""
        if need not in self._capable:
            self._capable[need] = {t.name for t in self.spec.tiers if need in t.can}
        return self._capable[need]

    def route(self, chat: ChatRequest, policy: KeyPolicy, budget_left: float | None = None) -> Decision:
        allowed = set(policy.tiers) if policy.tiers is not None else set(self.spec.names)
        capable = self.capable(chat.needs)
        if chat.model == AUTO:
            if not capable & allowed:
                raise APIError(
                    400,
                    f"no tier this key may use can do {chat.needs} (tiers: "
                    + ", ".join(f"{t.name}: {'/'.join(sorted(t.can))}" for t in self.spec.tiers if t.name in allowed)
                    + "); name one as model to use it anyway",
                    param="model",
                    code="model_not_capable",
                )
            tier, reason = self._auto(chat, allowed, budget_left)
            if tier not in capable:
                to = next((t for t in self.spec.chain(tier) if t in allowed and t in capable), None)
                to = to or next(t for t in self.spec.names if t in allowed and t in capable)
                reason += f"; {tier} cannot do {chat.needs}: {to}"
                tier = to
            chain = tuple(t for t in self.spec.chain(tier) if t in allowed and t in capable)
            return Decision(tier, chain, reason)
        else:
            tier = self.resolve(chat.model)
            if tier is None:
                raise APIError(
                    404,
                    f"the model {chat.model!r} does not exist; available: {', '.join(self.public_names)}",
                    param="model",
                    code="model_not_found",
                )
            if tier not in allowed:
                raise APIError(
                    403,
                    f"this API key may not use the {tier!r} tier; allowed: {', '.join(sorted(allowed))} (or 'auto')",
                    type="permission_error",
                    param="model",
                    code="tier_not_allowed",
                )
            reason = f"explicit model {chat.model!r}"
            if tier not in capable:
                reason += f" (its model {self.spec.tier(tier).model} is not made for {chat.needs})"
        chain = tuple(t for t in self.spec.chain(tier) if t in allowed)
        return Decision(tier, chain, reason)

    def _auto(self, chat: ChatRequest, allowed: set[str], budget_left: float | None) -> tuple[str, str]:
        cfg = self.spec.router
        f = Features.of(chat)
        why = []
        if cfg.code and f.code:
            why.append(f"code markers ({', '.join(f.code)})")
        if cfg.math and f.math:
            why.append(f"maths markers ({', '.join(f.math)})")
        if f.chars > cfg.long_prompt_chars:
            why.append(f"long prompt ({f.chars} chars > {cfg.long_prompt_chars})")
        if f.user_turns >= cfg.deep_conversation_turns:
            why.append(f"deep conversation ({f.user_turns} user turns >= {cfg.deep_conversation_turns})")
        if why and cfg.escalate_to is not None:
            tier, reason = cfg.escalate_to, "; ".join(why)
        else:
            tier, reason = cfg.default, "short general request" if not why else "; ".join(why) + " (no escalation tier)"
        if budget_left is not None and budget_left < cfg.budget_reserve and tier != cfg.default:
            tier = cfg.default
            reason += f"; budget {budget_left:.0%} left < {cfg.budget_reserve:.0%}: held to {cfg.default}"
        if tier not in allowed:
            # the first allowed tier down the chain, else any allowed one
            fallback = next((t for t in self.spec.chain(tier) if t in allowed), None)
            fallback = fallback or next(t for t in self.spec.names if t in allowed)
            reason += f"; key limited to {', '.join(sorted(allowed))}: {fallback}"
            tier = fallback
        return tier, reason
