"""The answer cache: answers to questions asked outside a session, keyed by the normalized
question, the settings that shape an answer, and the index version. Any write to the index
(ingest, re-ingest, delete) bumps the version, so older entries stop matching and are dropped
at the next miss. Shared by every worker through ``<index>/server.db``."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from agentic_rag.state.db import ServerDB
from agentic_rag.types import Answer

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answer_cache (
  key TEXT PRIMARY KEY, index_version INTEGER NOT NULL, question TEXT NOT NULL,
  at TEXT NOT NULL, data TEXT NOT NULL);
"""

_TRAILING = re.compile(r"[\s?？!！。.,，;；:：]+$")


def normalize_question(question: str) -> str:
    """NFKC, case-folded, whitespace collapsed, trailing punctuation dropped:
    ``"住院报销比例是多少？"`` and ``"住院报销比例是多少 ?"`` share an entry."""
    text = unicodedata.normalize("NFKC", question).casefold()
    return _TRAILING.sub("", " ".join(text.split()))


def cache_key(question: str, settings: dict[str, Any], index_version: int) -> str:
    blob = json.dumps([normalize_question(question), settings, index_version], sort_keys=True,
                      ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class AnswerCache:
    def __init__(self, index: str | Path) -> None:
        self.db = ServerDB(index, _SCHEMA)

    def get(self, key: str, index_version: int) -> Answer | None:
        rows = self.db.query("SELECT data FROM answer_cache WHERE key = ? AND index_version = ?",
                             (key, index_version))
        if not rows:
            self.db.execute("DELETE FROM answer_cache WHERE index_version != ?", (index_version,))
            return None
        return Answer.model_validate_json(rows[0][0])

    def put(self, key: str, index_version: int, answer: Answer) -> None:
        self.db.execute(
            "INSERT OR REPLACE INTO answer_cache (key, index_version, question, at, data) "
            "VALUES (?, ?, ?, ?, ?)", (key, index_version, answer.question,
                                       dt.datetime.now(dt.timezone.utc).isoformat(),
                                       answer.model_dump_json()))

    def __len__(self) -> int:
        return self.db.query("SELECT count(*) FROM answer_cache")[0][0]

    def close(self) -> None:
        self.db.close()
