"""Retrieval state: several searches are merged by rank, so a side query cannot push the main
search's evidence out of the top k just because its own scores were normalized higher."""

from __future__ import annotations

from agentic_rag.runtime import RetrievalState, SessionState
from agentic_rag.types import Chunk, Evidence


def _ev(cid: str, score: float) -> Evidence:
    return Evidence(chunk=Chunk(chunk_id=cid, doc_id=cid.split(":")[0], ord=0, text=cid), score=score)


def test_searches_merge_by_rank_not_by_raw_score():
    state = RetrievalState()
    state.add_evidence([_ev("main:a", 0.31), _ev("main:b", 0.30), _ev("main:c", 0.29)], 1)
    # a side query whose scores are all higher (each search scales its own best hit to 1.0)
    state.add_evidence([_ev("side:x", 1.0), _ev("side:y", 0.99), _ev("side:z", 0.98)], 1)
    ranked = [e.chunk_id for e in state.ranked(4)]
    assert ranked == ["main:a", "side:x", "main:b", "side:y"]
    assert [e.rank for e in state.ranked(4)] == [1, 2, 3, 4]


def test_a_chunk_found_by_two_searches_rises():
    state = RetrievalState()
    state.add_evidence([_ev("d:a", 0.9), _ev("d:b", 0.8), _ev("d:c", 0.7)], 1)
    state.add_evidence([_ev("d:c", 0.5), _ev("d:e", 0.4)], 2)
    assert state.ranked(1)[0].chunk_id == "d:c"
    assert state.evidence["d:c"].round == 1, "the round that first found a chunk is kept"


def test_state_with_fused_ranks_round_trips_through_json():
    session = SessionState()
    session.retrieval.add_evidence([_ev("d:a", 0.9), _ev("d:b", 0.8)], 1)
    again = SessionState.model_validate_json(session.model_dump_json())
    assert [e.chunk_id for e in again.retrieval.ranked()] == ["d:a", "d:b"]
