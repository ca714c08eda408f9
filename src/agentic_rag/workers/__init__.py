"""Ingest and reasoning tasks on Celery workers (the ``workers`` extra): a RabbitMQ broker
(``workers.broker_url``), results in Redis (``workers.result_url``, else ``state.url``).

    arag worker                       # one worker process: both queues, one task at a time
    arag ingest --queue docs/ bulk.jsonl
    ARAG_SERVER__REASONER=queue arag serve

Two queues (names prefixed by ``workers.queue_prefix``): ``arag.ingest`` (a file, or up to ``workers.batch_records`` lines of a jsonl file,
per task: parse, chunk, write, embed) and ``arag.reason`` (question + route + evidence + trace
id -> the Reasoner's answer). Every task is acknowledged only after it finished
(``acks_late``), a worker takes one at a time (prefetch 1), and a task whose worker died is
redelivered; ingest is idempotent by content hash and chunk id, so a redelivered task writes
nothing twice. Workers run the ``solo`` pool: one process, one task; run more workers to
scale (a SIGKILL then takes exactly one task down, which the broker gives to another).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentic_rag.errors import ConfigError, MissingExtraError, QueueError

if TYPE_CHECKING:
    from celery import Celery

    from agentic_rag.config import Settings
    from agentic_rag.engine import Engine

INGEST_TASK = "arag.ingest"
REASON_TASK = "arag.reason"


def ingest_queue(settings: Settings) -> str:
    return f"{settings.workers.queue_prefix}.ingest"


def reason_queue(settings: Settings) -> str:
    return f"{settings.workers.queue_prefix}.reason"


def result_url(settings: Settings) -> str:
    url = settings.workers.result_url or settings.state.url
    if not url or not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError("the workers need a Redis for task results: set workers.result_url "
                          "(ARAG_WORKERS__RESULT_URL) or state.url to redis://host:6379/N")
    return url


def make_celery(settings: Settings, engine: Engine | None = None) -> Celery:
    """The Celery app of these settings, with the two tasks registered (a worker runs them with
    one :class:`~agentic_rag.engine.Engine` per process: ``engine``, or one built at its first task)."""
    try:
        from celery import Celery
    except ImportError as exc:
        raise MissingExtraError("the queue workers", "workers") from exc
    app = Celery("agentic_rag", broker=settings.workers.broker_url, backend=result_url(settings),
                 set_as_current=False)
    app.conf.update(
        task_acks_late=True, task_reject_on_worker_lost=True, worker_prefetch_multiplier=1,
        task_serializer="json", result_serializer="json", accept_content=["json"],
        task_default_queue=ingest_queue(settings), result_expires=86400, worker_hijack_root_logger=False,
        task_routes={INGEST_TASK: {"queue": ingest_queue(settings)},
                     REASON_TASK: {"queue": reason_queue(settings)}},
        broker_connection_timeout=5, broker_connection_retry_on_startup=False,
        broker_connection_max_retries=3, redis_socket_timeout=10, redis_socket_connect_timeout=5,
        worker_cancel_long_running_tasks_on_connection_loss=True)
    built: dict[str, Engine] = {"e": engine} if engine is not None else {}

    def the_engine() -> Engine:
        if "e" not in built:
            from agentic_rag.engine import Engine

            built["e"] = Engine(settings)
        return built["e"]

    @app.task(name=INGEST_TASK)
    def ingest(path: str, lines: list[list[Any]] | None = None) -> dict[str, Any]:
        part = None if lines is None else [(int(n), str(text).encode("utf-8")) for n, text in lines]
        report = the_engine().ingest_part(path, part)
        return report.model_dump(mode="json")

    @app.task(name=REASON_TASK)
    def reason(question: str, route: dict[str, Any], evidence: list[dict[str, Any]],
               trace_id: str) -> dict[str, Any]:
        from agentic_rag.types import Evidence, RouteDecision

        import os
        import socket

        e = the_engine()
        answer = e.reasoner.reason(question, RouteDecision.model_validate(route),
                                   [Evidence.model_validate(x) for x in evidence])
        return {"answer": answer.model_dump(mode="json"), "trace_id": trace_id,
                "worker": f"{socket.gethostname()}:{os.getpid()}"}

    return app


def check_broker(app: Celery, settings: Settings) -> None:
    """Reach the broker and the result Redis now: :class:`QueueError` in one line if either is down."""
    from agentic_rag.state.redis import safe_url

    broker = safe_url(settings.workers.broker_url)
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=5)
    except Exception as exc:  # kombu/amqp raise many kinds for "not reachable"
        raise QueueError(f"the message broker at {broker} is not reachable: "
                         f"{' '.join(str(exc).split()) or type(exc).__name__}") from exc
    try:
        app.backend.client.ping()
    except Exception as exc:
        raise QueueError(f"the result store at {safe_url(result_url(settings))} is not reachable: "
                         f"{' '.join(str(exc).split()) or type(exc).__name__}") from exc


def run_worker(settings: Settings, queues: list[str], name: str | None = None) -> None:
    """Block running one worker process (``arag worker``)."""
    import os
    import socket

    from agentic_rag.engine import Engine

    engine = Engine(settings)
    app = make_celery(settings, engine)
    check_broker(app, settings)
    # the agents are built before the first task, so a queued reasoning step does not pay for
    # loading the vocabulary inside a request's deadline (the solo pool runs tasks in this process)
    engine.reasoner, engine.router  # noqa: B018
    argv = ["worker", "--pool=solo", "--concurrency=1", "--loglevel=WARNING", "-Q", ",".join(queues),
            "-n", name or f"arag-{os.getpid()}@{socket.gethostname()}",
            "--without-gossip", "--without-mingle"]
    Path(settings.index).mkdir(parents=True, exist_ok=True)
    app.worker_main(argv=argv)


__all__ = ["check_broker", "ingest_queue", "make_celery", "reason_queue", "result_url", "run_worker"]
