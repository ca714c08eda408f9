"""The operations a template step may name, each deterministic.

An operation reads the run's :class:`Context` (the engine, the runtime, the inputs and the earlier
steps' results) and returns a :class:`StepResult`: its lines as :class:`Draft` s — a line plus the
fragments the fact-check must find in the text each cites — and what later steps may use
(evidence, clause changes, conflicts, gaps). The runner verifies the drafts before the next step.

| op | args | produces |
|---|---|---|
| ``retrieve`` | ``query``, ``k`` (20) | the clauses across the corpus that govern the query's topic |
| ``compare_clauses`` | ``old``, ``new`` (document ids) | every clause of both, with its status and changed values |
| ``summarize_section`` | ``section`` (``material_changes`` or ``by_document``) with ``from``; or ``doc`` + ``clause`` | cited lines |
| ``check_condition`` | ``condition``: ``every_clause_accounted``, ``covered`` (``topic``), ``mentions`` (``term``) | a verdict; gaps when it fails |
| ``find_conflicts`` | ``from`` a retrieve step | conflicts, each with its winner and rule |
| ``ask`` | ``question``, ``mode`` (plan) | the runtime's cited answer, its conflicts and gaps |
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentic_rag.errors import ConfigError, NotFoundError
from agentic_rag.reports import compare, topic
from agentic_rag.reports.model import ClauseChange, ReportLine, ValueChange
from agentic_rag.reports.templates import Step, Template, TemplateError, fill
from agentic_rag.runtime.trace import Tracer
from agentic_rag.text.clauses import clause_matches
from agentic_rag.text.sentences import split_sentences, strip_label
from agentic_rag.types import Chunk, Citation, Conflict, Document, Evidence

__all__ = ["OPERATIONS", "Aborted", "Context", "Draft", "StepResult"]


class Aborted(Exception):
    """The report's abort flag was set: raised between steps, caught by the runner."""


@dataclass
class Draft:
    """A line before verification: ``support`` lists (fragment, texts it must be found in)."""

    line: ReportLine
    support: list[tuple[str, list[str]]] = field(default_factory=list)
    #: how many clauses the line must cite under ``both_sides`` (2 for a change of a clause)
    sides: int = 1


@dataclass
class StepResult:
    title: str
    drafts: list[Draft] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    evidence: list[Evidence] = field(default_factory=list)
    clauses: list[ClauseChange] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    failed: bool = False
    #: chunk id -> the whole clause's text, for the fact-check of later steps
    texts: dict[str, str] = field(default_factory=dict)


@dataclass
class Context:
    engine: Any
    runtime: Any
    template: Template
    inputs: dict[str, str]
    tracer: Tracer
    abort: threading.Event
    deadline: float
    lang: str = "zh"
    results: dict[str, StepResult] = field(default_factory=dict)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def document(self, ref: str) -> Document:
        """The document ``ref`` names: its id, or its source path as ingested."""
        store = self.engine.store
        doc = store.get_document(ref)
        if doc is None:
            hits = [d for d in store.documents() if d.source == ref or d.source.endswith("/" + ref)]
            if len(hits) == 1:
                doc = hits[0]
        if doc is None:
            raise NotFoundError(f"unknown document id {ref!r} (`arag docs` lists them)")
        return doc

    def source(self, step: Step, want: str) -> StepResult:
        """The result of the step named by ``from``, which must have produced ``want``."""
        if step.from_ is None or step.from_ not in self.results:
            raise self.bad(step, f"needs from = the id of an earlier step that produced {want}")
        return self.results[step.from_]

    def bad(self, step: Step, problem: str) -> TemplateError:
        where = f"{self.template.path}: " if self.template.path else f"template {self.template.name!r}: "
        return TemplateError(f"{where}step {step.id!r} ({step.op}) {problem}")

    def zh(self) -> bool:
        return self.lang == "zh"


Operation = Callable[[Context, Step, dict[str, Any]], StepResult]


# ---------------------------------------------------------------------- helpers

def cite_chunk(chunk: Chunk, quote: str) -> Citation:
    i = chunk.text.find(quote) if quote else -1
    start = chunk.span[0] + max(i, 0)
    return Citation(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, title=chunk.title, clause=chunk.clause,
                    quote=quote or chunk.text[:200],
                    span=(start, start + len(quote)) if i >= 0 else chunk.span)


def _best_sentence(chunk: Chunk, terms: list[Any]) -> str:
    """The sentence of ``chunk`` that names most of ``terms`` (the first one on a tie)."""
    from agentic_rag.agents.vocabulary import TextCover

    text = chunk.text
    sentences = [strip_label(text[s:e]) for s, e in split_sentences(text)] or [text[:200]]
    return max(sentences, key=lambda s: (sum(TextCover(s).covers(t) for t in terms), -sentences.index(s)))


def _name(c: Citation | Chunk, zh: bool) -> str:
    title = c.title or c.doc_id
    where = f"《{title}》" if zh else f"“{title}”"
    return f"{where}{c.clause or ''}" if zh else f"{where} {c.clause or ''}".strip()


# ---------------------------------------------------------------------- retrieve

def retrieve(ctx: Context, step: Step, args: dict[str, Any]) -> StepResult:
    query = str(args.get("query") or "").strip()
    if not query:
        raise ctx.bad(step, "needs a query")
    k = int(args.get("k", 20))
    tools = ctx.runtime.tools
    calls = [(name, {"query": query, "top_k": k}) for name in ("semantic_search", "exact_search") if name in tools]
    timeout = max(0.05, min(tools.timeout_s, ctx.left()))
    found: list[Evidence] = []
    for obs in tools.run(calls, timeout_s=timeout):
        ctx.tracer.emit("tool", tool=obs.tool, args=obs.args, duration_ms=obs.duration_ms,
                        evidence_ids=[e.chunk_id for e in obs.evidence],
                        detail=obs.error or f"{len(obs.evidence)} results")
        found.extend(obs.evidence)
    found.sort(key=lambda e: -e.score)
    evidence = topic.governing(found, query)
    docs = {e.chunk.doc_id for e in evidence}
    checks = [(f"{len(evidence)} clauses in {len(docs)} documents govern {query!r} "
               f"(of {len({e.chunk_id for e in found})} found)")]
    return StepResult(title=step.title or ("相关条文" if ctx.zh() else "Clauses found"), evidence=evidence,
                      checks=checks, data={"query": query, "chunk_ids": [e.chunk_id for e in evidence]})


# ---------------------------------------------------------------------- compare

def compare_clauses(ctx: Context, step: Step, args: dict[str, Any]) -> StepResult:
    old_ref, new_ref = str(args.get("old") or ""), str(args.get("new") or "")
    if not old_ref or not new_ref:
        raise ctx.bad(step, "needs old and new (document ids)")
    old, new = ctx.document(old_ref), ctx.document(new_ref)
    if old.doc_id == new.doc_id:
        raise ConfigError(f"old and new name the same document {old.doc_id!r}: compare two versions")
    store = ctx.engine.store
    old_chunks, new_chunks = store.chunks(old.doc_id), store.chunks(new.doc_id)
    ctx.lang = new.meta.language or ctx.lang
    changes = compare.compare_documents(old_chunks, new_chunks)
    texts = {c.chunk_id: clause.text for chunks in (old_chunks, new_chunks)
             for clause in compare.clauses_of(chunks) for c in clause.chunks}
    drafts = [_clause_draft(c, texts, ctx.zh()) for c in changes]
    counts = {s: sum(1 for c in changes if c.status == s)
              for s in ("unchanged", "changed", "renumbered", "added", "removed")}
    data = {"old": {"doc_id": old.doc_id, "title": old.meta.title, "version": old.meta.version,
                    "publish_date": str(old.meta.publish_date or "")},
            "new": {"doc_id": new.doc_id, "title": new.meta.title, "version": new.meta.version,
                    "publish_date": str(new.meta.publish_date or "")},
            "counts": counts,
            "old_clauses": len(compare.clauses_of(old_chunks)), "new_clauses": len(compare.clauses_of(new_chunks))}
    checks = [", ".join(f"{n} {s}" for s, n in counts.items())]
    return StepResult(title=step.title or ("逐条对照" if ctx.zh() else "Clause by clause"), drafts=drafts,
                      clauses=changes, data=data, checks=checks, texts=texts)


def change_text(change: ValueChange, zh: bool) -> str:
    """One value change in words: ``起付标准 1000元 → 800元``."""
    none = "（无）" if zh else "(none)"
    old, new = change.old or none, change.new or none
    if change.whole and change.new:  # a sentence added to the clause
        return f"增加「{change.new}」" if zh else f"added “{change.new}”"
    if change.whole:
        return f"删去「{change.old}」" if zh else f"dropped “{change.old}”"
    if change.kind in ("number", "date", "duration"):
        return f"{change.matter} {old} → {new}".strip()
    label = {"list": ("列举项", "listed items"), "obligation": ("义务用语", "obligation"),
             "condition": ("条件", "condition"), "wording": ("措辞", "wording")}[change.kind][0 if zh else 1]
    if change.kind == "list":
        if zh:
            return f"{label}删去「{old}」，新增「{new}」"
        return f"{label}: removed “{old}”, added “{new}”"
    return f"{label}「{old}」→「{new}」" if zh else f"{label}: “{old}” → “{new}”"


def _clause_draft(c: ClauseChange, texts: dict[str, str], zh: bool) -> Draft:
    cites = list(dict.fromkeys(x.chunk_id for x in (c.old, c.new, c.merged_into) if x is not None))
    old_text = texts.get(c.old.chunk_id, "") if c.old else ""
    new_text = texts.get(c.new.chunk_id, "") if c.new else ""
    support: list[tuple[str, list[str]]] = []
    sep = "：" if zh else ": "
    if c.status == "added" and c.new:
        text = f"{'新增' if zh else 'Added'} {c.new.clause or ''}{sep}{c.new.quote}"
        support.append((c.new.quote, [new_text]))
    elif c.status == "removed" and c.old and c.merged_into:
        into = c.merged_into.clause or ""
        what = "、".join(change_text(ch, zh) for ch in c.changes) if zh else "; ".join(change_text(ch, zh) for ch in c.changes)
        text = (f"删除 {c.old.clause or ''}（并入{into}）{sep}{what or c.old.quote}" if zh else
                f"Removed {c.old.clause or ''} (merged into {into}){sep}{what or c.old.quote}")
        merged_text = texts.get(c.merged_into.chunk_id, "")
        support.extend(s for ch in c.changes for s in change_support(ch, old_text, merged_text))
        if not c.changes:
            support.append((c.old.quote, [old_text]))
    elif c.status == "removed" and c.old:
        text = f"{'删除' if zh else 'Removed'} {c.old.clause or ''}{sep}{c.old.quote}"
        support.append((c.old.quote, [old_text]))
    elif not c.changes and c.merged_from:
        others = "、".join(m.clause or "" for m in c.merged_from)
        text = f"{c.label}{sep}{'并入了' + others + '的内容' if zh else 'now also holds ' + others}"
        cites += [m.chunk_id for m in c.merged_from]
    elif not c.changes:
        what = ("重新编号，内容未变" if zh else "renumbered, wording unchanged") if c.status == "renumbered" \
            else ("未变" if zh else "unchanged")
        text = f"{c.label}{sep}{what}"
    else:
        parts = [change_text(ch, zh) for ch in c.changes]
        lead = (("重新编号；" if zh else "renumbered; ") if c.status == "renumbered" else "")
        text = f"{c.label}{sep}{lead}{('；' if zh else '; ').join(parts)}"
        for ch in c.changes:
            support.extend(change_support(ch, old_text, new_text))
    return Draft(ReportLine(text=text.strip(), citations=cites), [s for s in support if s[0]],
                 sides=len(cites))


def change_support(change: ValueChange, old_text: str, new_text: str) -> list[tuple[str, list[str]]]:
    """What the fact-check must find for a change: its old value in the old clause, its new
    value and what it is about in the new one (the old clause, for a value removed)."""
    out = []
    if change.old:
        out.append((change.old, [old_text]))
    if change.new:
        out.append((f"{change.matter} {change.new}".strip(), [new_text]))
    elif change.matter:
        out.append((change.matter, [old_text]))
    return out


# ---------------------------------------------------------------------- summarize

def summarize_section(ctx: Context, step: Step, args: dict[str, Any]) -> StepResult:
    section = str(args.get("section") or "")
    if section == "material_changes":
        return _material(ctx, step, ctx.source(step, "a clause comparison"))
    if section == "by_document":
        return _by_document(ctx, step, ctx.source(step, "clauses"), str(args.get("topic") or ""))
    if args.get("doc") and args.get("clause"):
        return _one_clause(ctx, step, str(args["doc"]), str(args["clause"]))
    raise ctx.bad(step, "needs section = material_changes or by_document (with from), or doc and clause")


_ORDER = {"number": 0, "duration": 0, "date": 0, "obligation": 1, "condition": 1, "list": 1}


def _material(ctx: Context, step: Step, src: StepResult) -> StepResult:
    if not src.clauses and "counts" not in src.data:
        raise ctx.bad(step, "needs from = a compare_clauses step")
    zh = ctx.zh()
    rows: list[tuple[int, int, Draft]] = []
    for n, c in enumerate(src.clauses):
        if not c.material:
            continue
        target = c.new or c.merged_into
        if c.status == "added" or (c.status == "removed" and not c.changes):
            rows.append((2 if c.status == "added" else 3, n, _clause_draft(c, src.texts, zh)))
            continue
        old_text = src.texts.get(c.old.chunk_id, "") if c.old else ""
        new_text = src.texts.get(target.chunk_id, "") if target else ""
        cites = [x.chunk_id for x in (c.old, target) if x is not None]
        for ch in c.changes:
            if ch.kind not in _ORDER:
                continue
            line = f"{c.label}{'：' if zh else ': '}{change_text(ch, zh)}"
            rows.append((_ORDER[ch.kind], n, Draft(ReportLine(text=line, citations=cites),
                                                   change_support(ch, old_text, new_text), sides=2)))
    rows.sort(key=lambda r: (r[0], r[1]))
    drafts = [d for _, _, d in rows]
    checks = [f"{len(drafts)} material changes"]
    return StepResult(title=step.title or ("重要变化" if zh else "Material changes"), drafts=drafts,
                      checks=checks, data={"material": len(drafts)})


def _by_document(ctx: Context, step: Step, src: StepResult, topic_text: str) -> StepResult:
    zh = ctx.zh()
    query = topic_text or str(src.data.get("query") or "")
    terms = topic.topic_terms(query)
    drafts: list[Draft] = []
    groups = []
    for doc_id, status, chunks in topic.by_document(src.evidence):
        ids = []
        for chunk in chunks:
            sentence = _best_sentence(chunk, terms)
            text = f"{_name(chunk, zh)}{'：' if zh else ': '}{sentence}"
            drafts.append(Draft(ReportLine(text=text, citations=[chunk.chunk_id]), [(sentence, [chunk.text])]))
            ids.append(chunk.chunk_id)
        first = chunks[0]
        groups.append({"doc_id": doc_id, "title": first.title, "status": status, "chunk_ids": ids,
                       "publish_date": str(first.publish_date or ""), "version": first.version})
    in_force = sum(1 for g in groups if g["status"] == topic.IN_FORCE)
    checks = [f"{len(groups)} documents: {in_force} in force, {len(groups) - in_force} superseded"]
    return StepResult(title=step.title or ("按文件与效力" if zh else "By document and status"), drafts=drafts,
                      evidence=src.evidence, checks=checks, data={"groups": groups})


def _one_clause(ctx: Context, step: Step, doc_ref: str, label: str) -> StepResult:
    doc = ctx.document(doc_ref)
    chunks = [c for c in ctx.engine.store.chunks(doc.doc_id) if clause_matches(label, c.clause, c.clause_no)]
    if not chunks:
        raise NotFoundError(f"document {doc.doc_id!r} has no clause {label!r}")
    drafts = []
    for chunk in chunks:
        for s, e in split_sentences(chunk.text):
            sentence = chunk.text[s:e]
            drafts.append(Draft(ReportLine(text=sentence, citations=[chunk.chunk_id]), [(sentence, [chunk.text])]))
    return StepResult(title=step.title or f"{doc.meta.title} {label}", drafts=drafts,
                      evidence=[Evidence(chunk=c, score=1.0) for c in chunks])


# ---------------------------------------------------------------------- check a condition

def check_condition(ctx: Context, step: Step, args: dict[str, Any]) -> StepResult:
    condition = str(args.get("condition") or "")
    zh = ctx.zh()
    if condition == "every_clause_accounted":
        src = ctx.source(step, "a clause comparison")
        olds = [c.old.chunk_id for c in src.clauses if c.old]
        news = [c.new.chunk_id for c in src.clauses if c.new]
        want_old, want_new = src.data.get("old_clauses", len(olds)), src.data.get("new_clauses", len(news))
        ok = len(set(olds)) == len(olds) == want_old and len(set(news)) == len(news) == want_new
        verdict = (f"every clause accounted for: {want_old} old, {want_new} new" if ok else
                   f"clauses unaccounted for: {len(olds)}/{want_old} old, {len(news)}/{want_new} new")
        return StepResult(title=step.title or ("完整性检查" if zh else "Completeness"), checks=[verdict],
                          failed=not ok, gaps=[] if ok else [verdict], data={"holds": ok})
    if condition == "covered":
        src = ctx.source(step, "clauses")
        query = str(args.get("topic") or src.data.get("query") or "")
        gaps: list[str] = []
        if not src.evidence:
            gaps.append(f"文档中没有关于“{query}”的条文" if zh else f"no clause in the documents governs {query!r}")
        else:
            missing = topic.uncovered(query, src.evidence)
            gaps.extend((f"没有条文提到“{m}”" if zh else f"no clause mentions {m!r}") for m in missing)
            if not any(e.chunk.status == "active" for e in src.evidence):
                gaps.append(f"关于“{query}”的条文均已失效" if zh else f"every clause on {query!r} is superseded")
        verdict = "covered" if not gaps else f"{len(gaps)} gaps"
        return StepResult(title=step.title or ("缺口" if zh else "Gaps"), gaps=gaps, checks=[verdict],
                          data={"holds": not gaps})
    if condition == "mentions":
        term = str(args.get("term") or "").strip()
        if not term:
            raise ctx.bad(step, "needs term for condition = mentions")
        src = ctx.source(step, "clauses")
        hits = [e.chunk for e in src.evidence if term.lower() in e.chunk.text.lower()]
        drafts = []
        for chunk in hits:
            sentence = next((chunk.text[s:e] for s, e in split_sentences(chunk.text)
                             if term.lower() in chunk.text[s:e].lower()), chunk.text[:200])
            drafts.append(Draft(ReportLine(text=f"{_name(chunk, zh)}{'：' if zh else ': '}{sentence}",
                                           citations=[chunk.chunk_id]), [(sentence, [chunk.text])]))
        gaps = [] if hits else [f"没有条文提到“{term}”" if zh else f"no clause mentions {term!r}"]
        return StepResult(title=step.title or term, drafts=drafts, gaps=gaps, data={"holds": bool(hits)},
                          checks=[f"{len(hits)} clauses mention {term!r}"])
    raise ctx.bad(step, f"names no known condition {condition!r} (known: every_clause_accounted, covered, mentions)")


# ---------------------------------------------------------------------- conflicts

def find_conflicts(ctx: Context, step: Step, args: dict[str, Any]) -> StepResult:
    src = ctx.source(step, "clauses")
    zh = ctx.zh()
    conflicts = topic.topic_conflicts(src.evidence, ctx.engine.reasoner.arbiter)
    by_id = {e.chunk_id: e.chunk for e in src.evidence}
    drafts = []
    for cf in conflicts:
        parts, support = [], []
        for v in cf.values:
            chunk = by_id[v.chunk_id]
            date = f"（{v.publish_date}）" if zh and v.publish_date else (f" ({v.publish_date})" if v.publish_date else "")
            parts.append(f"{_name(chunk, zh)}{date}{'为' if zh else ': '}{v.value}")
            support.append((v.value, [chunk.text]))
        winner = next(v for v in cf.values if v.chunk_id == cf.winner)
        text = (f"{cf.matter}：{'；'.join(parts)}；采用 {winner.value}（规则：{cf.rule}）" if zh else
                f"{cf.matter}: {'; '.join(parts)}; {winner.value} applies (rule: {cf.rule})")
        drafts.append(Draft(ReportLine(text=text, citations=[v.chunk_id for v in cf.values]), support,
                            sides=len(cf.values)))
    return StepResult(title=step.title or ("冲突与裁决" if zh else "Conflicts"), drafts=drafts, conflicts=conflicts,
                      evidence=src.evidence, checks=[f"{len(conflicts)} conflicts"])


# ---------------------------------------------------------------------- ask

def ask(ctx: Context, step: Step, args: dict[str, Any]) -> StepResult:
    question = str(args.get("question") or "").strip()
    if not question:
        raise ctx.bad(step, "needs a question")
    mode = str(args.get("mode") or "plan")
    if ctx.left() <= 0:
        raise ConfigError("no time left for the question")
    answer = ctx.runtime.run(question, mode=mode, on_event=ctx.tracer.add, abort=ctx.abort,
                             deadline_s=min(3600.0, max(0.5, ctx.left())))
    if answer.status == "aborted":
        raise Aborted()
    chunks = {c.chunk_id: c for c in ctx.engine.store.get_chunks([c.chunk_id for c in answer.citations])}
    drafts = [Draft(ReportLine(text=s.text, citations=list(s.citations), supported=s.supported),
                    [(s.text, [chunks[c].text for c in s.citations if c in chunks])])
              for s in answer.sentences]
    return StepResult(title=step.title or question, drafts=drafts, citations=list(answer.citations),
                      conflicts=list(answer.conflicts), gaps=list(answer.gaps),
                      evidence=[Evidence(chunk=c, score=1.0) for c in chunks.values()],
                      checks=[f"answer {answer.status}"], data={"status": answer.status})


OPERATIONS: dict[str, Operation] = {
    "retrieve": retrieve,
    "compare_clauses": compare_clauses,
    "summarize_section": summarize_section,
    "check_condition": check_condition,
    "find_conflicts": find_conflicts,
    "ask": ask,
}


def bind_args(step: Step, inputs: dict[str, str]) -> dict[str, Any]:
    return {k: fill(v, inputs) for k, v in step.args.items()}
