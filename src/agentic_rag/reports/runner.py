"""Runs a task template: its steps in order, each verified before the next, in the runtime.

    runner = ReportRunner(engine)
    report = runner.run("compare-versions", {"old": OLD_ID, "new": NEW_ID})

A report runs under the runtime's :class:`~agentic_rag.runtime.Limits`: at most ``max_steps``
steps (the ones not reached become gaps and the report is ``incomplete``), the ``deadline_s``
of a question for the whole report, the per-tool timeout for its searches, the token and call
budget for the LLM; an ``ask`` step is a run of the runtime in plan mode. Every step is a trace
event (``plan`` for the template, ``step`` per operation, ``verify`` with what the check found,
``write`` or ``fallback`` when an LLM reworded a step, ``final``), streamed as it happens; an
abort flag is checked between steps and ends the report with status ``aborted`` and the
sections done so far.

Verification (each step's ``verify``): ``cited`` — every line cites a clause; ``both_sides`` —
a line about a change cites the old and the new clause; ``facts`` — every number and key term
of a line is in the text it cites (:func:`~agentic_rag.agents.reasoner.factcheck.check_sentence`,
the Reasoner's own check). A line that fails is kept, marked unsupported, and the report is
``needs_review``. With an LLM configured it may reword a step's lines; a reworded line that the
fact-check does not confirm keeps the rules' wording, and a ``fallback`` event says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentic_rag.agents.reasoner.factcheck import check_sentence
from agentic_rag.errors import NotFoundError
from agentic_rag.models.llm import LLMFallback, MeteredLLM, structured
from agentic_rag.reports.model import Report, ReportLine, ReportSection
from agentic_rag.reports.operations import (
    OPERATIONS,
    Aborted,
    Context,
    Draft,
    StepResult,
    bind_args,
    cite_chunk,
)
from agentic_rag.reports.templates import Step, Template, load_template, load_templates
from agentic_rag.runtime import prompts
from agentic_rag.runtime.loop import AgentRuntime, Limits
from agentic_rag.runtime.trace import Tracer
from agentic_rag.text.language import is_cjk
from agentic_rag.types import Citation, TraceEvent, Usage

__all__ = ["ReportRunner"]


class ReportRunner:
    """Templates (packaged + ``templates_dir``) run against one engine."""

    def __init__(self, engine: Any, *, runtime: AgentRuntime | None = None, limits: Limits | None = None,
                 templates_dir: str | Path | None = None) -> None:
        self.engine = engine
        settings = engine.settings
        self.limits = limits or Limits.from_settings(settings)
        self.runtime = runtime or AgentRuntime.from_engine(engine, llm=engine.llm, limits=self.limits)
        self.templates_dir = templates_dir if templates_dir is not None else settings.reports.templates_dir

    def templates(self) -> dict[str, Template]:
        """Every template by name; a broken file is a :class:`TemplateError` naming it."""
        return load_templates(self.templates_dir, OPERATIONS)

    def template(self, name: str | Path) -> Template:
        """A template by name, or read from a ``.toml`` path."""
        if str(name).endswith(".toml"):
            return load_template(name, OPERATIONS)
        found = self.templates()
        if str(name) not in found:
            raise NotFoundError(f"unknown report template {str(name)!r} (known: {', '.join(sorted(found))})")
        return found[str(name)]

    def prepare(self, template: str | Path | Template, inputs: dict[str, str]) -> tuple[Template, dict[str, str]]:
        """The template and the bound inputs of a run, checked: a template that does not exist
        or is invalid, an input missing or unknown, a document id that is not in the index,
        each raise before any step runs (the service calls this before it starts a stream)."""
        tpl = template if isinstance(template, Template) else self.template(template)
        tpl.check_operations(OPERATIONS)
        values = tpl.bind(inputs)
        probe = Context(self.engine, self.runtime, tpl, values, Tracer(), threading.Event(), 0.0)
        for spec in tpl.inputs:
            if spec.kind == "document" and spec.name in values:
                probe.document(values[spec.name])
        return tpl, values

    def run(self, template: str | Path | Template, inputs: dict[str, str], *,
            on_event: Callable[[TraceEvent], None] | None = None, abort: threading.Event | None = None,
            deadline_s: float | None = None, session_id: str = "") -> Report:
        """Run ``template`` on ``inputs``; bad inputs (an unknown document id, a missing input)
        raise before any step runs."""
        tpl, values = self.prepare(template, inputs)
        started = time.monotonic()
        deadline_s = deadline_s or self.limits.deadline_s
        tracer = Tracer(session_id, on_event)
        llm = self.runtime.llm
        meter = None
        if llm is not None:
            meter = MeteredLLM(llm, max_tokens=self.limits.max_tokens, deadline=started + deadline_s,
                               max_reply_chars=self.limits.max_reply_chars, max_calls=self.limits.max_llm_calls,
                               call_timeout_s=self.limits.llm_timeout_s)
        ctx = Context(self.engine, self.runtime, tpl, values, tracer, abort or threading.Event(),
                      started + deadline_s, lang=_language(values))
        tracer.emit("plan", tool=tpl.name, args={"steps": [f"{s.id}: {s.op}" for s in tpl.steps], "inputs": values},
                    detail=f"template {tpl.name}")
        sections: list[ReportSection] = []
        results: list[StepResult] = []
        gaps: list[str] = []
        cap: str | None = None
        status = "complete"
        try:
            for n, step in enumerate(tpl.steps):
                if ctx.abort.is_set():
                    raise Aborted()
                if n >= self.limits.max_steps:
                    cap = f"step cap ({self.limits.max_steps})"
                elif ctx.left() <= 0:
                    cap = f"report deadline ({deadline_s:g} s)"
                    tracer.emit("deadline", args={"deadline_s": deadline_s},
                                detail=f"deadline of {deadline_s:g} s reached: the steps left are not run")
                if cap:
                    gaps.extend(f"{s.title or s.id}: not run ({cap})" for s in tpl.steps[n:])
                    tracer.emit("blocked", tool=step.op, args={"steps": [s.id for s in tpl.steps[n:]]}, detail=cap)
                    break
                tracer.step = n + 1
                with tracer.timed() as ms:
                    result = OPERATIONS[step.op](ctx, step, bind_args(step, values))
                ctx.results[step.id] = result
                tracer.emit("step", tool=step.op, args={"step": step.id, "title": result.title},
                            duration_ms=ms(), evidence_ids=_cited(result)[:20], detail="; ".join(result.checks))
                section = self._verify(ctx, step, result)
                if meter is not None and section.lines:
                    self._reword(ctx, meter, section, result)
                sections.append(section)
                results.append(result)
                gaps.extend(result.gaps)
        except Aborted:
            status = "aborted"
            tracer.emit("abort", detail=f"aborted between steps, after {len(sections)} of {len(tpl.steps)}")
            gaps.extend(f"{s.title or s.id}: not run (aborted)" for s in tpl.steps[len(sections):])
        if status != "aborted":
            if cap:
                status = "incomplete"
            elif any(s.status == "needs_review" for s in sections):
                status = "needs_review"
        citations = self._citations(sections, results)
        tracer.emit("final", detail=status + (f"; {cap}" if cap else ""),
                    evidence_ids=[c.chunk_id for c in citations][:20], args={"cap": cap, "gaps": gaps})
        usage = meter.usage.model_copy() if meter is not None else Usage()
        usage.tool_calls = sum(1 for e in tracer.events if e.kind == "tool")
        usage.wall_ms = round((time.monotonic() - started) * 1000.0, 1)
        clauses = next((r.clauses for r in results if r.clauses), [])
        conflicts = [c for r in results for c in r.conflicts]
        return Report(template=tpl.name, title=tpl.title or tpl.name, inputs=values, status=status,
                      sections=sections, clauses=clauses, citations=citations,
                      conflicts=_unique_conflicts(conflicts), gaps=list(dict.fromkeys(gaps)),
                      trace=list(tracer.events), usage=usage)

    # ------------------------------------------------------------------ verification
    def _verify(self, ctx: Context, step: Step, result: StepResult) -> ReportSection:
        lines: list[ReportLine] = []
        uncited = unsupported = one_sided = 0
        for draft in result.drafts:
            line = draft.line
            problems: list[str] = []
            if "cited" in step.verify and not line.citations:
                uncited += 1
                problems.append("no citation")
            if "both_sides" in step.verify and len(line.citations) < draft.sides:
                one_sided += 1
                problems.append("cites one side only")
            if "facts" in step.verify:
                missing = _missing(draft)
                if missing:
                    unsupported += 1
                    problems.extend(missing)
            lines.append(line.model_copy(update={"supported": line.supported and not problems,
                                                 "missing": list(dict.fromkeys(problems))}))
        checks = list(result.checks)
        n = len(lines)
        if "cited" in step.verify:
            checks.append(f"cited: {n - uncited}/{n} lines")
        if "both_sides" in step.verify:
            checks.append(f"both sides cited: {n - one_sided}/{n} lines")
        if "facts" in step.verify:
            checks.append(f"facts in the cited text: {n - unsupported}/{n} lines")
        bad = uncited or unsupported or one_sided or result.failed or any(not x.supported for x in lines)
        ctx.tracer.emit("verify", tool=step.id, args={"lines": n, "uncited": uncited, "unsupported": unsupported,
                                                      "one_sided": one_sided, "checks": list(step.verify)},
                        detail="; ".join(checks))
        return ReportSection(step=step.id, op=step.op, title=result.title, lines=lines, checks=checks,
                             status="needs_review" if bad else "done", data=result.data)

    def _reword(self, ctx: Context, meter: MeteredLLM, section: ReportSection, result: StepResult) -> None:
        """The LLM's wording of the step's lines, line by line where the fact-check confirms it."""
        originals = [line.text for line in section.lines]
        try:
            with ctx.tracer.timed() as ms:
                out = structured(meter, prompts.report_wording_messages(originals, ctx.lang),
                                 prompts.ReportWording, max_tokens=min(2000, 60 * len(originals) + 200),
                                 validate=lambda o: _same_count(o, len(originals)))
        except LLMFallback as exc:
            ctx.tracer.fallback("report_wording", exc.reason, args={"step": section.step})
            return
        rejected = []
        for i, (line, draft, text) in enumerate(zip(section.lines, result.drafts, out.lines)):
            texts = [t for _, ts in draft.support for t in ts]
            if not line.supported or not texts or check_sentence(text, texts):
                rejected.append(i + 1)
                continue
            section.lines[i] = line.model_copy(update={"text": text})
        if rejected:
            ctx.tracer.fallback("report_wording", f"lines {rejected} of the LLM's wording are not supported by "
                                                  f"the clauses they cite: the rules' wording is kept",
                                args={"step": section.step})
        if len(rejected) < len(originals):
            ctx.tracer.emit("write", tool="report_wording", duration_ms=ms(), args={"step": section.step},
                            detail=f"llm: {len(originals) - len(rejected)} of {len(originals)} lines reworded")

    # ------------------------------------------------------------------ citations
    def _citations(self, sections: list[ReportSection], results: list[StepResult]) -> list[Citation]:
        known: dict[str, Citation] = {}
        for r in results:
            for c in r.citations:
                known.setdefault(c.chunk_id, c)
            for ch in r.clauses:
                for c in (ch.old, ch.new):
                    if c is not None:
                        known.setdefault(c.chunk_id, c)
        wanted = list(dict.fromkeys(cid for s in sections for line in s.lines for cid in line.citations))
        missing = [cid for cid in wanted if cid not in known]
        if missing:
            by_id = {c.chunk_id: c for c in self.engine.store.get_chunks(missing)}
            quotes = {cid: draft_quote for r in results for d in r.drafts
                      for cid, draft_quote in _quotes(d) if cid in by_id}
            for cid in missing:
                if cid in by_id:
                    known[cid] = cite_chunk(by_id[cid], quotes.get(cid, ""))
        return [known[cid] for cid in wanted if cid in known]


def _quotes(draft: Draft) -> list[tuple[str, str]]:
    """(chunk id, the fragment of its text the line quotes) for a one-clause line."""
    if len(draft.line.citations) != 1 or not draft.support:
        return []
    return [(draft.line.citations[0], draft.support[0][0])]


def _missing(draft: Draft) -> list[str]:
    out: list[str] = []
    for fragment, texts in draft.support:
        out.extend(check_sentence(fragment, [t for t in texts if t]))
    return out


def _same_count(out: prompts.ReportWording, n: int) -> None:
    if len(out.lines) != n:
        raise ValueError(f"expected {n} lines, got {len(out.lines)}")


def _cited(result: StepResult) -> list[str]:
    return list(dict.fromkeys([cid for d in result.drafts for cid in d.line.citations]
                              + [e.chunk_id for e in result.evidence]))


def _language(values: dict[str, str]) -> str:
    return "zh" if any(is_cjk(v) for v in values.values()) else "en"


def _unique_conflicts(conflicts: list[Any]) -> list[Any]:
    seen, out = set(), []
    for c in conflicts:
        key = (c.matter, tuple(sorted(v.chunk_id for v in c.values)))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out
