"""The runner end to end on tiny synthetic sets, with a stub system under test."""

from __future__ import annotations

import json
import threading
import time

from agentic_rag.eval import load_set, run_eval
from agentic_rag.eval.report import load_run, write_run
from agentic_rag.eval.runner import cached_index, rgb_variants

from .conftest import StubBackend


def test_passage_set_scores_ours_and_the_floor_and_caches_the_index(bench, stub_backend, tmp_path):
    s = load_set("hotpotqa", bench_dir=bench)
    run = run_eval(s, stub_backend, k=8, cache_dir=tmp_path / "cache")
    assert run.questions == 2 and run.k == 8
    for name in ("all@8", "recall@2", "recall@5", "recall@8", "recall@10", "mrr@10", "accuracy"):
        assert name in run.metrics and name in run.baseline
    q2 = next(r for r in run.rows if r.id == "q2")
    assert q2.retrieved[0] == "p3" and q2.verdicts["mrr@10"] == 1.0
    assert q2.baseline_retrieved[0] == "p3"
    assert run.latency_ms["p50"] is not None
    assert run.index["built"] is True
    again = run_eval(s, stub_backend, k=8, cache_dir=tmp_path / "cache")
    assert stub_backend.builds == 1 and again.index["built"] is False
    assert again.metrics == run.metrics


def test_corpus_change_rebuilds_the_cached_index(bench, stub_backend, tmp_path):
    s = load_set("hotpotqa", bench_dir=bench)
    run_eval(s, stub_backend, cache_dir=tmp_path / "cache")
    with (bench / "hotpotqa" / "corpus.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"id": "p5", "title": "Rome", "text": "Rome is in Italy.", "meta": {}}) + "\n")
    run_eval(s, stub_backend, cache_dir=tmp_path / "cache")
    assert stub_backend.builds == 2
    # the new build reuses the old one's caches, and the old build is kept as a fallback
    first = stub_backend.seeds[1].parent
    assert stub_backend.seeds[0] is None and first.name.startswith("hotpotqa-")
    assert len([p for p in (tmp_path / "cache").iterdir() if p.is_dir()]) == 2


def test_a_second_eval_waits_for_the_first_build_of_the_same_index(bench, tmp_path):
    """Two evals of one set at once: the second uses the first's build instead of deleting it
    half-way (which failed the first with a missing BM25 manifest)."""
    started, done = threading.Event(), []

    class Slow(StubBackend):
        def build(self, sources, index_dir, **kw):
            started.set()
            time.sleep(0.3)
            super().build(sources, index_dir, **kw)
            done.append(index_dir)

    backend, corpus = Slow(), [bench / "hotpotqa" / "corpus.jsonl"]
    first = threading.Thread(target=lambda: cached_index("hotpotqa", corpus, backend, tmp_path / "cache"))
    first.start()
    started.wait(5)
    folder, built, _ = cached_index("hotpotqa", corpus, backend, tmp_path / "cache")
    first.join()
    assert built is False and backend.builds == 1
    assert folder == done[0] and (folder.parent / ".complete").exists()


def test_article_set_counts_chunks_for_the_named_article(bench, stub_backend, tmp_path):
    run = run_eval(load_set("lecoqa", bench_dir=bench), stub_backend, k=5, cache_dir=tmp_path / "cache")
    row = run.rows[0]
    assert row.gold == ["个体工商户条例第2条"]  # gold names and chunks meet in one canonical form
    assert row.retrieved[0] == "个体工商户条例第2条"  # title 个体工商户条例 + clause 第二条
    assert "个体工商户条例第2条" in row.baseline_retrieved
    assert run.metrics["recall@5"] == 1.0 and run.baseline["recall@5"] == 1.0
    assert "accuracy" not in run.metrics  # lecoqa answers are free text, not aliases


def test_a_questions_file_with_short_answers_scores_answers_in_a_retrieval_set(bench, stub_backend, tmp_path, jsonl):
    # statute questions whose file gives short facts (or says the statutes cannot answer them)
    # are scored on their answers; one with only the set's free-text answer still is not
    qfile = jsonl(tmp_path / "short.jsonl", [
        {"id": "s1", "question": "谁可以成为个体工商户？", "answers": ["有经营能力的公民"],
         "facts": [["有经营能力的公民"]], "gold": ["个体工商户条例第二条"]},
        {"id": "s2", "question": "民法调整什么关系？", "answers": ["人身关系和财产关系"],
         "gold": ["中华人民共和国民法典第二条"]},
        {"id": "s3", "question": "离婚冷静期是多少天？", "answers": [], "gold": [], "abstain": True},
    ])
    run = run_eval(load_set("lecoqa", bench_dir=bench, questions=qfile), stub_backend, k=5,
                   cache_dir=tmp_path / "cache")
    verdicts = {r.id: r.verdicts for r in run.rows}
    assert verdicts["s1"]["accuracy"] == 1.0
    assert "accuracy" not in verdicts["s2"]
    assert verdicts["s3"]["rejection_rate"] == 1.0  # the stub finds nothing on 离婚冷静期 and abstains
    assert run.metrics["accuracy"] == 1.0 and run.metrics["rejection_rate"] == 1.0
    assert run.baseline["rejection_rate"] == 0.0


def test_answers_in_a_retrieval_set_are_scored_by_the_article_they_cite(bench, stub_backend, tmp_path, jsonl):
    # free-text answers are no aliases to look for; where the answer comes from is: a user
    # reads the first sentence's citation, which should be the article that answers
    qfile = jsonl(tmp_path / "cited.jsonl", [
        {"id": "c1", "question": "有经营能力的公民怎样成为个体工商户？", "answers": ["..."],
         "gold": ["个体工商户条例第二条"]},
        {"id": "c2", "question": "民法调整哪些关系？", "answers": ["..."], "gold": ["个体工商户条例第二条"]},
        {"id": "c3", "question": "离婚冷静期是多少天？", "answers": ["..."], "gold": ["中华人民共和国民法典第二条"]},
    ])
    s = load_set("lecoqa", bench_dir=bench, questions=qfile)
    run = run_eval(s, stub_backend, k=5, cache_dir=tmp_path / "cache", answers=True)
    verdicts = {r.id: r.verdicts for r in run.rows}
    assert verdicts["c1"]["gold_cited"] == 1.0 and verdicts["c1"]["false_rejection_rate"] == 0.0
    assert verdicts["c2"]["gold_cited"] == 0.0  # answered from the civil code, not the article asked
    assert verdicts["c3"]["gold_cited"] == 0.0 and verdicts["c3"]["false_rejection_rate"] == 1.0
    assert "accuracy" not in run.metrics  # the lawyers' paragraphs are still not matched
    # the floor's answer is its top article: 个体工商户条例第2条 for c1, the civil code for c2
    assert {r.id: r.baseline_verdicts["gold_cited"] for r in run.rows} == {"c1": 1.0, "c2": 0.0, "c3": 0.0}
    assert any("gold_cited" in n for n in run.notes)
    plain = run_eval(s, stub_backend, k=5, cache_dir=tmp_path / "cache")
    assert "gold_cited" not in plain.metrics and "false_rejection_rate" not in plain.metrics


def test_noise_set_runs_every_ratio_with_fresh_indexes(bench, stub_backend, tmp_path):
    run = run_eval(load_set("rgb/zh_noise", bench_dir=bench), stub_backend, k=8, cache_dir=tmp_path / "cache")
    assert [r.variant for r in run.rows] == ["noise=0", "noise=0.2", "noise=0.4", "noise=0.6", "noise=0.8", "noise=1"]
    # one cached index of every passage used, whose caches seed the six fresh indexes
    assert stub_backend.builds == 7
    pool = stub_backend.seeds[1]
    assert stub_backend.seeds[0] is None and stub_backend.seeds[1:] == [pool] * 6
    assert run.metrics["accuracy"] == 1.0 and run.metrics["accuracy@0.8"] == 1.0
    # the retrieval side: the top passage holds the date (at noise 0.8 one positive is left)
    assert run.metrics["passage_accuracy"] == 1.0 and run.baseline["passage_accuracy"] == 1.0
    assert run.metrics["rejection_rate"] == 1.0  # five negatives: the stub abstains
    assert run.metrics["false_rejection_rate"] == 0.0
    assert run.baseline["rejection_rate"] == 0.0  # the floor never abstains
    assert run.metrics["cited_sentences"] == 1.0
    again = run_eval(load_set("rgb/zh_noise", bench_dir=bench), stub_backend, k=8, cache_dir=tmp_path / "cache")
    assert stub_backend.builds == 13 and again.metrics == run.metrics  # the pool came from the cache


def test_noise_sampling_is_deterministic_and_follows_the_ratio(bench):
    q = load_set("rgb/zh_noise", bench_dir=bench).questions[0]
    first = list(rgb_variants("rgb_noise", q))
    assert first == list(rgb_variants("rgb_noise", q))
    neg = set(q.passages["negative"])
    assert [sum(p in neg for p in ps) for _, ps, _ in first] == [0, 1, 2, 3, 4, 5]
    assert all(len(ps) == 5 for _, ps, _ in first)
    assert [ok for *_, ok in first] == [True] * 5 + [False]


def test_integration_set_covers_each_part(bench, stub_backend, tmp_path):
    q = load_set("rgb/zh_int", bench_dir=bench).questions[0]
    [(_, passages, _)] = list(rgb_variants("rgb_int", q))
    assert "选举在12月19日举行。" in passages
    run = run_eval(load_set("rgb/zh_int", bench_dir=bench), stub_backend, cache_dir=tmp_path / "c")
    # the stub answers with one sentence, so one of the two parts is missing
    assert run.metrics["accuracy"] == 0.0 and run.metrics["facts_present"] == 0.5


def test_fact_set_detects_the_conflict(bench, stub_backend, tmp_path):
    run = run_eval(load_set("rgb/en_fact", bench_dir=bench), stub_backend, cache_dir=tmp_path / "c")
    assert run.metrics["conflict_detected"] == 1.0
    assert run.baseline["conflict_detected"] == 0.0
    assert "conflict_true_won" in run.metrics


def test_examples_set_end_to_end(tmp_path, monkeypatch, stub_backend, jsonl):
    ex = tmp_path / "examples"
    (ex / "docs").mkdir(parents=True)
    (ex / "docs" / "policy.md").write_text("第三条 住院报销比例为70%。\n第四条 门诊报销比例为50%。\n", "utf-8")
    jsonl(ex / "questions.jsonl", [
        {"question": "住院报销比例是多少", "lang": "zh", "answers": ["70%"], "facts": [["70%"]],
         "citations": [{"source": "docs/policy.md", "clause": "第三条"}], "abstain": False},
        {"question": "火星移民补贴", "lang": "zh", "answers": [], "facts": [], "citations": [], "abstain": True}])
    monkeypatch.chdir(tmp_path)
    run = run_eval(load_set("examples"), stub_backend, cache_dir=tmp_path / "cache")
    assert run.rows[0].retrieved[0] == "policy.md#第三条"
    assert run.metrics["recall@2"] == 1.0
    assert run.metrics["accuracy"] == 1.0 and run.metrics["citation_precision"] == 1.0
    assert run.metrics["rejection_rate"] == 1.0
    assert run.baseline["recall@2"] == 1.0  # BM25 over the same clause units


def test_run_folder_round_trips(bench, stub_backend, tmp_path):
    run = run_eval(load_set("hotpotqa", bench_dir=bench), stub_backend, cache_dir=tmp_path / "cache")
    folder = write_run(run, tmp_path / "runs")
    assert folder.name.startswith("hotpotqa-")
    for name in ("results.json", "details.jsonl", "report.md", "chart.png"):
        assert (folder / name).stat().st_size > 0
    summary, rows = load_run(folder)
    assert summary["metrics"] == run.metrics and len(rows) == 2
    assert "| all@8 |" in (folder / "report.md").read_text("utf-8")


def test_process_verdicts_read_usage_and_count_executed_repeats():
    from agentic_rag.eval.runner import process_verdicts
    from agentic_rag.types import Answer, TraceEvent, Usage

    trace = [TraceEvent(kind="route", args={"query": "q"}),
             TraceEvent(kind="gate", tool="plan", args={"queries": ["a", "b"]}),  # a plan, not a search
             TraceEvent(kind="retrieve", args={"round": 1, "queries": ["a", "b"]}),
             TraceEvent(kind="hop", args={"round": 2, "query": "b"}),
             TraceEvent(kind="retrieve", args={"round": 2, "queries": ["b", "c"]}),
             TraceEvent(kind="blocked", args={"query": "a"}),  # the runtime refused to repeat it
             TraceEvent(kind="retrieve", args={"round": 1, "queries": ["c"]})]
    a = Answer(text="x", status="answered", trace=trace,
               usage=Usage(retrieval_rounds=2, tool_calls=3, llm_calls=2, prompt_tokens=100, completion_tokens=20))
    v = process_verdicts(a)
    assert v == {"rounds": 3.0, "tool_calls": 3.0, "llm_calls": 2.0, "tokens": 120.0,
                 "repeated_query_rate": 0.4}  # three searches: a, b | b (repeat), c | c (repeat)


def test_a_question_the_system_fails_on_counts_as_a_miss(bench, stub_backend, tmp_path, monkeypatch):
    from agentic_rag.errors import StoreError

    StubSystem = stub_backend.system_class
    real = StubSystem.retrieve

    def flaky(self, question, k):
        if "Germany" in question:
            raise StoreError("index is locked")
        return real(self, question, k)

    monkeypatch.setattr(StubSystem, "retrieve", flaky)
    run = run_eval(load_set("hotpotqa", bench_dir=bench), stub_backend, cache_dir=tmp_path / "cache")
    bad = next(r for r in run.rows if r.id == "q2")
    assert bad.error == "StoreError: index is locked"
    assert bad.verdicts["recall@2"] == 0.0 and bad.verdicts["accuracy"] == 0.0
    assert bad.baseline_verdicts["recall@2"] == 1.0  # the floor is still scored
    assert run.notes[-1] == "1 questions raised an error (see details.jsonl)"


def test_the_index_cache_key_reads_every_part_of_the_package_ingest_uses():
    from pathlib import Path

    import agentic_rag
    from agentic_rag.eval.runner import INDEX_CODE

    root = Path(agentic_rag.__file__).parent
    # a name that no longer exists would silently drop out of the key, and a cached index
    # built by older code would be measured as if it were new
    assert [n for n in INDEX_CODE if not (root / n).exists()] == []
    # ingest cuts clauses with text/ helpers and segments with data/ tables' terms
    assert {"text", "data", "ingest"} <= set(INDEX_CODE)
