"""Sessions (history keeps its citations), documents (upload, list, clause spans, delete; a
failed upload changes nothing), feedback, and two workers sharing all of it."""

from __future__ import annotations

import datetime as dt
import time

import httpx
import pytest

from tests.server.conftest import Served


@pytest.fixture(scope="module")
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c


def test_a_session_keeps_its_turns_with_their_citations(client):
    sid = client.post("/v1/sessions").json()["session_id"]
    first = client.post("/v1/ask", json={"question": "职工住院能报销百分之多少？", "session_id": sid}).json()
    second = client.post("/v1/ask", json={"question": "那退休人员呢？", "session_id": sid}).json()
    assert first["session_id"] == sid and second["session_id"] == sid
    view = client.get(f"/v1/sessions/{sid}").json()
    assert view["status"] == "answered"
    assert [t["question"] for t in view["turns"]] == ["职工住院能报销百分之多少？", "那退休人员呢？"]
    reloaded = view["turns"][0]["answer"]
    assert reloaded["answer_id"] == first["answer_id"]
    assert reloaded["citations"] == first["citations"] and reloaded["citations"]
    # the follow-up was read against the first question
    assert any(e["kind"] == "contextualize" for e in view["turns"][1]["answer"]["trace"])
    assert client.delete(f"/v1/sessions/{sid}").json() == {"deleted": sid}
    for r in (client.get(f"/v1/sessions/{sid}"), client.delete(f"/v1/sessions/{sid}"),
              client.post(f"/v1/sessions/{sid}/abort")):
        assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"


def test_a_reloaded_turn_is_the_answer_exactly_as_it_was_sent(client):
    sid = client.post("/v1/sessions").json()["session_id"]
    sent = client.post("/v1/ask", json={"question": "职工住院能报销百分之多少？", "session_id": sid}).json()
    assert sent["citations"] and sent["trace"]
    assert client.get(f"/v1/sessions/{sid}").json()["turns"][0]["answer"] == sent


def test_feedback_is_stored_with_its_answer_and_exported_since(client):
    before = dt.datetime.now(dt.timezone.utc).isoformat()
    answer = client.post("/v1/ask", json={"question": "员工请假要提前几天申请？"}).json()
    r = client.post("/v1/feedback", json={"answer_id": answer["answer_id"], "rating": "down",
                                          "reason": "cites the wrong clause",
                                          "irrelevant_chunk_ids": [answer["citations"][0]["chunk_id"]]})
    assert r.status_code == 201, r.text
    rows = client.get("/v1/feedback", params={"since": before}).json()
    assert [(f["answer_id"], f["rating"], f["question"]) for f in rows] == [
        (answer["answer_id"], "down", "员工请假要提前几天申请？")]
    later = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=5)).isoformat()
    assert client.get("/v1/feedback", params={"since": later}).json() == []
    bad = client.post("/v1/feedback", json={"answer_id": "nope", "rating": "up"})
    assert bad.status_code == 404
    assert client.post("/v1/feedback", json={"answer_id": answer["answer_id"], "rating": "meh"}).status_code == 422
    assert client.get("/v1/feedback", params={"since": "yesterday"}).status_code == 422


POLICY = """# 访客停车管理规定

第一条 访客车辆须在门卫处登记车牌号码。

第二条 访客车辆在园区内停放不得超过4小时，超时按每小时10元收费。详见第一条。
"""


@pytest.fixture(scope="module")
def workers(index_copy):
    """Two worker processes over one index, and a keep-alive client pinned to each."""
    served = Served(index_copy("workers"), {}, workers=2)
    clients = _pinned_clients(served.url)
    yield list(clients.values())
    for c in clients.values():
        c.close()
    served.close()


def test_documents_upload_list_get_delete(workers):
    assert len(workers) == 2, "the kernel never handed a connection to the second worker"
    c, other = workers
    n_before = len(c.get("/v1/documents").json())
    r = c.post("/v1/documents", files=[("files", ("访客停车.md", POLICY.encode(), "text/markdown")),
                                       ("files", ("empty.txt", b"", "text/plain"))])
    assert r.status_code == 200, r.text
    results = {f["filename"]: f for f in r.json()["files"]}
    assert results["访客停车.md"]["status"] == "added" and results["访客停车.md"]["chunks"] >= 2
    assert results["empty.txt"]["status"] == "failed" and "empty" in results["empty.txt"]["reason"]
    doc_id = results["访客停车.md"]["doc_id"]
    listed = {d["doc_id"]: d for d in other.get("/v1/documents").json()}
    assert len(listed) == n_before + 1 and listed[doc_id]["meta"]["title"] == "访客停车管理规定"
    doc = c.get(f"/v1/documents/{doc_id}").json()
    second = next(cl for cl in doc["clauses"] if cl["clause"] == "第二条")
    start, end = second["span"]
    assert "4小时" in doc["text"][start:end]
    # the other worker answers from the new document too
    answer = other.post("/v1/ask", json={"question": "访客的车在园区最多能停几个小时？"}).json()
    assert answer["status"] == "answered" and "4" in answer["text"]
    assert doc_id in {ci["doc_id"] for ci in answer["citations"]}
    # unchanged content is a no-op; an unsupported type is refused and nothing is ingested
    again = c.post("/v1/documents", files=[("files", ("访客停车.md", POLICY.encode()))]).json()
    assert again["files"][0]["status"] == "unchanged"
    bad = c.post("/v1/documents", files=[("files", ("tool.exe", b"MZ...")),
                                         ("files", ("note.txt", b"some text"))])
    assert bad.status_code == 415 and bad.json()["error"]["code"] == "unsupported_file_type"
    # a broken replacement of an existing file leaves the index as it was
    version = c.get("/readyz").json()["detail"]["index_version"]
    broken = c.post("/v1/documents", files=[("files", ("访客停车.md", b"\x00\x01"))]).json()
    assert broken["files"][0]["status"] == "failed"
    assert c.get("/readyz").json()["detail"]["index_version"] == version
    assert c.get(f"/v1/documents/{doc_id}").json()["text"] == doc["text"]
    assert c.delete(f"/v1/documents/{doc_id}").json() == {"deleted": doc_id}
    assert c.get(f"/v1/documents/{doc_id}").status_code == 404
    assert c.delete(f"/v1/documents/{doc_id}").status_code == 404
    assert len(other.get("/v1/documents").json()) == n_before


def _pinned_clients(url: str, want: int = 2, tries: int = 60) -> dict[int, httpx.Client]:
    """Keep-alive clients pinned to distinct worker processes (told apart by their pid)."""
    clients: dict[int, httpx.Client] = {}
    for _ in range(tries):
        c = httpx.Client(base_url=url, timeout=60)
        pid = c.get("/readyz").json()["detail"]["pid"]
        if pid in clients:
            c.close()
        else:
            clients[pid] = c
        if len(clients) == want:
            break
        time.sleep(0.05)
    return clients


def test_two_workers_share_sessions_and_feedback(workers):
    assert len(workers) == 2, "the kernel never handed a connection to the second worker"
    a, b = workers
    sid = a.post("/v1/sessions").json()["session_id"]
    answer = a.post("/v1/ask", json={"question": "员工请假要提前几天申请？", "session_id": sid}).json()
    view = b.get(f"/v1/sessions/{sid}").json()
    assert [t["answer"]["answer_id"] for t in view["turns"]] == [answer["answer_id"]]
    follow = b.post("/v1/ask", json={"question": "那病假呢？", "session_id": sid}).json()
    assert follow["session_id"] == sid
    assert len(a.get(f"/v1/sessions/{sid}").json()["turns"]) == 2
    assert b.post("/v1/feedback", json={"answer_id": answer["answer_id"], "rating": "up"}).status_code == 201
    assert answer["answer_id"] in [f["answer_id"] for f in a.get("/v1/feedback").json()]
