"""`arag eval` as a user runs it (with the stub standing in for the engine)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from agentic_rag.cli import app


@pytest.fixture
def cli(monkeypatch, stub_backend, tmp_path):
    import agentic_rag.eval as ev

    monkeypatch.setattr(ev, "EngineBackend", lambda settings=None: stub_backend)
    monkeypatch.setenv("ARAG_EVAL_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def test_json_has_the_documented_shape_and_a_run_folder_is_written(cli, bench, tmp_path):
    res = cli.invoke(app, ["eval", "hotpotqa", "--bench-dir", str(bench), "--json", "--out", "runs"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) == {"set", "questions", "k", "metrics", "baseline", "latency_ms"}
    assert data["set"] == "hotpotqa" and data["questions"] == 2 and data["k"] == 8
    assert {"all@8", "recall@5", "mrr@10", "accuracy"} <= set(data["metrics"])
    assert set(data["latency_ms"]) == {"p50", "p95"}
    [folder] = list((tmp_path / "runs").iterdir())
    assert {p.name for p in folder.iterdir()} == {"results.json", "details.jsonl", "report.md", "chart.png"}
    detail = json.loads((folder / "details.jsonl").read_text("utf-8").splitlines()[0])
    assert {"question", "retrieved", "answer", "verdicts"} <= set(detail)


def test_k_and_limit_options(cli, bench):
    res = cli.invoke(app, ["eval", "hotpotqa", "--bench-dir", str(bench), "--json", "--k", "2", "--limit", "1"])
    data = json.loads(res.stdout)
    assert data["k"] == 2 and data["questions"] == 1 and "all@2" in data["metrics"]


def test_answers_option_scores_where_statute_answers_come_from(cli, bench):
    res = cli.invoke(app, ["eval", "lecoqa", "--bench-dir", str(bench), "--json", "--answers"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["metrics"]["gold_cited"] == 1.0 and data["baseline"]["gold_cited"] == 1.0
    assert data["metrics"]["false_rejection_rate"] == 0.0


def test_table_output_shows_ours_beside_bm25(cli, bench):
    res = cli.invoke(app, ["eval", "rgb/en_fact", "--bench-dir", str(bench)])
    assert res.exit_code == 0, res.output
    assert "BM25" in res.stdout and "conflict_detected" in res.stdout and "run folder:" in res.stdout


def test_unknown_set_is_one_line_and_exit_2(cli, bench):
    res = cli.invoke(app, ["eval", "nope", "--bench-dir", str(bench)])
    assert res.exit_code == 2
    assert "unknown benchmark set 'nope'" in res.output and len(res.output.strip().splitlines()) == 1


def test_compare_lists_questions_that_changed(cli, bench, tmp_path):
    a = cli.invoke(app, ["eval", "hotpotqa", "--bench-dir", str(bench), "--json", "--out", "runs"])
    assert a.exit_code == 0
    held = tmp_path / "held.jsonl"
    rows = [json.loads(x) for x in (bench / "hotpotqa" / "dev.jsonl").read_text("utf-8").splitlines()]
    rows[1]["gold"] = ["p4"]  # the same question now expects another passage
    held.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    b = cli.invoke(app, ["eval", "hotpotqa", "--bench-dir", str(bench), "--questions", str(held),
                         "--json", "--out", "runs"])
    assert b.exit_code == 0
    run_a, run_b = sorted((tmp_path / "runs").iterdir())
    res = cli.invoke(app, ["eval", "compare", str(run_a), str(run_b), "--json"])
    diff = json.loads(res.stdout)
    assert [q["key"] for q in diff["questions"]] == ["q2"] and diff["same"] == 1
    before, after = diff["questions"][0]["changes"]["mrr@10"]
    assert before == 1.0 and after < 1.0
    text = cli.invoke(app, ["eval", "compare", str(run_a), str(run_b)])
    assert "q2" in text.stdout
    bad = cli.invoke(app, ["eval", "compare", str(run_a)])
    assert bad.exit_code == 2
