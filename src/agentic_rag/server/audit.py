"""The audit log: every answer served, with the evidence it cited and the version and dates of
each cited document at the time (the answer → evidence → source record).

    log.citing("a1b2c3")   # which answers cited this document?
    log.stale(store)       # answers whose cited documents were replaced, superseded or removed

It is also where a session's history is read back from, so reloaded turns keep their citations.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentic_rag.server.schemas import ServedAnswer
from agentic_rag.state.db import ServerDB

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
  answer_id TEXT PRIMARY KEY, at TEXT NOT NULL, session_id TEXT, question TEXT NOT NULL,
  status TEXT NOT NULL, cached INTEGER NOT NULL, deadline INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS answers_session ON answers(session_id, at);
CREATE TABLE IF NOT EXISTS answer_evidence (
  answer_id TEXT NOT NULL, chunk_id TEXT NOT NULL, doc_id TEXT NOT NULL, content_hash TEXT,
  title TEXT, version TEXT, publish_date TEXT, effective_date TEXT, doc_status TEXT,
  PRIMARY KEY (answer_id, chunk_id));
CREATE INDEX IF NOT EXISTS answer_evidence_doc ON answer_evidence(doc_id);
"""


class CitedSource(BaseModel):
    chunk_id: str
    doc_id: str
    title: str = ""
    content_hash: str | None = None
    version: str | None = None
    publish_date: str | None = None
    effective_date: str | None = None
    doc_status: str | None = None


class AuditEntry(BaseModel):
    answer_id: str
    at: dt.datetime
    session_id: str | None
    question: str
    status: str
    cached: bool
    deadline_fallback: bool
    evidence: list[CitedSource] = Field(default_factory=list)
    stale: str = Field("", description="why the entry is stale, when it is")


class AuditLog:
    """Answers and their cited sources in ``<index>/server.db``."""

    def __init__(self, index: str | Path) -> None:
        self.db = ServerDB(index, _SCHEMA)
        self._docs: dict[str, Any] = {}
        self._docs_version: int | None = None
        self._docs_lock = threading.Lock()

    def record(self, answer: ServedAnswer, store: Any, data: str | None = None) -> None:
        """Store ``answer`` with the documents of the chunks it cites, as the index has them now;
        ``data``: its JSON when the caller has it already (the response is the same text)."""
        docs = self._documents(store, {c.doc_id for c in answer.citations})
        at = dt.datetime.now(dt.timezone.utc).isoformat()
        statements: list[tuple[str, tuple]] = [(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (answer.answer_id, at, answer.session_id, answer.question, answer.status,
             int(answer.cached), int(answer.deadline_fallback),
             answer.model_dump_json() if data is None else data))]
        for c in {c.chunk_id: c for c in answer.citations}.values():
            doc = docs.get(c.doc_id)
            if doc is None:
                continue  # removed while the answer was being written
            statements.append((
                "INSERT OR REPLACE INTO answer_evidence VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (answer.answer_id, c.chunk_id, c.doc_id, doc.content_hash, doc.meta.title,
                 doc.meta.version, _iso(doc.meta.publish_date), _iso(doc.meta.effective_date),
                 doc.meta.status)))
        self.db.executemany(statements)

    def _documents(self, store: Any, doc_ids: set[str]) -> dict[str, Any]:
        """Cited documents, remembered while the index version stays the same (chunks carry
        their document's version and dates, so the document is the source to record)."""
        version = store.version
        with self._docs_lock:
            if version != self._docs_version:
                self._docs.clear()
                self._docs_version = version
            missing = doc_ids - self._docs.keys()
        found = {d: store.get_document(d) for d in missing}
        with self._docs_lock:
            self._docs.update({d: doc for d, doc in found.items() if doc is not None})
            return {d: self._docs[d] for d in doc_ids if d in self._docs}

    def get(self, answer_id: str) -> ServedAnswer | None:
        rows = self.db.query("SELECT data FROM answers WHERE answer_id = ?", (answer_id,))
        return ServedAnswer.model_validate_json(rows[0][0]) if rows else None

    def for_session(self, session_id: str) -> list[ServedAnswer]:
        rows = self.db.query("SELECT data FROM answers WHERE session_id = ? ORDER BY at, rowid",
                             (session_id,))
        return [ServedAnswer.model_validate_json(r[0]) for r in rows]

    def entries(self, doc_id: str | None = None, limit: int = 1000) -> list[AuditEntry]:
        """Newest first; with ``doc_id`` only the answers that cited that document."""
        where, params = "", []
        if doc_id is not None:
            where = "WHERE answer_id IN (SELECT answer_id FROM answer_evidence WHERE doc_id = ?)"
            params.append(doc_id)
        rows = self.db.query(
            "SELECT answer_id, at, session_id, question, status, cached, deadline FROM answers "
            f"{where} ORDER BY at DESC, rowid DESC LIMIT ?", (*params, limit))
        return self._with_evidence(rows)

    def citing(self, doc_id: str) -> list[AuditEntry]:
        return self.entries(doc_id)

    def stale(self, store: Any) -> list[AuditEntry]:
        """Answers citing a document that has since been replaced by a re-ingest, marked
        superseded or repealed, or removed from the index."""
        out = []
        docs = {d.doc_id: d for d in store.documents()}
        for entry in self.entries(limit=100_000):
            reasons = []
            for src in entry.evidence:
                doc = docs.get(src.doc_id)
                if doc is None:
                    reasons.append(f"{src.doc_id} removed")
                elif src.content_hash and doc.content_hash != src.content_hash:
                    reasons.append(f"{src.doc_id} re-ingested with new content")
                elif doc.meta.status != "active" and doc.meta.status != src.doc_status:
                    reasons.append(f"{src.doc_id} now {doc.meta.status}")
            if reasons:
                out.append(entry.model_copy(update={"stale": "; ".join(dict.fromkeys(reasons))}))
        return out

    def _with_evidence(self, rows: list[tuple]) -> list[AuditEntry]:
        if not rows:
            return []
        ids = [r[0] for r in rows]
        cited: dict[str, list[CitedSource]] = {}
        for r in self.db.query(
                "SELECT answer_id, chunk_id, doc_id, content_hash, title, version, publish_date, "
                "effective_date, doc_status FROM answer_evidence WHERE answer_id IN "
                "(SELECT value FROM json_each(?))", (json.dumps(ids),)):
            cited.setdefault(r[0], []).append(CitedSource(
                chunk_id=r[1], doc_id=r[2], content_hash=r[3], title=r[4] or "", version=r[5],
                publish_date=r[6], effective_date=r[7], doc_status=r[8]))
        return [AuditEntry(answer_id=r[0], at=dt.datetime.fromisoformat(r[1]), session_id=r[2],
                           question=r[3], status=r[4], cached=bool(r[5]), deadline_fallback=bool(r[6]),
                           evidence=cited.get(r[0], [])) for r in rows]

    def close(self) -> None:
        self.db.close()


def _iso(d: dt.date | None) -> str | None:
    return d.isoformat() if d else None
