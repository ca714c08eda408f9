"""Metric functions on hand-computed cases."""

from __future__ import annotations

import pytest

from agentic_rag.eval import metrics as M
from agentic_rag.types import Answer, AnswerSentence, Citation, Conflict, ConflictValue


# -- retrieval -------------------------------------------------------------------------------
def test_recall_all_and_mrr_on_a_hand_ranked_list():
    ranked = ["x", "a", "y", "b", "z", "c"]
    gold = ["a", "b", "c"]
    assert M.recall_at(ranked, gold, 2) == pytest.approx(1 / 3)
    assert M.recall_at(ranked, gold, 5) == pytest.approx(2 / 3)
    assert M.recall_at(ranked, gold, 10) == 1.0
    assert M.all_at(ranked, gold, 5) == 0.0
    assert M.all_at(ranked, gold, 6) == 1.0
    assert M.mrr_at(ranked, gold, 10) == 0.5


def test_duplicate_units_count_once_at_their_best_rank():
    # three chunks of one article tie for the top ranks: the article takes rank 1, the next unit rank 2
    ranked = ["art1", "art1", "art1", "art2", "art3"]
    assert M.dedupe(ranked) == ["art1", "art2", "art3"]
    assert M.recall_at(ranked, ["art2"], 2) == 1.0
    assert M.mrr_at(ranked, ["art3"], 10) == pytest.approx(1 / 3)
    # a gold list that repeats a unit is one gold unit
    assert M.recall_at(["a"], ["a", "a"], 1) == 1.0


def test_empty_retrieval_scores_zero_and_empty_gold_is_refused():
    assert M.recall_at([], ["a"], 5) == 0.0
    assert M.all_at([], ["a"], 8) == 0.0
    assert M.mrr_at([], ["a"]) == 0.0
    with pytest.raises(ValueError):
        M.recall_at(["a"], [], 5)


def test_mrr_beyond_cutoff_is_zero():
    ranked = [f"u{i}" for i in range(12)] + ["g"]
    assert M.mrr_at(ranked, ["g"], 10) == 0.0


def test_retrieval_scores_names():
    s = M.retrieval_scores(["a", "b"], ["b"], 8)
    assert set(s) == {"all@8", "recall@2", "recall@5", "recall@8", "recall@10", "mrr@10"}
    assert s["mrr@10"] == 0.5 and s["all@8"] == 1.0


# -- answers ---------------------------------------------------------------------------------
def test_alias_list_any_alias_counts_case_and_space_insensitive():
    assert M.contains_alias("He was born in  new york city.", ["NYC", "New York"], "en")
    assert M.contains_alias("G. Stanley Hall founded it", ["g.stanley hall"], "en")
    assert not M.contains_alias("Boston", ["New York", ""], "en")
    assert M.contains_alias("共有７０个议席", ["70"], "zh")  # full-width digits


def test_answer_text_is_capped_per_language():
    zh = "无" * 200 + "12人"
    assert not M.contains_alias(zh, ["12人"], "zh")
    assert M.contains_alias("无" * 197 + "12人", ["12人"], "zh")
    en = "x" * 300 + " Paris"
    assert not M.contains_alias(en, ["Paris"], "en")
    assert M.contains_alias("x" * 290 + " Paris", ["Paris"], "en")


def test_all_parts_present_needs_every_part():
    parts = [["1月3日"], ["12月19日", "12.19"]]
    assert M.all_parts_present("分别是1月3日和12.19", parts, "zh")
    assert not M.all_parts_present("1月3日", parts, "zh")
    assert M.parts_present("1月3日", parts, "zh") == [True, False]
    assert not M.all_parts_present("anything", [], "zh")


def test_rejection_is_the_abstained_status():
    assert M.is_rejection(Answer(text="未找到", status="abstained"))
    assert not M.is_rejection(Answer(text="12人", status="answered"))


# -- conflicts -------------------------------------------------------------------------------
def _conflict(values: list[str], winner: int) -> Conflict:
    vals = [ConflictValue(value=v, chunk_id=f"c{i}") for i, v in enumerate(values)]
    return Conflict(matter="seats", values=vals, winner=f"c{winner}", rule="newer (≥1 year)")


def test_conflict_needs_both_values_and_reports_the_winner():
    assert M.conflict_verdict([_conflict(["70个议席", "170个议席"], 0)], ["70"], ["170"]) == (True, "true")
    assert M.conflict_verdict([_conflict(["70", "170"], 1)], ["70"], ["170"]) == (True, "fake")
    # "170" contains "70": two mentions of the fake value are not the true value
    assert M.conflict_verdict([_conflict(["170", "170席"], 0)], ["70"], ["170"]) == (False, None)
    assert M.conflict_verdict([_conflict(["70", "80"], 0)], ["70"], ["170"]) == (False, None)
    assert M.conflict_verdict([], ["70"], ["170"]) == (False, None)


def test_conflict_winner_naming_neither_value_is_other():
    c = _conflict(["Tampa, Florida", "Glendale, Arizona", "Miami"], 2)
    assert M.conflict_verdict([c], ["Tampa, Florida", "Tampa"], ["Glendale, Arizona"]) == (True, "other")


# -- citations -------------------------------------------------------------------------------
def _answer(sentences: list[tuple[str, list[str]]], quotes: dict[str, str]) -> Answer:
    return Answer(text="".join(s for s, _ in sentences), status="answered",
                  sentences=[AnswerSentence(text=s, citations=c) for s, c in sentences],
                  citations=[Citation(chunk_id=k, doc_id="d", title="t", quote=q) for k, q in quotes.items()])


def test_cited_sentence_share():
    a = _answer([("报销比例为70%。", ["c1"]), ("另见附录。", [])], {"c1": "比例为70%"})
    assert M.cited_sentence_share(a) == 0.5
    assert M.cited_sentence_share(Answer(text="未找到", status="abstained")) is None
    assert M.cited_sentence_share(Answer(text="a. b.", status="answered")) == 0.0


def test_citation_precision_checks_quotes_of_fact_sentences_only():
    a = _answer([("报销比例为70%。", ["c1", "c2"]), ("另见附录。", ["c3"])],
                {"c1": "住院报销比例为70%", "c2": "门诊报销比例为50%", "c3": "附录"})
    assert M.citation_precision(a, [["70%"]]) == (1, 2)
    assert M.citation_precision(a, [["90%"]]) == (0, 0)


# -- process and latency ---------------------------------------------------------------------
def test_repeated_query_rate():
    # within one retrieval step a query counts once; running "x" again in a later step repeats it
    assert M.repeated_query_rate([["x", "y", "X "], ["x", "z"]]) == pytest.approx(1 / 4)
    assert M.repeated_query_rate([["a"], ["a"], ["a"]]) == pytest.approx(2 / 3)
    assert M.repeated_query_rate([]) is None


def test_percentiles_with_ties_match_numpy_linear():
    xs = [10.0, 10.0, 10.0, 40.0]
    assert M.percentile(xs, 50) == 10.0
    assert M.percentile(xs, 95) == pytest.approx(35.5)  # 10 + 0.85 * 30
    assert M.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert M.percentile([], 50) is None


def test_mean_skips_missing():
    assert M.mean([1.0, None, 0.0]) == 0.5
    assert M.mean([None]) is None


def test_a_conflict_no_rule_decides_is_undecided_whichever_value_is_listed_first():
    c = _conflict(["Glendale, Arizona", "Tampa, Florida"], 0).model_copy(update={"rule": "undecided"})
    assert M.conflict_verdict([c], ["Tampa, Florida"], ["Glendale, Arizona"]) == (True, "undecided")
