"""Arbitration: which source wins a conflict, and the rule that decided.

Arbitration applies these rules in order; the first that separates the candidates decides and is
named in :attr:`Conflict.rule`:

1. ``pinned version 2023`` — the question asked for a version ("按照2023年的规定"); or
   ``the version before the change`` — it asked for the value before a change ("修改前……",
   "what did it use to be"): the older version wins.
2. ``override`` — a pin from the overrides file (:mod:`agentic_rag.agents.overrides`).
3. ``superseded`` — a superseded or repealed source never wins against a current one.
4. ``newer (≥1 year)`` — publish dates at least a year apart: the newer document wins.
5. ``authority×recency`` — authority weight (national > provincial > municipal > county >
   company, configurable) × ``1/(1+0.1·age_years)``.

When nothing separates them the rule is ``undecided`` and the Reasoner asks for review.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentic_rag.agents.overrides import OverrideRule
from agentic_rag.text.clauses import clause_matches
from agentic_rag.agents.reasoner.conflicts import Fact, matter_label, matter_terms, same_matter, stated
from agentic_rag.agents.reasoner.question import ASKS_FORMER
from agentic_rag.types import Chunk, Conflict, ConflictValue, RouteDecision

__all__ = ["Arbiter", "DEFAULT_AUTHORITY_WEIGHTS", "Decision", "authority_level"]

#: base weight per level of issuing authority (the seed article: State Council 0.9, province 0.7)
DEFAULT_AUTHORITY_WEIGHTS: dict[str, float] = {
    "national": 0.9, "provincial": 0.7, "municipal": 0.6, "county": 0.5, "company": 0.4,
    "unknown": 0.5,
}

_LEVEL_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("company", re.compile(r"公司|集团|企业|有限|股份|\b(?:company|inc|ltd|llc|corp|corporation|group|plc|gmbh)\b", re.I)),
    ("national", re.compile(
        r"国务院|中共中央|全国人民代表大会|全国人大|国家|中央|中华人民共和国|"
        r"(?:财政|教育|民政|司法|商务|公安|外交|国防|交通运输|水利|农业农村|文化和旅游|科学技术|工业和信息化|"
        r"自然资源|生态环境|住房和城乡建设|人力资源和?社会保障|人力资源社会保障|卫生健康|应急管理)部|"
        r"\b(?:state council|national|ministry|federal|central government)\b", re.I)),
    ("provincial", re.compile(
        r"省|自治区|直辖市|北京市|上海市|天津市|重庆市|\b(?:province|provincial|state of)\b", re.I)),
    ("municipal", re.compile(r"市|\b(?:city|municipal|municipality)\b", re.I)),
    ("county", re.compile(r"县|区|\b(?:county|district)\b", re.I)),
)


def authority_level(authority: str | None, title: str = "") -> str:
    """national / provincial / municipal / county / company / unknown, from the issuing
    authority's name (or the title when the authority is unknown): 国务院 -> national,
    XX省医疗保障局 -> provincial, XX市 -> municipal, XX有限公司 -> company."""
    for text in (authority or "", title or ""):
        if not text:
            continue
        for level, pattern in _LEVEL_PATTERNS:
            if pattern.search(text):
                return level
    return "unknown"


def _age_years(chunk: Chunk, today: dt.date) -> float | None:
    d = chunk.version_date
    return None if d is None else max(0.0, (today - d).days / 365.25)


@dataclass
class Decision:
    winner: Fact
    rule: str  # short rule key: pinned, former, override, superseded, newer, authority, tie
    detail: str = ""  # the pinned year or the override's reason
    candidates: list[Fact] = field(default_factory=list)  # every value that was weighed

    @property
    def label(self) -> str:
        return {
            "pinned": f"pinned version {self.detail}",
            "former": "the version before the change",
            "override": f"override: {self.detail}",
            "superseded": "superseded",
            "newer": "newer (≥1 year)",
            "authority": "authority×recency",
            "tie": "undecided",
        }[self.rule]


class Arbiter:
    """Decides conflicts with the rules above; pure given its inputs (``today`` included)."""

    def __init__(self, authority_weights: dict[str, float] | None = None,
                 overrides: Sequence[OverrideRule] = (), today: dt.date | None = None) -> None:
        self.custom_weights = {k: float(v) for k, v in (authority_weights or {}).items()}
        self.overrides = list(overrides)
        self.today = today or dt.date.today()

    # the weight of one source: a named authority in the settings beats the level default
    def weight(self, chunk: Chunk) -> float:
        name = (chunk.authority or "").lower()
        named = [(k, v) for k, v in self.custom_weights.items()
                 if k not in DEFAULT_AUTHORITY_WEIGHTS and name and k.lower() in name]
        if named:
            return max(named, key=lambda kv: len(kv[0]))[1]
        level = authority_level(chunk.authority, chunk.title)
        return self.custom_weights.get(level, DEFAULT_AUTHORITY_WEIGHTS[level])

    def score(self, chunk: Chunk, default_age: float) -> float:
        age = _age_years(chunk, self.today)
        return self.weight(chunk) / (1 + 0.1 * (default_age if age is None else age))

    def decide(self, group: Sequence[Fact], route: RouteDecision | None = None,
               matter: str = "") -> Decision:
        cands = list(group)
        pinned = (route.version if route else "latest") or "latest"
        if pinned != "latest":
            hit = [f for f in cands if f.chunk.is_version(pinned)]
            if hit and len(hit) < len(cands):
                if len(hit) == 1:
                    return Decision(hit[0], "pinned", pinned)
                cands = hit
        if route is not None and ASKS_FORMER.search(route.question):
            # "修改前……", "what did it use to be": the older of two dated versions answers
            dated = [f for f in cands if f.chunk.version_date]
            if len(dated) >= 2 and len({f.chunk.version_date for f in dated}) > 1:
                return Decision(min(dated, key=lambda f: (f.chunk.version_date, f.rank)), "former")
        for rule in self.overrides:
            if rule.matter and not same_matter(matter_terms(rule.matter), matter_terms(matter)):
                continue
            if not (rule.chunk_id or rule.doc_id or rule.title):
                dated = [f for f in cands if f.chunk.version_date]
                if len(dated) >= 2:
                    newer = rule.prefer == "newer"
                    pick = (max if newer else min)(dated, key=lambda f: f.chunk.version_date)
                    return Decision(pick, "override", rule.reason)
                continue
            hit = [f for f in cands if _override_hits(rule, f.chunk)]
            if hit and len(hit) < len(cands):
                return Decision(min(hit, key=lambda f: f.rank), "override", rule.reason)
        active = [f for f in cands if f.chunk.status == "active"]
        if active and len(active) < len(cands):
            if len(active) == 1:
                return Decision(active[0], "superseded")
            cands = active
        dated = [f for f in cands if f.chunk.version_date]
        if len(dated) == len(cands) and len(cands) >= 2:
            newest = max(cands, key=lambda f: f.chunk.version_date)
            others = [f for f in cands if f is not newest]
            if all((newest.chunk.version_date - f.chunk.version_date).days >= 365 for f in others):
                return Decision(newest, "newer")
        ages = [a for a in (_age_years(f.chunk, self.today) for f in cands) if a is not None]
        default_age = max(ages) if ages else 0.0
        scored = sorted(cands, key=lambda f: (-self.score(f.chunk, default_age), f.rank))
        if len(scored) >= 2 and abs(self.score(scored[0].chunk, default_age)
                                    - self.score(scored[1].chunk, default_age)) < 1e-9:
            return Decision(scored[0], "tie")
        return Decision(scored[0], "authority")

    def conflict(self, group: Sequence[Fact], route: RouteDecision | None = None) -> tuple[Conflict, Decision]:
        """The :class:`Conflict` record of a group, and the decision behind it."""
        first = min(group, key=lambda f: f.rank)
        matter = " ".join(first.matter)
        decision = self.decide(group, route, matter)
        decision.candidates = list(group)
        values = [
            ConflictValue(value=stated(f), chunk_id=f.chunk.chunk_id, title=f.chunk.title,
                          clause=f.chunk.clause, publish_date=f.chunk.version_date)
            for f in sorted(group, key=lambda f: (f is not decision.winner, f.rank))
        ]
        return Conflict(matter=matter_label(decision.winner) or matter, values=values,
                        winner=decision.winner.chunk.chunk_id, rule=decision.label), decision


def _norm_title(title: str) -> str:
    return re.sub(r"[《》〈〉\s\"“”]", "", title).lower()


def _override_hits(rule: OverrideRule, chunk: Chunk) -> bool:
    if rule.chunk_id:
        return chunk.chunk_id == rule.chunk_id
    if rule.doc_id and chunk.doc_id != rule.doc_id:
        return False
    if rule.title:
        want, have = _norm_title(rule.title), _norm_title(chunk.title)
        if not have or not (want == have or want in have):
            return False
    if rule.clause:
        return clause_matches(rule.clause, chunk.clause, chunk.clause_no)
    return True
