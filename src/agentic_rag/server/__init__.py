"""``arag serve``: the engine as an HTTP service (the ``server`` extra: FastAPI on uvicorn).

    from agentic_rag.server import create_app
    app = create_app(Settings.load(index=".arag"))
"""

from agentic_rag.server.app import create_app
from agentic_rag.server.service import Service

__all__ = ["Service", "create_app"]
