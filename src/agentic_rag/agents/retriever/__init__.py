"""The Retriever: RouteDecision -> ranked Evidence.

- :mod:`~agentic_rag.agents.retriever.core` — rounds of queries, graph expansion, versions and
  counterparts, ranking and de-duplication (:class:`Retriever`)
- :mod:`~agentic_rag.agents.retriever.legs` — the search legs (BM25, vectors)
- :mod:`~agentic_rag.agents.retriever.fusion` — fusing the legs' scores, with all weights
- :mod:`~agentic_rag.agents.retriever.expansion` — query expansion with the synonym table
- :mod:`~agentic_rag.agents.retriever.multihop` — when a question needs another hop, next-hop queries
- :mod:`~agentic_rag.agents.retriever.constants` — the ranking constants, documented in one place
"""

from agentic_rag.agents.retriever.core import Retriever
from agentic_rag.agents.retriever.expansion import expand_query
from agentic_rag.agents.retriever.fusion import fuse_rrf, fuse_weighted
from agentic_rag.agents.retriever.legs import BM25Leg, Leg, LegQuery, VectorLeg

__all__ = ["BM25Leg", "Leg", "LegQuery", "Retriever", "VectorLeg", "expand_query", "fuse_rrf",
           "fuse_weighted"]
