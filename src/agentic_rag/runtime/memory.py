"""Session memory: the conversation kept apart from the retrieval state, both serializable.

- :class:`Conversation` — the last ``window`` turns verbatim plus a running summary of older ones
  (folded by the LLM when one is available, by a bounded extract otherwise). It keeps the dialogue
  coherent; it never holds retrieved passages.
- :class:`RetrievalState` — per question: queries run (with what they returned, so a repeated
  query can be blocked and answered with its old result), documents seen, the evidence, and the
  fact cards: confirmed facts (each with its chunk ids) and open gaps. A new question starts a new
  one, so passages from an earlier task never pose as context for the next.
- :class:`SessionStore` — ``sessions`` table in SQLite (``<index>/sessions.db``), one JSON row per
  session, so ``arag chat`` and the library can continue where they stopped.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
import threading
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from agentic_rag.errors import NotFoundError, StoreError
from agentic_rag.types import Answer, Evidence

_MAX_FACTS = 20
_SUMMARY_CHARS = 800


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str
    at: dt.datetime = Field(default_factory=_now)


class Conversation(BaseModel):
    """Sliding window of turns plus a running summary of what fell out of it."""

    turns: list[Turn] = Field(default_factory=list)
    summary: str = ""
    window: int = Field(3, ge=1, le=20, description="question/answer pairs kept verbatim")

    def add(self, role: Literal["user", "assistant"], content: str) -> list[Turn]:
        """Append a turn; returns the turns that just fell out of the window (to be summarized)."""
        self.turns.append(Turn(role=role, content=content))
        overflow = len(self.turns) - 2 * self.window
        if overflow <= 0:
            return []
        dropped, self.turns = self.turns[:overflow], self.turns[overflow:]
        return dropped

    def fold(self, dropped: list[Turn], summary: str | None = None) -> None:
        """Fold dropped turns into the summary: the LLM's ``summary`` when given, else a bounded
        extract (first line of each turn) that keeps the newest material."""
        if summary is not None:
            self.summary = summary[:_SUMMARY_CHARS]
            return
        extract = " | ".join(f"{t.role[0].upper()}: {t.content.splitlines()[0][:120]}"
                             for t in dropped if t.content)
        merged = f"{self.summary} | {extract}" if self.summary else extract
        self.summary = merged[-_SUMMARY_CHARS:]

    def render(self) -> str:
        lines = [f"(earlier) {self.summary}"] if self.summary else []
        lines += [f"{t.role}: {t.content[:300]}" for t in self.turns]
        return "\n".join(lines)

    def last_user(self) -> str | None:
        for t in reversed(self.turns):
            if t.role == "user":
                return t.content
        return None


#: reciprocal-rank constant for merging several searches (as in RRF)
_RRF_K = 60


class FactCard(BaseModel):
    """A confirmed fact and the chunks that confirm it."""

    text: str
    chunk_ids: list[str] = Field(default_factory=list)


class QueryRecord(BaseModel):
    query: str
    tool: str
    result_ids: list[str] = Field(default_factory=list)
    summary: str = ""  # what it returned, shown again if the model repeats the query
    round: int = 1


class RetrievalState(BaseModel):
    """What one question's retrieval has done so far (the agent's working memory)."""

    queries: dict[str, QueryRecord] = Field(default_factory=dict)  # key: normalized query
    docs_seen: list[str] = Field(default_factory=list)
    evidence: dict[str, Evidence] = Field(default_factory=dict)  # chunk id -> best evidence
    fused: dict[str, float] = Field(default_factory=dict)  # chunk id -> reciprocal-rank sum
    facts: list[FactCard] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    rounds: int = 0

    def add_evidence(self, items: list[Evidence], round_no: int) -> list[str]:
        """Merge one search's results, given best first; returns the new chunk ids.

        Searches are merged by reciprocal rank (each result adds ``1/(60 + rank)``), not by raw
        score: each search normalizes its own scores, so comparing them across searches would let
        a weak side query push the main search's evidence out of the top k."""
        new = []
        for pos, ev in enumerate(items, 1):
            self.fused[ev.chunk_id] = self.fused.get(ev.chunk_id, 0.0) + 1.0 / (_RRF_K + pos)
            old = self.evidence.get(ev.chunk_id)
            if old is None:
                # evidence is never changed in place: one found in the round it says is kept as it is
                self.evidence[ev.chunk_id] = ev if ev.round == round_no else ev.model_copy(update={"round": round_no})
                new.append(ev.chunk_id)
                if ev.chunk.doc_id not in self.docs_seen:
                    self.docs_seen.append(ev.chunk.doc_id)
            elif ev.score > old.score:
                self.evidence[ev.chunk_id] = ev.model_copy(update={"round": old.round})
        return new

    def ranked(self, k: int | None = None) -> list[Evidence]:
        """Evidence best first by fused rank (ties keep discovery order), re-ranked 1..n."""
        order = {cid: i for i, cid in enumerate(self.evidence)}
        items = sorted(self.evidence.values(),
                       key=lambda e: (-self.fused.get(e.chunk_id, 0.0), order[e.chunk_id]))
        if k is not None:
            items = items[:k]
        # evidence is never changed in place, so one already at its rank is handed out as it is
        return [e if e.rank == i else e.model_copy(update={"rank": i}) for i, e in enumerate(items, 1)]

    def add_fact(self, text: str, chunk_ids: list[str]) -> None:
        known = {f.text for f in self.facts}
        ids = [c for c in chunk_ids if c in self.evidence]
        if text and ids and text not in known and len(self.facts) < _MAX_FACTS:
            self.facts.append(FactCard(text=text[:200], chunk_ids=ids))

    def set_gap(self, gap: str) -> None:
        if gap and gap not in self.gaps:
            self.gaps.append(gap[:120])

    def close_gap(self, gap: str) -> None:
        self.gaps = [g for g in self.gaps if g != gap]


SessionStatus = Literal["idle", "running", "answered", "aborted", "failed"]


class SessionState(BaseModel):
    """Everything a session needs to continue: serializable, no live objects."""

    session_id: str = Field(default_factory=lambda: os.urandom(6).hex())  # uuid4().hex[:12]'s 48 random bits
    created: dt.datetime = Field(default_factory=_now)
    updated: dt.datetime = Field(default_factory=_now)
    status: SessionStatus = "idle"
    conversation: Conversation = Field(default_factory=Conversation)
    retrieval: RetrievalState = Field(default_factory=RetrievalState)
    #: confirmed facts from earlier questions of this session (background, never evidence)
    known_facts: list[FactCard] = Field(default_factory=list)
    answers: list[Answer] = Field(default_factory=list)  # last few answers, newest last

    def start_question(self) -> None:
        """A new question gets a fresh retrieval state; its predecessor's facts become background."""
        for fact in self.retrieval.facts:
            if fact.text not in {f.text for f in self.known_facts}:
                self.known_facts.append(fact)
        self.known_facts = self.known_facts[-_MAX_FACTS:]
        self.retrieval = RetrievalState()


class SessionStore:
    """Sessions persisted as JSON rows in a SQLite ``sessions`` table (``<index>/sessions.db``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, "
                               "updated TEXT NOT NULL, status TEXT NOT NULL, data TEXT NOT NULL)")
            self._conn.commit()
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the sessions table: {exc}") from exc
        self._lock = threading.Lock()

    @classmethod
    def for_index(cls, index: str | Path) -> "SessionStore":
        return cls(Path(index) / "sessions.db")

    def save(self, state: SessionState) -> None:
        state.updated = _now()
        data = state.model_dump_json()
        with self._lock:
            try:
                self._conn.execute(
                    "INSERT INTO sessions (id, updated, status, data) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(id) DO UPDATE SET updated=excluded.updated, status=excluded.status, "
                    "data=excluded.data", (state.session_id, state.updated.isoformat(), state.status, data))
                self._conn.commit()
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: cannot save session {state.session_id}: {exc}") from exc

    def load(self, session_id: str) -> SessionState:
        with self._lock:
            row = self._conn.execute("SELECT data FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no session {session_id!r} in {self.path}")
        try:
            return SessionState.model_validate_json(row[0])
        except ValidationError as exc:
            raise StoreError(f"{self.path}: session {session_id} is unreadable: {exc}") from exc

    def list(self) -> list[tuple[str, str, str]]:
        """(session id, last update, status), newest first."""
        with self._lock:
            return [tuple(r) for r in self._conn.execute(
                "SELECT id, updated, status FROM sessions ORDER BY updated DESC")]

    def delete(self, session_id: str) -> bool:
        with self._lock:
            cur = self._conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self._conn.commit()
        return cur.rowcount > 0

    def close(self) -> None:
        with self._lock:
            self._conn.close()
