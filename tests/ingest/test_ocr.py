"""Scanned pages: a page image with Chinese and English text inside a PDF, read by OCR with the
models shipped in the rapidocr-onnxruntime wheel, with networking switched off (``unshare -n``)
so that any download at run time fails loudly. Pages with a text layer are never OCR'd."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_rag.ingest import ocr
from agentic_rag.ingest.parsers import parse_bytes
from agentic_rag.ingest.pdf import PdfOptions

pytest.importorskip("rapidocr_onnxruntime")
pytestmark = pytest.mark.slow

LINES = ["第一条 员工请假应当提前申请。", "Section 2 Leave is approved by the manager.",
         "第二条 本办法自2024年6月18日起施行。"]


def scanned_page(lines: list[str] = LINES):
    """A page image (200 dpi) holding ``lines``, as a scanner would give it: the text is typeset
    with PyMuPDF's built-in Chinese font and rendered to pixels, so no system font is needed."""
    pymupdf = pytest.importorskip("pymupdf")
    from PIL import Image

    doc = pymupdf.open()
    page = doc.new_page(width=504, height=40 + 32 * len(lines))
    for i, line in enumerate(lines):
        page.insert_text((30, 40 + 32 * i), line, fontname="china-s", fontsize=16)
    pix = page.get_pixmap(dpi=200, colorspace=pymupdf.csGRAY)
    return Image.frombytes("L", (pix.width, pix.height), pix.samples)


def scanned_pdf(path: Path) -> Path:
    scanned_page().save(path, "PDF", resolution=200)  # an image, no text layer
    return path


def test_scanned_page_is_read_offline_under_unshare(tmp_path: Path):
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-n", "true"]).returncode != 0:
        pytest.skip("unshare -n is not available here (needs user namespaces or root)")
    probe = subprocess.run(["unshare", "-n", sys.executable, "-c",
                            "import socket; socket.create_connection(('pypi.org', 443), timeout=5)"],
                           capture_output=True, text=True)
    assert probe.returncode != 0  # the sandbox really has no network
    folder = tmp_path / "docs"
    folder.mkdir()
    scanned_pdf(folder / "scan.pdf")
    index = tmp_path / "idx"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    script = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from agentic_rag.cli import app\n"
        "r = CliRunner().invoke(app, ['ingest', sys.argv[1], '--index', sys.argv[2], '--json'])\n"
        "assert r.exit_code == 0, r.output\n"
        "d = json.loads(CliRunner().invoke(app, ['docs', '--index', sys.argv[2], '--json']).stdout)[0]\n"
        "c = json.loads(CliRunner().invoke(app, ['chunks', d['doc_id'], '--index', sys.argv[2], '--json']).stdout)\n"
        "print(json.dumps({'doc': d, 'chunks': c}, ensure_ascii=False, default=str))\n")
    run = subprocess.run(["unshare", "-n", sys.executable, "-c", script, str(folder), str(index)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["doc"]["extra"]["ocr_pages"] == [1]
    assert seen["doc"]["effective_date"] == "2024-06-18"
    by_clause = {c["clause"]: c for c in seen["chunks"]}
    assert "员工请假应当提前申请" in by_clause["第一条"]["text"]
    assert "approved" in "".join(c["text"] for c in seen["chunks"])
    assert by_clause["第二条"]["page"] == 1 and by_clause["第二条"]["boxes"]


def test_a_page_with_a_text_layer_is_never_ocrd(monkeypatch):
    pymupdf = pytest.importorskip("pymupdf")
    import io

    calls: list[int] = []
    monkeypatch.setattr(ocr, "recognize", lambda image, scale, path: calls.append(1) or [])
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Article 1 Employees may work remotely.", fontsize=11)
    buf = io.BytesIO()
    scanned_page(["LOGO"]).save(buf, "PNG")
    page.insert_image(pymupdf.Rect(72, 100, 300, 160), stream=buf.getvalue())  # a picture beside text
    parsed = parse_bytes(doc.tobytes(), "t.pdf")
    assert calls == [] and "Article 1 Employees may work remotely." in parsed.text
    assert "ocr_pages" not in parsed.extra


def test_ocr_off_leaves_scanned_pages_out_and_says_so(tmp_path: Path):
    pymupdf = pytest.importorskip("pymupdf")
    scan = scanned_pdf(tmp_path / "scan.pdf")
    from agentic_rag.errors import IngestError

    with pytest.raises(IngestError, match=r"no text layer \(scanned\) and ingest.ocr is off"):
        parse_bytes(scan.read_bytes(), "scan.pdf", PdfOptions(ocr=False))
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Article 1 Employees may work remotely.", fontsize=11)
    doc.insert_pdf(pymupdf.open(str(scan)))
    mixed = parse_bytes(doc.tobytes(), "mixed.pdf", PdfOptions(ocr=False))
    assert mixed.extra == {"scanned_pages_not_read": [2]}
