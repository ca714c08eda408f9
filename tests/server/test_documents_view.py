"""What the document view needs: the dates ingest read, confirmed through the API and kept by
every later ingest; a PDF clause's page and boxes, and the page image to draw them on."""

from __future__ import annotations

import httpx
import pytest

NOTICE = """# 关于调整夜班补贴的通知

发布日期：2025年3月4日

第一条 夜班补贴提高到每晚八十元。

第二条 本通知自2025年4月1日起施行。
"""


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def upload(client, name: str, data: bytes) -> str:
    r = client.post("/v1/documents", files=[("files", (name, data))])
    assert r.status_code == 200, r.text
    f = r.json()["files"][0]
    assert f["status"] in ("added", "replaced", "unchanged"), f
    return f["doc_id"]


def test_date_candidates_are_shown_and_a_confirmation_sticks(client):
    doc_id = upload(client, "夜班补贴通知.md", NOTICE.encode())
    try:
        view = client.get(f"/v1/documents/{doc_id}").json()
        found = {(d["kind"], d["date"]) for d in view["date_candidates"]}
        assert ("publish", "2025-03-04") in found and ("effective", "2025-04-01") in found
        assert view["page_scale"] is None  # no PDF pages to draw on
        # the person says the notice was published a day later than its text says
        r = client.post(f"/v1/documents/{doc_id}/confirm", json={"fields": {"publish_date": "2025-03-05"}})
        assert r.status_code == 200, r.text
        assert r.json()["meta"]["publish_date"] == "2025-03-05"
        confirmed = [d for d in r.json()["date_candidates"] if d["rule"] == "confirmed"]
        assert [(d["field"], d["date"]) for d in confirmed] == [("publish_date", "2025-03-05")]
        # a re-upload of the same file keeps the confirmation (it lives in the sidecar)
        upload(client, "夜班补贴通知.md", NOTICE.replace("八十元", "九十元").encode())
        assert client.get(f"/v1/documents/{doc_id}").json()["meta"]["publish_date"] == "2025-03-05"
        bad = client.post(f"/v1/documents/{doc_id}/confirm", json={"fields": {"publish_date": "not a date"}})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_confirmation"
        assert client.get(f"/v1/documents/{doc_id}").json()["meta"]["publish_date"] == "2025-03-05"
        assert client.post("/v1/documents/nope/confirm", json={"fields": {"version": "2"}}).status_code == 404
        assert client.get(f"/v1/documents/{doc_id}/pages/1").status_code == 404
    finally:
        client.delete(f"/v1/documents/{doc_id}")


def test_a_pdf_clause_has_its_page_and_boxes_and_the_page_is_an_image(client):
    pymupdf = pytest.importorskip("pymupdf")
    pdf = pymupdf.open()
    page = pdf.new_page()
    y = 72
    for line in ("Equipment Policy", "Section 1 Laptops are replaced every four years.",
                 "Section 2 Phones are replaced every two years."):
        page.insert_text((72, y), line, fontsize=12)
        y += 24
    data = pdf.tobytes()
    doc_id = upload(client, "equipment.pdf", data)
    try:
        view = client.get(f"/v1/documents/{doc_id}").json()
        assert view["page_scale"] > 0
        phones = next(c for c in view["clauses"] if "Section 2" in (c["clause"] or ""))
        assert phones["page"] == 1 and phones["boxes"]
        p, x0, top, x1, bottom = phones["boxes"][0]
        assert p == 1 and 60 <= x0 < x1 <= 600 and 100 < top < bottom < 140  # the third line
        image = client.get(f"/v1/documents/{doc_id}/pages/1")
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        assert image.content[:8] == b"\x89PNG\r\n\x1a\n"
        assert client.get(f"/v1/documents/{doc_id}/pages/2").status_code == 404
    finally:
        client.delete(f"/v1/documents/{doc_id}")
