"""A question for what follows from an act ("what happens the first time ...") is answered by the
sentence that states the consequence for that case: an ordinal before its noun picks the case,
and "results in" / "leads to" / "is treated as" state what follows. Policy written for the test."""

from __future__ import annotations

import pytest

from tests.ingest.helpers import answer_over

POLICY = """---
title: "Attendance Standard"
---

# Attendance Standard

## 5. Lateness

5.1 Staff who expect to arrive late must tell their shift lead before the shift starts.

5.2 A first minor lapse by a driver, such as a late vehicle check or a missing fuel receipt, will normally result in a verbal reminder from the depot manager. Repeated minor lapses within six months will be dealt with under the Disciplinary Procedure (HR-04).
"""


@pytest.mark.parametrize("question", [
    "What happens the first time a driver commits a minor lapse?",
    "What happens to a driver after a first minor lapse?",
])
def test_the_consequence_for_the_case_asked_answers(tmp_path, question: str) -> None:
    answer = answer_over(tmp_path, {"attendance.md": POLICY}, question)
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("A first minor lapse"), answer.text
    assert "verbal reminder" in answer.text
