"""A colloquial question the Router rewrites into formal terms still finds the document that says
it the user's way: the retriever searches the user's words beside the rewrite, and the Reasoner
ranks them first when the documents use them."""

from __future__ import annotations

import pytest

from agentic_rag import Engine, Settings

from tests.ingest.helpers import answer_over, engine_over

_KINDS = ("Parental", "Sick", "Study", "Jury", "Unpaid", "Compassionate", "Sabbatical", "Military", "Volunteer",
          "Adoption", "Carer", "Bereavement", "Wedding", "Relocation", "Training")
HANDBOOK = "---\ntitle: Crew Handbook\n---\n# Crew Handbook\n\n" + "".join(
    f"## {kind} leave\n\n{kind} leave is booked with the approval of the crew lead. {kind} leave is recorded "
    f"by payroll, and {kind.lower()} leave days count as service.\n\n" for kind in _KINDS) + (
    "## Booking time off\n\nTime off needs no approval from the crew lead: you book it yourself in the rota app.\n")


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("wording")
    (root / "crew.md").write_text(HANDBOOK, encoding="utf-8")
    eng = Engine(Settings.load(index=root / "index", embedder={"provider": "none"}))
    eng.ingest([root / "crew.md"])
    yield eng
    eng.close()


def test_the_users_own_words_find_the_section_that_uses_them(engine):
    question = "Do I need the crew lead's approval to book time off?"
    assert engine.route(question).query != question  # the Router rewrote "time off"
    answer = engine.ask(question)
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("Time off needs no approval"), answer.text


# -- everyday words the packaged tables map to the words rules and policies use ---------------

FIREWORKS = ("松岭市烟花爆竹安全管理规定\n\n第一条 为了加强烟花爆竹安全管理，保障公共安全，制定本规定。\n\n"
             "第八条 禁止在居民住宅楼的楼道、阳台、屋顶燃放烟花爆竹。\n\n"
             "第九条 春节期间，城区可以燃放烟花爆竹的时间为除夕零时至正月初一二十四时。\n\n"
             "第二十条 违反本规定第八条，在禁止的地点燃放烟花爆竹的，由公安机关责令停止燃放，处一百元以上五百元以下罚款。\n")
WASTE = ("---\ntitle: Waste and Recycling Policy\neffective_date: 2025-01-01\n---\n# Waste and Recycling Policy\n\n"
         "## 1. General waste\n\n1.1 General waste is collected from the kitchen every Tuesday and Friday.\n\n"
         "1.2 Confidential paper goes in the locked shredding console and never in general waste.\n")


@pytest.fixture(scope="module")
def everyday(tmp_path_factory):
    eng = engine_over(tmp_path_factory.mktemp("everyday"), {"fireworks.txt": FIREWORKS, "waste.md": WASTE})
    yield eng
    eng.close()


@pytest.mark.parametrize(("question", "start"), [
    # 放鞭炮 is how people say 燃放烟花爆竹; "rubbish" is what a policy calls waste
    ("在自家阳台上放鞭炮要罚多少钱？", "违反本规定第八条，在禁止的地点燃放烟花爆竹的"),
    ("Which days does the rubbish get picked up from the kitchen?", "General waste is collected from the kitchen"),
])
def test_an_everyday_word_is_read_as_the_documents_term(everyday, question, start):
    answer = everyday.ask(question)
    assert answer.status == "answered", answer.text
    assert answer.text.startswith(start), answer.text


# -- a colloquial word whose formal term the documents do not use either ----------------------

BIKES = ("柘岭市电动自行车登记规定\n\n第一条 为了加强电动自行车管理，制定本规定。\n\n"
         "第五条 购买电动自行车的，应当自购买之日起十五日内申请注册登记。\n\n"
         "第七条 电动自行车号牌丢失的，应当自发现之日起十日内申请补领。\n")
TRANSFER = "第八条 电动自行车所有权转移的，应当自转移之日起三十日内申请转移登记。\n"


@pytest.mark.parametrize(("text", "status"), [(BIKES, "abstained"), (BIKES + "\n" + TRANSFER, "answered")],
                         ids=["silent", "says-it-formally"])
def test_a_thing_said_neither_the_users_way_nor_the_formal_way_is_not_in_the_documents(tmp_path, text, status):
    # 过户 is rewritten to 转移登记; a rule that speaks only of 注册登记 says nothing about it
    with engine_over(tmp_path / "docs", {"bikes.txt": text}) as eng:
        answer = eng.ask("电动自行车卖给别人以后，多长时间内要去办过户？")
    assert answer.status == status, answer.text
    if status == "answered":
        assert "三十日" in answer.text, answer.text
    else:
        assert "过户" in answer.text, answer.text  # the gap names what is missing


# -- the people a policy covers, named generally ----------------------------------------------

GYM = ("---\ntitle: Wellbeing Benefits Policy\neffective_date: 2025-03-01\n---\n# Wellbeing Benefits Policy\n\n"
       "## 2. Fitness\n\n2.1 The Company pays up to GBP 35 per month towards a gym membership for each "
       "permanent employee.\n\n2.2 Claims are made monthly in the expenses system with the gym's receipt.\n")


@pytest.mark.parametrize("who", ["staff", "workers", "colleagues"])
def test_a_general_name_for_the_people_covered_is_not_a_missing_thing(tmp_path, who):
    # the policy says "employee"; "staff" / "workers" is how people ask about everyone it covers
    with engine_over(tmp_path / "docs", {"wellbeing.md": GYM}) as eng:
        answer = eng.ask(f"Can {who} claim for the gym?")
    assert answer.status == "answered", answer.text
    assert answer.citations[0].clause in ("2.1", "2.2"), answer.text


CLAIMS = """# Claims Guide

## 4. Receipts

4.1 Claims for any single purchase over EUR 30 need an itemised receipt.

4.2 Claims are paid monthly.
"""

CLAIMS_ZH = """报销管理规定

第四条　单笔超过300元的支出，报销时须附发票。

第五条　报销款按月发放。
"""


@pytest.mark.parametrize(("question", "status"), [
    # the thing a stated sum prices is the user's case of the rule's threshold, in its currency
    ("Do I need a receipt for a €18 taxi ride?", "answered"),
    ("一顿200元的工作餐报销时要附发票吗？", "answered"),
    # a sum in a currency the guide never states: no threshold decides it, the thing is missing
    ("Do I need a receipt for a 900 yen taxi ride?", "abstained"),
])
def test_a_priced_thing_is_decided_by_the_threshold_in_its_currency(tmp_path, question: str,
                                                                   status: str) -> None:
    answer = answer_over(tmp_path, {"claims-guide.md": CLAIMS, "报销管理规定.txt": CLAIMS_ZH}, question)
    assert answer.status == status
    if status == "answered":
        assert "EUR 30" in answer.text or "300元" in answer.text


HISTORY = """# Company history

Varnholt Instruments was founded in 1998 by the engineer Søren Ålvik in Malmö. The firm moved its
workshop to Göteborg in 2004.

The company now employs 240 people.
"""


@pytest.mark.parametrize("question", [
    "When did Soren Alvik found Varnholt Instruments?",
    "In what year did Varnholt Instruments move its workshop to Goteborg?",
])
def test_a_name_typed_without_its_accents_is_the_name(tmp_path, question: str) -> None:
    answer = answer_over(tmp_path, {"history.md": HISTORY}, question)
    assert answer.status == "answered"
    assert "1998" in answer.text if "found" in question else "2004" in answer.text
    assert "missing" not in answer.text  # nothing of the question is reported as not found


DEVICES = """---
title: Device Security Standard
---

# Device Security Standard

## 3. Locking

3.1 A laptop locks itself after 5 minutes without use.

## 4. Protection

4.1 Disabling or bypassing anti-virus software on a company laptop is a serious breach and may lead to dismissal.

4.2 A lost laptop is reported to the service desk within 4 hours.
"""


@pytest.mark.parametrize("question", [
    "What happens if I turn off the antivirus on my laptop?",
    "What happens if I turn off the anti-virus on my laptop?",
])
def test_a_hyphenated_word_is_the_word_written_closed(tmp_path, question: str) -> None:
    answer = answer_over(tmp_path, {"devices.md": DEVICES}, question)
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("Disabling or bypassing anti-virus software"), answer.text


HYBRID = """---
title: Hybrid Work Policy
company: Tarnwell Systems
version: "2.0"
effective_date: 2025-01-01
---

# Hybrid Work Policy

## 1. Eligibility

1.1 Employees who have completed their probation may work from home up to three days per week.
"""

FLEXIBLE = """---
title: Flexible Working Guidelines
company: Ossington Foods
effective_date: 2024-06-01
---

# Flexible Working Guidelines

## 2. Working from home

2.1 Employees who have completed their probation may work from home one day per week.
"""


LODGING_A = """---
title: 差旅费管理办法
company: 栖川数据科技有限公司
effective_date: 2025-03-01
---

# 差旅费管理办法

第六条 住宿费标准：每人每晚不超过600元。
"""

LODGING_B = """---
title: 出差管理规定
company: 蓝湾物流集团有限公司
effective_date: 2024-05-01
---

# 出差管理规定

第八条 住宿费标准：每人每晚不超过350元。
"""


@pytest.mark.parametrize(("question", "says", "not_says"), [
    ("How many days a week can I work from home at Tarnwell Systems?", "three days", "one day"),
    ("How many days a week can I work from home at Ossington Foods?", "one day", "three days"),
    # a Chinese question uses the short name (栖川数据 for 栖川数据科技有限公司)
    ("栖川数据的员工住宿标准是多少？", "600元", "350元"),
    ("蓝湾物流的员工住宿标准是多少？", "350元", "600元"),
])
def test_a_company_named_in_front_matter_is_the_policys_own(tmp_path, question: str, says: str,
                                                            not_says: str) -> None:
    # each policy names its company only in its front matter: a question about one company's
    # staff is answered from that company's policy, the other's is about someone else
    files = {"hybrid-work.md": HYBRID, "flexible-working.md": FLEXIBLE, "差旅费管理办法.md": LODGING_A,
             "出差管理规定.md": LODGING_B}
    answer = answer_over(tmp_path, files, question)
    assert answer.status == "answered"
    assert says in answer.text and not_says not in answer.text and "missing" not in answer.text
