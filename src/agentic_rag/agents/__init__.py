"""The three agents: Router -> RouteDecision -> Retriever -> [Evidence] -> Reasoner -> Answer.

Each reads only the typed contract the previous one produced (see :mod:`agentic_rag.types`).
The Reasoner is imported from :mod:`agentic_rag.agents.reasoner` directly.
"""

from agentic_rag.agents.retriever import Leg, Retriever
from agentic_rag.agents.router import Router

__all__ = ["Leg", "Retriever", "Router"]
