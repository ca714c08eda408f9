"""Abstention: when the evidence does not answer, say so and name what is missing.

The decision is one threshold on the one evidence score (:mod:`~agentic_rag.agents.reasoner.scoring`):
the Reasoner abstains when no sentence that can carry the asked answer type (a date for "when",
a number for "how much") scores ``reasoner.abstain_below`` or more. The threshold was chosen on a
broad calibration pool (``bench/calibrate.py``: the examples, the public dev sets, RGB's
all-noise questions as negatives), the same for every corpus and language. A question part
whose things no evidence mentions is named as missing while the rest is answered. The message
says what the documents would hold: a rule in rule text, information in news (``TOPIC_WORDS``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from agentic_rag.agents.reasoner.compose import render
from agentic_rag.agents.reasoner.question import asks_money, carries
from agentic_rag.text.stopwords import GAP_ZH, QUESTION_EN, QUESTION_ZH
from agentic_rag.text.terms import Term, content_terms, words
from agentic_rag.types import Answer, RouteDecision, TraceEvent

__all__ = ["MAX_MISSING_SHARE", "Verdict", "answer", "gap_phrase", "part_missing", "unstated", "verdict"]

#: a question part is out of scope when this share of its words is nowhere in the evidence
MAX_MISSING_SHARE = 0.25

#: what a gap names when the documents speak of the matter but state no answer of the type
#: asked ("未找到关于停车服务费的金额", "no date found on the renewal")
UNSTATED_WORDS: dict[str, dict[str, str]] = {
    "zh": {"date": "日期或时间", "number": "具体数值", "money": "金额", "person": "人员", "organization": "机构",
           "place": "地点", "name": "名称", "sanction": "处罚"},
    "en": {"date": "date", "number": "figure", "money": "amount", "person": "person", "organization": "body",
           "place": "place", "name": "name", "sanction": "penalty"},
}


class Verdict(NamedTuple):
    best: float  # the best score of a sentence that can state the answer type asked
    why: str  # why to abstain; empty to answer
    untyped: bool = False  # no sentence can state the answer type asked


def verdict(candidates: Sequence[tuple[str, float]], answer_type: str, question: str,
            threshold: float) -> Verdict:
    """The verdict on candidate (sentence, score) pairs, best first. A sentence that cannot
    state the kind of answer asked is no answer."""
    scores = [score for text, score in candidates if carries(answer_type, text, question)]
    best = scores[0] if scores else 0.0
    if not scores:
        return Verdict(best, f"no sentence states a {answer_type.replace('_', ' ')}", True)
    if best < threshold:
        return Verdict(best, f"best sentence scores {best:.2f} < {threshold:g}")
    return Verdict(best, "")


def unstated(answer_type: str, question: str, lang: str) -> str:
    """The word for what the documents leave unstated when none of their sentences can state
    the answer type asked: 金额 / "amount" for a sum of money, 日期或时间 / "date" for when."""
    key = "money" if answer_type == "number" and asks_money(question) else answer_type
    return UNSTATED_WORDS["zh" if lang == "zh" else "en"][key]


def part_missing(terms: Sequence[Term], missing: Sequence[Term], weights: Mapping[str, float]) -> bool:
    """Whether a question part is out of scope: at least :data:`MAX_MISSING_SHARE` of the weight
    of its words that decide coverage is nowhere in the evidence."""
    hard = [t for t in terms if not t.soft]
    if not hard:
        return False
    total = sum(weights[t.key] for t in hard)
    gone = sum(weights[t.key] for t in hard if t in missing)
    return gone / total >= MAX_MISSING_SHARE


def answer(question: str, route: RouteDecision, lang: str, gaps: list[str],
           trace: list[TraceEvent]) -> Answer:
    """The abstention, naming each gap."""
    joined = "；".join(gaps) if lang == "zh" else "; ".join(gaps)
    return Answer(question=question, text=render(lang, "abstain", missing=joined), status="abstained",
                  gaps=gaps, route=route, trace=trace)


def gap_phrase(question: str, terms: Sequence[Term], lang: str, topic: str) -> str:
    """The phrase of the question around its missing words: 公积金贷款额度最高是多少 with
    公积金 missing -> "未找到关于公积金贷款额度的规定"."""
    keys = {t.key for t in terms}
    tokens: list[str] = []
    for piece in re.split(r"[^\w\s'\-]+", question):
        tokens.extend(words(piece) + [""])  # punctuation ends a phrase
    runs: list[list[str]] = []
    run: list[str] = []
    for tok in tokens + [""]:
        low = tok.lower()
        content = bool(tok) and not re.fullmatch(r"[\d.,]+", tok) and \
            low not in QUESTION_EN and tok not in QUESTION_ZH and tok not in GAP_ZH and len(tok) >= 2
        if content:
            run.append(tok)
        elif run:
            runs.append(run)
            run = []
    picked = [r for r in runs if keys & {t.key for t in content_terms(" ".join(r))}]
    if not picked:
        picked = runs[:1]
    sep = "" if lang == "zh" else " "
    # a word the question says twice ("住酒店，酒店还能……") is named once
    phrase = ("、" if lang == "zh" else ", ").join(dict.fromkeys(sep.join(r) for r in picked)) or question.strip() \
        or ("该问题" if lang == "zh" else "this question")
    return render(lang, "gap", missing=phrase, topic=topic)
