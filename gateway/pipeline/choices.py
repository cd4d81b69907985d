"""The choices of one answer: chat with ``n`` = 1 is one run, ``n`` > 1 is n runs, ``POST /v1/completions``
a run per prompt and per ``n``; a cache hit is one run replayed from the stored answer.

In: the parsed requests (one ``ChatRequest`` per prompt) and where each run's events come from (a
``FallbackChain``, or the stored answer). Out: ``(run, event)`` pairs as they come, each run's state
(``Run``: its text, its log-probabilities not yet sent, the tier answering, its ``Summary`` once it
finished) brought up to date before its event is handed on. Every choice has its ``index`` (prompt ``i``,
choice ``j``: ``i * n + j``, as OpenAI numbers them). Runs on the event loop; the runs go concurrently.

    prompt i, choice 0 ............ starts at once
    prompt i, choices 1..n-1 ...... start once choice 0 has its first token: its prompt's KV blocks are
                                    then in the engine's prefix cache, so they share them (computed once)
    a seeded request .............. choice j samples with seed + j: reproducible, and not n copies

One choice failing on every tier fails the request (its ``ChainFailed``, raised to the writer).
``Shape`` is the body and the events of one API: chat (``chat.completion``) or text (``text_completion``).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from gateway.api.schemas import (
    AssistantMessage,
    ChatCompletion,
    ChatCompletionChunk,
    ChatRequest,
    Choice,
    ChoiceLogprobs,
    Completion,
    CompletionLogprobs,
    TextChoice,
    TextCompletion,
    Usage,
    read_answer,
)
from gateway.pipeline.fallback import Abandoned, ChainFailed, Event, Finished, Summary, Text


@dataclass
class Run:
    """One choice as its events arrive: the text the client gets, what is held, who is answering."""

    index: int
    chat: ChatRequest
    # a stream continues an abandoned tier's text (the client has it); a whole answer, or a tool call
    # (sent whole at the end: a fallback tier may start it over), starts over
    continue_partial: bool = False
    prefix: str = ""  # echo: the prompt, before the answer
    text: list[str] = field(default_factory=list)
    logprobs: list[dict] | None = None  # entries not yet handed to the client (None: not asked for)
    tier: str | None = None  # the tier generating now
    model: str | None = None
    replica: str | None = None
    fallbacks: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, cause)
    kept: list[tuple[str, int, int]] = field(default_factory=list)  # abandoned tiers' text the client keeps
    summary: Summary | None = None  # once the chain finished (or failed: ``ChainFailed.summary``)
    started: float | None = None  # when its first text came (perf_counter)
    sent_logprobs: int = 0  # characters of text whose logprobs went out (for text_offset)

    def apply(self, event: Event) -> None:
        if isinstance(event, Text):
            self.tier, self.model, self.replica = event.tier, event.model, event.replica or self.replica
            if self.started is None:
                self.started = time.perf_counter()
            if event.logprobs and self.logprobs is not None:
                self.logprobs.extend(event.logprobs)
            if event.text:
                self.text.append(event.text)
        elif isinstance(event, Abandoned):
            self.fallbacks.append((event.tier, event.to, event.cause))
            if event.kept is not None:
                self.kept.append(event.kept)
            if event.streamed and not self.continue_partial:  # its partial text is not part of this answer
                self.text.clear()
                self.take_logprobs()
        elif isinstance(event, Finished):
            self.summary = event.summary

    def take_logprobs(self) -> list[dict] | None:
        """The log-probability entries that arrived since the last call (None when not asked for)."""
        if self.logprobs is None:
            return None
        taken, self.logprobs = self.logprobs, []
        return taken

    @property
    def finished(self) -> bool:
        return self.summary is not None and self.summary.served_by is not None

    @property
    def served_by(self) -> str | None:
        return self.summary.served_by if self.finished else None

    @property
    def charges(self) -> tuple[tuple[str, int, int], ...]:
        """What to charge, tier by tier: the summary's, or (a run cut short) the kept text's."""
        return self.summary.charges if self.summary is not None else tuple(self.kept)

    @property
    def completion_tokens(self) -> int:
        return self.summary.completion_tokens if self.summary is not None else sum(c for _, _, c in self.kept)

    def served_headers(self, cost: float | None = None) -> dict[str, str]:
        """Who answered and how: ``x-served-by`` (and its replica), ``x-fallback``, ``x-cost-usd``."""
        h = {"x-served-by": self.served_by or self.tier or ""}
        if self.replica:
            h["x-served-by-replica"] = self.replica
        if self.fallbacks:
            h["x-fallback"] = ", ".join(f"{a}->{b} ({c})" for a, b, c in self.fallbacks)
        if cost is not None:
            h["x-cost-usd"] = f"{cost:.9f}"
        return h


def runs_of(chats: list[ChatRequest], *, text_api: bool) -> list[Run]:
    """A ``Run`` per prompt and choice, seeds spread (choice j: seed + j)."""
    out = []
    for i, chat in enumerate(chats):
        for j in range(chat.n):
            seeded = chat if chat.seed is None else dataclasses.replace(chat, seed=chat.seed + j)
            prefix = chat.prompt if text_api and chat.echo and isinstance(chat.prompt, str) else ""
            logprobs = [] if chat.logprobs is not None else None
            partial = chat.stream and chat.needs != "tools"
            out.append(Run(i * chat.n + j, seeded, partial, prefix, logprobs=logprobs))
    return out


Source = Callable[[Run], AsyncIterator[Event]]  # one run's events: its fallback chain, or a stored answer


class Choices:
    def __init__(self, runs: list[Run], source: Source):
        self.runs, self.source = runs, source

    async def events(self) -> AsyncIterator[tuple[Run, Event]]:
        """Every run's events as they come, each applied to its run first. Raises the first run's
        ``ChainFailed`` (its summary kept on the run) / ``APIError``; leaving early cancels every run
        (aborting their generations)."""
        queue: asyncio.Queue = asyncio.Queue()
        first_token: dict[int, asyncio.Event] = {}  # by prompt: its choice 0 has begun (blocks cached)
        n = self.runs[0].chat.n

        async def one(run: Run) -> None:
            group = first_token.setdefault(run.index // n, asyncio.Event())
            if run.index % n:
                await group.wait()
            try:
                async with contextlib.aclosing(self.source(run)) as it:
                    async for event in it:
                        group.set()
                        await queue.put((run, event))
                await queue.put((run, StopAsyncIteration()))
            except ChainFailed as exc:
                run.summary = exc.summary
                await queue.put((run, exc))
            except Exception as exc:  # handed to the consumer, which raises it
                await queue.put((run, exc))
            finally:
                group.set()

        tasks = [asyncio.create_task(one(r)) for r in self.runs]
        try:
            left = len(tasks)
            while left:
                run, item = await queue.get()
                if isinstance(item, StopAsyncIteration):
                    left -= 1
                elif isinstance(item, BaseException):
                    raise item
                else:
                    run.apply(item)
                    yield run, item
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def usage(self, extras: dict | None = None) -> Usage:
        """Each prompt counted once (its choice 0's), every choice's completion tokens; ``extras`` added
        (a hit's ``cost_saved_usd``)."""
        n = self.runs[0].chat.n
        firsts = [r.summary or Summary() for r in self.runs if r.index % n == 0]
        more = {"cached_tokens": sum(s.cached_tokens for s in firsts)}
        if dropped := sum(s.dropped_tokens for s in firsts):
            more["truncated_prompt_tokens"] = dropped
        prompt = sum(s.prompt_tokens for s in firsts)
        return Usage.of(prompt, sum(r.completion_tokens for r in self.runs), {**more, **(extras or {})})


@dataclass
class Shape:
    """The body and events of one API: chat (``chat.completion``) or text (``text_completion``)."""

    text_api: bool
    id: str
    model: str
    created: int = field(default_factory=lambda: int(time.time()))

    def choice(self, run: Run, text: str, finish_reason: str | None, logprobs: list[dict] | None):
        if self.text_api:
            lp = None if logprobs is None else CompletionLogprobs.of(logprobs, len(run.prefix) + run.sent_logprobs)
            return TextChoice(text=text, index=run.index, logprobs=lp, finish_reason=finish_reason)
        lp = None if logprobs is None else ChoiceLogprobs(content=logprobs)
        content, calls, finish_reason = read_answer(text, run.chat.structured, finish_reason)
        return Choice(
            index=run.index,
            message=AssistantMessage(content=content, tool_calls=calls),
            finish_reason=finish_reason or "stop",
            logprobs=lp,
        )

    def body(self, choices: list, usage: Usage) -> dict:
        cls = TextCompletion if self.text_api else ChatCompletion
        return cls(id=self.id, created=self.created, model=self.model, choices=choices, usage=usage).model_dump()

    def event(self, run: Run, text: str | None, finish_reason: str | None = None, logprobs=None) -> dict:
        """One streamed event of a choice (chat: a delta; ``text`` None on the role event)."""
        if self.text_api:
            return self.body([self.choice(run, text or "", finish_reason, logprobs)], None)
        delta = {"role": "assistant", "content": ""} if text is None and finish_reason is None else {}
        if text:
            delta = {"content": text}
        return self.chunk(run, delta, finish_reason, logprobs)

    def chunk(self, run: Run, delta: dict, finish_reason: str | None = None, logprobs=None) -> dict:
        return Completion(self.id, self.model, self.created).chunk(delta, finish_reason, logprobs, index=run.index)

    def usage_event(self, usage: Usage) -> dict:
        cls = TextCompletion if self.text_api else ChatCompletionChunk
        return cls(id=self.id, created=self.created, model=self.model, choices=[], usage=usage).model_dump()
