"""LLM providers against a real OpenAI-compatible server on 127.0.0.1 (real sockets, real SSE),
the validate-retry-fallback helper, and the factory."""

from __future__ import annotations

import importlib.util
import json

import pytest
from pydantic import BaseModel, Field, SecretStr

from agentic_rag.config import LLMSettings, Settings
from agentic_rag.errors import ConfigError, LLMError, MissingExtraError
from agentic_rag.models.llm import (LLMFallback, MeteredLLM, OpenAILLM, ScriptedLLM, make_llm,
                                    parse_output, structured)
from agentic_rag.runtime.prompts import RetrieveDecision, SufficiencyJudgement

MSGS = [{"role": "user", "content": "住院报销比例是多少？"}]


def test_complete_sends_the_key_reports_usage_and_hides_the_key(chat_server):
    server = chat_server(lambda body: "你好")
    llm = OpenAILLM(server.base_url, "qwen2.5", SecretStr("sk-test-123"))
    out = llm.complete(MSGS, max_tokens=20)
    assert out.text == "你好" and (out.prompt_tokens, out.completion_tokens) == (11, 7)
    headers, body = server.requests[0]
    assert headers["Authorization"] == "Bearer sk-test-123"
    assert body["model"] == "qwen2.5" and body["max_tokens"] == 20 and body["temperature"] == 0
    assert "sk-test-123" not in repr(llm) and "***" in repr(llm)


def test_structured_output_uses_json_schema_then_downgrades_once_when_refused(chat_server):
    server = chat_server(lambda body: '{"decision": "RETRIEVE"}')
    server.reject_json_schema = True
    llm = OpenAILLM(server.base_url, "m")
    assert llm.complete(MSGS, RetrieveDecision).parsed == RetrieveDecision(decision="RETRIEVE")
    assert llm.complete(MSGS, RetrieveDecision).parsed.decision == "RETRIEVE"
    formats = [(b.get("response_format") or {}).get("type") for _, b in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]  # the refusal is remembered
    # by the process: a new client of the same server and model does not probe again
    assert OpenAILLM(server.base_url, "m").complete(MSGS, RetrieveDecision).parsed.decision == "RETRIEVE"
    assert (server.requests[-1][1].get("response_format") or {}).get("type") == "json_object"
    assert len(server.requests) == 4
    # JSON mode needs the word JSON in the prompt; the schema is spelled out for small models
    assert "JSON schema" in server.requests[1][1]["messages"][-1]["content"]


def test_sse_streaming_yields_deltas_and_assembles_a_completion(chat_server):
    text = "参保职工住院报销比例为80%，依据第十条。"
    server = chat_server(lambda body: text)
    llm = OpenAILLM(server.base_url, "m")
    pieces = list(llm.stream(MSGS))
    assert len(pieces) > 3 and "".join(pieces) == text
    out = llm.complete(MSGS, stream=True)
    assert out.text == text and out.completion_tokens == 7
    server.usage = False  # servers that do not report usage: counted from the text
    assert llm.complete(MSGS, stream=True).completion_tokens > 0
    assert all(b["stream"] for _, b in server.requests)


def test_429_and_5xx_are_retried_with_backoff_other_errors_are_not(chat_server):
    server = chat_server(lambda body: "ok")
    llm = OpenAILLM(server.base_url, "m", max_retries=2, backoff_s=0.01)
    server.fail = [429, 503]
    assert llm.complete(MSGS).text == "ok" and len(server.requests) == 3
    server.fail = [500, 500, 500]
    with pytest.raises(LLMError, match="HTTP 500.*after 3 attempts"):
        llm.complete(MSGS)
    server.fail = [401]
    before = len(server.requests)
    with pytest.raises(LLMError, match="HTTP 401"):
        llm.complete(MSGS)
    assert len(server.requests) == before + 1


def test_unreachable_endpoint_is_an_llm_error_without_the_key():
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens here now
    llm = OpenAILLM(f"http://127.0.0.1:{port}/v1", "m", "sk-secret", max_retries=1, backoff_s=0.01)
    with pytest.raises(LLMError, match="unreachable") as info:
        llm.complete(MSGS)
    assert "sk-secret" not in str(info.value)


def test_parse_output_tolerates_fences_and_prose_but_validates():
    assert parse_output('```json\n{"decision": "NO_RETRIEVE"}\n```', RetrieveDecision).decision == "NO_RETRIEVE"
    assert parse_output('Sure! {"decision": "RETRIEVE"} hope it helps', RetrieveDecision).decision == "RETRIEVE"
    with pytest.raises(LLMError, match="decision"):
        parse_output('{"decision": "MAYBE"}', RetrieveDecision)


def test_structured_retries_with_the_error_then_signals_fallback():
    replies = iter(['{"verdict": "SUFFICIENT"}', '{"coverage": 4, "timeliness": 4, "authority": 4, '
                                                  '"verdict": "SUFFICIENT"}'])
    llm = ScriptedLLM(lambda m: next(replies))
    out = structured(llm, MSGS, SufficiencyJudgement)
    assert out.coverage == 4 and len(llm.calls) == 2
    assert "coverage" in llm.calls[1][-2]["content"]  # the validation error went back to the model

    bad = ScriptedLLM(lambda m: '{"coverage": 1}')
    with pytest.raises(LLMFallback, match="after one retry"):
        structured(bad, MSGS, SufficiencyJudgement)
    assert len(bad.calls) == 2

    class Ids(BaseModel):
        ids: list[str]

    def known(parsed: Ids) -> None:
        if set(parsed.ids) - {"a"}:
            raise ValueError("unknown ids")

    with pytest.raises(LLMFallback, match="unknown ids"):
        structured(ScriptedLLM(lambda m: {"ids": ["b"]}), MSGS, Ids, validate=known)


def test_metered_llm_counts_and_trips_its_breaker_once():
    calls = []

    def down(messages):
        calls.append(1)
        raise LLMError("unreachable")

    meter = MeteredLLM(ScriptedLLM(down), max_tokens=1000)
    for _ in range(3):
        with pytest.raises(LLMFallback):
            structured(meter, MSGS, RetrieveDecision)
    assert len(calls) == 1 and meter.usage.llm_calls == 1 and "unreachable" in meter.down

    meter = MeteredLLM(ScriptedLLM(lambda m: {"decision": "RETRIEVE"}), max_tokens=200)
    while meter.unavailable() is None:
        meter.complete(MSGS, RetrieveDecision)
    assert meter.tokens >= 200 and "budget" in meter.unavailable()


def test_make_llm_builds_the_configured_provider(monkeypatch):
    assert make_llm(LLMSettings()) is None
    monkeypatch.setenv("ARAG_LLM_API_KEY", "sk-env")
    settings = Settings.load(llm={"provider": "openai", "model": "qwen", "base_url": "http://127.0.0.1:1/v1"})
    llm = make_llm(settings)
    assert isinstance(llm, OpenAILLM) and llm.model == "qwen" and "sk-env" not in repr(llm)
    assert "sk-env" not in settings.model_dump_json()
    with pytest.raises(ConfigError, match="base_url"):
        make_llm(LLMSettings(provider="openai", model="m", base_url="ftp://x"))
    with pytest.raises(ConfigError, match="scripted"):
        make_llm(LLMSettings(provider="scripted"))


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None, reason="llama-cpp-python is installed")
def test_local_without_the_extra_names_it():
    with pytest.raises(MissingExtraError, match=r"agentic-rag\[local\]"):
        make_llm(LLMSettings(provider="local"))


def test_scripted_llm_plays_dicts_models_and_text():
    llm = ScriptedLLM(lambda m: RetrieveDecision(decision="NO_RETRIEVE"))
    assert json.loads(llm.complete(MSGS).text) == {"decision": "NO_RETRIEVE"}
    assert "".join(ScriptedLLM(lambda m: "abcdefghijklmnop").stream(MSGS)) == "abcdefghijklmnop"


def test_the_test_suite_cannot_reach_the_network():
    import socket

    with pytest.raises(RuntimeError, match="may not"):
        socket.create_connection(("10.255.255.1", 443), timeout=1)
    with pytest.raises(RuntimeError, match="may not"):
        OpenAILLM("https://api.openai.com/v1", "gpt-4o", "sk-x", max_retries=0).complete(MSGS)


# ---------------------------------------------------------------- secrets and bounds

KEY = "sk-live-Zq81mXw0pT5vR3nY"


@pytest.mark.parametrize("status", [400, 401, 429, 500])
def test_a_server_echoing_the_key_in_its_error_body_never_leaks_it(chat_server, status):
    server = chat_server(lambda body: "ok")
    server.echo_auth = True
    server.fail = [status] * 3
    llm = OpenAILLM(server.base_url, "m", SecretStr(KEY), max_retries=1, backoff_s=0.01)
    with pytest.raises(LLMError) as info:
        llm.complete(MSGS, RetrieveDecision)
    assert server.requests[0][0]["Authorization"] == f"Bearer {KEY}"  # it was sent, and echoed
    message = str(info.value)
    assert f"HTTP {status}" in message and "received_headers" in message and "Bearer ***" in message
    assert KEY not in message and KEY[3:] not in message


def test_token_shaped_strings_are_redacted_from_replies_and_errors_without_a_configured_key(chat_server):
    server = chat_server(lambda body: "use sk-otherTenant0123456 or Bearer abcdefghijkl")
    llm = OpenAILLM(server.base_url, "m")
    text = llm.complete(MSGS).text
    assert "sk-otherTenant0123456" not in text and "abcdefghijkl" not in text
    assert text == "use sk-*** or Bearer ***"


@pytest.mark.parametrize("stream", [False, True])
def test_an_oversized_reply_stops_being_read_and_is_invalid_output(chat_server, stream):
    from agentic_rag.models.llm import OversizedReply

    size = 200_000 if stream else 5_000_000  # the SSE server sends 5 characters an event
    server = chat_server(lambda body: '{"decision": "RETRIEVE", "x": "' + "y" * size + '"}')
    llm = OpenAILLM(server.base_url, "m", stream=stream, max_reply_chars=10_000)
    with pytest.raises(OversizedReply, match="larger than 10000 characters") as info:
        llm.complete(MSGS, RetrieveDecision)
    assert len(info.value.text) <= 2000
    # through structured(): invalid output, retried once, then the deterministic fallback
    with pytest.raises(LLMFallback, match="larger than"):
        structured(MeteredLLM(llm, max_tokens=8000), MSGS, RetrieveDecision)


def test_an_oversized_reply_is_charged_at_most_what_was_asked_for():
    huge = '{"decision": "RETRIEVE", "pad": "' + "住" * 50_000 + '"}'
    meter = MeteredLLM(ScriptedLLM(lambda m: huge), max_tokens=8000, max_reply_chars=32_000)
    with pytest.raises(LLMFallback, match="larger than 32000"):
        structured(meter, MSGS, RetrieveDecision, max_tokens=100)
    assert meter.usage.llm_calls == 2 and meter.usage.completion_tokens <= 200
    assert meter.unavailable() is None  # the budget is not spent by one runaway reply


def test_timeouts_must_be_bounded(monkeypatch):
    with pytest.raises(ConfigError, match="llm.timeout_s"):
        Settings.load(llm={"timeout_s": float("inf")})
    monkeypatch.setenv("ARAG_LLM__TIMEOUT_S", "1e9")
    with pytest.raises(ConfigError, match="llm.timeout_s"):
        Settings.load()
    with pytest.raises(ConfigError, match="llm.timeout_s"):
        OpenAILLM("http://127.0.0.1:1/v1", "m", timeout_s=float("inf"))


def test_a_call_past_the_deadline_is_abandoned_not_waited_for():
    import threading
    import time

    release = threading.Event()

    def slow(messages):
        release.wait(10)
        return {"decision": "RETRIEVE"}

    meter = MeteredLLM(ScriptedLLM(slow), deadline=time.monotonic() + 0.2)
    t0 = time.monotonic()
    try:
        with pytest.raises(LLMFallback, match="deadline"):
            structured(meter, MSGS, RetrieveDecision)
        assert time.monotonic() - t0 < 2
        with pytest.raises(LLMFallback, match="deadline"):  # later calls are refused at once
            meter.complete(MSGS, RetrieveDecision)
    finally:
        release.set()


# ---------------------------------------------------------------- replies cut off by a limit

CUT = '{"summary": "The policy pays eighty percent of the costs of a hospital st'


class Summary(BaseModel):
    summary: str  # no maxLength: the schema does not say how long a reply may run


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_cut_off_at_max_tokens_is_truncated_not_invalid_json_and_is_not_retried(chat_server, stream):
    server = chat_server(lambda body: CUT)
    server.finish_reason = "length"
    meter = MeteredLLM(OpenAILLM(server.base_url, "m", stream=stream), max_tokens=8000)
    with pytest.raises(LLMFallback, match="cut off at the max_tokens limit of 30") as caught:
        structured(meter, MSGS, Summary, max_tokens=30)
    assert "invalid" not in caught.value.reason.lower()
    assert len(server.requests) == 1  # the same limit would cut a retry off too
    [call] = meter.calls
    assert call.outcome == "truncated" and call.completion_tokens == 30

    server.finish_reason = "stop"  # the same text ended by the model itself: invalid, retried
    meter = MeteredLLM(OpenAILLM(server.base_url, "m", stream=stream), max_tokens=8000)
    with pytest.raises(LLMFallback, match="invalid output.*after one retry"):
        structured(meter, MSGS, Summary, max_tokens=30)
    assert [c.outcome for c in meter.calls] == ["invalid", "invalid"]


def test_a_reply_cut_off_by_what_the_token_budget_had_left_says_so(chat_server):
    server = chat_server(lambda body: CUT)
    server.finish_reason = "length"
    meter = MeteredLLM(OpenAILLM(server.base_url, "m"), max_tokens=100)
    with pytest.raises(LLMFallback, match="all the run's token budget of 100 had left"):
        meter.complete(MSGS, Summary, max_tokens=400)


def test_a_bounded_schema_gets_the_max_tokens_its_longest_reply_needs():
    from agentic_rag.models.llm import reply_tokens

    class Short(BaseModel):
        label: str = Field(max_length=10)
        scores: list[int] = Field(max_length=3)

    class Open(BaseModel):
        label: str

    asked = []

    class Recording(ScriptedLLM):
        def complete(self, messages, schema=None, *, max_tokens=512, **kw):
            asked.append(max_tokens)
            return super().complete(messages, schema, max_tokens=max_tokens, **kw)

    llm = Recording(lambda m: {"label": "ok", "scores": [1]})
    need = reply_tokens(Short)
    assert need is not None and need >= 2 * 10 + 3 * 3  # two tokens a character, three numbers
    structured(llm, MSGS, Short, max_tokens=5)
    structured(llm, MSGS, Short, max_tokens=need + 50)
    structured(llm, MSGS, Open, max_tokens=5)
    assert asked == [need, need + 50, 5]  # raised to the need, never lowered; unbounded: as asked
    assert reply_tokens(Open) is None


# ---------------------------------------------------------------- a call the run cannot fit

def test_a_call_the_time_left_cannot_fit_is_refused_before_it_starts():
    import time

    made = []

    def slow(messages):
        made.append(1)
        time.sleep(0.5)
        return {"decision": "RETRIEVE"}

    # the first call has nothing to go by and runs; it shows a call takes 0.5 s, and the 0.4 s
    # or less then left cannot fit another
    meter = MeteredLLM(ScriptedLLM(slow), deadline=time.monotonic() + 0.9)
    meter.complete(MSGS, RetrieveDecision)
    reason = meter.room_for(1)
    assert reason is not None and "left before the question deadline" in reason and "0.5 s" in reason
    with pytest.raises(LLMFallback, match="left before the question deadline"):
        meter.complete(MSGS, RetrieveDecision)
    assert len(made) == 1 and [c.outcome for c in meter.calls] == ["ok", "refused"]


def test_room_for_several_calls_counts_the_cap_time_and_tokens():
    import time

    meter = MeteredLLM(ScriptedLLM(lambda m: {"decision": "RETRIEVE"}), max_tokens=8000, max_calls=3,
                       deadline=time.monotonic() + 60)
    assert meter.room_for(2) is None  # nothing measured yet: a fast model is never refused
    meter.complete(MSGS, RetrieveDecision)
    assert meter.room_for(2) is None  # a scripted call takes milliseconds
    meter.complete(MSGS, RetrieveDecision)
    assert "2 more LLM call(s) needed, 1 left under the cap of 3" in meter.room_for(2)
    assert meter.room_for(1) is None

    small = MeteredLLM(ScriptedLLM(lambda m: {"decision": "RETRIEVE"}), max_tokens=100)
    small.complete(MSGS, RetrieveDecision)
    per_call = small.tokens
    assert 100 - per_call < 2 * per_call  # the test's premise: two more calls do not fit
    assert "tokens left of the run's budget of 100" in small.room_for(2)
