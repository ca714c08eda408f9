"""The agent runtime: modes (pipeline, react, plan), tools, memory, sessions and the trace."""

from agentic_rag.runtime.loop import (MODES, AgentRuntime, Limits, Mode, check_question,
                                      split_question)
from agentic_rag.runtime.memory import (Conversation, FactCard, RetrievalState, SessionState,
                                        SessionStore)
from agentic_rag.runtime.session import Session
from agentic_rag.runtime.tools import (Observation, StructuredQueries, Tool, ToolRegistry,
                                       builtin_tools)
from agentic_rag.runtime.trace import Tracer

__all__ = ["MODES", "AgentRuntime", "Conversation", "FactCard", "Limits", "Mode", "Observation",
           "RetrievalState", "Session", "SessionState", "SessionStore", "StructuredQueries", "Tool",
           "ToolRegistry", "Tracer", "builtin_tools", "check_question", "split_question"]
