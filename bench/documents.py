"""Documents as they come: PDF readers, OCR, and metadata on a labelled sample (a script, not a test).

    python bench/documents.py pdf  [--docs 16]     # permissive (pypdfium2+pdfplumber) vs PyMuPDF
    python bench/documents.py ocr  [--pages 6]     # OCR character error rate and pages/s
    python bench/documents.py meta                 # title/date/authority/status/clauses, 39 documents
    python bench/documents.py files A.pdf B.pdf    # both readers on PDFs of your own
    python bench/documents.py all  [--json]

``pdf``: LeCoQA statutes (../shared/bench/lecoqa, the longest ones) are typeset into PDFs here,
one column and two columns, with a running header and a ``第X页 共Y页`` / ``- X -`` footer on
every page. Each PDF is read by both readers through the same layout pass; reported per reader
and layout: pages/s (best of ``--repeat`` rounds, readers alternating), character error rate
of each page's text against the text typeset on it (difflib alignment, whitespace ignored),
pages where a header or footer leaked into the text, and clause fidelity (the share of the
statute's 第X条 labels that the chunks of the PDF carry). The bare libraries' text calls
(``page.get_text()`` / ``textpage.get_text_range()``, no layout) are timed too.

``ocr``: pages rendered here with PIL (Chinese statute paragraphs and English passages from
../shared/bench/hotpotqa), clean and noisy (rotated 0.6°, blurred, Gaussian noise, JPEG at
quality 35), each an A4 page at 200 dpi put into a PDF as an image with no text layer and
read by ``arag``'s PDF path (rapidocr-onnxruntime, its shipped PP-OCRv4 models). CER = edits /
reference characters, whitespace ignored (the recognizer drops some spaces between English
words); pages/s by the wall clock and CPU seconds per page (all threads), since a loaded
machine stretches the first.

``meta``: 39 documents written by this script in seven formats (txt, md with front matter,
html with <meta>, docx, pdf, rtf, epub) with known title, version date, authority, status
(two versions of one title by one issuer: the older is superseded; one title by several
issuers: none is; an amended law: the latest 修正 is the version; a repeal statement: the
named one is repealed) and clause labels, ingested into a fresh index; reported: the share of each field
that is right, and clause fidelity. The sample follows common Chinese and English document
conventions; it is written here, so it shows the rules work on those conventions, not on text
nobody here wrote.

Timings depend on the machine's load: compare readers within one run.
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
BENCH = Path(os.environ.get("ARAG_BENCH_DIR") or HERE.parent / "shared" / "bench")  # as arag eval reads it
FONTS = ("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
         "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")


def _squash(text: str) -> str:
    return "".join(text.split())


def cer(reference: str, hypothesis: str) -> float:
    """Edits / reference characters, whitespace ignored, from a difflib alignment (an upper
    bound of the edit distance; equal to it on texts this close)."""
    a, b = _squash(reference), _squash(hypothesis)
    if not a:
        return 0.0 if not b else 1.0
    edits = sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in
                difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op != "equal")
    return edits / len(a)


# ---------------------------------------------------------------- pdf

def _wrap(text: str, width: float, size: float) -> list[str]:
    """Greedy line breaking by estimated advance: CJK one em, ASCII half an em."""
    lines, cur, used = [], "", 0.0
    for ch in text:
        w = size * (0.5 if ch.isascii() else 1.0)
        if used + w > width and cur:
            lines.append(cur)
            cur, used = "", 0.0
        cur += ch
        used += w
    if cur:
        lines.append(cur)
    return lines


def typeset(title: str, text: str, columns: int) -> tuple[bytes, list[str], list[str]]:
    """A statute as a PDF: ``(pdf bytes, text typeset on each page, header/footer texts)``."""
    import pymupdf

    size, lead = 10.5, 15.0
    width, height, margin, gutter = 595.0, 842.0, 60.0, 24.0
    col_w = (width - 2 * margin - (columns - 1) * gutter) / columns
    header = f"{title}（文本）"
    items: list[tuple[str, float, bool]] = [(title, 18.0, True)]
    for para in text.split("\n"):
        if para.strip():
            items.extend((line, size, False) for line in _wrap(para.strip(), col_w, size))
    doc = pymupdf.open()
    truth: list[str] = []
    page = None
    col, y = 0, 0.0
    top, bottom = margin + 20, height - margin - 20

    col_top = top  # where columns start on this page: below a title set across them

    def new_page():
        nonlocal page, col, y, col_top
        page = doc.new_page(width=width, height=height)
        truth.append("")
        col, y, col_top = 0, top, top

    new_page()
    for line, fs, heading in items:
        step = fs * 1.8 if heading else lead
        if y + step > bottom:
            col += 1
            y = col_top
            if col >= columns:
                new_page()
        x = margin + col * (col_w + gutter) if not heading else margin
        page.insert_text((x, y + fs), line, fontname="china-s", fontsize=fs)
        truth[-1] += line
        y += step
        if heading:
            col_top = y
    total = len(doc)
    marks = [header]
    for n, p in enumerate(doc, start=1):
        p.insert_text((margin, 40), header, fontname="china-s", fontsize=9)
        foot = f"第{n}页 共{total}页" if columns == 1 else f"- {n} -"
        marks.append(foot)
        p.insert_text((width / 2 - 30, height - 30), foot, fontname="china-s", fontsize=9)
    return doc.tobytes(), truth, marks


def _statutes(n: int) -> list[dict]:
    rows = [json.loads(line) for line in (BENCH / "lecoqa" / "corpus.jsonl").open(encoding="utf-8")]
    rows = [r for r in rows if len(r["text"]) <= 20000]
    rows.sort(key=lambda r: (-len(r["text"]), r["id"]))
    return rows[:n]


def bench_pdf(args) -> dict:
    import pymupdf
    import pypdfium2 as pdfium

    from agentic_rag.ingest.chunking import chunk_document
    from agentic_rag.ingest.pdf import PdfOptions, read_pdf
    from agentic_rag.types import DocMeta, Document

    out: dict = {}
    for columns in (1, 2):
        pdfs = [(r, *typeset(r["title"], r["text"], columns)) for r in _statutes(args.docs)]
        pages = sum(len(truth) for _, _, truth, _ in pdfs)
        best: dict[str, float] = {}
        results: dict[str, list] = {}
        for _ in range(args.repeat):
            for engine in ("pdfium", "mupdf"):
                started = time.perf_counter()
                results[engine] = [read_pdf(data, "b.pdf", PdfOptions(engine=engine, ocr=False))
                                   for _, data, _, _ in pdfs]
                best[engine] = min(best.get(engine, 1e9), time.perf_counter() - started)
        raw: dict[str, float] = {}
        for _ in range(args.repeat):
            started = time.perf_counter()
            for _, data, _, _ in pdfs:
                with pymupdf.open(stream=data, filetype="pdf") as d:
                    for p in d:
                        p.get_text()
            raw["mupdf"] = min(raw.get("mupdf", 1e9), time.perf_counter() - started)
            started = time.perf_counter()
            for _, data, _, _ in pdfs:
                d = pdfium.PdfDocument(data)
                for i in range(len(d)):
                    d[i].get_textpage().get_text_range()
                d.close()
            raw["pdfium"] = min(raw.get("pdfium", 1e9), time.perf_counter() - started)
        layout = "one column" if columns == 1 else "two columns"
        for engine, reads in results.items():
            errors, leaks, found, labels = [], 0, 0, 0
            for (row, _, truth, marks), read in zip(pdfs, reads):
                for n, expected in enumerate(truth, start=1):
                    got = "\n".join(read.text[s:e].lstrip("# ") for s, e, page, _ in read.layout if page == n)
                    errors.append(cer(expected, got))
                    leaks += any(_squash(m) in _squash(got) for m in marks[1:] + [marks[0]])
                gold = _clauses(chunk_document(Document(doc_id="g", source="g", content_hash="h", text=row["text"],
                                                        meta=DocMeta(title=row["title"]))))
                have = _clauses(chunk_document(Document(doc_id="p", source="p.pdf", content_hash="h",
                                                        text=read.text, meta=DocMeta(title=row["title"]))))
                labels += len(gold)
                found += len(gold & have)
            out[f"{layout} · {engine}"] = {
                "documents": len(pdfs), "pages": pages, "pages_per_s": round(pages / best[engine], 1),
                "bare_text_pages_per_s": round(pages / raw[engine], 1),
                "cer_mean": round(statistics.mean(errors), 4), "cer_max": round(max(errors), 4),
                "pages_with_header_or_footer": leaks, "clause_fidelity": round(found / labels, 4) if labels else None}
    return out


def bench_files(args) -> dict:
    """PDFs given on the command line, read by both readers: seconds, pages/s, and how far the
    default reader's text is from PyMuPDF's (no ground truth: agreement, not accuracy)."""
    from agentic_rag.ingest.pdf import PdfOptions, read_pdf

    out: dict = {}
    for path in args.files:
        data = Path(path).read_bytes()
        row: dict = {}
        reads = {}
        for engine in ("pdfium", "mupdf"):
            started = time.perf_counter()
            reads[engine] = read_pdf(data, path, PdfOptions(engine=engine, ocr=False))
            row[f"{engine}_s"] = round(time.perf_counter() - started, 2)
        pages = len({b[2] for b in reads["pdfium"].layout})
        row["pages"] = pages
        row.update({f"{e}_pages_per_s": round(pages / row[f"{e}_s"], 1) for e in reads})
        row["difference_pdfium_vs_mupdf"] = round(cer(reads["mupdf"].text, reads["pdfium"].text), 4)
        out[Path(path).name] = row
    return out


def _clauses(chunks) -> set[str]:
    return {c.clause for c in chunks if c.clause and c.clause.startswith("第")}


# ---------------------------------------------------------------- ocr

def _page_image(lines: list[str], font_path: str, noisy: bool, seed: int):
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    dpi_scale = 200 / 72
    width, height = int(595 * dpi_scale), int(842 * dpi_scale)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(font_path, int(11 * dpi_scale))
    y = int(70 * dpi_scale)
    for line in lines:
        draw.text((int(60 * dpi_scale), y), line, font=font, fill=0)
        y += int(19 * dpi_scale)
    if noisy:
        import numpy as np

        rng = np.random.default_rng(seed)
        image = image.rotate(0.6, expand=False, fillcolor=255).filter(ImageFilter.GaussianBlur(0.8))
        pixels = np.asarray(image, dtype=np.float32) + rng.normal(0, 28, (height, width))
        image = Image.fromarray(np.clip(pixels, 0, 255).astype("uint8"))
        buf = io.BytesIO()
        image.save(buf, "JPEG", quality=35)
        image = Image.open(io.BytesIO(buf.getvalue())).convert("L")
    return image


def _ocr_texts(pages: int) -> list[tuple[str, list[str]]]:
    zh = [json.loads(line) for line in (BENCH / "lecoqa" / "corpus.jsonl").open(encoding="utf-8")]
    en = [json.loads(line) for line in (BENCH / "hotpotqa" / "corpus.jsonl").open(encoding="utf-8")]
    out = []
    for n in range(pages):
        if n % 2 == 0:
            text = "".join(zh[n * 7 % len(zh)]["text"].split())[:600]
            out.append(("zh", _wrap(text, 470, 11)[:30]))
        else:
            words = " ".join(en[n * 11 % len(en)]["text"].split()[:140])
            out.append(("en", _wrap_words(words, 80)[:30]))
    return out


def _wrap_words(text: str, width: int) -> list[str]:
    lines, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = f"{cur} {word}".strip()
    return lines + ([cur] if cur else [])


def bench_ocr(args) -> dict:
    from agentic_rag.ingest.pdf import PdfOptions, read_pdf

    font = next((f for f in FONTS if Path(f).is_file()), None)
    if font is None:
        raise SystemExit("no CJK font: apt-get install fonts-wqy-microhei")
    read_pdf(_as_pdf(_page_image(["warm up 预热"], font, False, 0)), "w.pdf")  # load the models once
    out: dict = {}
    for noisy in (False, True):
        by_lang: dict[str, list[float]] = {"zh": [], "en": []}
        seconds = cpu = 0.0
        texts = _ocr_texts(args.pages)
        for n, (lang, lines) in enumerate(texts):
            data = _as_pdf(_page_image(lines, font, noisy, n))
            started, used = time.perf_counter(), _cpu()
            read = read_pdf(data, "scan.pdf", PdfOptions())
            seconds += time.perf_counter() - started
            cpu += _cpu() - used
            assert read.ocr_pages == [1]
            by_lang[lang].append(cer("".join(lines), read.text))
        out["noisy" if noisy else "clean"] = {
            "pages": len(texts), "pages_per_s": round(len(texts) / seconds, 3),
            "cpu_s_per_page": round(cpu / len(texts), 2),
            "cer_zh": round(statistics.mean(by_lang["zh"]), 4) if by_lang["zh"] else None,
            "cer_en": round(statistics.mean(by_lang["en"]), 4) if by_lang["en"] else None}
    return out


def _cpu() -> float:
    """CPU seconds of this process, all threads (ONNX Runtime runs its own)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _as_pdf(image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "PDF", resolution=200)
    return buf.getvalue()


# ---------------------------------------------------------------- meta: a labelled sample

_ORGS_ZH = ["江西省医疗保障局", "浙江省人力资源和社会保障厅", "广州市住房和城乡建设局", "四川省财政厅", "北京市教育委员会"]
_TOPICS_ZH = ["调整职工医保报销比例", "规范差旅费管理", "加强住房公积金管理", "做好高校毕业生就业", "优化营商环境",
              "加强安全生产", "推进数字政府建设"]
_ORGS_EN = ["Acme Robotics Inc.", "Northwind Health Board", "City of Springfield Council", "Globex Corporation",
            "Contoso University"]
_TOPICS_EN = ["Remote Work", "Travel Expenses", "Data Retention", "Parental Leave", "Procurement",
              "Information Security", "Whistleblowing"]
_CN_NUM = "一二三四五六七八九十"


def _cn_date(d) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def sample(folder: Path) -> dict[str, dict]:
    """Write the labelled documents into ``folder``; returns file name -> expected fields."""
    import datetime as dt

    rng = random.Random(7)
    expected: dict[str, dict] = {}
    formats = ["txt", "md", "html", "docx", "pdf", "rtf", "epub"]
    n = 0
    for i in range(5):
        for f_i, fmt in enumerate(formats):
            n += 1
            zh = (i + f_i) % 2 == 0
            date = dt.date(2019 + (n % 6), 1 + n % 12, 1 + (n * 7) % 27)
            effective = date + dt.timedelta(days=30)
            clauses = 3 + n % 4
            if zh:
                org, topic = _ORGS_ZH[(n // 7) % 5], _TOPICS_ZH[n % 7]
                title = f"{org}关于{topic}的通知" if fmt != "md" else f"关于{topic}的通知"
                body = [f"第{_CN_NUM[k]}条 " + rng.choice(["参保人员应当按规定办理相关手续。", "各单位应当加强管理，严格执行。",
                                                          "具体标准详见附表。", "申请材料应当真实、完整。"])
                        for k in range(clauses - 1)]
                body.append(f"第{_CN_NUM[clauses - 1]}条 本通知自{_cn_date(effective)}起施行。")
                labels = [f"第{_CN_NUM[k]}条" for k in range(clauses)]
                lines = [title, f"{org[:2]}发〔{date.year}〕{n}号", *body, org, _cn_date(date)]
            else:
                org, topic = _ORGS_EN[(n // 7) % 5], _TOPICS_EN[n % 7]
                title = f"{topic} Policy"
                body = [f"Section {k + 1} " + rng.choice(["Employees must request approval in advance.",
                                                          "Managers review each request within five days.",
                                                          "Records are kept for three years.",
                                                          "Exceptions require written consent."])
                        for k in range(clauses)]
                labels = [f"Section {k + 1}" for k in range(clauses)]
                lines = [title, f"Issued by: {org}", f"Issue date: {date.isoformat()}",
                         f"Effective date: {effective.isoformat()}", *body]
            name = f"doc{n:02d}.{fmt}"
            _write(folder / name, fmt, title, lines, org, date, zh)
            expected[name] = {"title": title, "publish_date": date.isoformat(), "authority": org,
                              "status": "active", "clauses": labels}
    # versions: the same title again with a later date supersedes the earlier one
    for name in ("doc03.html", "doc11.docx"):
        old = expected[name]
        later = dt.date.fromisoformat(old["publish_date"]) + dt.timedelta(days=400)
        zh = "关于" in old["title"]
        lines = ([old["title"], "第一条 本通知重新修订。", f"第二条 本通知自{_cn_date(later)}起施行。", old["authority"],
                  _cn_date(later)] if zh else
                 [old["title"], f"Issued by: {old['authority']}", f"Issue date: {later.isoformat()}",
                  "Section 1 This version replaces the earlier text.", "Section 2 It applies to all staff."])
        newer = name.split(".")[0] + "-v2.txt"
        _write(folder / newer, "txt", old["title"], lines, old["authority"], later, zh)
        expected[newer] = {**old, "publish_date": later.isoformat(),
                           "clauses": ["第一条", "第二条"] if zh else ["Section 1", "Section 2"]}
        old["status"] = "superseded"
    # an amended law: the latest 修正 is the version date, the enacting body the authority
    law = ("中华人民共和国示例管理法\n（2001年4月28日第九届全国人民代表大会常务委员会第二十一次会议通过　根据2013年6月29日"
           "第十二届全国人民代表大会常务委员会第三次会议《关于修改〈中华人民共和国示例管理法〉的决定》第一次修正　"
           "根据2021年4月29日第十三届全国人民代表大会常务委员会第二十八次会议《关于修改〈中华人民共和国示例管理法〉"
           "的决定》第二次修正）\n第一章 总则\n第一条 为了规范示例管理，制定本法。\n第二条 本法适用于全国。\n"
           "第二章 附则\n第三条 本法自2001年10月1日起施行。\n")
    (folder / "law.md").write_text(law, encoding="utf-8")
    expected["law.md"] = {"title": "中华人民共和国示例管理法", "publish_date": "2021-04-29",
                          "authority": "全国人民代表大会常务委员会", "status": "active",
                          "clauses": ["第一条", "第二条", "第三条"]}
    # a notice that repeals another document by its title
    target = next(n for n, e in expected.items() if "关于" in e["title"] and e["status"] == "active"
                  and n.endswith(".txt"))
    old = expected[target]
    later = dt.date.fromisoformat(old["publish_date"]) + dt.timedelta(days=900)
    org = old["authority"]
    repeal = (f"{org}关于废止部分规范性文件的决定\n第一条 《{old['title']}》同时废止。\n"
              f"第二条 本决定自发布之日起施行。\n{org}\n{_cn_date(later)}\n")
    (folder / "repeal.txt").write_text(repeal, encoding="utf-8")
    expected["repeal.txt"] = {"title": f"{org}关于废止部分规范性文件的决定", "publish_date": later.isoformat(),
                              "authority": org, "status": "active", "clauses": ["第一条", "第二条"]}
    old["status"] = "repealed"
    return expected


def _write(path: Path, fmt: str, title: str, lines: list[str], org: str, date, zh: bool) -> None:
    if fmt == "txt":
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif fmt == "md":
        front = f"---\ntitle: {title}\ndate: {date.isoformat()}\nauthor: {org}\n---\n"
        path.write_text(front + "\n".join(lines[1:]) + "\n", encoding="utf-8")
    elif fmt == "html":
        body = "".join(f"<p>{line}</p>" for line in lines[1:])
        path.write_text(f"<html><head><title>{title}</title><meta name=\"author\" content=\"{org}\"></head>"
                        f"<body><h1>{title}</h1>{body}</body></html>", encoding="utf-8")
    elif fmt == "docx":
        import docx

        d = docx.Document()
        d.add_paragraph(lines[0], style="Title")
        for line in lines[1:]:
            d.add_paragraph(line)
        d.save(path)
    elif fmt == "pdf":
        import pymupdf

        doc = pymupdf.open()
        page = doc.new_page()
        page.insert_text((72, 72), lines[0], fontname="china-s", fontsize=16)
        for k, line in enumerate(lines[1:]):
            page.insert_text((72, 110 + 22 * k), line, fontname="china-s", fontsize=11)
        doc.save(path)
    elif fmt == "rtf":
        esc = lambda t: "".join(c if ord(c) < 128 else f"\\u{ord(c)}?" for c in t)  # noqa: E731
        path.write_text("{\\rtf1\\ansi\\deff0 " + "\\par\n".join(esc(line) for line in lines) + "\\par\n}",
                        encoding="ascii")
    elif fmt == "epub":
        import zipfile

        body = "".join(f"<p>{line}</p>" for line in lines[1:])
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("mimetype", "application/epub+zip")
            z.writestr("META-INF/container.xml",
                       '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                       '<rootfile full-path="content.opf"/></rootfiles></container>')
            z.writestr("content.opf",
                       '<package xmlns="http://www.idpf.org/2007/opf"><metadata '
                       f'xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title>'
                       f'<dc:publisher>{org}</dc:publisher><dc:date>{date.isoformat()}</dc:date></metadata>'
                       '<manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest>'
                       '<spine><itemref idref="c"/></spine></package>')
            z.writestr("c.xhtml", f'<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>{title}</h1>{body}'
                                  '</body></html>')


def bench_meta(args) -> dict:
    from agentic_rag.config import Settings
    from agentic_rag.ingest.pipeline import ingest_paths
    from agentic_rag.store import open_store

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        expected = sample(folder)
        settings = Settings.load(None, index=Path(tmp) / "idx")
        store = open_store(Path(tmp) / "idx")
        started = time.perf_counter()
        report = ingest_paths([folder], store, settings)
        seconds = time.perf_counter() - started
        failed = [(f.path, f.reason) for f in report.files if f.status == "failed"]
        right = {k: 0 for k in ("title", "publish_date", "authority", "status")}
        wrong: list[str] = []
        labels = found = 0
        by_name = {Path(d.source).name: d for d in store.documents()}
        for name, want in expected.items():
            doc = by_name.get(name)
            if doc is None:
                wrong.append(f"{name}: not ingested")
                continue
            got = {"title": doc.meta.title, "publish_date": str(doc.meta.publish_date),
                   "authority": doc.meta.authority, "status": doc.meta.status}
            for key in right:
                if got[key] == want[key]:
                    right[key] += 1
                else:
                    wrong.append(f"{name}: {key} {got[key]!r} != {want[key]!r}")
            have = {c.clause for c in store.chunks(doc.doc_id) if c.clause}
            labels += len(want["clauses"])
            found += sum(1 for label in want["clauses"] if label in have)
        store.close()
    total = len(expected)
    return {"documents": total, "formats": sorted({n.rsplit(".", 1)[1] for n in expected}),
            "failed": failed, "seconds": round(seconds, 2),
            **{f"{k}_accuracy": round(v / total, 4) for k, v in right.items()},
            "clause_fidelity": round(found / labels, 4) if labels else None, "wrong": wrong[: args.show]}


# ---------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["pdf", "ocr", "meta", "files", "all"])
    parser.add_argument("files", nargs="*", help="PDFs for `files`: both readers on each")
    parser.add_argument("--docs", type=int, default=16, help="statutes typeset for the pdf bench")
    parser.add_argument("--repeat", type=int, default=2, help="rounds per reader (best is kept)")
    parser.add_argument("--pages", type=int, default=6, help="pages rendered for the ocr bench (per variant)")
    parser.add_argument("--show", type=int, default=20, help="wrong fields to list (meta)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = {"load_average": os.getloadavg()[0]}
    for what, fn in (("pdf", bench_pdf), ("ocr", bench_ocr), ("meta", bench_meta), ("files", bench_files)):
        if what == "files" and not args.files:
            continue
        if args.what in (what, "all"):
            results[what] = fn(args)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=2))
    else:
        for section, value in results.items():
            if isinstance(value, dict):
                print(f"== {section}")
                for key, row in value.items():
                    print(f"  {key}: {json.dumps(row, ensure_ascii=False)}")
            else:
                print(f"{section}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
