"""The OpenAI API surface beyond one chat answer, end to end through the official ``openai`` client against
the gateway with SmolLM2 in-process: ``n`` choices sharing the prompt's KV blocks, /v1/completions
(echo, logprobs, several prompts, token ids, streaming), /v1/embeddings, /v1/models and its cards,
per-model sampling defaults, ``model`` = what answered, x-request-id, usage's cached tokens, CORS, and
``truncation: auto``."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import openai  # a dev dependency: missing, fail rather than skip
import pytest

from tests.support.gateway_server import http
from tests.support.processes import ServerProcess
from tests.support.torch_reference import needs

pytestmark = pytest.mark.slow
MODEL = "smollm2-135m"
ORIGIN = "http://app.example"
NO_STORE = {"Cache-Control": "no-store"}
LONG = (
    "You are a careful assistant. Answer in one short sentence. The following notes describe a small "
    "town by the sea: it has a harbour, a lighthouse, a bakery that opens at six, a school with two "
    "hundred pupils, a library in the old customs house, and a market every Saturday morning. "
)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The gateway in a process of its own (``python -m gateway``): its engine, embedders and torch leave
    with it, so this module does not grow the test worker's memory."""
    folder = tmp_path_factory.mktemp("gw")
    engine = {"max_num_seqs": 8, "max_num_batched_tokens": 64, "max_model_len": 512, "num_blocks": 64}
    config = {
        "host": "127.0.0.1",
        "models": [{"name": MODEL, "preset": MODEL, "engine": engine}],
        "cache": {"store": "file", "path": str(folder / "cache.jsonl")},
        "limits": {"default_max_tokens": 16},
        "cors": {"allow_origins": [ORIGIN]},
    }
    (folder / "gateway.yaml").write_text(json.dumps(config))  # JSON is YAML
    with ServerProcess(["-m", "gateway", "--config", str(folder / "gateway.yaml")], name="openai-endpoints") as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0)


def prefix_cache_hits(server) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    _, _, raw = http(server.url, path="/metrics", method="GET")
    for family in text_string_to_metric_families(raw.decode()):
        for s in family.samples:
            if s.name == "prefix_cache_hits_total" and s.labels.get("model") == MODEL:
                return s.value
    raise AssertionError("no prefix_cache_hits_total in /metrics")


def test_models_list_every_name_with_its_card(client):
    ids = [m.id for m in client.models.list().data]
    assert ids == ["auto", MODEL, "all-minilm-l6-v2"]
    card = client.models.retrieve(MODEL)
    assert card.tier == MODEL and card.context_length == 512
    assert set(card.capabilities) == {"chat", "completion", "json", "tools"}
    assert card.sampling_defaults == {"temperature": 0.2, "top_p": 0.9}  # the preset's (model card) settings
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")


def test_left_out_sampling_fields_take_the_model_defaults(client):
    ask = dict(model=MODEL, messages=[{"role": "user", "content": "Tell me about cats."}], max_tokens=24, seed=7)
    left_out = client.chat.completions.create(**ask, extra_headers=NO_STORE)
    explicit = client.chat.completions.create(**ask, temperature=0.2, top_p=0.9, extra_headers=NO_STORE)
    openai_default = client.chat.completions.create(**ask, temperature=1.0, top_p=1.0, extra_headers=NO_STORE)
    assert left_out.choices[0].message.content == explicit.choices[0].message.content
    assert openai_default.choices[0].message.content != explicit.choices[0].message.content
    assert left_out.model == MODEL  # the model that answered


def test_n_choices_share_the_prompt_blocks(server, client):
    before = prefix_cache_hits(server)
    ask = dict(
        model=MODEL,
        messages=[{"role": "user", "content": LONG + "What does the town have?"}],
        n=3,
        temperature=1.0,
        seed=3,
        max_tokens=12,
    )
    r = client.chat.completions.create(**ask)
    hits = prefix_cache_hits(server) - before
    assert [c.index for c in r.choices] == [0, 1, 2]
    texts = [c.message.content for c in r.choices]
    assert all(texts) and len(set(texts)) > 1, texts  # seed + j per choice: not three copies
    p = r.usage.prompt_tokens
    assert hits >= 2 * 16 * ((p - 1) // 16), (hits, p)  # choices 1 and 2 found choice 0's full blocks
    assert r.usage.completion_tokens >= 3  # every choice's tokens, the prompt once
    # the same seed again: the same three choices
    again = client.chat.completions.create(**ask)
    assert [c.message.content for c in again.choices] == texts
    # streamed: each choice's deltas under its index, each finished
    parts: dict[int, str] = {0: "", 1: ""}
    finished = set()
    for chunk in client.chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": "Say hi."}], n=2, max_tokens=8, stream=True
    ):
        for c in chunk.choices:
            parts[c.index] += c.delta.content or ""
            if c.finish_reason:
                finished.add(c.index)
    assert finished == {0, 1} and all(parts.values())


def test_completions_echo_logprobs_prompts_and_stream(client):
    prompt = "The capital of France is"
    whole = client.completions.create(model=MODEL, prompt=prompt, max_tokens=8, temperature=0)
    assert whole.object == "text_completion" and whole.choices[0].text and whole.model == MODEL
    assert whole.usage.completion_tokens > 0 and whole.choices[0].finish_reason in ("stop", "length")
    echo = client.completions.create(model=MODEL, prompt=prompt, max_tokens=8, temperature=0, echo=True)
    assert echo.choices[0].text == prompt + whole.choices[0].text
    lp = client.completions.create(model=MODEL, prompt=prompt, max_tokens=8, temperature=0, logprobs=2)
    got = lp.choices[0].logprobs
    assert "".join(got.tokens) == lp.choices[0].text == whole.choices[0].text
    assert all(len(t) == 2 for t in got.top_logprobs) and all(x <= 0 for x in got.token_logprobs)
    assert got.text_offset == [sum(len(t) for t in got.tokens[:i]) for i in range(len(got.tokens))]
    streamed = "".join(
        c.choices[0].text
        for c in client.completions.create(model=MODEL, prompt=prompt, max_tokens=8, temperature=0, stream=True)
    )
    assert streamed == whole.choices[0].text
    two = client.completions.create(model=MODEL, prompt=[prompt, "One, two, three,"], max_tokens=6, temperature=0)
    assert [c.index for c in two.choices] == [0, 1]
    assert (
        two.choices[0].text
        == client.completions.create(model=MODEL, prompt=prompt, max_tokens=6, temperature=0).choices[0].text
    )
    ids = client.completions.create(model=MODEL, prompt=[504, 3575, 282], max_tokens=4, temperature=0)
    assert ids.usage.prompt_tokens == 3 and ids.choices[0].text
    with pytest.raises(openai.BadRequestError) as exc:
        client.completions.create(model=MODEL, prompt=prompt, suffix="x")
    assert exc.value.body["param"] == "suffix"


TEXTS = ["How do I boil an egg?", "The weather is nice today."]


def test_embeddings_answer_in_both_encodings_and_refuse_what_they_cannot(client):
    r = client.embeddings.create(model="all-minilm-l6-v2", input=TEXTS)  # the SDK asks for base64
    got = np.array([d.embedding for d in r.data], np.float32)
    assert got.shape == (2, 384) and r.usage.prompt_tokens > 0
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)  # normalized
    assert float(got[0] @ got[1]) < 0.5  # two unrelated sentences: not the same vector
    floats = client.embeddings.create(model="all-minilm-l6-v2", input=TEXTS[0], encoding_format="float")
    assert np.allclose(floats.data[0].embedding, got[0], atol=1e-6)
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    with pytest.raises(openai.BadRequestError) as exc:
        client.embeddings.create(model="all-minilm-l6-v2", input="x", dimensions=10)
    assert exc.value.body["param"] == "dimensions"
    with pytest.raises(openai.BadRequestError) as exc:
        client.embeddings.create(model="all-minilm-l6-v2", input="word " * 400)
    assert exc.value.body["code"] == "context_length_exceeded"
    # at the window's edge: 254 words of one piece each, plus [CLS] and [SEP], is 256 pieces (the most it reads)
    edge = client.embeddings.create(model="all-minilm-l6-v2", input="word " * 254)
    assert edge.usage.prompt_tokens == 256
    with pytest.raises(openai.BadRequestError):
        client.embeddings.create(model="all-minilm-l6-v2", input="word " * 255)


@needs("sentence_transformers")
def test_embeddings_are_the_models_own(client):
    """The served vectors (the float32 ONNX graph) against sentence-transformers' own, in a process of its own
    (torch stays out of here): float32 sums in another order, within 1e-5."""
    r = client.embeddings.create(model="all-minilm-l6-v2", input=TEXTS, encoding_format="float")
    got = np.array([d.embedding for d in r.data], np.float32)
    code = (
        "import json, sys; from sentence_transformers import SentenceTransformer; "
        "from gateway.cache.embedder import find_model_dir; "
        "m = SentenceTransformer(str(find_model_dir()), device='cpu'); "
        "print(json.dumps(m.encode(json.loads(sys.argv[1]), normalize_embeddings=True).tolist()))"
    )
    run = subprocess.run([sys.executable, "-c", code, json.dumps(TEXTS)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    ref = np.array(json.loads(run.stdout.strip().splitlines()[-1]), np.float32)
    assert np.allclose(got, ref, atol=1e-5)


def test_request_ids_and_cors(server):
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
    _, h, _ = http(server.url, body, headers={"x-request-id": "client-42"})
    assert h["x-request-id"] == "client-42"
    _, h1, _ = http(server.url, body)
    _, h2, _ = http(server.url, {"model": "nope", "messages": []})  # an error has one too
    assert h1["x-request-id"].startswith("req-") and h2["x-request-id"].startswith("req-")
    assert h1["x-request-id"] != h2["x-request-id"]
    _, h, _ = http(server.url, {**body, "stream": True}, headers={"x-request-id": "s-1"})
    assert h["x-request-id"] == "s-1"
    pre = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
    status, h, _ = http(server.url, raw=b"", headers=pre, method="OPTIONS")
    assert status == 204 and "authorization" in h["Access-Control-Allow-Headers"]
    _, h, _ = http(server.url, body, headers={"Origin": ORIGIN})
    assert h["Access-Control-Allow-Origin"] == ORIGIN and "x-served-by" in h["Access-Control-Expose-Headers"]
    _, h, _ = http(server.url, body, headers={"Origin": "http://evil.example"})
    assert "Access-Control-Allow-Origin" not in h


def test_usage_counts_cached_prompt_tokens(client):
    messages = [{"role": "user", "content": LONG + "Where is the library?"}]
    first = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=4, extra_headers=NO_STORE)
    second = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=4, extra_headers=NO_STORE)
    p = second.usage.prompt_tokens
    assert second.usage.prompt_tokens_details.cached_tokens >= 16 * ((p - 1) // 16) > 0
    assert first.usage.prompt_tokens_details.cached_tokens <= second.usage.prompt_tokens_details.cached_tokens


def test_truncation_auto_drops_the_oldest_turns(client):
    turn = "Tell me more about the harbour, the lighthouse and the market, please, in detail. " * 4
    messages = [{"role": "system", "content": "You are brief."}]
    for i in range(8):
        messages += [{"role": "user", "content": f"{i}: {turn}"}, {"role": "assistant", "content": turn}]
    messages.append({"role": "user", "content": "What opens at six?"})
    with pytest.raises(openai.BadRequestError) as exc:
        client.chat.completions.create(model=MODEL, messages=messages, max_tokens=16)
    assert exc.value.body["code"] == "context_length_exceeded"
    r = client.chat.completions.create(
        model=MODEL, messages=messages, max_tokens=16, extra_body={"truncation": "auto"}, extra_headers=NO_STORE
    )
    dropped = r.usage.model_extra["truncated_prompt_tokens"]
    assert dropped > 0 and r.usage.prompt_tokens + 16 <= 512 and r.choices[0].message.content


def test_errors_of_the_new_endpoints_are_openai_shaped(server):
    for path, body, param in [
        ("/v1/completions", {"model": MODEL}, "prompt"),
        ("/v1/completions", {"model": MODEL, "prompt": "x", "n": 99}, "n"),
        ("/v1/completions", {"model": MODEL, "prompt": "x", "foo": 1}, "foo"),
        ("/v1/embeddings", {"model": "all-minilm-l6-v2"}, "input"),
        ("/v1/embeddings", {"model": "all-minilm-l6-v2", "input": [1, 2]}, "input"),
    ]:
        status, _, raw = http(server.url, body, path=path)
        err = json.loads(raw)["error"]
        assert status == 400 and err["param"] == param and err["type"] == "invalid_request_error", (path, body, err)


def test_a_second_client_library_langchain(server):
    from langchain_openai import ChatOpenAI, OpenAI, OpenAIEmbeddings

    common = dict(base_url=server.url + "/v1", api_key="k", max_retries=0)
    chat = ChatOpenAI(model=MODEL, temperature=0, max_tokens=12, **common)
    whole = chat.invoke("What is the capital of France?")
    streamed = "".join(part.content for part in chat.stream("What is the capital of France?"))
    assert whole.content and streamed == whole.content
    assert whole.response_metadata["model_name"] == MODEL
    from langchain_core.messages import HumanMessage

    several = ChatOpenAI(model=MODEL, temperature=1.0, max_tokens=8, n=2, **common).generate([[HumanMessage("Hi.")]])
    assert len(several.generations[0]) == 2
    llm = OpenAI(model=MODEL, temperature=0, max_tokens=8, **common)
    assert llm.invoke("The capital of France is")
    # tiktoken's encodings are a download away: the length check (it counts with them) is off
    emb = OpenAIEmbeddings(model="all-minilm-l6-v2", check_embedding_ctx_length=False, **common)
    vecs = emb.embed_documents(["a red apple", "a green pear"])
    assert len(vecs) == 2 and len(vecs[0]) == 384 and abs(np.linalg.norm(vecs[0]) - 1) < 1e-4


def test_the_readme_examples_work_as_written(server):
    """The Quick start's curl commands and Python snippet, as the README has them (only the URL moved)."""
    import re
    import subprocess
    import sys
    from pathlib import Path

    readme = Path(__file__).resolve().parents[2] / "README.md"
    quick = readme.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    curls = re.findall(r"curl -s http://127\.0\.0\.1:8000(\S+) .*?-d '(.*?)'", quick, re.S)
    assert [p for p, _ in curls] == ["/v1/chat/completions", "/v1/completions", "/v1/embeddings"]
    out = {}
    for path, data in curls:
        status, _, raw = http(server.url, json.loads(data), path=path)
        assert status == 200, raw
        out[path] = json.loads(raw)
    assert "Paris" in out["/v1/chat/completions"]["choices"][0]["message"]["content"]
    assert out["/v1/completions"]["choices"][0]["text"].strip()
    assert [len(d["embedding"]) for d in out["/v1/embeddings"]["data"]] == [384, 384]
    snippet = re.search(r"```python\n(.*?)```", quick, re.S).group(1).replace("http://127.0.0.1:8000", server.url)
    run = subprocess.run([sys.executable, "-c", snippet], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip(), run.stderr


# ---------------------------------------------------------------- structured output

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "role": {"enum": ["admin", "editor", "viewer"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
    },
    "required": ["name", "age", "role", "tags"],
    "additionalProperties": False,
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]}},
            "required": ["city", "unit"],
            "additionalProperties": False,
        },
    },
}
ASK_PERSON = [{"role": "user", "content": "Describe a made-up library user."}]
ASK_WEATHER = [{"role": "user", "content": "What is the weather in Paris?"}]


def test_json_schema_answers_validate_whole_and_streamed(client):
    import jsonschema

    rf = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
    for temperature in (0.0, 1.0):
        r = client.chat.completions.create(
            model=MODEL, messages=ASK_PERSON, response_format=rf, temperature=temperature, seed=5, max_tokens=120
        )
        assert r.choices[0].finish_reason == "stop", r.choices[0]
        jsonschema.validate(json.loads(r.choices[0].message.content), PERSON)
    streamed = "".join(
        c.choices[0].delta.content or ""
        for c in client.chat.completions.create(
            model=MODEL, messages=ASK_PERSON, response_format=rf, temperature=0, max_tokens=120, stream=True
        )
        if c.choices
    )
    jsonschema.validate(json.loads(streamed), PERSON)
    ask = [{"role": "user", "content": 'What is the capital of France? Answer as {"capital": ...}.'}]
    obj = client.chat.completions.create(
        model=MODEL, messages=ask, response_format={"type": "json_object"}, temperature=0, max_tokens=60
    )
    assert obj.choices[0].finish_reason == "stop", obj.choices[0]  # a finished answer always parses
    assert isinstance(json.loads(obj.choices[0].message.content), dict)


def test_tool_calls_parse_for_required_named_and_auto(client):
    import jsonschema

    params = WEATHER["function"]["parameters"]
    for choice in ("required", {"type": "function", "function": {"name": "get_weather"}}):
        r = client.chat.completions.create(
            model=MODEL,
            messages=ASK_WEATHER,
            tools=[WEATHER],
            tool_choice=choice,
            parallel_tool_calls=False,
            temperature=0,
            max_tokens=60,
        )
        c = r.choices[0]
        assert c.finish_reason == "tool_calls" and c.message.content is None, c
        (call,) = c.message.tool_calls
        assert call.type == "function" and call.function.name == "get_weather" and call.id.startswith("call_")
        jsonschema.validate(json.loads(call.function.arguments), params)
    auto = client.chat.completions.create(
        model=MODEL, messages=ASK_WEATHER, tools=[WEATHER], temperature=0, max_tokens=60
    )
    m = auto.choices[0].message
    assert (m.tool_calls is None) == (auto.choices[0].finish_reason != "tool_calls")
    assert m.tool_calls is not None or m.content
    for call in m.tool_calls or ():
        jsonschema.validate(json.loads(call.function.arguments), params)
    # streamed: the call arrives whole under its index, then finish_reason tool_calls
    calls, finish = {}, None
    for chunk in client.chat.completions.create(
        model=MODEL,
        messages=ASK_WEATHER,
        tools=[WEATHER],
        tool_choice="required",
        parallel_tool_calls=False,
        temperature=0,
        max_tokens=60,
        stream=True,
    ):
        for tc in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
            calls[tc.index] = tc
        finish = (chunk.choices[0].finish_reason if chunk.choices else None) or finish
    assert finish == "tool_calls" and list(calls) == [0]
    jsonschema.validate(json.loads(calls[0].function.arguments), params)
    # the conversation goes on with the tool's result
    follow = client.chat.completions.create(
        model=MODEL,
        temperature=0,
        max_tokens=24,
        messages=[
            *ASK_WEATHER,
            {"role": "assistant", "content": None, "tool_calls": [calls[0].model_dump(exclude={"index"})]},
            {"role": "tool", "tool_call_id": calls[0].id, "content": '{"temperature": 21, "sky": "clear"}'},
        ],
    )
    assert follow.choices[0].message.content


def test_bad_schemas_and_tools_are_400s_naming_the_field(client):
    for kwargs, param in [
        (
            {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "float"}}}},
            "response_format",
        ),
        ({"response_format": {"type": "yaml"}}, "response_format"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "nope"}}}]}, "tools"),
        ({"tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "missing"}}}, "tool_choice"),
    ]:
        with pytest.raises(openai.BadRequestError) as exc:
            client.chat.completions.create(model=MODEL, messages=ASK_WEATHER, max_tokens=4, **kwargs)
        assert exc.value.body["param"] == param, exc.value.body


def test_langchain_structured_output_and_tools(server):
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from pydantic import BaseModel

    class City(BaseModel):
        name: str
        country: str

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return "sunny"

    llm = ChatOpenAI(model=MODEL, temperature=0, max_tokens=60, base_url=server.url + "/v1", api_key="k", max_retries=0)
    city = llm.with_structured_output(City, method="json_schema").invoke("Name a big city in Japan.")
    assert isinstance(city, City) and city.name
    msg = llm.bind_tools([get_weather], tool_choice="get_weather").invoke("What is the weather in Rome?")
    assert msg.tool_calls and msg.tool_calls[0]["name"] == "get_weather" and isinstance(msg.tool_calls[0]["args"], dict)
