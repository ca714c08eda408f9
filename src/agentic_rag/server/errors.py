"""How the service's exceptions become HTTP errors: ``(status, {"error": {"code", "message"}})``.
An unexpected exception is logged with its traceback and answered without it."""

from __future__ import annotations

import logging
from typing import Any

from agentic_rag.errors import AragError, ConfigError, NotFoundError
from agentic_rag.server.service import InputError
from agentic_rag.state.runs import SessionBusy

log = logging.getLogger("agentic_rag.server")


def error_payload(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """The status and body for an exception raised by the service."""
    if isinstance(exc, InputError):
        status, code = exc.status, exc.code
    elif isinstance(exc, NotFoundError):
        status, code = 404, "not_found"
    elif isinstance(exc, SessionBusy):
        status, code = 409, "session_busy"
        return status, {"error": {"code": code, "message": f"session {exc} is answering another "
                                                           "question; abort it or wait"}}
    elif isinstance(exc, ConfigError | ValueError):
        status, code = 422, "invalid_request"
    elif isinstance(exc, AragError):
        status, code = 503, type(exc).__name__.removesuffix("Error").lower() + "_unavailable"
    else:
        log.error("unexpected error", exc_info=exc)
        return 500, {"error": {"code": "internal", "message": f"internal error ({type(exc).__name__}); "
                                                              "see the server log"}}
    return status, {"error": {"code": code, "message": str(exc)}}
