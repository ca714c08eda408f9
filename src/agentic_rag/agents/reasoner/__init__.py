"""The Reasoner: question + RouteDecision + Evidence -> a cited Answer.

- :mod:`~agentic_rag.agents.reasoner.core` — the plan of an answer and its steps (:class:`Reasoner`)
- :mod:`~agentic_rag.agents.reasoner.question` — what the question asks for (answer types)
- :mod:`~agentic_rag.agents.reasoner.scoring` — the one sentence evidence score and its signals
- :mod:`~agentic_rag.agents.reasoner.abstention` — when to abstain and what to say is missing
- :mod:`~agentic_rag.agents.reasoner.conflicts` — facts of a sentence, conflicts between them
- :mod:`~agentic_rag.agents.reasoner.arbitration` — which source wins a conflict, and the rule
- :mod:`~agentic_rag.agents.reasoner.compose` — answer text: templates, trimming, joining
- :mod:`~agentic_rag.agents.reasoner.factcheck` — the one check that a sentence is supported
- :mod:`~agentic_rag.agents.reasoner.constants` — the composition constants, documented in one place
"""

from agentic_rag.agents.reasoner.core import Reasoner

__all__ = ["Reasoner"]
