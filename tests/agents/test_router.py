"""Router: intent path, slots, version pinning, colloquial normalization, fallback."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest

from agentic_rag.agents.router import Router
from agentic_rag.text.names import extract_names
from agentic_rag.config import RouterSettings
from agentic_rag.errors import ConfigError
from agentic_rag.types import RouteDecision


@pytest.fixture(scope="module")
def router() -> Router:
    return Router()


def test_policy_question_gets_intent_slots_and_pinned_version(router: Router) -> None:
    r = router.route("按照2023年的规定，退休人员在深圳市住院能报多少？")
    assert r.intent == ["医保", "报销", "比例"]
    assert r.version == "2023"
    assert r.slots.places == ["深圳市"]
    assert r.slots.persons == ["退休人员"]
    assert r.slots.years == [2023]
    assert r.language == "zh"
    assert not r.fallback and r.confidence >= RouterSettings().min_confidence


@pytest.mark.parametrize("question, intent", [
    ("员工年假有几天？", ["人事", "假期"]),
    ("出差住宿费的标准是多少", ["财务", "差旅"]),
    ("合同违约金怎么算", ["合同", "违约责任"]),
    ("住院报销需要准备哪些材料", ["医保", "报销", "材料"]),
    ("How many days of sick leave do employees get?", ["人事", "假期"]),
])
def test_intent_paths_from_the_default_tree(router: Router, question: str, intent: list[str]) -> None:
    assert router.route(question).intent == intent


def test_dates_years_amounts_clauses(router: Router) -> None:
    s = router.route("二〇二三年三月一日起施行的办法第七条规定，超过5000元的部分报销20%，2024-01-15后调整").slots
    assert dt.date(2023, 3, 1) in s.dates and dt.date(2024, 1, 15) in s.dates
    assert {2023, 2024} <= set(s.years)
    assert "5000元" in s.amounts and "20%" in s.amounts
    assert s.clauses == ["第七条"]
    en = router.route("What does Section 5.2 say about the $300 limit?").slots
    assert en.clauses == ["Section 5.2"] and "$300" in en.amounts


def test_places_from_suffix_pattern_and_lexicon(router: Router) -> None:
    s = router.route("我在广东省参保，去北京看病，能报销吗").slots
    assert "广东省" in s.places and "北京" in s.places
    # words ending in 区/市 that are no place
    assert router.route("社区医院和市区医院报销比例一样吗").slots.places == []


@pytest.mark.parametrize("question, version", [
    ("按照2023年的规定，门诊报销比例是多少", "2023"),
    ("根据二〇二二年版目录，这个药是甲类吗", "2022"),
    ("2021版的报销办法怎么说", "2021"),
    ("Under the 2023 policy, how many PTO days do I get?", "2023"),
    ("Under the 2023 travel policy, how fast are claims paid?", "2023"),
    ("现行的报销比例是多少", "latest"),
    ("2023年住院了，能报多少", "latest"),
])
def test_preferred_version(router: Router, question: str, version: str) -> None:
    assert router.route(question).version == version


def test_colloquial_question_is_normalized_and_can_be_switched_off() -> None:
    on = Router().route("买药的钱能报多少")
    assert on.query == "药品费用 报销比例"
    assert on.intent[:2] == ["医保", "报销"] and not on.fallback
    off = Router(RouterSettings(normalize_colloquial=False)).route("买药的钱能报多少")
    assert "药品费用" not in off.query and "买药的钱" in off.query


def test_low_confidence_gives_the_recorded_default_route(router: Router) -> None:
    r = router.route("今天天气怎么样")
    assert r.fallback is True and r.intent == ["general"]
    assert r.query  # the default route still searches with the question
    empty = router.route("   ")
    assert empty.fallback and empty.confidence == 0.0


def test_threshold_is_configurable() -> None:
    strict = Router(RouterSettings(min_confidence=0.99)).route("住院报销比例是多少")
    assert strict.fallback and strict.intent == ["general"]


def test_invalid_candidate_route_falls_back_instead_of_crashing(router: Router) -> None:
    # the classic LLM mistake: a string where a list belongs
    bad = router.from_candidate("报销比例是多少", {"intent": "报销规则", "confidence": 0.9})
    assert bad.fallback and bad.intent == ["general"] and bad.question == "报销比例是多少"
    assert router.from_candidate("q", "not json {").fallback
    good = router.from_candidate("q", json.dumps({"intent": ["医保", "报销"], "confidence": 0.8}))
    assert good.intent == ["医保", "报销"] and not good.fallback
    low = router.from_candidate("q", {"intent": ["医保"], "confidence": 0.1})
    assert low.fallback


def test_route_decision_exports_json_schema() -> None:
    schema = RouteDecision.model_json_schema()
    assert {"intent", "slots", "query", "version", "confidence", "fallback"} <= set(schema["properties"])


def test_user_files_extend_and_replace_the_defaults(tmp_path) -> None:
    lexicon = tmp_path / "lexicon.txt"
    lexicon.write_text("星火计划\n雄安新区\tplace\n# comment\n退役运动员\tperson\n", encoding="utf-8")
    tree = tmp_path / "tree.json"
    tree.write_text(json.dumps({"nodes": [{"name": "产品", "keywords": ["保修"], "children": [
        {"name": "退货", "keywords": ["退货", "return"]}]}], "fallback": ["other"]}), encoding="utf-8")
    r = Router(RouterSettings(lexicon=lexicon, intent_tree=tree))
    route = r.route("星火计划的保修和退货政策在雄安新区适用吗？退役运动员可以吗")
    assert route.intent == ["产品", "退货"]
    assert "星火计划" in route.slots.entities
    assert "雄安新区" in route.slots.places and "退役运动员" in route.slots.persons
    assert r.route("今天天气").intent == ["other"]
    # lexicon terms given in code (e.g. defined terms found at ingest) count too
    assert "灵活用工" in Router(lexicon_terms=["灵活用工"]).route("灵活用工怎么缴费").slots.entities


def test_bad_config_files_name_the_file(tmp_path) -> None:
    tree = tmp_path / "tree.json"
    tree.write_text('{"nodes": [{"keywords": ["x"]}]}', encoding="utf-8")
    with pytest.raises(ConfigError, match="tree.json"):
        Router(RouterSettings(intent_tree=tree))
    with pytest.raises(ConfigError, match="missing.txt"):
        Router(RouterSettings(lexicon=tmp_path / "missing.txt"))
    bad_rules = tmp_path / "rules.json"
    bad_rules.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match="rules.json"):
        Router(RouterSettings(colloquial_rules=bad_rules))


def test_english_names_and_comparison_subqueries(router: Router) -> None:
    assert extract_names("When did Lothair II's mother die?") == ["Lothair II"]
    assert extract_names("Where was the performer of song When The Stars Go Blue born?") == [
        "When The Stars Go Blue"]
    r = router.route("Which film has the director who is older, God's Gift To Women or Aldri Annet Enn Bråk?")
    assert r.subqueries == ["God's Gift To Women", "Aldri Annet Enn Bråk"]
    both = router.route("Are Christopher Nolan and Sathish Kalathil both film directors?")
    assert both.slots.entities == ["Christopher Nolan", "Sathish Kalathil"]
    assert both.subqueries == ["Christopher Nolan", "Sathish Kalathil"]
    assert router.route("北京市和上海市哪个报销比例高").subqueries == ["北京市", "上海市"]


def test_lexicon_terms_for_the_segmentation_dictionary(router: Router) -> None:
    terms = router.dictionary_terms()
    assert "门诊慢特病" in terms and "灵活就业人员" in terms
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in terms)


@pytest.mark.parametrize(("question", "version"), [
    ("Under the 2023 travel policy, how quickly did Finance reimburse approved claims?", "2023"),
    ("What did the 2023 travel policy say about hotel limits?", "2023"),
    ("According to the travel policy of 2023, what is the hotel limit?", "2023"),
    ("Under the travel policy (2023), what is the hotel limit?", "2023"),
    ("In 2023's travel policy, what is the hotel limit?", "2023"),
    ("In the 2022 version, how many leave days were there?", "2022"),
    # the date a version took effect names it
    ("Under the expenses policy (effective June 2021), what was the taxi limit?", "2021"),
    ("What did the handbook in force from 1 March 2020 say about parking?", "2020"),
    # a year that names no document's version pins nothing
    ("How many employees joined in 2023?", "latest"),
    ("What was the hotel limit in 2023?", "latest"),
])
def test_english_version_pins(question: str, version: str) -> None:
    assert Router().route(question).version == version


def test_a_question_asking_two_things_searches_each_part() -> None:
    r = Router()
    assert r.route("江南省异地就医备案可以通过哪些渠道办理？省内跨设区市就医且已备案的，支付比例会降低吗？").subqueries == [
        "江南省异地就医备案可以通过哪些渠道办理", "省内跨设区市就医且已备案的 支付比例会降低"]
    assert r.route("Who must approve an international business trip, and which class of "
                   "high-speed rail may be booked?").subqueries == [
        "Who must approve an international business trip", "which class of high-speed rail may be booked"]
    # the second part may open with a preposition before its question word
    assert r.route("Where are expense claims filed, and by which date is the mileage allowance "
                   "reimbursed?").subqueries == [
        "Where are expense claims filed", "by which date is the mileage allowance reimbursed"]
    assert r.route("住院报销比例是多少？").subqueries == []
    # a part that leans on the one before is not searched alone
    assert r.route("住院报销比例是多少？那申请期限呢？").subqueries == []


@pytest.mark.parametrize(("question", "formal"), [
    ("临时去外省看病住院", "跨省异地就医"),
    ("出差的钱什么时候报", "差旅费"),
])
def test_everyday_words_are_rewritten_to_the_formal_terms(question: str, formal: str) -> None:
    assert formal in Router().route(question).query


@pytest.mark.parametrize(("question", "kept"), [
    # 三甲 hospitals are one grade of 三级 hospitals: a rewrite to 三级 would change the question
    ("我在三甲医院住院能报多少", "三甲医院"),
    # "the card" is not the answer's social security card until a document says so
    ("钱什么时候打到卡里", "卡里"),
])
def test_rewrites_that_change_what_is_asked_are_not_made(question: str, kept: str) -> None:
    query = Router().route(question).query
    assert kept in query and "三级定点医疗机构" not in query and "社会保障卡" not in query


def test_a_question_about_disagreeing_sources_is_not_split_into_its_sources() -> None:
    r = Router().route("江南省规定的门诊慢特病认定时限和国家规定不一致，应当以哪个为准？")
    assert r.subqueries == []
    assert Router().route("《甲办法》和《乙办法》哪个发布得更早？").subqueries == ["甲办法", "乙办法"]


# -- the general vocabulary tables (colloquial.json, synonyms.json) -------------------------------

@pytest.mark.parametrize(("question", "formal"), [
    ("我被裁员了能领失业金吗", "失业保险金"),
    ("老婆生孩子我能休几天", "陪产假"),
    ("上班路上出了车祸算工伤吗", "上下班途中"),
    ("公积金能取出来付房租吗", "提取"),
    ("出差住酒店最多报多少", "住宿"),
    ("can I work from home on Fridays", "remote work"),
    ("If I got fired, do I get severance?", "dismissal"),
    ("Do I need a doctor's note when I call in sick?", "sick leave"),
    ("小区里能不能放烟花？", "燃放烟花爆竹"),
    ("邻居半夜装修噪音太大找谁投诉", "噪声"),
    ("楼上往楼下扔东西砸坏了车", "高空抛物"),
    ("租房合同没到期想提前退租要赔钱吗", "提前解除 租赁合同"),
    ("Can I claim back a cab fare after a late shift?", "reimbursement"),
    ("What happens if I get sacked during my trial period?", "probation period"),
])
def test_everyday_words_from_many_domains_become_policy_terms(question: str, formal: str) -> None:
    assert formal in Router().route(question).query


def test_no_rule_rewrites_the_formal_words_of_the_tables() -> None:
    """A colloquial phrase must not sit inside a formal term (改密码 inside 修改密码, 发工资 inside
    实发工资): every formal word of both tables comes out of the Router as it went in."""
    from agentic_rag.agents.vocabulary import load_colloquial, load_synonyms

    rules = load_colloquial()
    formal = {w for v in rules.values() for w in (v.split() if not v.isascii() else [v])}
    formal |= {t for g in load_synonyms() for t in g}
    router = Router()
    assert {t: router.normalize(t) for t in formal if router.normalize(t) != t and t.lower() not in rules} == {}
    # a phrase that maps to itself is kept as written, so it cuts nothing either (户口 stays whole)
    assert router.normalize("可以通过户口簿查询吗") == "可以通过户口簿查询吗"


def test_unemployment_question_is_routed_to_social_insurance() -> None:
    r = Router().route("我被裁员了能领失业金吗")
    assert "失业保险金" in r.query and "失业金" not in r.query.replace("失业保险金", "")
    assert r.intent[:2] == ["人事", "社保"] and not r.fallback


def test_paid_time_off_is_kept_whole_not_cut_to_time_off() -> None:
    # "time off" -> "leave" must not eat the inside of "paid time off", which the synonym table
    # expands to PTO / annual leave / vacation
    assert "paid time off" in Router().route("Is unused paid time off carried over?").query


def test_synonym_table_keeps_distinct_legal_terms_apart() -> None:
    from agentic_rag.agents.retriever import expand_query
    from agentic_rag.agents.vocabulary import load_synonyms

    groups = load_synonyms()
    assert "个人所得税" in expand_query("个税 汇算", groups)[1]
    assert "remote work" in expand_query("Is WFH allowed?", groups)[1]
    # a penalty (违约金) is not a deposit (定金/订金); severance (经济补偿) is not damages (赔偿金)
    assert not {"定金", "订金"} & set(expand_query("违约金 标准", groups)[1])
    assert "赔偿金" not in expand_query("经济补偿 怎么算", groups)[1]
    # a loan repayment is no expense reimbursement
    assert "reimbursement" not in expand_query("loan repayment schedule", groups)[1]
    # reimbursing a claim (报销) is not settling a bill directly (结算): 住院报销比例 must not pull
    # in every 直接结算 procedure
    assert expand_query("住院费用报销比例", groups)[1] == ["支付"]


def test_slots_do_not_depend_on_the_string_hash_seed():
    """Two lexicon terms of one length in a question come out in the same order in every
    process (they decide the queries, so retrieval differed between runs of the same code)."""
    import subprocess
    import sys

    code = ("import json; from agentic_rag.agents.router import Router; "
            "print(json.dumps(Router().route('异地就医时药品目录和门诊慢特病怎么执行？').slots.model_dump(mode='json'), "
            "ensure_ascii=False))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2", "3", "4")}
    assert len(outs) == 1, outs



def test_a_question_asked_again_is_routed_again_once_the_dictionary_changes(monkeypatch) -> None:
    """The Router keeps each question's route, as a copy per caller, until an ingest adds words to
    the segmentation dictionary: then the question is routed afresh."""
    import agentic_rag.agents.router as router_module

    router = Router()
    routed: list[str] = []
    route_now = router._route
    monkeypatch.setattr(router, "_route", lambda q: routed.append(q) or route_now(q))
    question = "按照2023年的规定，退休人员在深圳市住院能报多少？"
    first = router.route(question)
    first.intent.append("changed by a caller")
    first.version = "1999"
    again = router.route(question)
    assert routed == [question]
    assert again == route_now(question)  # what a caller does with its copy is not kept
    generation = router_module.dictionary_generation()
    monkeypatch.setattr(router_module, "dictionary_generation", lambda: generation + 1)
    assert router.route(question) == again
    assert routed == [question, question]


@pytest.mark.parametrize("question", [
    "Once a contractor has worked 90 days on site, who renews their pass?",
    "Unless the manager agrees, can a visitor park overnight?",
])
def test_a_conjunction_opening_a_condition_is_no_name(router: Router, question: str) -> None:
    # a capitalised word that opens the question is a name only when it is not a function word
    assert not {"Once", "Unless"} & set(router.route(question).slots.entities)
