"""``arag ingest --queue``: the files split into tasks for the workers, then their reports merged.

A file is one task; a jsonl file is cut into tasks of ``workers.batch_records`` lines (and at
about 1 MB), each carrying its lines, so workers need no access to the bulk file, only to the
index (and, for other files, to the path, which is sent absolute). Tasks are sent while the file
is read; the results come back through the result Redis and are merged in input order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentic_rag.config import Settings
from agentic_rag.errors import IngestError, QueueError
from agentic_rag.ingest.pipeline import (FileResult, IngestReport, _open_lines, _suffix,
                                         expand_paths)
from agentic_rag.workers import INGEST_TASK, check_broker, ingest_queue, make_celery

Progress = Callable[[int, int], None]
_TASK_BYTES = 1 << 20


def _tasks(files: Sequence[Path], settings: Settings, report: IngestReport
           ) -> Iterator[tuple[dict[str, Any], int, str]]:
    """(task kwargs, documents in it, what it holds) per task."""
    per_task = settings.workers.batch_records
    for path in files:
        if _suffix(path) != ".jsonl":
            yield {"path": str(path.resolve())}, 1, str(path)
            continue
        lines: list[list[Any]] = []
        size = 0
        try:
            for lineno, raw in enumerate(_open_lines(path), start=1):
                if not raw.strip():
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    report.files.append(FileResult(path=f"{path}:{lineno}", status="failed",
                                                   reason=f"invalid JSON on line {lineno}: not UTF-8"))
                    continue
                lines.append([lineno, text])
                size += len(raw)
                if len(lines) >= per_task or size >= _TASK_BYTES:
                    yield {"path": str(path), "lines": lines}, len(lines), f"{path}:{lines[0][0]}-{lineno}"
                    lines, size = [], 0
        except IngestError as exc:  # a corrupt .gz: what was read before is queued
            report.files.append(FileResult(path=str(path), status="failed", reason=exc.reason))
        if lines:
            yield {"path": str(path), "lines": lines}, len(lines), f"{path}:{lines[0][0]}-{lines[-1][0]}"


def queue_ingest(settings: Settings, paths: Sequence[str | Path], progress: Progress | None = None,
                 notice: Callable[[str], None] | None = None) -> IngestReport:
    """Ingest ``paths`` through the workers; :class:`QueueError` when the broker or the result
    store cannot be reached (before anything is sent, or naming how much was sent when the
    broker goes away mid-way: sent tasks complete, and running the command again is safe)."""
    import time

    started = time.perf_counter()
    app = make_celery(settings)
    check_broker(app, settings)
    files, report = expand_paths(paths)
    queue = ingest_queue(settings)
    if notice is not None and not _consumers(app, queue):
        notice(f"no worker is consuming {queue} yet: start one with `arag worker` (waiting)")
    ids: list[str] = []
    units: dict[str, tuple[int, str]] = {}
    total = done = 0
    with app.producer_or_acquire() as producer:
        for kwargs, n, what in _tasks(files, settings, report):
            try:
                result = app.send_task(INGEST_TASK, kwargs=kwargs, queue=queue, producer=producer,
                                       retry=False)
            except Exception as exc:
                raise QueueError(f"the broker went away after {len(ids)} tasks ({total} documents) "
                                 f"were queued: {' '.join(str(exc).split())}; the queued ones complete, "
                                 "and running the same command again writes nothing twice") from exc
            ids.append(result.id)
            units[result.id] = (n, what)
            total += n
    if progress is not None:
        progress(0, total)
    results: dict[str, dict[str, Any]] = {}
    try:
        for task_id, meta in app.backend.get_many(set(ids), timeout=settings.workers.ingest_timeout_s,
                                                  interval=0.3):
            results[task_id] = meta
            done += units[task_id][0]
            if progress is not None:
                progress(done, total)
    except TimeoutError as exc:
        raise QueueError(f"{len(ids) - len(results)} of {len(ids)} ingest tasks did not finish within "
                         f"workers.ingest_timeout_s = {settings.workers.ingest_timeout_s:g} s; are "
                         "workers running (`arag worker`)? They keep going; run the command again "
                         "later to see the report") from exc
    except Exception as exc:
        raise QueueError(f"lost the result store while waiting: {' '.join(str(exc).split())}") from exc
    for task_id in ids:
        meta = results[task_id]
        if meta.get("status") != "SUCCESS":
            report.files.append(FileResult(path=units[task_id][1], status="failed",
                                           reason=f"worker task failed: {meta.get('result')}"))
            continue
        part = IngestReport.model_validate(meta["result"])
        report.files.extend(part.files)
        report.edges += part.edges
        report.status_changes.update(part.status_changes)
        report.notes.extend(n for n in part.notes if n not in report.notes)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _consumers(app: Any, queue: str) -> int:
    """Workers consuming ``queue`` now (0 when the queue does not exist yet)."""
    try:
        with app.connection_for_write() as conn:
            return conn.default_channel.queue_declare(queue, passive=True).consumer_count
    except Exception:
        return 0
