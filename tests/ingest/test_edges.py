"""REFERENCES inside a document and to named documents; title normalisation for versions."""

from __future__ import annotations

from agentic_rag.ingest.edges import normalize_title, references, resolve_pending

from .helpers import chunks


def _refs(text: str):
    items = chunks(text)
    edges, pending = references(items)
    return items, {(e.src.split(":")[1], e.dst.split(":")[1], e.phrase) for e in edges}, pending


def test_chinese_same_document_references():
    _, edges, _ = _refs(
        "第一条 报销比例详见第七条。\n第二条 依照本办法第五条办理。\n第三条 按照本条例第七条执行。\n"
        "第五条 定点机构管理。\n第七条 比例为80%。\n第八条 病种见附件1。\n附件1 病种目录\n高血压。")
    assert ("a1", "a7", "详见第七条") in edges
    assert ("a2", "a5", "依照本办法第五条") in edges
    assert ("a3", "a7", "按照本条例第七条") in edges
    assert ("a8", "appx-1", "见附件1") in edges


def test_zhi_yi_target_and_unknown_or_self_references_are_dropped():
    _, edges, _ = _refs("第一条 依照第二条之一办理。\n第二条之一 内容。\n第三条 依照第九条办理；本条依照第三条。")
    assert {(s, d) for s, d, _ in edges} == {("a1", "a2-1")}


def test_english_references():
    _, edges, _ = _refs("Article 1 Claims are paid pursuant to Article 3.\nArticle 2 See Section 5 and "
                        "see Appendix A.\nArticle 3 Rates.\nSection 5 Limits, as provided in Article 3.\n"
                        "Appendix A Forms\nThe form.")
    pairs = {(s, d) for s, d, _ in edges}
    assert {("a1", "a3"), ("a2", "s5"), ("a2", "appx-a"), ("s5", "a3")} <= pairs


def test_named_document_reference_is_pending_until_resolved():
    items, edges, pending = _refs("第一条 依照《中华人民共和国民法典》第五十四条办理。")
    assert edges == set()
    assert [(p.title, p.clause_no) for p in pending] == [("中华人民共和国民法典", "54")]
    target = chunks("第五十四条 自然人从事工商业经营，经依法登记，为个体工商户。", doc_id="civ")
    resolved = resolve_pending(pending, lambda title: target if "民法典" in title else [])
    assert [(e.src, e.dst, e.kind) for e in resolved] == [(items[0].chunk_id, "civ:a54:0", "REFERENCES")]
    assert resolve_pending(pending, lambda title: []) == []


def test_normalize_title_joins_versions_of_one_document():
    assert normalize_title("某某办法（2024年修订）") == normalize_title("某某办法（2019年修订）") == "某某办法"
    assert normalize_title("《中华人民共和国专利法》") == normalize_title("专利法")
    assert normalize_title("Travel Policy Version 2") == normalize_title("Travel  Policy")
    assert normalize_title("某某办法") != normalize_title("某某办法实施细则")


def test_reference_to_an_appendix_that_is_only_a_table():
    items, edges, _ = _refs("第七条 使用附件1所列药品的，按附件1所列比例支付。\n附件1 用药目录\n"
                            "| 药品名称 | 报销比例 |\n|---|---|\n| 二甲双胍 | 90% |\n")
    assert ("a7", "t1", "按附件1") in edges


def test_a_list_of_articles_references_each_of_them():
    _, edges, _ = _refs("第五条 甲。\n第六条 乙。\n第八条 各地应当依照本规定第五条、第六条制定办法。")
    assert {(s, d) for s, d, _ in edges} == {("a8", "a5"), ("a8", "a6")}
