"""Run slots: at most ``n`` deterministic runs at once in one worker (``server.max_concurrent_runs``),
granted strictly in the order the requests asked for them.

    slots = RunSlots(2)
    with slots:          # waits its turn, without CPU
        runtime.run(question)

``threading.Semaphore`` is not first come, first served: a freed slot wakes the longest waiter,
but until that thread gets the interpreter lock back any newly arrived request may take the slot,
and the waiter goes back to the end of the line. Under steady load a few requests lose that race
again and again, and they are the p95. Here a freed slot is handed to the longest waiter itself.
"""

from __future__ import annotations

import threading
from collections import deque


class RunSlots:
    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"RunSlots needs at least one slot, got {n}")
        self._free = n
        self._lock = threading.Lock()
        self._waiting: deque[threading.Lock] = deque()  # one locked gate per waiting thread

    def acquire(self) -> None:
        with self._lock:
            if self._free:
                self._free -= 1
                return
            gate = threading.Lock()
            gate.acquire()
            self._waiting.append(gate)
        gate.acquire()  # opened by release(), which hands its slot to this thread

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()
            else:
                self._free += 1

    def __enter__(self) -> RunSlots:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
