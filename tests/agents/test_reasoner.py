"""The Reasoner end to end on hand-built evidence: what a user reads in the Answer."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from agentic_rag.agents.vocabulary import Vocabulary, packaged_vocabulary
from agentic_rag.agents.reasoner import Reasoner
from agentic_rag.text.numerals import int_to_cn
from agentic_rag.types import Answer, AnswerSentence, Chunk, Evidence, RouteDecision, Slots, Table

TODAY = dt.date(2025, 1, 1)
NEW_TITLE = "江南省职工医保待遇办法"
NEW = dict(title=NEW_TITLE, published=dt.date(2024, 6, 20), authority="江南省医疗保障局")
OLD = dict(title=NEW_TITLE, published=dt.date(2023, 3, 10), authority="江南省医疗保障局",
           status="repealed")


def make_chunk(doc: str, clause_no: str, text: str, *, title: str, published: dt.date | None = None,
               authority: str | None = None, status: str = "active", span_start: int = 100,
               table: Table | None = None, clause: str | None = None, language: str = "zh") -> Chunk:
    return Chunk(chunk_id=f"{doc}:a{clause_no}:0", doc_id=doc, ord=int(re.sub(r"\D", "", clause_no) or 0),
                 text=text, clause=clause or f"第{int_to_cn(int(clause_no))}条", clause_no=clause_no, title=title,
                 publish_date=published, authority=authority, status=status,
                 span=(span_start, span_start + len(text)), table=table,
                 kind="table" if table else "body", language=language)


def ev(*chunks: Chunk, legs: list[str] | None = None) -> list[Evidence]:
    return [Evidence(chunk=c, score=1.0 - i * 0.05, rank=i + 1, legs=legs or ["bm25"])
            for i, c in enumerate(chunks)]


def route(question: str, **kw) -> RouteDecision:
    lang = "en" if re.fullmatch(r"[\x00-\x7f]+", question) else "zh"
    return RouteDecision(question=question, query=question, language=lang, **kw)


def ask(question: str, evidence: list[Evidence], **kw) -> Answer:
    return Reasoner(today=TODAY).reason(question, route(question, **kw), evidence)


FILING = make_chunk("new", "3", "第三条 异地就医备案需提前3个工作日办理。备案有效期为6个月。", **NEW)
REFERRER = make_chunk("new", "8", "第八条 住院费用由统筹基金按比例支付，具体比例详见第十二条。统筹基金年度最高支付限额为40万元。",
                      **NEW)
RATES = make_chunk("new", "12", "第十二条 统筹基金支付比例如下：\n（一）普通门诊：在职职工百分之七十；\n"
                   "（二）住院：在职职工百分之九十。", **NEW)
OLD_RATES = make_chunk("old", "12", "第十二条 统筹基金支付比例如下：\n（一）普通门诊：在职职工百分之六十；\n"
                       "（二）住院：在职职工百分之八十。", **OLD)
DRUGS = make_chunk(
    "drug", "1", "附件1 用药目录\n药品名称 | 类别 | 报销比例\n二甲双胍缓释片 | 甲类 | 90%\n利拉鲁肽注射液 | 乙类 | 70%",
    title="门诊慢特病管理办法", published=dt.date(2024, 3, 18), clause="附件1",
    table=Table(headers=["药品名称", "类别", "报销比例"],
                rows=[["二甲双胍缓释片", "甲类", "90%"], ["利拉鲁肽注射液", "乙类", "70%"]]))
HANDBOOK = dict(title="Employee Handbook", published=dt.date(2024, 1, 8), authority="Stellar River Co., Ltd.",
                language="en")
REMOTE = make_chunk("hb", "4.1", "4.1 After probation, employees may work remotely for up to 2 days per week.",
                    clause="4.1", **HANDBOOK)
CLAIMS_NEW = make_chunk("tp24", "6.1", "6.1 Expense claims must be submitted within 60 days after the trip.",
                        clause="6.1", title="Travel Policy", published=dt.date(2024, 3, 1),
                        authority="Stellar River Co., Ltd.", language="en")
CLAIMS_OLD = make_chunk("tp23", "6.1", "6.1 Expense claims must be submitted within 30 days after the trip.",
                        clause="6.1", title="Travel Policy", published=dt.date(2023, 1, 1),
                        authority="Stellar River Co., Ltd.", status="superseded", language="en")


def assert_every_sentence_cited(answer: Answer) -> None:
    assert answer.sentences, answer.text
    ids = {c.chunk_id for c in answer.citations}
    for s in answer.sentences:
        assert s.citations, s.text
        assert set(s.citations) <= ids
        assert re.search(r"(\[\d+\])+$", s.text), f"sentence does not end with markers: {s.text}"
    for n in {int(m) for m in re.findall(r"\[(\d+)\]", answer.text)}:
        assert 1 <= n <= len(answer.citations)


def test_single_clause_answer_cites_the_supporting_sentence():
    answer = ask("异地就医备案需要提前几天办理？", ev(FILING, RATES))
    assert answer.status == "answered"
    assert "3个工作日" in answer.text
    assert_every_sentence_cited(answer)
    cite = answer.citations[0]
    assert (cite.chunk_id, cite.doc_id, cite.title, cite.clause) == (FILING.chunk_id, "new", NEW_TITLE, "第三条")
    assert "3个工作日" in cite.quote
    # the quote's span points into the document, derived from the chunk's span
    offset = FILING.text.index(cite.quote)
    assert cite.span == (FILING.span[0] + offset, FILING.span[0] + offset + len(cite.quote))


def test_two_clause_question_gets_one_sentence_per_clause():
    answer = ask("异地就医备案需要提前几天？住院统筹基金年度最高支付限额是多少？", ev(FILING, REFERRER, RATES))
    assert "3个工作日" in answer.text and "40万元" in answer.text
    assert len(answer.sentences) >= 2
    assert_every_sentence_cited(answer)
    assert {FILING.chunk_id, REFERRER.chunk_id} <= {c.chunk_id for c in answer.citations}


def test_three_clause_question():
    answer = ask("备案要提前几天、备案有效期多长、住院统筹基金最高支付限额是多少？",
                 ev(FILING, REFERRER, RATES))
    for fact in ("3个工作日", "6个月", "40万元"):
        assert fact in answer.text
    assert_every_sentence_cited(answer)


def test_cross_referenced_clause_is_included():
    answer = ask("住院费用统筹基金怎么支付？", ev(REFERRER, RATES, legs=["bm25", "graph"]))
    assert "详见第十二条" in answer.text
    assert "百分之九十" in answer.text  # the content of the referenced clause
    assert RATES.chunk_id in {c.chunk_id for c in answer.citations}
    assert_every_sentence_cited(answer)


def test_version_conflict_names_winner_loser_and_rule():
    answer = ask("在职职工住院统筹基金支付比例是多少？", ev(RATES, OLD_RATES))
    assert answer.status == "answered"
    assert len(answer.conflicts) == 1
    conflict = answer.conflicts[0]
    assert conflict.winner == RATES.chunk_id
    assert conflict.rule == "superseded"  # the old version is repealed: checked before dates
    assert {v.value for v in conflict.values} == {"百分之九十", "百分之八十"}
    assert "百分之九十" in answer.text and "胜出" in answer.text and "已废止" in answer.text
    assert "2023年" in answer.text and "2024年" in answer.text
    assert_every_sentence_cited(answer)


def test_losing_sentence_is_replaced_by_the_winner():
    # the old clause ranks first, yet the answer states the current value
    answer = ask("在职职工住院统筹基金支付比例是多少？", ev(OLD_RATES, RATES))
    first = answer.sentences[0]
    assert "百分之九十" in first.text and first.citations == [RATES.chunk_id]


def test_pinned_version_wins():
    answer = ask("按照2023年的规定，在职职工住院统筹基金支付比例是多少？", ev(RATES, OLD_RATES), version="2023")
    assert answer.conflicts[0].winner == OLD_RATES.chunk_id
    assert answer.conflicts[0].rule == "pinned version 2023"
    assert answer.sentences[0].citations == [OLD_RATES.chunk_id]
    assert "百分之八十" in answer.sentences[0].text


def test_english_question_english_answer_and_conflict():
    answer = ask("How many days after a trip must I submit an expense claim?", ev(CLAIMS_NEW, CLAIMS_OLD))
    assert answer.status == "answered"  # the fact-check reads English words whole
    assert "60 days" in answer.text
    assert "wins" in answer.text and "superseded" in answer.text
    assert answer.conflicts[0].winner == CLAIMS_NEW.chunk_id
    assert not re.search(r"[\u4e00-\u9fff]", answer.text)
    assert_every_sentence_cited(answer)


def test_table_row_lookup():
    answer = ask("二甲双胍缓释片的报销比例是多少？", ev(DRUGS, FILING))
    assert "90%" in answer.text and "二甲双胍缓释片" in answer.text
    assert "利拉鲁肽" not in answer.text
    assert answer.citations[0].chunk_id == DRUGS.chunk_id
    assert_every_sentence_cited(answer)


def test_out_of_scope_question_is_abstained_with_the_gap_named():
    answer = ask("住房公积金贷款额度最高是多少？", ev(FILING, REFERRER, RATES))
    assert answer.status == "abstained"
    assert answer.citations == [] and answer.sentences == []
    assert any("公积金" in g for g in answer.gaps)
    assert "未找到" in answer.text and "公积金" in answer.text


def test_a_word_the_question_says_twice_is_named_once_in_the_gap():
    answer = ask("坐游船，游船上能吸烟吗？", ev(FILING, REFERRER, RATES))
    assert answer.status == "abstained"
    assert answer.text.count("游船") == 1, answer.text


def test_the_gap_names_the_fee_asked_for():
    answer = ask("每户每月要交多少污水处理费？", ev(FILING, REFERRER, RATES))
    assert answer.status == "abstained"
    assert "污水处理费" in answer.text, answer.text


def test_english_out_of_scope_question_is_abstained():
    answer = ask("What is the company's parking policy for employees?", ev(REMOTE, CLAIMS_NEW))
    assert answer.status == "abstained"
    assert any("parking" in g for g in answer.gaps)


def test_no_evidence_is_abstained():
    answer = ask("异地就医备案需要提前几天？", [])
    assert answer.status == "abstained"
    assert answer.gaps and "未找到" in answer.text


def test_partly_answerable_question_answers_and_names_the_gap():
    answer = ask("异地就医备案需要提前几天？住房公积金贷款额度是多少？", ev(FILING, RATES))
    assert answer.status == "answered"
    assert "3个工作日" in answer.text
    assert any("公积金" in g for g in answer.gaps)
    assert_every_sentence_cited(answer)


def test_fact_check_flags_an_unsupported_sentence():
    reasoner = Reasoner(today=TODAY)
    evidence = ev(FILING)
    answer = reasoner.reason("异地就医备案需要提前几天？", route("异地就医备案需要提前几天？"), evidence)
    assert answer.status == "answered" and all(s.supported for s in answer.sentences)
    # a sentence stating a number its citation does not contain (as a careless writer would)
    tampered = answer.model_copy(update={
        "status": "answered",
        "sentences": [AnswerSentence(text="异地就医备案需提前5个工作日办理[1]", citations=[FILING.chunk_id])],
    })
    checked = reasoner.verify(tampered, evidence)
    assert checked.status == "needs_review"
    assert checked.sentences[0].supported is False
    assert "5个工作日" in checked.trace[-1].detail


@pytest.mark.parametrize(
    "sentence",
    [
        "异地就医备案需提前3个工作日办理[1]",
        "异地就医备案需提前三个工作日办理[1]",  # the same number in Chinese numerals
    ],
)
def test_fact_check_accepts_supported_sentences(sentence):
    reasoner = Reasoner(today=TODAY)
    answer = Answer(text=sentence, status="answered",
                    sentences=[AnswerSentence(text=sentence, citations=[FILING.chunk_id])])
    assert reasoner.verify(answer, ev(FILING)).status == "answered"


def test_fact_check_flags_unknown_key_terms_and_missing_citations():
    reasoner = Reasoner(today=TODAY)
    answer = Answer(text="x", status="answered", sentences=[
        AnswerSentence(text="异地就医备案可以在公积金中心办理[1]", citations=[FILING.chunk_id]),
        AnswerSentence(text="备案有效期为6个月", citations=[]),
    ])
    checked = reasoner.verify(answer, ev(FILING))
    assert checked.status == "needs_review"
    assert [s.supported for s in checked.sentences] == [False, False]


def test_claims_carry_matter_and_quantities():
    reasoner = Reasoner(today=TODAY)
    q = "异地就医备案需要提前几天？"
    claims = reasoner.claims(q, route(q), ev(FILING))
    top = claims[0]
    assert top.chunk_id == FILING.chunk_id
    assert [(x.kind, x.value, x.unit) for x in top.quantities] == [("duration", 3.0, "workday")]
    assert "备案" in top.matter


def test_deterministic():
    q = "在职职工住院统筹基金支付比例是多少？"
    a = ask(q, ev(RATES, OLD_RATES))
    b = ask(q, ev(RATES, OLD_RATES))
    assert a.model_dump(exclude={"trace"}) == b.model_dump(exclude={"trace"})


DEDUCTIBLE = make_chunk("new", "7", "第七条 参保人员住院发生的政策范围内费用，起付标准为：一级定点医疗机构300元，"
                        "三级定点医疗机构1000元。", **NEW)


def test_listed_items_asked_respectively_each_get_their_clause():
    answer = ask("在职职工在三级医院住院，起付标准、统筹基金支付比例和年度最高支付限额分别是多少？",
                 ev(REFERRER, RATES, DEDUCTIBLE))
    for fact in ("1000元", "百分之九十", "40万元"):
        assert fact in answer.text
    assert {DEDUCTIBLE.chunk_id, RATES.chunk_id, REFERRER.chunk_id} <= {c.chunk_id for c in answer.citations}


APPROVAL = make_chunk("hr", "7", "第七条 员工休假应当提前3个工作日提出申请。", title="员工休假管理制度",
                      published=dt.date(2024, 1, 8), authority="星河科技有限公司")
APPROVERS = make_chunk("hr", "8", "第八条 休假3个工作日以内的，由部门负责人审批。", title="员工休假管理制度",
                       published=dt.date(2024, 1, 8), authority="星河科技有限公司")


def test_a_who_question_gets_the_sentence_that_names_someone():
    answer = ask("员工休假申请需要提前几天？休假由谁审批？", ev(APPROVAL, APPROVERS))
    assert "3个工作日" in answer.text and "部门负责人" in answer.text


POLICY = make_chunk("tp", "4.1", "4.1 The hotel limit per night depends on the city tier, as shown in the table below.",
                    clause="4.1", title="Travel Policy", published=dt.date(2024, 3, 1), language="en")
TIERS = make_chunk("tp", "4.1-t", "City tier: Tier 1\nCities: Beijing, Shanghai\nHotel limit: CNY 800",
                   clause="Table 1", title="Travel Policy", published=dt.date(2024, 3, 1), language="en",
                   table=Table(headers=["City tier", "Cities", "Hotel limit"],
                               rows=[["Tier 1", "Beijing, Shanghai", "CNY 800"], ["Other", "All other cities", "CNY 500"]]))


def test_a_sentence_pointing_at_a_table_brings_the_table():
    answer = ask("What is the hotel limit per night?", ev(POLICY, TIERS))
    assert "CNY 800" in answer.text
    assert TIERS.chunk_id in {c.chunk_id for c in answer.citations}
    assert_every_sentence_cited(answer)


def test_document_metadata_lines_are_not_claims():
    preamble = make_chunk("nat", "0", "门诊慢特病待遇认定管理规定\n发布机关：国家医疗保障局\n发布日期：2022年8月5日",
                          title="门诊慢特病待遇认定管理规定", published=dt.date(2022, 8, 5), clause="")
    rule = make_chunk("nat", "4", "第四条 经办机构应当自受理认定申请之日起15个工作日内完成认定。",
                      title="门诊慢特病待遇认定管理规定", published=dt.date(2022, 8, 5))
    answer = ask("门诊慢特病认定申请多少个工作日内完成？", ev(preamble, rule))
    assert "15个工作日" in answer.text
    assert "发布机关" not in answer.text


# -- answer-quality rules ---------------------------------------------------------------------

REVIEW_NEW = make_chunk("new", "11", "第十一条 经办机构应当自受理报销申请之日起5个工作日内完成审核；审核通过的，"
                        "报销款直接拨付至参保人员本人社会保障卡银行账户。", **NEW)
REVIEW_OLD = make_chunk("old", "11", "第十一条 经办机构应当自受理报销申请之日起10日内完成审核；审核通过的，"
                        "报销款拨付至参保人员本人银行账户。", **OLD)


def test_the_old_version_of_a_chosen_sentence_is_weighed_even_without_the_question_words():
    # the old clause lacks 社会保障卡, the word the question turns on, yet it is the same rule
    a = ask("报销款多久能到社会保障卡？", ev(REVIEW_NEW, RATES, REFERRER, FILING, REVIEW_OLD))
    assert "5个工作日" in a.text
    assert len(a.conflicts) == 1
    c = a.conflicts[0]
    assert c.winner == REVIEW_NEW.chunk_id and {v.value for v in c.values} == {"5个工作日", "10日"}


@pytest.mark.parametrize("title, authority, first, second, question, expected", [
    # a follow-up that names no subject asks for the amount (the place) of the previous part's
    ("高温津贴通知", "江南省人力资源和社会保障厅",
     "第一条 用人单位安排劳动者在高温天气露天工作的，应当向劳动者发放高温津贴。", "第二条 高温津贴标准为每人每月300元。",
     "高温天气露天工作，用人单位要发津贴吗？发多少？", ["300元", "应当向劳动者发放高温津贴"]),
    ("江北市居住证管理办法", "江北市公安局",
     "第一条 本办法所称居住证，是指在本市居住半年以上的人员申领的证件。",
     "第五条 申领人应当到居住地派出所或者通过江北市政务服务网提交申请。",
     "办居住证要准备什么？去哪儿交？", ["派出所"]),
    # "how many people" is not answered by a count of buses
    ("山路大巴侧翻事故通报", "青川县应急管理局",
     "8月2日凌晨，一辆夜班大巴在青川县山路侧翻。", "经核实，事发时大巴上共有38名乘客，均已送医。",
     "侧翻的夜班大巴上有多少人？", ["38名"]),
    # "where is it held" is answered by the sentence that says "held at ...", not by the one that
    # mentions every word of the question and a date
    ("秋季马拉松赛事通告", "江州市体育局",
     "江州日报讯 记者从市体育局获悉，第十届江州国际马拉松将于11月6日上午7时30分举行，届时全城交通管制。",
     "第十届江州国际马拉松新闻发布会昨日召开。按照赛事安排，本届比赛在滨江奥体中心举行，赛道全长42.195公里。",
     "第十届江州国际马拉松将在哪里举行？", ["滨江奥体中心"]),
])
def test_each_thing_asked_gets_a_sentence_that_states_it(title, authority, first, second, question, expected):
    meta = dict(title=title, published=dt.date(2024, 5, 20), authority=authority)
    a = ask(question, ev(make_chunk("doc", "1", first, **meta), make_chunk("doc", "2", second, **meta)))
    assert all(x in a.text for x in expected), a.text


def test_a_special_case_the_question_does_not_mention_ranks_below_the_general_rule():
    doc = dict(title="医保待遇办法", published=dt.date(2024, 6, 20), authority="江南省医疗保障局")
    special = make_chunk("d", "7", "第七条 临时外出就医人员跨省异地住院的，支付比例降低15个百分点。", **doc)
    general = make_chunk("d", "12", "第十二条 住院费用统筹基金支付比例为百分之九十。", **doc)
    a = ask("住院支付比例是多少？", ev(special, general))
    assert a.text.startswith("住院费用统筹基金支付比例为百分之九十")
    # named in the question, the special case is the answer
    b = ask("临时外出就医人员跨省异地住院，支付比例降低多少？", ev(general, special))
    assert "15个百分点" in b.text


def test_a_question_about_which_source_prevails_answers_with_the_disputed_rule():
    prov = dict(title="江南省门诊慢特病管理办法", published=dt.date(2024, 3, 18), authority="江南省医疗保障局")
    nat = dict(title="门诊慢特病待遇认定管理规定", published=dt.date(2022, 8, 5), authority="国家医疗保障局")
    basis = make_chunk("p", "1", "第一条 根据国家医疗保障局《门诊慢特病待遇认定管理规定》，结合本省实际，制定本办法。", **prov)
    p4 = make_chunk("p", "4", "第四条 经办机构应当自受理认定申请之日起10个工作日内完成认定。", **prov)
    n4 = make_chunk("n", "4", "第四条 经办机构应当自受理认定申请之日起15个工作日内完成认定。", **nat)
    a = ask("江南省的门诊慢特病认定时限和国家规定不一致，以哪个为准？", ev(basis, p4, n4))
    assert a.text.startswith("经办机构应当自受理认定申请之日起10个工作日内完成认定")
    assert a.conflicts and a.conflicts[0].winner == p4.chunk_id


def test_a_yes_no_question_gets_the_rule_not_the_amount():
    doc = dict(title="职工医保待遇办法", published=dt.date(2024, 6, 20), authority="江南省医疗保障局")
    limit = make_chunk("d", "5", "第五条 普通门诊统筹基金年度最高支付限额为6000元。", **doc)
    rule = make_chunk("d", "6", "第六条 参保人员患门诊慢特病的，其门诊费用不计入普通门诊年度最高支付限额。", **doc)
    a = ask("门诊慢特病的门诊费用算不算进普通门诊的年度最高支付限额？", ev(limit, rule))
    assert a.text.startswith("参保人员患门诊慢特病的，其门诊费用不计入")


def test_a_sentence_that_only_defers_to_a_quoted_clause_is_dropped():
    hb = dict(title="Employee Handbook", published=dt.date(2024, 1, 8), authority="Stellar River Co., Ltd.",
              language="en")
    pointer = make_chunk("hb", "3.4", "3.4 Approved overtime is compensated as set out in Section 6.", clause="3.4", **hb)
    rates = make_chunk("hb", "6", "6.1 Approved overtime on working days is compensated at 150% of the hourly "
                       "wage. Overtime on public holidays is compensated at 300% of the hourly wage.", clause="6",
                       **hb)
    a = ask("How is approved overtime compensated?", ev(pointer, rates))
    assert a.text.startswith("Approved overtime on working days is compensated at 150%")
    assert "Section 6" not in a.text
    # a pointer that says something of its own stays
    hr = dict(title="休假管理制度", published=dt.date(2024, 1, 1), authority="星河科技有限公司")
    apply = make_chunk("hr", "6", "第六条 员工休假应当通过OA系统提出申请，审批权限依照本制度第八条执行。", **hr)
    approve = make_chunk("hr", "8", "第八条 休假3个工作日以内的，由部门负责人审批。", **hr)
    b = ask("休假申请在哪里提交？由谁审批？", ev(apply, approve))
    assert "OA系统" in b.text and "部门负责人" in b.text


def test_the_core_of_a_named_place_weighs_like_the_place():
    prov = dict(title="江南省异地就医直接结算管理办法", published=dt.date(2024, 5, 10), authority="江南省医疗保障局")
    nat = dict(title="跨省异地就医直接结算管理规定", published=dt.date(2024, 1, 15), authority="国家医疗保障局")
    n = make_chunk("n", "4", "第四条 参保人员跨省异地就医前应当办理备案，可以通过国家医保服务平台等渠道办理。", **nat)
    p = make_chunk("p", "3", "第三条 参保人员异地就医前，应当通过“江南医保”App或者经办机构窗口办理备案。", **prov)
    a = Reasoner(today=TODAY).reason(
        "江南省异地就医备案可以通过哪些渠道办理？",
        route("江南省异地就医备案可以通过哪些渠道办理？", slots=Slots(places=["江南省"])), ev(n, p))
    assert a.text.startswith("参保人员异地就医前，应当通过“江南医保”App")


def test_a_word_inside_a_unit_is_not_the_word():
    from agentic_rag.agents.vocabulary import TextCover

    text = TextCover("经办机构应当自受理申请之日起3个工作日内作出决定。")
    assert text.covers("工作日") and not text.covers("工作")
    assert TextCover("用人单位安排劳动者工作的，工作日延长").covers("工作")


NEWS = dict(title="", published=dt.date(2023, 5, 2))
FESTIVAL = Chunk(chunk_id="n1:p0:0", doc_id="n1", ord=0, title="", language="zh", span=(0, 80),
                 text="本届城市音乐节吸引了众多乐迷。音乐节将于2023年6月18日在滨江公园开幕，为期三天。主办方表示，今年新增了夜间场次。")
FESTIVAL_NOISE = Chunk(chunk_id="n2:p0:0", doc_id="n2", ord=0, title="", language="zh", span=(0, 60),
                       text="城市音乐节的舞台设计融合了江南园林元素。乐迷们对音乐节的氛围评价很高。")


def test_a_when_question_is_answered_by_the_sentence_with_a_date():
    answer = ask("城市音乐节什么时候开幕？", ev(FESTIVAL_NOISE, FESTIVAL))
    assert answer.status == "answered"
    assert answer.text.startswith("音乐节将于2023年6月18日在滨江公园开幕")


def test_a_when_question_is_abstained_when_no_sentence_states_a_date():
    answer = ask("城市音乐节什么时候开幕？", ev(FESTIVAL_NOISE))
    assert answer.status == "abstained"
    # the news speaks of the festival but gives no date: the gap names the date, not a
    # missing provision (news is not rule text)
    assert "规定" not in answer.text and "开幕的日期或时间" in answer.text, answer.text


def test_a_heading_line_is_context_not_part_of_the_quoted_sentence():
    chunk = make_chunk("g", "2", "Eligibility\nStaff who have passed probation may work from home two days a week.",
                       clause="2", title="Home Working Guideline", published=dt.date(2024, 2, 1), language="en")
    answer = ask("Who may work from home?", ev(chunk))
    assert answer.status == "answered"
    assert answer.text.startswith("Staff who have passed probation")
    assert "Eligibility" not in answer.citations[0].quote


def test_a_markdown_heading_does_not_swallow_its_first_sentence():
    chunk = make_chunk("g", "3", "## Parking\nVisitors park in the east lot after signing in at reception.",
                       clause="3", title="Site Guide", published=dt.date(2024, 2, 1), language="en")
    answer = ask("Where do visitors park?", ev(chunk))
    assert answer.status == "answered" and answer.text.startswith("Visitors park in the east lot")


def test_the_users_synonyms_count_as_the_question_word():
    chunk = make_chunk("f", "5", "第五条 公司年度营业收入达到五亿元以上的，应当披露分部信息。", title="信息披露细则",
                       published=dt.date(2024, 1, 1))
    question = "年度营业额达到多少需要披露分部信息？"
    without = Reasoner(today=TODAY).reason(question, route(question), ev(chunk))
    vocabulary = packaged_vocabulary()
    vocabulary = Vocabulary((*vocabulary.synonym_groups, ("营业额", "营业收入")), vocabulary.colloquial)
    with_user = Reasoner(today=TODAY, vocabulary=vocabulary).reason(question, route(question), ev(chunk))
    assert "营业额" not in " ".join(without.gaps) or without.status == "abstained"
    assert with_user.status == "answered" and "五亿元" in with_user.text
    assert not with_user.gaps


def test_a_which_ones_question_gets_the_whole_list_under_its_heading_line():
    chunk = make_chunk("v", "9", "Appendix B\nCountries requiring an invitation letter:\n- Chile\n- Nepal\n- Kenya\n"
                       "- Laos", clause="Appendix B", title="Business Travel Rules", published=dt.date(2024, 4, 1),
                       language="en")
    other = make_chunk("v", "2", "2. Travel must be booked through the approved agency.", clause="2",
                       title="Business Travel Rules", published=dt.date(2024, 4, 1), language="en")
    answer = ask("Which countries need an invitation letter?", ev(other, chunk))
    assert answer.status == "answered"
    assert all(c in answer.text for c in ("Chile", "Nepal", "Kenya", "Laos"))
    assert answer.text.startswith("Countries requiring an invitation letter")
    assert_every_sentence_cited(answer)


def test_the_answer_stays_short_sentences_that_only_add_words_go_past_the_limit():
    rule = make_chunk("t", "4", "第四条 差旅住宿标准为每人每晚不超过500元。出差人员应当在返回后十个工作日内提交住宿发票和行程单。",
                      title="差旅费管理办法", published=dt.date(2024, 1, 1))
    question = "差旅住宿标准是多少，发票什么时候提交？"
    from agentic_rag.config import ReasonerSettings

    roomy = Reasoner(ReasonerSettings(max_answer_chars=200), today=TODAY).reason(question, route(question), ev(rule))
    tight = Reasoner(ReasonerSettings(max_answer_chars=40), today=TODAY).reason(question, route(question), ev(rule))
    assert "500元" in roomy.text and "十个工作日" in roomy.text
    assert tight.text.startswith("差旅住宿标准为每人每晚不超过500元")
    assert len(tight.sentences) <= len(roomy.sentences)


def test_the_evidence_score_is_recorded_for_calibration():
    answer = ask("异地就医备案需要提前几天办理？", ev(FILING, RATES))
    event = next(e for e in answer.trace if e.kind == "reason")
    assert event.args["evidence_score"] > event.args["abstain_below"]


def test_a_sentence_in_the_question_s_frame_about_another_matter_is_no_answer():
    # "出口交货值增长12.5%" fills "……增长了多少" as well as the value asked would; that orders the
    # sentences about the matter, it does not make the documents speak of the matter
    meta = dict(title="全市经济运行情况通报", published=dt.date(2024, 7, 10), authority="江州市统计局")
    a = ask("今年全市工业增加值增长了多少？", ev(make_chunk("doc", "1", "今年全市出口交货值增长12.5%，增速高于全省平均水平。", **meta),
                                            make_chunk("doc", "2", "全市规模以上企业数量达到1200家。", **meta)))
    assert a.status == "abstained", a.text
    assert "工业增加值" in a.text


# -- general signals on text the rules were not written from ---------------------------------
ABROAD = dict(title="Hybrid Work Standard", published=dt.date(2025, 2, 1), authority="Lumen Tools Ltd.",
              language="en")


def test_a_rate_per_another_period_is_not_the_rate_asked():
    weekly = make_chunk("hw", "2.1", "2.1 Throughout the year, remote work from abroad is allowed for up to two days "
                        "per week.", clause="2.1", **ABROAD)
    yearly = make_chunk("hw", "2.2", "2.2 Remote work from abroad is capped at 15 working days per calendar year.",
                        clause="2.2", **ABROAD)
    answer = ask("How many days a year may I work remotely from abroad?", ev(weekly, yearly))
    assert "15 working days" in answer.text.split("[1]")[0], answer.text


def test_what_a_question_says_has_not_happened_is_answered_by_the_sentence_that_says_so():
    law = dict(title="示范建设工程条例", published=dt.date(2024, 5, 1), authority="示范市人民代表大会常务委员会")
    done = make_chunk("law", "40", "第四十条 承包人签订并履行违法分包合同的，处十万元以下罚款。", **law)
    not_yet = make_chunk("law", "41", "第四十一条 违法分包合同尚未履行的，可以处五万元以下罚款。", **law)
    answer = ask("违法分包合同已经签了但还没有履行，最多罚多少钱？", ev(done, not_yet))
    assert answer.text.startswith("违法分包合同尚未履行的"), answer.text


def test_the_items_after_the_sentence_they_belong_to_answer_a_which_question():
    chunk = make_chunk("it", "4", "4 Staff cannot take company laptops to sanctioned countries under any "
                       "circumstances. Sanctioned countries currently include Atlantis, Lemuria and Mu. "
                       "Travel to other places needs no approval.", clause="4", **ABROAD)
    answer = ask("Which countries can't I bring my work laptop to?", ev(chunk))
    assert "Atlantis, Lemuria and Mu" in answer.text, answer.text


def test_a_deferred_standard_brings_the_sentence_of_the_clause_that_states_it():
    law = dict(title="示范劳务条例", published=dt.date(2024, 1, 1), authority="示范市人民政府")
    penalty = make_chunk("lw", "60", "第六十条 单位违反本条例规定解除劳务合同的，应当依照本条例第三十条规定的补偿标准的二倍"
                         "支付赔偿金。", **law)
    standard = make_chunk("lw", "30", "第三十条 补偿按劳务人员的服务年限，每满一年支付一个月报酬的标准支付。本条所称月报酬，"
                          "是指合同解除前十二个月的平均报酬，月报酬高于本市平均报酬三倍的，按三倍计算。", **law)
    answer = ask("单位违法解除劳务合同，赔偿金怎么计算？", ev(penalty, standard))
    assert "每满一年支付一个月报酬" in answer.text, answer.text


def test_the_users_words_rank_when_the_documents_use_them_and_the_rewrite_helps():
    crew = dict(title="Crew Handbook", published=dt.date(2025, 3, 1), authority="Harbour Lines", language="en")
    leave = make_chunk("cr", "2.1", "2.1 Parental leave is booked with the approval of the crew lead.", clause="2.1",
                       **crew)
    time_off = make_chunk("cr", "5.1", "5.1 Time off needs no approval from the crew lead.", clause="5.1", **crew)
    question = "Do I need the crew lead's approval for time off?"
    # the Router rewrote "time off" as "leave"
    rewritten = RouteDecision(question=question, query="Do I need the crew lead's approval for leave?", language="en")
    answer = Reasoner(today=TODAY).reason(question, rewritten, ev(leave, time_off))
    assert answer.text.startswith("Time off needs no approval"), answer.text


def test_an_amending_item_that_replaces_words_in_a_clause_is_a_newer_value_of_that_clause():
    act = make_chunk("bike", "7", "第七条 共享单车运营企业应当自投放之日起二十日内向交通运输部门备案；变更投放数量的，"
                     "按照前款规定备案。", title="示范市共享单车管理条例", published=dt.date(2021, 3, 1),
                     authority="示范市人民代表大会常务委员会")
    item = Chunk(chunk_id="amend:i3:0", doc_id="amend", ord=3, text="三、将第七条中的“二十日”修改为“十日”。",
                 clause="三", clause_no="3", title="示范市人民代表大会常务委员会关于修改《示范市共享单车管理条例》的决定",
                 publish_date=dt.date(2024, 6, 1), authority="示范市人民代表大会常务委员会", span=(0, 20))
    answer = ask("共享单车投放以后，企业要在几天内去备案？", ev(act, item))
    assert answer.conflicts, answer.text
    assert answer.conflicts[0].values[0].value == "十日" and answer.conflicts[0].rule.startswith("newer"), \
        answer.conflicts
    assert "十日" in answer.text.split("各来源")[0], answer.text



def test_the_table_row_whose_band_holds_the_amount_asked_answers_whole():
    rows = [["Up to £10,000", "Team lead", "None"], ["£10,000.01 to £60,000", "Finance Director", "Two quotes"],
            ["Over £60,000", "Board", "Tender report"]]
    text = "4.2 Contract approvals\nValue | Approver | Also required\n" + "\n".join(" | ".join(r) for r in rows)
    table = make_chunk("cp", "4.2", text, clause="4.2", title="Contracting Policy", published=dt.date(2025, 1, 1),
                       authority="Fenwick Labs", language="en",
                       table=Table(headers=["Value", "Approver", "Also required"], rows=rows))
    question = "Who approves a £30,000 contract with a supplier, and what else is needed?"
    answer = Reasoner(today=TODAY).reason(question, RouteDecision(question=question, query=question, language="en"),
                                          ev(table))
    first = answer.text.split("[1]")[0]
    assert "Finance Director" in first and "Two quotes" in first, answer.text


def test_a_name_the_segmenter_splits_is_matched_whole_where_the_evidence_writes_it():
    rules = dict(title="示范市非机动车通行规定", published=dt.date(2024, 4, 1), authority="示范市人民政府")
    duty = make_chunk("nm", "3", "第三条 区人民政府服务大厅每日8:30至17:00受理非机动车通行证的申请。", **rules)
    limits = make_chunk("nm", "9", "第九条 人民路每日7:30至9:00限制非机动车通行；其他路段不限。", **rules)
    answer = ask("人民路每天几点到几点限行？", ev(duty, limits))
    assert "7:30至9:00" in answer.text.split("[1]")[0], answer.text


def test_a_penalty_for_breaking_a_clause_brings_the_clause_that_states_the_duty():
    rules = dict(title="示范市共享充电设施管理条例", published=dt.date(2024, 8, 1), authority="示范市人民代表大会常务委员会")
    duty = make_chunk("cd", "12", "第十二条 禁止在地下车库、消防通道、楼梯间设置充电桩。", **rules)
    patrol = make_chunk("cd", "30", "第三十条 物业服务人应当对小区内充电桩设置情况进行巡查，发现违反本条例第十二条规定的，应当予以劝阻。",
                        **rules)
    answer = ask("物业巡查小区时，发现充电桩设置在哪些地方要劝阻？", ev(patrol, duty))
    assert "地下车库、消防通道、楼梯间" in answer.text, answer.text


def test_an_over_long_sentence_is_quoted_by_the_clauses_that_answer():
    # one "sentence" of a feature story: a quotation runs over its full stops, and the name asked
    # comes after twelve clauses about something else
    story = ("“我们先把城墙修到第三段，再回头补第一段，”老匠人笑着说，“那年雨水多，砖坯晾不干，"
             "窑火一停就是半个月，大家只好去山里砍柴，一担一担往回挑，手上全是血泡，可没有一个人喊累，"
             "因为谁都知道这段城墙要守住整个镇子的粮仓，”说到这里，他停了很久，"
             "如今修复工程已经完工，纪录片《砖语》的导演韦远舟把这段往事拍进了片尾。")
    chunk = make_chunk("doc", "1", story, title="古城墙修复纪事", published=dt.date(2024, 3, 1), authority="江州日报")
    answer = ask("纪录片《砖语》的导演是谁？", ev(chunk))
    text = answer.text.split("[1]")[0]
    assert "导演韦远舟" in text and len(text) <= 150, answer.text
    assert text.startswith("……"), answer.text  # what is left out is marked
    assert answer.citations[0].quote in story  # the citation still quotes the source verbatim


def test_a_sentences_condition_words_are_kept_until_the_dictionary_changes(monkeypatch):
    """A candidate that applies only in a case the question does not name ranks lower; the words
    of its case are worked out once per sentence and segmentation dictionary."""
    import agentic_rag.agents.reasoner.core as core
    from agentic_rag.agents.vocabulary import TextCover

    sentence = "持有异地就医备案凭证和外地户籍证明的退休人员的，按规定办理门诊结算。"
    assert core._unasked_condition(sentence, TextCover("门诊怎么结算"))
    misses = core._conditions.cache_info().misses
    assert not core._unasked_condition(sentence, TextCover("有异地就医备案凭证和外地户籍证明的退休人员门诊怎么结算"))
    assert core._conditions.cache_info().misses == misses
    generation = core.dictionary_generation()
    monkeypatch.setattr(core, "dictionary_generation", lambda: generation + 1)
    assert core._unasked_condition(sentence, TextCover("门诊怎么结算"))
    assert core._conditions.cache_info().misses == misses + 1


def test_a_passage_of_one_line_that_is_its_own_title_still_answers():
    # a search snippet without a title: ingest takes its first line as the title, and that line
    # is all the passage says
    snippet = "Mar 3, 2024 ... 青溪县今年共招收新生860人，比去年多42人，创历史新高 ..."
    chunk = make_chunk("p1", "1", snippet, title=snippet, published=dt.date(2024, 3, 3), clause="")
    answer = ask("青溪县今年招收了多少名新生？", ev(chunk))
    assert answer.status != "abstained" and "860人" in answer.text, answer.text
    titled = make_chunk("p2", "1", "青溪县教育简报\n今年共招收新生860人。", title="青溪县教育简报",
                        published=dt.date(2024, 3, 3), clause="")
    assert not any("简报" in s.text for s in ask("青溪县今年招收了多少名新生？", ev(titled)).sentences)


def test_a_search_excerpt_s_date_stamp_does_not_make_it_about_that_year():
    # each excerpt is stamped with the day the page was found, a year after the year it reports
    older = "Feb 2, 2024 ... 2023年，青溪水库全年供水量达到1.2亿立方米，创历史新高 ..."
    newer = "Jan 8, 2025 ... 记者从青溪水库管理处获悉，2024年全年供水量为1.5亿立方米 ..."
    chunks = [make_chunk(f"p{i}", "1", t, title=t, published=None, clause="") for i, t in enumerate((older, newer))]
    answer = ask("青溪水库2023年和2024年的供水量分别是多少？", ev(*chunks))
    assert "1.2亿立方米" in answer.text and "1.5亿立方米" in answer.text, answer.text


PLEDGE = dict(title="江南省住房公积金质押贷款办法", published=dt.date(2024, 5, 6), authority="江南省住房公积金管理中心")


def test_a_meaning_question_is_answered_by_the_definition_not_by_a_sentence_with_an_amount():
    # "质押率" names a rate, but "什么是质押率" asks what the word means: the sentence with a
    # number that only mentions it is not the answer, and the cap's disagreement between two
    # versions is not about the meaning
    terms = make_chunk("pl", "2", "第二条 超额质押是指质押物价值超过两个质押率上限的部分。"
                       "质押率是指贷款金额与质押物评估价值的比例。", **PLEDGE)
    cap = make_chunk("pl", "9", "第九条 质押率最高不超过百分之七十。", **PLEDGE)
    old_cap = make_chunk("pl-old", "9", "第九条 质押率最高不超过百分之六十。",
                         **{**PLEDGE, "published": dt.date(2021, 5, 6), "status": "repealed"})
    answer = ask("什么是质押率？", ev(cap, terms, old_cap))
    assert answer.status == "answered"
    assert answer.text.startswith("质押率是指贷款金额与质押物评估价值的比例")
    assert not answer.conflicts and "百分之" not in answer.text
    assert_every_sentence_cited(answer)


def test_an_english_glossary_line_answers_what_a_term_means():
    glossary = make_chunk("tp", "1.2", "1.2 Definitions. Home station: the office named in the employee's contract.",
                          clause="1.2", title="Travel Policy", published=dt.date(2024, 3, 1), language="en")
    rule = make_chunk("tp", "3.1", "3.1 Trips of more than 50 km from the home station are paid at 0.30 per km.",
                      clause="3.1", title="Travel Policy", published=dt.date(2024, 3, 1), language="en")
    answer = ask("What does the travel policy mean by a home station?", ev(rule, glossary))
    assert answer.status == "answered"
    assert "office named in the employee's contract" in answer.sentences[0].text


VILLAGE = dict(title="青禾村村民自治章程", published=dt.date(2024, 9, 1), authority="青禾村村民会议")


def test_a_clause_that_names_another_clauses_item_by_number_answers_for_that_item():
    # 第九条 says what item (二) of 第八条 needs without repeating its words; the question asks
    # in those words, joining two acts (提取和使用) on one thing, which is one matter, not two
    items = make_chunk("v", "8", "第八条 下列事项由村民会议决定：\n（一）修订村规民约；\n（二）提取和使用集体公益金；\n"
                       "（三）调整宅基地。", **VILLAGE)
    votes = make_chunk("v", "9", "第九条 村民会议决定本章程第八条第（二）项规定的事项，应当经到会人员三分之二以上同意；"
                       "决定其他事项，应当经到会人员过半数同意。", **VILLAGE)
    fine = make_chunk("v", "20", "第二十条 未经村民会议同意擅自使用集体公益金的，由村民委员会责令退还，并处500元罚款。",
                      **VILLAGE)
    answer = ask("村民会议决定提取和使用集体公益金需要多少人同意？", ev(fine, items, votes))
    assert answer.status == "answered"
    assert answer.sentences[0].text.startswith("村民会议决定本章程第八条第（二）项规定的事项")
    assert "三分之二以上" in answer.sentences[0].text
    # the item it names comes with it, cited: the reader sees what 第八条第（二）项 is
    assert any("提取和使用集体公益金" in s.text for s in answer.sentences[1:])
    assert "500元" not in answer.text
    assert_every_sentence_cited(answer)


# rule text names in its own terms what people name with everyday words
_CARE = dict(title="江南省校园安全条例", published=dt.date(2024, 6, 1), authority="江南省人大常委会")
PATIENTS = make_chunk("care", "22", "第二十二条 医疗机构及其医务人员应当向患者说明病情和医疗措施。", **_CARE)
PUPILS = make_chunk("care", "23", "第二十三条 未成年人在幼儿园、学校学习、生活期间受到人身损害，幼儿园、学校未尽到"
                    "教育、管理职责的，应当承担侵权责任。", **_CARE)


@pytest.mark.parametrize(("question", "quoted"), [
    ("医院要不要把病情告诉病人？", "向患者说明病情"),
    ("孩子在学校受伤了，学校要负责吗？", "应当承担侵权责任"),
])
def test_an_everyday_word_the_rule_text_words_otherwise_does_not_put_a_question_out_of_scope(question, quoted):
    answer = ask(question, ev(PATIENTS, PUPILS))
    assert answer.status != "abstained", answer.text
    assert quoted in answer.sentences[0].text
    assert_every_sentence_cited(answer)


@pytest.mark.parametrize(("question", "gap"), [
    ("学校的地址在哪里？", "地址"),
    ("孩子在学校受伤了，医院的电话是多少？", "电话"),
])
def test_the_everyday_thing_a_question_asks_for_still_has_to_be_in_the_evidence(question, gap):
    answer = ask(question, ev(PATIENTS, PUPILS))
    assert answer.status == "abstained", answer.text
    assert gap in answer.text


# rule text tells a time by the event it is tied to, not by a date
_LENDING = dict(title="江南省图书借阅规则", published=dt.date(2024, 5, 1), authority="江南省图书馆")
CARD = make_chunk("lend", "6", "第六条 读者证自读者本人签署借阅承诺书时生效。", **_LENDING)
RETURNS = make_chunk("lend", "7", "第七条 借阅期限没有约定的，读者可以随时归还所借图书。", **_LENDING)
RETURNS_EN = make_chunk("lend-en", "3", "3 Deposits. The key deposit is refunded upon return of the keys to reception.",
                        title="Guest House Rules", published=dt.date(2024, 5, 1), language="en", clause="3")


@pytest.mark.parametrize(("question", "quoted"), [
    ("读者证什么时候生效？", "签署借阅承诺书时生效"),
    ("没约定借阅期限的话，读者何时可以还书？", "随时归还"),
    ("When is the key deposit refunded?", "upon return of the keys"),
])
def test_a_when_question_is_answered_by_the_event_a_rule_ties_the_time_to(question, quoted):
    answer = ask(question, ev(CARD, RETURNS, RETURNS_EN))
    assert answer.status == "answered", answer.text
    assert quoted in answer.sentences[0].text


def test_a_difference_question_is_answered_by_what_the_documents_say_of_each_thing():
    # the rules say what each kind of reader card allows; none says "区别"
    kinds = make_chunk("lend", "2", "第二条 普通读者证可以外借图书。参考读者证仅限馆内阅览，不得外借。", **_LENDING)
    answer = ask("普通读者证和参考读者证的区别？", ev(kinds, CARD, RETURNS))
    assert answer.status == "answered", answer.text
    assert "可以外借" in answer.text and "不得外借" in answer.text


_SICK = dict(title="Harbourline Sickness Policy", published=dt.date(2024, 2, 1), language="en")
SICK_PAY = make_chunk("sick", "4", "4 Sick pay. After 20 weeks of sickness absence, salary is paid at 50 per cent.",
                      clause="4", **_SICK)
FIT_NOTE = make_chunk("sick", "5", "5 Fit notes. From the second week of absence a fit note from a doctor is needed, "
                      "and the employee sends it to their manager.", clause="5", **_SICK)
HOLIDAYS = make_chunk("sick", "6", "6 Holidays. Holiday requests are approved by the line manager.", clause="6", **_SICK)


@pytest.mark.parametrize("question", [
    # the span is stated in other units than the question's
    "What share of salary is paid once an employee has been off sick for more than five months?",
    # "onwards" is a manner, "resign" and "calls" are what someone does: none is a thing
    "From which week onwards is a fit note needed?",
    "If I resign while off sick, does my manager still get a fit note?",
    "What happens to sick pay if my manager calls me during absence?",
])
def test_units_manners_and_actions_worded_otherwise_do_not_put_a_question_out_of_scope(question):
    answer = ask(question, ev(SICK_PAY, FIT_NOTE, HOLIDAYS))
    assert answer.status == "answered", answer.text
    # no word of the question is taken for a thing the documents lack (the trace's coverage)
    assert [e.args["s_coverage"] for e in answer.trace if e.kind == "reason"] == [1.0]
    assert_every_sentence_cited(answer)


_CLINIC_NEW = dict(title="江南省社区门诊待遇办法", published=dt.date(2024, 6, 1), authority="江南省医疗保障局")
_CLINIC_OLD = dict(title="江南省社区门诊待遇办法", published=dt.date(2023, 3, 1), authority="江南省医疗保障局",
                   status="repealed")


def test_an_answer_carries_no_disagreement_about_a_neighbouring_clause_or_across_clauses():
    # the deductible is the same in both versions; the yearly cap, a clause worded alike but
    # for its name, changed
    new_floor = make_chunk("cn", "4", "第四条 参保人员在社区门诊发生的政策范围内费用，年度起付标准为600元。", **_CLINIC_NEW)
    new_cap = make_chunk("cn", "5", "第五条 参保人员在社区门诊发生的政策范围内费用，年度最高支付限额为4000元。", **_CLINIC_NEW)
    old_floor = make_chunk("co", "4", "第四条 参保人员在社区门诊发生的政策范围内费用，年度起付标准为600元。", **_CLINIC_OLD)
    old_cap = make_chunk("co", "5", "第五条 参保人员在社区门诊发生的政策范围内费用，年度最高支付限额为3000元。", **_CLINIC_OLD)
    answer = ask("参保人员在社区门诊看病，年度起付标准是多少？", ev(new_floor, new_cap, old_floor, old_cap))
    assert answer.status == "answered"
    assert answer.text.startswith("参保人员在社区门诊发生的政策范围内费用，年度起付标准为600元")
    assert answer.conflicts == [] and "不一致" not in answer.text, answer.text


_ESTATE = dict(title="松岭市住宅物业服务条例", published=dt.date(2024, 5, 1), authority="松岭市人民代表大会常务委员会")
REPAIR = make_chunk("estate", "12", "第十二条 物业服务人接到业主报修后，应当在二十四小时内上门维修；"
                    "危及人身安全的，应当在三十分钟内到达现场。", **_ESTATE)
ESTATE_FEE = make_chunk("estate", "20", "第二十条 业主应当按照物业服务合同约定按时交纳物业服务费用。", **_ESTATE)
_KEYS = dict(title="Fernhill Lettings Tenancy Terms", published=dt.date(2024, 9, 1), language="en")
DEPOSIT = make_chunk("keys", "7", "7 Deposit. The deposit is returned within 14 days of the end of the tenancy, "
                     "less the cost of repairing damage.", clause="7", **_KEYS)


@pytest.mark.parametrize("question, evidence, value", [
    # the scene names the user's own case (天花板, 邻居), the asked clause what the rule states
    ("楼上邻居家漏水把我家天花板泡了，物业多久必须上门维修？", (REPAIR, ESTATE_FEE), "二十四小时"),
    ("If my flatmate moves out early and I break a window, how soon is the deposit returned?",
     (DEPOSIT,), "14 days"),
])
def test_the_scene_a_person_sets_before_asking_does_not_put_the_question_out_of_scope(question, evidence, value):
    answer = ask(question, ev(*evidence))
    assert answer.status == "answered", answer.text
    assert value in answer.text
    assert_every_sentence_cited(answer)


@pytest.mark.parametrize("question", [
    # the thing asked is what the rules lack, whatever the scene
    "楼上邻居家漏水把我家天花板泡了，维修基金每平方米交多少钱？",
    # one clause: its things decide scope, as before
    "天花板漏水的维修基金怎么交？",
])
def test_a_thing_the_asking_clause_names_and_the_rules_lack_still_means_not_found(question):
    answer = ask(question, ev(REPAIR, ESTATE_FEE))
    assert answer.status == "abstained", answer.text
    assert "未找到" in answer.text


_PARKING = dict(title="柳溪市机动车停车条例", published=dt.date(2024, 3, 1), authority="柳溪市人民代表大会常务委员会")
PARK_NOTICE = make_chunk("park", "9", "第九条 停车场经营者应当在入口显著位置公示停车服务收费标准，"
                         "并于每月五日前向区交通运输部门报送上月经营数据。", **_PARKING)
PARK_MONTHLY = make_chunk("park", "11", "第十一条 住宅小区内的月租车位，每个车位每月收费不超过300元。", **_PARKING)
PARK_FINE = make_chunk("park", "20", "第二十条 停车场经营者未按规定公示停车服务收费标准的，由区交通运输部门责令改正，"
                       "处二千元以上一万元以下罚款。", **_PARKING)
PARK_DISABLED = make_chunk("park", "12", "第十二条 残疾人驾驶的机动车在公共停车场停放两小时以内的，免费停放。", **_PARKING)
_LIBRARY = dict(title="Ashgrove Library Membership Rules", published=dt.date(2025, 1, 6), language="en")
CARD_LOST = make_chunk("lib", "4.2", "4.2 Lost cards. A lost card must be reported to the front desk within 3 days.",
                       clause="4.2", **_LIBRARY)
CARD_FEE = make_chunk("lib", "4.3", "4.3 Replacement cards. A replacement card costs EUR 5.", clause="4.3", **_LIBRARY)


@pytest.mark.parametrize("question, evidence", [
    # the rule says that the fee is posted and when data is filed (五日): no sum
    ("柳溪市停车场的停车服务费每月要交多少？", (PARK_NOTICE,)),
    # a time limit (3 days) is no price
    ("How much does it cost to report a lost card at the Ashgrove front desk?", (CARD_LOST,)),
    # the fine for not posting the fee is no fee
    ("柳溪市停车场的停车服务费每月要交多少？", (PARK_NOTICE, PARK_FINE)),
])
def test_a_question_for_a_sum_of_money_is_not_answered_by_a_sentence_without_one(question, evidence):
    answer = ask(question, ev(*evidence))
    assert answer.status == "abstained", answer.text
    # the documents speak of the matter: what they lack is the sum, not a rule about it
    assert "的金额" in answer.text or "no amount found" in answer.text, answer.text


@pytest.mark.parametrize("question, evidence, value", [
    ("小区里的月租车位每个月要交多少钱？", (PARK_NOTICE, PARK_MONTHLY), "300元"),
    ("残疾人开车在公共停车场停一个小时要交多少钱？", (PARK_NOTICE, PARK_DISABLED), "免费"),
    ("How much does it cost to replace a lost card at Ashgrove?", (CARD_LOST, CARD_FEE), "EUR 5"),
    ("停车场不公示停车服务收费标准会被罚多少钱？", (PARK_NOTICE, PARK_FINE), "二千元以上一万元以下"),
])
def test_a_sum_of_money_is_answered_by_the_sum_or_by_its_absence(question, evidence, value):
    answer = ask(question, ev(*evidence))
    assert answer.status == "answered", answer.text
    assert value in answer.sentences[0].text, answer.text
    assert_every_sentence_cited(answer)


_HEATING = dict(title="柳溪市城镇供热管理办法", published=dt.date(2024, 10, 8), authority="柳溪市人民政府")
HEAT_FINE = make_chunk("heat", "21", "第二十一条 供热单位未按规定公示居民供热费标准的，由供热主管部门责令改正，"
                       "处五千元以上三万元以下罚款。", **_HEATING)
HEAT_PRICE = make_chunk("heat", "9", "第九条 居民供热费按建筑面积计收，标准为每平方米每个采暖期22元。", **_HEATING)
HEAT_PRICE_SLASH = make_chunk("heat", "9", "第九条 居民供热费按建筑面积计收，标准为22元/平方米·采暖期。", **_HEATING)


def test_a_price_asked_per_square_metre_is_not_answered_by_a_lump_sum():
    question = "柳溪市居民供热费每平方米要交多少钱？"
    answer = ask(question, ev(HEAT_FINE))
    assert answer.status == "abstained", answer.text  # the fine is a sum, but not per square metre
    for price in (HEAT_PRICE, HEAT_PRICE_SLASH):
        answer = ask(question, ev(HEAT_FINE, price))
        assert answer.status == "answered", answer.text
        assert "22元" in answer.sentences[0].text, answer.text


_SUPPLIERS = dict(title="Tarnmoor Foods Supplier Policy", published=dt.date(2025, 2, 3), language="en")
SUPPLIER_TERM = make_chunk("sup", "1.2", "1.2 Definitions. Approved supplier — a supplier listed in Appendix B that "
                           "has passed the checks in Section 4.", clause="1.2", **_SUPPLIERS)
SUPPLIER_SIGN_OFF = make_chunk("sup", "4.3", "4.3 Sign-off. The Finance Manager gives final approval for adding a "
                               "supplier to Appendix B.", clause="4.3", **_SUPPLIERS)


def test_a_reference_to_a_part_of_the_document_names_no_one():
    # "Appendix B" and "Section 4" are capitalised, but a "who" question is answered by the
    # sentence that names the role, not by the definition that points at the appendix
    answer = ask("Who puts a new supplier on Tarnmoor's approved list?", ev(SUPPLIER_TERM, SUPPLIER_SIGN_OFF))
    assert answer.status == "answered", answer.text
    assert "Finance Manager" in answer.sentences[0].text, answer.text


_FUND = dict(title="松岭市住房公积金提取细则", published=dt.date(2024, 7, 1), authority="松岭市住房公积金管理中心")
FUND_RETIRED = make_chunk("fund", "8", "第八条 职工离休、退休的，可以提取本人住房公积金账户全部余额。", **_FUND)
FUND_RENT = make_chunk("fund", "9", "第九条 职工租赁自住住房的，每月提取住房公积金不超过1200元。", **_FUND)
FUND_PAPERS = make_chunk("fund", "10", "第十条 职工因离休、退休提取住房公积金的，应当提供离退休证明。", **_FUND)


def test_a_whole_sum_in_words_answers_how_much():
    answer = ask("职工退休以后能提取多少住房公积金？", ev(FUND_RENT, FUND_RETIRED))
    assert answer.status == "answered", answer.text
    assert "全部余额" in answer.sentences[0].text, answer.text


def test_a_follow_up_that_repeats_the_action_asks_about_the_same_subject():
    # "能提取多少" names no one: it asks what the retired worker of the first part may draw,
    # not the renter's monthly cap
    answer = ask("职工退休提取住房公积金要带什么材料？能提取多少？", ev(FUND_RENT, FUND_PAPERS, FUND_RETIRED))
    assert answer.status == "answered", answer.text
    assert "离退休证明" in answer.text and "全部余额" in answer.text, answer.text
    assert "1200元" not in answer.text, answer.text


def news_chunk(doc: str, title: str, text: str, published: dt.date) -> Chunk:
    """A news report's passage: no clause."""
    return Chunk(chunk_id=f"{doc}:0", doc_id=doc, ord=0, text=text, clause=None, clause_no=None, title=title,
                 publish_date=published, span=(0, len(text)), kind="body", language="zh")


FAIR_OPENED = news_chunk("fair", "第五届青岚读书节落幕", "第五届青岚读书节于9月28日开幕，主会场设在青岚图书馆广场。",
                         dt.date(2024, 10, 9))
GAMES_OPENED = news_chunk("games", "青岚少儿运动会开幕", "10月1日上午，青岚少儿运动会开幕式在城东体育公园举行。",
                          dt.date(2024, 10, 2))


def test_a_follow_up_naming_only_an_action_asks_it_of_the_first_part_s_subject():
    # "是哪天开幕的" names no thing of its own: it asks when the reading festival opened, not
    # when any other event did
    answer = ask("第五届青岚读书节的主会场在哪里？是哪天开幕的？", ev(FAIR_OPENED, GAMES_OPENED))
    assert answer.status == "answered", answer.text
    assert "9月28日" in answer.text and "10月1日" not in answer.text, answer.text


_MILLS = dict(title="Fenwick Mills Leave Policy", published=dt.date(2025, 1, 6), language="en")
HOLIDAY_NOTICE = make_chunk("fm", "3.2", "3.2 Annual leave. Holiday is booked in the staff portal. A booking of more "
                            "than five consecutive working days must be made at least 15 working days before the "
                            "first day off.", clause="3.2", **_MILLS)
PARENT_WEEKS = make_chunk("fm", "5.1", "5.1 Parental leave. A new parent can take up to 12 weeks of leave at full pay.",
                          clause="5.1", **_MILLS)


def test_the_unit_of_a_span_the_question_states_does_not_pick_the_answer():
    # "a two-week holiday" states the span asked about: another span in weeks (12 weeks of
    # parental leave) is no closer to the notice asked for
    answer = ask("How much notice do I need to give for a two-week holiday?", ev(PARENT_WEEKS, HOLIDAY_NOTICE))
    assert answer.status == "answered", answer.text
    assert "15 working days" in answer.sentences[0].text, answer.text


_ABSENCE = dict(title="Holloway Print Ltd Absence Rules", published=dt.date(2025, 4, 1), language="en")
SELF_CERT = make_chunk("abs", "3.1", "3.1 Short absences. Staff may self-certify absences of up to 2 consecutive "
                       "working days. From the third working day a fit note from a doctor is needed.",
                       clause="3.1", **_ABSENCE)


def test_a_band_in_working_days_holds_a_span_the_question_gives_in_days():
    # two days off sick fall under "up to 2 consecutive working days": the rule is about the
    # case asked (no "not found" for the words "off sick") and answers the yes/no question,
    # though a working day is never the same value as a day
    answer = ask("I was off sick for two days. Do I need a doctor's note?", ev(SELF_CERT))
    assert answer.status == "answered", answer.text
    assert "up to 2 consecutive working days" in answer.sentences[0].text, answer.text


# -- lines that say what a document is, not what it rules ---------------------------------------
PURCHASING = dict(title="Harrowgate Purchasing Policy", published=dt.date(2025, 3, 1), authority="Harrowgate Ltd",
                  language="en")
KENNEL = dict(title="溪桥市犬只管理办法", published=dt.date(2024, 5, 1), authority="溪桥市人民政府")


def test_a_documents_statement_of_purpose_answers_no_other_question():
    purpose = make_chunk("hp", "1", "1. This policy sets out how Harrowgate Ltd approves and places orders for goods "
                         "and services.", clause="1", **PURCHASING)
    limits = make_chunk("hp", "3", "3. Orders above £25,000 are approved by the Finance Director.", clause="3",
                        **PURCHASING)
    answer = ask("Who approves orders for goods and services at Harrowgate?", ev(purpose, limits))
    assert answer.status == "answered", answer.text
    assert answer.sentences[0].text.startswith("Orders above £25,000"), answer.text


def test_a_line_of_issuer_and_date_labels_under_a_promulgation_note_is_no_answer():
    note = make_chunk("kn", "0", "（2020年3月1日溪桥市人民政府令第5号公布　2024年4月2日溪桥市人民政府第12次常务会议修订通过）"
                      "发布机关：溪桥市人民政府发布日期：2024年4月10日", clause="前言", **KENNEL)
    banned = make_chunk("kn", "9", "第九条 本市重点管理区内禁止饲养烈性犬，烈性犬名录见附件。", **KENNEL)
    answer = ask("溪桥哪些狗不能养？", ev(note, banned))
    assert "发布机关" not in answer.text, answer.text
    assert "烈性犬" in answer.text, answer.text


def test_a_pinned_versions_value_is_set_against_the_newer_clause_that_extends_its_wording():
    # the newer 第五条 keeps the old wording and adds a second office and an online route: it
    # shares too few character pairs with the old sentence to read as its copy, yet it is the
    # same clause of the same act, and its 15日 is what the reader must be told differs
    old = make_chunk("k19", "5", "第五条 饲养犬只的，应当自取得犬只之日起30日内，到居住地派出所办理犬只登记。",
                     title="溪桥市城市犬只饲养管理暂行办法", published=dt.date(2019, 3, 1), status="repealed")
    new = make_chunk("k24", "5", "第五条 饲养犬只的，应当自取得犬只之日起15日内，到居住地派出所或者公安机关设立的"
                     "犬只登记服务点办理犬只登记，也可以通过溪桥警务网上平台办理。",
                     title="溪桥市城市犬只饲养管理办法", published=dt.date(2024, 9, 1))
    answer = ask("按照2019年的暂行办法，养狗以后多少天内要去登记？", ev(old, new), version="2019")
    assert "30日" in answer.sentences[0].text, answer.text
    assert answer.conflicts, answer.text
    conflict = answer.conflicts[0]
    assert conflict.winner == old.chunk_id and conflict.rule.startswith("pinned"), conflict
    assert {"30日", "15日"} <= {v.value for v in conflict.values}, conflict
