"""Server-sent events in the shape of OpenAI's streamed chat completions.

In: the HTTP request, the ``Completion`` (id, model, created) and, event by event, what to send. Out: a
prepared ``web.StreamResponse`` carrying

    data: {chunk, delta {"role": "assistant", "content": ""}}    when opened, with the headers
    data: {chunk, delta {"content": "..."}}                      per piece of text
    : a comment                                                  (clients ignore it: a fallback note)
    data: {chunk, delta {}, finish_reason}                      then, if asked, a usage chunk
    data: [DONE]

or, when the answer fails after the headers went out, an OpenAI error body as the last event before
``[DONE]``. Runs on the event loop; each write waits for the socket (backpressure from a slow client).
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from gateway.api.schemas import Completion

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
    """One streamed completion. Nothing goes out before ``open``: the headers can still be chosen (the
    miss path opens with its first text, so they can name the tier that is answering)."""

    def __init__(self, request: web.Request, completion: Completion):
        self.request, self.completion = request, completion
        self.response: web.StreamResponse | None = None

    @property
    def opened(self) -> bool:
        return self.response is not None

    async def open(self, headers: dict[str, str]) -> None:
        self.response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **headers}
        )
        await self.response.prepare(self.request)
        await self._send(self.completion.chunk({"role": "assistant", "content": ""}))

    async def text(self, delta: str, logprobs: list[dict] | None = None) -> None:
        await self._send(self.completion.chunk({"content": delta}, logprobs=logprobs))

    async def tool_calls(self, calls: list[dict]) -> None:
        """A structured answer's tool calls, each whole, with its index (clients merge by index)."""
        await self._send(self.completion.chunk({"tool_calls": [{"index": i, **c} for i, c in enumerate(calls)]}))

    async def comment(self, line: str) -> None:
        await self.response.write(f": {line}\n\n".encode())

    async def finish(
        self, finish_reason: str | None, usage: tuple[int, int] | None = None, logprobs: list[dict] | None = None
    ) -> None:
        """The finish chunk (with the log-probabilities of tokens whose text was held back to the end),
        then the usage chunk when ``usage`` (prompt, completion tokens) is given."""
        await self._send(self.completion.chunk({}, finish_reason, logprobs=logprobs))
        if usage is not None:
            await self._send(self.completion.usage_chunk(*usage))

    async def done(self) -> None:
        await self.response.write(DONE)
        await self.response.write_eof()

    async def fail(self, error_body: dict) -> None:
        """An error after the headers went out: its body as the last event, then ``[DONE]``."""
        await self._send(error_body)
        await self.response.write(DONE)

    async def _send(self, data: Any) -> None:
        await self.response.write(sse(data))
