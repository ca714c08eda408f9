"""Two versions of a rates table: a row is compared with the same row of the other version, never
with another row the first column tells apart, and rates in pence are sums of money. The policy
is written for the test."""

from __future__ import annotations

import pytest

from tests.ingest.helpers import engine_over

POLICY = """---
title: "Business Mileage Policy"
version: "{version}"
effective_date: "{effective}"
status: "{status}"
---

# Business Mileage Policy

## 3. Rates

3.1 Staff who use their own vehicle on business claim the rate per mile for its type:

| Vehicle type | Rate per mile |
|---|---|
| Car | {car} |
| Motorcycle | 24p |
| Bicycle | 20p |

3.2 Claims are paid with the next monthly payroll.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    with engine_over(tmp_path_factory.mktemp("rows"), {
        "mileage-2022.md": POLICY.format(version="1.0", effective="2022-04-01", status="superseded", car="42p"),
        "mileage-2025.md": POLICY.format(version="2.0", effective="2025-04-01", status="active", car="47p"),
    }) as eng:
        yield eng


def test_a_row_the_versions_agree_on_has_no_conflict(engine):
    answer = engine.ask("What is the mileage rate per mile for a bicycle?")
    assert answer.status == "answered", answer.text
    assert "20p" in answer.text
    assert not answer.conflicts, answer.text  # the car's 42p / 47p is another row


def test_a_row_the_versions_disagree_on_names_the_newer_value(engine):
    answer = engine.ask("What is the mileage rate per mile for a car?")
    assert answer.status == "answered", answer.text
    [conflict] = answer.conflicts
    assert {v.value for v in conflict.values} == {"47p", "42p"}
    assert next(v.value for v in conflict.values if v.chunk_id == conflict.winner) == "47p"
