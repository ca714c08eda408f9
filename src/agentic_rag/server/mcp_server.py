"""``arag mcp``: the index as a Model Context Protocol server over stdio (the official ``mcp``
SDK), for IDE agents and desktop assistants. Three tools:

- ``search(query, k)`` — the Retriever's ranked evidence (chunk id, title, clause, text, score);
- ``ask(question)`` — the cited answer (text with [n] markers, status, citations, gaps, conflicts);
- ``get_document(doc_id)`` — metadata, full text and each clause's span.

They call the same :class:`~agentic_rag.server.service.Service` as the HTTP server (so answers
go through the deadline, the cache and the audit log). Nothing but the protocol goes to stdout.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from agentic_rag.config import Settings
from agentic_rag.errors import AragError
from agentic_rag.server.schemas import AskRequest
from agentic_rag.server.service import Service


def build(service: Service) -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    def told(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        """The project's errors reach the model as the tool's error message (a bad id, an empty
        question); anything else stays a crash the SDK logs."""

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
            try:
                return fn(*args, **kwargs)
            except (AragError, ValueError) as exc:
                raise ToolError(str(exc)) from exc

        return wrapper

    server = MCPServer(name="agentic-rag", version="0.1.0", log_level="WARNING",
                       instructions="Search and ask over the user's indexed documents. Answers cite "
                                    "the clause behind each sentence and say what was not found.")

    @server.tool(description="Ranked evidence chunks for a query (the Retriever agent).")
    @told
    def search(query: str, k: int = 8) -> dict[str, Any]:
        route, evidence = service.retrieve(query, None, max(1, min(k, 50)))
        return {"query": route.query, "results": [
            {"rank": e.rank, "chunk_id": e.chunk_id, "doc_id": e.chunk.doc_id, "title": e.chunk.title,
             "clause": e.chunk.clause, "text": e.chunk.text, "score": round(e.score, 4)}
            for e in evidence]}

    @server.tool(description="A cited answer from the documents; abstains and names what is "
                             "missing when they do not say.")
    @told
    def ask(question: str) -> dict[str, Any]:
        a = service.ask(AskRequest(question=question))
        return {"answer_id": a.answer_id, "text": a.text, "status": a.status,
                "citations": [{"index": i, **c.model_dump(mode="json")} for i, c in enumerate(a.citations, 1)],
                "conflicts": [c.model_dump(mode="json") for c in a.conflicts], "gaps": a.gaps}

    @server.tool(description="One document: metadata, full text and the char span of each clause.")
    @told
    def get_document(doc_id: str) -> dict[str, Any]:
        return service.document(doc_id).model_dump(mode="json")

    return server


def serve_stdio(settings: Settings) -> None:
    service = Service(settings)
    try:
        service.warm_up()
        build(service).run("stdio")
    finally:
        service.close()
