"""The one exception hierarchy of agentic-rag.

Every error a user can cause or meet derives from :class:`AragError`, so callers can catch one
type. Vendor errors (sqlite3, httpx, llama-cpp, PyMuPDF) are wrapped at the boundary with
``raise ... from exc`` so the original stays visible in the traceback.

- :class:`ConfigError` — a bad setting, flag, or config file (names the key and the value).
- :class:`IngestError` — one input file could not be read or parsed (names the file and why).
- :class:`StoreError` — the index could not be opened, read, or written.
- :class:`NotFoundError` — a document, chunk, dataset or session id that does not exist.
- :class:`LLMError` — an LLM endpoint failed (timeout, unreachable, HTTP error, garbage output).
- :class:`EmbedderError` — an embedding provider failed.
- :class:`ToolError` — an agent tool was misused or failed.
- :class:`EvalError` — a benchmark set or questions file is missing or malformed.
- :class:`StateError` — the shared state (Redis: sessions, abort flags, cache) is unreachable.
- :class:`QueueError` — the message broker or the workers' result store is unreachable.
"""

from __future__ import annotations

import re
from typing import Any


class AragError(Exception):
    """Base class of every error raised on purpose by agentic-rag."""


class ConfigError(AragError, ValueError):
    """A setting, flag, or configuration file is invalid."""


class IngestError(AragError):
    """One input could not be ingested; ``path`` names it and the message says why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class StoreError(AragError):
    """The index could not be opened, read, or written."""


class NotFoundError(AragError, KeyError):
    """A requested id (document, chunk, dataset, session) does not exist."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "not found"


class LLMError(AragError):
    """An LLM call failed: unreachable endpoint, timeout, HTTP error, or unusable output."""


class EmbedderError(AragError):
    """An embedding provider failed or is not installed."""


class ToolError(AragError):
    """An agent tool was declared wrongly or failed outside the model's control."""


class EvalError(AragError):
    """A benchmark set, questions file, or run folder is missing or malformed."""


class StateError(AragError):
    """The shared state (sessions, abort flags, answer cache, rate limits) could not be reached."""


class QueueError(AragError):
    """The message broker (or the result store of the workers) could not be reached."""


class MissingExtraError(AragError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, what: str, extra: str) -> None:
        super().__init__(f"{what} is not installed: pip install 'agentic-rag[{extra}]'")
        self.extra = extra


def describe_validation(exc: Any, what: str) -> str:
    """One line for a pydantic ``ValidationError``: the first bad field, its value and the
    problem (pydantic's own text runs over several lines and links to its docs). ``what``
    starts the line, e.g. ``invalid setting`` or ``meta field``.

        >>> from pydantic import BaseModel
        >>> class M(BaseModel):
        ...     n: int
        >>> try:
        ...     M(n="x")
        ... except Exception as exc:
        ...     print(describe_validation(exc, "invalid setting"))
        invalid setting n='x': Input should be a valid integer, unable to parse string as an integer
    """
    errors = exc.errors()
    if not errors:
        return f"{what}: {' '.join(str(exc).split())}"
    err = errors[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    value = err.get("input")
    # a URL's password (user:secret@host) never reaches a message
    shown = re.sub(r"(://[^:/@\s]+:)[^@\s]*@", r"\1***@", repr(value))
    if len(shown) > 80:
        shown = shown[:79] + "…"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    head = f"{what} {loc}={shown}" if loc else f"{what} {shown}"
    return f"{head}: {err.get('msg', 'invalid')}{more}"
