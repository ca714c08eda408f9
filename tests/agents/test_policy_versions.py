"""Two versions of an English policy whose title joins two matters with "and", parsed and
ingested for real: a question that names the policy by that title, pins a version by the date
it took effect, or asks how often something is done. The policy and the questions are written
for these tests."""

from __future__ import annotations

import pytest

from tests.ingest.helpers import engine_over

POLICY = """---
title: "Fire Safety and Evacuation Policy"
policy_id: "HB-FS-2"
version: "{version}"
effective_date: "{effective}"
status: "{status}"
---

# Fire Safety and Evacuation Policy

## 1. Purpose

1.1 This policy sets out how Hollowbrook Mills keeps people safe from fire on its premises.

## 2. Fire wardens

2.1 Each floor has at least two trained fire wardens, named on the notice board by the lifts.

2.2 Fire wardens carry out the checks described in section 3.2 and report faults to Facilities.

## 3. Equipment

3.1 Fire extinguishers are serviced by an approved contractor.

3.2 Each fire door must be inspected {often} by a fire warden, and every inspection is recorded in the Safety Log.

## 4. Drills

4.1 An evacuation drill is held at each site twice a year.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    eng = engine_over(tmp_path_factory.mktemp("fire"), {
        "hollowbrook-fire-safety-2022.md": POLICY.format(version="1.0", effective="2022-03-01", status="superseded",
                                                         often="monthly"),
        "hollowbrook-fire-safety-2025.md": POLICY.format(version="2.0", effective="2025-03-01", status="active",
                                                         often="weekly"),
    })
    yield eng
    eng.close()


def _winner(answer):
    """(the value that won, all the values) of the answer's one conflict."""
    [conflict] = answer.conflicts
    return next(v.value for v in conflict.values if v.chunk_id == conflict.winner), {v.value for v in conflict.values}


def test_how_often_is_answered_by_the_current_frequency_with_the_old_one_named(engine):
    answer = engine.ask("How often does a fire door have to be inspected at Hollowbrook?")
    assert answer.text.startswith("Each fire door must be inspected weekly"), answer.text
    assert _winner(answer) == ("weekly", {"weekly", "monthly"})


def test_a_version_named_by_the_date_it_took_effect_is_the_version_that_answers(engine):
    question = ("Under Hollowbrook's Fire Safety and Evacuation Policy (effective March 2022), how often did "
                "each fire door have to be inspected?")
    answer = engine.ask(question)
    assert engine.route(question).version == "2022"
    assert answer.text.startswith("Each fire door must be inspected monthly"), answer.text
    assert _winner(answer) == ("monthly", {"weekly", "monthly"})
