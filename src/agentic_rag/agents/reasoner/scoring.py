"""The evidence score of a candidate answer sentence: one function, several signals.

Every candidate sentence gets the same six signals, each in about [0, 1]:

- ``lexical``: the weighted share of the question's words the sentence mentions (its chunk's
  title and other sentences count 0.6; a word rarer in the evidence weighs more; synonyms,
  sub-words and abbreviations count, the user's ``retrieval.synonyms`` included), plus a tenth
  of the share of the question's own wording (bigrams) and 0.3 when it states the very value
  the question names.
- ``type``: how well it fits the answer type asked (:mod:`~agentic_rag.agents.reasoner.question`): for a
  value, 0.4 for stating any quantity and 0.6 more for the kind asked (多少天 -> a duration);
  for a name (who / which body / where), 0.6 when it can carry one and 0.3 more when it
  gives a proper name the question does not.
- ``dense``: the cosine of question and sentence's chunk under the embedder that retrieval
  uses (the vector leg's score, so no extra model call), mapped from [0.7, 1.0] to [0, 1].
  Absent (no embedder configured, or the vector leg never saw the chunk): the other weights
  are scaled up so that the score keeps its range.
- ``position``: ``1 / (1 + i)`` for the i-th sentence of its chunk (rules and news lead with
  what matters).
- ``rank``: ``1 / (1 + r)`` for the chunk's place r in the retriever's ranking.
- ``coverage``: the share of the question's things (nouns, not verbs or manners: 提交 and
  提出 are the same act, 公积金 and 医保 are not) that some evidence chunk mentions, weighted
  by rarity. A Chinese everyday word (房子, 孩子: ``text.terms.is_everyday``) is how people
  name what rule text calls by its own term (房屋, 未成年人), so it counts only when it names
  the thing asked for (学校的地址在哪里). Nor do the unit of an amount the question states
  ("more than six months": a policy may say 26 weeks), the difference a comparison asks
  about (A和B的区别) or a word the question uses as a verb ("if I resign"). The same for
  every sentence of one question, it decides between answering and abstaining, not which
  sentence answers.

One more signal orders sentences but does not decide whether to answer:

- ``slot``: 1 when the sentence says something new, of the type asked, in the place its
  question word stands, framed by the question's own words (``question.fills_slot``: "在哪里
  举行" and "在伦敦威斯敏斯特教堂举行", "起售价是多少" and "起售价3499元"). It says which of the
  sentences about the matter answers; it is no evidence that a sentence is about the matter
  ("出口交货值……增长36.1%" fills "工业增加值增长了多少" as well), so the score that abstention
  compares with its threshold leaves it out (``support``).

``score = (Σ wᵢ·sᵢ over present signals) · (Σ wᵢ / Σ present wᵢ) · factor + w_slot · slot · factor``, where ``factor``
(≤ 1.2) prefers the pinned version, the general rule over a special case the question does
not name, a sentence of the year asked over one that states only other years, and one that
states a total when the question asks one (一共 / "in total"). The weights are
``reasoner.weights`` in :class:`~agentic_rag.config.Settings`; the abstention threshold
``reasoner.abstain_below`` is calibrated on this score without the ``slot`` term
(``bench/calibrate.py``; the trace's ``evidence_score`` is that score).

    >>> from agentic_rag.config import ReasonerWeights
    >>> round(evidence_score(Signals(lexical=0.8, type=1.0, dense=None, position=1.0, rank=1.0, coverage=1.0),
    ...                      ReasonerWeights(lexical=1.0, type=0.25, dense=0.0, position=0.0, rank=0.04,
    ...                                      coverage=0.0)), 3)
    1.09
"""

from __future__ import annotations

from dataclasses import dataclass

from agentic_rag.config import ReasonerWeights

__all__ = ["Signals", "evidence_score", "evidence_scores", "dense_signal"]

#: e5-style cosines of unrelated text sit near 0.7; identical meaning near 1.0
DENSE_FLOOR, DENSE_CEIL = 0.7, 1.0


@dataclass(frozen=True)
class Signals:
    """The evidence signals of one candidate sentence (see the module docstring)."""

    lexical: float
    type: float
    dense: float | None
    position: float
    rank: float
    coverage: float = 1.0
    slot: float = 0.0


def dense_signal(cosine: float | None) -> float | None:
    """A vector-leg cosine mapped to [0, 1] (``None`` stays ``None``: no dense evidence)."""
    if cosine is None:
        return None
    return min(1.0, max(0.0, (cosine - DENSE_FLOOR) / (DENSE_CEIL - DENSE_FLOOR)))


def evidence_score(s: Signals, w: ReasonerWeights, factor: float = 1.0, *, support: bool = False) -> float:
    """The one evidence score of a sentence: weighted signals, an absent one's weight spread
    over the others, times the version/condition ``factor``; ``support``: without the ``slot``
    signal, which orders sentences but is no evidence of relevance (what abstention reads)."""
    score, without_slot = evidence_scores(s, w, factor)
    return without_slot if support else score


def evidence_scores(s: Signals, w: ReasonerWeights, factor: float = 1.0) -> tuple[float, float]:
    """(score, support) of :func:`evidence_score` at once: the sum is computed once."""
    total = w.lexical + w.type + w.dense + w.position + w.rank + w.coverage
    present = total - (w.dense if s.dense is None else 0.0)
    raw = (w.lexical * s.lexical + w.type * s.type + w.position * s.position + w.rank * s.rank
           + w.coverage * s.coverage + (w.dense * s.dense if s.dense is not None else 0.0))
    scale = total / present if present > 0 else 1.0
    base = raw * scale
    return (base + w.slot * s.slot) * factor, base * factor
