"""Run slots: at most ``n`` runs at once, and a freed slot goes to the request that has waited
longest, never to one that arrives meanwhile."""

from __future__ import annotations

import threading
import time

import pytest

from agentic_rag.server.slots import RunSlots


def _wait_until(check, what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.001)


def _queue_behind(slots: RunSlots, names: list[str], order: list[str]) -> list[threading.Thread]:
    """One thread per name, each started once the one before it is waiting for a slot; each
    notes its name when it gets a slot and gives the slot back."""
    threads = []
    for name in names:
        def take(name: str = name) -> None:
            with slots:
                order.append(name)

        waiting = len(slots._waiting)
        t = threading.Thread(target=take)
        t.start()
        _wait_until(lambda: len(slots._waiting) > waiting, f"{name} to wait")
        threads.append(t)
    return threads


def test_freed_slots_go_to_the_waiters_in_the_order_they_came():
    slots = RunSlots(1)
    slots.acquire()
    order: list[str] = []
    threads = _queue_behind(slots, [f"w{i}" for i in range(6)], order)
    slots.release()
    for t in threads:
        t.join(10)
    assert order == [f"w{i}" for i in range(6)]


def test_n_slots_are_taken_at_once_and_all_come_back():
    slots = RunSlots(2)
    slots.acquire()
    slots.acquire()  # a third would wait
    order: list[str] = []
    threads = _queue_behind(slots, ["a", "b"], order)
    slots.release()
    slots.release()
    for t in threads:
        t.join(10)
    assert sorted(order) == ["a", "b"]
    slots.acquire()
    slots.acquire()
    assert not slots._waiting


def test_a_newcomer_does_not_take_the_slot_a_waiter_was_given():
    slots = RunSlots(1)
    slots.acquire()
    order: list[str] = []
    first = _queue_behind(slots, ["waiter"], order)
    slots.release()  # handed to the waiter, even before its thread runs again
    newcomer = threading.Thread(target=lambda: _take_and_note(slots, order, "newcomer"))
    newcomer.start()
    for t in (*first, newcomer):
        t.join(10)
    assert order == ["waiter", "newcomer"]


def _take_and_note(slots: RunSlots, order: list[str], name: str) -> None:
    with slots:
        order.append(name)


def test_a_slot_count_below_one_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        RunSlots(0)
