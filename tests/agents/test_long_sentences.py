"""A sentence far past the quote cap is quoted by the clauses that answer: asked how long, the
clause that states the time is kept, with "..." where clauses are left out, so the value asked
for comes within the first few hundred characters of the answer. The document and questions
are written for the test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from tests.ingest.helpers import engine_over

FLEET = """# Van Fleet Rules

## 5. Incidents

5.1 Where a company van is damaged in a collision, a break-in, a flood or any other event on a working day or at a weekend, whether or not another road user or member of the public is involved, the driver must make the vehicle safe, photograph the damage to every panel, collect the names and addresses of any witnesses and notify the Transport Office as soon as practicable and in every case within 36 hours.

5.2 Repairs are booked by the Transport Office with an approved body shop.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    with engine_over(tmp_path_factory.mktemp("long"), {"van-fleet-rules.md": FLEET}) as eng:
        yield eng


def test_the_clause_stating_the_time_asked_is_quoted_first(engine: Engine) -> None:
    answer = engine.ask("If a company van gets damaged, how long do I have to notify the Transport Office?")
    assert answer.status == "answered"
    first = answer.sentences[0].text
    assert "36 hours" in first and len(first) < 300
    assert "..." in first and "  " not in first  # where clauses are left out, said once
    assert answer.citations[0].quote in FLEET  # still a verbatim span of the clause


def test_a_question_not_asking_a_value_keeps_the_sentence_whole(engine: Engine) -> None:
    answer = engine.ask("What must the driver do when a company van is damaged?")
    assert answer.status == "answered"
    assert "photograph the damage to every panel" in answer.text and "36 hours" in answer.text
