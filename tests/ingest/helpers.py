"""Shared helpers for the ingest tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_rag.ingest.chunking import chunk_document
from agentic_rag.types import Chunk, DocMeta, Document

if TYPE_CHECKING:
    from agentic_rag import Engine


def doc(text: str, doc_id: str = "d1", title: str = "测试办法") -> Document:
    return Document(doc_id=doc_id, source=f"{doc_id}.txt", content_hash="h", text=text,
                    meta=DocMeta(title=title))


def chunks(text: str, max_chars: int = 500, **kw) -> list[Chunk]:
    return chunk_document(doc(text, **kw), max_chars)


def by_clause(items: list[Chunk]) -> dict[str, Chunk]:
    """First chunk per clause label."""
    out: dict[str, Chunk] = {}
    for c in items:
        if c.clause is not None:
            out.setdefault(c.clause, c)
    return out


def engine_over(folder: Path, files: dict[str, str], **settings: Any) -> Engine:
    """An engine (no embedder) over ``files`` (name -> text) written into ``folder``, ingested;
    its index lives in ``folder/index``. ``settings`` are further sections (``retrieval={"k": 4}``)."""
    from agentic_rag import Engine, Settings

    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    engine = Engine(Settings.load(index=folder / "index", embedder={"provider": "none"}, **settings))
    engine.ingest([p for p in folder.iterdir() if p.is_file()])
    return engine


def answer_over(folder: Path, files: dict[str, str], question: str, **settings: Any) -> Any:
    """The answer to ``question`` of an :func:`engine_over` the same files, closed after asking."""
    with engine_over(folder, files, **settings) as engine:
        return engine.ask(question)
