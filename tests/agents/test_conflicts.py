"""Conflict detection and arbitration: which sources disagree, and which one wins and why."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from agentic_rag.agents.overrides import OverrideRule, load_overrides, parse_overrides
from agentic_rag.agents.reasoner import Reasoner
from agentic_rag.agents.reasoner.arbitration import Arbiter, authority_level
from agentic_rag.agents.reasoner.conflicts import facts_of, find_conflicts, same_matter
from agentic_rag.config import ReasonerSettings
from agentic_rag.errors import ConfigError
from agentic_rag.types import Chunk, Evidence, RouteDecision

TODAY = dt.date(2025, 1, 1)


def chunk(doc: str, text: str, *, clause: str = "第一条", clause_no: str = "1", title: str = "",
          published: dt.date | None = None, status: str = "active", authority: str | None = None,
          version: str | None = None) -> Chunk:
    return Chunk(chunk_id=f"{doc}:a{clause_no}:0", doc_id=doc, ord=0, text=text, clause=clause,
                 clause_no=clause_no, title=title or f"{doc}通知", publish_date=published,
                 status=status, authority=authority, version=version)


def conflicts_between(*pairs: tuple[Chunk, str]):
    facts = [f for rank, (c, sentence) in enumerate(pairs) for f in facts_of(sentence, c, rank)]
    return find_conflicts(facts)


# -- detection ------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        # the same matter, different values: a conflict
        ("住院费用报销比例为80%。", "住院费用报销比例为90%。", True),
        ("住院费用报销比例为80%。", "住院费用报销比例为百分之九十。", True),
        ("备案需提前5个工作日。", "备案需提前3个工作日。", True),
        ("备案需提前3个工作日。", "备案需提前3日。", True),  # 工作日 ≠ 日
        ("经办机构应当在10日内完成审核。", "经办机构应当在5个工作日内完成审核。", True),
        ("Claims must be submitted within 30 days.", "Claims must be submitted within 60 days.", True),
        ("The hotel limit is CNY 600 per night.", "The hotel limit is CNY 800 per night.", True),
        # the same value written differently: no conflict
        ("备案需提前5日。", "备案需提前5天。", False),
        ("住院费用报销比例为90%。", "住院费用报销比例为百分之九十。", False),
        ("Claims must be submitted within 30 days.", "Claims must be submitted within thirty days.", False),
        # different matters: no conflict, whatever the values
        ("门诊费用报销比例为50%。", "住院费用报销比例为90%。", False),
        ("在职职工住院报销比例为90%。", "退休人员住院报销比例为95%。", False),
        ("备案有效期为6个月。", "备案需提前3个工作日。", False),
        # incomparable quantities: no conflict
        ("住院费用报销限额为3000元。", "住院费用报销限额为$500。", False),
    ],
)
def test_detects_conflicts_only_for_the_same_matter(a, b, conflict):
    groups = conflicts_between((chunk("d1", a), a), (chunk("d2", b), b))
    assert bool(groups) is conflict


def test_values_within_one_document_never_conflict():
    text = "住院费用报销比例为80%。"
    other = "住院费用报销比例为90%。"
    assert conflicts_between((chunk("d1", text), text), (chunk("d1", other, clause_no="2"), other)) == []


def test_respectively_lists_pair_values_with_their_items():
    new = "住院：在职职工在一级、二级、三级定点医疗机构分别为百分之九十、百分之八十五、百分之八十"
    old = "住院：在职职工在一级、二级、三级定点医疗机构分别为百分之八十五、百分之八十、百分之七十五"
    groups = conflicts_between((chunk("new", new), new), (chunk("old", old), old))
    pairs = {frozenset(f.quantity.raw for f in g) for g in groups}
    # 一级 90 vs 85, 二级 85 vs 80, 三级 80 vs 75 — never 一级 against 三级
    assert pairs == {frozenset({"百分之九十", "百分之八十五"}), frozenset({"百分之八十五", "百分之八十"}),
                     frozenset({"百分之八十", "百分之七十五"})}


def test_a_change_sentence_states_the_new_value():
    facts = facts_of("住院费用报销比例由80%提高至90%", chunk("d", ""))
    assert [f.quantity.raw for f in facts] == ["90%"]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (("住院", "费用", "报销", "比例"), ("参保", "住院", "医疗", "费用", "报销", "比例"), True),
        (("住院", "费用", "支付", "比例"), ("住院", "费用", "报销", "比例"), True),  # synonyms
        (("门诊", "费用", "报销", "比例"), ("住院", "费用", "报销", "比例"), False),
        (("一级", "住院"), ("三级", "住院"), False),
        (("比例",), ("住院", "比例"), True),
        ((), ("住院",), False),
    ],
)
def test_same_matter(a, b, same):
    assert same_matter(a, b) is same


# -- arbitration ----------------------------------------------------------------------------

def _decide(*chunks_and_text, route: RouteDecision | None = None, arbiter: Arbiter | None = None):
    groups = conflicts_between(*chunks_and_text)
    assert len(groups) == 1
    conflict, decision = (arbiter or Arbiter(today=TODAY)).conflict(groups[0], route)
    return conflict, decision


NEW = "住院费用报销比例为90%。"
OLD = "住院费用报销比例为80%。"


def test_newer_wins_when_a_year_or_more_apart():
    new = chunk("new", NEW, published=dt.date(2024, 6, 1), authority="江南省医疗保障局")
    old = chunk("old", OLD, published=dt.date(2023, 3, 1), authority="国务院")
    conflict, _ = _decide((old, OLD), (new, NEW))
    assert conflict.winner == new.chunk_id
    assert conflict.rule == "newer (≥1 year)"
    assert {v.value for v in conflict.values} == {"90%", "80%"}


def test_authority_times_recency_when_less_than_a_year_apart():
    national = chunk("nat", OLD, published=dt.date(2024, 1, 15), authority="国家医疗保障局")
    province = chunk("prov", NEW, published=dt.date(2024, 5, 10), authority="江南省医疗保障局")
    conflict, _ = _decide((province, NEW), (national, OLD))
    assert conflict.winner == national.chunk_id
    assert conflict.rule == "authority×recency"


def test_authority_weights_are_configurable():
    national = chunk("nat", OLD, published=dt.date(2024, 1, 15), authority="国家医疗保障局")
    province = chunk("prov", NEW, published=dt.date(2024, 5, 10), authority="江南省医疗保障局")
    arbiter = Arbiter({"provincial": 0.95}, today=TODAY)
    conflict, _ = _decide((province, NEW), (national, OLD), arbiter=arbiter)
    assert conflict.winner == province.chunk_id


def test_superseded_never_wins_against_its_successor():
    current = chunk("cur", NEW, published=dt.date(2024, 1, 1), authority="江南省医疗保障局")
    repealed = chunk("rep", OLD, published=dt.date(2023, 11, 1), status="repealed",
                     authority="国务院")
    conflict, _ = _decide((repealed, OLD), (current, NEW))
    assert conflict.winner == current.chunk_id
    assert conflict.rule == "superseded"


def test_a_version_pinned_by_the_question_wins():
    new = chunk("new", NEW, published=dt.date(2024, 6, 1))
    old = chunk("old", OLD, published=dt.date(2023, 3, 1), status="repealed")
    route = RouteDecision(question="按照2023年的规定，住院报销比例是多少？", version="2023")
    conflict, _ = _decide((new, NEW), (old, OLD), route=route)
    assert conflict.winner == old.chunk_id
    assert conflict.rule == "pinned version 2023"


def test_an_override_pins_a_clause():
    new = chunk("new", NEW, published=dt.date(2024, 6, 1), clause="第三条", clause_no="3",
                title="住院待遇通知")
    old = chunk("old", OLD, published=dt.date(2022, 3, 1), clause="第七条", clause_no="7",
                title="旧住院待遇通知")
    rule = OverrideRule(title="旧住院待遇通知", clause="第七条", reason="过渡期内执行旧标准")
    conflict, _ = _decide((new, NEW), (old, OLD), arbiter=Arbiter(overrides=[rule], today=TODAY))
    assert conflict.winner == old.chunk_id
    assert conflict.rule == "override: 过渡期内执行旧标准"


def test_a_matter_override_prefers_the_older_source():
    new = chunk("new", NEW, published=dt.date(2024, 6, 1))
    old = chunk("old", OLD, published=dt.date(2022, 3, 1))
    rule = OverrideRule(matter="住院 报销 比例", prefer="older", reason="legacy")
    conflict, _ = _decide((new, NEW), (old, OLD), arbiter=Arbiter(overrides=[rule], today=TODAY))
    assert conflict.winner == old.chunk_id


def test_a_matter_only_override_keeps_the_old_clause_by_default():
    new = chunk("new", NEW, published=dt.date(2024, 6, 1))
    old = chunk("old", OLD, published=dt.date(2022, 3, 1))
    rule = OverrideRule(matter="住院费用报销比例", reason="以旧版为准")
    conflict, _ = _decide((new, NEW), (old, OLD), arbiter=Arbiter(overrides=[rule], today=TODAY))
    assert conflict.winner == old.chunk_id
    assert conflict.rule == "override: 以旧版为准"


def test_an_override_for_another_matter_does_not_apply():
    new = chunk("new", NEW, published=dt.date(2024, 6, 1))
    old = chunk("old", OLD, published=dt.date(2022, 3, 1))
    rule = OverrideRule(matter="门诊 起付 标准", prefer="older", reason="legacy")
    conflict, _ = _decide((new, NEW), (old, OLD), arbiter=Arbiter(overrides=[rule], today=TODAY))
    assert conflict.winner == new.chunk_id
    assert conflict.rule == "newer (≥1 year)"


def test_equal_sources_are_undecided():
    a = chunk("a", NEW, published=dt.date(2024, 6, 1), authority="某市医疗保障局")
    b = chunk("b", OLD, published=dt.date(2024, 6, 1), authority="另一市医疗保障局")
    conflict, _ = _decide((a, NEW), (b, OLD))
    assert conflict.rule == "undecided"


@pytest.mark.parametrize(
    ("authority", "title", "level"),
    [
        ("国务院办公厅", "", "national"),
        ("国家医疗保障局", "", "national"),
        ("人力资源和社会保障部", "", "national"),
        ("江南省医疗保障局", "", "provincial"),
        ("上海市人民政府", "", "provincial"),  # a municipality directly under the central government
        ("广西壮族自治区人民政府", "", "provincial"),
        ("江北市医疗保障局", "", "municipal"),
        ("江北市新区管委会", "", "municipal"),
        ("星河科技有限公司人力资源部", "", "company"),
        ("Human Resources, Stellar River Technology Co., Ltd.", "", "company"),
        ("State Council", "", "national"),
        (None, "国务院关于调整住院待遇的通知", "national"),
        (None, "", "unknown"),
    ],
)
def test_authority_level(authority, title, level):
    assert authority_level(authority, title) == level


# -- overrides file -------------------------------------------------------------------------

def test_overrides_file_loads(tmp_path):
    path = tmp_path / "overrides.json"
    path.write_text(json.dumps([
        {"chunk_id": "abc:a7:0", "reason": "legal"},
        {"title": "住院待遇通知", "clause": "第七条", "reason": "transition"},
        {"matter": "备案 时限", "prefer": "newer", "reason": "policy"},
    ], ensure_ascii=False), encoding="utf-8")
    rules = load_overrides(path)
    assert [r.reason for r in rules] == ["legal", "transition", "policy"]


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([{"chunk_id": "x:a1:0"}], "entry 0"),  # no reason
        ([{"chunk_id": "x:a1:0", "reason": "ok"}, {"reason": "pins nothing"}], "entry 1"),
        ([{"clause": "第七条", "reason": "whose clause?"}], "entry 0"),
        ([{"matter": "备案 时限", "prefer": "middle", "reason": "which side?"}], "prefer"),
        ([{"chunk_id": "x:a1:0", "prefer": "older", "reason": "r"}], "prefer"),
        ([{"chunk_id": "x:a1:0", "reason": "r", "colour": "blue"}], "colour"),
        ({"chunk_id": "x"}, "JSON list"),
    ],
)
def test_invalid_overrides_name_the_entry(tmp_path, entries, message):
    path = tmp_path / "overrides.json"
    path.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as err:
        load_overrides(path)
    assert str(path) in str(err.value)


def test_overrides_file_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_overrides(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("[{", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid JSON"):
        load_overrides(bad)


def test_reasoner_refuses_an_invalid_overrides_file(tmp_path):
    path = tmp_path / "o.json"
    path.write_text('[{"reason": "nothing pinned"}]', encoding="utf-8")
    with pytest.raises(ConfigError, match="entry 0"):
        Reasoner(ReasonerSettings(overrides_file=path))


def test_parse_overrides_accepts_parsed_json():
    assert parse_overrides([{"doc_id": "abc", "reason": "r"}])[0].doc_id == "abc"


def test_rows_of_two_versions_pair_with_their_own_row_not_a_containing_one():
    # 在职职工 (普通门诊) is contained in 在职职工在一级…医疗机构 (住院): were every contained pair
    # linked, the rows would chain into one group about nothing in particular
    new = ("统筹基金支付比例如下：\n（一）普通门诊：在职职工百分之七十，退休人员百分之八十；\n"
           "（二）住院：在职职工在一级、二级、三级定点医疗机构分别为百分之九十、百分之八十五、百分之八十")
    old = ("统筹基金支付比例如下：\n（一）普通门诊：在职职工百分之六十，退休人员百分之七十；\n"
           "（二）住院：在职职工在一级、二级、三级定点医疗机构分别为百分之八十五、百分之八十、百分之七十五")
    from agentic_rag.text.sentences import split_sentences

    facts = []
    for doc, text in (("new", new), ("old", old)):
        c = chunk(doc, text)
        facts += [f for s, e in split_sentences(text) for f in facts_of(text[s:e], c)]
    pairs = {frozenset(f.quantity.raw for f in g) for g in find_conflicts(facts)}
    assert frozenset({"百分之七十", "百分之六十"}) in pairs  # 普通门诊, 在职
    assert frozenset({"百分之八十", "百分之七十五"}) in pairs  # 住院, 三级
    assert all(len(g) == 2 for g in find_conflicts(facts))


def test_conflict_matter_reads_as_the_documents_wording():
    from agentic_rag.agents.reasoner.conflicts import Fact, matter_label
    from agentic_rag.types import Chunk, Quantity

    sentence = "（二）住院：在职职工在一级定点医疗机构为百分之九十；"
    fact = Fact(chunk=Chunk(chunk_id="d:a12:0", doc_id="d", ord=0, text=sentence), sentence=sentence,
                quantity=Quantity(kind="percent", value=90.0, unit="%", raw="百分之九十"),
                matter=("住院", "在职", "职工"))
    assert matter_label(fact) == "住院：在职职工在一级定点医疗机构为"


def _answer(question: str, *chunks: Chunk):
    """The Reasoner's answer from ``chunks``, ranked in the order given."""
    evidence = [Evidence(chunk=c, score=1.0 - i * 0.1, rank=i + 1, legs=["bm25"]) for i, c in enumerate(chunks)]
    return Reasoner(today=TODAY).reason(question, RouteDecision(question=question, query=question, language="zh"),
                                        evidence)


def test_rules_about_different_things_do_not_contradict_each_other():
    # a loan term in the housing-fund rules and a benefit period in an unemployment-insurance
    # notice both read "期限 …… 最长为": the titles share nothing but the city they apply in
    loan = chunk("loan", "贷款期限最长为30年。", clause="第九条", clause_no="9", title="青岚市住房公积金管理办法",
                 published=dt.date(2024, 1, 5))
    dole = chunk("dole", "失业人员领取失业保险金的期限，根据失业前累计缴费时间确定：累计缴费满1年不满5年的，"
                 "最长为12个月。", clause="第二条", clause_no="2",
                 title="青岚市人力资源和社会保障局关于调整失业保险金标准的通知", published=dt.date(2024, 6, 1))
    answer = _answer("申请公积金贷款，贷款期限最长是多少年？", dole, loan)
    assert answer.conflicts == [] and answer.text.startswith("贷款期限最长为30年"), answer.text


def test_versions_of_one_rule_still_disagree_when_their_titles_differ_in_year_and_wording():
    old = chunk("old", "贷款期限最长为25年。", clause="第九条", clause_no="9", title="青岚市住房公积金管理办法（2020年）",
                published=dt.date(2020, 1, 5))
    new = chunk("new", "贷款期限最长为30年。", clause="第九条", clause_no="9",
                title="青岚市住房公积金管理办法（2024年修订）", published=dt.date(2024, 1, 5))
    answer = _answer("公积金贷款期限最长是多少年？", new, old)
    assert len(answer.conflicts) == 1 and answer.conflicts[0].winner == "new:a9:0", answer.text


def test_a_changed_fine_is_named_as_the_range_each_version_states_and_a_renamed_body_is_not_its_conflict():
    title = "青岚市犬只管理条例"
    new = chunk("new", "第二十条 违反本条例第八条规定的，由市城市管理部门责令改正，处二千元以上二万元以下罚款。",
                clause="第二十条", clause_no="20", title=title, published=dt.date(2024, 5, 1),
                authority="青岚市人民代表大会常务委员会")
    old = chunk("old", "第二十条 违反本条例第八条规定的，由市市容环境卫生主管部门责令改正，处五百元以上五千元以下罚款。",
                clause="第二十条", clause_no="20", title=title, published=dt.date(2019, 5, 1),
                status="superseded", authority="青岚市人民代表大会常务委员会")
    decision = chunk("amend", "一、将第二十条中的“市市容环境卫生主管部门”修改为“市城市管理部门”，"
                     "“五百元以上五千元以下”修改为“二千元以上二万元以下”。", clause="一", clause_no="1",
                     title="青岚市人民代表大会常务委员会关于修改《青岚市犬只管理条例》的决定",
                     published=dt.date(2024, 4, 20), authority="青岚市人民代表大会常务委员会")
    answer = _answer("违反第八条规定的，要罚多少钱？", new, old, decision)
    assert "二千元以上二万元以下" in answer.sentences[0].text
    assert "五百元以上五千元以下" in answer.text, answer.text
    assert "市容环境卫生主管部门" not in answer.text  # who fines is not what was asked
    assert answer.text.count("已被新版本替代") == 1, answer.text  # the range once, not its upper end again
    assert "未采用" not in answer.text  # the decision that set the new fine agrees with it


def test_an_amended_fine_is_named_once_and_the_decision_that_set_it_is_not_a_loser():
    # the holdout's regulation in two versions and the decision that amended it, as ingested
    from pathlib import Path

    from agentic_rag.ingest import parse_document

    folder = Path(__file__).resolve().parents[2] / "examples" / "holdout" / "docs" / "条例"
    chunks = [c for path in sorted(folder.iterdir()) for _, cs, _ in parse_document(path) for c in cs]
    question = "单位拒不改正未分类投放的行为，罚款标准是多少？"
    ranked = sorted(chunks, key=lambda c: "拒不改正" not in c.text)
    answer = _answer(question, *ranked[:8])
    assert "五千元以上五万元以下" in answer.sentences[0].text, answer.text
    assert "一千元以上一万元以下" in answer.text  # the 2018 range, named whole as the superseded value
    assert answer.text.count("各来源说法不一致") == 1, answer.text  # not its upper end again
    assert "的决定" not in answer.text.split("各来源说法不一致")[1], answer.text  # it agrees with the winner


def test_a_sentences_facts_are_kept_until_the_dictionary_changes_and_each_caller_gets_its_own(monkeypatch):
    """The facts of a sentence are worked out once per segmentation dictionary (the same clauses
    are compared question after question); each call gets fresh facts with its chunk and rank."""
    import agentic_rag.agents.reasoner.conflicts as conflicts

    sentence = "在职职工住院医疗费用报销比例为百分之九十，退休人员为百分之九十五。"
    chunk = Chunk(chunk_id="d:a3:0", doc_id="d", ord=0, text=sentence)
    first = facts_of(sentence, chunk, 0)
    misses = conflicts._facts.cache_info().misses
    again = facts_of(sentence, chunk, 2)
    assert conflicts._facts.cache_info().misses == misses
    assert [(f.quantity, f.matter, f.local, f.context) for f in again] == \
        [(f.quantity, f.matter, f.local, f.context) for f in first]
    assert [f.rank for f in again] == [2, 2] and all(a is not b for a, b in zip(again, first))
    assert all(f.chunk is chunk for f in again)
    generation = conflicts.dictionary_generation()
    monkeypatch.setattr(conflicts, "dictionary_generation", lambda: generation + 1)
    assert [f.matter for f in facts_of(sentence, chunk, 0)] == [f.matter for f in first]
    assert conflicts._facts.cache_info().misses == misses + 1
