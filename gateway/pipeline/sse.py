"""Server-sent events in the shape of OpenAI's streamed chat completions and completions.

In: the HTTP request, the ``Shape`` (chat or text API; id, model, created) and, event by event, what to
send for which choice. Out: a prepared ``web.StreamResponse`` carrying (chat; the text API sends
``text_completion`` objects, the echoed prompt in place of the role)

    data: {chunk, delta {"role": "assistant", "content": ""}}    when opened, with the headers, per choice
    data: {chunk, delta {"content": "..."}}                      per piece of text, with its choice's index
    : a comment                                                  (clients ignore it: a fallback note)
    data: {chunk, delta {}, finish_reason}                      per choice, then, if asked, a usage chunk
    data: [DONE]

or, when the answer fails after the headers went out, an OpenAI error body as the last event before
``[DONE]``. Runs on the event loop; each write waits for the socket (backpressure from a slow client).
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from gateway.api.schemas import Usage
from gateway.pipeline.choices import Run, Shape

DONE = b"data: [DONE]\n\n"
HIT_CHUNK_WORDS = 4  # a cached answer is streamed a few words per event, like a live one


def sse(data: Any) -> bytes:
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def split_for_stream(text: str, words: int = HIT_CHUNK_WORDS) -> list[str]:
    """``text`` in pieces of ``words`` words that join back to exactly ``text`` (at least one piece)."""
    parts = text.split(" ")
    return [
        " ".join(parts[i : i + words]) + (" " if i + words < len(parts) else "") for i in range(0, len(parts), words)
    ] or [""]


class EventStream:
    """One streamed answer, all its choices. Nothing goes out before ``open``: the headers can still be
    chosen (a miss opens with its first text, so they can name the tier that is answering)."""

    def __init__(self, request: web.Request, shape: Shape):
        self.request, self.shape = request, shape
        self.response: web.StreamResponse | None = None

    @property
    def opened(self) -> bool:
        return self.response is not None

    async def open(self, headers: dict[str, str], runs: list[Run]) -> None:
        """The headers, then each choice's first event: chat, its role; text, its echoed prompt."""
        self.response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **headers}
        )
        await self.response.prepare(self.request)
        for run in runs:
            if not self.shape.text_api:
                await self._send(self.shape.event(run, None))
            elif run.prefix:
                await self._send(self.shape.event(run, run.prefix))

    async def text(self, run: Run, delta: str, logprobs: list[dict] | None = None) -> None:
        await self._send(self.shape.event(run, delta, logprobs=logprobs))
        run.sent_logprobs += sum(len(e["token"]) for e in logprobs or ())

    async def tool_calls(self, run: Run, calls: list[dict]) -> None:
        """A structured answer's tool calls, each whole, with its index (clients merge by index)."""
        await self._send(self.shape.chunk(run, {"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}))

    async def comment(self, line: str) -> None:
        await self.response.write(f": {line}\n\n".encode())

    async def finish(self, run: Run, finish_reason: str | None, logprobs: list[dict] | None = None) -> None:
        """A choice's finish event (with the log-probabilities of tokens whose text was held back)."""
        await self._send(self.shape.event(run, None, finish_reason, logprobs))

    async def usage(self, usage: Usage) -> None:
        await self._send(self.shape.usage_event(usage))

    async def done(self) -> None:
        await self.response.write(DONE)
        await self.response.write_eof()

    async def fail(self, error_body: dict) -> None:
        """An error after the headers went out: its body as the last event, then ``[DONE]``."""
        await self._send(error_body)
        await self.response.write(DONE)

    async def _send(self, data: Any) -> None:
        await self.response.write(sse(data))
