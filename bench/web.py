"""The web page in headless Chromium against `arag serve` over the examples index, no LLM: time
from pressing Ask to the first step drawn in the progress graph and to the final answer drawn,
the bytes the page ships, and a screenshot of each view.

    python bench/web.py [--examples examples] [--limit 20] [--embedder auto|none]
                        [--screenshots docs/screenshots] [--json]

Builds a fresh index of examples/docs in a temp folder, starts `arag serve` on a free port, opens
the page (Playwright driving Debian's Chromium at /usr/bin/chromium; `apt-get install chromium
fonts-wqy-microhei`, `pip install playwright`; no browser is downloaded) and asks the first
``--limit`` sample questions one after the other in one conversation, after one warm-up
question. Times come from the page itself (``performance.now()`` at submit, when the first SSE
step has been drawn, when the answer has been drawn), so they include the page's own parsing and
drawing, not the browser's start. The page weight is what the browser fetched to show the page:
the HTML, CSS and JavaScript (the API calls it then makes are reported apart).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from agentic_rag import Engine, Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve import _pct, start_server  # noqa: E402  (bench/ scripts are not a package)

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
CONFLICT_TYPES = ("version_conflict", "conflict")


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 1), "p95": round(_pct(values, 0.95), 1),
            "min": round(min(values), 1), "max": round(max(values), 1)}


def _ask(page, question: str) -> None:
    n = page.locator(".turn .answer").count()
    page.fill("#question", question)
    page.click("#ask")
    page.wait_for_function(f"document.querySelectorAll('.turn .answer').length > {n}", timeout=60_000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--examples", type=Path, default=Path("examples"))
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--embedder", default="auto", help="embedder.provider for the index and server")
    ap.add_argument("--screenshots", type=Path, default=Path("docs/screenshots"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    rows = [json.loads(line) for line in (args.examples / "questions.jsonl").read_text("utf-8").splitlines()
            if line.strip()]
    questions = [r["question"] for r in rows][:args.limit]
    conflict = next(r["question"] for r in rows if r.get("type") in CONFLICT_TYPES)
    absent = next(r["question"] for r in rows if r.get("abstain"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    env.update({"ARAG_EMBEDDER__PROVIDER": args.embedder, "ARAG_LLM__PROVIDER": "none"})
    result: dict = {"cores": len(os.sched_getaffinity(0)), "load_avg_1m": round(os.getloadavg()[0], 2),
                    "embedder": args.embedder, "questions": len(questions)}
    args.screenshots.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        index = Path(tmp) / "idx"
        settings = Settings.load(index=index, embedder={"provider": args.embedder}, llm={"provider": "none"})
        with Engine(settings) as engine:
            engine.ingest([args.examples / "docs"])
        proc, url, _ = start_server(index, env)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
                result.update(_measure(browser, url, questions, conflict, absent, args.screenshots))
                browser.close()
        finally:
            proc.terminate()
            proc.wait(15)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return
    w = result["weight"]
    print(f"{result['cores']} cores · load {result['load_avg_1m']} · embedder {args.embedder} · "
          f"{result['questions']} questions")
    print(f"page weight: {w['total_bytes']} bytes ({', '.join(f'{k} {v}' for k, v in w['files'].items())}); "
          f"API calls at load: {w['api_bytes']} bytes")
    for key, label in (("first_step_ms", "Ask → first step drawn"), ("answer_ms", "Ask → answer drawn")):
        s = result[key]
        print(f"{label}: p50 {s['p50']} ms · p95 {s['p95']} · min {s['min']} · max {s['max']}")
    print(f"screenshots: {', '.join(result['screenshots'])}")


def _measure(browser, url: str, questions: list[str], conflict: str, absent: str, shots: Path) -> dict:
    out: dict = {}
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    page = context.new_page()
    files: dict[str, int] = {}
    api = [0]

    def on_response(response) -> None:
        path = response.url[len(url):]
        size = len(response.body())
        if path.startswith("/v1/"):
            api[0] += size
        else:
            files[path] = size

    page.on("response", on_response)
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready=true]")
    page.remove_listener("response", on_response)
    out["weight"] = {"files": files, "total_bytes": sum(files.values()), "api_bytes": api[0]}
    _ask(page, questions[0])  # warm-up: the server's and the page's first question
    page.evaluate("window.__arag.timings.length = 0")
    for q in questions:
        _ask(page, q)
    timings = page.evaluate("window.__arag.timings")
    out["first_step_ms"] = _summary([t["firstStep"] - t["asked"] for t in timings])
    out["answer_ms"] = _summary([t["answer"] - t["asked"] for t in timings])
    context.close()

    saved = []

    def shot(pg, name: str, full: bool = False) -> None:
        path = shots / f"{name}.png"
        pg.screenshot(path=str(path), full_page=full)
        saved.append(str(path))

    # one screenshot per view, in a fresh conversation
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN")
    page = context.new_page()
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready=true]")
    _ask(page, conflict)
    page.locator(".conflict-card").first.wait_for()
    shot(page, "ask-1280", full=True)
    page.locator(".turn .cite").first.click()
    page.locator("mark.quoted").wait_for()
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "citation-1280")
    page.click("#new-session")
    _ask(page, absent)  # a question the documents do not answer: its gaps, its blocked steps
    page.locator(".turn .gaps").first.wait_for()
    shot(page, "abstained-1280")
    page.click("#tab-docs")
    page.locator("#doc-rows tr").first.wait_for()
    shot(page, "documents-1280")
    page.locator("#doc-rows tr button.link").first.click()
    page.locator("#docs-view .clause-block").first.wait_for()
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, "document-view-1280")
    context.close()
    context = browser.new_context(viewport={"width": 390, "height": 844}, locale="zh-CN", device_scale_factor=1)
    page = context.new_page()
    page.goto(url + "/")
    page.wait_for_selector("body[data-ready=true]")
    _ask(page, questions[0])
    shot(page, "ask-390", full=True)
    context.close()
    out["screenshots"] = saved
    return out


if __name__ == "__main__":
    main()
