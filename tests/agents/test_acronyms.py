"""A document is known by the acronym of its title ("the AUP", "the LGPL", "GDPR"), which it
seldom writes out: a question naming the acronym is about that document, not only about the
ones that happen to write the letters. Policies written for the test."""

from __future__ import annotations

import pytest

from agentic_rag.text.names import abbreviates
from tests.ingest.helpers import answer_over

AUP = """---
title: Acceptable Use Policy
company: Fenwick Tools
---

# Acceptable Use Policy

## 2. Personal use

2.1 Personal use of a company laptop is allowed outside working hours, provided no company data is copied to private accounts.

## 3. Software

3.1 Only software from the approved catalogue may be installed.
"""

REMOTE = """---
title: Remote Work Policy
company: Fenwick Tools
---

# Remote Work Policy

## 4. Equipment

4.1 The AUP also applies on home networks, and a company laptop must never be left unlocked in public places.

4.2 Employees may claim up to 30 pounds a month towards home broadband.
"""


@pytest.mark.parametrize(("name", "title", "expected"), [
    ("AUP", "Acceptable Use Policy", True),
    ("GDPR", "General Data Protection Regulation", True),
    ("LGPL", "GNU Lesser General Public License", True),    # up to the title's last word
    ("PTO", "Paid Time Off Policy", True),                   # from its first word
    ("ABC", "Acceptable Use Policy", False),
    ("HR", "Holiday Rules", False),                          # two letters are a word of their own
])
def test_an_acronym_is_the_initials_of_a_title(name: str, title: str, expected: bool) -> None:
    assert abbreviates(name, title) is expected


@pytest.mark.parametrize(("question", "start"), [
    ("Under the AUP, may I use my company laptop for personal things in the evening?",
     "Personal use of a company laptop is allowed outside working hours"),
    ("What does the AUP say about installing software?", "Only software from the approved catalogue"),
])
def test_a_question_naming_a_documents_acronym_is_answered_from_it(tmp_path, question: str, start: str) -> None:
    answer = answer_over(tmp_path, {"acceptable-use.md": AUP, "remote-work.md": REMOTE}, question)
    assert answer.status == "answered", answer.text
    assert answer.text.startswith(start), answer.text
    assert "home networks" not in answer.text  # the other policy only writes the letters
