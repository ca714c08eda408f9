"""A report on the web page, in Debian's Chromium (Playwright): the steps stream into the
progress graph, the sections show cited lines, and the citations get the same evidence cards
as answers."""

from __future__ import annotations

import pytest

from tests.server.test_web import TIMEOUT_MS, browser, shot  # noqa: F401 (browser: the fixture)


@pytest.fixture
def page(browser, server):  # noqa: F811 (the fixture imported above)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    context.set_default_timeout(TIMEOUT_MS)
    p = context.new_page()
    errors: list[str] = []
    p.on("pageerror", lambda e: errors.append(str(e)))
    p.goto(server.url + "/")
    p.wait_for_selector("body[data-ready=true]")
    yield p
    assert not errors, errors
    context.close()


def test_a_version_comparison_report_with_evidence_cards(page):
    page.click("#report-box summary")
    page.select_option("#report-template", "compare-versions")
    page.fill("#report-in-old", "职工医保待遇办法_2023.txt")
    page.fill("#report-in-new", "职工医保待遇办法_2024.md")
    with page.expect_response("**/v1/reports") as response:
        page.click("#report-run")
    assert response.value.headers["content-type"].startswith("text/event-stream")
    turn = page.locator(".turn").last
    turn.locator(".report-section").first.wait_for()
    page.wait_for_selector("#report-run:not([disabled])")
    assert turn.locator(".badge").get_attribute("data-status") == "complete"
    summary = turn.locator(".report-section[data-step=summary]")
    assert "30万元 → 40万元" in summary.inner_text()
    first = summary.locator("li").first
    assert first.locator("button.cite").count() == 2  # each change cites the old and the new clause
    cards = turn.locator(".evidence .card")
    assert cards.count() >= 10
    superseded = turn.locator(".evidence .card.superseded")
    assert superseded.count() >= 1  # the old version is flagged on its cards
    kinds = [n.get_attribute("data-kind") for n in page.locator(".graph-svg .node").all()]
    assert kinds[0] == "plan" and kinds[-1] == "final" and "verify" in kinds
    first.locator("button.cite").first.click()  # opens the clause beside the report
    page.wait_for_selector("#doc-panel:not([hidden])")
    shot(page, "report-1280")


def test_a_bad_document_id_shows_one_clear_error(page):
    page.click("#report-box summary")
    page.select_option("#report-template", "compare-versions")
    page.fill("#report-in-old", "no-such-doc")
    page.fill("#report-in-new", "职工医保待遇办法_2024.md")
    page.click("#report-run")
    turn = page.locator(".turn").last
    turn.locator(".error").wait_for()
    assert "no-such-doc" in turn.locator(".error").inner_text()
