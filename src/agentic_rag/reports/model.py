"""What a report is made of: the contracts the report steps, the CLI, the server and the page share.

A :class:`Report` is a list of :class:`ReportSection` (one per template step), each with cited
:class:`ReportLine` s; ``clauses`` holds the per-clause comparison of ``compare_clauses``
(:class:`ClauseChange`), ``citations`` every clause a line cites (the same
:class:`~agentic_rag.types.Citation` an answer has, so the page draws the same evidence cards),
``trace`` every step as it ran.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from agentic_rag.types import Citation, Conflict, TraceEvent, Usage

ClauseStatus = Literal["unchanged", "changed", "added", "removed", "renumbered"]
ChangeKind = Literal["number", "date", "duration", "list", "condition", "obligation", "wording"]
ReportStatus = Literal["complete", "needs_review", "incomplete", "aborted"]

__all__ = ["ChangeKind", "ClauseChange", "ClauseStatus", "Report", "ReportLine", "ReportSection",
           "ReportStatus", "ValueChange"]


class ValueChange(BaseModel):
    """One value of a clause, old and new side by side (``""`` where a side has none)."""

    kind: ChangeKind
    old: str = ""
    new: str = ""
    #: the words around the value in the new (or old) text: what the value is about
    matter: str = ""
    #: a whole sentence added to (``old`` empty) or dropped from (``new`` empty) the clause
    whole: bool = False


class ClauseChange(BaseModel):
    """One clause of the comparison: how the old clause became the new one."""

    status: ClauseStatus
    old: Citation | None = None
    new: Citation | None = None
    #: character-bigram overlap of the two texts, labels left out (1.0 = same wording)
    similarity: float = 0.0
    changes: list[ValueChange] = Field(default_factory=list)
    #: a change of a number, date, duration, list, condition or obligation, or a clause
    #: added or removed: what the summary lists first
    material: bool = False
    #: for a removed clause whose text now stands inside another clause: that clause (its
    #: ``changes`` are then the values that changed on the way)
    merged_into: Citation | None = None
    #: for a kept clause: the removed clauses whose text it now holds
    merged_from: list[Citation] = Field(default_factory=list)

    @property
    def label(self) -> str:
        old = self.old.clause if self.old else None
        into = self.new or self.merged_into
        new = into.clause if into else None
        if old and new and old != new:
            return f"{old} → {new}"
        if old or new:
            return new or old or ""
        quote = (into or self.old).quote if (into or self.old) else ""
        return f"“{quote[:16]}…”" if len(quote) > 16 else f"“{quote}”"  # prose without clause labels


class ReportLine(BaseModel):
    """One sentence of a report and the chunk ids it stands on."""

    text: str
    citations: list[str] = Field(default_factory=list)
    supported: bool = True
    #: what the fact-check found missing from the cited text, when anything
    missing: list[str] = Field(default_factory=list)


class ReportSection(BaseModel):
    """The output of one step."""

    step: str
    op: str
    title: str
    status: Literal["done", "needs_review", "skipped", "failed"] = "done"
    lines: list[ReportLine] = Field(default_factory=list)
    #: how the step was verified and what the verification found ("cited: 12/12 lines")
    checks: list[str] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)


class Report(BaseModel):
    """A finished (or stopped) report."""

    template: str
    title: str
    inputs: dict[str, str] = Field(default_factory=dict)
    status: ReportStatus
    sections: list[ReportSection] = Field(default_factory=list)
    clauses: list[ClauseChange] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    conflicts: list[Conflict] = Field(default_factory=list)
    gaps: list[str] = Field(default_factory=list)
    trace: list[TraceEvent] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
