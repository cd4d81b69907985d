"""Several answers at once: ``n`` choices of a chat completion, and ``POST /v1/completions`` (a choice per
prompt and per ``n``).

In: the parsed requests (one ``ChatRequest`` per prompt), the router's ``Decision``, a ``FallbackChain``.
Out: the OpenAI body (``chat.completion`` or ``text_completion``) or its server-sent events, every
choice with its ``index`` (prompt ``i``, choice ``j``: ``i * n + j``, as OpenAI numbers them). Runs on the
event loop; each choice is its own fallback chain, run concurrently.

    prompt i, choice 0 ............ starts at once
    prompt i, choices 1..n-1 ...... start once choice 0 has its first token: its prompt's KV blocks are
                                    then in the engine's prefix cache, so they share them (computed once)
    a seeded request .............. choice j samples with seed + j: reproducible, and not n copies

These requests bypass the semantic cache (``x-cache: bypass``): a stored answer is one sample, not n,
and text continuation is not a question. Every choice is charged; the request is counted once. One
choice failing on every tier fails the request (503, or an error event after the first one).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from aiohttp import web

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
from gateway.pipeline.fallback import Answer, ChainFailed, FallbackChain
from gateway.pipeline.routing import Decision
from gateway.pipeline.sse import DONE, sse


@dataclass
class Run:
    """One choice: its request, its answer, its text so far."""

    index: int
    chat: ChatRequest
    answer: Answer
    text: list[str] = field(default_factory=list)
    prefix: str = ""  # echo: the prompt, before the answer
    sent_logprobs: int = 0  # characters of text whose logprobs went out (for text_offset)


def runs_of(chats: list[ChatRequest]) -> list[Run]:
    """A ``Run`` per prompt and choice, seeds spread (choice j: seed + j)."""
    out = []
    for i, chat in enumerate(chats):
        for j in range(chat.n):
            seeded = chat if chat.seed is None else dataclasses.replace(chat, seed=chat.seed + j)
            prefix = chat.prompt if chat.echo and isinstance(chat.prompt, str) else ""
            out.append(
                Run(i * chat.n + j, seeded, Answer(logprobs=[] if chat.logprobs is not None else None), [], prefix)
            )
    return out


class Choices:
    def __init__(self, chain: FallbackChain, decision: Decision, t0: float, runs: list[Run], *, stream: bool):
        self.chain, self.decision, self.t0, self.runs, self.stream = chain, decision, t0, runs, stream

    async def deltas(self) -> AsyncIterator[tuple[Run, str | None]]:
        """Every choice's deltas as they come (``None``: a tier was abandoned mid-answer). Raises the first
        choice's ``ChainFailed`` / ``APIError``; leaving early cancels every choice (aborting them)."""
        queue: asyncio.Queue = asyncio.Queue()
        first_token: dict[int, asyncio.Event] = {}  # by prompt: its choice 0 has begun (blocks cached)
        n = self.runs[0].chat.n

        async def one(run: Run) -> None:
            group = first_token.setdefault(run.index // n, asyncio.Event())
            if run.index % n:
                await group.wait()
            try:
                gen = self.chain.run(run.chat, self.decision, run.answer, self.t0, continue_partial=self.stream)
                async with contextlib.aclosing(gen) as it:
                    async for delta in it:
                        group.set()
                        await queue.put((run, delta))
                await queue.put((run, StopAsyncIteration()))
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
                    yield run, item
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def usage(self) -> tuple[int, int, dict]:
        """(prompt tokens, completion tokens, extras): each prompt counted once (its choice 0's), every
        choice's completion tokens."""
        n = self.runs[0].chat.n
        firsts = [r.answer for r in self.runs if r.index % n == 0]
        prompt = sum(a.prompt_tokens for a in firsts)
        extras = {"cached_tokens": sum(a.cached_tokens for a in firsts)}
        return prompt, sum(r.answer.completion_tokens for r in self.runs), extras


@dataclass
class Shape:
    """The body and events of one API: chat (``chat.completion``) or text (``text_completion``)."""

    text_api: bool
    id: str
    model: str
    created: int

    def choice(self, run: Run, text: str, finish_reason: str | None, logprobs: list[dict] | None):
        if self.text_api:
            lp = None if logprobs is None else CompletionLogprobs.of(logprobs, len(run.prefix) + run.sent_logprobs)
            return TextChoice(text=text, index=run.index, logprobs=lp, finish_reason=finish_reason)
        lp = None if logprobs is None else ChoiceLogprobs(content=logprobs)
        content, calls, finish_reason = read_answer(text, run.chat.spec, finish_reason)
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
        return Completion(self.id, self.model, self.created).chunk(delta, finish_reason, logprobs, index=run.index)

    def usage_event(self, usage: Usage) -> dict:
        cls = TextCompletion if self.text_api else ChatCompletionChunk
        return cls(id=self.id, created=self.created, model=self.model, choices=[], usage=usage).model_dump()


async def respond(
    request: web.Request,
    choices: Choices,
    shape: Shape,
    headers: dict[str, str],
    settle: Callable[[], float],
    include_usage: bool,
) -> web.StreamResponse:
    """The whole body, or the events; ``settle`` charges every choice (also when one failed) and returns
    the cost."""
    runs = choices.runs
    if not choices.stream:
        try:
            async for run, delta in choices.deltas():
                if delta is None:  # an abandoned tier's partial text is not part of this answer
                    run.text.clear()
                    run.answer.take_logprobs()
                else:
                    run.text.append(delta)
        except ChainFailed as exc:
            settle()
            raise exc.api_error() from None
        cost = settle()
        shape.model = runs[0].answer.model or shape.model
        body = shape.body(
            [
                shape.choice(r, r.prefix + "".join(r.text), r.answer.finish_reason, r.answer.take_logprobs())
                for r in runs
            ],
            Usage.of(*choices.usage()),
        )
        return web.json_response(body, headers={**headers, **runs[0].answer.headers(cost)})

    response = None
    held = not shape.text_api and runs[0].chat.needs == "tools"

    async def send(data: dict) -> None:
        await response.write(sse(data))

    try:
        async for run, delta in choices.deltas():
            if response is None:
                shape.model = run.answer.model or shape.model
                response = web.StreamResponse(
                    headers={
                        "Content-Type": "text/event-stream",
                        "Cache-Control": "no-cache",
                        **headers,
                        **run.answer.headers(),
                    }
                )
                await response.prepare(request)
                for r in runs:
                    if shape.text_api:
                        if r.prefix:
                            await send(shape.event(r, r.prefix))
                    else:
                        await send(shape.event(r, None))
            if delta is None:
                await response.write(b": a tier fell back; the next one continues the answer\n\n")
                continue
            run.text.append(delta)
            if held:  # tool calls go out whole, at the end
                continue
            logprobs = run.answer.take_logprobs()
            await send(shape.event(run, delta, logprobs=logprobs))
            run.sent_logprobs += sum(len(e["token"]) for e in logprobs or ())
    except ChainFailed as exc:
        settle()
        if response is None:
            raise exc.api_error() from None
        await send(exc.api_error().body())
        await response.write(DONE)
        return response
    settle()
    if response is None:  # every answer empty
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **headers})
        await response.prepare(request)
    for r in runs:
        finish_reason = r.answer.finish_reason or "stop"
        if held:
            content, calls, finish_reason = read_answer("".join(r.text), r.chat.spec, finish_reason)
            if content:
                await send(shape.event(r, content))
            if calls:
                chunk = Completion(shape.id, shape.model, shape.created).chunk(
                    {"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}, index=r.index
                )
                await send(chunk)
        await send(shape.event(r, None, finish_reason, r.answer.take_logprobs() or None))
    if include_usage:
        await send(shape.usage_event(Usage.of(*choices.usage())))
    await response.write(DONE)
    await response.write_eof()
    return response
