"""A disagreement the answer reports concerns what it quotes: one found beside a sentence that
was added for a word of the user's scene and then left out for length is not reported."""

from __future__ import annotations

from tests.ingest.helpers import answer_over

POLICY = """---
title: "Device Security Standard"
version: "{version}"
effective_date: "{effective}"
status: "{status}"
---

# Device Security Standard

## 4. Software

4.1 Removing or switching off the firewall on a company device is treated as a serious breach under section 8.2.

4.2 A lost or stolen tablet must be reported to the service desk within {report} hours of the loss being discovered.

## 6. Screens

6.1 A tablet screen locks after {lock} minutes without use.

## 8. Breaches

8.1 A first minor breach results in a written reminder from the line manager.

8.2 Serious breaches, including sharing passwords, removing security software and failing to report a lost device, are handled as gross misconduct under the Disciplinary Procedure and may result in dismissal.
"""


def test_a_conflict_beside_a_sentence_left_out_is_not_reported(tmp_path):
    answer = answer_over(tmp_path, {
        "device-security-2023.md": POLICY.format(version="1.0", effective="2023-01-01", status="superseded",
                                                 report="24", lock="10"),
        "device-security-2025.md": POLICY.format(version="2.0", effective="2025-01-01", status="active",
                                                 report="4", lock="5"),
    }, "If I remove the firewall because it slows my tablet down, what happens to me?")
    assert answer.status == "answered", answer.text
    assert answer.text.startswith("Removing or switching off the firewall"), answer.text
    assert "gross misconduct" in answer.text
    # the tablet's reporting hours and screen lock are other matters than the firewall
    assert not answer.conflicts, answer.text
    assert "hours" not in answer.text and "minutes" not in answer.text
