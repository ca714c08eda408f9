"""An English "who <verb>" question is answered by the sentence that names the doer of that
verb ("must be signed off by the cost-centre's budget holder"), not by one that only repeats
the question's words ("must not be booked until they have been signed off"); and when the
answer opens with that part, the sentences beside it in its clause do not join as if they
listed what the other part asks. The document and questions are written for the test."""

from __future__ import annotations

import pytest

from agentic_rag import Engine
from agentic_rag.agents.reasoner.question import fills_slot
from tests.ingest.helpers import engine_over

TRAVEL = """# Staff Travel Rules

## 3. Booking

3.1 Staff must not book flights or hotels until the trip has been signed off. Trips booked through the Travel Hub are covered by the corporate insurance. Trip requests are entered in the Travel Hub, must be signed off by the cost-centre's budget holder, and are then checked by the Finance office within 2 working days.

3.2 The following carriers may never be used for business travel: Skyhop Budget, Aeroluxe Charter and Baltic Wings.
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    with engine_over(tmp_path_factory.mktemp("who"), {"staff-travel-rules.md": TRAVEL}) as eng:
        yield eng


@pytest.mark.parametrize(("sentence", "question", "fills"), [
    ("Requests must be signed off by the cost-centre's budget holder.", "Who has to sign off a trip?", True),
    ("The fair was opened on Friday morning by Councillor Ada Bray.", "Who officially opened the fair?", True),
    ("Forms may be approved by email.", "Who approves the forms?", False),          # no doer named
    ("Staff must not book until the trip has been signed off.", "Who has to sign off a trip?", False),
    ("The fair was opened by the Mayor.", "Who is the Mayor?", False),                 # asks who, no deed
    # "who is the <role>": a name said to be the role, or the role said to be a name
    ("Harlow Trust is the scheme administrator.", "Who is the scheme administrator of the fund?", True),
    ("The scheme administrator is Harlow Trust.", "Who is the scheme administrator?", True),
    ("Only the scheme administrator may change the rules.", "Who is the scheme administrator?", False),
])
def test_the_doer_of_the_verb_asked_fills_an_english_who_question(sentence: str, question: str,
                                                                    fills: bool) -> None:
    assert fills_slot(sentence, question) is fills


def test_who_and_which_parts_are_answered_by_the_doer_and_the_list(engine: Engine) -> None:
    answer = engine.ask("Who has to sign off a business trip, and which carriers are never allowed?")
    assert answer.status == "answered"
    assert "budget holder" in answer.sentences[0].text
    assert "Skyhop Budget" in answer.text
    # the other sentences of the approver's clause list nothing the question asks
    assert "corporate insurance" not in answer.text and "until the trip" not in answer.text
