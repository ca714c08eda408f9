"""``server.reasoner = "queue"``: the Reasoner behind the message queue.

:class:`QueuedReasoner` stands where the runtime expects a reasoner
(``reason(question, route, evidence) -> Answer``): the API process routes and retrieves, and
each reasoning step goes to an ``arag worker`` as one message (question, route, evidence, trace
id; the task id is the trace id). It waits at most ``timeout_s``; the task expires then too, so
a worker that comes back later does not answer a question nobody waits for. The service's
deadline (:func:`~agentic_rag.server.deadline.answer_within`) gives the deterministic answer,
made in the API process from the same index, when no worker answers in time. Everything else the
runtime asks of a reasoner (``verify``, ...) is the local one's.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from agentic_rag.errors import QueueError
from agentic_rag.types import Answer, Evidence, RouteDecision, TraceEvent
from agentic_rag.workers import REASON_TASK


class QueuedReasoner:
    def __init__(self, local: Any, app: Any, queue: str, timeout_s: float) -> None:
        self.local = local
        self.app = app
        self.queue = queue
        self.timeout_s = timeout_s

    def reason(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> Answer:
        trace_id = uuid.uuid4().hex
        started = time.perf_counter()
        try:
            result = self.app.send_task(
                REASON_TASK, task_id=trace_id, queue=self.queue, expires=self.timeout_s, retry=False,
                kwargs={"question": question, "route": route.model_dump(mode="json"),
                        "evidence": [e.model_dump(mode="json") for e in evidence], "trace_id": trace_id})
            data = self._wait(result.id, started + self.timeout_s)
        except Exception as exc:  # broker down, timeout, a failed task: the deadline decides
            raise QueueError(f"queued reasoning {trace_id} got no answer: "
                             f"{' '.join(str(exc).split()) or type(exc).__name__}") from exc
        answer = Answer.model_validate(data["answer"])
        # which worker reasoned, under which trace id (the task id): the step the user sees
        sent = TraceEvent(kind="queue", tool="reasoner", args={"trace_id": trace_id, "worker": data["worker"]},
                          duration_ms=round((time.perf_counter() - started) * 1000, 1),
                          detail=f"reasoned by worker {data['worker']}")
        return answer.model_copy(update={"trace": [sent, *answer.trace]})

    def _wait(self, task_id: str, until: float) -> Any:
        # plain reads of the result key (thread-safe through redis-py's pool; Celery's
        # AsyncResult.get shares one pub/sub connection between the request threads)
        while True:
            meta = self.app.backend.get_task_meta(task_id, cache=False)
            if meta.get("status") == "SUCCESS":
                return meta["result"]
            if meta.get("status") in ("FAILURE", "REVOKED"):
                raise RuntimeError(f"the task ended {meta['status']}: {meta.get('result')}")
            if time.perf_counter() >= until:
                raise TimeoutError(f"no worker answered within {self.timeout_s:g} s")
            time.sleep(0.05)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.local, name)
