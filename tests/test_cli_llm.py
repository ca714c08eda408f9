"""`arag ask` / `arag chat` with an OpenAI-compatible server on 127.0.0.1 that misbehaves: the API
key echoed in error bodies must reach no output (stdout, stderr, --json, the sessions database),
and a runaway question is refused with one line instead of a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentic_rag.cli import app

KEY = "sk-live-9fQw2LmZx7RtYb4K"
QUESTION = "在职职工住院费用报销比例是多少？"
POLICY = """# 江南省职工医疗保障办法

第七条 在职职工住院费用报销比例为90%，退休人员为95%。

第八条 报销款在审核通过后5个工作日内拨付。
"""


@pytest.fixture
def index(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("ARAG_EMBEDDER__PROVIDER", "none")  # BM25 + graph: fast, no model load
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "policy.md").write_text(POLICY, encoding="utf-8")
    idx = tmp_path / "idx"
    result = CliRunner().invoke(app, ["ingest", str(docs), "--index", str(idx)])
    assert result.exit_code == 0, result.output
    return idx


def _llm_args(server, index: Path) -> list[str]:
    return ["--llm", "openai", "--llm-base-url", server.base_url, "--llm-model", "m",
            "--index", str(index), "--json"]


@pytest.mark.parametrize("status", [400, 401, 429, 500])
def test_an_endpoint_echoing_the_key_leaks_it_nowhere(chat_server, index, monkeypatch, status):
    server = chat_server(lambda body: "{}")
    server.echo_auth = True
    server.fail = [status] * 50
    monkeypatch.setenv("ARAG_LLM_API_KEY", KEY)
    monkeypatch.setenv("ARAG_LLM__MAX_RETRIES", "0")
    runner = CliRunner()
    for mode in ("pipeline", "react"):
        ask = runner.invoke(app, ["ask", QUESTION, "--mode", mode, *_llm_args(server, index)])
        assert ask.exit_code == 0, ask.output
        answer = json.loads(ask.stdout)
        assert answer["status"] == "answered"  # the deterministic path answered
        reasons = [e["fallback"] for e in answer["trace"] if e["kind"] == "fallback"]
        assert any(f"HTTP {status}" in r and "Bearer ***" in r for r in reasons), reasons
        assert KEY not in ask.stdout + ask.stderr
    chat = runner.invoke(app, ["chat", "--mode", "react", *_llm_args(server, index)],
                         input=f"{QUESTION}\n那退休人员呢？\n\n")
    assert chat.exit_code == 0, chat.output
    assert [json.loads(line)["status"] for line in chat.stdout.splitlines()] == ["answered", "answered"]
    assert KEY not in chat.stdout + chat.stderr
    sessions = (index / "sessions.db").read_bytes()
    for wal in index.glob("sessions.db*"):
        sessions += wal.read_bytes()
    assert b"received_headers" in sessions  # the echoed body was stored, redacted
    assert KEY.encode() not in sessions and KEY[3:].encode() not in sessions
    # the server did receive the key (and echoed it): the test would see a leak
    assert all(h["Authorization"] == f"Bearer {KEY}" for h, _ in server.requests)


def test_a_runaway_question_is_refused_with_one_line(index):
    runner = CliRunner()
    ask = runner.invoke(app, ["ask", "住院报销比例" * 2000, "--index", str(index)])
    assert ask.exit_code == 2
    assert ask.stderr.strip().count("\n") == 0
    assert "12000 characters" in ask.stderr and "runtime.max_question_chars" in ask.stderr
    chat = runner.invoke(app, ["chat", "--index", str(index), "--json"],
                         input=f"{'报销' * 1500}\n{QUESTION}\n\n")
    assert chat.exit_code == 0 and "runtime.max_question_chars" in chat.stderr
    assert [json.loads(line)["status"] for line in chat.stdout.splitlines()] == ["answered"]


def test_ask_shows_each_fallback_and_the_wall_time_with_the_llm_calls(chat_server, index):
    """A model that answers slowly with something that is not JSON: the printed answer is the
    deterministic one, lists every gate that fell back and why, and its total counts the time
    spent waiting for the model (the per-step times alone would hide it)."""
    import time as _time

    def slow_garbage(body):
        _time.sleep(0.4)
        return "This is a sample."

    server = chat_server(slow_garbage)
    args = ["ask", "报销比例是多少？", "--llm", "openai", "--llm-base-url", server.base_url,
            "--llm-model", "m", "--index", str(index)]
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0, shown.output
    text = shown.stdout
    assert text.startswith("answered") and "90%" in text
    section = text.split("Fallbacks", 1)[1]
    calls = len(server.requests)
    assert calls >= 2  # one gate asked, and asked again with the validation error
    assert "invalid output" in section and "(after one retry)" in section
    gates = [line.split(":", 1)[0].strip(" -") for line in section.splitlines() if line.startswith(" - ")]
    assert gates and set(gates) <= {"retrieve_or_not", "plan", "sufficiency", "verify", "route"}
    footer = text.strip().splitlines()[-1]
    assert f"LLM {calls} calls" in footer
    total = footer.rsplit("total", 1)[1].strip()
    total_ms = float(total[:-2]) * 1000 if total.endswith(" s") else float(total.split()[0])
    assert total_ms >= 400 * calls  # the model's time is in the total

    as_json = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert [f["gate"] for f in as_json["fallbacks"]] == gates
    assert all("invalid output" in f["reason"] for f in as_json["fallbacks"])
    assert as_json["usage"]["llm_calls"] == calls and as_json["usage"]["wall_ms"] >= as_json["usage"]["llm_ms"] >= 400 * calls
    assert sum(e["kind"] == "llm" for e in as_json["trace"]) == calls
