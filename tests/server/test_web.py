"""The web page in a real browser: Debian's Chromium driven by Playwright against ``arag serve``
on 127.0.0.1 over the examples index (one server for the module, a fresh browser context per
test). Screenshots at 1280 and 390 px go to ``test-artifacts/web/`` (or ``$ARAG_TEST_ARTIFACTS``).

Needs ``pip install playwright`` (the ``dev`` extra) and ``apt-get install chromium
fonts-wqy-microhei``; never downloads a browser. Skipped, saying which is missing, without them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import ROOT, FakeLLM, Served

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("ARAG_TEST_ARTIFACTS", ROOT / "test-artifacts" / "web"))
TIMEOUT_MS = 30_000

HEAT = "高温津贴的标准是每人每月多少钱？"
CONFLICT = "职工医保住院统筹基金年度最高支付限额是多少？"
OUT_OF_SCOPE = "公司食堂的晚餐几点开始供应？"

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
if not CHROMIUM.exists() or shutil.which("chromium") is None:
    pytest.skip("Chromium is not installed (apt-get install -y chromium fonts-wqy-microhei)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[FakeLLM]:
    """An OpenAI-compatible endpoint that answers nothing usable, after ``delay`` seconds."""
    llm = FakeLLM()
    llm.delay = 1.5
    yield llm
    llm.close()


@pytest.fixture(scope="module")
def served(index_copy, slow_llm) -> Iterator[Served]:
    """The server of the module: the LLM toggle is shown (an LLM is configured); tests switch
    it off except where the slow LLM is the point."""
    s = Served(index_copy("web"), {
        "ARAG_LLM__PROVIDER": "openai", "ARAG_LLM__BASE_URL": slow_llm.chat.base_url,
        "ARAG_LLM__MODEL": "slow", "ARAG_LLM_API_KEY": "sk-fake", "ARAG_LLM__TIMEOUT_S": "30",
        "ARAG_LLM__MAX_RETRIES": "0", "ARAG_SERVER__DEADLINE_S": "60"})
    yield s
    s.close()


@pytest.fixture(scope="module")
def browser() -> Iterator["sync_api.Browser"]:
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS, timeout=TIMEOUT_MS)
        yield b
        b.close()


def open_page(browser, served, width=1280, height=900, lang="en-US"):
    context = browser.new_context(viewport={"width": width, "height": height}, locale=lang)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served.url + "/")
    page.wait_for_selector("body[data-ready=true]")
    if not page.locator("#c-llm").is_visible():  # narrow screens start with the settings folded
        page.click("#controls summary")
    page.uncheck("#c-llm")
    page.errors = errors  # type: ignore[attr-defined]
    return page


@pytest.fixture
def page(browser, served):
    p = open_page(browser, served)
    yield p
    assert not p.errors, p.errors  # no JavaScript error on any page a test used
    p.context.close()


def ask(page, question: str, *, submit_with_enter: bool = False):
    page.fill("#question", question)
    if submit_with_enter:
        page.press("#question", "Enter")
    else:
        page.click("#ask")
    turn = page.locator(".turn").last
    turn.locator(".answer").wait_for()
    # the stream ends after the answer (the last steps, done): wait for it, so that the page's
    # layout no longer moves under what a test measures next
    page.wait_for_selector("#ask:not([disabled])")
    return turn


def shot(page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    return path


def test_an_answer_streams_in_with_citation_cards_and_the_progress_graph(page):
    with page.expect_response("**/v1/ask") as response:
        page.fill("#question", HEAT)
        page.press("#question", "Enter")  # the keyboard asks
    assert response.value.headers["content-type"].startswith("text/event-stream")
    # the graph starts filling in with the first streamed step, before the answer is drawn
    page.wait_for_selector(".graph-svg .node[data-kind=route]")
    turn = page.locator(".turn").last
    turn.locator(".answer").wait_for()
    assert turn.locator(".badge").get_attribute("data-status") == "answered"
    assert "300" in turn.locator(".answer").inner_text()
    timing = page.evaluate("window.__arag.timings[0]")
    assert timing["asked"] < timing["firstStep"] < timing["answer"]  # steps drawn before the answer
    card = turn.locator(".card").first
    assert "高温津贴" in card.locator(".card-title").inner_text()
    assert card.locator(".clause").inner_text().startswith("第")
    meta = card.locator(".meta").inner_text()
    assert "Doc. no." in meta and "Authority" in meta and "Published" in meta and "in force" in meta
    nodes = page.locator(".graph-svg .node")
    kinds = [nodes.nth(i).get_attribute("data-kind") for i in range(nodes.count())]
    assert kinds[0] == "route" and kinds[-1] == "final" and "tool" in kinds and "verify" in kinds
    assert page.locator(".graph-svg path.edge").count() >= len(kinds) - 1
    # timings on hover (and on keyboard focus)
    page.hover(".graph-svg .node[data-kind=tool]")
    assert " ms" in page.locator("#graph-tip").inner_text()
    shot(page, "ask-1280")
    # a reloaded page keeps the conversation, its citations included
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    assert HEAT[:6] in page.locator(".session.current").inner_text()
    reloaded = page.locator(".turn").last
    reloaded.locator(".card").first.wait_for()
    assert reloaded.locator(".cite").count() >= 1 and "300" in reloaded.locator(".answer").inner_text()


def test_clicking_a_citation_marker_opens_the_clause_with_the_quote_highlighted(page):
    turn = ask(page, HEAT)
    quote = turn.locator(".card .quote").first.inner_text()
    turn.locator(".cite[data-n='1']").click()
    mark = page.locator("#doc-panel .clause-block.cited mark.quoted")
    mark.wait_for()
    assert mark.inner_text() and mark.inner_text() in quote or quote in mark.inner_text()
    assert "300" in mark.inner_text()
    assert "高温津贴" in page.locator("#doc-title").inner_text()
    assert mark.is_visible()
    # scrolled into view: on a loaded machine the panel's layout may still settle (fonts, the
    # stream's last events) after the scroll, so the check waits for the resting position
    page.wait_for_function(
        """() => {
            const body = document.querySelector('#doc-body').getBoundingClientRect();
            const mark = document.querySelector('#doc-panel .clause-block.cited mark.quoted');
            const m = mark && mark.getBoundingClientRect();
            return !!m && body.top <= m.top && m.top <= body.bottom;
        }""", timeout=5000)
    shot(page, "citation-1280")
    page.keyboard.press("Escape")
    assert page.locator("#doc-panel").is_hidden()


def test_a_conflict_shows_each_value_the_winner_and_the_rule(page):
    turn = ask(page, CONFLICT)
    card = turn.locator(".conflict-card").first
    card.wait_for()
    assert card.locator("li").count() >= 2
    winner = card.locator("li.winner")
    assert "40万元" in winner.inner_text() and "winner" in winner.inner_text()
    assert "2024" in winner.inner_text()
    loser = card.locator("li.loser").first.inner_text()
    assert "2023" in loser
    assert card.locator(".rule strong").inner_text().strip()
    # the superseded (here: repealed) source is visibly marked on its card
    assert turn.locator(".card.superseded .docstatus").count() >= 1
    shot(page, "conflict-1280")


def test_an_out_of_scope_question_abstains_and_names_the_gap(page):
    turn = ask(page, OUT_OF_SCOPE)
    assert turn.locator(".badge").get_attribute("data-status") == "abstained"
    gaps = turn.locator(".gaps li")
    assert gaps.count() >= 1 and gaps.first.inner_text().strip()
    assert turn.locator(".card").count() == 0
    # the step that blocked is drawn as such, naming what was missing
    blocked = page.locator(".graph-svg .node.blocked")
    assert blocked.count() >= 1
    assert "missing:" in blocked.first.get_attribute("aria-label")
    assert blocked.first.locator("text.missing").text_content().startswith("missing:")


def test_stop_during_a_slow_llm_run_ends_it_as_aborted(page, slow_llm):
    page.check("#c-llm")
    calls = slow_llm.calls
    page.fill("#question", HEAT)
    page.click("#ask")
    page.wait_for_selector(".graph-svg .node")  # the run is under way
    assert page.locator("#stop").is_enabled()
    page.click("#stop")
    turn = page.locator(".turn").last
    turn.locator(".badge[data-status=aborted]").wait_for(timeout=20_000)
    assert page.locator(".graph-svg .node[data-kind=abort]").count() == 1
    assert "Aborted" in turn.inner_text() or "已中止" in turn.inner_text()
    assert slow_llm.calls > calls  # the LLM was really in the loop
    assert page.locator("#stop").is_disabled() and page.locator("#ask").is_enabled()


def test_a_moved_slider_travels_with_the_question_and_the_engine_honours_it(page):
    page.focus("#c-retrieval")
    page.keyboard.press("Home")  # sliders work from the keyboard
    assert page.locator("#c-retrieval-out").inner_text() == "1"
    page.select_option("#c-mode", "react")
    page.locator("#c-reflection").focus()
    page.keyboard.press("ArrowRight")
    with page.expect_request("**/v1/ask") as request:
        ask(page, "江南省2021年退休人员门诊报销比例是多少？")
    body = request.value.post_data_json
    assert body["controls"] == {"retrieval": 1, "reflection": 2, "latitude": 1}
    assert body["mode"] == "react" and body["llm"] == "none"
    answer = page.evaluate("window.__arag.turns[window.__arag.turns.length - 1].answer")
    assert answer["usage"]["retrieval_rounds"] == 1
    assert page.locator(".graph-svg .node[data-kind=tool]").count() == 1


def test_feedback_and_not_relevant_reach_the_feedback_log(page, served):
    turn = ask(page, HEAT)
    card = turn.locator(".card").first
    toggle = card.locator("button.toggle")
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    turn.locator(".feedback .reason").fill("clear and cited")
    turn.locator("button.thumb[data-rating=up]").click()
    turn.locator(".feedback [role=status]").filter(has_text="recorded").wait_for()
    chunk = card.get_attribute("data-chunk")
    records = httpx.get(f"{served.url}/v1/feedback", timeout=10).json()
    assert any(r["rating"] == "down" and r["irrelevant_chunk_ids"] == [chunk] for r in records)
    assert any(r["rating"] == "up" and r["reason"] == "clear and cited" and r["question"] == HEAT
               for r in records)


def test_an_uploaded_file_is_listed_with_its_result_and_opens_at_its_clauses(page, tmp_path):
    doc = tmp_path / "canteen-rules.md"
    doc.write_text("# Canteen Opening Rules\n\n## 1. Hours\n\nThe staff canteen serves dinner from 17:30 "
                   "to 19:30 on working days.\n\n## 2. Payment\n\nMeals are paid with the staff card.\n",
                   encoding="utf-8")
    bad = tmp_path / "notes.exe"
    bad.write_bytes(b"MZ\x00\x01")
    page.click("#tab-docs")
    page.set_input_files("#files", [str(doc), str(bad)])
    page.click("#upload")
    ok = page.locator(".upload-item[data-name='canteen-rules.md'][data-status]")
    ok.wait_for()
    assert ok.get_attribute("data-status") == "added" and "added" in ok.inner_text()
    failed = page.locator(".upload-item[data-name='notes.exe'][data-status]")
    failed.wait_for()
    assert failed.get_attribute("data-status") == "failed" and "unsupported" in failed.inner_text()
    row = page.locator("#doc-rows tr", has_text="Canteen Opening Rules")
    row.wait_for()
    shot(page, "documents-1280")
    row.locator("button.link").click()
    page.locator("#docs-view .clause-block").first.wait_for()
    assert "17:30" in page.locator("#docs-view-body").inner_text()
    assert page.locator("#docs-view-clauses button").count() >= 2
    shot(page, "document-view-1280")


def test_a_date_candidate_is_confirmed_from_the_document_view(page, tmp_path):
    doc = tmp_path / "bike-allowance.md"
    doc.write_text("# Bicycle Allowance Notice\n\nPublished: 2025-03-04\n\nSection 1 Staff who cycle to work "
                   "receive EUR 20 a month.\n\nSection 2 This notice takes effect on 2025-04-01.\n",
                   encoding="utf-8")
    page.click("#tab-docs")
    page.set_input_files("#files", [str(doc)])
    page.click("#upload")
    page.locator(".upload-item[data-name='bike-allowance.md'][data-status=added]").wait_for()
    page.locator("#doc-rows tr", has_text="Bicycle Allowance Notice").locator("button.link").click()
    candidate = page.locator(".date-candidate[data-field=publish_date]")
    candidate.wait_for()
    assert "2025-03-04" in candidate.inner_text()
    with page.expect_response("**/confirm") as response:
        candidate.locator("button").click()
    assert response.value.status == 200
    page.locator("#dates-list .ok").wait_for()
    assert "confirmed" in page.locator(".date-candidate[data-field=publish_date]").inner_text()
    assert not page.locator(".date-candidate[data-field=publish_date] button").count()
    shot(page, "dates-1280")


def test_a_pdf_citation_opens_its_page_with_the_cited_block_boxed(page, tmp_path):
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    pg = pdf.new_page()
    for i, line in enumerate(("Locker Room Rules", "Section 1 Lockers are emptied every Friday at 18:00.",
                              "Section 2 Lost keys cost EUR 15 to replace.")):
        pg.insert_text((72, 72 + 24 * i), line, fontsize=12)
    path = tmp_path / "locker-rules.pdf"
    pdf.save(str(path))
    page.click("#tab-docs")
    page.set_input_files("#files", [str(path)])
    page.click("#upload")
    page.locator(".upload-item[data-name='locker-rules.pdf'][data-status=added]").wait_for()
    page.click("#tab-ask")
    turn = ask(page, "How much does it cost to replace a lost locker key?")
    assert "15" in turn.locator(".answer").inner_text()
    turn.locator(".cite[data-n='1']").click()
    box = page.locator("#doc-page .page-box")
    box.first.wait_for()
    img = page.locator("#doc-page img").bounding_box()
    b = box.first.bounding_box()
    assert img and b and img["y"] < b["y"] < img["y"] + img["height"] and b["width"] > 50
    shot(page, "pdf-citation-1280")


def test_the_page_works_at_390_px_in_chinese(browser, served):
    page = open_page(browser, served, width=390, height=844, lang="zh-CN")
    try:
        assert page.locator("#tab-ask").inner_text() == "问答"
        assert page.locator("label[for=c-retrieval]").inner_text() == "检索强度"
        turn = ask(page, HEAT)
        assert turn.locator(".badge").inner_text() == "已回答"
        # nothing sticks out sideways at phone width
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        turn.locator(".cite").first.click()
        page.locator("mark.quoted").wait_for()
        shot(page, "ask-390")
        page.click("#lang")
        assert page.locator("#tab-ask").inner_text() == "Ask"
        page.click("#tab-docs")
        page.locator("#doc-rows tr").first.wait_for()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        shot(page, "documents-390")
        assert not page.errors, page.errors
    finally:
        page.context.close()


def test_every_control_has_a_label(page):
    unlabeled = page.evaluate("""() => [...document.querySelectorAll('input, select, textarea, button')]
        .filter((e) => !e.closest('[hidden]'))
        .filter((e) => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim())
        .map((e) => e.id || e.outerHTML.slice(0, 60))""")
    assert unlabeled == []
