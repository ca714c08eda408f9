"""Run one benchmark set against a system and the BM25 floor, question by question.

The system under test is anything that satisfies :class:`System` (the :class:`EngineBackend`
adapts :class:`agentic_rag.engine.Engine`); a :class:`Backend` builds its index from files and
opens it. The runner owns the protocol: which index each question is asked against, what counts
as the retrieved units, which verdicts each question gets, how they are averaged.

- corpus sets and ``examples``: one index per set, built once and cached by content hash under
  the cache folder (``$ARAG_EVAL_CACHE`` or ``~/.cache/agentic-rag/eval``);
- RGB sets: a fresh, small index per question (and per noise ratio for ``rgb/zh_noise``) in a
  temporary folder, removed afterwards. Every passage the set uses is first indexed once (and
  cached like a corpus), and each fresh index is seeded with that index's embedding cache, so
  a fresh index costs an ingest, not a model run.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from agentic_rag.errors import AragError, EvalError
from agentic_rag.eval import metrics as M
from agentic_rag.eval.baseline import BM25Baseline, Unit
from agentic_rag.eval.datasets import (NOISE_RATIOS, PASSAGES_PER_QUESTION, EvalQuestion, EvalSet,
                                       article_label, article_unit, norm_title)
from agentic_rag.types import Answer, Chunk, Document, Evidence

#: ``progress(done, total, what)``: what is "indexing" (files or lines) or "questions"
Progress = Callable[[int, int, str], None]

#: errors of the system under test that fail one question, not the run (bugs still raise)
_REPORTED = (AragError, ValueError, LookupError, RuntimeError)

#: units ranked per question for both systems: enough for recall@10 and MRR@10
MIN_DEPTH = 10
#: chunks asked of the system per ranked unit: a long passage or article split into pieces
#: fills several chunk slots, and units are what the gold names
CHUNKS_PER_UNIT = 3
#: the per-question process metrics (no baseline counterpart except the trivial one)
PROCESS = ("rounds", "tool_calls", "repeated_query_rate", "llm_calls", "tokens")
#: where the engine keeps computed embeddings inside an index folder (content-addressed)
EMBEDDING_CACHE = Path("vectors") / "cache"
#: what the BM25 floor does by construction: one query, one round, no tools, no LLM
BASELINE_PROCESS = {"rounds": 1.0, "tool_calls": 0.0, "repeated_query_rate": 0.0, "llm_calls": 0.0,
                    "tokens": 0.0}


# -- the system under test -------------------------------------------------------------------
class System(Protocol):
    """An opened index that answers questions."""

    def retrieve(self, question: str, k: int) -> list[Evidence]: ...

    def ask(self, question: str) -> Answer: ...

    def documents(self) -> list[Document]: ...

    def chunks(self) -> list[Chunk]: ...

    def close(self) -> None: ...


class Backend(Protocol):
    """Builds an index folder from files and opens it as a :class:`System`."""

    #: changes whenever the way indexes are built changes (part of the cache key)
    fingerprint: str

    def build(self, sources: Sequence[Path], index_dir: Path, *, seed: Path | None = None,
              progress: Callable[[int, int], None] | None = None) -> None:
        """Build ``index_dir`` from ``sources``. ``seed`` is an earlier index folder whose
        content-addressed caches (embeddings) may be reused; it is never modified."""
        ...

    def open(self, index_dir: Path, k: int) -> System: ...


class EngineBackend:
    """:class:`agentic_rag.engine.Engine` as the system under test, configured by ``settings``."""

    def __init__(self, settings: Any = None) -> None:
        from agentic_rag.config import Settings

        self.settings = settings or Settings.load()
        code = _source_hash(INDEX_CODE)
        relevant = {"ingest": self.settings.ingest.model_dump(mode="json"),
                    "embedder": self.settings.embedder.model_dump(mode="json")}
        self.fingerprint = _digest(json.dumps(relevant, sort_keys=True).encode(), code.encode())

    def _engine(self, index_dir: Path, k: int | None = None) -> Any:
        from agentic_rag.engine import Engine

        update: dict[str, Any] = {"index": index_dir}
        if k is not None:
            update["retrieval"] = self.settings.retrieval.model_copy(update={"k": k})
        return Engine(self.settings.model_copy(update=update))

    def build(self, sources: Sequence[Path], index_dir: Path, *, seed: Path | None = None,
              progress: Callable[[int, int], None] | None = None) -> None:
        # the embedding cache is keyed by the exact text embedded, so vectors computed for an
        # earlier build (or for the pooled passages of an RGB question) are safe to reuse
        cache = seed / EMBEDDING_CACHE if seed is not None else None
        if cache is not None and cache.is_dir() and not (index_dir / EMBEDDING_CACHE).exists():
            _link_tree(cache, index_dir / EMBEDDING_CACHE)
        engine = self._engine(index_dir)
        try:
            report = engine.ingest(list(sources), progress=progress)
        finally:
            engine.close()
        failed = [f for f in report.files if f.status == "failed"]
        if failed and len(failed) == len(report.files):
            raise EvalError(f"{failed[0].path}: could not be ingested: {failed[0].reason}")

    def open(self, index_dir: Path, k: int) -> System:
        return _EngineSystem(self._engine(index_dir, k))


class _EngineSystem:
    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return self.engine.retrieve(question, k)[1]

    def ask(self, question: str) -> Answer:
        return self.engine.ask(question)

    def documents(self) -> list[Document]:
        return self.engine.store.documents()

    def chunks(self) -> list[Chunk]:
        return [c for d in self.engine.store.documents() for c in self.engine.store.chunks(d.doc_id)]

    def close(self) -> None:
        self.engine.close()


# -- results ---------------------------------------------------------------------------------
class QuestionResult(BaseModel):
    """One scored question (one per noise ratio for ``rgb/zh_noise``): a line of details.jsonl."""

    id: str
    question: str
    variant: str = ""  # e.g. "noise=0.4"
    gold: list[str] = Field(default_factory=list)
    retrieved: list[str] = Field(default_factory=list)  # units, rank order, deduplicated
    baseline_retrieved: list[str] = Field(default_factory=list)
    answer: str | None = None
    status: str | None = None
    citations: list[str] = Field(default_factory=list)
    conflicts: list[dict[str, Any]] = Field(default_factory=list)
    baseline_answer: str | None = None
    verdicts: dict[str, float | None] = Field(default_factory=dict)
    baseline_verdicts: dict[str, float | None] = Field(default_factory=dict)
    #: what a user waits for: the answer when answers are scored, else the retrieval
    latency_ms: float | None = None
    retrieve_ms: float | None = None
    ask_ms: float | None = None
    baseline_latency_ms: float | None = None
    #: the Reasoner's evidence score of its best answer sentence (what abstention thresholds;
    #: bench/calibrate.py reads it)
    evidence_score: float | None = None
    #: the other signals of that sentence (the Reasoner's ``reason`` trace event)
    reason_signals: dict[str, float] = Field(default_factory=dict)
    error: str | None = None

    @property
    def key(self) -> str:
        return f"{self.id}|{self.variant}" if self.variant else self.id


class EvalRun(BaseModel):
    set: str
    questions: int
    k: int
    metrics: dict[str, float]
    baseline: dict[str, float]
    latency_ms: dict[str, float | None]
    baseline_latency_ms: dict[str, float | None] = Field(default_factory=dict)
    #: p50/p95 of the system's retrieve calls (at the eval depth) and ask calls separately
    latency_detail: dict[str, dict[str, float | None]] = Field(default_factory=dict)
    started: str = ""
    duration_s: float = 0.0
    bench: str = ""
    questions_file: str = ""
    index: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    rows: list[QuestionResult] = Field(default_factory=list, exclude=True)

    def summary(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        return {"set": self.set, "questions": self.questions, "k": self.k, "metrics": self.metrics,
                "baseline": self.baseline, "latency_ms": self.latency_ms}


# -- running ---------------------------------------------------------------------------------
def default_cache_dir() -> Path:
    env = os.environ.get("ARAG_EVAL_CACHE")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "agentic-rag" / "eval"


def run_eval(eval_set: EvalSet, backend: Backend, *, k: int = 8, cache_dir: Path | None = None,
             progress: Progress | None = None, answers: bool = False) -> EvalRun:
    """Score every question of ``eval_set`` on ``backend`` and on the BM25 floor. ``answers``:
    in a corpus set, also ask every question with gold units that no answer aliases score,
    and score whether the answer cites a gold unit (``gold_cited``, see :func:`_score_cited_unit`)."""
    if k < 1:
        raise EvalError(f"--k must be at least 1, got {k}")
    started = dt.datetime.now(dt.timezone.utc)
    t0 = time.perf_counter()
    kind = eval_set.spec.kind
    total = len(eval_set.questions) * (len(NOISE_RATIOS) if kind == "rgb_noise" else 1)
    ticker = _Ticker(total, progress)
    index_info: dict[str, Any] = {}
    cache_dir = cache_dir or default_cache_dir()
    if kind in ("corpus", "examples"):
        rows, index_info = _run_shared(eval_set, backend, k, cache_dir, ticker, answers)
    else:
        rows, index_info = _run_per_question(eval_set, backend, k, cache_dir, ticker)
    metrics, baseline = aggregate(rows)
    lat = [r.latency_ms for r in rows if r.latency_ms is not None]
    blat = [r.baseline_latency_ms for r in rows if r.baseline_latency_ms is not None]
    detail = {name: _latency([v for r in rows if (v := getattr(r, f"{name}_ms")) is not None])
              for name in ("retrieve", "ask")}
    notes = [_PROTOCOL[kind].format(unit=eval_set.spec.unit, depth=max(k, MIN_DEPTH),
                                    chunks=min(max(k, MIN_DEPTH) * CHUNKS_PER_UNIT, 200))]
    if answers and kind in ("corpus", "examples"):
        notes.append(_GOLD_CITED)
    if any(r.error for r in rows):
        notes.append(f"{sum(bool(r.error) for r in rows)} questions raised an error (see details.jsonl)")
    return EvalRun(set=eval_set.name, questions=len(eval_set.questions), k=k, metrics=metrics,
                   baseline=baseline, latency_ms=_latency(lat), baseline_latency_ms=_latency(blat),
                   latency_detail={n: d for n, d in detail.items() if d["p50"] is not None},
                   started=started.strftime("%Y-%m-%dT%H:%M:%SZ"),
                   duration_s=round(time.perf_counter() - t0, 2), bench=str(eval_set.root),
                   questions_file=str(eval_set.questions_file), index=index_info, notes=notes, rows=rows)


_SHARED = ("one index over the set's corpus (cached by content hash); retrieval units are {unit}s: "
           "the system is asked for {chunks} chunks, deduplicated to the first {depth} {unit}s in rank "
           "order; BM25 ranks the same {unit}s. ")
_GOLD_CITED = ("--answers: every question with gold units is asked; gold_cited = the answer's first sentence "
               "cites a gold unit (0 when it abstains), the floor's = its top unit is gold; every such "
               "question counts as answerable for false_rejection_rate.")
_PROTOCOL = {
    "corpus": _SHARED + "Latency is the ask call where answers are scored, else the retrieve call.",
    "examples": _SHARED + "Clause units are file name + clause label; answers must hold every expected fact.",
    "rgb_noise": "a fresh index per question and noise ratio: 5 passages, round(5r) negatives (seeded "
                 "by the question id); r = 1 (five negatives) scores rejection. BM25's answer is its "
                 "top passage.",
    "rgb_int": "a fresh index per question: up to 5 positive passages, taken in turn from each "
               "sub-answer's group; every part must be in the answer. BM25's answer is its top passage.",
    "rgb_fact": "a fresh index per question: the positive and the counterfactual passages; a conflict "
                "counts when one reported conflict names both the true and the fake value.",
}


def _latency(values: Sequence[float]) -> dict[str, float | None]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 2)

    return {"p50": r(M.percentile(values, 50)), "p95": r(M.percentile(values, 95))}


class _Ticker:
    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total, self.done, self.progress = total, 0, progress
        self.tick(0)

    def tick(self, n: int = 1) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total, "questions")

    def indexing(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total, "indexing")


def aggregate(rows: Sequence[QuestionResult]) -> tuple[dict[str, float], dict[str, float]]:
    """Mean of each verdict over the rows that have it (a macro average over questions)."""

    def means(get: Callable[[QuestionResult], dict[str, float | None]]) -> dict[str, float]:
        names: list[str] = []
        for r in rows:
            names.extend(n for n in get(r) if n not in names)
        out: dict[str, float] = {}
        for n in names:
            v = M.mean(get(r).get(n) for r in rows)
            if v is not None:
                out[n] = round(v, 4)
        return out

    return means(lambda r: r.verdicts), means(lambda r: r.baseline_verdicts)


# -- one index per set -----------------------------------------------------------------------
def _run_shared(eval_set: EvalSet, backend: Backend, k: int, cache_dir: Path,
                ticker: _Ticker, answers: bool = False) -> tuple[list[QuestionResult], dict[str, Any]]:
    index_dir, built, build_s = cached_index(eval_set.name, eval_set.corpus, backend, cache_dir,
                                             progress=ticker.indexing)
    ticker.tick(0)
    depth = max(k, MIN_DEPTH)
    system = backend.open(index_dir, k)
    try:
        unit_of = _unit_resolver(eval_set, system)
        units = corpus_units(eval_set) if eval_set.spec.kind == "corpus" else _chunk_units(system.chunks(), unit_of)
        lang = eval_set.spec.lang if eval_set.spec.lang != "mixed" else "mixed"
        bm = BM25Baseline(units, lang)
        texts = {u.id: u.text for u in units}
        chunks = {c.chunk_id: c for c in system.chunks()} if answers else {}
        rows = []
        for q in eval_set.questions:
            rows.append(_score_shared(q, eval_set, system, bm, texts, unit_of, k, depth, chunks))
            ticker.tick()
    finally:
        system.close()
    return rows, {"path": str(index_dir), "built": built, "build_s": round(build_s, 2),
                  "units": len(units)}


def _score_shared(q: EvalQuestion, eval_set: EvalSet, system: System, bm: BM25Baseline,
                  texts: dict[str, str], unit_of: Callable[[Chunk], str], k: int,
                  depth: int, chunks: Mapping[str, Chunk] | None = None) -> QuestionResult:
    """One question of a shared-index set: retrieval against its gold units, the answer against
    its aliases; with ``chunks`` (``--answers``), a question no aliases score is asked too and
    scored by the units its answer cites."""
    spec = eval_set.spec
    gold = M.dedupe(_canon_gold(g, spec.unit) for g in q.gold)
    row = QuestionResult(id=q.id, question=q.question, gold=gold)
    t = time.perf_counter()
    row.baseline_retrieved = bm.search(q.question, depth)
    row.baseline_latency_ms = (time.perf_counter() - t) * 1000
    answers = spec.scores_answer(q)
    if gold:
        row.baseline_verdicts.update(M.retrieval_scores(
            [_match_gold(u, gold) for u in row.baseline_retrieved], gold, k))
    top = row.baseline_retrieved[0] if row.baseline_retrieved else None
    if answers:
        _score_baseline_answer(row, q, texts.get(top, "") if top else "")
    elif chunks and gold:
        row.baseline_verdicts.update(false_rejection_rate=0.0,
                                     gold_cited=float(top is not None and _match_gold(top, gold) in gold))
    try:
        if gold:
            t = time.perf_counter()
            evidence = system.retrieve(q.question, min(depth * CHUNKS_PER_UNIT, 200))
            row.retrieve_ms = row.latency_ms = (time.perf_counter() - t) * 1000
            row.retrieved = M.dedupe(_match_gold(unit_of(e.chunk), gold) for e in evidence)[:depth]
            row.verdicts.update(M.retrieval_scores(row.retrieved, gold, k))
        if answers:
            _score_answer(row, q, system)
        elif chunks and gold:
            _score_cited_unit(row, q, system, gold, unit_of, chunks)
    except _REPORTED as exc:  # one failing question must not sink a whole run; it is reported
        _failed(row, exc)
    return row


def _failed(row: QuestionResult, exc: BaseException) -> None:
    """A question the system failed on scores as a miss (not skipped, which would flatter it)."""
    row.error = f"{type(exc).__name__}: {exc}"
    for name in row.baseline_verdicts:
        if name not in row.verdicts and name not in PROCESS:
            row.verdicts[name] = 1.0 if name == "false_rejection_rate" else 0.0


def _canon_gold(g: str, unit: str) -> str:
    return article_unit(g) if unit == "article" else g


def _match_gold(unit: str, gold: Sequence[str]) -> str:
    """A clause-level unit counts for a document-level gold id (``a.md`` matches ``a.md#第3条``)."""
    if unit in gold:
        return unit
    doc = unit.split("#", 1)[0]
    return doc if doc in gold else unit


# -- one index per question (RGB) ------------------------------------------------------------
def _run_per_question(eval_set: EvalSet, backend: Backend, k: int, cache_dir: Path,
                      ticker: _Ticker) -> tuple[list[QuestionResult], dict[str, Any]]:
    plans = [(q, list(rgb_variants(eval_set.spec.kind, q))) for q in eval_set.questions]
    # every passage any variant uses, indexed once (cached like a corpus): each fresh
    # per-question index is seeded with its embeddings instead of recomputing them
    distinct = list(dict.fromkeys(p for _, variants in plans for _, ps, _ in variants for p in ps))
    cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="arag-eval-", dir=cache_dir) as tmp:
        pool_src = _write_passages(Path(tmp), distinct)
        pool, built, build_s = cached_index(eval_set.name + "-passages", [pool_src], backend, cache_dir,
                                            progress=ticker.indexing)
    ticker.tick(0)
    rows: list[QuestionResult] = []
    for q, variants in plans:
        for variant, passages, answerable in variants:
            rows.append(_score_passages(q, variant, passages, answerable, backend, k, pool, cache_dir))
            ticker.tick()
    return rows, {"path": "one fresh index per question" + (" and noise ratio" if len(plans[0][1]) > 1 else "")
                  if plans else "", "pool": str(pool), "built": built, "build_s": round(build_s, 2),
                  "units": len(distinct)}


def _write_passages(folder: Path, passages: Sequence[str]) -> Path:
    """Passages as a corpus jsonl; a passage's id derives from its text, so it is the same
    document (with the same chunks and cached embeddings) in every index it appears in."""
    corpus = folder / "passages.jsonl"
    with corpus.open("w", encoding="utf-8") as fh:
        for p in passages:
            fh.write(json.dumps({"id": _passage_id(p), "title": "", "text": p, "meta": {}},
                                ensure_ascii=False) + "\n")
    return corpus


def _passage_id(text: str) -> str:
    return "p" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:15]


def rgb_variants(kind: str, q: EvalQuestion) -> Iterator[tuple[str, list[str], bool]]:
    """(variant name, the passages of the fresh index, answerable) for one RGB question.

    Sampling is seeded by the question id, so every run sees the same passages."""
    pos, neg = q.passages.get("positive", []), q.passages.get("negative", [])
    n = PASSAGES_PER_QUESTION
    if kind == "rgb_noise":
        for ratio in NOISE_RATIOS:
            rng = random.Random(f"{q.id}:{ratio}")
            n_neg = min(round(ratio * n), len(neg))
            n_pos = min(n - n_neg, len(pos)) if ratio < 1.0 else 0
            chosen = rng.sample(neg, n_neg) + rng.sample(pos, n_pos)
            rng.shuffle(chosen)
            yield f"noise={ratio:g}", chosen, ratio < 1.0
    elif kind == "rgb_int":
        # no noise: round-robin over the sub-answers' passage groups so each part is covered
        groups = q.passage_groups or [pos]
        chosen = _round_robin(groups, n)
        yield "", chosen, True
    elif kind == "rgb_fact":
        rng = random.Random(q.id)
        chosen = list(pos) + list(q.passages.get("positive_wrong", []))
        rng.shuffle(chosen)
        yield "", chosen, True
    else:
        raise EvalError(f"no per-question protocol for set kind {kind!r}")


def _round_robin(groups: Sequence[Sequence[str]], n: int) -> list[str]:
    out: list[str] = []
    for i in range(max((len(g) for g in groups), default=0)):
        for g in groups:
            if i < len(g) and len(out) < n:
                out.append(g[i])
    return out


def _score_passages(q: EvalQuestion, variant: str, passages: list[str], answerable: bool,
                    backend: Backend, k: int, pool: Path | None = None,
                    tmp_root: Path | None = None) -> QuestionResult:
    row = QuestionResult(id=q.id, question=q.question, variant=variant)
    ids = [_passage_id(p) for p in passages]
    t = time.perf_counter()
    bm = BM25Baseline([Unit(id=i, text=p) for i, p in zip(ids, passages)], q.lang)
    top = bm.search(q.question, 1)
    row.baseline_latency_ms = (time.perf_counter() - t) * 1000
    row.baseline_retrieved = top
    question = q if answerable else q.model_copy(update={"answerable": False})
    _score_baseline_answer(row, question, passages[ids.index(top[0])] if top else "")
    with tempfile.TemporaryDirectory(prefix="arag-eval-", dir=tmp_root) as tmp:
        folder = Path(tmp)
        corpus = _write_passages(folder, passages)
        try:
            backend.build([corpus], folder / "index", seed=pool)
            system = backend.open(folder / "index", k)
            try:
                _score_answer(row, question, system)
                if answerable and q.parts and variant.startswith("noise="):
                    _score_top_passage(row, q, system, k)
            finally:
                system.close()
        except _REPORTED as exc:  # reported per question, as in _score_shared
            _failed(row, exc)
    if variant.startswith("noise=") and row.verdicts.get("accuracy") is not None:
        row.verdicts[f"accuracy@{variant[6:]}"] = row.verdicts["accuracy"]
        row.baseline_verdicts[f"accuracy@{variant[6:]}"] = row.baseline_verdicts["accuracy"]
    return row


def _score_top_passage(row: QuestionResult, q: EvalQuestion, system: System, k: int) -> None:
    """``passage_accuracy``: whether the first of the system's k retrieved passages holds the
    answer, the retrieval side of an answer-only set, scored as the BM25 floor's answer is (its
    top passage), so it compares retrieval across systems whatever each does with the passage
    afterwards (k as for the answer: a fusion's first item depends on how deep each leg looks)."""
    top = system.retrieve(q.question, k)
    row.verdicts["passage_accuracy"] = float(all(M.parts_present(top[0].chunk.text if top else "", q.parts, q.lang)))
    row.baseline_verdicts["passage_accuracy"] = row.baseline_verdicts.get("accuracy")


# -- answer verdicts -------------------------------------------------------------------------
def _score_answer(row: QuestionResult, q: EvalQuestion, system: System) -> Answer:
    t = time.perf_counter()
    answer = system.ask(q.question)
    ms = (time.perf_counter() - t) * 1000
    row.ask_ms = row.latency_ms = ms
    row.answer, row.status = answer.text, answer.status
    row.citations = [c.chunk_id for c in answer.citations]
    row.conflicts = [c.model_dump(mode="json") for c in answer.conflicts]
    row.evidence_score = next((float(e.args["evidence_score"]) for e in reversed(answer.trace)
                               if e.kind == "reason" and "evidence_score" in e.args), None)
    row.reason_signals = next(({k: float(v) for k, v in e.args.items() if k.startswith("s_")}
                               for e in reversed(answer.trace) if e.kind == "reason" and "evidence_score" in e.args), {})
    row.verdicts.update(answer_verdicts(q, answer))
    return answer


def _score_cited_unit(row: QuestionResult, q: EvalQuestion, system: System, gold: Sequence[str],
                      unit_of: Callable[[Chunk], str], chunks: Mapping[str, Chunk]) -> None:
    """A question whose answers are no short aliases (lecoqa's are lawyers' paragraphs), scored
    by where its answer comes from: whether the first answer sentence cites a gold unit (the
    article that answers it). A gold unit exists, so abstaining is a false rejection."""
    answer = _score_answer(row, q.model_copy(update={"parts": []}), system)  # no aliases to look for
    first = answer.sentences[0].citations if answer.sentences and not M.is_rejection(answer) else []
    row.verdicts["gold_cited"] = float(any(c in chunks and _match_gold(unit_of(chunks[c]), gold) in gold
                                           for c in first))


def _score_baseline_answer(row: QuestionResult, q: EvalQuestion, text: str) -> None:
    row.baseline_answer = M.capped(text, q.lang)
    row.baseline_verdicts.update(baseline_verdicts(q, text))


def answer_verdicts(q: EvalQuestion, answer: Answer) -> dict[str, float | None]:
    """Every answer-side verdict of one question (``None``: does not apply)."""
    v: dict[str, float | None] = {}
    rejected = M.is_rejection(answer)
    if not q.answerable:
        v["rejection_rate"] = float(rejected)
        return {**v, **process_verdicts(answer)}
    v["false_rejection_rate"] = float(rejected)
    if q.parts:
        found = M.parts_present(answer.text, q.parts, q.lang)
        v["accuracy"] = float(all(found))
        if q.score_parts:
            v["facts_present"] = sum(found) / len(found)
    if q.fake:
        detected, winner = M.conflict_verdict(answer.conflicts, q.parts[0] if q.parts else q.answers, q.fake)
        v.update(_conflict_verdicts(detected, winner))
    elif q.conflict is not None:
        detected, winner = M.conflict_verdict(answer.conflicts, [q.conflict.winner], [q.conflict.loser])
        v.update(_conflict_verdicts(detected, winner))
    v["cited_sentences"] = M.cited_sentence_share(answer)
    supported, checked = M.citation_precision(answer, q.parts)
    v["citation_precision"] = supported / checked if checked else None
    return {**v, **process_verdicts(answer)}


def _conflict_verdicts(detected: bool, winner: str | None) -> dict[str, float | None]:
    """conflict_detected; conflict_true_won among decided conflicts; conflict_not_fake among
    detected ones: the true value won or the conflict was stated as undecided, never the fake
    value alone."""
    return {"conflict_detected": float(detected),
            "conflict_true_won": None if not detected or winner == "undecided" else float(winner == "true"),
            "conflict_not_fake": None if not detected else float(winner in ("true", "undecided"))}


def baseline_verdicts(q: EvalQuestion, text: str) -> dict[str, float | None]:
    """The floor's answer is the top BM25 unit's text: it never abstains, cites or arbitrates."""
    v: dict[str, float | None] = {}
    if not q.answerable:
        v["rejection_rate"] = 0.0
        return {**v, **BASELINE_PROCESS}
    v["false_rejection_rate"] = 0.0
    if q.parts:
        found = M.parts_present(text, q.parts, q.lang)
        v["accuracy"] = float(all(found))
        if q.score_parts:
            v["facts_present"] = sum(found) / len(found)
    if q.fake or q.conflict is not None:
        v["conflict_detected"] = 0.0
    return {**v, **BASELINE_PROCESS}


def process_verdicts(answer: Answer) -> dict[str, float | None]:
    """Retrieval rounds, tool calls, LLM calls, tokens and the repeated-query rate of one answer."""
    u = answer.usage
    # executed searches are the retrieve steps; plans (planner, hops, tool requests) and
    # blocked duplicates are not executions
    batches: list[list[str]] = []
    for e in answer.trace:
        if e.kind != "retrieve":
            continue
        batch = [str(x) for x in e.args.get("queries") or []] if isinstance(e.args.get("queries"), list) else []
        if isinstance(e.args.get("query"), str):
            batch.append(e.args["query"])
        if batch:
            batches.append(batch)
    # rounds: retrieval steps actually run (a tool-driven run restarts its round numbers per
    # tool call, so usage.retrieval_rounds alone undercounts it)
    return {"rounds": float(max(u.retrieval_rounds, len(batches))),
            "tool_calls": float(u.tool_calls), "repeated_query_rate": M.repeated_query_rate(batches),
            "llm_calls": float(u.llm_calls), "tokens": float(u.prompt_tokens + u.completion_tokens)}


# -- units -----------------------------------------------------------------------------------
def corpus_units(eval_set: EvalSet) -> list[Unit]:
    """The baseline's units of a corpus set: passages (title + text), or statute articles for
    article-level sets (each ``第X条`` heading starts one)."""
    units: list[Unit] = []
    for path in eval_set.corpus:
        for row in _read_corpus(path):
            title, text = str(row.get("title") or ""), str(row.get("text") or "")
            if eval_set.spec.unit == "article":
                units.extend(_articles(title, text))
            else:
                units.append(Unit(id=str(row["id"]), text=f"{title}\n{text}" if title else text))
    return units


_ARTICLE_HEAD = re.compile(r"^\s*(第[零〇一二两三四五六七八九十百千\d]+条(?:之[零〇一二两三四五六七八九十\d]+)?)",
                           re.MULTILINE)


def _articles(title: str, text: str) -> list[Unit]:
    heads = list(_ARTICLE_HEAD.finditer(text))
    out: list[Unit] = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        label = article_label(m.group(1)) or m.group(1)
        out.append(Unit(id=norm_title(title) + label, text=f"{title} {text[m.start():end].strip()}"))
    return out


def _read_corpus(path: Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise EvalError(f"{path}:{n}: not valid JSON: {exc.msg}") from exc


def _chunk_units(chunks: Iterable[Chunk], unit_of: Callable[[Chunk], str]) -> list[Unit]:
    """Units from the system's own chunks (clause-level sets): the same units at the same k."""
    merged: dict[str, list[str]] = {}
    for c in chunks:
        merged.setdefault(unit_of(c), []).append(f"{c.title} {c.clause or ''} {c.text}")
    return [Unit(id=u, text="\n".join(t)) for u, t in merged.items()]


def _unit_resolver(eval_set: EvalSet, system: System) -> Callable[[Chunk], str]:
    """How a retrieved chunk names the unit the set's gold uses."""
    unit = eval_set.spec.unit
    if unit == "article":
        def article(c: Chunk) -> str:
            label = article_label(c.clause) or next((article_label(p) for p in reversed(c.path)
                                                     if article_label(p)), None)
            return norm_title(c.title) + (label or f"#{c.clause or c.chunk_id}")
        return article
    if unit == "clause":
        def clause(c: Chunk) -> str:
            base = Path(c.source.split("#", 1)[0]).name or c.doc_id
            return f"{base}#{_nospace(c.clause)}" if c.clause else base
        return clause
    # passages: the corpus line id of the chunk's document
    ids = {str(r["id"]) for p in eval_set.corpus for r in _read_corpus(p)}
    by_doc = {d.doc_id: key for d in system.documents() if (key := _passage_key(d, ids))}
    if not by_doc and ids:
        raise EvalError(f"{eval_set.name}: the index's documents do not carry the corpus ids "
                        "(source '#id' or meta id); cannot score retrieval")
    return lambda c: by_doc.get(c.doc_id, c.doc_id)


def _nospace(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _passage_key(doc: Document, ids: set[str]) -> str | None:
    extra = doc.meta.extra
    candidates = [extra.get("id"), extra.get("jsonl_id"), extra.get("source_id"),
                  doc.source.rsplit("#", 1)[-1] if "#" in doc.source else None,
                  doc.doc_id, doc.meta.title]
    return next((str(c) for c in candidates if c is not None and str(c) in ids), None)


# -- the index cache -------------------------------------------------------------------------
#: complete builds kept per set (older ones are removed after a new build succeeds)
KEEP_BUILDS = 2


def cached_index(name: str, corpus: Sequence[Path], backend: Backend, cache_dir: Path,
                 progress: Callable[[int, int], None] | None = None) -> tuple[Path, bool, float]:
    """The index folder of ``name`` over ``corpus``, built now when no complete build with the same key exists.

    The key hashes the corpus bytes (every file under a corpus folder, with its relative path)
    and the backend's fingerprint; a build that died half-way has no ``.complete`` marker and
    is rebuilt. A new build is seeded with the newest earlier build of the set (its embedding
    cache), and only the newest :data:`KEEP_BUILDS` builds are kept."""
    key = _digest(backend.fingerprint.encode(), *(_path_digest(p).encode() for p in corpus))
    prefix = name.replace("/", "_") + "-"
    folder = cache_dir / f"{prefix}{key[:16]}"
    marker = folder / ".complete"
    if marker.exists():
        return folder / "index", False, 0.0
    cache_dir.mkdir(parents=True, exist_ok=True)
    # two evals of one set at once: the second waits for the first's build instead of deleting it
    with open(cache_dir / f".{folder.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists():
            return folder / "index", False, 0.0
        return _build_cached(name, corpus, backend, cache_dir, prefix, folder, progress)


def _build_cached(name: str, corpus: Sequence[Path], backend: Backend, cache_dir: Path, prefix: str,
                  folder: Path, progress: Callable[[int, int], None] | None) -> tuple[Path, bool, float]:
    marker = folder / ".complete"
    if folder.exists():
        shutil.rmtree(folder)
    earlier = sorted((p for p in cache_dir.glob(f"{prefix}*") if (p / ".complete").exists()),
                     key=lambda p: (p / ".complete").stat().st_mtime, reverse=True)
    folder.mkdir(parents=True)
    t = time.perf_counter()
    backend.build(list(corpus), folder / "index", seed=earlier[0] / "index" if earlier else None,
                  progress=progress)
    marker.write_text(json.dumps({"set": name, "corpus": [str(p) for p in corpus]}), encoding="utf-8")
    for old in earlier[KEEP_BUILDS - 1:]:
        shutil.rmtree(old, ignore_errors=True)
        (cache_dir / f".{old.name}.lock").unlink(missing_ok=True)
    return folder / "index", True, time.perf_counter() - t


def _link_tree(src: Path, dst: Path) -> None:
    """Copy a folder by hard links where the file system allows (the cache's shards are written
    once and replaced, never modified in place, so sharing them is safe), else by copying."""
    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    shutil.copytree(src, dst, copy_function=link)


def _path_digest(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        h.update(str(f.relative_to(path) if path.is_dir() else f.name).encode())
        with f.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
        h.update(b"\x00")
    return h.hexdigest()


#: the package's files an index is built from, relative to the package: everything ingest reads,
#: with the text helpers it cuts and dates documents with (text/: clause labels, numerals, dates,
#: tokenization) and the packaged tables whose terms join the index's segmentation dictionary
#: (data/). A cached eval index is rebuilt when any of them changes.
INDEX_CODE = ("ingest", "store", "models/embedder.py", "text", "data", "types.py")


def _source_hash(names: Sequence[str]) -> str:
    """Hash of the package's own indexing code and tables, so a changed chunker invalidates cached indexes."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for name in names:
        p = root / name
        files = sorted(f for f in p.rglob("*") if f.is_file() and "__pycache__" not in f.parts) if p.is_dir() \
            else ([p] if p.exists() else [])
        for f in files:
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
    return h.hexdigest()
