"""Loading benchmark sets from small fixture files."""

from __future__ import annotations

import pytest

from agentic_rag.errors import EvalError
from agentic_rag.eval.datasets import article_unit, cn_number, find_bench_dir, load_set


def test_passage_set_loads_gold_and_aliases(bench):
    s = load_set("hotpotqa", bench_dir=bench)
    assert [q.id for q in s.questions] == ["q1", "q2"]
    assert s.questions[0].gold == ["p1", "p2"]
    assert s.questions[0].parts == [["Seine"]]
    assert s.corpus == [bench / "hotpotqa" / "corpus.jsonl"]


def test_questions_file_replaces_dev_and_limit_cuts(bench, tmp_path, jsonl):
    held = jsonl(tmp_path / "held.jsonl", [
        {"id": "h1", "question": "Where is Berlin?", "answers": ["Germany"], "gold": ["p3"]},
        {"id": "h2", "question": "Where is Paris?", "answers": ["France"], "gold": ["p1"]}])
    s = load_set("hotpotqa", bench_dir=bench, questions=held, limit=1)
    assert [q.id for q in s.questions] == ["h1"]
    assert s.questions_file == held


def test_rgb_sets_keep_their_passages(bench):
    noise = load_set("rgb/zh_noise", bench_dir=bench).questions[0]
    assert len(noise.passages["positive"]) == 5 and len(noise.passages["negative"]) == 6
    integ = load_set("rgb/zh_int", bench_dir=bench).questions[0]
    assert integ.parts == [["1月3日"], ["12月19日", "12.19"]]
    assert [len(g) for g in integ.passage_groups] == [2, 1]
    fact = load_set("rgb/en_fact", bench_dir=bench).questions[0]
    assert fact.fake == ["170"] and fact.parts == [["70"]]
    assert fact.passages["positive_wrong"] == ["The council has 170 seats."]


def test_examples_set_reads_facts_citations_abstain_and_conflict(tmp_path, monkeypatch, jsonl):
    ex = tmp_path / "examples"
    (ex / "docs").mkdir(parents=True)
    (ex / "docs" / "a.md").write_text("第三条 报销比例为70%。", "utf-8")
    jsonl(ex / "questions.jsonl", [
        {"question": "报销比例？", "type": "single", "lang": "zh", "answers": ["70%"], "facts": [["70%", "百分之七十"]],
         "citations": [{"source": "docs/a.md", "clause": "第三条"}], "abstain": False,
         "conflict": {"winner": "70%", "loser": "60%", "rule": "newer"}},
        {"question": "火星移民政策？", "answers": [], "facts": [], "citations": [], "abstain": True}])
    monkeypatch.chdir(tmp_path)
    s = load_set("examples")
    q1, q2 = s.questions
    assert q1.parts == [["70%", "百分之七十"]] and q1.gold == ["a.md#第三条"]
    assert q1.conflict is not None and q1.conflict.winner == "70%"
    assert not q2.answerable
    assert s.corpus == [ex / "docs"]


def test_unknown_set_and_missing_files_name_what_is_wrong(bench, tmp_path):
    with pytest.raises(EvalError, match="unknown benchmark set 'nope'"):
        load_set("nope", bench_dir=bench)
    with pytest.raises(EvalError, match="benchmark folder not found"):
        load_set("hotpotqa", bench_dir=tmp_path / "missing")
    with pytest.raises(EvalError, match="musique"):
        load_set("musique", bench_dir=bench)
    with pytest.raises(EvalError, match="questions file not found"):
        load_set("hotpotqa", bench_dir=bench, questions=tmp_path / "none.jsonl")


def test_malformed_line_names_file_and_line(bench, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "question": "ok?"}\n{not json}\n', "utf-8")
    with pytest.raises(EvalError, match=r"bad.jsonl:2"):
        load_set("hotpotqa", bench_dir=bench, questions=bad)
    bad.write_text('{"id": "a", "answers": []}\n', "utf-8")
    with pytest.raises(EvalError, match=r"bad.jsonl:1: missing 'question'"):
        load_set("hotpotqa", bench_dir=bench, questions=bad)


def test_bench_dir_is_found_beside_a_parent(bench, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    shared = tmp_path / "shared"
    shared.mkdir()
    bench.rename(shared / "bench")
    monkeypatch.delenv("ARAG_BENCH_DIR", raising=False)
    assert find_bench_dir(start=project) == shared / "bench"


def test_article_names_normalize_on_both_sides():
    assert article_unit("中华人民共和国民法典第五十四条") == "民法典第54条"
    assert article_unit("民法典第54条") == "民法典第54条"
    assert article_unit("刑法第一百三十三条之一") == "刑法第133条之1"
    assert cn_number("一百零五") == 105 and cn_number("十二") == 12 and cn_number("两千") == 2000
    assert cn_number("abc") is None


def test_examples_questions_elsewhere_bring_their_own_docs(tmp_path, monkeypatch, jsonl):
    ex = tmp_path / "examples"
    (ex / "docs").mkdir(parents=True)
    jsonl(ex / "questions.jsonl", [{"question": "a?", "answers": ["x"]}])
    (ex / "holdout" / "docs").mkdir(parents=True)
    held = jsonl(ex / "holdout" / "questions.jsonl", [{"question": "b?", "answers": ["y"]}])
    monkeypatch.chdir(tmp_path)
    s = load_set("examples", questions=held)
    assert s.corpus == [ex / "holdout" / "docs"] and s.questions[0].question == "b?"


def test_the_statute_short_answer_file_loads_every_question_as_scored(bench):
    from pathlib import Path

    qfile = Path(__file__).resolve().parents[2] / "bench" / "data" / "lecoqa_short.jsonl"
    s = load_set("lecoqa", bench_dir=bench, questions=qfile)
    assert len(s.questions) == 34
    assert all(s.spec.scores_answer(q) for q in s.questions)
    unanswerable = [q for q in s.questions if not q.answerable]
    assert len(unanswerable) == 6 and all(not q.gold for q in unanswerable)
    # every answerable question names the article it is answered from, as lecoqa's gold does
    assert all(q.gold and q.gold[0].endswith("条") for q in s.questions if q.answerable)
