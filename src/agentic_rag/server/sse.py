"""Server-sent events from a blocking run: the run works in a thread, its events cross into the
event loop through a queue, and the response yields each one as soon as it exists.

Frames go out unbuffered (``Cache-Control: no-cache``, ``X-Accel-Buffering: no`` for nginx), a
comment line keeps idle connections open every ``heartbeat_s``, and a client that goes away
sets ``cancel``, which stops the run at its next checkpoint.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no", "Connection": "keep-alive"}
MEDIA_TYPE = "text/event-stream"

_END = object()


def frame(data: Any, event: str | None = None) -> bytes:
    """One SSE frame; ``data`` is JSON-encoded unless it is already a string."""
    body = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"event: {event}\n" if event else ""
    return (head + "".join(f"data: {line}\n" for line in body.split("\n")) + "\n").encode("utf-8")


HEARTBEAT = b": heartbeat\n\n"


async def run_streaming(request: Request, work: Callable[[Callable[[Any], None], threading.Event], Any],
                        heartbeat_s: float) -> AsyncIterator[tuple[str, Any]]:
    """Run ``work(emit, cancel)`` in a thread; yield ``("item", x)`` for each ``emit(x)``,
    ``("heartbeat", None)`` while nothing happens, then ``("result", value)`` or
    ``("error", exception)``. Leaving the iterator early (the client disconnected) cancels."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    cancel = threading.Event()

    def emit(item: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, ("item", item))

    def target() -> None:
        try:
            out = ("result", work(emit, cancel))
        except BaseException as exc:  # handed to the response, which renders it
            out = ("error", exc)
        loop.call_soon_threadsafe(queue.put_nowait, out)

    thread = threading.Thread(target=target, name="arag-sse-run", daemon=True)
    thread.start()
    last = loop.time()
    try:
        while True:
            try:
                kind, value = await asyncio.wait_for(queue.get(), timeout=min(heartbeat_s, 0.5))
            except asyncio.TimeoutError:
                if await request.is_disconnected():
                    cancel.set()
                    return
                if loop.time() - last < heartbeat_s:
                    continue
                kind, value = "heartbeat", None
            last = loop.time()
            yield kind, value
            if kind in ("result", "error"):
                return
    finally:
        if thread.is_alive():
            cancel.set()

