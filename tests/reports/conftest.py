"""Two versions of a notice in Chinese and of a policy in English, written for these tests, in
a real embedded index (no embedder: BM25 + graph)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_rag import Engine, Settings

NOTICE_2023 = """澄湖市关于灵活就业人员社会保险补贴的通知

澄人社发〔2023〕11号

发布机关：澄湖市人力资源和社会保障局
发布日期：2023年5月8日

第一条 本通知适用于在本市登记的灵活就业人员。

第二条 补贴标准为每人每月300元，补贴期限最长为24个月。

第三条 申请人应当在参保缴费后30日内提交补贴申请。

第四条 申请材料包括身份证、就业登记证明和缴费凭证。

第五条 经办机构对符合条件的申请，在每季度末统一拨付补贴资金至申请人本人银行账户。

第六条 本通知自2023年6月1日起施行。
"""

NOTICE_2025 = """澄湖市关于灵活就业人员社会保险补贴的通知

澄人社发〔2025〕3号

发布机关：澄湖市人力资源和社会保障局
发布日期：2025年2月10日

第一条 本通知适用于在本市登记的灵活就业人员。

第二条 补贴标准为每人每月450元，补贴期限最长为36个月。

第三条 申请人应当在参保缴费后15个工作日内提交补贴申请。

第四条 经办机构对符合条件的申请，在每季度末统一拨付补贴资金至申请人本人银行账户。

第五条 年满五十周岁的申请人可以通过“澄湖人社”App在线办理补贴申请。

第六条 本通知自2025年3月1日起施行。
"""

POLICY_V1 = """Harbour Line Volunteer Expenses Policy

Version 1.0, issued 10 January 2023

Article 1 This policy applies to registered volunteers of Harbour Line.

Article 2 Mileage is reimbursed at USD 0.30 per kilometre, up to USD 60 per month.

Article 3 Claims must be submitted within 30 days of the activity.

Article 4 Volunteers may claim parking fees when a receipt is attached.

Article 5 The coordinator approves each claim before payment is made.
"""

POLICY_V2 = """Harbour Line Volunteer Expenses Policy

Version 2.0, issued 3 March 2025

Article 1 This policy applies to registered volunteers of Harbour Line.

Article 2 Mileage is reimbursed at USD 0.45 per kilometre, up to USD 90 per month.

Article 3 Claims must be submitted within 14 days of the activity.

Article 4 The coordinator approves each claim before payment is made.

Article 5 Volunteers travelling after midnight may claim a taxi fare of up to USD 40.
"""


RULES_V1 = """宁川区社区食堂运营补助办法

第一条 本办法适用于宁川区登记备案的社区食堂。

第二条 每个社区食堂每月可以申领运营补助2000元。

第三条 申领补助应当在每季度开始后10日内提出。

第四条 申领时应当提交经营台账和就餐人数统计表。

第五条 本办法自2023年1月1日起施行。
"""

RULES_V2 = """宁川区社区食堂运营补助办法

第一条 本办法适用于宁川区登记备案的社区食堂。

第二条 每个社区食堂每月可以申领运营补助2500元。

第三条 申领补助应当在每季度开始后15日内提出。申领时应当提交经营台账和就餐人数统计表。

第四条 本办法自2025年1月1日起施行。
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("versions")
    files = {"notice_2023": "notice_2023.txt", "notice_2025": "notice_2025.txt",
             "policy_v1": "volunteer-policy-v1.txt", "policy_v2": "volunteer-policy-v2.txt",
             "rules_v1": "canteen-rules-v1.txt", "rules_v2": "canteen-rules-v2.txt"}
    texts = {"notice_2023": NOTICE_2023, "notice_2025": NOTICE_2025, "policy_v1": POLICY_V1, "policy_v2": POLICY_V2,
             "rules_v1": RULES_V1, "rules_v2": RULES_V2}
    for key, name in files.items():
        (root / name).write_text(texts[key], encoding="utf-8")
    return {key: root / name for key, name in files.items()}


@pytest.fixture(scope="module")
def engine(corpus: dict[str, Path], tmp_path_factory: pytest.TempPathFactory):
    settings = Settings.load(None, index=tmp_path_factory.mktemp("idx"), embedder={"provider": "none"})
    eng = Engine(settings)
    eng.ingest([p.parent for p in corpus.values()][:1])
    yield eng
    eng.close()


@pytest.fixture(scope="module")
def doc_ids(engine, corpus: dict[str, Path]) -> dict[str, str]:
    by_source = {Path(d.source).name: d.doc_id for d in engine.store.documents()}
    return {key: by_source[path.name] for key, path in corpus.items()}
