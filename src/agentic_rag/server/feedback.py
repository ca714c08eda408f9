"""Feedback on answers (👍/👎, a reason, the chunks that were irrelevant), stored beside the
audit entry of the answer it rates, exportable with ``since``."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from agentic_rag.server.schemas import FeedbackRecord, FeedbackRequest
from agentic_rag.state.db import ServerDB

_SCHEMA = """
CREATE TABLE IF NOT EXISTS feedback (
  feedback_id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, answer_id TEXT NOT NULL,
  question TEXT NOT NULL, rating TEXT NOT NULL, reason TEXT, irrelevant TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS feedback_at ON feedback(at);
"""


class FeedbackLog:
    def __init__(self, index: str | Path) -> None:
        self.db = ServerDB(index, _SCHEMA)

    def add(self, item: FeedbackRequest, question: str) -> FeedbackRecord:
        at = dt.datetime.now(dt.timezone.utc)
        feedback_id = self.db.insert(
            "INSERT INTO feedback (at, answer_id, question, rating, reason, irrelevant) "
            "VALUES (?, ?, ?, ?, ?, ?)", (at.isoformat(), item.answer_id, question, item.rating,
                                          item.reason, json.dumps(item.irrelevant_chunk_ids)))
        return FeedbackRecord(**item.model_dump(), feedback_id=feedback_id, at=at, question=question)

    def since(self, since: dt.datetime | None = None, limit: int = 10_000) -> list[FeedbackRecord]:
        """Oldest first, strictly after ``since`` when given."""
        if since is not None and since.tzinfo is None:
            since = since.replace(tzinfo=dt.timezone.utc)
        rows = self.db.query(
            "SELECT feedback_id, at, answer_id, question, rating, reason, irrelevant FROM feedback "
            "WHERE at > ? ORDER BY at, feedback_id LIMIT ?",
            (since.astimezone(dt.timezone.utc).isoformat() if since else "", limit))
        return [FeedbackRecord(feedback_id=r[0], at=dt.datetime.fromisoformat(r[1]), answer_id=r[2],
                               question=r[3], rating=r[4], reason=r[5],
                               irrelevant_chunk_ids=json.loads(r[6])) for r in rows]

    def close(self) -> None:
        self.db.close()
