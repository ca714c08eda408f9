"""The harness against the real engine on a four-passage corpus (no embedder, no LLM)."""

from __future__ import annotations

import pytest

from agentic_rag.config import Settings
from agentic_rag.eval import EngineBackend, load_set, run_eval

pytestmark = pytest.mark.slow


@pytest.fixture
def backend(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no stray arag.toml
    return EngineBackend(Settings.load(embedder={"provider": "none"}))


def test_real_engine_on_a_passage_set(bench, backend, tmp_path):
    run = run_eval(load_set("hotpotqa", bench_dir=bench), backend, k=2, cache_dir=tmp_path / "cache")
    q2 = next(r for r in run.rows if r.id == "q2")
    assert q2.error is None
    assert q2.retrieved[0] == "p3"  # chunks map back to the corpus ids
    assert run.metrics["recall@2"] > 0 and "accuracy" in run.metrics
    assert run.latency_ms["p50"] is not None


def test_real_engine_on_fresh_per_question_indexes(bench, backend, tmp_path):
    run = run_eval(load_set("rgb/en_fact", bench_dir=bench), backend, cache_dir=tmp_path / "cache")
    [row] = run.rows
    assert row.error is None and row.answer
    assert {"accuracy", "conflict_detected", "false_rejection_rate"} <= set(run.metrics)
