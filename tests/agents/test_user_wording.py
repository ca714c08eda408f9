"""A colloquial question the Router rewrites into formal terms still finds the document that says
it the user's way: the retriever searches the user's words beside the rewrite, and the Reasoner
ranks them first when the documents use them."""

from __future__ import annotations

import pytest

from agentic_rag import Engine, Settings

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
