"""Server-sent events in OpenAI's chunk shape, over a real loopback connection."""

from __future__ import annotations

from gateway.api.schemas import Usage
from gateway.pipeline.choices import Run, Shape
from gateway.pipeline.sse import EventStream, split_for_stream, sse
from tests.gateway.pipeline.fakes import call, chat, events

SHAPE = Shape(False, "chatcmpl-1", "big", created=7)
RUN = Run(0, chat())


def test_split_for_stream_joins_back_exactly():
    text = "The bees make honey  from nectar, all summer."
    pieces = split_for_stream(text, words=4)
    assert "".join(pieces) == text and pieces[0] == "The bees make honey " and len(pieces) == 3
    assert split_for_stream("") == [""] and split_for_stream("one") == ["one"]


def test_sse_is_one_json_event_keeping_unicode():
    assert sse({"content": "café"}) == 'data: {"content": "café"}\n\n'.encode()


def test_an_answer_as_events():
    async def handler(request):
        stream = EventStream(request, SHAPE)
        assert not stream.opened
        await stream.open({"x-served-by": "big"}, [RUN])
        await stream.text(RUN, "Hel")
        await stream.comment("tier big failed; lil continues the answer")
        await stream.text(RUN, "lo")
        await stream.finish(RUN, "stop")
        await stream.usage(Usage.of(5, 2))
        await stream.done()
        return stream.response

    status, headers, body = call(handler)
    assert status == 200 and headers["Content-Type"] == "text/event-stream" and headers["x-served-by"] == "big"
    ev = events(body)
    assert ev[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""} and ev[0]["id"] == "chatcmpl-1"
    assert [e["choices"][0]["delta"].get("content") for e in (ev[1], ev[3])] == ["Hel", "lo"]
    assert ev[2] == ": tier big failed; lil continues the answer"
    assert ev[4]["choices"][0] == {"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": None}
    assert ev[5]["choices"] == [] and ev[5]["usage"] == {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
    assert ev[6:] == ["[DONE]"]


def test_no_usage_chunk_unless_asked_and_an_error_after_the_headers():
    async def handler(request):
        stream = EventStream(request, SHAPE)
        await stream.open({}, [RUN])
        await stream.finish(RUN, "length")
        await stream.fail({"error": {"message": "no tier could answer"}})
        return stream.response

    status, _, body = call(handler)
    ev = events(body)
    assert status == 200 and ev[1]["choices"][0]["finish_reason"] == "length"
    assert ev[2:] == [{"error": {"message": "no tier could answer"}}, "[DONE]"]
