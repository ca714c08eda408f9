"""``arag eval --peers``: LlamaIndex and Haystack scored like the engine, on its chunks and vectors.

The adapter tests need the ``peers`` extra (llama-index-core, llama-index-retrievers-bm25,
haystack-ai), which the test install leaves out as too heavy; without it they are skipped and
only the error a user sees and the comparison table are tested.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from agentic_rag.cli import app
from agentic_rag.config import Settings
from agentic_rag.eval import EngineBackend, load_set, run_eval
from agentic_rag.eval import peers as P

try:
    P.require_peers()
    HAVE_PEERS = True
except ImportError:
    HAVE_PEERS = False

needs_peers = pytest.mark.skipif(not HAVE_PEERS, reason="the peers extra is not installed "
                                 "(pip install 'agentic-rag[peers]')")


def test_peers_without_the_extra_is_one_line_naming_it(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(P, "_installed", lambda module: not module.startswith("haystack"))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["eval", "hotpotqa", "--bench-dir", str(bench), "--peers"])
    assert res.exit_code == 2
    assert res.output.count("\n") == 1
    assert "pip install 'agentic-rag[peers]'" in res.output and "haystack" in res.output


def test_comparison_puts_ours_first_with_a_ratio_per_peer():
    ours = P.SystemResult(name="ours", metrics={"recall@5": 0.6, "all@8": 0.3, "rounds": 2.0},
                          retrieve_ms={"p50": 30.0, "p95": 60.0}, build_s=2.0)
    peer = P.SystemResult(name="haystack", metrics={"recall@5": 0.4, "all@8": 0.0},
                          retrieve_ms={"p50": 10.0, "p95": 20.0}, build_s=None)
    headers, rows = P.comparison([ours, peer])
    assert headers == ["", "ours", "haystack", "ours/haystack"]
    by = {r[0]: r[1:] for r in rows}
    assert "rounds" not in by  # process metrics have no peer counterpart
    assert by["recall@5"] == ["0.600", "0.400", "1.50"]
    assert by["all@8"] == ["0.300", "0.000", "—"]  # no ratio over zero
    assert by["retrieval p50 (ms)"] == ["30.0", "10.0", "3.00"]
    assert by["index build (s)"] == ["2.00", "—", "—"]
    assert list(by).index("all@8") < list(by).index("recall@5")


def test_comparison_counts_the_questions_each_side_is_ahead_on():
    ours = P.SystemResult(name="ours", metrics={"passage_accuracy": 0.5},
                          per_question={"q1|noise=0": {"passage_accuracy": 1.0}, "q1|noise=0.2": {"passage_accuracy": 0.0},
                                        "q2|noise=0": {"passage_accuracy": 1.0}, "q3|noise=0": {"passage_accuracy": 0.0}})
    peer = P.SystemResult(name="haystack", metrics={"passage_accuracy": 0.75},
                          per_question={"q1|noise=0": {"passage_accuracy": 0.0}, "q1|noise=0.2": {"passage_accuracy": 1.0},
                                        "q2|noise=0": {"passage_accuracy": 1.0}, "q3|noise=0": {"passage_accuracy": 1.0},
                                        "q9|noise=0": {"passage_accuracy": 1.0}})  # ours never scored q9
    assert P.split(ours, peer, "passage_accuracy") == (1, 2)
    headers, rows = P.comparison([ours, peer])
    by = {r[0]: r[1:] for r in rows}
    assert by["passage_accuracy: questions ours ahead / peer ahead"] == ["—", "1 / 2", ""]
    # without per-question verdicts (a result loaded from an old run) there is no such row
    _, rows = P.comparison([ours.model_copy(update={"per_question": {}}), peer.model_copy(update={"per_question": {}})])
    assert not [r for r in rows if "ahead" in r[0]]


def test_the_bench_target_counts_retrieval_and_shows_the_answer_metrics_beside_it():
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("peers_bench", Path(__file__).parents[2] / "bench" / "peers.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ours = P.SystemResult(name="ours", metrics={"passage_accuracy": 0.87, "accuracy": 0.86, "accuracy@0.2": 0.94,
                                                "rejection_rate": 0.15}, retrieve_ms={})
    peer = P.SystemResult(name="haystack", metrics={"passage_accuracy": 0.86, "accuracy": 0.86, "accuracy@0.2": 0.95,
                                                    "rejection_rate": 0.0}, retrieve_ms={})
    lines = bench._acceptance({"rgb/zh_noise": [ours, peer]}, {})
    assert lines[0] == "- rgb/zh_noise: retrieval ≥ every peer on every retrieval metric (passage_accuracy): yes"
    assert lines[1] == "  answer metrics behind a peer: accuracy@0.2 0.940 < haystack 0.950"
    behind = ours.model_copy(update={"metrics": {**ours.metrics, "passage_accuracy": 0.85}})
    assert bench._acceptance({"rgb/zh_noise": [behind, peer]}, {})[0].endswith(
        "(passage_accuracy): no (passage_accuracy 0.850 < haystack 0.860)")


@pytest.fixture
def engine(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no stray arag.toml
    return EngineBackend(Settings.load())


@needs_peers
@pytest.mark.slow
@pytest.mark.parametrize("framework", P.PEERS)
def test_a_peer_ranks_the_engines_chunks_from_cached_vectors(framework, engine, bench, tmp_path):
    eval_set = load_set("hotpotqa", bench_dir=bench)
    cache = tmp_path / "cache"
    run_eval(eval_set, engine, k=2, cache_dir=cache)  # the engine's index, vectors computed once
    backend = P.PeerBackend(framework, engine, lang="en")
    run = run_eval(eval_set, backend, k=2, cache_dir=cache)
    q2 = next(r for r in run.rows if r.id == "q2")
    assert q2.error is None and q2.retrieved[0] == "p3"  # engine chunks map back to corpus ids
    assert sorted(q2.retrieved) == ["p1", "p2", "p3", "p4"]
    assert [n for _, n in backend.builds] == [0]  # every document vector came from the cache
    assert run.latency_detail["retrieve"]["p50"] > 0
    assert run.rows[0].answer  # the no-op LLM's answer is the peer's top passage


@needs_peers
@pytest.mark.slow
@pytest.mark.parametrize("framework", P.PEERS)
def test_a_peer_segments_chinese_with_jieba(framework, engine, bench, tmp_path):
    eval_set = load_set("lecoqa", bench_dir=bench)
    run = run_eval(eval_set, P.PeerBackend(framework, engine, lang="zh"), k=2, cache_dir=tmp_path / "cache")
    assert run.rows[0].retrieved[0] == "个体工商户条例第2条"
    assert run.metrics["mrr@10"] == 1.0


@needs_peers
@pytest.mark.slow
def test_eval_peers_prints_the_peer_columns(bench, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARAG_EVAL_CACHE", str(tmp_path / "cache"))
    res = CliRunner().invoke(app, ["eval", "rgb/zh_noise", "--bench-dir", str(bench), "--peers", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert [p["name"] for p in data["peers"]] == ["ours", "llamaindex", "haystack"]
    for p in data["peers"]:
        assert p["metrics"]["accuracy@0"] == 1.0  # five positives: any top passage holds the date
        assert p["builds"] == 6 or p["name"] == "ours"  # one fresh index per noise ratio


def test_peer_table_has_a_column_per_system_and_a_ratio_per_peer():
    ours = P.SystemResult(name="ours", metrics={"accuracy@0": 1.0}, query_ms={"p50": 40.0})
    peers = [P.SystemResult(name=n, metrics={"accuracy@0": 0.5}, query_ms={"p50": 20.0}) for n in P.PEERS]
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(P.rich_table([ours, *peers], "t"))
    text = console.export_text()
    assert "ours/llamaindex" in text and "ours/haystack" in text
    [row] = [line for line in text.splitlines() if "accuracy@0" in line]
    assert re.findall(r"\d+\.\d+", row) == ["1.000", "0.500", "0.500", "2.00", "2.00"]
