"""agentic-rag: agentic retrieval-augmented question answering over your own documents.

Every answer sentence cites the clause it stands on, conflicting sources are arbitrated with the
deciding rule named, and the engine abstains, naming what is missing, when the documents are silent.

    >>> from agentic_rag import Engine, Settings
    >>> engine = Engine(Settings.load(index=".arag"))
    >>> engine.ingest(["examples/docs"])            # doctest: +SKIP
    >>> engine.ask("住院报销比例是多少？").text      # doctest: +SKIP
"""

from agentic_rag.config import Settings
from agentic_rag.errors import AragError, ConfigError
from agentic_rag.types import Answer, Chunk, Document, Evidence, RouteDecision

__version__ = "0.1.0"

__all__ = ["Answer", "AragError", "Chunk", "ConfigError", "Document", "Engine", "Evidence",
           "RouteDecision", "Settings", "__version__"]


def __getattr__(name: str):  # Engine pulls in the agents; import it only when asked for
    if name == "Engine":
        from agentic_rag.engine import Engine

        return Engine
    raise AttributeError(name)
