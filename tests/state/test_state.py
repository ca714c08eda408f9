"""One contract, two implementations: the embedded state (SQLite in the index folder) and Redis
behave the same for sessions, runs and abort flags, the answer cache and rate limits; a second
process sees what the first wrote; Redis going away is a StateError, and once it is back the
same object works again."""

from __future__ import annotations

import pytest

from agentic_rag.config import Settings
from agentic_rag.errors import NotFoundError, StateError
from agentic_rag.runtime.memory import SessionState
from agentic_rag.state import SessionBusy, open_state
from agentic_rag.types import Answer


@pytest.fixture(params=["embedded", "redis"])
def settings(request, tmp_path):
    if request.param == "embedded":
        return Settings.load(index=tmp_path / "idx")
    url = request.getfixturevalue("local_redis")
    return Settings.load(index=tmp_path / "idx", state={"url": url})


def test_sessions_round_trip_and_are_seen_by_a_second_opener(settings):
    first, second = open_state(settings), open_state(settings)
    try:
        state = SessionState()
        state.conversation.add("user", "住院报销比例是多少？")
        state.status = "answered"
        first.sessions.save(state)
        loaded = second.sessions.load(state.session_id)
        assert loaded.conversation.turns[0].content == "住院报销比例是多少？"
        assert loaded.status == "answered"
        assert [(sid, status) for sid, _, status in second.sessions.list()] == [(state.session_id, "answered")]
        assert second.sessions.delete(state.session_id) is True
        assert first.sessions.delete(state.session_id) is False
        with pytest.raises(NotFoundError):
            first.sessions.load(state.session_id)
    finally:
        first.close()
        second.close()


def test_one_question_per_session_and_an_abort_flag_seen_by_another_worker(settings):
    api, other = open_state(settings), open_state(settings)
    try:
        assert other.runs.request_abort("s1") is False  # nothing runs: nothing to abort
        api.runs.start("s1")
        with pytest.raises(SessionBusy):
            other.runs.start("s1")
        assert api.runs.abort_requested("s1") is False
        assert other.runs.request_abort("s1") is True
        assert api.runs.abort_requested("s1") is True
        api.runs.finish("s1")
        api.runs.start("s1")  # the next question starts without the old flag
        assert api.runs.abort_requested("s1") is False
        api.runs.finish("s1")
    finally:
        api.close()
        other.close()


def test_the_answer_cache_is_shared_and_keyed_by_index_version(settings):
    a, b = open_state(settings), open_state(settings)
    try:
        answer = Answer(question="q", text="五日内申请。", status="answered")
        from agentic_rag.state.cache import cache_key

        key = cache_key("q", {"mode": "pipeline"}, 3)
        assert b.cache.get(key, 3) is None
        a.cache.put(key, 3, answer)
        assert b.cache.get(key, 3).text == "五日内申请。"
        assert b.cache.get(cache_key("q", {"mode": "pipeline"}, 4), 4) is None
    finally:
        a.close()
        b.close()


def test_rate_limits_count_one_budget_across_workers(settings):
    a, b = open_state(settings), open_state(settings)
    try:
        seen = [a.limits.allow("key-1", 3), b.limits.allow("key-1", 3), a.limits.allow("key-1", 3),
                b.limits.allow("key-1", 3)]
        assert seen == [True, True, True, False]
        assert a.limits.allow("key-2", 3) is True  # another key has its own budget
    finally:
        a.close()
        b.close()


def test_redis_lost_is_a_state_error_and_the_same_state_works_once_it_is_back(private_redis, tmp_path):
    state = open_state(Settings.load(index=tmp_path / "idx", state={"url": private_redis.url,
                                                                     "timeout_s": 1}))
    try:
        kept = SessionState()
        state.sessions.save(kept)
        private_redis.stop()
        with pytest.raises(StateError, match=f"Redis at redis://127.0.0.1:{private_redis.port}/0"):
            state.sessions.load(kept.session_id)
        with pytest.raises(StateError):
            state.runs.start("s")
        private_redis.start()  # an empty Redis (no persistence): the client reconnects
        fresh = SessionState()
        state.sessions.save(fresh)
        assert state.sessions.load(fresh.session_id).session_id == fresh.session_id
    finally:
        state.close()


def test_an_unreachable_redis_fails_at_open_in_one_line(tmp_path):
    pytest.importorskip("redis")
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StateError) as info:
        open_state(Settings.load(index=tmp_path, state={"url": f"redis://:secret@127.0.0.1:{port}/0"}))
    assert "\n" not in str(info.value) and "secret" not in str(info.value)
    assert f"127.0.0.1:{port}" in str(info.value)


def test_state_url_must_name_redis():
    from agentic_rag.errors import ConfigError

    with pytest.raises(ConfigError, match="state.url"):
        Settings.load(state={"url": "postgresql://localhost/x"})
