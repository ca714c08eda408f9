"""The OpenAI-compatible chat endpoint's translation: messages in, a cited answer out.

The last user message is the question; earlier user/assistant messages become the conversation
(so follow-ups resolve); system messages are ignored (the engine answers from evidence). The
answer text keeps its ``[n]`` markers; ``citations`` (chunk id, title, clause, quote, span) is
an extra field of the response or of the stream's final chunk, which the official client keeps
(``completion.model_extra["citations"]``). No custom SSE event names: the client rejects them.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from starlette.requests import Request

from agentic_rag.server import sse
from agentic_rag.server.errors import error_payload
from agentic_rag.server.schemas import (
    ChatChoice,
    ChatChoiceMessage,
    ChatCompletion,
    ChatMessage,
    ChatUsage,
    ServedAnswer,
)

#: stream the text in pieces ending at sentence punctuation (or every 60 characters)
_PIECE = re.compile(r".{1,60}?(?:[。！？；.!?;]\s*|$)|.{1,60}", re.S)


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(str(part.get("text", "")) for part in content if part.get("type", "text") == "text")


def split_messages(messages: Sequence[ChatMessage]) -> tuple[str, list[tuple[str, str]]]:
    """``(question, [(role, content), ...])`` from an OpenAI message list."""
    turns = [(m.role, _text(m.content)) for m in messages if m.role in ("user", "assistant")]
    while turns and turns[-1][0] != "user":
        turns.pop()
    if not turns:
        return "", []
    return turns[-1][1], turns[:-1]


def _citations(answer: ServedAnswer) -> list[dict[str, Any]]:
    return [{"index": i, **c.model_dump(mode="json")} for i, c in enumerate(answer.citations, 1)]


def _usage(answer: ServedAnswer) -> ChatUsage:
    u = answer.usage
    return ChatUsage(prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens,
                     total_tokens=u.prompt_tokens + u.completion_tokens)


def chat_completion(answer: ServedAnswer, model: str) -> ChatCompletion:
    return ChatCompletion(id=f"chatcmpl-{answer.answer_id}", created=int(time.time()), model=model,
                          choices=[ChatChoice(message=ChatChoiceMessage(content=answer.text))],
                          usage=_usage(answer), citations=_citations(answer),
                          answer_id=answer.answer_id, status=answer.status)


def _chunk(cid: str, created: int, model: str, delta: dict[str, Any],
           finish: str | None = None, **extra: Any) -> bytes:
    return sse.frame({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra})


async def chat_stream(request: Request, work: Callable[[Callable[[Any], None], threading.Event], Any],
                      model: str, heartbeat_s: float) -> AsyncIterator[bytes]:
    """The role first (a client sees the stream open at once), heartbeats while the agents work,
    the answer text in sentence pieces, a final chunk with ``finish_reason`` and the citations,
    then ``[DONE]``."""
    created = int(time.time())
    cid = f"chatcmpl-{created}"
    yield _chunk(cid, created, model, {"role": "assistant", "content": ""})
    async for kind, value in sse.run_streaming(request, work, heartbeat_s):
        if kind == "heartbeat":
            yield sse.HEARTBEAT
        elif kind == "result":
            answer: ServedAnswer = value
            for piece in _PIECE.findall(answer.text):
                if piece:
                    yield _chunk(cid, created, model, {"content": piece})
            yield _chunk(cid, created, model, {}, "stop", citations=_citations(answer),
                         answer_id=answer.answer_id, status=answer.status,
                         usage=_usage(answer).model_dump())
        elif kind == "error":
            yield sse.frame(error_payload(value)[1])
    yield b"data: [DONE]\n\n"
