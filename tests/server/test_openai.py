"""/v1/chat/completions and /v1/models through the official ``openai`` client, unchanged:
the cited answer is the content with [n] markers, the citations an extra field."""

from __future__ import annotations

import re

import httpx
import openai
import pytest



@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0, timeout=30)


def test_models_lists_the_engine(client):
    ids = [m.id for m in client.models.list()]
    assert ids == ["agentic-rag"]


def test_chat_completion_carries_markers_and_citations(client):
    done = client.chat.completions.create(
        model="agentic-rag", messages=[{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": "高温补贴每个月发多少钱？"}])
    text = done.choices[0].message.content
    assert done.choices[0].finish_reason == "stop"
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", text)}
    citations = done.model_extra["citations"]
    assert markers and markers <= {c["index"] for c in citations}
    assert {"chunk_id", "title", "clause", "quote", "span"} <= set(citations[0])
    assert done.model_extra["status"] == "answered" and done.model_extra["answer_id"]


def test_streaming_chat_completion_sends_citations_in_the_final_chunk(client):
    stream = client.chat.completions.create(model="agentic-rag", stream=True,
                                            messages=[{"role": "user", "content": "高温补贴每个月发多少钱？"}])
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    final = chunks[-1]
    assert final.choices[0].finish_reason == "stop"
    assert re.search(r"\[1\]", text)
    assert final.model_extra["citations"][0]["index"] == 1
    whole = client.chat.completions.create(model="agentic-rag",
                                           messages=[{"role": "user", "content": "高温补贴每个月发多少钱？"}])
    assert text == whole.choices[0].message.content


def test_a_follow_up_is_resolved_against_earlier_messages(client):
    first = client.chat.completions.create(model="agentic-rag", messages=[
        {"role": "user", "content": "职工住院能报销百分之多少？"}])
    follow = client.chat.completions.create(model="agentic-rag", messages=[
        {"role": "user", "content": "职工住院能报销百分之多少？"},
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "那退休人员呢？"}])
    assert follow.model_extra["status"] == "answered"
    assert "退休" in follow.choices[0].message.content


def test_chat_errors_are_openai_style_4xx(server):
    with httpx.Client(base_url=server.url, timeout=30) as c:
        r = c.post("/v1/chat/completions", json={"model": "agentic-rag", "messages": []})
        assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"
        r = c.post("/v1/chat/completions", json={"messages": [{"role": "assistant", "content": "hi"}]})
        assert r.status_code == 422 and r.json()["error"]["code"] == "empty_question"
    with pytest.raises(openai.UnprocessableEntityError):
        openai.OpenAI(base_url=f"{server.url}/v1", api_key="x", max_retries=0).chat.completions.create(
            model="agentic-rag", messages=[{"role": "user", "content": " "}])
