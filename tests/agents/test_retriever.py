"""Retriever: fusion, slot filters, graph expansion, versions, diversity, dedupe, multi-hop."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

import numpy as np
import pytest

from agentic_rag.agents.retriever import Retriever, expand_query, fuse_rrf, fuse_weighted
from agentic_rag.agents.router import Router
from agentic_rag.config import RetrievalSettings
from agentic_rag.types import Edge, RouteDecision, Slots



def route(query: str, **kw) -> RouteDecision:
    return RouteDecision(question=kw.pop("question", query), query=query, **kw)


# -- fusion on hand-made scores ---------------------------------------------------------------

def test_weighted_fusion_normalizes_each_leg_and_renormalizes_absent_weights() -> None:
    weights = {"vector": 0.4, "bm25": 0.3, "graph": 0.2, "position": 0.1}
    legs = {"bm25": {"a": 10.0, "b": 5.0, "c": 0.0}, "vector": {"b": 0.9, "c": 0.5}}
    fused = fuse_weighted(legs, weights, {"a": 1.0, "b": 1.0, "c": 0.3})
    # graph absent: the other weights sum to 0.8 and are scaled to 1; bm25 10/5/0 -> 1/0.5/0,
    # vector 0.9/0.5 -> 1/0
    assert fused["b"] == pytest.approx((0.3 * 0.5 + 0.4 * 1.0 + 0.1) / 0.8)
    assert fused["a"] == pytest.approx((0.3 * 1.0 + 0.1) / 0.8)
    assert fused["c"] == pytest.approx((0.1 * 0.3) / 0.8)
    assert fused["b"] > fused["a"] > fused["c"]
    # a single leg that agrees on everything still yields a full score for a body chunk
    assert fuse_weighted({"bm25": {"x": 2.0}}, weights, {"x": 1.0}) == {"x": 1.0}


def test_rrf_fusion_sums_reciprocal_ranks_and_respects_position() -> None:
    fused = fuse_rrf({"bm25": ["a", "b", "c"], "vector": ["c", "a"]}, rrf_k=60,
                     position={"a": 1.0, "b": 1.0, "c": 0.3})
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62)
    assert fused["c"] == pytest.approx((1 / 63 + 1 / 61) * (1 - 0.1 * 0.7))
    assert max(fused, key=fused.get) == "a"


# -- a small policy corpus ----------------------------------------------------------------------

@pytest.fixture
def policy(store: Any, add_doc) -> Any:
    old = add_doc(store, "old", "医疗保障待遇办法（2023年版）", [
        ("第三条", "参保人员住院发生的医疗费用按规定报销，具体比例详见第七条。"),
        ("第七条", "职工住院医疗费用报销比例为80%，退休人员为85%。"),
        ("第九条", "报销申请应当在出院后5日内提交。"),
    ], publish_date=dt.date(2023, 3, 1), status="superseded")
    new = add_doc(store, "new", "医疗保障待遇办法（2024年修订）", [
        ("第三条", "参保人员住院发生的医疗费用按规定报销，具体比例详见第七条。"),
        ("第七条", "职工住院医疗费用报销比例调整为85%，退休人员调整为90%。"),
        ("第九条", "报销申请应当在出院后3个工作日内提交。"),
    ], publish_date=dt.date(2024, 5, 1))
    store.add_edges([
        Edge(src=old[0].chunk_id, dst=old[1].chunk_id, kind="REFERENCES", phrase="详见第七条"),
        Edge(src=new[0].chunk_id, dst=new[1].chunk_id, kind="REFERENCES", phrase="详见第七条"),
        Edge(src="new", dst="old", kind="SUPERSEDES", phrase="2023年版同时废止"),
    ])
    add_doc(store, "sz", "深圳市门诊慢特病管理细则", [
        ("第二条", "深圳市参保人门诊慢特病医疗费用报销比例为70%。")],
        publish_date=dt.date(2024, 1, 1), extra={"place": "深圳市"})
    add_doc(store, "bj", "北京市门诊慢特病管理细则", [
        ("第二条", "北京市参保人门诊慢特病医疗费用报销比例为75%。")],
        publish_date=dt.date(2024, 1, 1), extra={"place": "北京市"})
    add_doc(store, "leave", "员工休假制度", [
        ("第一条", "员工每年享有带薪年休假（paid time off）五天。")], publish_date=dt.date(2022, 1, 1))
    return store


def ids(evidence) -> list[str]:
    return [e.chunk_id for e in evidence]


def test_evidence_has_unique_ids_and_per_leg_scores(policy: Any) -> None:
    r = Retriever(policy)
    ev = r.retrieve(Router().route("职工住院报销比例是多少"), k=6)
    assert len(ids(ev)) == len(set(ids(ev))) > 0
    assert [e.rank for e in ev] == list(range(1, len(ev) + 1))
    assert all("bm25" in e.scores or "graph" in e.scores for e in ev)
    assert all("position" in e.scores for e in ev)
    assert [e.score for e in ev[:3]] == sorted([e.score for e in ev[:3]], reverse=True)
    assert any(t.kind == "retrieve" for t in r.trace)


def test_cross_reference_brings_the_referenced_clause(policy: Any) -> None:
    r = Retriever(policy)
    # the query only matches 第三条's wording; 第七条 comes through "详见第七条"
    ev = r.retrieve(route("参保人员 住院 按规定 具体比例"), k=4)
    assert "new:a7:1" in ids(ev)
    seventh = next(e for e in ev if e.chunk_id == "new:a7:1")
    assert "graph" in seventh.legs and seventh.scores["graph"] > 0
    graph_steps = [t for t in r.trace if t.tool == "graph"]
    assert graph_steps and "new:a7:1" in graph_steps[0].evidence_ids


def test_superseded_hit_brings_the_current_clause_and_ranks_below_it(policy: Any) -> None:
    r = Retriever(policy)
    # wording found only in the 2023 version ("为80%")
    ev = r.retrieve(route("报销比例为80% 退休人员为85%"), k=5)
    order = ids(ev)
    assert "new:a7:1" in order
    assert order.index("new:a7:1") < order.index("old:a7:1")
    old = next(e for e in ev if e.chunk_id == "old:a7:1")
    assert old.scores["status"] < 1.0


def test_version_and_reference_edges_are_read_once_per_store_version(policy: Any, add_doc) -> None:
    calls = []
    read = policy.edges

    def counted(ids, kind=None, direction="out"):
        calls.append((tuple(ids), kind, direction))
        return read(ids, kind=kind, direction=direction)

    policy.edges = counted
    r = Retriever(policy)
    question = route("报销比例为80% 退休人员为85%")
    first = ids(r.retrieve(question, k=5))
    looked = len(calls)
    assert looked and ids(r.retrieve(question, k=5)) == first
    assert len(calls) == looked  # the same lookups again, answered without the store
    # a write is a new store version: a newer edition's SUPERSEDES edge is seen at once
    add_doc(policy, "v2025", "医疗保障待遇办法（2025年修订）", [
        ("第七条", "职工住院医疗费用报销比例调整为88%，退休人员调整为92%。")], publish_date=dt.date(2025, 2, 1))
    policy.add_edges([Edge(src="v2025", dst="new", kind="SUPERSEDES", phrase="2024年修订版同时废止")])
    again = ids(r.retrieve(question, k=5))
    assert len(calls) > looked and "v2025:a7:0" in again


def test_chunks_are_read_once_per_store_version_and_a_rewrite_is_seen(policy: Any, add_doc) -> None:
    calls = []
    read, read_doc = policy.get_chunks, policy.chunks

    def counted(ids):
        calls.append(tuple(ids))
        return read(ids)

    def counted_doc(doc_id):
        calls.append(doc_id)
        return read_doc(doc_id)

    policy.get_chunks, policy.chunks = counted, counted_doc
    r = Retriever(policy)
    question = route("按照2023年的规定，报销申请应当在出院后几日内提交",
                     slots=Slots(years=[2023]), version="2023")
    first = r.retrieve(question, k=5)
    looked = len(calls)
    assert looked and ids(r.retrieve(question, k=5)) == ids(first)
    assert len(calls) == looked  # the same chunks and documents again, without the store
    # a re-ingest rewrites a clause under the same chunk id: the new text is what comes back
    add_doc(policy, "old", "医疗保障待遇办法（2023年版）", [
        ("第三条", "参保人员住院发生的医疗费用按规定报销，具体比例详见第七条。"),
        ("第七条", "职工住院医疗费用报销比例为80%，退休人员为85%。"),
        ("第九条", "报销申请应当在出院后7日内提交。"),
    ], publish_date=dt.date(2023, 3, 1), status="superseded")
    again = {e.chunk_id: e.chunk.text for e in r.retrieve(question, k=5)}
    assert len(calls) > looked
    assert "7日内" in again["old:a9:2"] and "5日内" not in again["old:a9:2"]


def test_query_expansion_follows_replaced_synonyms(policy: Any) -> None:
    r = Retriever(policy, synonyms=[["年休假", "年假"]])
    assert r._expand("年假怎么休") == ("年假怎么休 年休假", ["年休假"])
    r._expand("年假怎么休")[1].append("x")  # a caller's copy: the kept expansion is unchanged
    assert r._expand("年假怎么休")[1] == ["年休假"]
    r.synonyms = [["年假", "带薪年休假"]]
    assert r._expand("年假怎么休") == ("年假怎么休 带薪年休假", ["带薪年休假"])


def test_pinned_year_prefers_that_version(policy: Any) -> None:
    ev = Retriever(policy).retrieve(Router().route("按照2023年的规定，报销申请应当在出院后几日内提交"), k=3)
    assert ev[0].chunk_id == "old:a9:2"
    latest = Retriever(policy).retrieve(Router().route("报销申请应当在出院后几日内提交"), k=3)
    assert latest[0].chunk_id == "new:a9:2"


def test_place_slot_filters_softly(policy: Any) -> None:
    r = Retriever(policy)
    ev = r.retrieve(Router().route("在深圳市，门诊慢特病报销比例是多少"), k=4)
    order = ids(ev)
    assert order[0] == "sz:a2:0"
    assert order.index("sz:a2:0") < order.index("bj:a2:0")
    # a place no document carries: the filter matches nothing, unfiltered results are used
    r2 = Retriever(policy)
    ev2 = r2.retrieve(Router().route("在杭州市，门诊慢特病报销比例是多少"), k=4)
    assert ev2, "an empty filter must not empty the result"
    assert any(t.kind == "fallback" and "place" in (t.fallback or "") for t in r2.trace)


def test_position_weights_order_identical_matches(store: Any, add_doc) -> None:
    add_doc(store, "fn", "注释", [(None, "差旅住宿费标准为每晚500元（脚注）。")], kind="footnote")
    add_doc(store, "ap", "附录", [(None, "差旅住宿费标准为每晚500元（附录）。")], kind="appendix")
    add_doc(store, "bd", "正文", [(None, "差旅住宿费标准为每晚500元（正文）。")])
    ev = Retriever(store, synonyms=[]).retrieve(route("差旅 住宿费 标准"), k=3)
    assert [e.chunk.kind for e in ev] == ["body", "appendix", "footnote"]
    assert [e.scores["position"] for e in ev] == [1.0, 0.6, 0.3]


def test_near_duplicates_keep_the_current_copy_until_a_write_changes_a_copy(store: Any, add_doc) -> None:
    text = "公积金提取申请材料包括身份证、提取申请表和相关证明。"
    add_doc(store, "a", "公积金提取办法（旧）", [(None, text)], publish_date=dt.date(2020, 1, 1),
             status="superseded")
    add_doc(store, "b", "公积金提取办法", [(None, text)], publish_date=dt.date(2024, 1, 1))
    r = Retriever(store)
    for _ in range(2):  # asked again: the kept check drops the old copy and says so again
        assert ids(r.retrieve(route("公积金提取申请材料"), k=5)) == ["b:p:0"]
        assert any(t.kind == "dedupe" and "a:p:0" in t.evidence_ids for t in r.trace)
    # a re-ingest changes a number of the old copy: a conflict to show now, not a duplicate
    add_doc(store, "a", "公积金提取办法（旧）", [(None, text.replace("材料", "材料3份"))],
            publish_date=dt.date(2020, 1, 1), status="superseded")
    assert ids(r.retrieve(route("公积金提取申请材料"), k=5)) == ["b:p:0", "a:p:0"]
    assert not any(t.kind == "dedupe" for t in r.trace)


def test_versions_that_differ_in_a_number_are_both_kept(store: Any, add_doc) -> None:
    add_doc(store, "a", "公积金提取办法（旧）", [(None, "公积金提取申请应在受理后5个工作日内办结。")],
            publish_date=dt.date(2020, 1, 1), status="superseded")
    add_doc(store, "b", "公积金提取办法", [(None, "公积金提取申请应在受理后3个工作日内办结。")],
            publish_date=dt.date(2024, 1, 1))
    ev = Retriever(store).retrieve(route("公积金提取申请 办结"), k=5)
    # a changed number is a conflict for the Reasoner to state, so both stay, current first
    assert ids(ev) == ["b:p:0", "a:p:0"]


def test_top_five_span_two_documents_when_another_is_relevant(store: Any, add_doc) -> None:
    add_doc(store, "big", "年休假管理办法", [
        (None, f"年休假 天数 规定 第{i}项：员工年休假天数按工龄计算，情形{i}。") for i in range(8)])
    add_doc(store, "other", "年休假补充通知", [(None, "年休假天数按工龄计算的补充说明。")])
    r = Retriever(store)
    ev = r.retrieve(route("年休假 天数 规定"), k=8)
    assert len({e.chunk.doc_id for e in ev[:5]}) >= 2
    without = Retriever(store, RetrievalSettings(diversity=False)).retrieve(route("年休假 天数 规定"), k=8)
    assert {e.chunk.doc_id for e in without[:5]} == {"big"}


def test_synonym_expansion_from_the_table(policy: Any) -> None:
    assert expand_query("PTO 有几天", [["PTO", "paid time off"]])[1] == ["paid time off"]
    # a word matches whole, not inside a longer one
    assert expand_query("bus pass price", [["pass", "permit"]])[1] == ["permit"]
    assert expand_query("passport rules", [["pass", "permit"]])[1] == []
    r = Retriever(policy)
    ev = r.retrieve(route("How much PTO?", language="en"), k=3)
    assert ev and ev[0].chunk_id == "leave:a1:0"
    assert any(t.kind == "expand" for t in r.trace)


def test_user_synonym_file_extends_the_table(tmp_path, store: Any, add_doc) -> None:
    add_doc(store, "d", "远程办公", [(None, "居家办公每周最多两天。")])
    path = tmp_path / "syn.json"
    path.write_text('{"groups": [["在家上班", "居家办公"]]}', encoding="utf-8")
    ev = Retriever(store, RetrievalSettings(synonyms=path)).retrieve(route("在家上班"), k=2)
    assert ids(ev) == ["d:p:0"]


def test_rrf_fusion_is_selectable(policy: Any) -> None:
    question = route("员工 带薪年休假 天数")
    rrf = Retriever(policy, RetrievalSettings(fusion="rrf")).retrieve(question, k=3)
    weighted = Retriever(policy).retrieve(question, k=3)
    assert rrf[0].chunk_id == weighted[0].chunk_id == "leave:a1:0"
    assert [e.score for e in rrf] != [e.score for e in weighted] or len(rrf) == 1


class FakeEmbedder:
    dim = 3
    name = "fake"

    def embed_query(self, text: str) -> np.ndarray:
        return np.array([1.0, 0.0, 0.0], dtype=np.float32)


class FakeVectors:
    def __init__(self, hits):
        self.hits = hits

    def search(self, vector, k, allowed_ids=None):
        return self.hits[:k]


def test_vector_leg_is_fused_and_a_failing_leg_degrades(policy: Any) -> None:
    vectors = FakeVectors([("leave:a1:0", 0.9), ("bj:a2:0", 0.2)])
    r = Retriever(policy, embedder=FakeEmbedder(), vectors=vectors)
    ev = r.retrieve(route("员工 带薪 假期"), k=3)
    assert ev[0].chunk_id == "leave:a1:0" and {"bm25", "vector"} <= set(ev[0].legs)

    class Broken(FakeVectors):
        def search(self, vector, k, allowed_ids=None):
            raise RuntimeError("index offline")

    r2 = Retriever(policy, embedder=FakeEmbedder(), vectors=Broken([]))
    ev2 = r2.retrieve(route("员工 带薪 假期"), k=3)
    assert ev2 and ev2[0].chunk_id == "leave:a1:0"
    assert any(t.kind == "fallback" and t.tool == "vector" for t in r2.trace)


def test_the_vector_leg_runs_in_a_kept_worker_thread(policy: Any) -> None:
    # question after question, the dense leg runs beside BM25 in the same idle worker instead
    # of a thread started for each query
    threads = []

    class Recording(FakeVectors):
        def search(self, vector, k, allowed_ids=None):
            threads.append(threading.current_thread())
            return super().search(vector, k, allowed_ids)

    r = Retriever(policy, embedder=FakeEmbedder(), vectors=Recording([("leave:a1:0", 0.9)]))
    for q in ("员工 带薪 假期", "年休假 天数", "病假 工资"):
        assert r.retrieve(route(q), k=3)
    assert len(threads) == 3 and len(set(threads)) == 1
    assert threads[0] is not threading.current_thread()


class RecordingEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.embedded.append(text)
        return super().embed_query(text)


@pytest.mark.parametrize(("asked", "query", "embedded"), [
    # the Router only took out the question's filler words: the model reads the question too
    ("退休人员住院的报销比例是多少？", "退休人员住院的报销比例", ["退休人员住院的报销比例", "退休人员住院的报销比例是多少？"]),
    # a query that names other things (a narrower search, a rewrite) is embedded alone
    ("退休人员住院的报销比例是多少？", "医疗费用 第七条", ["医疗费用 第七条"]),
    # the question itself is embedded once
    ("退休人员 住院 报销比例", "退休人员 住院 报销比例", ["退休人员 住院 报销比例"]),
    # a pinned year stays metadata for the dense leg too
    ("2023年退休人员住院报销比例是多少", "2023年退休人员住院报销比例", ["退休人员住院报销比例", "退休人员住院报销比例是多少"]),
])
def test_the_dense_leg_reads_the_question_as_asked(policy: Any, asked: str, query: str,
                                                   embedded: list[str]) -> None:
    embedder = RecordingEmbedder()
    r = Retriever(policy, embedder=embedder, vectors=FakeVectors([("new:a7:0", 0.9)]), synonyms=[])
    version = "2023" if "2023" in asked else "latest"
    assert r.retrieve(route(query, question=asked, version=version), k=3)
    assert embedder.embedded == embedded


def test_the_dense_leg_searches_with_the_mean_of_the_wordings() -> None:
    from agentic_rag.agents.retriever import LegQuery, VectorLeg

    class TwoWords:
        def embed_query(self, text: str) -> np.ndarray:
            return np.array([1.0, 0.0] if "?" in text else [0.0, 1.0], dtype=np.float32)

    seen = []

    class Vectors:
        def search(self, vector, k):
            seen.append(vector)
            return [(1, 0.5)]

    leg = VectorLeg(TwoWords(), Vectors())
    assert leg.search(LegQuery("annual leave days", 5, also=("how many days of annual leave?",))) == [("1", 0.5)]
    assert np.allclose(seen[0], [2 ** -0.5, 2 ** -0.5])  # halfway between, unit length


def test_the_dense_leg_embeds_query_and_question_in_one_model_call(policy: Any) -> None:
    # a model call costs about as much for two short texts as for one: the question as asked
    # must not double the dense leg's time
    class Batching(RecordingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[list[str]] = []

        def embed_queries(self, texts: list[str]) -> np.ndarray:
            self.calls.append(list(texts))
            return np.tile(np.array([1.0, 0.0, 0.0], dtype=np.float32), (len(texts), 1))

    embedder = Batching()
    r = Retriever(policy, embedder=embedder, vectors=FakeVectors([("new:a7:0", 0.9)]), synonyms=[])
    assert r.retrieve(route("退休人员住院的报销比例", question="退休人员住院的报销比例是多少？"), k=3)
    assert embedder.calls == [["退休人员住院的报销比例", "退休人员住院的报销比例是多少？"]]
    assert embedder.embedded == []  # no call per text besides


def test_the_synonyms_reach_the_dense_leg_beside_the_question(policy: Any) -> None:
    embedder = RecordingEmbedder()
    r = Retriever(policy, embedder=embedder, vectors=FakeVectors([("new:a7:0", 0.9)]),
                  synonyms=[["医保", "医疗保险"]])
    r.retrieve(route("医保住院报销", question="医保住院怎么报销？"), k=3)
    assert embedder.embedded == ["医保住院报销 医疗保险", "医保住院怎么报销？"]


def test_empty_query_returns_nothing_and_says_so(policy: Any) -> None:
    r = Retriever(policy)
    assert r.retrieve(route("")) == []
    assert r.trace and "empty" in r.trace[0].detail


# -- multi-hop ----------------------------------------------------------------------------------

@pytest.fixture
def wiki(store: Any, add_doc) -> Any:
    pages = {
        "Lothair II": "Lothair II (835 – 8 August 869) was king of Lotharingia. He was the second son "
                      "of Emperor Lothair I and Ermengarde of Tours.",
        "Ermengarde of Tours": "Ermengarde of Tours was a Frankish queen; her death came on "
                               "20 March 851.",
        "Lothair I": "Lothair I was Emperor of the Romans from 817.",
        "Lotharingia": "Lotharingia was a kingdom ruled by Lothair II, named after him.",
        "Tours": "Tours is a city in France on the Loire, where many people died in the plague.",
        "Alice Brandt": "Alice Brandt (born 3 May 1950) is a German painter.",
        "Bruno Keller": "Bruno Keller (born 9 June 1948) is a Swiss sculptor.",
        "Painting": "Painting is the practice of applying paint; painters were born everywhere.",
    }
    for i, (title, text) in enumerate(pages.items()):
        add_doc(store, f"w{i}", title, [(None, text)], language="en")
    return store


def test_second_hop_finds_the_bridge_entity(wiki: Any) -> None:
    r = Retriever(wiki)
    ev = r.retrieve(Router().route("When did Lothair II's mother die?"), k=4)
    titles = [e.chunk.title for e in ev]
    assert "Lothair II" in titles and "Ermengarde of Tours" in titles
    bridge = next(e for e in ev if e.chunk.title == "Ermengarde of Tours")
    assert bridge.round == 2
    hops = [t for t in r.trace if t.kind == "hop"]
    assert any(t.args["query"] == "Ermengarde of Tours" for t in hops)
    gates = [t for t in r.trace if t.kind == "gate"]
    assert gates[0].detail.startswith("INSUFFICIENT") and gates[-1].detail == "SUFFICIENT"


def test_rounds_are_capped(wiki: Any) -> None:
    r = Retriever(wiki, RetrievalSettings(max_rounds=1))
    ev = r.retrieve(Router().route("When did Lothair II's mother die?"), k=4)
    assert all(e.round == 1 for e in ev)
    assert not [t for t in r.trace if t.kind == "retrieve" and t.args.get("round") == 2]
    assert any(t.kind == "fallback" and "max_rounds" in (t.fallback or "") for t in r.trace)


def test_comparison_question_retrieves_both_sides(wiki: Any) -> None:
    r = Retriever(wiki)
    ev = r.retrieve(Router().route("Who was born first, Alice Brandt or Bruno Keller?"), k=2)
    assert {e.chunk.title for e in ev} == {"Alice Brandt", "Bruno Keller"}
    first = next(t for t in r.trace if t.kind == "retrieve")
    assert first.args["queries"][1:] == ["Alice Brandt", "Bruno Keller"]


def test_repeated_queries_are_blocked(wiki: Any) -> None:
    r = Retriever(wiki)
    r.retrieve(route("Alice Brandt", question="Alice Brandt",
                     slots=Slots(entities=["Alice Brandt"]), language="en"), k=2)
    assert any(t.kind == "blocked" and t.args["query"] == "Alice Brandt" for t in r.trace)


def test_single_hop_policy_question_stays_one_round(policy: Any) -> None:
    r = Retriever(policy)
    r.retrieve(Router().route("住院报销比例是多少"), k=5)
    assert [t.args["round"] for t in r.trace if t.kind == "retrieve" and "round" in t.args] == [1]


def test_single_hop_english_question_about_a_named_company_stays_one_round(store: Any, add_doc) -> None:
    add_doc(store, "h", "Harbor Loom Ltd Staff Rules", [
        ("2.1", "Standard working hours at Harbor Loom Ltd are 9:00 to 17:30, Monday to Friday."),
        ("2.2", "It is the manager who approves overtime in advance."),
    ], language="en")
    add_doc(store, "m", "Monday Club", [(None, "Monday Club is a chess society founded in 1990.")], language="en")
    r = Retriever(store)
    r.retrieve(Router().route("What are the standard working hours at Harbor Loom Ltd?"), k=3)
    assert [t.args["round"] for t in r.trace if t.kind == "retrieve" and "round" in t.args] == [1]
    assert not [t for t in r.trace if t.kind == "hop"]


@pytest.mark.parametrize(("question", "hop"), [
    ("When did Lothair II's mother die?", True),
    ("Where was the director of film Blue Night born?", True),
    ("What nationality is the composer of film Grey Harbour?", True),
    ("At the last census, what was the population of the town where Ada Moss was born?", True),
    ("Noel Hart has worked with the mayor of what city?", True),
    ("Who is the paternal grandfather of Rolf Berg?", True),
    ("王小明的母亲是哪一年去世的？", True),
    ("Who is the director of Blue Night?", False),
    ("王小明的母亲是谁？", False),
    ("《归途》的导演", False),                # the relation the question ends on, no question word
    ("《归途》的导演和编剧分别是谁？", False),  # two relations of the film itself
    ("《归途》的导演出生在哪里？", True),
    ("What are the standard working hours at Harbor Loom Ltd?", False),
    ("Who won the 2022 Harbour Poetry Prize?", False),
    ("What was Harbor Loom's revenue in 2023?", False),
    ("Within how long must a lost company laptop be reported?", False),
    ("Who must approve a team offsite?", False),
    # a scope or condition before the comma names the text or case, no other thing to reach
    ("Under the 2021 edition of Harbor Loom's expenses policy, how soon were claims repaid?", False),
    ("For Dunmore's night staff, what is the shift allowance?", False),
    ("In the valley whose river floods each spring, what crop was grown first?", True),
])
def test_another_hop_only_for_a_thing_the_question_does_not_name(question: str, hop: bool) -> None:
    from agentic_rag.agents.retriever import multihop

    assert multihop.needs_hop(question) is hop


# -- integration: the real embedded store and ingest pipeline -------------------------------------

_V2023 = """# 某市医疗保障待遇办法（2023年版）

发布日期：2023年3月1日

第一条 为规范医疗保障待遇，制定本办法。

第三条 参保人员住院发生的医疗费用按规定报销，具体比例详见第七条。

第七条 职工住院医疗费用报销比例为80%，退休人员为85%。

第九条 报销申请应当在出院后5日内提交。
"""
_V2024 = """# 某市医疗保障待遇办法（2024年修订）

发布日期：2024年5月1日

第一条 为规范医疗保障待遇，制定本办法。《某市医疗保障待遇办法（2023年版）》同时废止。

第三条 参保人员住院发生的医疗费用按规定报销，具体比例详见第七条。

第七条 职工住院医疗费用报销比例调整为85%，退休人员调整为90%。

第九条 报销申请应当在出院后3个工作日内提交。
"""


@pytest.fixture
def real_index(tmp_path):
    from agentic_rag.ingest.pipeline import ingest_paths
    from agentic_rag.store import open_store

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "2023.md").write_text(_V2023, encoding="utf-8")
    (docs / "2024.md").write_text(_V2024, encoding="utf-8")
    store = open_store(tmp_path / "index")
    report = ingest_paths([docs], store)
    assert all(f.status == "added" for f in report.files)
    yield store
    store.close()


def test_real_store_cross_reference_and_current_version(real_index) -> None:
    r = Retriever(real_index)
    ev = r.retrieve(Router().route("住院费用怎么报销？"), k=4)
    top = ev[0].chunk
    assert top.clause == "第七条" and top.status == "active" and "85%" in top.text
    assert "graph" in ev[0].legs
    pinned = Retriever(real_index).retrieve(Router().route("按照2023年的规定，报销申请应当在出院后几日内提交"), k=3)
    assert pinned[0].chunk.clause == "第九条" and "5日" in pinned[0].chunk.text
    latest = Retriever(real_index).retrieve(Router().route("报销申请应当在出院后几日内提交"), k=3)
    assert latest[0].chunk.clause == "第九条" and "3个工作日" in latest[0].chunk.text


# -- multi-hop building blocks --------------------------------------------------------------------

def test_relations_decomposition_and_bridges() -> None:
    from agentic_rag.agents.retriever import multihop
    from agentic_rag.types import Chunk

    assert multihop.relations("Who is the paternal grandfather of X?") == ["grandfather"]
    assert multihop.relations("Who directed the film?") == ["director"]
    assert multihop.relations("王小明的母亲是谁") == ["母亲"]
    assert multihop.decompose("Who was born first, Ann Lee or Bo Chan?") == ["Ann Lee", "Bo Chan"]
    assert multihop.decompose("When did Lothair II's mother die?") == []
    # a capitalized word inside a name compares nothing ("First Aid", "More Than Words")
    assert multihop.decompose("Who signs off the Ardlow First Aid and Welfare Policy?") == []
    film = Chunk(chunk_id="f:p:0", doc_id="f", ord=0, title="Blue Night",
                 text="Blue Night is a 1954 drama film written by Ann Lee and directed by Carl Dahl. "
                      "It stars Eva Holm.")
    assert multihop.bridge_entities("Who is the director of Blue Night?", film)[0] == "Carl Dahl"
    song = Chunk(chunk_id="s:p:0", doc_id="s", ord=0, title="Hello",
                 text="Hello is a song written by Tom Kay and recorded by Nina Berg in 1990.")
    assert multihop.bridge_entities("Where was the performer of Hello born?", song)[0] == "Nina Berg"


def test_chinese_bridge_hop(store: Any, add_doc) -> None:
    add_doc(store, "a", "王小明", [(None, "王小明是一位画家，出生于杭州。其母李秀英，是一名教师。")])
    add_doc(store, "b", "李秀英", [(None, "李秀英，1950年出生，2010年逝世于苏州。")])
    add_doc(store, "c", "苏州", [(None, "苏州是江苏省的一个城市。")])
    r = Retriever(store)
    ev = r.retrieve(Router().route("王小明的母亲是哪一年去世的？"), k=3)
    assert [(e.chunk.title, e.round) for e in ev[:2]] == [("王小明", 1), ("李秀英", 2)]
    both = Retriever(store).retrieve(Router().route("王小明和李秀英谁先出生？"), k=2)
    assert {e.chunk.title for e in both} == {"王小明", "李秀英"}


# -- versions and deferrals beside their sources ----------------------------------------------

@pytest.fixture
def versions(store: Any, add_doc) -> Any:
    add_doc(store, "v23", "职工医保待遇办法", [
        ("第十一条", "经办机构应当自受理报销申请之日起10日内完成审核，报销款拨付至本人银行账户。"),
        ("第十二条", "参保人员应当妥善保管医疗费用票据。"),
    ], publish_date=dt.date(2023, 3, 10), status="repealed")
    add_doc(store, "v24", "职工医保待遇办法", [
        ("第十一条", "经办机构应当自受理报销申请之日起5个工作日内完成审核，报销款直接拨付至本人社会保障卡银行账户。"),
        ("第十二条", "参保人员应当妥善保管医疗费用票据。"),
    ], publish_date=dt.date(2024, 6, 20))
    for n in range(4):  # other documents that match the question's words just as well
        add_doc(store, f"other{n}", f"社会保障卡管理办法{n}", [
            ("第一条", f"社会保障卡第{n + 1}类业务由经办机构办理。")],
            publish_date=dt.date(2024, 1, 1))
    add_doc(store, "sig", "通知", [(None, "江南省医疗保障局\n2024年5月10日")], publish_date=dt.date(2024, 5, 10))
    store.add_edges([Edge(src="v24", dst="v23", kind="SUPERSEDES", phrase="同时废止")])
    return store


def test_the_older_version_of_a_top_clause_follows_it(versions: Any) -> None:
    r = Retriever(versions)
    ev = r.retrieve(route("社会保障卡 报销 审核 多久"), k=4)
    order = ids(ev)
    at = order.index("v24:a11:0")
    # penalized as repealed and short of 社会保障卡, it would not reach the top four on its own
    assert order[at + 1] == "v23:a11:0"
    new, old = ev[at], ev[at + 1]
    assert old.score < new.score and all(old.score >= e.score for e in ev[at + 2:])
    assert any(t.tool == "graph" and "v23:a11:0" in t.evidence_ids for t in r.trace)


def test_a_changed_older_version_is_compared_afresh(versions: Any, add_doc) -> None:
    # the retriever keeps the documents it compared; a write to the store must not leave it
    # showing the old wording
    r = Retriever(versions)
    question = route("社会保障卡 报销 审核 多久")
    assert "v23:a11:0" in ids(r.retrieve(question, k=4))
    add_doc(versions, "v23", "职工医保待遇办法", [
        ("第十一条", "经办机构应当自受理报销申请之日起5个工作日内完成审核，报销款直接拨付至本人社会保障卡银行账户。"),
        ("第十二条", "参保人员应当妥善保管医疗费用票据。"),
    ], publish_date=dt.date(2023, 3, 10), status="repealed")
    # the older version now states the same numbers: nothing left to arbitrate, so not added
    assert "v23:a11:0" not in ids(r.retrieve(question, k=4))


def test_a_renumbered_older_clause_is_found_by_its_wording(store: Any, add_doc) -> None:
    # the older version numbers the clause differently, among clauses much shorter and much
    # longer than it and one of its own number that says something else
    add_doc(store, "old", "职工医保待遇办法", [
        ("第一条", "为保障职工基本医疗需求，制定本办法。"),
        ("第十一条", "参保人员应当妥善保管医疗费用票据，遗失的不予补办，由本人承担相应后果，"
                    "经办机构不再受理以复印件提出的报销申请，也不受理逾期提出的申请。"),
        ("第十三条", "经办机构应当自受理报销申请之日起10日内完成审核，报销款拨付至本人银行账户。"),
        ("第十四条", "本办法自公布之日起施行。"),
    ], publish_date=dt.date(2023, 3, 10), status="repealed")
    new = add_doc(store, "new", "职工医保待遇办法", [
        ("第十一条", "经办机构应当自受理报销申请之日起5个工作日内完成审核，报销款拨付至本人银行账户。"),
    ], publish_date=dt.date(2024, 6, 20))
    assert Retriever(store)._counterpart(new[0], "old") == "old:a13:2"


def test_an_older_version_that_says_the_same_is_not_added(versions: Any) -> None:
    ev = Retriever(versions).retrieve(route("医疗费用票据 保管"), k=3)
    assert "v24:a12:1" in ids(ev) and "v23:a12:1" not in ids(ev)


def test_a_clause_that_defers_brings_the_clause_it_names(store: Any, add_doc) -> None:
    rule = add_doc(store, "rule", "医保待遇办法", [
        ("第三条", "住院费用报销的具体比例详见第七条。"),
        ("第七条", "统筹基金承担百分之九十。")], publish_date=dt.date(2024, 6, 20))
    for n in range(6):  # footnotes that match better but rank lower: the deferring clause is no graph seed
        add_doc(store, f"fn{n}", f"注释{n}", [(None, f"住院费用报销具体比例说明{n}：住院费用报销具体比例。")],
                kind="footnote", publish_date=dt.date(2024, 1, 1))
    store.add_edges([Edge(src=rule[0].chunk_id, dst=rule[1].chunk_id, kind="REFERENCES", phrase="详见第七条")])
    ev = Retriever(store).retrieve(route("住院费用报销 具体比例"), k=4)
    order = ids(ev)
    at = order.index(rule[0].chunk_id)
    assert at < 3 and order[at + 1] == rule[1].chunk_id


def test_the_same_matter_in_another_document_already_found_is_brought(store: Any, add_doc) -> None:
    add_doc(store, "prov", "江南省门诊慢特病管理办法", [
        ("第一条", "为规范门诊慢特病保障工作，根据国家《门诊慢特病待遇认定管理规定》，制定本办法。"),
        ("第四条", "经办机构应当自受理认定申请之日起10个工作日内完成认定。")], publish_date=dt.date(2024, 3, 18))
    add_doc(store, "nat", "门诊慢特病待遇认定管理规定", [
        ("第一条", "为统一门诊慢特病待遇认定管理，制定本规定。"),
        ("第二条", "门诊慢特病病种由国家统一规范。"),
        ("第四条", "经办机构应当自受理认定申请之日起15个工作日内完成认定，并书面告知申请人。")],
        publish_date=dt.date(2022, 8, 5))
    # the national document is found by its purpose clause; its own 第四条 says 15个工作日
    ev = Retriever(store).retrieve(route("统一门诊慢特病待遇认定管理 10个工作日"), k=3)
    assert "prov:a4:1" in ids(ev) and "nat:a4:2" in ids(ev)


def test_a_pinned_year_is_metadata_not_a_keyword(versions: Any) -> None:
    ev = Retriever(versions).retrieve(Router().route("按照2024年的规定，报销审核要多久"), k=3)
    assert "sig:p:0" not in ids(ev)
    assert "v24:a11:0" in ids(ev)


def test_the_users_own_wording_is_searched_beside_the_routers_rewrite(store: Any, add_doc) -> None:
    kinds = ["Parental", "Sick", "Study", "Jury", "Unpaid", "Carer", "Wedding", "Training"]
    add_doc(store, "crew", "Crew Handbook", [
        *((None, f"{k} leave is booked with the approval of the crew lead" + ", then recorded by payroll" * i + ".")
          for i, k in enumerate(kinds)),
        (None, "Time off needs no approval from the crew lead: you book it in the rota app."),
    ], language="en")
    # the Router turned "time off" into "leave"; the handbook says "time off"
    ev = Retriever(store).retrieve(route("crew lead approval to book leave",
                                         question="crew lead approval to book time off", language="en"), k=3)
    assert any("Time off" in e.chunk.text for e in ev), [e.chunk.text for e in ev]
