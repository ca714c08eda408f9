"""The Reasoner: evidence in, a cited answer out — the judge, never the author of facts.

``Reasoner(settings).reason(question, route, evidence) -> Answer`` runs without any model:

1. **Coverage.** The question's content words (question words and generic rule words aside;
   the Router's formal rewrite stands in for colloquial words) are looked up in the evidence —
   as written, as sub-words, as an abbreviation (医保 ~ 医疗保险) or through the synonym groups.
   Words are weighted by how rare they are in the evidence; when the *things* a question asks
   about (nouns, not verbs: 提交 and 提出 are the same act, 公积金 and 医保 are not) that no chunk
   mentions make up a quarter of a question sentence's weight, that sentence is out of scope.
   All sentences out of scope -> *abstained*, the missing element named in ``gaps``; some ->
   answered with the rest named.
2. **Claims.** Each evidence chunk is split into sentences (table rows for tables; a list item
   carries the sentence that introduces the list; title, number and date lines are skipped). A
   sentence scores the weighted share of the question's words it mentions (its chunk's title and
   other sentences count 0.6), plus small bonuses for stating the kind of value asked for (多少天
   -> a duration), the very value the question names, the kind of answer a question word wants
   (由谁 -> "由……审批"), and the question's own wording; a source of another version than the
   one asked for counts less, and so does a rule for a special case the question does not name
   ("临时外出就医人员跨省异地住院的，……" for "住院能报多少"), for a part of the year it does not
   ask about (上半年) and of another year than the one it names. A yes/no question (算不算, 是否,
   "Is ...") asks whether a rule applies, not for a value. Multi-hop: a passage about something
   the question does not name takes the words of the sentence that names it in another passage
   (the link), and is preferred when the question needs that hop; so does a sentence that names
   a thing the first hop's sentence introduced ("published by the X Society" -> "the first
   chair of the X Society") and says in its own words what the question asks of it. An untitled
   excerpt that names no subject ("The game was released on ...") is taken to be about the
   names the question gives, which it was found for. Scraped page chrome (menus,
   bylines) is no candidate; a list under a heading is one candidate for "which ones".
3. **Selection.** A question about two named things ("which came first, A or B", "are A and B
   both ...") is decided from the sentence about each (:mod:`~agentic_rag.agents.reasoner.comparison`).
   Otherwise one best sentence per sub-question (question sentences, the items of
   "……、……和……分别是多少", two things or years joined by 和 / and; a sentence that says far
   more of another part's words answers that part), then sentences that add
   question words the answer lacks (a sibling sentence of a clause already quoted first), then
   the link of a multi-hop answer and the clauses and tables the chosen sentences defer to
   ("具体比例详见第十二条", "as shown in the table below") when the evidence holds them.
4. **Conflicts.** Quantities of relevant sentences are compared across documents by matter
   (:mod:`~agentic_rag.agents.reasoner.conflicts`), another document's wording of a chosen sentence
   and an amending act's item that changes its clause included whatever they score (what the
   item changes the clause to is its statement), never two passages about two different named
   things; the arbitration winner replaces a losing sentence and the
   disagreement is stated with the winner, the loser and the rule that decided. A chosen
   sentence of a clause an amending item rewrites whole ("将第十一条第一款修改为：……") is replaced
   by that item, unless the question pins a version. A question about
   which source prevails ("……不一致，以哪个为准") leads with the disputed rule. A sentence that
   only defers to a clause the answer quotes ("as set out in Section 6") is dropped.
5. **Fact-check.** Every sentence's numbers and key terms must be in what it cites
   (:func:`Reasoner.verify`, usable on any answer); a sentence that is not is marked
   ``supported=False`` and the answer goes to ``needs_review``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import re
import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from agentic_rag.agents.overrides import OverrideRule, load_overrides
from agentic_rag.agents.reasoner import abstention, comparison
from agentic_rag.agents.reasoner import constants as C
from agentic_rag.agents.reasoner.arbitration import Arbiter, Decision
from agentic_rag.agents.reasoner.compose import (
    RULE_WORDS,
    STATE_WORDS,
    TOPIC_WORDS,
    is_rule_text,
    render,
)
from agentic_rag.agents.reasoner.conflicts import (
    NOT_CLASS,
    Fact,
    aligned_conflicts,
    facts_of,
    find_conflicts,
    matter_terms,
    replaced_conflict,
    rows_apart,
)
from agentic_rag.agents.reasoner.factcheck import check_sentence
from agentic_rag.agents.reasoner.question import (
    CONSTRAINING,
    QUOTED_NAME,
    Asked,
    analyze,
    asked_meaning,
    carries,
    ASKS_FORMER,
    PAY_CYCLE,
    fills_slot,
    is_proper_name,
    lists_items,
    measured_kind,
    names_new,
    new_quantity_kinds,
    ordinals,
    quotes_new_name,
    reads_as_procedure,
    scene,
    split_asks,
    states_none,
    states_whole,
    subject_of,
    unasked_kind,
    unstamped,
)
from agentic_rag.agents.reasoner.scoring import Signals, dense_signal, evidence_score, evidence_scores
from agentic_rag.agents.retriever.multihop import needs_hop
from agentic_rag.agents.vocabulary import TextCover, Vocabulary, packaged_vocabulary, shared_cover
from agentic_rag.config import ReasonerSettings
from agentic_rag.ingest.edges import amended_clauses
from agentic_rag.ingest.metadata import promulgation
from agentic_rag.text.clauses import (ADDS_OR_DROPS, ASKS_PENALTY, BREACH_CUE, CROSS_REFERENCE, SELF_NAME,
                                      amended_title, breached_clauses, clause_matches, clause_number,
                                      item_references, item_text)
from agentic_rag.text.language import is_cjk
from agentic_rag.text.names import abbreviates, document_titles, extract_names, fold
from agentic_rag.text.numerals import cn_to_int
from agentic_rag.text.quantities import CLOCK_TIME, extract_quantities, quantity_key, rate_periods, same_value, within
from agentic_rag.text.sentences import (
    LIST_ITEM,
    is_heading,
    is_numbered_title,
    label_length,
    split_sentences,
    strip_label,
)
from agentic_rag.text.similarity import char_bigrams, containment, jaccard, mixed_bigrams
from agentic_rag.text.stopwords import QUESTION_ZH
from agentic_rag.text.terms import (
    A_NOT_A,
    Term,
    answer_classes,
    content_terms,
    english_verbs,
    irregular_form,
    is_everyday,
    is_nounish,
    norm,
    segment,
    stem,
    word_tag,
)
from agentic_rag.text.tokenize import dictionary_generation
from agentic_rag.types import (
    Answer,
    AnswerSentence,
    Chunk,
    Citation,
    Claim,
    Conflict,
    ConflictValue,
    Evidence,
    Quantity,
    RouteDecision,
    TraceEvent,
)

__all__ = ["Reasoner"]

@dataclass(eq=False)  # compared by identity: one object per candidate sentence
class _Sentence:
    """A candidate claim: one sentence (or table row) of one evidence chunk."""

    ev: Evidence
    idx: int  # position of the evidence in the ranked list
    text: str  # what the answer shows (clause label stripped, trimmed)
    quote: str  # the sentence as written in the chunk
    offset: int  # start of the quote in chunk.text, -1 when it is not verbatim (table rows)
    cover: TextCover
    hits: set[str] = field(default_factory=set)
    ctx_hits: set[str] = field(default_factory=set)
    score: float = 0.0
    extra_text: str = ""  # table cells, when the row is not verbatim in chunk.text
    factor: float = 1.0  # version preference of its source
    bigram: float = 0.0  # share of the question's character bigrams it contains
    head_hits: set[str] = field(default_factory=set)  # words its document title / headings give
    kinds: set[str] = field(default_factory=set)  # kinds of the quantities it states
    position: int = 0  # its place among its chunk's sentences
    dense: float | None = None  # the dense signal of its chunk (scoring.dense_signal)
    has_quantity: bool = False
    matches_asked: bool = False
    in_band: frozenset[int] = frozenset()  # the question's values it states a band of (£25,000 to £100,000)
    negates_asked: bool = False  # it says "not" of what the question says "not" of (尚未实施 / 还没有实施)
    fills_slot: bool = False  # it says something where the question's question word stands
    #: the text of other clauses' items it names by number ("本条例第十一条第（五）项"), a line each
    items: str = ""
    support: float = 0.0  # its score as evidence that it is about the matter (abstention reads it)
    #: the sentence of another passage that names this one's subject (the hop before it)
    link: _Sentence | None = None
    #: the introducing line its text is shown after (a list item: "The following are not reimbursable: ")
    lead: str = ""

    @property
    def chunk(self) -> Chunk:
        return self.ev.chunk


@dataclass
class _Part:
    """One sub-question ("…多少？由谁审批？" has two)."""

    terms: list[Term]
    wants: Asked
    focus: frozenset[str] = frozenset()  # keys of the listed item this part asks about
    needs_value: bool = False  # only a sentence that states a quantity can answer it
    asked: frozenset[int] | None = None  # which of the question's values it names (None: all)


@dataclass
class _Plan:
    """The question's words, their weights, and what the evidence covers."""

    terms: list[Term]
    weights: dict[str, float]
    parts: list[_Part]  # sub-questions to select a sentence for
    pieces: list[_Part]  # the question's sentences, each judged for coverage on its own
    missing: list[Term]
    wants: Asked  # what the whole question asks for (agents/reasoner/question.py)
    asked: list[Quantity]  # values named in the question ("报销比例是80%的药品")
    bigrams: frozenset[str] = frozenset()
    coverage: float = 1.0  # weighted share of the question's things some chunk mentions
    question: str = ""
    asks_conflict: bool = False  # "……和国家规定不一致，以哪个为准？": the answer is an arbitration
    hop: bool = False  # it asks about a thing it does not name ("the city where X was born")
    classes: frozenset[str] = frozenset()  # the nouns its question word asks for ("which countries")
    #: per chunk id, the keys of the question's names it mentions without writing them out
    #: (:func:`_implied_names`)
    implied: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the keys of the words naming the thing it asks for (:func:`_asked_thing`)
    asked_keys: frozenset[str] = frozenset()
    #: the keys of the units of the amounts it states ("two-week": week)
    measures: frozenset[str] = frozenset()
    #: the keys of its verbs (设在, 举行, "resign"): the act asked about, which documents word many ways
    acts: frozenset[str] = frozenset()
    #: it asks for the value before a change ("修改前", "what did it use to be"): :data:`ASKS_FORMER`
    former: bool = False


def _is_soft(key: str, plan: _Plan) -> bool:
    return next((t.soft for t in plan.terms if t.key == key), True)


class Reasoner:
    """Deterministic evidence-chain reasoning; see the module docstring for the steps."""

    def __init__(self, settings: ReasonerSettings | None = None, *, today: dt.date | None = None,
                 overrides: Sequence[OverrideRule] | None = None,
                 vocabulary: Vocabulary | None = None) -> None:
        self.settings = settings or ReasonerSettings()
        # the synonyms a question word may be written as (the user's groups included)
        self.vocabulary = vocabulary or packaged_vocabulary()
        if overrides is None:
            overrides = load_overrides(self.settings.overrides_file) if self.settings.overrides_file else []
        self.overrides = list(overrides)
        self._split_cache: dict[tuple[str, str, str, bool], list[tuple[str, str, int, TextCover, str, str]]] = {}
        self.arbiter = Arbiter(self.settings.authority_weights, self.overrides, today)

    # -- public ----------------------------------------------------------------------------
    def reason(self, question: str, route: RouteDecision, evidence: list[Evidence]) -> Answer:
        """Answer ``question`` from ``evidence`` only; every sentence cites its chunks."""
        t0 = time.perf_counter()
        lang = _language(question, route)
        usable = _about_named(_of_edition([e for e in evidence if e.score >= self.settings.min_evidence_score]
                                          [:C.MAX_EVIDENCE], question), question)
        plan = self._plan(question, route, usable)
        trace: list[TraceEvent] = []
        chunks = [e.chunk for e in usable]
        # the gap phrase says what the documents would hold: a rule in rule text, else information
        topic = TOPIC_WORDS[lang]["rules" if is_rule_text([c.title for c in chunks], [c.clause for c in chunks])
                                  else "other"]

        if not usable:
            return self._abstain(question, route, lang, [abstention.gap_phrase(question, plan.terms, lang, topic)],
                                 t0, trace, "no evidence", 0.0)
        candidates = self._candidates(usable, plan, route, lang)
        compared = self._compare(question, route, lang, candidates)
        if compared is not None:
            answer = self.verify(compared, usable)
            trace.append(TraceEvent(kind="reason", duration_ms=(time.perf_counter() - t0) * 1000,
                                    args=self._score_args(max((s.support for s in candidates), default=0.0)),
                                    evidence_ids=[c.chunk_id for c in answer.citations],
                                    detail=f"two-thing question decided: {answer.sentences[0].text[:60]}"))
            return answer.model_copy(update={"trace": [*answer.trace, *trace]})
        by_support = sorted(candidates, key=lambda s: -s.support)
        best, why, untyped = abstention.verdict([(s.text, s.support) for s in by_support], plan.wants.answer_type,
                                                plan.question, self.settings.abstain_below)
        lead = next((s for s in candidates if carries(plan.wants.answer_type, s.text, plan.question)), None)
        signals = self._lead_signals(lead, plan, usable)
        if why:
            # the documents speak of the matter but state no answer of the type asked: the gap
            # names that ("未找到关于停车服务费的金额"), not a missing rule
            gap = abstention.gap_phrase(question, plan.missing or plan.terms, lang,
                                        abstention.unstated(plan.wants.answer_type, plan.question, lang)
                                        if untyped and not plan.missing else topic)
            return self._abstain(question, route, lang, [gap], t0, trace, why, best, signals)
        # the very thing a Chinese question asks the value of ("门票多少钱", "几天带薪考试假",
        # "注册资本有什么要求") that no evidence mentions: whatever else scores, the documents do
        # not state it (English questions name what they ask too loosely for this: "over the
        # weekend", "a writer")
        named = [t for t in plan.missing if t.key in plan.asked_keys and _valued(t.text, question)]
        if named and len(named) == len(plan.asked_keys):
            gap = abstention.gap_phrase(question, named, lang, topic)
            return self._abstain(question, route, lang, [gap], t0, trace, "the thing asked for is in no evidence",
                                 best, signals)
        # what an English question asks the amount of, of a kind no evidence names while the
        # evidence speaks of the thing ("paid sick leave" over a parental-leave policy: the
        # documents' leave is another kind); a missing head word alone may be a paraphrase
        # ("holiday" for "annual leave")
        kind = measured_kind(question) if lang == "en" else ()
        unlike = [t for t in plan.missing if not t.soft and t.text.lower() == kind[0]] \
            if len(kind) == 2 and kind[1] not in {t.text.lower() for t in plan.missing} else []
        if unlike:
            gap = abstention.gap_phrase(question, unlike, lang, topic)
            return self._abstain(question, route, lang, [gap], t0, trace,
                                 "the kind of thing asked for is in no evidence", best, signals)
        # a question part whose things no chunk mentions is named as missing, the rest answered
        out_parts = [p for p in plan.pieces
                     if abstention.part_missing(p.terms, plan.missing, plan.weights)]
        if len(out_parts) == len(plan.pieces):
            out_parts = []

        if plan.asks_conflict:
            candidates = self._prefer_disputed(candidates)
        chosen, extra = self._select(_current(candidates, route, plan.former), plan)
        conflicts, decisions, chosen, touched = self._conflicts(candidates, chosen, plan, route)
        if route.version in ("", "latest") and not plan.former:
            # "按照2019年的条例", "修改前": the version asked is the one to quote
            chosen = _as_in_force(chosen, candidates)
        chosen = self._with_references(chosen, candidates, usable, plan, route, lang)
        # the direct answer first; sentences that only add words or siblings while it stays short
        limit = self.settings.max_answer_chars * plan.wants.asks * (1.0 if lang == "zh" else 1.5)
        chosen = _within(chosen, extra, int(limit), lang)
        # a disagreement reported for a clause the answer no longer quotes (an added sentence
        # that did not fit) concerns nothing the answer says
        quoted = {s.chunk.chunk_id for s in chosen}
        kept = [i for i, ids in enumerate(touched) if ids is None or ids & quoted]
        conflicts, decisions = [conflicts[i] for i in kept], [decisions[i] for i in kept]

        answer = self._compose(question, route, lang, chosen, conflicts, decisions)
        gaps = [abstention.gap_phrase(question, [t for t in plan.missing if t in p.terms] or p.terms, lang, topic)
                for p in out_parts]
        if gaps:
            note = render(lang, "partial", missing="、".join(gaps) if lang == "zh" else "; ".join(gaps))
            answer = answer.model_copy(update={"gaps": _dedupe(gaps),
                                               "text": _join(lang, [answer.text, note])})
        answer = self.verify(answer, usable)
        trace.append(TraceEvent(
            kind="reason", duration_ms=(time.perf_counter() - t0) * 1000, args=self._score_args(best, signals),
            evidence_ids=[c.chunk_id for c in answer.citations],
            detail=f"{len(candidates)} candidate sentences, {len(answer.sentences)} used, "
                   f"{len(conflicts)} conflicts, status {answer.status}",
        ))
        return answer.model_copy(update={"trace": [*answer.trace, *trace]})

    def claims(self, question: str, route: RouteDecision, evidence: list[Evidence]) -> list[Claim]:
        """The relevant claims of each evidence chunk (best first), with matter and quantities."""
        plan = self._plan(question, route, evidence)
        out: list[Claim] = []
        for s in self._candidates(evidence[:C.MAX_EVIDENCE], plan, route, _language(question, route)):
            if s.score <= 0:
                continue
            facts = facts_of(s.quote, s.chunk, s.idx)
            matter = " ".join(facts[0].matter) if facts else " ".join(
                t.text for t in content_terms(s.text)[:4])
            out.append(Claim(chunk_id=s.chunk.chunk_id, text=s.text, matter=matter,
                             quantities=extract_quantities(s.text)))
        return out

    def verify(self, answer: Answer, evidence: Sequence[Evidence]) -> Answer:
        """Fact-check every sentence against the text of the chunks it cites.

        A sentence whose numbers or key terms are not in its cited text (or that cites nothing)
        is marked ``supported=False`` and the answer's status becomes ``needs_review``. Usable on
        any answer, such as one an LLM wrote from the same evidence."""
        chunks = {e.chunk.chunk_id: e.chunk for e in evidence}
        extra_meta = [c.rule for c in answer.conflicts]  # an override's reason is the user's own text
        checked: list[AnswerSentence] = []
        problems: list[str] = []
        for s in answer.sentences:
            cited = [chunks[c] for c in s.citations if c in chunks]
            if not cited:
                checked.append(s.model_copy(update={"supported": False}))
                problems.append(f"{s.text[:30]}: no citation")
                continue
            texts = [c.text + "\n" + _table_text(c) for c in cited]
            meta = [m for c in cited for m in _meta_of(c)] + extra_meta
            missing = check_sentence(s.text, texts, meta)
            checked.append(s.model_copy(update={"supported": not missing}))
            if missing:
                problems.append(f"{s.text[:30]}: {', '.join(missing[:5])}")
        status = answer.status
        if problems and status == "answered":
            status = "needs_review"
        trace = [*answer.trace, TraceEvent(
            kind="verify", evidence_ids=list(chunks),
            detail="all sentences supported" if not problems else "unsupported: " + "; ".join(problems),
        )]
        return answer.model_copy(update={"sentences": checked, "status": status, "trace": trace})

    # -- planning --------------------------------------------------------------------------
    def _plan(self, question: str, route: RouteDecision, evidence: Sequence[Evidence]) -> _Plan:
        q_terms = self._with_synonyms(content_terms(question), question)
        asks_conflict = bool(_ASKS_CONFLICT.search(question))
        if asks_conflict:
            # "不一致", "为准", "prevail" say that sources disagree, not what about
            q_terms = [replace(t, soft=True) if _CONFLICT_WORDS.search(t.text) else t for t in q_terms]
        if (former := ASKS_FORMER.search(question)) is not None:
            # "修改前", "before the change": which version is asked, not a thing of its own
            q_terms = [replace(t, soft=True) if t.text.lower() in former.group(0).lower() else t for t in q_terms]
        # the noun a question word asks about names the answer's class, which documents state
        # an instance of: "哪个部门" is answered by 公安机关, "which countries" by "India, Peru";
        # a question is not out of scope for lacking it
        classes = answer_classes(question)
        verbs = english_verbs(question)  # "can't I bring": an action, often worded otherwise
        # the relation that leads from a named thing to the next hop ("Akinoshu Kenji's
        # birthplace", "Hello Love's performer") is what the next passage is found by, not a
        # word the passages write: "born ... in Hiroshima", "'Hello Love' was Snow's"
        relations = {m.group(1).lower() for m in _POSSESSED.finditer(question)} if needs_hop(question) else set()
        # the words of a clause label ("Section", "clause") are the clause, not things of their own
        labels = [c.lower() for c in route.slots.clauses]
        q_terms = [t for t in q_terms if not any(t.text.lower() in label for label in labels)]
        query = route.query.strip() if route.query else ""
        query_cover = TextCover(query) if query and query != question.strip() else None
        terms: list[Term] = []
        base: dict[str, float] = {}
        named = {x.lower() for x in (*route.slots.places, *route.slots.entities)}
        whole = analyze(question)
        listed = whole.answer_type == "list"
        everything = TextCover("\n".join(
            f"{e.chunk.title}\n{e.chunk.text}\n{_table_text(e.chunk)}" for e in evidence))
        # a word and the single character the segmenter split off it are one name when the
        # evidence writes them together: 人民 + 路 -> 人民路 (not 人民政府), 澄 + 阳湖 -> 澄阳湖
        bodies = "".join(e.chunk.text for e in evidence)  # titles name documents, not things
        joined = {part: whole for whole, part in _split_names(question) if whole in bodies}
        q_terms = list({t.key: t for t in (Term(joined[t.key], joined[t.key], False, True) if t.key in joined else t
                                           for t in q_terms)}.values())
        comparing = whole.answer_type == "comparison"
        for t in q_terms:
            # "A和B的区别": the difference is what is asked of the two things, which the
            # documents state each on its own
            soft = t.soft or comparing and bool(_DIFFERENCE.search(t.text))
            # the Router rewrote a colloquial word into formal terms: the rewrite is what counts,
            # unless the documents say it the user's way ("time off" where a policy says so);
            # when they say it neither way, the thing is not in them (过户 -> 转移登记)
            if query_cover is not None and not query_cover.covers(t) and not everything.covers(t) \
                    and self._rewrite_found(t, question, everything):
                soft = True
            t = replace(t, soft=soft)
            terms.append(t)
            if soft or listed and t.text.lower() in classes:
                # "which countries", "what kinds of behaviour": the items answer, not the class
                base[t.key] = C.SOFT_TERM
            elif t.text.lower() in named or (t.cjk and len(t.text) >= 2 and any(t.text in n for n in named)):
                base[t.key] = C.NAMED_TERM
            else:
                base[t.key] = 1.0
        rewrites: set[str] = set()
        if query_cover is not None:
            # the Router's formal rewrite of colloquial words ("能报多少" -> 报销比例) ranks like
            # the question's own words, but a question is not out of scope for lacking it; when
            # the documents say it the user's way, the user's words rank and the rewrite helps
            replaced = [t for t in q_terms if not query_cover.covers(t)]
            said = bool(replaced) and all(everything.covers(t) for t in replaced)
            for t in self._with_synonyms(content_terms(query), query):
                if t.key not in base:
                    rewrites.add(t.key)
                    terms.append(replace(t, soft=True))
                    base[t.key] = C.SOFT_TERM if t.soft or said else 1.0
        # two single characters in a row are an unknown word (起付 of 起付标准) when the evidence
        # writes them together; otherwise they are colloquial filler (先办) and stay dropped
        for pair in _unknown_pairs(question):
            if pair not in base and pair in everything.text:
                terms.append(Term(pair, pair, False, True))
                base[pair] = 1.0
        # years the question joins ("2022年和2023年的冠军") are what tells its parts apart: each
        # is a word of its part (generic otherwise: a year does not decide scope)
        for year in _joined_years(question):
            t = Term(year, _YEAR_KEY + year, True, False)
            if t.key not in base:
                terms.append(t)
                base[t.key] = C.SOFT_TERM
        # a clause the question names ("第三十九条", "Section D.4") is a thing it asks about: only
        # that clause covers it, by its label, whatever its text repeats; a clause it names as
        # the rule applied ("违反第十五条规定的", "under Section 5") is also covered by the clause
        # that refers to it (the penalty, the exception)
        for label in route.slots.clauses:
            prefix = _CITED_KEY if _cites_clause(question, label) else _CLAUSE_KEY
            t = Term(label, prefix + clause_number(label), False, is_cjk(label))
            if t.key not in base:
                terms.append(t)
                base[t.key] = C.NAMED_TERM
        # rarer in the evidence -> more telling (a word no chunk mentions weighs the most)
        covers = [shared_cover(f"{e.chunk.title}\n{e.chunk.text}\n{_table_text(e.chunk)}") for e in evidence]
        implied = {e.chunk.chunk_id: _implied_names(e.chunk.title, e.chunk.text, question, e.chunk.authority or "")
                   for e in evidence}
        n = len(covers)
        # the scene a person sets before asking ("家里水管爆了，", "if I resign with holiday
        # left,") is their own case in their own words, which rules state in general terms: a
        # thing only the scene names does not put the question out of scope, nor is it what
        # the question asks about; a named place or body does ("在北京，……")
        setting, asking = scene(question)
        asked_keys = _asked_thing("，".join(asking) or question, whole, terms)
        # the unit of an amount the question states ("more than six months", "三个月") measures
        # it: the documents may state the same span in other units (26 weeks)
        stated = extract_quantities(question)
        measures = {t.key for q in stated for t in content_terms(q.raw)}
        priced = _priced_things(question, stated, evidence)
        scenic: set[str] = set()
        if setting:
            set_cover, ask_cover = TextCover(" ".join(setting)), TextCover(" ".join(asking))
            scenic = {t.key for t in terms if base[t.key] != C.NAMED_TERM and set_cover.covers(t)
                      and not ask_cover.covers(t)}
        weights: dict[str, float] = {}
        missing: list[Term] = []
        dfs = {t.key: sum(1 for c, e in zip(covers, evidence)
                          if _covers(c, t, e.chunk) or t.key in implied[e.chunk.chunk_id])
               for t in terms}
        # an everyday word (房子, 孩子, 医院) is how a person names what rule text calls by its own
        # term (房屋, 未成年人, 医疗机构) when the evidence is about some other thing the question
        # names (or the formal word the Router put for it): then, missing, it does not put the
        # question out of scope, unless it is the very thing asked for (……的起点)
        anchored = any(dfs[t.key] and (t.key in rewrites or _thing_word(t)) for t in terms)
        for t in terms:
            df = dfs[t.key]
            weights[t.key] = base[t.key] * (1.0 + math.log((n + 1) / (df + 1)))
            if df == 0 and not t.soft:
                everyday = anchored and t.cjk and t.key not in asked_keys and is_everyday(t.text)
                if _thing_word(t) and not everyday and t.text.lower() not in classes | relations \
                        and t.text.lower() not in verbs and t.key not in measures | scenic | priced:
                    missing.append(t)
                else:
                    # only a missing *thing* makes a question out of scope: actions and manners
                    # are often worded differently (提交 / 提出, 一致 / 不同), and weigh less
                    weights[t.key] *= C.UNSEEN_ACTION
        parts: list[_Part] = []
        pieces: list[_Part] = []

        asks = split_asks(question)
        # the kinds of value each part asks for itself (a yes/no part names things, not a value)
        own_kinds = [a.kinds if a.quantity or a.answer_type == "date" else frozenset()
                     for a in map(analyze, asks)]

        def wanted(piece: str) -> Asked:
            # the kind of value the whole question names counts for each part ("……要给补贴吗？
            # 给多少？": the amount is money), unless another part asks it itself ("保护范围是
            # 多大？……多久组织一次普查？": the period is the second part's)
            asked = analyze(piece)
            others = frozenset().union(*(k for k in own_kinds if k != asked.kinds))
            return dataclasses.replace(asked, kinds=asked.kinds | (whole.kinds - others))

        asked = [q for q in stated if not (q.kind == "date" and q.unit == "year")]
        for at, piece in enumerate(asks):
            keys = {t.key for t in content_terms(piece)}
            part = [t for t in terms if t.key in keys or (t.cjk and t.text in piece)]
            wants = wanted(piece)
            values = frozenset(i for i, a in enumerate(asked) if a.raw in piece) if part else frozenset()
            if part:
                pieces.append(_Part(part, wants, asked=values))
            known = {t.key for t in parts[-1].terms} if parts else set()
            follows = bool(parts) and (wants.quantity or wants.answer_type in CONSTRAINING)
            if follows and all(t.key in known and not _thing_word(t) for t in part):
                # a follow-up that names no subject of its own ("……要给补贴吗？给多少？",
                # "……要办什么手续？在哪办？") or only repeats the previous part's action
                # ("……需要什么材料？能提取多少？") asks for the amount (the place, the date ...)
                # of the previous part's subject, and wants its own sentence: one that states it
                parts.append(_Part(parts[-1].terms, wants, needs_value=wants.quantity, asked=values))
                continue
            if follows and part and not any(_thing_word(t) for t in part):
                # one that names only an action of its own ("……的主会场设在哪里？是哪天开幕的？")
                # asks it of the previous part's subject (not of its 主会场), not of whatever
                # else opened
                own, subject = {t.key for t in part}, subject_of(asks[at - 1])
                part = [t for t in parts[-1].terms if _thing_word(t) and t.key not in own
                        and t.text in subject] + part
            if not part:
                continue
            items = _listed_items(piece)
            # each listed item is asked what the question asks ("分别是什么时候": a date), an
            # amount unless it says
            item_wants = wants if wants.answer_type in CONSTRAINING else Asked("number", whole.kinds, quantity=True)
            words = _coordinated(piece)
            if len(words) == len(items) >= 2 and all(w in item for w, item in zip(words, items)):
                # "女子和男子500米速度滑冰金牌分别是谁": the two words are the items, the
                # phrases around them are asked of both
                items, item_wants = words, wants
            if len(items) < 2:
                # "特斯拉和比亚迪的交付量", "开幕和闭幕时间": one value asked of each of two
                # things joined by 和 / and, each its own sub-question
                items, item_wants = (_joined_years(piece) or words), wants
            item_terms = [[t for t in (*part, *terms) if t.text == item or not t.key.startswith(_YEAR_KEY)
                           and t in part and (t.text in item or t.key in {x.key for x in content_terms(item)})]
                          for item in items]
            if len(items) < 2 or not all(item_terms):
                parts.append(_Part(part, wants, asked=values))
                continue
            # "起付标准、支付比例和最高支付限额分别是多少": one sub-question per listed item,
            # each with the words the items share ("在职职工在三级医院住院")
            shared = [t for t in part if not any(t in it for it in item_terms)]
            for item, it in zip(items, item_terms):
                # an item that names a kind of answer asks for that kind ("坠毁的时间和地点":
                # a date, then a place)
                own = analyze(item)
                kind = dataclasses.replace(item_wants, answer_type=own.answer_type, kinds=own.kinds,
                                           quantity=own.quantity) if own.answer_type in CONSTRAINING else item_wants
                parts.append(_Part(shared + it, kind, frozenset(t.key for t in it), asked=values))
        if not parts and terms:
            parts = [_Part(terms, whole)]
        pieces = pieces or parts
        def covered(part_terms: Sequence[Term]) -> float:
            hard = [t for t in part_terms if not t.soft and _thing_word(t)]
            gone = sum(weights[t.key] for t in hard if t in missing)
            return 1.0 - gone / sum(weights[t.key] for t in hard) if hard else 1.0

        # the best-covered sub-question counts: the others are named as gaps of a partial answer
        coverage = max((covered(p.terms) for p in pieces), default=covered(terms))
        return _Plan(terms, weights, parts[:C.MAX_SENTENCES], pieces[:C.MAX_SENTENCES], missing,
                     whole, asked, mixed_bigrams(question), coverage=coverage, question=question,
                     asks_conflict=asks_conflict, hop=needs_hop(question), classes=frozenset(classes),
                     implied=implied, asked_keys=asked_keys, measures=frozenset(measures),
                     acts=frozenset(t.key for t in terms if _act_word(t)), former=former is not None)

    def _rewrite_found(self, t: Term, question: str, evidence: TextCover) -> bool:
        """Whether the evidence says what the Router's colloquial rule rewrote a question word
        to (过户 -> 转移登记): when it says neither, the thing is not in the evidence."""
        formal = [v for k, v in self.vocabulary.colloquial.items() if t.text in k and k in question]
        return not formal or any(all(evidence.covers(p) for p in v.split()) for v in formal)

    def _with_synonyms(self, terms: Sequence[Term], text: str) -> list[Term]:
        """Terms with their synonyms; an English word inside a phrase of a synonym group
        ("pass" of "commuter pass") takes the phrase's synonyms."""
        phrases = self.vocabulary.phrases_in(text)
        out = []
        for t in terms:
            alts = self.vocabulary.synonyms(t.text)
            for phrase, others in phrases.items():
                if not t.cjk and t.text.lower() in phrase.split():
                    alts |= others
            out.append(replace(t, alts=tuple(sorted(alts))))
        return out

    # -- candidates ------------------------------------------------------------------------
    def _candidates(self, evidence: Sequence[Evidence], plan: _Plan, route: RouteDecision,
                    lang: str) -> list[_Sentence]:
        out: list[_Sentence] = []
        asked = TextCover(f"{route.question}\n{route.query}")
        # a chunk the vector leg did not rank, when it ranked others, is far from the question
        dense_leg = any("vector" in ev.scores for ev in evidence)
        # what the question pins down, against which each sentence is weighed
        years = {str(y) for y in route.slots.years} - {route.version}
        counted = ordinals(route.question)
        periods = rate_periods(route.question) if plan.wants.quantity else frozenset()
        negated = _negated(route.question)
        asks_total = plan.wants.quantity and bool(_TOTAL.search(route.question))
        anchors = [t for t in plan.terms if not t.soft and t.key not in plan.acts]
        asks_making = bool(_ASKS_MAKING.search(route.question))
        asks_purpose = bool(_ASKS_PURPOSE.search(route.question))
        asks_penalty = bool(ASKS_PENALTY.search(route.question))
        per_doc = Counter(e.chunk.doc_id for e in evidence)
        for idx, ev in enumerate(evidence):
            chunk = ev.chunk
            title = unstamped(chunk.title)  # a snippet's first line may be its title, stamp and all
            if title and len(title) <= C.TITLE_ONLY_CHARS and per_doc[chunk.doc_id] > 1 and not _STATES.search(title) \
                    and _squeezed(unstamped(chunk.text)) == _squeezed(title):
                # the chunk that only bears the title of a document whose clauses are here too
                # names the document, it states nothing (a one-line snippet may be all there is)
                continue
            head = shared_cover(" ".join([title, " ".join(chunk.path), chunk.clause or ""]))
            context = shared_cover(" ".join([title, " ".join(chunk.path), chunk.clause or "",
                                             unstamped(chunk.text), _table_text(chunk)]))
            # the chunk's context and heading are the same for each of its sentences: the
            # question words they mention are looked up once per chunk
            implied = plan.implied.get(chunk.chunk_id, frozenset())
            in_context = {t.key for t in plan.terms if _covers(context, t, chunk) or t.key in implied}
            in_head = {t.key for t in plan.terms if t.key in in_context and _covers(head, t, chunk)}
            factor = _version_factor(chunk, route)
            dense = dense_signal(ev.scores["vector"]) if "vector" in ev.scores else (0.0 if dense_leg else None)
            for pos, sent in enumerate(self._sentences(chunk, lang, plan.wants.enumeration)):
                if not asks_making and _is_promulgation_note(sent.quote):
                    continue  # when and by whom the act was adopted answers only a question about that
                if not asks_purpose and _PURPOSE_CLAUSE.match(sent.quote):
                    continue  # "为了……，制定本办法": why the act was made, and only that
                sent.ev, sent.idx, sent.factor, sent.position, sent.dense = ev, idx, factor, pos, dense
                if _unasked_condition(sent.text, asked, plan.wants.answer_type in _NAME_TYPES):
                    sent.factor *= C.CONDITION_FACTOR
                if years and (stated := set(_YEAR.findall(_SINCE.sub(" ", QUOTED_NAME.sub(" ", sent.quote))))) \
                        and not stated & years:
                    # "2020年……为8.52‰" for "2021年……出生率"; a year in a quoted or titled name
                    # (“中国统计年鉴2021”) names a publication or event, not the time stated, and
                    # the year a span starts ("1978年以来首位", "the first since 1929") is not it either
                    sent.factor *= C.OTHER_YEAR
                if counted and (said := ordinals(sent.quote)) and not said & counted \
                        and {c for _, c in said} & {c for _, c in counted}:
                    sent.factor *= C.OTHER_ORDINAL  # "第四棒火炬手" for "最后一棒火炬手", "30th" for "31st"
                if _SUB_PERIOD.search(sent.quote) and not _SUB_PERIOD.search(route.question):
                    sent.factor *= C.CONDITION_FACTOR  # "上半年交付56.4万辆" for "2022年交付量"
                if asks_total and _TOTAL.search(sent.quote):
                    sent.factor *= C.TOTAL_STATED  # "累计接待观众21.4万人次" for "一共来了多少观众"
                if periods and (per := rate_periods(sent.quote)) and not per & periods:
                    sent.factor *= C.OTHER_PERIOD  # "three days per week" for "how many days a year"
                sent.hits = {t.key for t in plan.terms if _covers(sent.cover, t, chunk)}
                if "项" in sent.quote and (items := _items_referred(sent.quote, chunk, evidence)):
                    # "决定本条例第十一条第（五）项规定的事项" says what that item says (筹集和使用专项维修资金)
                    sent.items = items
                    said = shared_cover(items)
                    sent.hits |= {t.key for t in plan.terms if _covers(said, t, chunk)}
                if asks_penalty and BREACH_CUE in sent.quote \
                        and (breached := _breached_text(sent.quote, chunk, evidence)):
                    # "违反本条例第十条规定的，处……罚款" punishes what 第十条 forbids: asked what an
                    # act costs, the penalty for that act among the penalties for others
                    said = shared_cover(breached)
                    sent.hits |= {t.key for t in plan.terms if _covers(said, t, chunk)}
                sent.ctx_hits = in_context - sent.hits
                sent.head_hits = in_head & sent.ctx_hits
                quantities = extract_quantities(sent.quote)
                sent.has_quantity = bool(quantities) or states_whole(sent.quote, plan.wants.kinds)
                sent.kinds = {q.kind for q in quantities}
                # it states the value the question names, or a band that holds it ("£25,000 to
                # £100,000" for a £40,000 order: the question part that names it is answered)
                sent.matches_asked = any(same_value(a, q) for a in plan.asked for q in quantities)
                sent.in_band = frozenset(i for i, a in enumerate(plan.asked) if within(a, sent.quote))
                sent.negates_asked = bool(negated) and bool(negated & _negated(sent.quote))
                sent.bigram = _bigram_share(plan.bigrams, sent.text)
                # the frame of a verb alone ("设在哪里" and "售卖亭不得设在主干道上") is no answer
                # to a question about things its chunk never names
                sent.fills_slot = fills_slot(sent.text, plan.question) \
                    and (not anchors or any(t.key in sent.hits | sent.ctx_hits for t in anchors))
                out.append(sent)
        _link_hops(out, plan)
        for sent in out:
            sent.score, sent.support = evidence_scores(self._signals(sent, plan.terms, plan, plan.wants),
                                                       self.settings.weights, sent.factor)
        out.sort(key=lambda s: (-s.score, s.idx, s.offset))
        return out

    def _sentences(self, chunk: Chunk, lang: str, lists: bool) -> list[_Sentence]:
        """Fresh candidates of one chunk; the split (and its text covers) is kept per chunk text,
        since the same chunks come back for question after question."""
        key = (chunk.chunk_id, chunk.text, lang, lists)
        parts = self._split_cache.get(key)
        if parts is None:
            parts = [(x.text, x.quote, x.offset, x.cover, x.extra_text, x.lead)
                     for x in _sentences_of(chunk, lang, lists)]
            if len(self._split_cache) >= C.SPLIT_CACHE:
                self._split_cache.pop(next(iter(self._split_cache)))
            self._split_cache[key] = parts
        return [_Sentence(ev=None, idx=0, text=t, quote=q, offset=o, cover=c, extra_text=x, lead=lead)  # type: ignore[arg-type]
                for t, q, o, c, x, lead in parts]

    def _score(self, s: _Sentence, terms: Sequence[Term], plan: _Plan, wants: Asked,
               focus: frozenset[str] = frozenset(), band: frozenset[int] | None = None) -> float:
        """The evidence score (:func:`~agentic_rag.agents.reasoner.scoring.evidence_score`) of a sentence
        for the question words ``terms`` (the words of a listed item a part asks about count
        double) and the answer ``wants``."""
        return evidence_score(self._signals(s, terms, plan, wants, focus, band), self.settings.weights, s.factor)

    @staticmethod
    def _signals(s: _Sentence, terms: Sequence[Term], plan: _Plan, wants: Asked,
                 focus: frozenset[str] = frozenset(), band: frozenset[int] | None = None) -> Signals:
        # the unit of a span the question states ("a two-week holiday") ranks like a generic word:
        # another span in that unit ("20 weeks") is no closer to the matter, the value itself is
        # matched (ASKED_MATCH)
        w = {t.key: plan.weights[t.key] * (C.FOCUS_TERM if t.key in focus else 1.0)
             * (C.SOFT_TERM if t.key in plan.measures else 1.0) for t in terms}
        total = sum(w.values()) or 1.0
        lexical = (sum(v for k, v in w.items() if k in s.hits)
                   + C.CONTEXT_HIT * sum(v for k, v in w.items() if k in s.ctx_hits)) / total
        lexical += C.BIGRAM * s.bigram
        if s.matches_asked or (s.in_band if band is None else s.in_band & band):
            lexical += C.ASKED_MATCH
        if s.negates_asked:
            lexical += C.NEGATION_MATCH
        if s.link is not None and plan.hop:
            lexical += C.HOP_LINK  # the question asks about the thing the link leads to
        fit = 0.0
        # a value the question does not name itself: 2021年 does not answer "2021年……是多少"
        kinds = new_quantity_kinds(s.quote, plan.question) if wants.quantity else frozenset()
        if kinds:
            fit = C.NEW_VALUE + (C.KIND_MATCH if wants.kinds & kinds else 0.0)
        elif wants.quantity and (states_none(s.text, wants.kinds) or states_whole(s.text, wants.kinds)) \
                or wants.answer_type == "date" and PAY_CYCLE.search(s.text):
            # "there is no minimum length of service" answers "how long", "账户全部余额" how much,
            # "paid with the next payroll run" when
            fit = C.NEW_VALUE + C.KIND_MATCH
        elif wants.answer_type in _NAME_TYPES and carries(wants.answer_type, s.text, plan.question):
            # a proper name the question does not give (南宁, "Nick Hexum") beats a role word
            fit = C.SHAPE_MATCH + (C.NEW_NAME if names_new(s.text, plan.question, wants.answer_type) else 0.0)
            if wants.answer_type == "name" and is_cjk(plan.question) and quotes_new_name(s.text, plan.question):
                fit += C.QUOTED_NAME  # what a thing is called is written in quotes: 吉祥物“冰墩墩”
        elif wants.answer_type == "definition" and reads_as_procedure(s.text) \
                or wants.answer_type == "list" and lists_items(s.text):
            fit = C.SHAPE_MATCH
        return Signals(lexical=lexical, type=fit, dense=s.dense, position=1.0 / (1 + s.position),
                       rank=1.0 / (1 + s.idx), coverage=plan.coverage, slot=float(s.fills_slot))

    def _select(self, candidates: list[_Sentence], plan: _Plan) -> tuple[list[_Sentence], set[int]]:
        """One best sentence per question part, then sentences for words still uncovered, then
        (for "which ones" questions) the best sentence's equally good siblings. Returns the
        sentences and the ids of those that only add to the direct answer (the last two kinds)."""
        chosen: list[_Sentence] = []
        lead_wants = plan.wants  # what the sentence the answer opens with answers
        for part in plan.parts if len(plan.parts) > 1 else []:
            def part_score(s: _Sentence, part: _Part = part) -> float:
                return self._score(s, part.terms, plan, part.wants, part.focus, part.asked)

            # a sentence about another listed item, not this one, answers that item ("男子500米"
            # is no answer for the 女子 part)
            others = frozenset().union(*(p.focus for p in plan.parts if p is not part)) - part.focus
            pool = [s for s in candidates if (s.has_quantity or not part.needs_value)
                    and carries(part.wants.answer_type, s.text, plan.question)
                    and not (others & (s.hits | s.head_hits) and not _names_item(s, part, others, plan))]
            # a listed item is answered by a sentence that names it, when one can carry the answer
            # (a Chinese item: English "and" joins words inside names and titles, "Minister for
            # Agriculture and Education", as often as it lists what is asked)
            if part.focus and all(t.cjk for t in part.terms if t.key in part.focus):
                pool = [s for s in pool if _names_item(s, part, others, plan)] or pool
            # a sentence that says far more of another part's words than of this one's answers
            # that part ("……每五年组织开展一次古树名木普查" is no answer to how large the protected
            # area is, however well its period fits "多大")
            def elsewhere(s: _Sentence, part: _Part = part) -> bool:
                mine = self._signals(s, part.terms, plan, part.wants, part.focus, part.asked).lexical
                return any(self._signals(s, q.terms, plan, q.wants, q.focus, q.asked).lexical >= mine + C.OTHER_PART
                           for q in plan.parts if q is not part)

            pool = [s for s in pool if not elsewhere(s)] or pool
            if not pool:
                continue
            ranked = sorted(pool, key=lambda s: (-part_score(s), -s.score, s.idx, s.offset))
            top = part_score(ranked[0])
            if top < self.settings.abstain_below:
                continue
            # a sentence already quoted may answer this part too; a nearly as good new one is
            # preferred, so that each part gets its own sentence
            pick = next((s for s in ranked[:8] if s not in chosen and part_score(s) >= C.PART_NEAR_TOP * top), None)
            if pick is not None:
                if not chosen:
                    lead_wants = part.wants
                chosen.append(pick)
        if not chosen:
            chosen = [next(s for s in candidates if carries(plan.wants.answer_type, s.text, plan.question))]
        # the passage a multi-hop answer comes from is reached through another passage's
        # sentence: it follows the answer, so the chain is cited
        for s in list(chosen):
            if s.link is not None and s.link not in chosen:
                chosen.insert(chosen.index(s) + 1, s.link)
        # what the answer says so far: its sentences and their headings (not the rest of a clause,
        # which is exactly what a sibling sentence would add)
        covered = set().union(*(s.hits | s.head_hits for s in chosen))
        # a name the question gives ("a Brambleworth employee") is said by the answer's documents
        # when any of their sentences says it: no sentence is added only to repeat it
        docs = {s.chunk.doc_id for s in chosen}
        named = {t.key for t in plan.terms if not t.cjk and any(t.text in n for n in extract_names(plan.question))}
        covered |= {k for s in candidates if s.chunk.doc_id in docs for k in s.hits & named}
        # and one its documents imply (their issuer, the acronym of their title)
        covered |= {k for s in chosen for k in plan.implied.get(s.chunk.chunk_id, ())}
        extra: set[int] = set()
        # how relevant a sentence must be to join is read from the score without the frame cue
        # (scoring.py): filling the question's frame says which sentence answers, not which one
        # is about the matter
        floor = max(self.settings.abstain_below * C.EXTRA_OF_THRESHOLD, candidates[0].support * C.EXTRA_OF_BEST)
        quoted = {s.chunk.doc_id for s in chosen}
        for _ in range(C.MAX_SENTENCES - len(chosen)):
            best_pick: tuple[float, _Sentence] | None = None
            for s in candidates:
                if s in chosen or s.support < floor:
                    continue
                new_hard = [k for k in s.hits - covered if not _is_soft(k, plan)]
                # another document's sentence joins when it speaks of a thing the question names
                # or says what its question word asks, not for the question's verb alone ("……不得
                # 设在居民住宅楼内" adds nothing to where a race ends)
                if not new_hard or s.chunk.doc_id not in quoted and not s.fills_slot \
                        and all(k in plan.acts or _is_soft(k, plan) for k in s.hits | s.ctx_hits):
                    continue
                gain = sum(plan.weights[k] for k in (s.hits | s.head_hits) - covered)
                # a sentence of a clause already quoted continues it: prefer it
                gain += C.SAME_CLAUSE_GAIN if any(c.chunk.chunk_id == s.chunk.chunk_id for c in chosen) else 0.0
                if best_pick is None or gain + s.score > best_pick[0]:
                    best_pick = (gain + s.score, s)
            if best_pick is None:
                break
            chosen.append(best_pick[1])
            extra.add(id(best_pick[1]))
            quoted.add(best_pick[1].chunk.doc_id)
            covered |= best_pick[1].hits | best_pick[1].head_hits
        # siblings join a lead that answers "which ones": in "Who approves X, and which kinds of
        # Y are banned?" the approver's clause-mates list nothing asked
        if lead_wants.enumeration:
            lead = chosen[0]
            siblings = [s for s in candidates if s.chunk.chunk_id == lead.chunk.chunk_id
                        and s not in chosen and s.support >= lead.support * C.SIBLING_SHARE]
            # the items may follow the sentence that says what they are for: "... cannot work
            # from embargoed countries." + "Embargoed countries include Cuba, Iran, ..."
            following = sorted((s for s in candidates if s.chunk.chunk_id == lead.chunk.chunk_id
                                and s.offset > lead.offset and s not in chosen),
                               key=lambda s: s.offset)[:C.LIST_FOLLOWS]
            items = [s for s in following if plan.classes and lists_items(s.text)
                     and any(s.cover.covers(c) for c in plan.classes)][:1]
            siblings = [s for s in siblings if s not in items]
            chosen[1:1] = items + siblings[:C.MAX_SENTENCES]  # the items are the direct answer
            extra |= {id(s) for s in siblings[:C.MAX_SENTENCES]}
        return chosen, extra

    # -- conflicts -------------------------------------------------------------------------
    @staticmethod
    def _prefer_disputed(candidates: list[_Sentence]) -> list[_Sentence]:
        """For a question about which source prevails, the sentences whose values another
        document contradicts are the answer: they rank first (a bonus, then re-sorted)."""
        top = max((s.support for s in candidates), default=0.0)
        pool = [s for s in candidates if s.has_quantity and s.support >= C.DISPUTED_FLOOR * top][:40]
        facts, owner = _facts_of(pool)
        disputed = {id(owner[id(f)]) for group in find_conflicts(facts) for f in group}
        if not disputed:
            return candidates
        for s in candidates:
            if id(s) in disputed:
                s.score += C.DISPUTED_BONUS
        return sorted(candidates, key=lambda s: (-s.score, s.idx, s.offset))

    def _conflicts(self, candidates: list[_Sentence], chosen: list[_Sentence], plan: _Plan,
                   route: RouteDecision
                   ) -> tuple[list[Conflict], list[Decision], list[_Sentence], list[set[str] | None]]:
        """The disagreements the answer reports, their decisions, the chosen sentences with each
        decided one's winner in place of the losers, and per disagreement the chunk ids of the
        quoted sentences it is about (``None``: about the question as a whole, not one of them)."""
        floor = max(self.settings.abstain_below * C.EXTRA_OF_THRESHOLD, chosen[0].support * C.CONFLICT_OF_BEST)
        relevant = [s for s in candidates if s.support >= floor or s in chosen][:40]
        # another document's version of a chosen sentence (the older rule, the provincial copy)
        # is relevant however it scores: it may lack the question's words only because the
        # newer text added them ("拨付至社会保障卡" where the old one said "银行账户"), or
        # only extends the old wording in the same-numbered clause ("……派出所或者……服务点办理")
        chosen_grams = [(s.chunk.doc_id, s.chunk.clause_no, char_bigrams(s.quote)) for s in chosen]
        for s in candidates:
            if s in relevant or len(relevant) >= 40:
                continue
            grams = char_bigrams(s.quote)
            if any(doc != s.chunk.doc_id and (jaccard(grams, g) >= C.VERSION_ALIKE or no and no == s.chunk.clause_no
                                               and containment(grams, g) >= C.VERSION_CONTAINED)
                   for doc, no, g in chosen_grams) \
                    or any(_amends(s, c) for c in chosen):
                relevant.append(s)
        # an amending item is read as the clause it makes ("将第五条中的“A”修改为“B”" says the
        # clause now names B)
        stated = {id(s): _stated(s, relevant) for s in relevant}
        facts, owner = _facts_of(relevant, stated)
        groups = find_conflicts(facts)
        # prose: another document's version of a quoted sentence with one value changed
        by_quote = {(s.chunk.chunk_id, stated[id(s)]): s for s in relevant}
        prose: set[int] = set()  # groups of sentences aligned whole: their segment is the sentence
        for group in aligned_conflicts([(stated[id(s)], s.chunk, s.idx) for s in relevant]):
            for f in group:
                owner[id(f)] = by_quote[(f.chunk.chunk_id, f.sentence)]
            groups.append(group)
            prose.add(id(group))
        # an amending item that puts another name in a clause: the two names disagree
        for item in relevant:
            replaced = _REPLACED.findall(item.quote)
            amended = [c for c in relevant if _amends(item, c)] if replaced else []
            for values in replaced:
                for clause in amended:
                    group = replaced_conflict((stated[id(item)], item.chunk, item.idx),
                                              (clause.quote, clause.chunk, clause.idx), values)
                    if group:
                        owner[id(group[0])], owner[id(group[1])] = item, clause
                        groups.append(group)
        # the things a question lists ("英特尔和英伟达的营收") are each their own subject: two
        # statements each naming another of them do not contradict each other
        items = [p.focus for p in plan.parts if p.focus]

        def items_apart(group: Sequence[Fact]) -> bool:
            named = [frozenset(i for i, keys in enumerate(items) if keys & owner[id(f)].hits) for f in group]
            return any(a and b and not a & b for k, a in enumerate(named) for b in named[k + 1:])

        def amended_only(group: list[Fact]) -> list[Fact]:
            # an amending item's value differs only from the clause it amends ("五、将第二十六条
            # 中的……修改为……" says nothing of 第二十七条, however alike the two penalties read):
            # with an item, a group keeps the items and the clauses they amend
            said = [owner[id(f)] for f in group]
            items = [s for s in said if amended_title(s.chunk.title)]
            if not items:
                return group
            # per amended act, its items and the clauses they amend; the act of a chosen
            # sentence first
            acts: dict[str, list[Fact]] = {}
            for f, s in zip(group, said):
                for i in items:
                    if s is i or _amends(i, s, replacing=True):
                        acts.setdefault(_squeezed(amended_title(i.chunk.title)), []).append(f)
                        break
            subgroups = sorted((g for g in acts.values() if len({quantity_key(f.quantity) for f in g}) > 1),
                               key=lambda g: (not any(owner[id(f)] in chosen for f in g), -len(g)))
            return subgroups[0] if subgroups else []

        groups = [g for g in (amended_only(g) for g in groups) if g and _one_subject(g) and not items_apart(g)
                  and not rows_apart(g)
                  and _about_question(g, plan, route.question, [owner[id(f)] for f in g], chosen)]
        if not groups:
            return [], [], chosen, []
        keyset = {t.key for t in plan.terms}

        # the question's characters: of two disagreements in the same two clauses, the one whose
        # own segment says most in the question's words where it differs from the others' is
        # what was asked ("水管爆了" and "涉及水、电、燃气等紧急情况的，……三十分钟内到达", not
        # "对一般维修……二十四小时")
        asked_chars = {ch for ch in plan.question if is_cjk(ch)} | keyset

        def said(group: Sequence[Fact]) -> set[str]:
            return {x for f in group for w in f.local for x in (w, *w)}

        shared: dict[frozenset[str], set[str]] = {}  # per pair of clauses, what all its groups say
        for group in (g for g in groups if id(g) not in prose):
            pair = _pair(group)
            shared[pair] = shared[pair] & said(group) if pair in shared else said(group)

        def relevance(group: list[Fact]) -> tuple[int, float, float]:
            touches_chosen = any(owner[id(f)] in chosen for f in group)
            overlap = max(len(keyset & set(f.matter)) for f in group)
            own = set() if id(group) in prose else said(group) - shared[_pair(group)]
            return (touches_chosen, overlap + max(owner[id(f)].score for f in group),
                    len(asked_chars & own) / (len(own) or 1))

        groups.sort(key=relevance, reverse=True)
        conflicts: list[Conflict] = []
        decisions: list[Decision] = []
        seen_pairs: set[frozenset[str]] = set()
        seen_values: set[frozenset[str]] = set()
        named: dict[str, list[ConflictValue]] = {}
        touched: list[set[str] | None] = []
        result = list(chosen)
        lead = chosen[0].support
        # "什么是X" asks what X means: only a disagreement over the definition given concerns it
        meaning = asked_meaning(plan.question) is not None
        rules = is_rule_text([s.chunk.title for s in chosen], [s.chunk.clause for s in chosen])
        # the question's things (actions are worded many ways: acquired / acquisition / bought),
        # less the class its question word asks for (哪个城市: the value names it) unless that
        # class is the only thing ("how many monitors": then it is the matter)
        matter = [t for t in plan.terms if not t.soft and _thing_word(t)]
        things = {t.key for t in matter if t.text.lower() not in plan.classes} or {t.key for t in matter}

        def concerns(group: Sequence[Fact]) -> set[str] | None:
            """What a disagreement touching no quoted sentence is about: ``None`` when it is about
            something next to the question, not in it: it scores well below the answer, or (rule
            text words a matter alike wherever it states it) its sentences say less of the
            question than an answer sentence does ("20 weeks of leave" beside "8 weeks' notice
            before your leave starts"), or (prose words it otherwise: "在武汉举办" / "点亮大武汉")
            they do not name the thing asked (净利润 beside 营收); else the chunk ids of the
            quoted sentences whose things it speaks of (empty: the question's, in prose). Headings
            count."""
            said = [owner[id(f)].hits | owner[id(f)].head_hits for f in group]
            if meaning or max(owner[id(f)].support for f in group) < C.UNRELATED_CONFLICT * lead:
                return None
            if rules:
                # a quoted sentence that names none of the question's things (the consequence
                # after the clause that answers) tells nothing of what a disagreement is about
                naming = [c for c in chosen if c.hits & things] or chosen
                about = {c.chunk.chunk_id for c in naming if all(c.hits & things <= s for s in said)}
                return about or None
            return set() if all(plan.asked_keys <= s for s in said) else None

        for group in groups:
            pair = _pair(group)
            touches = any(owner[id(f)] in chosen for f in group)
            about = concerns(group)
            if touches:
                # one touching a quoted sentence is about it (and, in prose naming the thing
                # asked, about the question whatever the answer keeps)
                own = {owner[id(f)].chunk.chunk_id for f in group if owner[id(f)] in chosen}
                about = set() if about == set() else own | (about or set())
            elif about is None:
                continue
            values = frozenset(_value_key(str(f.quantity.raw)) for f in group)
            if len(values) < 2 or pair in seen_pairs or values in seen_values or len(conflicts) >= 2:
                continue  # one value worded alike, or the same disagreement found twice (figures, prose)
            if all(any(f.quantity.raw in v.value and f.quantity.raw != v.value for v in named.get(f.chunk.chunk_id, ()))
                   for f in group):
                continue  # the other end of a range a conflict already names (五万元 of 五千元以上五万元以下)
            seen_pairs.add(pair)
            seen_values.add(values)
            conflict, decision = self.arbiter.conflict(group, route)
            for v in conflict.values:
                named.setdefault(v.chunk_id, []).append(v)
            conflicts.append(conflict)
            decisions.append(decision)
            touched.append(about or None)
            if decision.rule == "tie":
                continue  # no value won: the answer keeps what it quoted, the conflict says why
            winner_sentence = owner[id(decision.winner)]
            if about:
                about.add(winner_sentence.chunk.chunk_id)
            for f in group:
                s = owner[id(f)]
                if f is decision.winner or s not in result:
                    continue
                pos = result.index(s)
                if winner_sentence in result:
                    result.pop(pos)
                else:
                    result[pos] = winner_sentence
        return conflicts, decisions, result, touched

    # -- two-thing questions ---------------------------------------------------------------
    def _compare(self, question: str, route: RouteDecision, lang: str,
                 candidates: list[_Sentence]) -> Answer | None:
        """The answer to "which of A or B ...", "are A and B both ..." when the evidence settles
        it (:mod:`~agentic_rag.agents.reasoner.comparison`): the verdict first, citing the
        sentence about each thing, then those sentences."""
        asked = comparison.parse(question)
        if asked is None:
            return None
        verdict = comparison.decide(asked, candidates, _subject_name)
        if verdict is None:
            return None
        a, b = verdict.sentences
        if verdict.mode == "compare":
            lead = render(lang, "compare", winner=verdict.winner, value=verdict.values[0],
                          other=next(x for x in asked.items if x != verdict.winner), other_value=verdict.values[1])
        else:
            lead = render(lang, verdict.mode if verdict.mode == "which" else verdict.winner, winner=verdict.winner)
        answer = self._compose(question, route, lang, [a, b], [], [])
        refs = "".join(f"[{i + 1}]" for i in range(len(answer.citations)))
        first = AnswerSentence(text=f"{lead}{refs}", citations=[c.chunk_id for c in answer.citations])
        return answer.model_copy(update={"sentences": [first, *answer.sentences],
                                         "text": _join(lang, [first.text, answer.text])})

    # -- cross references ------------------------------------------------------------------
    def _with_references(self, chosen: list[_Sentence], candidates: list[_Sentence],
                         evidence: Sequence[Evidence], plan: _Plan, route: RouteDecision,
                         lang: str) -> list[_Sentence]:
        result = list(chosen)
        added = 0
        for s in chosen:
            # the items it names by number ("本条例第十一条第（五）项规定的事项") that the question
            # asks about come with it, so the answer says what they are
            for item in s.items.splitlines():
                said_there = shared_cover(item)
                if not any(_covers(said_there, t, s.chunk) for t in plan.terms if not t.soft):
                    continue
                said = next((c for c in candidates if c.chunk.doc_id == s.chunk.doc_id and c is not s
                             and item in c.text), None)
                if said is not None and said not in result and added < 3:
                    result.insert(result.index(s) + 1 + added, said)
                    added += 1
            targets = _referenced_chunks(s.quote, s.chunk, evidence) + _referenced_tables(s.quote, s.chunk, evidence)
            if not targets:
                # a deferral elsewhere in the same clause ("……未列明的，依照本办法第五条规定的比例")
                targets = _referenced_chunks(s.chunk.text, s.chunk, evidence, strong_only=True)
            # what the sentence defers ("依照本法第四十七条规定的经济补偿标准", "贷款额度和期限依照
            # 本办法第九条确定"): the target's first sentence that states it comes with the one
            # that best fits the question
            deferred = _deferred_terms(s.quote)
            for target in targets:
                pool = [c for c in candidates if c.chunk.chunk_id == target.chunk_id]
                if not pool:
                    continue
                picks = [] if any(r.chunk.chunk_id == target.chunk_id for r in result) else \
                    [max(pool, key=lambda c: (c.score, -c.offset))]
                states = {id(c): sum(c.cover.covers(t) for t in deferred) for c in pool}
                first = max(pool, key=lambda c: (states[id(c)], -c.offset))
                if states[id(first)]:
                    picks = [first] + [p for p in picks if p is not first]
                for best in [p for p in picks if p not in result]:
                    result.insert(result.index(s) + 1 + added, best)
                    added += 1
                if added >= 3:
                    return _without_deferrals(result, evidence)
        return _without_deferrals(result, evidence)

    # -- composition -----------------------------------------------------------------------
    def _compose(self, question: str, route: RouteDecision, lang: str, chosen: list[_Sentence],
                 conflicts: list[Conflict], decisions: list[Decision]) -> Answer:
        citations: list[Citation] = []
        index: dict[tuple[str, str], int] = {}

        def cite(chunk: Chunk, quote: str, offset: int) -> int:
            key = (chunk.chunk_id, quote)
            if key not in index:
                citations.append(_citation(chunk, quote, offset))
                index[key] = len(citations)
            return index[key]

        sentences: list[AnswerSentence] = []
        pieces: list[str] = []
        lead = ""
        for s in _dedupe_sentences(chosen):
            n = cite(s.chunk, s.quote, s.offset)
            shown = _trim(s, lang, question)
            # the next item of the same list goes on without its introducing line again
            shown, lead = (shown[len(s.lead):] if s.lead and s.lead == lead else shown), s.lead
            text = f"{shown}[{n}]"
            sentences.append(AnswerSentence(text=text, citations=[s.chunk.chunk_id]))
            pieces.append(text)
        status = "answered"
        for conflict, decision in zip(conflicts, decisions):
            by_chunk = {v.chunk_id: v for v in conflict.values}
            winner = by_chunk[conflict.winner]
            # a source stating the winning value agrees with it (the amending decision that set
            # it): it is cited, not listed as a value that was not applied
            loser_values = [v for v in conflict.values if v.chunk_id != conflict.winner
                            and _value_key(v.value) != _value_key(winner.value)]
            markers = []
            for v in conflict.values:
                # the sentence that states the value is the quote, wherever it is cited already
                fact = next(f for f in decision.candidates if f.chunk.chunk_id == v.chunk_id)
                ref = next((i + 1 for i, c in enumerate(citations)
                            if c.chunk_id == v.chunk_id and c.quote == fact.sentence.strip()), None)
                if ref is None:
                    ref = cite(fact.chunk, fact.sentence, fact.chunk.text.find(fact.sentence))
                markers.append(f"[{ref}]")
            same_title = len({v.title for v in conflict.values}) == 1
            if decision.rule == "tie":
                # each value once, with every source that states it and their citations
                groups: dict[str, list[int]] = {}
                for i, v in enumerate(conflict.values):
                    groups.setdefault(_value_key(v.value), []).append(i)
                status = "needs_review"
                items = []
                for idx in groups.values():
                    # a value one source states is named with it; one several state, with
                    # their count: each is cited
                    value = conflict.values[idx[0]].value
                    if len(idx) == 1:
                        item = f"{_source(conflict.values[idx[0]], lang, same_title)} {value}".strip()
                    else:
                        item = f"{value}（{len(idx)}处来源）" if lang == "zh" else f"{value} ({len(idx)} sources)"
                    items.append(item + "".join(dict.fromkeys(markers[i] for i in idx)))
                text = render(lang, "undecided", values=("；" if lang == "zh" else "; ").join(items)).rstrip("。.")
            else:
                losers = ("；" if lang == "zh" else "; ").join(
                    render(lang, "loser", source=_source(v, lang, same_title), value=v.value,
                           state=STATE_WORDS[lang][_status_of(v.chunk_id, decision)])
                    for v in loser_values)
                text = render(lang, "conflict", winner=_source(winner, lang, same_title), value=winner.value,
                              rule=_rule_words(decision, lang), losers=losers)
                text = text.rstrip("。.") + "".join(markers)
            sentences.append(AnswerSentence(text=text, citations=[v.chunk_id for v in conflict.values]))
            pieces.append(text)
        return Answer(question=question, text=_join(lang, pieces), status=status,
                      sentences=sentences, citations=citations, conflicts=conflicts, route=route)

    def _abstain(self, question: str, route: RouteDecision, lang: str, gaps: list[str],
                 t0: float, trace: list[TraceEvent], why: str, score: float,
                 signals: dict[str, float] | None = None) -> Answer:
        trace.append(TraceEvent(kind="reason", duration_ms=(time.perf_counter() - t0) * 1000,
                                args=self._score_args(score, signals), detail=f"abstained: {why}"))
        return abstention.answer(question, route, lang, gaps, trace)

    def _score_args(self, score: float, signals: dict[str, float] | None = None) -> dict[str, float]:
        return {"evidence_score": round(score, 4), "abstain_below": self.settings.abstain_below,
                **(signals or {})}

    def _lead_signals(self, lead: _Sentence | None, plan: _Plan, evidence: Sequence[Evidence]) -> dict[str, float]:
        """The signals of the best sentence that can carry the answer (what abstention weighs)."""
        if lead is None:
            return {}
        sig = self._signals(lead, plan.terms, plan, plan.wants)
        hard = [t for t in plan.terms if not t.soft]
        total = sum(plan.weights[t.key] for t in hard) or 1.0
        # its chunk's words: the sentence's own and its context's (title, headings, the rest)
        in_chunk = sum(plan.weights[t.key] for t in hard if t.key in lead.hits or t.key in lead.ctx_hits) / total
        in_sentence = sum(plan.weights[t.key] for t in hard if t.key in lead.hits or t.key in lead.head_hits) / total
        dense = [dense_signal(e.scores["vector"]) for e in evidence if "vector" in e.scores]
        out = {"s_lexical": sig.lexical, "s_type": sig.type, "s_dense": -1.0 if sig.dense is None else sig.dense,
               "s_rank": float(lead.idx), "s_position": float(lead.position), "s_coverage": sig.coverage,
               "s_chunk_terms": in_chunk, "s_sentence_terms": in_sentence,
               "s_top_dense": max(dense) if dense else -1.0, "s_hard_terms": float(len(hard)),
               "s_missing": float(len(plan.missing))}
        return {k: round(v, 4) for k, v in out.items()}


# -- helpers --------------------------------------------------------------------------------

#: the key prefix of a question term that names a clause
_CLAUSE_KEY = "§"
#: ... and of one that names a clause as the rule applied (covered by a text citing it, too)
_CITED_KEY = "§→"
#: ... and of one that is a year the question joins with another ("2022年和2023年")
_YEAR_KEY = "@"
_JOINED_YEARS = re.compile(r"(?<!\d)((?:19|20)\d{2})\s*年?\s*(?:和|与|及|以及|、|至|,|and|&)\s*((?:19|20)\d{2})(?!\d)", re.I)


#: how a question names a clause as the rule applied, not as the thing asked about
_APPLIES = re.compile(r"(?:依照|依据|根据|按照|违反|适用|不符合|符合)(?:" + SELF_NAME + r")?(?:第[^，。？?]{1,12}条[、和及与]?){0,3}$|"
                      r"\b(?:under|pursuant to|in accordance with|according to|in breach of|breach(?:es|ing)?|"
                      r"violat(?:e|es|ing)|referred to in|set out in)\s+(?:(?:the|this)\s+)?$", re.I)


def _deferred_terms(quote: str) -> list[Term]:
    """The words of what a sentence defers to another clause: after "第N条规定的" ("……的经济补偿
    标准"), else before the reference ("贷款额度和期限依照本办法第九条确定")."""
    words: list[str] = []
    for m in CROSS_REFERENCE.finditer(quote):
        after = quote[m.end():m.end() + 20]
        if after.startswith(("规定的", "所称", "的")):
            words.append(re.split(r"[，,；;。]", after.removeprefix("规定的").removeprefix("的"))[0])
        else:
            words.append(re.split(r"[，,；;。]", quote[:m.start()])[-1])
    return content_terms(" ".join(words))


_NEGATION = re.compile(r"(?:尚未|还没有?|并未|没有|从未|未|不)(?:被|再|予|得|能|曾)?(?P<zh>[\u4e00-\u9fff]{2})|"
                       r"\b(?:not|never|n't|no longer)\s+(?:yet\s+|been\s+|be\s+)?(?P<en>[a-z]{4,})", re.I)


@lru_cache(maxsize=8192)  # per text: the same sentences are candidates question after question
def _negated(text: str) -> frozenset[str]:
    """The words ``text`` says "not" of ("尚未实施" -> 实施, "has not been approved" -> approv):
    a question about what holds when something has not happened is answered by the sentence
    that says so, not by the one about when it has."""
    out = set()
    for m in _NEGATION.finditer(A_NOT_A.sub(r"\1", text)):  # 能不能减免 asks, it negates nothing
        word = m.group("zh") or m.group("en")
        out.add(word if m.group("zh") else stem(word.lower()))
    return frozenset(out)


def _cites_clause(question: str, label: str) -> bool:
    """Whether ``question`` names the clause ``label`` as the rule applied ("不得依照第四十条的规定
    解除", "what is the penalty for breaching Section 5"), not as what it asks about."""
    at = question.find(label)
    return at >= 0 and _APPLIES.search(question[max(0, at - 40):at]) is not None


def _joined_years(text: str) -> list[str]:
    """The years a question joins: "2022年和2023年春节档冠军" -> ["2022", "2023"]."""
    m = _JOINED_YEARS.search(text)
    return [m.group(1), m.group(2)] if m and m.group(1) != m.group(2) else []
_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")
#: a time or a time word in a differing phrase ("8月26日下午消息", "本季度", "last quarter")
_TIME_WORDS = re.compile(r"\d{1,2}月\d{1,2}日|\d{4}年|[本上下去今明昨前]\s*(?:季度|年度|年|月|周|日|天)|"
                         r"\b(?:this|last|next)\s+(?:quarter|year|month|week)\b|\b(?:yesterday|today)\b", re.I)
#: the year a span starts that reaches the time stated: 1978年以来, 自2015年起, since 1929
_SINCE = re.compile(r"(?:自|从)?(?:19|20)\d{2}\s*年?\s*(?:以来|来|起)|\bsince\s+(?:19|20)\d{2}\b", re.I)
#: a part of a year ("上半年", "第四季度", "Q3", "the first half"): a value for it is not the
#: value for the whole year a question asks about
_SUB_PERIOD = re.compile(r"[上下]半年|前?[一二三四1-4１-４]季度|第[一二三四1-4]季度|前三季度|\d{1,2}[-—至~]\d{1,2}月|"
                         r"\bQ[1-4]\b|\b(?:first|second|third|fourth|last) quarter\b|\b(?:first|second) half\b|"
                         r"\bH[12]\b", re.I)
#: a total, asked ("一共来了多少观众", "how many in total") or stated ("累计接待", "a total of")
_TOTAL = re.compile(r"一共|总共|总计|共计|累计|合计|总数|总量|总额|\bin total\b|\baltogether\b|\ba total of\b|"
                    r"\btotal (?:number|amount|of)\b", re.I)
#: a biography's life span in parentheses says when its subject was born and died
_LIFESPAN = re.compile(r"\([^()]{0,60}?\d{3,4}\s*[–—-]\s*[^()]{0,40}?\d{3,4}\s*\)|\(\s*(?:[^()]{0,40};\s*)?born\b")
_LIFE_WORDS = frozenset({"born", "birth", "die", "death"})


def _facts_of(sentences: Sequence[_Sentence],
              stated: dict[int, str] | None = None) -> tuple[list[Fact], dict[int, _Sentence]]:
    """The facts the sentences state (``stated``: what each states, by its id, when already
    read), and the sentence of each fact (by the fact's id)."""
    facts: list[Fact] = []
    owner: dict[int, _Sentence] = {}
    for s in sentences:
        for f in facts_of(stated[id(s)] if stated is not None else _stated(s, sentences), s.chunk, s.idx):
            owner[id(f)] = s
            facts.append(f)
    return facts, owner


def _stated(s: _Sentence, sentences: Sequence[_Sentence]) -> str:
    """What a sentence states: its quote, or for an amending act's item the clause as amended
    (:func:`_as_amended`, with the clause it replaces words in looked up among ``sentences``)."""
    amended = [c.quote for c in sentences if _amends(s, c)] if _REPLACED.search(s.quote) else []
    return _as_amended(s.quote, amended)


#: a question about how an act was made or changed: its promulgation note answers it
#: ("什么时候通过的", "修正过几次", "when was the act amended")
_ASKS_MAKING = re.compile(r"通过|批准|修正|修订|修改|公布|颁布|施行|生效|制定|出台|发布|"
                          r"\b(?:adopt|pass|amend|enact|promulgat|approv|effective|in force)", re.I)


#: a sentence's end: a line with none is a title or heading, not a statement
_STATES = re.compile(r"[。！？；!?;]|\.(?:\s|$)")
#: an act's purpose clause ("为了加强……，根据……，制定本办法", "This policy sets out how ..."): it
#: says why the document was made
_PURPOSE_CLAUSE = re.compile(r"^为了?[^。；]{2,120}?[，,]\s*(?:根据[^。；]{2,80}?[，,]\s*)?"
                             r"(?:结合本[市省区县][^。；]{0,20}?[，,]\s*)?"
                             r"制定本(?:办法|条例|规定|细则|法|决定|规则|制度|实施办法)|"
                             r"^(?:\d+(?:\.\d+)*\.?\s+)?(?:(?:This|The)\s+"
                             r"(?:policy|procedure|standard|document|guidance|guide|handbook|code|manual)"
                             r"(?:\s+\([^)]*\))?\s+(?:sets\s+out|explains|describes|establishes|outlines)\b|"
                             r"The\s+(?:purpose|aim|objective)\s+of\s+this\s+(?:policy|procedure|standard|document)\b)")
_ASKS_PURPOSE = re.compile(r"目的|为什么|为何|宗旨|意图|\bwhy\b|\bpurpose\b|\baims?\b", re.I)


#: how an amending act closes: the amended act "根据本决定作相应修改……重新公布" (when the
#: decision applies, "本决定自……起施行", answers when the new rules start)
_AMENDING_CLOSE = re.compile(r"根据本决定作相应(?:的)?修改")


def _is_promulgation_note(sentence: str) -> bool:
    """Whether ``sentence`` is an act's promulgation note, in brackets under its title:
    "（2019年3月1日……会议通过　2019年5月30日……批准）", alone or with the issuer and date
    labelled after it ("发布机关：……发布日期：……"), a line of such labels, or an amending act's
    note that the amended act is republished as amended."""
    text = sentence.strip()
    if text[:1] in "（(" and (close := max(text.find("）"), text.find(")"))) > 0 and promulgation(text[:close + 1]):
        rest = text[close + 1:].strip()
        if not rest or _METADATA_LABEL.match(rest):
            return True
    return len(_METADATA_LABEL.findall(text)) >= 2 or bool(_AMENDING_CLOSE.search(text))


#: the labels of a document's metadata line ("发布机关：", "发布日期：")
_METADATA_LABEL = re.compile(r"(?:发布机关|发文机关|制定机关|发布日期|成文日期|施行日期|生效日期|发文字号|文号|索引号)\s*[:：]")


def _link_hops(sentences: Sequence[_Sentence], plan: _Plan) -> None:
    """Multi-hop evidence chains: a passage about something the question does not name (the
    city "where Kerry Saxby-Junna was born") answers when another passage's sentence that
    matches the question names it ("... born in Young"). That sentence's question words
    count as context of the passage it leads to, and it is kept as the answer's link."""
    by_chunk: dict[str, list[_Sentence]] = {}
    for s in sentences:
        by_chunk.setdefault(s.chunk.chunk_id, []).append(s)
    question = plan.question.lower()
    for own in by_chunk.values():
        chunk = own[0].chunk
        name = _subject_name(chunk.title)
        if not name or name.lower() in question:
            continue  # a passage the question names itself is a first hop
        pattern = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])", re.I) if not is_cjk(name) else None
        links = [s for s in sentences if s.chunk.title != chunk.title and s.hits
                 and (pattern.search(s.text) if pattern else name in s.text)]
        if not links:
            continue
        link = max(links, key=lambda s: _as_link(s, plan))
        for s in own:
            _follow(s, link)
    if not plan.hop:
        return
    # the chain may also run through a thing both sentences name, not a title: "published by
    # the American Psychological Association" leads to "Hall, who was the first president of
    # the American Psychological Association" in a passage titled otherwise. The first hop
    # names what the question names; the next one does not.
    anchors = [fold(n) for n in _names(plan.question)]
    asked = fold(plan.question)
    english = [s for s in sentences if not is_cjk(s.text)]
    first = {id(s) for s in english if (said := fold(s.text)) and any(a in said for a in anchors)}  # Akinoshu ~ Akinoshū
    names = {id(s): {n for n in _names(s.text) if len(n) >= C.LINK_NAME_MIN and fold(n) not in asked}
             for s in english}
    for s in english:
        if s.link is not None or id(s) in first:
            continue
        # ... and says what the question asks of that thing in its own words ("first president")
        links = [o for o in english if id(o) in first and o.hits and o.chunk.title != s.chunk.title
                 and s.hits - o.hits - o.ctx_hits and _share_name(names[id(s)], names[id(o)])]
        if links:
            _follow(s, max(links, key=lambda o: _as_link(o, plan)))


def _as_link(s: _Sentence, plan: _Plan) -> tuple[float, int]:
    """How well a sentence leads to the next hop: the question words it matches, the better
    ranked first."""
    return sum(plan.weights[k] for k in s.hits) + C.CONTEXT_HIT * sum(plan.weights[k] for k in s.ctx_hits), -s.idx


#: a noun a proper name possesses: "Kenji's birthplace", "Brand's author"
_POSSESSED = re.compile(r"\b[A-Z][\w\-]*(?:'s|’s|s'|s’)\s+([a-z][a-z\-]+)\b")
#: how an English excerpt refers to a subject it does not name: "It was released ...", "The
#: game was launched ...", "That represents an 81 percent increase ..."
_ANAPHOR = re.compile(r"(?:It|He|She|They|This|That|These|Those|Its|His|Her|Their)\b|The\s+[a-z]+\b(?!\s+of\b)")


@lru_cache(maxsize=4096)
def _implied_names(title: str, text: str, question: str, issuer: str = "") -> frozenset[str]:
    """The keys of the names a question gives that a chunk mentions without writing them out:
    the body its document declares as its issuer (a policy's company, named only in its front
    matter); and, for an English question, all of them for an untitled excerpt that names no
    subject ("The game was launched on ...", "It was released in Japan on ...": it is about what
    it was found for; a one-line excerpt's title is its own first line), and a name it shortens
    to its last words ("Valhalla" for "Assassin's Creed Valhalla", "Okafor" for "Grace Okafor";
    a name that only ends alike, "Jane Smith" for "John Smith", is another one)."""
    names = _names(question)
    # the body its document declares as its issuer, and the acronym of the document's title
    issued = frozenset(t.key for n in names if issuer and fold(n) in fold(issuer) or abbreviates(n, title)
                       for t in content_terms(n))
    if is_cjk(question):
        return issued | _issuer_words(question, issuer)
    title, body = unstamped(title).strip(" .…"), unstamped(text).strip(" .…")
    if not (title and not body.startswith(title)) and _ANAPHOR.match(body):
        return frozenset(t.key for n in names for t in content_terms(n))
    said = set(_names(f"{title}\n{text}"))
    return issued | frozenset(t.key for n in names if any(" ".join(n.split()[i:]) in said
                                                          for i in range(1, len(n.split())))
                              for t in content_terms(n))


#: the fewest characters a Chinese question and its document's issuer share to name the issuer
#: ("青岩数据" of 青岩数据科技有限公司; two, 数据 or 医疗, are words of many names)
_ISSUER_RUN = 4


@lru_cache(maxsize=4096)
def _issuer_words(question: str, issuer: str) -> frozenset[str]:
    """The keys of a Chinese question's words inside a run of at least ``_ISSUER_RUN`` characters
    it shares with its document's issuer: the company's short name ("青岩数据出差……" for a policy
    of 青岩数据科技有限公司, which may name it only in its front matter)."""
    if not issuer:
        return frozenset()
    runs: list[str] = []
    i = 0
    while i < len(question):
        j = i
        while j < len(question) and question[i:j + 1] in issuer:
            j += 1
        if j - i >= _ISSUER_RUN and is_cjk(question[i:j]):
            runs.append(question[i:j])
            i = j
        else:
            i += 1
    return frozenset(t.key for t in content_terms(question) if t.cjk and any(t.text in r for r in runs))


@lru_cache(maxsize=16384)
def _names(text: str) -> tuple[str, ...]:
    """:func:`~agentic_rag.text.names.extract_names`, kept per text: the same chunks and
    sentences come back for question after question."""
    return tuple(extract_names(text))


def _share_name(a: Collection[str], b: Collection[str]) -> bool:
    """Whether two sets of names share one, a name inside a longer one counting ("Fredericton"
    and "Diocese of Fredericton")."""
    return any(_within_name(x, y) if len(x) <= len(y) else _within_name(y, x) for x in a for y in b)


def _within_name(short: str, long: str) -> bool:
    return short == long or re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long) is not None


def _follow(s: _Sentence, link: _Sentence) -> None:
    """``s`` is reached through ``link``: the question words ``link`` matches count as ``s``'s
    context, and ``link`` is kept to be cited beside it."""
    add = (link.hits | link.ctx_hits) - s.hits - s.ctx_hits
    if add:
        s.ctx_hits = s.ctx_hits | add
        s.link = link


def _one_subject(group: Sequence[Fact]) -> bool:
    """Whether the statements of a disagreement are about one subject: passages about two
    named things (the populations of Young and of Korçë) do not contradict each other; versions
    of one document ("Leave Policy 2023" / "Leave Policy 2025") and untitled passages may."""
    names = {f.chunk.chunk_id: _subject_name(f.chunk.title) for f in group}
    if not all(names.values()):
        return _related_titles(group)
    plain = {re.sub(r"[\d\s年版]+", "", n).lower() for n in names.values()}
    if len(plain) == 1:
        return True
    values = " ".join(str(f.quantity.raw).lower() for f in group)
    if any(n.lower() in values for n in names.values()):
        return True  # the names are what the statements disagree on (who directed it)
    # a statement that names the other passage's subject is about it too
    return any(n.lower() in f.sentence.lower() for f in group for cid, n in names.items()
               if cid != f.chunk.chunk_id)


def _related_titles(group: Sequence[Fact]) -> bool:
    """Whether documents with long titles (rules, notices) can disagree: their titles share a
    thing (住房公积金 in the 办法 and in the decision amending it), or a statement names a thing
    of another's title. A loan term in the housing-fund rules and a benefit period in an
    unemployment-insurance notice do not contradict each other, however alike the sentences."""
    titles = {f.chunk.doc_id: f.chunk.title for f in group}
    if len(titles) < 2 or not all(titles.values()):
        return True  # untitled passages: nothing says they are about different things
    things = {doc: [t for t in content_terms(title) if _title_thing(t, title)] for doc, title in titles.items()}
    if not all(things.values()):
        return True

    def names(doc: str, other: str) -> bool:  # doc's title or statements name a thing of other's title
        return any(shared_cover(f"{f.chunk.title}\n{f.sentence}").covers(t)
                   for f in group if f.chunk.doc_id == doc for t in things[other])

    docs = list(titles)
    return all(names(a, b) or names(b, a) for i, a in enumerate(docs) for b in docs[i + 1:])


def _title_thing(t: Term, title: str) -> bool:
    """A word of a document title that names what the document is about: a noun, not the
    place it applies in (江北, 青岚市), the kind of document (办法, Policy) or an action (调整)."""
    if t.soft:
        return False
    if not t.cjk:
        return t.text[:1].isupper()
    if re.search(re.escape(t.text) + r"[省市县区镇乡州]", title) or len(t.text) >= 3 and t.text[-1] in "省市县区镇乡州":
        return False  # an administrative place, known to the dictionary or not
    tag = word_tag(t.text)
    return tag is None or tag.startswith(("n", "j")) and not tag.startswith(("ns", "nr"))


def _subject_name(title: str) -> str:
    """The name a passage is about, from its title: "Ballina, New South Wales" -> "Ballina",
    "Toad Hall (ANU)" -> "Toad Hall"; empty for a title that is no short name (a rule's title)."""
    name = re.split(r"\s*[,(（，]", title.strip(), maxsplit=1)[0].strip()
    if is_cjk(name):
        return name if 2 <= len(name) <= 12 else ""
    words = name.split()
    # a named event may open with its year ("1932 Deep South tornado outbreak")
    if not 1 <= len(words) <= 6 or len(name) < 4 or not (name[:1].isupper() or name[:1].isdigit()):
        return ""
    return name


_AMENDED_TO = re.compile(r"修改为|改为")
#: the words an amending item replaces inside a clause: 中的“三十日”修改为“十五日”
_REPLACED = re.compile(r"[“\"「]([^”\"」]{1,40})[”\"」]\s*(?:修改为|改为)\s*[“\"「]([^”\"」]{1,40})[”\"」]")


def _amends(item: _Sentence, clause: _Sentence, replacing: bool = False) -> bool:
    """Whether ``item`` is an amending act's item that changes the clause ``clause`` is from
    ("将第九条中的……修改为……" of 关于修改《X》的决定, for 第九条 of X); ``replacing``: and
    changes it by replacing its words, not by adding a paragraph or item to it or deleting one
    ("在第二十七条中增加一款" leaves the clause's own values in force)."""
    target = amended_title(item.chunk.title)
    if not target or not clause.chunk.clause_no or _squeezed(target) != _squeezed(clause.chunk.title):
        return False
    # the item's own words name the clause ("将第九条中的……"), or its first line does ("Clause 4.2
    # is deleted and replaced with:" above the quoted new clause)
    changed = amended_clauses(item.quote) or amended_clauses(item.chunk.text)
    return any(no == clause.chunk.clause_no and not (replacing and ADDS_OR_DROPS.search(phrase))
               for no, phrase in changed)


def _as_in_force(chosen: list[_Sentence], candidates: Sequence[_Sentence]) -> list[_Sentence]:
    """The chosen sentences as in force: a sentence of a clause that an amending item in the
    evidence rewrites whole ("将第十一条第一款修改为：“……”") is replaced by that item, which
    quotes the clause as amended, when no disagreement already did. (An item that replaces
    words, "将第七条中的“三十日”修改为“十五日”", quotes only them: the disagreement over the
    values states it.)"""
    items = [c for c in candidates if amended_title(c.chunk.title) and not _REPLACED.search(c.quote)]
    out: list[_Sentence] = []
    for s in chosen:
        new = None if amended_title(s.chunk.title) else next(
            (i for i in items if _amends(i, s, replacing=True) and _rewrites(i, s)), None)
        pick = new or s
        if pick not in out:
            out.append(pick)
    return out


def _rewrites(item: _Sentence, s: _Sentence) -> bool:
    """Whether the clause an amending item sets reads like the sentence ``s``: its new wording."""
    return jaccard(char_bigrams(_as_amended(item.quote)), char_bigrams(s.quote)) >= C.VERSION_ALIKE


def _squeezed(title: str) -> str:
    """A title as two documents' titles are compared: whitespace aside."""
    return re.sub(r"\s", "", title)


def _as_amended(sentence: str, amended: Sequence[str] = ()) -> str:
    """What an amending act's item states: the text after "修改为" ("将第九条中的“处一千元……”
    修改为“处五千元……”" states the new penalty, not the old one); an item that replaces words
    inside a clause ("将第七条中的“三十日”修改为“十五日”") states that clause with them replaced,
    read off the ``amended`` clause sentences that hold the old words."""
    pairs = _REPLACED.findall(sentence)
    for text in amended if pairs else ():
        if all(old in text for old, _ in pairs):
            for old, new in pairs:
                text = text.replace(old, new)
            return text
    parts = _AMENDED_TO.split(sentence)
    return parts[-1] if len(parts) > 1 and "将" in parts[0] else sentence


def _covers(cover: TextCover, term: Term, chunk: Chunk) -> bool:
    """Whether a text of ``chunk`` (a sentence, its context) mentions ``term``; a clause the
    question names is mentioned by that clause only, by its label or number."""
    if term.key.startswith(_CITED_KEY):
        return clause_matches(term.text, chunk.clause, chunk.clause_no) or norm(term.text).replace(" ", "") in cover.text
    if term.key.startswith(_CLAUSE_KEY):
        return clause_matches(term.text, chunk.clause, chunk.clause_no)
    if term.key.startswith(_YEAR_KEY):
        return re.search(rf"(?<!\d){term.text}(?!\d)", cover.text) is not None
    if term.key in _LIFE_WORDS and _LIFESPAN.search(cover.spaced):
        return True  # "Ezer Weizman (15 June 1924 – 24 April 2005)": when he was born and died
    return cover.covers(term)



_LIST_SPLIT = re.compile(r"[、]|(?<=[\u3400-\u9fff])(?:和|及|与|以及)(?=[\u3400-\u9fff])")


def _listed_items(piece: str) -> list[str]:
    """The items of an enumeration asked "分别"/"各" about, from the clause that lists them."""
    m = re.search(r"分别|各是|各为|各自|respectively", piece)
    if not m:
        return []
    clause = re.split(r"[，,；;：:]", piece[:m.start()])[-1]
    items = [x.strip() for x in _LIST_SPLIT.split(clause) if x.strip()]
    if len(items) >= 2 and "的" in items[-1]:
        # "冬奥会和冬残奥会的开幕日期": what follows 的 is asked of every item, not an item
        items[-1] = items[-1].rsplit("的", 1)[0].strip()
    return items if 2 <= len(items) <= C.MAX_SENTENCES and all(items) else []


_JOINERS = frozenset({"和", "与", "及", "以及", "、", "跟", "and", "&"})


def _coordinated(piece: str) -> list[str]:
    """The words a question joins with 和 / 与 / 、 / "and" when it asks for a value, a date or a
    name of each ("2022年特斯拉和比亚迪交付量" -> 特斯拉, 比亚迪; "开幕和闭幕时间" -> 开幕,
    闭幕): one word on each side of the joiner, the rest of the question shared by all; empty
    when nothing such is asked."""
    asks_value = analyze(piece).answer_type in ("date", "number", "person", "organization", "place", "name")
    tokens = [t for t in segment(piece) if t.strip()]
    wordy = [bool(content_terms(t)) for t in tokens]
    titles = document_titles(piece)
    for i, tok in enumerate(tokens):
        if tok.lower() not in _JOINERS or i == 0 or i + 1 >= len(tokens) or not wordy[i - 1] or not wordy[i + 1]:
            continue
        if any(f"{tokens[i - 1]} {tok} {tokens[i + 1]}" in t for t in titles):
            continue  # "the Health and Safety Policy": one document, not two things
        # the word before the joiner (back over "A、B、" lists) and the word after it
        items = [tokens[i - 1], tokens[i + 1]]
        j = i - 2
        while j >= 1 and tokens[j] in ("、", ",", "，") and wordy[j - 1]:
            items.insert(0, tokens[j - 1])
            j -= 2
        # a single word each, unless both are names or words of one kind: "北京冬奥会澳大利亚和
        # 新西兰" joins the two countries, "冬奥会女子和男子500米" the two events, but
        # "起付标准、支付比例和最高支付限额" joins phrases (a list, not two words: 比例 is a
        # noun, 最高 an adjective)
        if j >= 0 and wordy[j] and not all(is_proper_name(x) for x in items) and not _parallel(items):
            return []
        if not asks_value and analyze(items[0]).answer_type not in CONSTRAINING:
            return []  # "……选举时间及结果": a question of no kind joins kinds of answer, each its own
        after = tokens[i + 2] if i + 2 < len(tokens) else ""
        if len(items) == 2 and not any(is_nounish(x) for x in items) and after and content_terms(after) \
                and analyze(after).answer_type not in CONSTRAINING:
            # "筹集和使用维修资金需要多少业主同意": two acts on one thing are one matter; "开幕和闭幕时间"
            # still asks the time of each
            return []
        if len(items) == 2 and analyze(items[0]).answer_type in CONSTRAINING:
            # "发售日期和标准版国区价格": the first item names a kind of answer by itself, so
            # the words after the second one belong to it, not to both
            rest = piece[piece.find(items[1], piece.find(items[0]) + len(items[0])) + len(items[1]):]
            items[1] += _ITEM_TAIL.match(rest).group(0).rstrip()
        return items[:C.MAX_SENTENCES] if len(items) >= 2 else []
    return []


#: what follows a listed item up to the question word: 国区价格 of "标准版国区价格是什么"
_ITEM_TAIL = re.compile(r"[^，,。；;？?！!]*?(?=是|为|什么|多少|哪|谁|几|何|怎|如何|吗|[，,。；;？?！!]|\s+(?:is|are|was|were)\b|$)")


def _names_item(s: _Sentence, part: _Part, others: frozenset[str], plan: _Plan) -> bool:
    """Whether sentence ``s`` names the listed item ``part`` asks about (every word of it), not
    only inside the name of another item (冬奥会 is no mention of itself in 冬残奥会)."""
    if not part.focus & (s.hits | s.head_hits):
        return False
    text = s.text
    for t in plan.terms:
        if t.key in others:
            text = text.replace(t.text, "\u25a1" * len(t.text))
    cover = shared_cover(text)  # asked twice per sentence and part: kept, not built again
    return all(cover.covers(t) for t in part.terms if t.key in part.focus)


def _parallel(words: Sequence[str]) -> bool:
    """Whether joined words are of one kind: the same part of speech in jieba's dictionary
    (女子 / 男子, 男单 / 女单), so that they, not the phrases around them, are what is joined."""
    tags = {word_tag(w) for w in words}
    return len(tags) == 1 and None not in tags


def _within(chosen: list[_Sentence], extra: set[int], max_chars: int, lang: str) -> list[_Sentence]:
    """The chosen sentences without the additions (``extra``) that would take the answer past
    ``max_chars`` characters (``reasoner.max_answer_chars`` per thing the question asks): a
    direct answer stays short, what supports it is kept."""
    out: list[_Sentence] = []
    length = 0
    for s in chosen:
        size = len(_trim(s, lang)) + 1
        if id(s) in extra and out and length + size > max_chars:
            continue
        out.append(s)
        length += size
    return out


def _without_deferrals(result: list[_Sentence], evidence: Sequence[Evidence]) -> list[_Sentence]:
    """Drop a sentence that only defers to another clause ("Approved overtime is compensated as
    set out in Section 6", "具体比例详见第十二条") when the answer quotes that clause: it states
    no value itself, and the answer should lead with what was asked."""
    keep = []
    for s in result:
        if not s.has_quantity and CROSS_REFERENCE.search(s.quote):
            targets = {t.chunk_id for t in _referenced_chunks(s.quote, s.chunk, evidence, strong_only=True)}
            said = TextCover(" ".join(r.text for r in result
                                      if r.chunk.chunk_id in targets and r.chunk.chunk_id != s.chunk.chunk_id))
            # what it says besides the reference must be said by the quoted clause too
            own = [t for t in content_terms(CROSS_REFERENCE.sub(" ", s.text)) if not t.soft]
            if said.text and all(said.covers(t) for t in own):
                continue
        keep.append(s)
    return keep or result


def _unknown_pairs(question: str) -> list[str]:
    tokens = segment(question)
    pairs = []
    for a, b in zip(tokens, tokens[1:]):
        if len(a) == 1 and len(b) == 1 and re.fullmatch(r"[\u3400-\u9fff]{2}", a + b) \
                and a not in QUESTION_ZH and b not in QUESTION_ZH:
            pairs.append(a + b)
    return pairs


def _split_names(question: str) -> list[tuple[str, str]]:
    """(whole, part) for each place name of ``question`` the segmenter split ("人民路" -> 人民 /
    路, "澄阳湖" -> 澄 / 阳湖): a word next to a single character, where the whole ends in a
    place word (路, 湖, 桥 ...). The whole is the name when the evidence writes it."""
    out = []
    for piece in re.findall(r"[\u3400-\u9fff]+", question):  # never across punctuation
        tokens = segment(piece)
        for a, b in zip(tokens, tokens[1:]):
            single, word = (a, b) if len(a) == 1 else (b, a)
            if len(single) == 1 and len(word) >= 2 and (a + b)[-1] in _PLACE_ENDS \
                    and single not in QUESTION_ZH and word not in QUESTION_ZH:
                out.append((a + b, word))
    return out


#: the last character of a Chinese place name: a road, a lake, a bridge, a village ...
_PLACE_ENDS = frozenset("路街巷道桥湖河江山岛港湾村镇乡园馆寺塔楼门站场坝溪峰岭洲")


#: a Chinese word whose value a question asks, right next to its question word: "门票多少钱",
#: "电话号码是多少", "注册资本有什么要求", "几天带薪考试假"; never a word for examples, aspects,
#: cases or things in general (哪些情形, 举几个例子, 多少东西), which rule text never names as such
_VALUE_ASKED = "(?:是|为|有|要)?(?:多少|几|什么|哪)"
_COUNTED = "(?:多少|几)(?:个|名|位|张|天|年|月|次|项|种|元)?"
_NO_VALUE = re.compile(r"例子|方面|情况|情形|问题|内容|事项|东西")


def _valued(word: str, question: str) -> bool:
    """Whether ``question`` (Chinese) asks for the value of ``word`` right where it names it."""
    if not is_cjk(word) or _NO_VALUE.search(word) or word[0] in "每各":
        return False  # 每只收 / 各项 distribute, they name no thing
    w = re.escape(word)
    # a counted word may carry one short modifier ("几天带薪考试假"), not a clause ("多少天内撤出小区")
    return re.search(rf"{w}{_VALUE_ASKED}|{_COUNTED}[\u4e00-\u9fff]{{0,2}}{w}", question) is not None


def _asked_thing(asking: str, asked: Asked, terms: Sequence[Term]) -> frozenset[str]:
    """The keys of the words naming the thing a question asks for: the last thing word of a
    wh-question's ``asking`` clauses (without the scene it sets: 丢了工作，……) that, in Chinese,
    its question word stands by (:func:`_stands_by`; 首趟班列的起点, 学校的地址在哪里), with the
    words written onto it (工业 of 工业增加值增长了多少); a yes/no question asks whether, of no
    one thing. ``terms``: the question's words as the Reasoner reads them (an unknown word the
    segmenter split, 营收, included)."""
    if asked.yes_no:
        return frozenset()
    things = sorted((t for t in terms if not t.soft and _thing_word(t) and t.text in asking),
                    key=lambda t: asking.rfind(t.text) + len(t.text))
    heads = things
    if is_cjk(asking) and _ASKS_ZH.search(asking):
        # a Chinese question word asks for the value of the word it stands by (起点在哪里,
        # 起售价是多少, 多少天假); one that stands by none asks of no one thing: 给狗上户口要去哪儿办
        # asks the place of an act, 丢了工作每个月能拿多少钱 an amount, not of the 户口, 工作
        heads = [t for t in things if _stands_by(t.text, asking)]
    if not heads:
        return frozenset()
    head = heads[-1]
    keys = {head.key}
    end = asking.rfind(head.text)
    for t in reversed(things[:things.index(head)]):
        at = asking.rfind(t.text, 0, end)
        if at < 0 or at + len(t.text) != end:
            break  # 学校的地址: 的 stands between, 学校 is another thing
        keys.add(t.key)
        end = at
    return frozenset(keys)


#: adverbs between a thing and the question word asking its value (最佳电视剧分别是什么, 利率一般是多少)
#: (not 最晚 / 最多: they qualify the act, "游客最晚什么时候可以要求退款" asks when to ask, of no one thing)
_ADVERB_ZH = "(?:分别|各自|都|各|究竟|到底|一般|通常|大概|大约|具体)"
#: verbs of a quantity's change: "工业增加值增长了多少" asks the value of the 工业增加值
_CHANGE_ZH = "(?:增长|下降|提高|降低|减少|增加|上涨|下跌|上升|达到|超过|涨|跌)"
#: a Chinese question word (what :func:`_stands_by` looks for beside a thing)
_ASKS_ZH = re.compile(r"多少|几|什么|啥|哪|谁|多长|多久|多大|多高|多远")


def _stands_by(word: str, question: str) -> bool:
    """Whether a Chinese question word stands by ``word``: right after it (起点在哪里, 主演是谁,
    起售价为多少, 注册资本有什么要求, 增加值增长了多少) unless it is a verb whose object the
    question word asks (改编自什么事件), or right before it with at most a measure word and two
    characters between (多少天带薪假) or a class (什么类型的电影)."""
    w = re.escape(word)
    if (m := re.search(rf"{w}(?:什么|哪些|哪个|哪种|哪类|哪几)[\u4e00-\u9fff]{{2,4}}", question)) \
            and any(len(c) >= 2 for c in answer_classes(m.group(0))):
        return False  # 改编自什么事件, 属于哪类案件: a verb, asking the class after it
    return re.search(rf"{w}的?{_ADVERB_ZH}?(?:是|为|有|要|在|叫|定在|设在|{_CHANGE_ZH}了?)?(?:{_ASKS_ZH.pattern})|"
                     rf"{_COUNTED}[\u4e00-\u9fff]{{0,2}}{w}|"
                     rf"(?:什么|哪些|哪个|哪种|哪类)(?:[\u4e00-\u9fff]{{1,3}}的)?{w}", question) is not None


def _pair(group: Sequence[Fact]) -> frozenset[str]:
    """The clauses a disagreement is between."""
    return frozenset(f.chunk.chunk_id for f in group)


def _act_word(t: Term) -> bool:
    """Whether a question word names an act (设在, 举行, "resign"), not a thing or a qualifier (首次)."""
    return not _thing_word(t) and (not t.cjk or (word_tag(t.text) or "").startswith("v"))


#: where the words a stated sum prices end: a clause break or a preposition ("a £12 sandwich
#: to get my money back")
_PRICED_END = re.compile(r"[,，。?？;；!！]|\b(?:to|for|and|or|in|on|at|with|from|if|when|so)\b", re.I)


def _priced_things(question: str, stated: Sequence[Quantity], evidence: Sequence[Evidence]) -> set[str]:
    """The keys of the thing each sum of money the question states prices ("a $50 lunch",
    "一顿200元的工作餐"): the user's own case of what a rule sets a threshold for ("a receipt
    for any expense above USD 75"). When the evidence states sums in that currency, the rule
    decides the case whatever the thing is called, so it is no thing missing from them."""
    money = [q for q in stated if q.kind == "money"]
    if not money:
        return set()
    units = {x.unit for e in evidence for x in extract_quantities(e.chunk.text) if x.kind == "money"}
    out: set[str] = set()
    for q in money:
        at = question.find(q.raw)
        if q.unit not in units or at < 0:
            continue
        after = _PRICED_END.split(question[at + len(q.raw):], maxsplit=1)[0]
        head = content_terms(after.lstrip("的 "))
        # "a €18 taxi ride": the words up to the preposition; "一顿200元的工作餐要附发票吗":
        # the noun after 的 (the rest of a Chinese clause runs on without a break)
        out |= {t.key for t in (head[:1] if is_cjk(after) else head[:3])}
    return out


def _thing_word(t: Term) -> bool:
    if t.cjk:
        return is_nounish(t.text)
    low = t.text.lower()
    # "-ed" / "-ly" forms and "onwards", "afterwards" are actions and manners
    return not (re.search(r"(?:ed|ly)$|^(?:on|up|down|back|after|for|in|out|home)wards?$", low) or irregular_form(low))




#: an English rule's subject when it is a group of people: "Interns may …", "Agency workers are …"
_GROUP = (r"(?:[A-Za-z-]+\s+){0,2}(?:interns|trainees|apprentices|contractors|consultants|freelancers|temps|"
          r"volunteers|students|visitors|managers|directors|executives|employees|staff|workers|starters|joiners|"
          r"leavers|parents|drivers|operatives|members)")
#: the groups a rule is written for, listed ("Contractors, agency workers and interns"), with
#: what narrows them ("on placements shorter than six months") before the verb
_GROUP_SUBJECT = re.compile(
    rf"^(?:All\s+)?(?P<group>{_GROUP}(?:\s*,\s*{_GROUP})*(?:,?\s+(?:and|or)\s+{_GROUP})?)"
    r"(?:\s+(?:on|in|with|who|whose|under|during|from)\b[^,;.]{0,60}?)?\s+"
    r"(?:may|must|can(?:not)?|shall|should|will|are|need|have to)\b", re.I)
#: the subject words of a rule for everyone it covers
_EVERYONE = frozenset({"employees", "employee", "staff", "eligible", "everyone", "people", "persons",
                       "members", "colleagues", "workers", "all"})
#: "临时外出就医人员跨省异地住院的，……" / "If the trip is international, ...": a rule for a case
_CONDITION = re.compile(r"^(?P<zh>[^，。；,;]{4,40}?)的[，,]|^(?:if|where|when)\s+(?P<en>[^,.;]{8,100}),", re.I)


_ASKS_CONFLICT = re.compile(
    r"不一致|不同|冲突|矛盾|以哪个为准|以谁为准|以哪.{0,6}为准|哪个优先|哪个有效|哪个适用|听谁的|"
    r"\b(?:conflict\w*|contradict\w*|inconsistent|disagree\w*|prevails?|takes? precedence)\b", re.I)
_DIFFERENCE = re.compile(r"区别|差别|差异|异同|不同|^differ", re.I)
_CONFLICT_WORDS = re.compile(r"一致|为准|冲突|矛盾|优先|^(?:conflict|contradict|inconsist|disagre|prevail|preced)", re.I)




#: answer types answered by a name (agents/reasoner/question.py): who, which body, where, what it is called
_NAME_TYPES = frozenset({"person", "organization", "place", "name"})


def _about_question(group: Sequence[Fact], plan: _Plan, question: str,
                    sentences: Sequence[_Sentence], chosen: Sequence[_Sentence]) -> bool:
    """Whether a disagreement concerns what was asked: a question asking for one kind of value
    (a date, an amount) is not answered by a disagreement about another kind (a name, a rate),
    and a yes/no question only by one in the sentences its answer quotes, not next to them."""
    kind = group[0].quantity.kind
    if kind == "entity" and all(f.quantity.raw in question for f in group):
        return False  # "男单和女单冠军分别是谁": the things it asks about one by one, not two values
    if kind == "entity" and all(CLOCK_TIME.search(f.quantity.raw) for f in group):
        kind = "time"  # "七时至二十四时" and "八时至二十二时": two hours of the day
    elif kind == "entity" and any(_TIME_WORDS.search(f.quantity.raw) for f in group):
        kind = "date"  # "新浪科技讯 8月26日下午消息" / "本季度": when it was said, not a value
    # numbers said in a unit the quantity reader has no rule for ("at least 14 characters",
    # "40学时") may be of the kind asked ("minimum length" reads as a duration); a bare number
    # ("20" and "42" of two table rows) says nothing of its kind
    unread = kind == "entity" and all(re.match(r"[\d.,]+\s*[^\d.,\s]", f.quantity.raw) for f in group)
    if kind == "entity" and re.search(r"\d", group[0].quantity.raw):
        kind = "number"
    allowed = {kind} | ({"count", "number"} if kind in ("count", "number") else set())
    wants = plan.wants
    if wants.kinds and not allowed & wants.kinds and not unread or unasked_kind(question, kind):
        return False
    if wants.answer_type in _NAME_TYPES and not wants.quantity and kind != "entity":
        return False  # "who won ..." is not answered by two dates
    if wants.answer_type == "number" and kind == "entity":
        return False  # nor "how much is the fine" by two names of the body that imposes it
    if wants.answer_type == "number" and kind == "date" and "date" not in wants.kinds:
        return False  # nor "营收是多少" by two dates
    if any(_of_the_others(f, question) for f in group):
        return False  # "对非居民用户每半年……" for a question about 居民
    yes_no = wants.yes_no
    return not yes_no or any(s in chosen for s in sentences)


def _of_the_others(fact: Fact, question: str) -> bool:
    """Whether the clause stating a fact's value is about everything but a class the question
    names: 非居民用户 when it asks about 居民."""
    clause = next((c for c in re.split(r"[，；,;。]", fact.sentence) if fact.quantity.raw in c), "")
    return any(w.startswith(NOT_CLASS) and w[1:] in question and w not in question for w in matter_terms(clause))


def _unasked_condition(sentence: str, asked: TextCover, who: bool = False) -> bool:
    """Whether a sentence applies only under a condition the question does not state: at least
    three things named in its leading condition, and the question (or its formal rewrite) covers
    fewer than a third of its words; or (English) its subject is a group of people the question does not
    name ("Interns may …", "Agency workers are not …") rather than everyone the rule is for
    ("Employees", "Eligible staff") — unless the question asks who (``who``): then the subject
    is the answer. A question that names no special case wants the general rule."""
    group, case = _conditions(sentence, dictionary_generation())
    if group and not who and not any(asked.covers(t) for t in group):
        return True
    return bool(case) and sum(asked.covers(t) for t in case) * 3 < len(case)


@lru_cache(maxsize=8192)
def _conditions(sentence: str, generation: int) -> tuple[tuple[Term, ...], tuple[Term, ...]]:
    """:func:`_unasked_condition`'s words of a sentence, kept per sentence and dictionary (the
    same sentences are candidates question after question): those of its subject when that is
    a group of people, and those of its leading condition when it names at least three things."""
    subject = _GROUP_SUBJECT.match(sentence)
    group = tuple(t for t in content_terms(subject.group("group")) if t.text.lower() not in _EVERYONE) \
        if subject else ()
    m = _CONDITION.match(sentence)
    case = tuple(t for t in content_terms(m.group("zh") or m.group("en")) if not t.soft) if m else ()
    # a case is named by things, not actions: "驾驶电动自行车上道路行驶的" names two, and is
    # the case of "骑电动自行车上路" however the riding is worded
    return group, case if sum(_thing_word(t) for t in case) >= 3 else ()






def _bigram_share(question: frozenset[str], sentence: str) -> float:
    if not question:
        return 0.0
    return len(question & mixed_bigrams(sentence)) / len(question)


def _language(question: str, route: RouteDecision) -> str:
    if route.language in ("zh", "en"):
        return route.language
    from agentic_rag.text.language import detect_language

    return detect_language(question)


def _version_factor(chunk: Chunk, route: RouteDecision) -> float:
    pinned = route.version or "latest"
    if pinned != "latest":
        return C.PINNED_MATCH if chunk.is_version(pinned) else C.PINNED_MISMATCH
    return 1.0 if chunk.status == "active" else C.NOT_IN_FORCE


def _current(candidates: list[_Sentence], route: RouteDecision, former: bool = False) -> list[_Sentence]:
    """The candidates that may answer: a superseded version's sentence does not when the
    version in force has the same clause in the evidence (unless the question pins a version or
    asks for the one before a change, ``former``). It still counts for conflicts: its value is
    named as the superseded one."""
    if (route.version or "latest") != "latest" or former:
        return candidates  # a version asked for, or the one before a change
    live = {(s.chunk.title, s.chunk.clause) for s in candidates if s.chunk.status == "active" and s.chunk.clause}
    kept = [s for s in candidates if s.chunk.status == "active" or (s.chunk.title, s.chunk.clause) not in live]
    return kept or candidates


def _of_edition(evidence: list[Evidence], question: str) -> list[Evidence]:
    """The evidence less the reports whose title names another edition of what the question
    counts: "第三届……博览会开幕" is about the third expo, and no evidence for "第二届……博览会"."""
    counted = ordinals(question)
    if not counted:
        return evidence
    kinds = {c for _, c in counted}

    def other(title: str) -> bool:
        titled = ordinals(unstamped(title))
        return bool(titled) and not titled & counted and bool({c for _, c in titled} & kinds)

    return [e for e in evidence if not other(e.chunk.title)]


def _about_named(evidence: list[Evidence], question: str) -> list[Evidence]:
    """The evidence from rule documents about whom the question names: when it names a company
    or a place ("does Brambleworth give sick leave") and some document mentions it, a policy of
    another company that never does is about someone else, and cannot answer. Only for rule
    text (a policy binds its issuer's people); news and encyclopedia passages, and questions
    that reach one thing through another, keep all their evidence."""
    given = extract_names(question)
    names = [n.lower() for n in given]
    if not names or needs_hop(question) or not is_rule_text([e.chunk.title for e in evidence],
                                                            [e.chunk.clause for e in evidence]):
        return evidence
    said: dict[str, str] = {}
    for e in evidence:
        c = e.chunk
        said[c.doc_id] = f"{said.get(c.doc_id, '')} {c.title} {c.authority or ''} {c.text}".lower()
    # a document is about the acronym of its title ("the LGPL"), which it seldom writes out
    titled = {e.chunk.doc_id for e in evidence if any(abbreviates(n, e.chunk.title) for n in given)}
    about = {doc for doc, text in said.items() if any(n in text for n in names)} | titled
    if not about:
        return evidence
    # another version of a document about it is about it too, whether or not its retrieved
    # clauses repeat the name, and so is an instrument amending it ("X – Amendment No. 1")
    titles = {e.chunk.title for e in evidence if e.chunk.doc_id in about}
    return [e for e in evidence if e.chunk.doc_id in about or e.chunk.title in titles
            or amended_title(e.chunk.title) in titles]


def _table_text(chunk: Chunk) -> str:
    if chunk.table is None:
        return ""
    return "\n".join(" ".join(row) for row in [chunk.table.headers, *chunk.table.rows])


#: characters after a sentence read to tell a numbered title by the blank line under it
_TITLE_TAIL = 16


def _sentences_of(chunk: Chunk, lang: str, lists: bool = False) -> list[_Sentence]:
    """Candidate sentences of one chunk: table rows for tables, sentences otherwise. With
    ``lists`` (a "which ones" question) a list and the line that introduces it ("Countries
    requiring a visa letter:" and its items) is also one candidate, quoted whole."""
    out: list[_Sentence] = []
    text = chunk.text
    rows_done = False
    if chunk.table is not None and chunk.table.rows:
        headers = chunk.table.headers
        for row in chunk.table.rows:
            cells = [c.strip() for c in row]
            if lang == "zh":
                shown = "，".join(f"{h}{'为' if h else ''}{c}" for h, c in zip(headers, cells) if c)
            else:
                shown = "; ".join(f"{h}: {c}" if h else c for h, c in zip(headers, cells) if c)
            line = _row_line(text, cells)
            offset = text.find(line) if line else -1
            quote = line or " | ".join(cells)
            extra = " ".join(headers) + " " + " ".join(cells)
            out.append(_Sentence(ev=None, idx=0, text=shown, quote=quote, offset=offset,  # type: ignore[arg-type]
                                 cover=TextCover(extra), extra_text=extra))
        rows_done = True
    intro = lead = run_in = ""
    intro_at = run_in_end = -1
    run_in_item = False
    headed = False  # the intro is a heading, not a line ending in a colon
    items: list[tuple[int, int, str]] = []

    def whole_list() -> None:
        if lists and intro and len(items) >= 2:
            sep = "；" if lang == "zh" else "; "
            shown = _after_intro(intro, sep.join(strip_label(text[a:b]).rstrip("；;。.") for a, b, _ in items), lang)
            out.append(_Sentence(ev=None, idx=0, text=shown, quote=text[intro_at:items[-1][1]],  # type: ignore[arg-type]
                                 offset=intro_at, cover=TextCover(shown)))
        items.clear()

    spans = split_sentences(text)
    for s, e in spans:
        quote = text[s:e]
        if "\n" in quote:
            # a scraped page's chrome lines run into the first sentence after them: drop them
            for line in quote.split("\n")[:-1]:
                if not _is_page_chrome(line):
                    break
                s += len(line) + 1
            quote = text[s:e]
        if rows_done and (quote.count("|") >= 2 or _mentions_row(quote, chunk.table)):
            continue  # the table's own rendering: already read as rows
        if re.fullmatch(r"[\s|:\-—]+", quote):
            continue  # table rules state nothing
        if "\n" not in quote and (text[e:e + 1] == "\n" and is_heading(quote, text[e:].lstrip()[:1] or "A")
                                  or is_numbered_title(quote, text[e:e + _TITLE_TAIL])):
            # a heading is its section's context, and the subject of a list right under it
            # ("Appendix A. Countries where remote work is never approved" + "- Russia" ...)
            whole_list()
            intro, intro_at, headed = strip_label(quote.lstrip("# ")).strip(), s, True
            continue
        # a footnote mark ("[^1]") is no part of what the sentence says, and reads as a citation
        shown = _NOTE_MARK.sub("", strip_label(quote)).strip(" |")
        if len(re.sub(r"\W", "", shown)) < 2 or text[e:e + 1] in ("？", "?"):
            continue  # a question (a FAQ's or a headline's) states nothing
        if _METADATA.match(shown) or shown.strip() == chunk.title.strip() and len(spans) > 1:
            # the document's title, number, issuer and date lines state no rule (a passage of one
            # line is its own title, when none was given: it is still what the passage says)
            continue
        if _is_page_chrome(shown):
            # a web page's menus, bylines and footers state nothing; a byline block that wide
            # gaps run into the first sentence ("日期：…    来源：北京日报    原标题：……    从市交通
            # 委获悉，……") leaves that sentence
            tail = _GAP_RUN.split(shown)[-1].strip()
            at = quote.rfind(tail) if tail else -1
            if tail == shown.strip() or at < 0 or _is_page_chrome(tail) or len(re.sub(r"\W", "", tail)) < C.MIN_TAIL:
                continue
            s += at
            quote, shown = text[s:e], tail
        if run_in and "\n" in text[run_in_end:s]:
            run_in = ""
        line_start, line_end = text.rfind("\n", 0, s) + 1, text.find("\n", e)
        if _RUN_IN.fullmatch(shown) and not text[line_start:s].strip() and text[e:e + 1] in ".:" \
                and text[e + 1:line_end if line_end >= 0 else len(text)].strip():
            # a run-in heading ("- **Flexible working.** You may ask ...", "1. Notice. Tell ..."):
            # the context of the sentences after it on its line, not a statement
            run_in, run_in_end, run_in_item = shown, e, bool(LIST_ITEM.match(quote))
            continue
        context = run_in + " " if run_in else ""
        # a search excerpt's date stamp ("Jan 25, 2022 ...") says when the page was found, not
        # what the sentence is about: "2022" there does not make it a sentence about 2022
        said = unstamped(shown)
        if _INTRO.search(text[s:e + 1]) or _FOLLOWING.search(text[s:e + 1]) and _list_follows(text, e):
            # "统筹基金支付比例如下：" says nothing alone; its items carry it as their subject
            whole_list()
            intro, intro_at, headed = shown, s, False
            continue
        if run_in and run_in_item:
            # the body of an item with a run-in heading: said under its list's line, but not
            # itself an item to list ("Receipts", "Deadline" are what the list names)
            cover = TextCover(context + ("" if headed or not intro else intro + " ") + said)
            lead = ""
        elif LIST_ITEM.match(quote) and intro:
            # an item says what its introducing line says ("如下：" + "（一）……"); under a
            # heading it stands alone, the heading is its context
            cover = TextCover(context + (said if headed else intro + " " + said))
            items.append((s, e, shown))
            lead = "" if headed else _after_intro(intro, "", lang)
            # and is shown after it: "parking fines" alone does not say they are not reimbursable
            shown = lead + shown
        else:
            # a sentence after the introducing line, on its line, before the items keeps the
            # list open ("The following apps are approved. Customer data only through the first
            # two." + "- Teams"); any other ends it
            if not (intro and not items and not headed and "\n" not in text[intro_at:s]):
                whole_list()
                intro = lead = ""
            cover = TextCover(context + said)
        # the quote is the sentence as written, without the clause label the citation names
        cut = label_length(quote) if re.match(r"\s*(?:第|Article|Section|Clause|Art\.|Sec\.|\d+\.\d)", quote) else 0
        out.append(_Sentence(ev=None, idx=0, text=shown, quote=quote[cut:], offset=s + cut,  # type: ignore[arg-type]
                             cover=cover, lead=lead))
    whole_list()
    return out


#: a run-in heading: a few capitalised words ending the first "sentence" of a line
_RUN_IN = re.compile(r"[A-Z][A-Za-z'’-]*(?: [A-Za-z'’-]+){0,3}")


_NOTE_MARK = re.compile(r"\[\^[^\]\s]{1,10}\]")


def _list_follows(text: str, end: int) -> bool:
    """Whether the first line with words after the line ending at ``end`` is a list item."""
    line = next((ln for ln in text[end:end + 400].split("\n")[1:] if ln.strip()), "")
    return bool(LIST_ITEM.match(line))


def _after_intro(intro: str, item: str, lang: str) -> str:
    """A list item shown after the line that introduces it ("The following are not
    reimbursable: parking fines")."""
    return intro.rstrip("：: ") + ("：" if lang == "zh" else ": ") + item


_CHROME_WORDS = re.compile(r"登录|注册|首页|分享到|扫一扫|版权所有|免责声明|责任编辑|热点推荐|更多资讯|关注我们|来源：|"
                           r"\b(?:sign in|log in|subscribe|all rights reserved|cookie|privacy policy|share this)\b", re.I)
#: a wide gap: the spacing of a page's byline block and menus, not of prose
_GAP_RUN = re.compile(r"\s{3,}|\t")
_WIDE_GAPS = re.compile(rf"\S(?:{_GAP_RUN.pattern})\S")


def _is_page_chrome(sentence: str) -> bool:
    """Whether a "sentence" is a scraped web page's chrome: navigation, bylines, share buttons,
    footers (two such words, text laid out in columns by wide gaps, or one word and two gaps)."""
    words, gaps = len(_CHROME_WORDS.findall(sentence)), len(_WIDE_GAPS.findall(sentence))
    return words >= 2 or gaps >= 4 or words and gaps >= 2


def _mentions_row(text: str, table) -> bool:
    """Whether a line of a table chunk's text is part of the table's rendering."""
    cells = {c.strip() for row in table.rows for c in row if len(c.strip()) >= 2}
    heads = {h.strip() for h in table.headers if len(h.strip()) >= 2}
    return any(c in text for c in cells) or any(h in text for h in heads)


def _row_line(text: str, cells: list[str]) -> str:
    for line in text.splitlines():
        if all(c in line for c in cells if c):
            return line.strip()
    return ""


def _trim(s: _Sentence, lang: str, question: str = "") -> str:
    """A long sentence cut to its semicolon clauses that mention question words. Only whole
    clauses are dropped (never the parts of one), so what is kept still says what it said.
    A sentence still past ``C.QUOTE_CAP`` (a quotation that runs over many full stops, a news
    lead of ten comma clauses) with a clause in the question's frame (导演杨冬 for "导演是谁")
    keeps the clauses that answer: that one, then those with the most question words, then a
    value next to one of them, in their order, with "……" / "..." where clauses are left out."""
    text = s.text.rstrip("。；;.，, ")
    key = "zh" if lang == "zh" else "en"
    limit = C.LONG_SENTENCE[key]
    if len(text) <= limit or "\n" in s.quote.strip() or s.chunk.table is not None and s.extra_text:
        return text  # short, a list quoted whole, or a table row: every item or cell is the answer
    segs = [p for p in re.split(r"(?<=[；;])", text) if p.strip()]
    if len(segs) >= 2:
        keep = [seg for seg in segs
                if any(TextCover(seg).covers(k) for k in s.hits) or extract_quantities(seg)]
        trimmed = "".join(keep).rstrip("，,；; ")
        text = trimmed if len(trimmed) >= 8 else text
    return text if len(text) <= C.QUOTE_CAP[key] else _answering_clauses(text, s.hits, question, lang)


def _answering_clauses(text: str, hits: set[str], question: str, lang: str) -> str:
    """The clauses of an over-long ``text`` that answer (see :func:`_trim`), within the cap."""
    cap = C.QUOTE_CAP["zh" if lang == "zh" else "en"]
    parts = [p for p in re.split(r"(?<=[，,。！？!?；;])\s*" if lang == "zh" else r"(?<=[,;!?]|\.)\s+", text) if p.strip()]
    slots = [bool(question) and (fills_slot(p, question) or _states_value_asked(p, question)) for p in parts]
    if len(parts) < 2 or not any(slots):
        return text  # no clause says where the answer is: the quote stays whole
    ranks = [(int(slot), sum(1 for k in hits if TextCover(p).covers(k)), int(bool(extract_quantities(p))))
             for slot, p in zip(slots, parts)]
    kept: set[int] = set()
    size = 0
    for i in sorted(range(len(parts)), key=lambda i: tuple(-v for v in ranks[i])):
        if ranks[i][:2] == (0, 0) or kept and size + len(parts[i]) > cap:
            continue
        kept.add(i)
        size += len(parts[i])
    if not kept:
        return text
    # a value in the clause next to one about the matter ("GDP达到114万亿元，同比增长8.1%")
    for i in [i for i in range(len(parts)) if ranks[i][2] and i not in kept and {i - 1, i + 1} & kept]:
        if size + len(parts[i]) <= cap:
            kept.add(i)
            size += len(parts[i])
    gap = "……" if lang == "zh" else " ... "
    out, last = gap.lstrip() if min(kept) > 0 else "", -1
    for i in sorted(kept):
        if last >= 0 and i != last + 1:
            out = out.rstrip("，,；;。. ") + gap
        out += parts[i] if lang == "zh" or not out or out.endswith(" ") else " " + parts[i]
        last = i
    out = out.rstrip("。；;.，, ")
    return out + gap.rstrip() if last < len(parts) - 1 else out


def _states_value_asked(clause: str, question: str) -> bool:
    """Whether ``clause`` states a value of the kind a "how long / how much / when" question
    asks, one the question does not give itself ("... and in any event within 24 hours" for
    "how long have I got to report it")."""
    wants = analyze(question)
    if not wants.quantity:
        return False
    kinds = new_quantity_kinds(clause, question) - {"other_count"}
    return bool(kinds) and (not wants.kinds or bool(kinds & wants.kinds))


def _citation(chunk: Chunk, quote: str, offset: int) -> Citation:
    """A citation of ``quote``; its span is the quote's place in the document when the quote is
    verbatim in the chunk (``offset`` >= 0) and the chunk knows its own span, else the chunk's."""
    span = chunk.span
    if offset >= 0 and span[1] > span[0]:
        lead = len(quote) - len(quote.lstrip())
        body = quote.strip()
        span = (span[0] + offset + lead, span[0] + offset + lead + len(body))
    return Citation(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, title=chunk.title,
                    clause=chunk.clause, quote=quote.strip(), span=span)


def _meta_of(chunk: Chunk) -> list[str]:
    out = [chunk.title, chunk.clause or "", " ".join(chunk.path), chunk.version or ""]
    for d in (chunk.publish_date, chunk.effective_date):
        if d is not None:
            out.append(f"{d.year}年{d.month}月{d.day}日 {d.isoformat()} {d.year}年")
    return out


def _dedupe(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _dedupe_sentences(chosen: Sequence[_Sentence]) -> list[_Sentence]:
    """The chosen sentences without repeats: a sentence said again, or an item of a list the
    answer quotes whole ("……下列材料：身份证明；照片" and "照片")."""
    keys = [re.sub(r"\W", "", s.text.removeprefix(s.lead)) for s in chosen]
    out: list[_Sentence] = []
    seen: set[str] = set()
    for i, (s, key) in enumerate(zip(chosen, keys)):
        if key in seen or any(j != i and key != other and key in other for j, other in enumerate(keys)):
            continue
        seen.add(key)
        out.append(s)
    return out


def _join(lang: str, pieces: Sequence[str]) -> str:
    if lang == "zh":
        return "".join(p if p.endswith(("。", "）", "？")) else p + "。" for p in pieces if p)
    return " ".join(p if p.endswith((".", ")")) else p + "." for p in pieces if p)




def _source(v, lang: str, same_title: bool) -> str:  # v: ConflictValue
    year = v.publish_date.year if v.publish_date else None
    clause = v.clause or ""
    limit = C.TITLE_CHARS if lang == "zh" else C.TITLE_CHARS_EN
    if len(v.title) > limit:
        cut = v.title[:limit - 1]
        if lang != "zh" and v.title[limit - 1].isalnum() and " " in cut:
            cut = cut[:cut.rfind(" ")]  # never half a word: "Amendm…" reads as a term of its own
        v = v.model_copy(update={"title": cut.rstrip(" –—-:,") + "…"})
    if lang == "zh":
        prefix = f"{year}年" if year and (same_title or str(year) not in v.title) else ""
        return f"{prefix}《{v.title}》{clause}" if v.title else f"{prefix}{clause}"
    suffix = f" ({year})" if year and (same_title or str(year) not in v.title) else ""
    return f"{v.title}{suffix}{' ' + clause if clause else ''}"


def _value_key(value: str) -> str:
    """A conflict value as compared for sameness: the amount it states ("全会170" and "170" are
    one), else its words, case, spaces and punctuation aside."""
    found = extract_quantities(value)
    if found:  # an amount by its number (48个 and 48 are one), a date by its date
        q = found[0]
        return f"#{q.value:g}" if isinstance(q.value, float) else f"{q.kind}:{q.value}"
    numbers = re.findall(r"\d+(?:\.\d+)?", value)
    if numbers:
        return "#" + ",".join(f"{float(n):g}" for n in numbers)
    return re.sub(r"\W+", "", value).lower()


def _status_of(chunk_id: str, decision: Decision) -> str:
    return next((f.chunk.status for f in decision.candidates if f.chunk.chunk_id == chunk_id), "active")


def _rule_words(decision: Decision, lang: str) -> str:
    words = RULE_WORDS[lang]
    return words[decision.rule].format(v=decision.detail)


_METADATA = re.compile(
    r"^\s*(?:发布机关|发文机关|发布日期|印发日期|成文日期|施行日期|文号|发布单位|"
    r"Issued(?: by| on)?|Effective(?: date)?|Document No\.?|Version|Published|Issuing authority)\s*[:：]"
    r"|^[^，。,;；]{0,40}〔\d{4}〕\d+号\s*$"
    r"|^[^，。,;；]{2,40}\d{4}年\d{1,2}月\d{1,2}日\s*$", re.I)
_INTRO = re.compile(r"(?:[:：]\s*$|如下[:：]?\s*$|as follows[:.]?\s*$)", re.I)
#: "The following apps are approved for work messaging.": the line of a list that follows it
_FOLLOWING = re.compile(r"^\s*the following\b[^,:;.]*\b(?:are|is|apply|applies|may|must)\b[^,:;.]*[.:]\s*$", re.I)
_TABLE_REF = re.compile(r"下表|如下表|附表|见表|表\s*\d|\btable (?:below|above)\b|\bthe table\b|\bTable\s+\d", re.I)


def _referenced_tables(sentence: str, chunk: Chunk, evidence: Sequence[Evidence]) -> list[Chunk]:
    """Table chunks of the same document when the sentence points at a table ("见下表")."""
    if chunk.table is not None or not _TABLE_REF.search(sentence):
        return []
    return [e.chunk for e in evidence
            if e.chunk.doc_id == chunk.doc_id and e.chunk.table is not None][:1]


_STRONG_CUE = re.compile(r"详见|参见|参照|依照|按照|列入|see|as set out in|set out in|listed in|in accordance with|refer to",
                         re.I)


def _clause_text(no: str, chunk: Chunk, evidence: Sequence[Evidence]) -> str:
    """The text of clause ``no`` of ``chunk``'s act as the evidence holds it: the clause itself
    and the amending items that change it. In an amending act "本条例第十九条" is an article
    of the act it amends, and the items an amending act adds to an article ("在第十九条中增加
    一项，作为第六项：“（六）……”") are items of it."""
    act = amended_title(chunk.title)
    act_title = _squeezed(act or chunk.title)

    def of_clause(c: Chunk) -> bool:
        if (c.doc_id == chunk.doc_id and not act) or (act and _squeezed(c.title) == act_title):
            return c.clause_no == no
        amends = amended_title(c.title)
        return bool(amends) and _squeezed(amends) == act_title and any(n == no for n, _ in amended_clauses(c.text))

    return "\n".join(e.chunk.text for e in evidence if of_clause(e.chunk))


def _items_referred(sentence: str, chunk: Chunk, evidence: Sequence[Evidence]) -> str:
    """The text of the numbered items of other clauses of the same document that ``sentence``
    refers to ("本条例第十一条第（五）项"), as far as the evidence holds those clauses."""
    out: list[str] = []
    own = not amended_title(chunk.title)
    for no, items in item_references(sentence):
        if no == chunk.clause_no and own:
            continue  # "本条第一款第（二）项": its own clause, already its context
        text = _clause_text(no, chunk, evidence)
        out.extend(t for t in (item_text(text, i) for i in items) if t)
    return "\n".join(out)


def _breached_text(sentence: str, chunk: Chunk, evidence: Sequence[Evidence]) -> str:
    """What the clauses a penalty sentence names as breached say ("违反本条例第十条规定的" is
    about what 第十条 forbids), as far as the evidence holds them."""
    own = not amended_title(chunk.title)
    itemized = {no for no, _ in item_references(sentence)}  # "第十九条第一项": that item only (_items_referred)
    return "\n".join(_clause_text(no, chunk, evidence) for no in breached_clauses(sentence)
                     if no not in itemized and not (no == chunk.clause_no and own))


def _referenced_chunks(sentence: str, chunk: Chunk, evidence: Sequence[Evidence],
                       strong_only: bool = False) -> list[Chunk]:
    """Evidence chunks that ``sentence`` defers to: 具体比例详见第十二条 -> 第十二条 of the same
    document (or of the named 《document》), Section 6 -> section 6."""
    out: list[Chunk] = []
    for m in CROSS_REFERENCE.finditer(sentence):
        cue = m.group("cue") or m.group("encue") or m.group("apcue")
        if not cue or strong_only and not _STRONG_CUE.fullmatch(cue.strip()):
            continue
        title = m.group("title")
        if m.group("no"):
            no = cn_to_int(m.group("no"))
            if no is None:
                continue
            want = f"{no}-{cn_to_int(m.group('sub'))}" if m.group("sub") else str(no)
        elif m.group("apno"):  # "listed in Appendix A", "详见附件1": the appendix of that number
            no = cn_to_int(m.group("apno"))
            want = str(no) if no is not None else m.group("apno")
        else:
            want = m.group("enno")
        want = want.lower()
        for e in evidence:
            c = e.chunk
            if c.chunk_id == chunk.chunk_id:
                continue
            if title:
                if re.sub(r"\s", "", title) not in re.sub(r"[《》\s]", "", c.title):
                    continue
            elif c.doc_id != chunk.doc_id:
                continue
            if m.group("apno") and c.kind != "appendix":
                continue
            number = (c.clause_no or "").lower()
            if (number == want or number.startswith(want + ".")) and c not in out:
                out.append(c)
    return out[:4]
