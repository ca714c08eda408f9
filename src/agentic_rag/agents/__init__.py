"""The three agents: Router -> RouteDecision -> Retriever -> [Evidence] -> Reasoner -> Answer.

Each reads only the typed contract the previous one produced (see :mod:`agentic_rag.types`):
:mod:`~agentic_rag.agents.router`, :mod:`~agentic_rag.agents.retriever`,
:mod:`~agentic_rag.agents.reasoner`. The vocabulary all three share (packaged and user tables) is
:mod:`~agentic_rag.agents.vocabulary`; the user's override rules are
:mod:`~agentic_rag.agents.overrides`; the intent tree and lexicon are
:mod:`~agentic_rag.agents.intents`. This package imports nothing itself, so that
:mod:`agentic_rag.config` can validate those tables without importing an agent.
"""
