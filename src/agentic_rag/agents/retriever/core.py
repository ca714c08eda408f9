"""The Retriever: :class:`RouteDecision` -> ranked :class:`Evidence`, with a trace of each step.

Legs run concurrently behind one small interface (:class:`Leg`): BM25 keyword search with slot
filters, and dense vectors when an embedder and a vector index are given. A graph step then
follows ``REFERENCES`` edges out of the strong hits (so "具体比例详见第七条" brings 第七条) and
``SUPERSEDES`` edges to the current version of a superseded document (or back to the pinned
year's version when the question pins one). Scores are fused, by default

    0.4·vector + 0.3·bm25 + 0.2·graph + 0.1·position      (absent legs' weights renormalized)

or by reciprocal-rank fusion, then adjusted for recency (newer preferred mildly; superseded or
repealed sources penalized unless the question pins their year) and for slot matches (place,
pinned year, named clause). Near-duplicates across documents keep the current one; the top five
span at least two documents when more than one is relevant. Last, each of the top five clauses
brings, right after itself, the clauses it defers to ("详见第十二条") and its counterpart in the
other version of its document (or in another document already found) when that counterpart
states other numbers, so the Reasoner sees both sides of a change or a disagreement. A year the
question pins is metadata (filter and boost), never a keyword.

Multi-hop (deterministic): after each round a sufficiency check asks whether the question's
entities and relation are covered; if not, the next round searches for the bridge entities the
passages name ("his mother Ermengarde of Tours"). Comparison questions start with one query per
compared entity. At most ``RetrievalSettings.max_rounds`` rounds; a query is never run twice.

    retriever = Retriever(store)              # any DocumentStore + KeywordIndex
    evidence = retriever.retrieve(Router().route("住院报销比例是多少？"))
    evidence[0].chunk_id, evidence[0].scores, retriever.trace   # ids, per-leg scores, steps
"""

from __future__ import annotations

import copy
import datetime as dt
import re
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from agentic_rag.agents.retriever import constants as C
from agentic_rag.agents.retriever import multihop
from agentic_rag.agents.retriever.expansion import expand_query
from agentic_rag.agents.retriever.fusion import fuse_rrf, fuse_weighted, minmax
from agentic_rag.agents.retriever.legs import BM25Leg, Leg, LegQuery, VectorLeg
from agentic_rag.agents.sufficiency import coverage, key_terms
from agentic_rag.agents.vocabulary import Vocabulary, load_synonyms
from agentic_rag.text.clauses import ASKS_PENALTY, BREACH_CUE, clause_matches, clause_number
from agentic_rag.text.names import title_matches, title_within
from agentic_rag.text.quantities import EN_NUMBER_WORD, rate_periods
from agentic_rag.text.similarity import char_bigrams, jaccard, sampled_grams, squash
from agentic_rag.config import RetrievalSettings
from agentic_rag.types import (
    POSITION_WEIGHTS,
    Chunk,
    Edge,
    Evidence,
    Filter,
    RouteDecision,
    TraceEvent,
)

__all__ = ["Retriever"]

# -- the retriever ------------------------------------------------------------------------------

@dataclass
class _Query:
    text: str
    round: int
    role: str  # "main", "wording" (the question as the user put it), "entity", "sub", "hop"
    entity: str = ""
    legs: dict[str, dict[str, float]] = field(default_factory=dict)  # leg -> id -> raw score
    fused: dict[str, float] = field(default_factory=dict)
    ranked: list[str] = field(default_factory=list)


class Retriever:
    """Hybrid, graph-aware, multi-round retriever; see the module docstring."""

    def __init__(self, store: Any, settings: RetrievalSettings | None = None, embedder: Any = None,
                 vectors: Any = None, synonyms: str | Path | Sequence[Sequence[str]] | None = None,
                 legs: Sequence[Leg] | None = None, vocabulary: Vocabulary | None = None) -> None:
        self.store = store
        self.settings = settings or RetrievalSettings()
        if legs is not None:
            self.legs = list(legs)
        else:
            self.legs = [BM25Leg(store)]
            if embedder is not None and vectors is not None:
                self.legs.append(VectorLeg(embedder, vectors))
        if vocabulary is not None:
            self.synonyms = [list(g) for g in vocabulary.synonym_groups]
        elif synonyms is None or isinstance(synonyms, (str, Path)):
            self.synonyms = load_synonyms(None)
            user = synonyms if synonyms is not None else getattr(self.settings, "synonyms", None)
            if user is not None:
                self.synonyms += load_synonyms(user)
        else:
            self.synonyms = [list(g) for g in synonyms]
        self.trace: list[TraceEvent] = []
        self._chunks: dict[str, Chunk] = {}
        #: (chunk id, newest date) -> the chunk's ranking factor, within one call
        self._factors: dict[tuple[str, dt.date | None], float] = {}
        #: query -> its expansion with ``synonyms`` (shared by the calls' copies)
        self._expansions: dict[str, tuple[str, list[str]]] = {}
        self._expanded_with = self.synonyms
        self._clauses = _ClauseCache()  # shared by the calls' copies
        # the worker threads of the legs after the first, shared by the calls' copies and kept
        # between calls: starting a thread for each query cost more than the dense leg's search
        self._legs_pool = ThreadPoolExecutor(max_workers=C.LEG_WORKERS, thread_name_prefix="retriever-leg")

    # public API
    def retrieve(self, route: RouteDecision, k: int | None = None) -> list[Evidence]:
        """Ranked evidence for ``route`` (at most ``k``, default ``settings.k``); the steps taken
        are in :attr:`trace` afterwards."""
        evidence, self.trace = self.retrieve_with_trace(route, k)
        return evidence

    def retrieve_with_trace(self, route: RouteDecision, k: int | None = None
                            ) -> tuple[list[Evidence], list[TraceEvent]]:
        """Like :meth:`retrieve`, returning the trace instead of storing it. Safe to call from
        several threads at once: each call works on its own shallow copy (its own chunk cache)."""
        run = copy.copy(self)
        run._chunks = {}
        run._factors = {}
        self._clauses.sync(_store_version(self.store))
        return run._retrieve(route, k or self.settings.k)

    def _retrieve(self, route: RouteDecision, k: int) -> tuple[list[Evidence], list[TraceEvent]]:
        trace: list[TraceEvent] = []
        question = route.question or route.query
        main_text = route.query or route.question
        if not main_text.strip():
            trace.append(TraceEvent(kind="retrieve", detail="empty query: nothing to search"))
            return [], trace
        entities = list(route.slots.entities)
        rels = multihop.relations(question)
        subs = list(route.subqueries) or multihop.decompose(question, entities)
        # another hop only when the question asks about a thing it does not name ("the mayor of
        # what city", "where was the director of X born"); a comparison's sides are its own queries
        needs_bridge = multihop.needs_hop(question, rels) and (
            bool(rels) or (route.language == "en" and bool(entities) and not subs))
        seen: set[str] = set()
        queries: list[_Query] = []
        plan = [_Query(main_text, 1, "main")]
        if _rewritten(route):
            # the Router's formal rewrite ("time off" -> leave) is searched, and the user's own
            # words too: a document may say it the user's way
            plan.append(_Query(route.question, 1, "wording"))
        plan += [_Query(s, 1, "sub", entity=s) for s in subs]
        # entity queries find an entity's own page; lexicon terms (医疗保险) are no page titles
        plan += [_Query(e, 1, "entity", entity=e) for e in entities
                 if e not in subs and _is_name(e, question)]
        pool: dict[str, float] = {}
        bridged_names: list[str] = []
        max_rounds = self.settings.max_rounds
        for rnd in range(1, max_rounds + 1):
            todo = []
            for q in plan:
                key = _norm_query(q.text)
                if key in seen:
                    trace.append(TraceEvent(kind="blocked", args={"query": q.text, "round": rnd},
                                            detail="repeated query not run again"))
                    continue
                seen.add(key)
                todo.append(q)
            if not todo:
                break
            t0 = time.perf_counter()
            self._run_queries(todo, route, trace)
            queries += todo
            pool = self._fuse_pool(queries, route, trace)
            trace.append(TraceEvent(kind="retrieve", tool="+".join(l.name for l in self.legs),
                                    args={"round": rnd, "queries": [q.text for q in todo]},
                                    duration_ms=_ms(t0),
                                    evidence_ids=[c for c, _ in _top(pool, k)]))
            # sufficiency: entities covered, relation bridged?
            top_chunks = self._get([c for c, _ in _top(pool, max(k, 8))])
            bridged = any(q.role == "hop" and q.ranked and
                          title_matches(q.entity, self._chunks[q.ranked[0]])
                          for q in queries if q.ranked and q.ranked[0] in self._chunks)
            # each relation word may need its own hop ("grandfather" = father's father)
            hops_done = len({q.round for q in queries if q.role == "hop"})
            need_more_hops = needs_bridge and hops_done < max(1, _hops_needed(rels, question))
            cov = coverage(entities, top_chunks, needs_bridge, bridged and not need_more_hops)
            trace.append(TraceEvent(kind="gate", tool="sufficiency", args={"round": rnd},
                                    detail=("SUFFICIENT" if cov.sufficient else
                                            "INSUFFICIENT: missing " + ", ".join(cov.missing)),
                                    confidence=len(cov.covered) / max(1, len(cov.covered) + len(cov.missing))))
            if cov.sufficient or rnd == max_rounds:
                if not cov.sufficient:
                    trace.append(TraceEvent(kind="fallback", fallback="max_rounds reached",
                                            detail=f"stopped after {rnd} rounds; still missing "
                                                   + ", ".join(cov.missing)))
                break
            if not needs_bridge:
                # what is missing is a name of the question itself: a bridge hop finds other
                # names, never that one
                trace.append(TraceEvent(kind="gate", tool="sufficiency", args={"round": rnd},
                                        detail="single-hop question: no bridge to follow, stopping"))
                break
            plan = self._next_hops(question, queries, rnd, entities, bridged_names, trace)
            if not plan:
                trace.append(TraceEvent(kind="gate", tool="sufficiency", args={"round": rnd},
                                        detail="no new bridge entity to search: stopping"))
                break
        evidence = self._rank(queries, pool, route, k, trace)
        return evidence, trace

    # rounds
    def _run_queries(self, todo: list[_Query], route: RouteDecision, trace: list[TraceEvent]) -> None:
        """Run every (query, leg) pair of a round. The first leg (the store's BM25, whose
        connection may be bound to this thread) runs here; the others run in worker threads."""
        n = self.settings.candidates
        futures: list[tuple[_Query, Leg, Future]] = []
        for q in todo:
            plain = _without_pinned_year(q.text, route)
            text, added = self._expand(plain)
            if added:
                trace.append(TraceEvent(kind="expand", args={"query": q.text, "added": added}))
            # the other legs (dense) search with the question itself; entity and bridge
            # names are found by their words and titles, and embedding each costs a model call
            if q.role == "main" and self.legs[1:]:
                dense = LegQuery(text, n, also=_asked_wording(route, plain, text))
                for leg in self.legs[1:]:
                    futures.append((q, leg, self._legs_pool.submit(leg.search, dense)))
            for leg in self.legs[:1]:
                q.legs[leg.name] = self._leg_with_slots(leg, text, route, q, trace)
        for q, leg, fut in futures:
            try:
                q.legs[leg.name] = dict(fut.result())
            except Exception as exc:  # a failing optional leg degrades, recorded, never fatal
                trace.append(TraceEvent(kind="fallback", tool=leg.name, args={"query": q.text},
                                        fallback=f"{leg.name} leg failed: {exc.__class__.__name__}: {exc}"))
                q.legs[leg.name] = {}

    def _expand(self, query: str) -> tuple[str, list[str]]:
        """:func:`expand_query` with the retriever's synonyms, kept per query: every query is
        checked against every synonym group, and the same questions come back."""
        if self._expanded_with is not self.synonyms:  # the groups were replaced
            self._expansions, self._expanded_with = {}, self.synonyms
        got = self._expansions.get(query)
        if got is None:
            if len(self._expansions) >= C.EXPANSIONS_KEPT:
                self._expansions.clear()
            got = self._expansions[query] = expand_query(query, self.synonyms)
        return got[0], list(got[1])

    def _leg_with_slots(self, leg: Leg, text: str, route: RouteDecision, q: _Query,
                        trace: list[TraceEvent]) -> dict[str, float]:
        """The keyword leg: unfiltered, plus slot-filtered searches (pinned year, named clause,
        place) merged in so a filter that matches nothing can never empty the result."""
        n = self.settings.candidates
        scores = dict(leg.search(LegQuery(text, n)))
        if q.role != "main":
            return scores
        filters: list[tuple[str, tuple[Filter, ...]]] = []
        if route.version != "latest" and route.version.isdigit():
            y = int(route.version)
            filters.append(("version", (Filter(field="publish_date", op=">=", value=dt.date(y, 1, 1)),
                                        Filter(field="publish_date", op="<=", value=dt.date(y, 12, 31)))))
        if route.slots.clauses:
            filters.append(("clause", (Filter(field="clause_no", op="in",
                                              value=_clause_numbers(route.slots.clauses)),)))
        if route.slots.places:
            filters.append(("place", (Filter(field="extra.place", op="in",
                                             value=_place_variants(route.slots.places)),)))
        for name, where in filters:
            try:
                hits = leg.search(LegQuery(text, n, where))
            except Exception as exc:  # an unsupported filter must not lose the unfiltered result
                trace.append(TraceEvent(kind="fallback", tool=leg.name, args={"filter": name},
                                        fallback=f"{name} filter failed ({exc}); unfiltered kept"))
                continue
            if not hits:
                trace.append(TraceEvent(kind="fallback", tool=leg.name, args={"filter": name},
                                        fallback=f"{name} filter matched nothing; unfiltered results used"))
            for cid, s in hits:
                scores[cid] = max(scores.get(cid, s), s)
        return scores

    def _next_hops(self, question: str, queries: list[_Query], rnd: int, entities: list[str],
                   bridged_names: list[str], trace: list[TraceEvent]) -> list[_Query]:
        """Bridge entities named in this round's best passages become the next round's queries."""
        known = [*entities, *bridged_names, *(q.entity for q in queries if q.entity)]
        sources: list[str] = []
        # entities' own passages first (they name the bridge most directly), then the question's
        # best hits; each source gives at most three names, a round at most six
        for q in queries:
            if q.round == rnd and q.ranked and q.role not in ("main", "wording"):
                own = [c for c in q.ranked[:5] if c in self._chunks
                       and title_matches(q.entity, self._chunks[c])]
                # the whole page (its first pieces), not only the piece that matched; two pages
                # when the name is ambiguous ("Scott Howell (footballer)", "(consultant)")
                for doc in _unique(self._chunks[c].doc_id for c in own)[:2]:
                    pieces = self._clauses.doc_chunks(self.store, doc)[:C.SOURCE_PIECES]
                    self._chunks.update({c.chunk_id: c for c in pieces})
                    sources += [c.chunk_id for c in pieces]
                if not own:
                    sources += q.ranked[:1]
        for q in queries:
            if q.round == rnd and q.ranked and q.role == "main":
                sources += q.ranked[:2]
        plan: list[_Query] = []
        names: list[str] = []
        # the rest of the question travels with each bridge name ("waterfall" + "Zimbabwe"),
        # so the next hop finds what the question asks about the bridge, not only its page
        residual = " ".join(multihop.content_words(question, entities))
        for cid in _unique(sources):
            chunk = self._chunks.get(cid)
            if chunk is None:
                continue
            for name in multihop.bridge_entities(question, chunk, known):
                if len(names) >= C.MAX_HOP_QUERIES:
                    break
                known.append(name)
                bridged_names.append(name)
                names.append(name)
                plan.append(_Query(name, rnd + 1, "hop", entity=name))
                if residual:
                    plan.append(_Query(f"{name} {residual}", rnd + 1, "hop", entity=name))
                trace.append(TraceEvent(kind="hop", args={"round": rnd + 1, "query": name,
                                                          "context": residual, "from": cid},
                                        evidence_ids=[cid],
                                        detail=f"bridge entity {name!r} found in {cid}"))
        return plan

    # fusion and ranking
    def _fuse_pool(self, queries: list[_Query], route: RouteDecision,
                   trace: list[TraceEvent]) -> dict[str, float]:
        ids = {cid for q in queries for s in q.legs.values() for cid in s}
        self._load(ids)
        for q in queries:
            q.fused = self._fuse_one(q.legs, route)
            q.ranked = [c for c, _ in sorted(q.fused.items(), key=lambda kv: (-kv[1], kv[0]))]
            if q.role not in ("main", "wording"):  # an entity's own page first: "Lothair II" -> the Lothair II page
                own = [c for c in q.ranked[:20] if title_matches(q.entity, self._chunks[c])]
                q.ranked = own + [c for c in q.ranked if c not in own]
        pool = _pool(queries)
        # graph step: REFERENCES out of strong hits, SUPERSEDES to the current (or pinned) version
        graph = self._graph(_strength(queries), route, trace)
        if graph:
            main = queries[0]
            main.legs["graph"] = {**main.legs.get("graph", {}), **graph}
            self._load(graph)
            main.fused = self._fuse_one(main.legs, route)
            main.ranked = [c for c, _ in sorted(main.fused.items(), key=lambda kv: (-kv[1], kv[0]))]
            pool = _pool(queries)
        return pool

    def _fuse_one(self, legs: dict[str, dict[str, float]], route: RouteDecision) -> dict[str, float]:
        ids = {cid for s in legs.values() for cid in s if cid in self._chunks}
        legs = {n: {c: v for c, v in s.items() if c in self._chunks} for n, s in legs.items()}
        position = {cid: _position(self._chunks[cid]) for cid in ids}
        newest = max((c.publish_date for c in self._chunks.values() if c.publish_date), default=None)
        adjust = {cid: self._factor(cid, route, newest) for cid in ids}
        if self.settings.fusion == "rrf":
            # rank differences are tiny in RRF (1/61 vs 1/62), so recency, status and slot
            # factors reorder each leg's list instead of scaling the fused sum
            rankings = {n: [c for c, _ in sorted(s.items(), key=lambda kv: (-kv[1] * adjust[kv[0]], kv[0]))]
                        for n, s in legs.items() if s}
            return fuse_rrf(rankings, self.settings.rrf_k, position, self.settings.weights.position)
        fused = fuse_weighted(legs, self.settings.weights.model_dump(), position)
        return {cid: round(s * adjust[cid], 9) for cid, s in fused.items()}

    def _factor(self, cid: str, route: RouteDecision, newest: dt.date | None) -> float:
        """:meth:`_adjust`'s factor for a loaded chunk, worked out once per call and newest date
        (the route is the call's): each round fuses every query's candidates again."""
        key = (cid, newest)
        factor = self._factors.get(key)
        if factor is None:
            factor = self._factors[key] = self._adjust(self._chunks[cid], route, newest)[0]
        return factor

    def _adjust(self, chunk: Chunk, route: RouteDecision, newest: dt.date | None
                ) -> tuple[float, dict[str, float]]:
        """Recency decay, status penalty, and slot matches (pinned year, place, named clause)."""
        parts: dict[str, float] = {}
        pinned = int(route.version) if route.version.isdigit() else None
        pin_hit = pinned is not None and chunk.is_version(pinned)
        if chunk.publish_date and newest:
            age = max(0.0, (newest - chunk.publish_date).days / 365.25)
            parts["recency"] = round(C.RECENCY_FLOOR + (1 - C.RECENCY_FLOOR)
                                     * 0.5 ** (age / self.settings.recency_half_life_years), 4)
        if chunk.status != "active" and not pin_hit:
            parts["status"] = C.STATUS_PENALTY.get(chunk.status, 1.0)
        if pinned is not None and chunk.publish_date is not None:
            parts["version"] = C.PIN_MATCH if pin_hit else C.PIN_MISMATCH
        place = chunk.extra.get("place") if chunk.extra else None
        if place and route.slots.places:
            variants = _place_variants(route.slots.places)
            parts["place"] = 1.0 if str(place) in variants or any(
                v in str(place) for v in variants) else C.PLACE_MISMATCH
        if route.slots.clauses and any(clause_matches(c, chunk.clause, chunk.clause_no)
                                       for c in route.slots.clauses):
            parts["clause"] = C.CLAUSE_MATCH
        factor = 1.0
        for v in parts.values():
            factor *= v
        return factor, parts

    def _graph(self, strength: dict[str, float], route: RouteDecision,
               trace: list[TraceEvent]) -> dict[str, float]:
        """Graph hits from the strongest direct hits (``strength``: each chunk's best
        normalized BM25/vector score, whatever the fusion mode), scored ``0.9 × seed``."""
        seeds = [(c, s) for c, s in _top(strength, C.GRAPH_SEEDS) if s >= C.SEED_MIN]
        if not seeds or not hasattr(self.store, "edges"):
            return {}
        out: dict[str, float] = {}
        t0 = time.perf_counter()
        seed_score = dict(seeds)
        edges = [e for e in self._clauses.edges(self.store, [c for c, _ in seeds], kind="REFERENCES", direction="out")
                 if e.dst != e.src]
        # a seed shares its weight among the clauses it cites (as PageRank does): "详见第七条"
        # passes on nearly all of it, a clause citing five others a fifth to each
        fanout: dict[str, int] = {}
        for e in edges:
            fanout[e.src] = fanout.get(e.src, 0) + 1
        for e in edges:
            share = C.GRAPH_DECAY * seed_score.get(e.src, 0.0) / fanout[e.src]
            out[e.dst] = max(out.get(e.dst, 0.0), share)
        refs = dict(out)
        pinned = int(route.version) if route.version.isdigit() else None
        for cid, s in seeds:
            chunk = self._chunks.get(cid)
            if chunk is None:
                continue
            for target in self._version_targets(chunk, pinned):
                out[target] = max(out.get(target, 0.0), C.GRAPH_DECAY * s)
        out = {c: round(s, 6) for c, s in out.items() if s > 0}
        if out:
            self._chunks.update(self._clauses.chunks(self.store, list(out)))
            out = {c: s for c, s in out.items() if c in self._chunks}
            trace.append(TraceEvent(kind="retrieve", tool="graph", duration_ms=_ms(t0),
                                    args={"seeds": [c for c, _ in seeds],
                                          "references": sorted(c for c in refs if c in out),
                                          "versions": sorted(c for c in out if c not in refs)},
                                    evidence_ids=sorted(out)))
        return out

    def _version_targets(self, chunk: Chunk, pinned: int | None) -> list[str]:
        """The matching clause in the document that supersedes ``chunk``'s (followed to the
        current version), or, when the question pins a year, in that year's older version."""
        targets: list[str] = []
        doc, steps = chunk.doc_id, 0
        if chunk.status != "active" and not (pinned and chunk.is_version(pinned)):
            while steps < C.SUPERSEDES_HOPS:  # newer -> older edges, walked backwards
                steps += 1
                newer = [e.src for e in self._clauses.edges(self.store, [doc], kind="SUPERSEDES", direction="in")]
                if not newer:
                    break
                doc = newer[0]
                match = self._matching_clause(chunk, doc)
                if match:
                    targets.append(match)
                doc_chunks = self._clauses.doc_chunks(self.store, doc)
                if doc_chunks and doc_chunks[0].status == "active":
                    break
        if pinned and not chunk.is_version(pinned):
            while steps < 2 * C.SUPERSEDES_HOPS:
                steps += 1
                older = [e.dst for e in self._clauses.edges(self.store, [doc], kind="SUPERSEDES", direction="out")]
                if not older:
                    break
                doc = older[0]
                doc_chunks = self._clauses.doc_chunks(self.store, doc)
                if doc_chunks and doc_chunks[0].is_version(pinned):
                    match = self._matching_clause(chunk, doc)
                    if match:
                        targets.append(match)
                    break
        return targets

    def _matching_clause(self, chunk: Chunk, doc_id: str) -> str | None:
        candidates = self._clauses.doc_chunks(self.store, doc_id)
        self._chunks.update({c.chunk_id: c for c in candidates})
        for c in candidates:
            if chunk.clause_no and c.clause_no == chunk.clause_no and c.kind == chunk.kind:
                return c.chunk_id
        for c in candidates:
            if chunk.clause and c.clause == chunk.clause:
                return c.chunk_id
        # no clause number: the piece whose wording overlaps most (character bigrams)
        grams = char_bigrams(chunk.text)
        best = max(candidates, key=lambda c: jaccard(grams, char_bigrams(c.text)), default=None)
        if best is not None and jaccard(grams, char_bigrams(best.text)) >= 0.2:
            return best.chunk_id
        return None

    def _rank(self, queries: list[_Query], pool: dict[str, float], route: RouteDecision, k: int,
              trace: list[TraceEvent]) -> list[Evidence]:
        if not pool:
            return []
        ordered = [c for c, _ in _top(pool, len(pool))]
        ordered = self._dedupe(ordered, k, route, trace)
        # anchors: each entity/hop query's own passage gets a place near the top, so every hop
        # of a multi-hop question is represented in the first k
        main = queries[0].ranked[:1]
        anchors = []
        for q in queries[1:]:
            own = [c for c in q.ranked[:3] if title_matches(q.entity, self._chunks[c])]
            if not own and q.role == "hop":
                own = [c for c in q.ranked[:3] if title_within(q.entity, self._chunks[c])]
            pick = own[:1] or ([q.ranked[0]] if q.role == "sub" and q.ranked else [])
            anchors += pick
        alive = set(ordered)
        head = _unique([c for c in [*main, *anchors] if c in alive])
        order = head + [c for c in ordered if c not in head]
        if self.settings.diversity:
            order = self._diversify(order, pool, trace)
        order = order[:k]
        order, extra_scores = self._with_counterparts(order, pool, k, trace, route.question)
        first_round = {}
        for q in queries:
            for c in q.fused:
                first_round[c] = min(first_round.get(c, q.round), q.round)
        newest = max((c.publish_date for c in self._chunks.values() if c.publish_date), default=None)
        evidence = []
        for rank, cid in enumerate(order, 1):
            chunk = self._chunks[cid]
            scores: dict[str, float] = {}
            legs: list[str] = []
            for q in queries:
                for name, s in q.legs.items():
                    if cid in s:
                        scores[name] = max(scores.get(name, s[cid]), round(s[cid], 6))
                        if name not in legs:
                            legs.append(name)
            scores["position"] = _position(chunk)
            scores.update(self._adjust(chunk, route, newest)[1])
            score = extra_scores.get(cid, pool.get(cid, 0.0))
            evidence.append(Evidence(chunk=chunk, score=round(score, 6), scores=scores, rank=rank,
                                     legs=legs, round=first_round.get(cid, 1)))
        return evidence

    def _with_counterparts(self, order: list[str], pool: dict[str, float], k: int,
                           trace: list[TraceEvent], question: str = "") -> tuple[list[str], dict[str, float]]:
        """The clauses that each top clause defers to (``REFERENCES``, at most two), the clauses
        that punish its breach when the question asks about a penalty, and the
        other version's matching clause beside each of the top clauses whose document
        supersedes another or is superseded, when the two state different numbers: the Reasoner can only
        say "the 2024 rule sets 5个工作日 (the 2023 one said 10日, repealed)" when it sees both,
        and a superseded clause, penalized in ranking, rarely reaches the top ``k`` on its own.
        The counterpart goes right after its successor; the list stays at ``k``."""
        if not hasattr(self.store, "edges"):
            return order, {}
        extra: dict[str, float] = {}
        out = list(order)
        placed: set[str] = set()
        peers = _unique(self._chunks[c].doc_id for c in order if c in self._chunks)[:C.PEER_DOCS]
        peer_added = 0

        def place(src: str, cid: str) -> None:
            # right after its source and the clauses already placed there; a chunk that is
            # already ranked above that spot keeps its place
            at = out.index(src) + 1
            while at < len(out) and out[at] in placed:
                at += 1
            if cid in out:
                if out.index(cid) < at:
                    return
                out.remove(cid)  # it was below: indices before ``at`` are unchanged
            # scored just below its source, so that a consumer that merges several retrievals
            # and re-sorts by score keeps it beside its source (its own legs' scores stay in
            # Evidence.scores)
            source = extra.get(src, pool.get(src, 0.0))
            extra[cid] = round(max(pool.get(cid, 0.0), source * C.BESIDE_SOURCE), 6)
            placed.add(cid)
            out.insert(at, cid)

        def follow(source: str, items: list[str]) -> None:
            # the clauses ``items`` go right after ``source`` (as far as the store still holds them)
            self._load(items)
            for item in items:
                if item in self._chunks and source in out:
                    place(source, item)

        amended_by: dict[str, list[str]] = {}  # clause -> the amending items that change it
        # clause -> the clauses that punish its breach ("违反本条例第二十一条……的，处……罚款"): a
        # penalty clause names the act only by the number of the clause that forbids it
        punished_by: dict[str, list[str]] = {}
        penalty = bool(ASKS_PENALTY.search(question))
        # an amending item among the top hits stands for the clause it amends: the clauses
        # punishing a breach of that clause are its penalties too
        amends_clause = {e.src: e.dst for e in self._clauses.edges(self.store, order[:C.COUNTERPART_SEEDS],
                                                                   kind="REFERENCES", direction="out") if e.amends}
        seeds = {*order[:C.COUNTERPART_SEEDS], *amends_clause.values()}
        for e in self._clauses.edges(self.store, [*order, *amends_clause.values()], kind="REFERENCES",
                                     direction="in"):
            # an amending item of any clause found is followed (the clause as amended is the
            # rule in force); the clauses punishing a breach, of the top few only
            if e.amends:
                into = amended_by
            else:
                into = punished_by if penalty and e.dst in seeds and e.phrase.startswith(BREACH_CUE) else None
            if into is not None and e.src not in into.setdefault(e.dst, []):
                into[e.dst].append(e.src)
        punishing = _unique(c for v in punished_by.values() for c in v[:C.DEFERRAL_FANOUT])
        for e in self._clauses.edges(self.store, punishing, kind="REFERENCES", direction="in") if punishing else ():
            if e.amends and e.src not in amended_by.setdefault(e.dst, []):
                amended_by[e.dst].append(e.src)  # the penalty as amended is the one in force
        for cid in order[C.COUNTERPART_SEEDS:]:
            follow(cid, amended_by.get(cid, [])[:C.DEFERRAL_FANOUT])
        for cid in order[:C.COUNTERPART_SEEDS]:
            chunk = self._chunks.get(cid)
            if chunk is None or not chunk.clause:
                continue  # a title, preamble or signature line states no rule to compare
            # a clause that defers to one or two others ("具体比例详见第十二条") is answered
            # by them: they follow it, whatever their own keyword score
            refs = _unique(e.dst for e in self._clauses.edges(self.store, [cid], kind="REFERENCES", direction="out")
                           if e.dst != cid)
            if 0 < len(refs) <= C.DEFERRAL_FANOUT:
                follow(cid, refs)
            # the items of amending acts that change it ("将第九条中的……修改为……") follow it:
            # the clause as amended is the rule in force; so do the clauses that punish its
            # breach, each with the items that amend it
            follow(cid, amended_by.get(cid, [])[:C.DEFERRAL_FANOUT])
            penalties = _unique([*punished_by.get(cid, []), *punished_by.get(amends_clause.get(cid, ""), [])])
            for penalty_clause in penalties[:C.DEFERRAL_FANOUT]:
                follow(cid, [penalty_clause])
                follow(penalty_clause, amended_by.get(penalty_clause, [])[:C.DEFERRAL_FANOUT])
            # the other versions of its document: the one it supersedes and the one that
            # supersedes it (a question pinned to an old year still needs the current rule)
            older = [e.dst for e in self._clauses.edges(self.store, [chunk.doc_id], kind="SUPERSEDES", direction="out")]
            newer = [e.src for e in self._clauses.edges(self.store, [chunk.doc_id], kind="SUPERSEDES", direction="in")]
            versions = _unique(d for d in [*newer[:1], *older] if d != chunk.doc_id)
            for doc in versions[:C.COUNTERPART_DOCS]:
                match = self._counterpart(chunk, doc)
                if match is None:
                    continue
                if _numbers(self._chunks[match].text) == _numbers(chunk.text):
                    continue  # the same rule restated: nothing to arbitrate, only noise
                place(cid, match)
            # another document already in the evidence (a national rule beside a provincial
            # one) whose clause on the same matter states other numbers: a disagreement to show
            for doc in peers:
                if peer_added >= C.PEER_MAX or doc == chunk.doc_id or doc in versions:
                    continue
                match = self._counterpart(chunk, doc, C.PEER_MIN)
                if match is None or _numbers(self._chunks[match].text) == _numbers(chunk.text):
                    continue
                if match not in out[:out.index(cid) + 1]:
                    place(cid, match)
                    peer_added += 1
        if extra:
            trace.append(TraceEvent(kind="retrieve", tool="graph", evidence_ids=sorted(extra),
                                    detail=f"{len(extra)} referenced or older-version clause(s) added beside their sources"))
        kept = self._first_k(out, amended_by, k)
        return kept, {c: s for c, s in extra.items() if c in kept}

    @staticmethod
    def _first_k(out: list[str], amended_by: dict[str, list[str]], k: int) -> list[str]:
        """The first ``k`` of ``out``, a clause together with the items that amend it (alone it
        would be quoted as the rule in force): to fit one, once, the lowest-ranked chunk that is
        neither such a clause nor such an item makes room (never the top hit, which stays even
        when its items do not fit); a clause that still does not fit is left out, and what is
        left out of the rest fills any room left."""
        items = {i for c, its in amended_by.items() if c in out for i in its}
        kept: list[str] = []
        skipped: list[str] = []
        evicted = False
        for cid in out:
            if cid in kept:
                continue
            whole = [cid, *(i for i in amended_by.get(cid, []) if i in out and i not in kept)]
            if len(kept) + len(whole) == k + 1 and len(whole) > 1 and not evicted:
                spare = [c for c in kept[1:] if c not in items and not amended_by.get(c)]
                if spare:
                    kept.remove(spare[-1])
                    skipped.append(spare[-1])
                    evicted = True
            if len(kept) + len(whole) <= k:
                kept += whole
            elif not kept:
                kept += whole[:k]  # the top hit stays, with what of its items fits
            else:
                skipped.append(cid)
        kept += [c for c in out if c in skipped and c not in kept and not amended_by.get(c)][:k - len(kept)]
        return sorted(kept, key=out.index)

    def _counterpart(self, chunk: Chunk, doc_id: str, min_sim: float = 0.3) -> str | None:
        """The clause of ``doc_id`` (an older version) that says what ``chunk`` says: the most
        similar wording (character bigrams), the same clause number breaking near-ties, since a
        revision may renumber its clauses."""
        candidates = [(c, g) for c, g in self._clauses.get(self.store, doc_id) if c.kind == chunk.kind]
        self._chunks.update({c.chunk_id: c for c, _ in candidates})
        return self._clauses.counterpart((chunk.chunk_id, chunk.text, doc_id, min_sim),
                                         lambda: _most_alike(chunk, candidates, min_sim))

    def _dedupe(self, ordered: list[str], k: int, route: RouteDecision,
                trace: list[TraceEvent]) -> list[str]:
        """Drop near-duplicate text from another document, keeping the current/newer copy (the
        pinned year's copy when the question pins one). Only the head that can reach the result
        (3·k, at most 100) is checked; bigram Jaccard is computed only for pairs sharing most
        of their sampled 8-grams (texts ≥ 0.9 alike do), so the check stays about linear."""
        limit = min(max(3 * k, 30), C.DEDUP_HEAD)
        head = tuple(ordered[:limit])
        # what is dropped depends on the head's chunks (one store version) and the pinned year
        pinned = route.version if route.version.isdigit() else ""
        kept, dropped = self._clauses.deduped((head, pinned), lambda: self._near_duplicates(head, route))
        if dropped:
            trace.append(TraceEvent(kind="dedupe", evidence_ids=list(dropped),
                                    detail=f"{len(dropped)} near-duplicate chunk(s) dropped"))
        return [*kept, *ordered[limit:]]

    def _near_duplicates(self, head: Sequence[str], route: RouteDecision) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """:meth:`_dedupe`'s check of ``head``: (the chunks kept, in order; those dropped)."""
        kept: list[str] = []
        keys_of: dict[str, set[str]] = {}
        grams: dict[str, set[str]] = {}
        index: dict[str, list[str]] = {}
        dropped: list[str] = []

        def bigrams(cid: str) -> set[str]:
            if cid not in grams:
                grams[cid] = char_bigrams(self._chunks[cid].text)
            return grams[cid]

        def near(a: str, b: str) -> bool:
            # versions that differ in a number or in how often ("monthly" / "weekly") are a
            # conflict to show, not a duplicate
            ta, tb = self._chunks[a].text, self._chunks[b].text
            if _numbers(ta) != _numbers(tb) or rate_periods(ta) != rate_periods(tb):
                return False
            ga, gb = bigrams(a), bigrams(b)
            return (min(len(ga), len(gb)) >= C.DEDUP_JACCARD * max(len(ga), len(gb))
                    and jaccard(ga, gb) >= C.DEDUP_JACCARD)

        for cid in head:
            keys = _sampled(self._chunks[cid].text)
            shared = Counter(o for key in keys for o in index.get(key, ()) if o in keys_of)
            dup = next((o for o, n in shared.items()
                        if n >= 0.5 * min(len(keys), len(keys_of[o]))
                        and self._chunks[o].doc_id != self._chunks[cid].doc_id and near(cid, o)), None)
            if dup is None:
                kept.append(cid)
            elif _currency(self._chunks[cid], route) > _currency(self._chunks[dup], route):
                kept[kept.index(dup)] = cid
                del keys_of[dup]
                dropped.append(dup)
            else:
                dropped.append(cid)
                continue
            keys_of[cid] = keys
            for key in keys:
                index.setdefault(key, []).append(cid)
        return tuple(kept), tuple(dropped)

    def _diversify(self, order: list[str], pool: dict[str, float], trace: list[TraceEvent]) -> list[str]:
        """Top five from at least two documents when another document is relevant too."""
        head = order[:5]
        if len(head) < 5 or len({self._chunks[c].doc_id for c in head}) > 1:
            return order
        top = pool.get(order[0], 0.0)
        doc = self._chunks[head[0]].doc_id
        other = next((c for c in order[5:] if self._chunks[c].doc_id != doc
                      and pool.get(c, 0.0) >= 0.5 * top), None)
        if other is None:
            return order
        trace.append(TraceEvent(kind="diversity", evidence_ids=[other],
                                detail=f"moved {other} into the top 5 (all were from {doc})"))
        rest = [c for c in order if c != other]
        return rest[:4] + [other] + rest[4:]

    # store access
    def _load(self, ids: Iterable[str]) -> None:
        missing = [c for c in ids if c not in self._chunks]
        if missing:
            self._chunks.update(self._clauses.chunks(self.store, missing))

    def _get(self, ids: Sequence[str]) -> list[Chunk]:
        self._load(ids)
        return [self._chunks[c] for c in ids if c in self._chunks]


# -- helpers ------------------------------------------------------------------------------------

def _is_name(entity: str, question: str) -> bool:
    """A proper name (capitalized) or a title quoted in the question (《…》, “…”)."""
    return entity[:1].isupper() or any(f"{a}{entity}{b}" in question
                                       for a, b in (("《", "》"), ("“", "”"), ('"', '"')))


def _pool(queries: list[_Query]) -> dict[str, float]:
    """Every chunk's best score over the queries that found it; later rounds discounted a bit so
    the question's own best hits stay first."""
    pool: dict[str, float] = {}
    for q in queries:
        if not q.fused:
            continue
        top = max(q.fused.values()) or 1.0
        discount = 0.9 ** (q.round - 1) * (1.0 if q.role == "main" else 0.95)
        # an entity/bridge query is there to find that entity's own page; its other hits are
        # weaker evidence than the question's own (its own wording is the question)
        whole = q.role in ("main", "wording")
        own = set(q.ranked[:1]) if not whole else set()
        for cid, s in q.fused.items():
            v = s / top * discount * (1.0 if whole or cid in own else C.SIDE_HITS)
            if v > pool.get(cid, -1.0):
                pool[cid] = round(v, 6)
    return pool


def _strength(queries: list[_Query]) -> dict[str, float]:
    """Each chunk's best direct-hit score over the queries: BM25 divided by the query's best,
    vector min-max normalized; graph hits are not seeds of further graph hits."""
    out: dict[str, float] = {}
    for q in queries:
        for name, scores in q.legs.items():
            if name == "graph" or not scores:
                continue
            norm = minmax(scores, zero_floor=name == "bm25")
            for cid, v in norm.items():
                if v > out.get(cid, -1.0):
                    out[cid] = v
    return out


def _top(scores: dict[str, float], n: int) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def _position(chunk: Chunk) -> float:
    if chunk.kind != "body":
        return POSITION_WEIGHTS.get(chunk.kind, chunk.position_weight)
    return chunk.position_weight


def _hops_needed(rels: Sequence[str], question: str = "") -> int:
    """How many bridge hops the question seems to chain: one per relation word ("grandfather",
    "uncle", "in-law" chain two), or one per nested clause ("the state where the performer of
    X died" -> 2), whichever is larger."""
    by_rel = sum(2 if r in multihop.CHAINED_RELATIONS else 1 for r in rels)
    nested = len(C.RE_NESTED.findall(re.sub(r"^\s*\w+", "", question)))  # not the opening wh-word
    return max(by_rel, min(nested, 3))


def _without_pinned_year(text: str, route: RouteDecision) -> str:
    """The query without the year the question pins: the pin is applied as metadata (a filter
    and a boost), while as a keyword it matches every date line of that year ("2024年1月15日",
    "本规定自2024年3月1日起施行") rather than the rule asked about."""
    if not route.version.isdigit():
        return text
    stripped = re.sub(rf"(?<!\d){route.version}\s*(?:年版|年度|年的|年|版)?(?!\d)", " ", text)
    stripped = re.sub(r"\s+", " ", stripped).strip()
    return stripped if re.search(r"\w", stripped) else text


def _clause_numbers(labels: Sequence[str]) -> list[str]:
    """The ``clause_no`` values the clauses a question names may be stored under: the number
    as written ("D.4", "4(b)", "12bis") and normalized ("39" for 第三十九条, "12-1" for 之一)."""
    out: list[str] = []
    for label in labels:
        number = clause_number(label)
        as_written = re.sub(r"^(?:第|article|art\.|section|sec\.|§|clause)\s*", "", label.strip(),
                            flags=re.IGNORECASE).removesuffix("条")
        out += [number, as_written, number[:1].upper() + number[1:]]
    return _unique(v for v in out if v)


def _place_variants(places: Sequence[str]) -> list[str]:
    out: list[str] = []
    for p in places:
        base = re.sub(r"(特别行政区|自治区|省|市)$", "", p)
        out += [p, base, f"{base}省", f"{base}市"]
    return _unique(v for v in out if v)


def _most_alike(chunk: Chunk, candidates: Sequence[tuple[Chunk, frozenset[str]]], min_sim: float) -> str | None:
    """The candidate clause (with its bigrams) worded most like ``chunk`` (see
    :meth:`Retriever._counterpart`)."""
    grams = char_bigrams(chunk.text)
    best, best_score = None, 0.0
    for c, g in candidates:
        # the smaller set over the larger bounds their Jaccard: most clauses of a long
        # document are ruled out by their sizes alone
        bound = min(len(grams), len(g)) / max(len(grams), len(g), 1)
        if bound < min_sim or bound + 0.05 <= best_score:
            continue
        sim = jaccard(grams, g)
        score = sim + (0.05 if chunk.clause_no and c.clause_no == chunk.clause_no else 0.0)
        if sim >= min_sim and score > best_score:
            best, best_score = c.chunk_id, score
    return best


def _currency(chunk: Chunk, route: RouteDecision) -> tuple[int, int, dt.date]:
    pinned = route.version.isdigit() and chunk.is_version(int(route.version))
    return (int(pinned), 1 if chunk.status == "active" else 0, chunk.publish_date or dt.date.min)


@lru_cache(maxsize=C.SAMPLED_TEXTS)
def _sampled(text: str) -> frozenset[str]:
    """A chunk text's sampled 8-grams (:func:`sampled_grams`), kept by the text as stored: the
    same candidates are checked for near-duplicates question after question."""
    return sampled_grams(squash(text))


def _numbers(text: str) -> list[str]:
    """The numbers a text states, in digits, Chinese numerals or English words ("up to two days"
    and "up to three days" are two rules, not one restated)."""
    return _NUMBER.findall(text.lower())


_NUMBER = re.compile(rf"\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万]+|\b{EN_NUMBER_WORD}\b")


class _ClauseCache:
    """The clauses of recently compared documents with their character bigrams, and the
    counterparts found in them (within one store version a chunk id names one chunk), for
    :meth:`Retriever._counterpart`: every top clause is compared with the same few documents,
    query after query, and reading and splitting a long statute each time cost more than the rest
    of the retrieval. The chunks read by id and the documents' chunk lists are kept the same way,
    and so are the near-duplicate checks of rankings' heads.
    Kept while the store's version stays the same (cleared on any write, or on every call for a
    store without a version); at most ``size`` documents, least recently used dropped first."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._docs: OrderedDict[str, list[tuple[Chunk, frozenset[str]]]] = OrderedDict()
        #: (clause id, its text, document, threshold) -> that document's counterpart clause
        self._matches: OrderedDict[tuple[str, str, str, float], str | None] = OrderedDict()
        #: (ids, edge kind, direction) -> the store's edges for them
        self._edges: OrderedDict[tuple[tuple[str, ...], str, str], list[Edge]] = OrderedDict()
        #: (the head of a ranking, the pinned year) -> (the head without near-duplicates, those dropped)
        self._deduped: OrderedDict[tuple[tuple[str, ...], str], tuple[tuple[str, ...], tuple[str, ...]]] = \
            OrderedDict()
        #: chunk id -> the chunk, and document id -> its chunks in order, as the store has them
        self._chunks: OrderedDict[str, Chunk] = OrderedDict()
        self._doc_chunks: OrderedDict[str, list[Chunk]] = OrderedDict()
        self._version: int | None = None
        self._lock = threading.Lock()

    def sync(self, version: int | None) -> None:
        with self._lock:
            if version is None or version != self._version:
                self._docs.clear()
                self._matches.clear()
                self._edges.clear()
                self._deduped.clear()
                self._chunks.clear()
                self._doc_chunks.clear()
                self._version = version

    def counterpart(self, key: tuple[str, str, str, float], find: Callable[[], str | None]) -> str | None:
        """The counterpart found for ``key`` before (the same top clauses are compared with the
        same documents question after question), else ``find()``'s, kept."""
        return self._kept(self._matches, key, find, C.COUNTERPART_MATCHES)

    def deduped(self, key: tuple[tuple[str, ...], str],
                find: Callable[[], tuple[tuple[str, ...], tuple[str, ...]]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The near-duplicate check of a ranking's head done before (the same questions rank the
        same candidates first), else ``find()``'s, kept."""
        return self._kept(self._deduped, key, find, C.DEDUPED_HEADS)

    def edges(self, store: Any, ids: Sequence[str], *, kind: str, direction: Literal["out", "in"]) -> list[Edge]:
        """``store.edges(ids, kind=kind, direction=direction)``, kept like the clauses: the same
        documents' version and reference edges are looked up question after question."""
        return self._kept(self._edges, (tuple(ids), kind, direction),
                          lambda: list(store.edges(list(ids), kind=kind, direction=direction)), C.EDGE_LOOKUPS)

    def get(self, store: Any, doc_id: str) -> list[tuple[Chunk, frozenset[str]]]:
        return self._kept(self._docs, doc_id,
                          lambda: [(c, char_bigrams(c.text)) for c in self.doc_chunks(store, doc_id) if c.clause],
                          self.size)

    def doc_chunks(self, store: Any, doc_id: str) -> list[Chunk]:
        """``store.chunks(doc_id)``, kept: the versions of the same documents are followed
        question after question. Callers only read the list."""
        return self._kept(self._doc_chunks, doc_id, lambda: list(store.chunks(doc_id)), C.DOC_CHUNK_LISTS)

    def chunks(self, store: Any, ids: Sequence[str]) -> dict[str, Chunk]:
        """The chunks of ``ids`` that the store has, by id: those read before in this store
        version from here, the rest read in one call and kept. The same candidates come back
        for question after question, and reading a row and validating it into a Chunk cost more
        than fusing and ranking them."""
        found: dict[str, Chunk] = {}
        missing: list[str] = []
        with self._lock:
            for cid in ids:
                chunk = self._chunks.get(cid)
                if chunk is None:
                    missing.append(cid)
                else:
                    self._chunks.move_to_end(cid)
                    found[cid] = chunk
        if missing:
            read = {c.chunk_id: c for c in store.get_chunks(missing)}
            found.update(read)
            with self._lock:
                self._chunks.update(read)
                while len(self._chunks) > C.CHUNKS_KEPT:
                    self._chunks.popitem(last=False)
        return {cid: found[cid] for cid in ids if cid in found}

    def _kept(self, table: OrderedDict, key: Any, make: Callable[[], Any], limit: int) -> Any:
        """``table[key]``, made by ``make()`` (outside the lock) and kept when it is not there;
        at most ``limit`` entries, the least recently used dropped first."""
        with self._lock:
            if key in table:
                table.move_to_end(key)
                return table[key]
        value = make()
        with self._lock:
            table[key] = value
            while len(table) > limit:
                table.popitem(last=False)
        return value


def _store_version(store: Any) -> int | None:
    """The store's write counter, or ``None`` when it has none (then nothing is kept)."""
    try:
        version = store.version
    except Exception:  # a backend without one, or a failed read: caching is only an optimization
        return None
    return version if isinstance(version, int) else None


def _rewritten(route: RouteDecision) -> bool:
    """Whether the query is the question with some of its words put another way (the Router's
    colloquial -> formal rewrite), not a planner's narrower query ("Nimbus") or the question
    itself: most of the question's key terms stay, and some are gone."""
    if not (route.query and route.question):
        return False
    asked, searched = set(key_terms(route.question)), set(key_terms(route.query))
    return bool(asked - searched) and 2 * len(asked & searched) >= len(asked)


def _asked_wording(route: RouteDecision, query: str, searched: str) -> tuple[str, ...]:
    """The question as the user asked it, for the dense legs to embed beside ``searched`` (the
    main ``query``, already without a pinned year, with its synonyms appended), when the query is
    only that question with its filler words and punctuation taken out (the Router's
    normalization: the same key terms). An embedding model was trained on questions as people
    ask them, and "怎么", "是否" or "？" are part of how it reads one; the searched text keeps
    what the synonyms add. A query that says something else (a planner's narrower query, a
    colloquial rewrite) is searched as it is."""
    question = _without_pinned_year(route.question, route) if route.question else ""
    if not question or question in (query, searched):
        return ()
    return (question,) if set(key_terms(question)) == set(key_terms(query)) else ()


def _norm_query(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text.casefold()).strip()


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)
