"""The four Self-RAG gates, each an LLM judgement with a deterministic fallback.

1. **retrieve-or-not** — is this a question for the documents at all (decision only)?
2. **retrieval planning** — at most three noun-phrase queries anchored on the question's
   entities and times (narrower ones after an INSUFFICIENT verdict).
3. **sufficiency** — coverage, timeliness, authority (1–5) → SUFFICIENT / INSUFFICIENT plus the
   one missing element, which drives the next, narrower round.
4. **verification and self-correction** — every answer sentence checked against the passages
   it cites; unsupported ones rewritten from the evidence or flagged, the reason recorded.

With ``llm=None`` every gate runs its rules. With an LLM, invalid output is retried once with the
validation error and then the rules run; every such fallback is a ``fallback`` trace event. An
LLM can never make an answer *less* grounded: a rewrite it proposes is accepted only when the
deterministic check finds its numbers and terms in the passages it cites.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel

from agentic_rag.models.llm import LLM, LLMFallback, json_schema, structured
from agentic_rag.runtime import prompts
from agentic_rag.agents.reasoner.factcheck import sentence_supported
from agentic_rag.agents.reasoner.question import analyze, carries
from agentic_rag.agents.sufficiency import Sufficiency, anchors, key_terms, sufficiency_rules
from agentic_rag.text.quantities import Quantity, extract_quantities, quantity_key
from agentic_rag.text.tokenize import tokenize
from agentic_rag.types import Answer, AnswerSentence, Citation, Evidence, RouteDecision

if TYPE_CHECKING:  # the runtime imports this module; only the type is needed here
    from agentic_rag.runtime.trace import Tracer

# Greetings, thanks and other small talk: the only questions the rules decline to retrieve for.
_CHITCHAT = re.compile(
    r"^\s*(你好|您好|嗨|哈喽|早上好|下午好|晚上好|谢谢|多谢|感谢|再见|拜拜|好的|收到|辛苦了|你是谁|"
    r"hi|hello|hey|thanks|thank you|bye|goodbye|good (morning|afternoon|evening)|ok|okay|who are you)"
    r"[\s!！。.,，?？~～啊呀呢吧]*$", re.I)


_MARKER = re.compile(r"\[\d+\]")  # the Reasoner's citation markers: "...80%[1]"


# --------------------------------------------------------------------------- the gates

class Gates:
    """The four gates for one run. ``llm`` may be None (rules only); ``tracer`` records every
    decision and fallback; ``fact_check`` is the Reasoner's verifier when it has one."""

    def __init__(self, llm: LLM | None, tracer: Tracer, *, max_tokens: int = 400,
                 fact_check: Callable[[Answer, Sequence[Evidence]], Answer] | None = None) -> None:
        self.llm = llm
        self.tracer = tracer
        self.max_tokens = max_tokens
        #: the Reasoner's sentence-level fact check (``Reasoner.verify``), the rules of gate 4
        self.fact_check = fact_check
        self.declined_by_llm = False
        #: the rules' SUFFICIENT that the LLM's INSUFFICIENT (or a SUFFICIENT it was less sure of
        #: than the rules) overruled in the last sufficiency round (the runtime checks that the
        #: searches it asks for find what it said was missing)
        self.overruled: Sufficiency | None = None
        #: whether the last sufficiency round was the rules' confident verdict (every anchor and
        #: term covered by sources in force with a named issuer): the answer it leads to is
        #: trusted as the rules confirm it, with no second look by the LLM
        self.sure = False
        #: the queries the LLM planned (not the rules' ones that run beside them)
        self.planned: list[str] = []

    # -- 1. retrieve or not
    def should_retrieve(self, route: RouteDecision) -> bool:
        """Rules: always retrieve, unless the question is small talk. The LLM is asked only when
        the rules see no anchor (no entity, place, clause, year) — an anchored question is about
        the documents by construction, so asking would only cost tokens."""
        rules = not bool(_CHITCHAT.match(route.question))
        if self.llm is None or anchors(route) or not rules:
            self.tracer.emit("gate", tool="retrieve_or_not", args={"decision": _decision(rules)},
                             detail="rules")
            return rules
        try:
            with self.tracer.timed() as ms:
                out = structured(self.llm, prompts.retrieve_messages(route.question),
                                 prompts.RetrieveDecision, max_tokens=16)
        except LLMFallback as exc:
            self.tracer.fallback("retrieve_or_not", exc.reason, args={"decision": _decision(rules)})
            return rules
        decision = out.decision == "RETRIEVE"
        #: the model declined a search the rules would run: the runtime checks the documents
        self.declined_by_llm = not decision
        self.tracer.emit("gate", tool="retrieve_or_not", args={"decision": out.decision},
                         duration_ms=ms(), detail="llm")
        return decision

    # -- 2. retrieval planning
    def plan(self, route: RouteDecision, *, missing: str = "", already_run: Sequence[str] = ()) -> list[str]:
        """At most three queries. Rules: the route's query (or, after an INSUFFICIENT round, the
        query narrowed by the missing element) plus slot-anchored variants.

        The LLM plans when there is something to plan: after an INSUFFICIENT verdict (narrow the
        search to the missing element) or when the Router was unsure. A confident route already
        is a normalized, slot-anchored query, and asking a model to restate it costs a call."""
        rules = plan_rules(route, missing=missing, already_run=already_run)
        if self.llm is None or not (missing or route.fallback):
            self.tracer.emit("gate", tool="plan", args={"queries": rules},
                             detail="rules" if self.llm is None else "rules (confident route)")
            return rules
        try:
            with self.tracer.timed() as ms:
                out = structured(self.llm, prompts.plan_messages(route, missing=missing, already_run=already_run),
                                 prompts.RetrievalPlan, max_tokens=120)
        except LLMFallback as exc:
            self.tracer.fallback("plan", exc.reason, args={"queries": rules})
            return rules
        # the rules' narrower query runs too: a plan that misses the point then costs a
        # search, not the round
        ran = {normalize_query(q) for q in already_run}
        asked = key_terms(route.question)
        proposed = [q for q in out.queries if not echoes_schema(q, prompts.RetrievalPlan, asked)]
        if not proposed:
            self.tracer.fallback("plan", "the planned queries repeat the output schema, not the question",
                                 args={"queries": rules, "proposed": out.queries})
            return rules
        queries = [q for q in _dedupe([*rules[:1], *proposed]) if normalize_query(q) not in ran][:3]
        self.planned.extend(q for q in proposed if q in queries)
        self.tracer.emit("gate", tool="plan", args={"queries": queries}, duration_ms=ms(), detail="llm")
        return queries

    # -- 3. sufficiency
    def sufficiency(self, route: RouteDecision, evidence: Sequence[Evidence]) -> Sufficiency:
        """Rules: :func:`sufficiency_rules`. The LLM judges only when the rules are unsure: with
        no evidence there is nothing to judge, and when every anchor and key term is covered by
        sources in force with a named issuer (all three scores at the top) a model could only
        agree or second-guess clear evidence. A question without anchors (no entity, place,
        clause, person or year) is never "all covered": its terms alone say little."""
        focus = key_terms(route.query or route.question)
        rules = sufficiency_rules(route, evidence, terms=focus)
        self.overruled = None
        self.sure = False
        if self.llm is None or not evidence:
            self._emit_sufficiency(rules, 0.0, evidence)
            return rules
        if rules.sufficient and rules.coverage == 5 and rules.timeliness == 5 and rules.authority == 5 \
                and _every_anchor_found(route, evidence):
            self._emit_sufficiency(rules, 0.0, evidence, detail="rules (confident: all covered)")
            self.sure = True
            return rules
        try:
            with self.tracer.timed() as ms:
                msgs = fitted(self.llm, lambda n, c: prompts.sufficiency_messages(
                                  route, evidence, focus, limit=n, max_chars=c),
                              120, limit=6, max_chars=300, schema=prompts.SufficiencyJudgement)
                out = structured(self.llm, msgs, prompts.SufficiencyJudgement, max_tokens=120)
        except LLMFallback as exc:
            self.tracer.fallback("sufficiency", exc.reason, confidence=rules.confidence,
                                 args={"verdict": rules.verdict, "missing": rules.missing})
            return rules
        judged = Sufficiency(**out.model_dump(), source="llm")
        # the rules' SUFFICIENT is overruled by an INSUFFICIENT, and as much by a SUFFICIENT the
        # model is less sure of than the rules are (timeliness 1, authority 1): below the bar,
        # that one searches on where the rules would have stopped, just the same
        doubted = not judged.sufficient or judged.confidence < rules.confidence
        self.overruled = rules if rules.sufficient and doubted else None
        if judged.sufficient and not rules.sufficient:
            # a wrong SUFFICIENT ends the search before the answer is found and nothing after it
            # can tell; a wrong INSUFFICIENT costs one narrower round. So the model may ask for
            # more than the rules, never stop short of them.
            self._emit_sufficiency(judged, ms(), evidence)
            self.tracer.fallback("sufficiency", f"the LLM called the evidence sufficient; the rules "
                                                f"still miss {rules.missing!r}: searching on",
                                 confidence=rules.confidence,
                                 args={"verdict": rules.verdict, "missing": rules.missing})
            return rules
        if not judged.sufficient and rules.sufficient and _named_in(judged.missing, evidence):
            # "X is missing" while X is right there in the sources: the claim is checkable and false
            self._emit_sufficiency(judged, ms(), evidence)
            self.tracer.fallback("sufficiency", f"the LLM called {judged.missing!r} missing, but the "
                                                f"sources name it: the rules' SUFFICIENT stands",
                                 confidence=rules.confidence, args={"verdict": rules.verdict})
            return rules
        self._emit_sufficiency(judged, ms(), evidence)
        return judged

    def _emit_sufficiency(self, s: Sufficiency, ms: float, evidence: Sequence[Evidence], *,
                          detail: str = "") -> None:
        self.tracer.emit("gate", tool="sufficiency", duration_ms=ms, confidence=s.confidence,
                         evidence_ids=[e.chunk_id for e in evidence][:10], detail=detail or s.source,
                         args={"verdict": s.verdict, "coverage": s.coverage, "timeliness": s.timeliness,
                               "authority": s.authority, "missing": s.missing})

    # -- 4. verification and self-correction
    def verify(self, answer: Answer, evidence: Sequence[Evidence], *, written_by_llm: bool = True,
               second_opinion: Callable[[AnswerSentence], bool] | None = None) -> Answer:
        """Check each sentence against the passages it cites. Rules: the Reasoner's fact check
        (``fact_check``, when given) or the number/term check. LLM: its list of unsupported
        sentences, each rewritten (accepted only if the rules confirm the rewrite against the
        passages it cites) or flagged; the reason is recorded.

        An extractive answer (``written_by_llm=False``: the Reasoner's quotes) that the rules
        fully confirm is not sent to the LLM: its sentences are the sources' own words, so the
        call could only cost tokens. Flagged sentences are, so the LLM can try a rewrite.

        With ``second_opinion`` (the runtime gives one where the rules were unsure the evidence
        suffices) such an answer is sent too, because a confirmed quote can still answer
        something else than was asked; a rewrite the LLM proposes for a confirmed sentence
        replaces it only when the rules accept it as an answer (confirmed against what it cites,
        of the asked answer type) and ``second_opinion(rewrite)`` — an independent call — agrees.
        Otherwise the confirmed sentence stands: one call's doubt does not outweigh the rules."""
        if not answer.sentences:
            return answer
        by_id = {e.chunk_id: e for e in evidence}
        if not written_by_llm and self.fact_check is not None:
            checked = list(answer.sentences)  # the Reasoner fact-checked its own sentences already
        else:
            checked = self._rules_check(answer, evidence)
        if self.llm is None:
            return self._finish_verify(answer, checked, by_id, "rules", "", 0.0)
        confirmed = not written_by_llm and all(s.supported for s in checked)
        if confirmed and second_opinion is None:
            return self._finish_verify(answer, checked, by_id, "rules (extractive answer, all supported)", "", 0.0)
        pairs = [(_MARKER.sub("", s.text), s.citations) for s in answer.sentences]
        n = len(pairs)

        def check(v: prompts.Verification) -> None:
            bad = [i for i in [*v.unsupported, *(f.index for f in v.fixes)] if not 1 <= i <= n]
            if bad:
                raise ValueError(f"sentence numbers must be 1..{n}, got {bad}")

        try:
            with self.tracer.timed() as ms:
                schema = prompts.verification_schema(n)
                msgs = fitted(self.llm, lambda n, c: prompts.verify_messages(
                                  answer.question or "", pairs, evidence, limit=n, max_chars=c),
                              self.max_tokens, limit=10, max_chars=400, schema=schema)
                out = structured(self.llm, msgs, schema, max_tokens=self.max_tokens, validate=check)
        except LLMFallback as exc:
            self.tracer.fallback("verify", exc.reason)
            return self._finish_verify(answer, checked, by_id, "rules", "", 0.0)
        fixes = {f.index: f for f in out.fixes}
        result: list[AnswerSentence] = []
        question = answer.question or ""
        asked = analyze(question).answer_type
        swapped, doubted = False, []
        for i, (orig, rule_checked) in enumerate(zip(answer.sentences, checked), 1):
            if i not in out.unsupported and i not in fixes:
                result.append(rule_checked)
                continue
            rewrite = self._checked_rewrite(answer, fixes.get(i), by_id)
            if confirmed:
                if rewrite is not None and not swapped and carries(asked, rewrite.text, question) \
                        and second_opinion is not None and second_opinion(rewrite):
                    swapped = True
                    result.append(rewrite)
                else:
                    result.append(rule_checked)
                    doubted.append(i)
                continue
            if rule_checked.supported and not written_by_llm:
                # the source's own words, confirmed by the rules: a model may doubt them (the
                # sentence is flagged) but not swap in other words, which would be less grounded
                result.append(rule_checked.model_copy(update={"supported": False}))
                continue
            if rewrite is not None:
                result.append(rewrite)
            else:
                result.append(orig.model_copy(update={"supported": False}))
        if doubted:
            self.tracer.fallback("verify", f"the LLM doubted sentence(s) {doubted} that the rules confirm, "
                                           f"without a rewrite an independent call agrees on: they stand")
        return self._finish_verify(answer, result, by_id, "llm", out.correction_reason, ms())

    def _checked_rewrite(self, answer: Answer, fix: prompts.SentenceFix | None,
                         by_id: dict[str, Evidence]) -> AnswerSentence | None:
        """The LLM's rewrite of one sentence, when the rules confirm it against what it cites."""
        cited = [by_id[c] for c in (fix.evidence_ids if fix else []) if c in by_id]
        if fix is None or not fix.rewritten.strip() or not cited:
            return None
        rewrite = AnswerSentence(text=fix.rewritten.strip(), citations=[e.chunk_id for e in cited])
        ok = self._rules_check(answer.model_copy(update={"sentences": [rewrite], "trace": []}), cited,
                               record=False)[0].supported
        return rewrite if ok else None

    def _rules_check(self, answer: Answer, evidence: Sequence[Evidence], *,
                     record: bool = True) -> list[AnswerSentence]:
        if self.fact_check is None:
            return verify_rules(answer, {e.chunk_id: e for e in evidence})
        checked = self.fact_check(answer, evidence)
        if record:
            for event in checked.trace[len(answer.trace):]:
                self.tracer.add(event)
        return list(checked.sentences)

    def _finish_verify(self, answer: Answer, sentences: list[AnswerSentence], by_id: dict[str, Evidence],
                       source: str, reason: str, ms: float) -> Answer:
        flagged = [_MARKER.sub("", s.text) for s in sentences if not s.supported]
        rewritten = [new.text for old, new in zip(answer.sentences, sentences)
                     if new.supported and new.text != old.text]
        self.tracer.emit("verify", duration_ms=ms, detail=source + (f": {reason}" if reason else ""),
                         args={"unsupported": flagged, "rewritten": rewritten},
                         evidence_ids=sorted({c for s in sentences for c in s.citations}),
                         confidence=round(1 - len(flagged) / max(1, len(sentences)), 3))
        if sentences == answer.sentences:
            return answer
        status = answer.status
        if flagged and status == "answered":
            status = "needs_review"
        citations = list(answer.citations)
        known = {c.chunk_id for c in citations}
        for s in sentences:
            for cid in s.citations:
                if cid not in known and cid in by_id:
                    citations.append(citation_of(by_id[cid]))
                    known.add(cid)
        text = compose_text(sentences, citations, answer.question or answer.text)
        return answer.model_copy(update={"sentences": sentences, "status": status, "text": text,
                                         "citations": citations})


def fitted(llm: LLM, build: Callable[[int, int], prompts.Messages], max_output: int, *,
           limit: int, max_chars: int, schema: type | None = None) -> prompts.Messages:
    """The prompt ``build(limit, max_chars)`` sized to the tokens ``llm`` has left for it
    (:meth:`MeteredLLM.prompt_budget`); :class:`LLMFallback` when no form of it fits."""
    budget_of = getattr(llm, "prompt_budget", None)
    budget = budget_of(max_output) if budget_of is not None else None
    try:
        return prompts.fit_prompt(build, budget, limit=limit, max_chars=max_chars, schema=schema)
    except prompts.PromptTooLarge as exc:
        raise LLMFallback(str(exc)) from None


def _named_in(missing: str, evidence: Sequence[Evidence]) -> bool:
    """Whether every key term of ``missing`` appears in the top sources."""
    terms = key_terms(missing)
    if not terms:
        return False
    seen = " ".join(f"{e.chunk.title} {e.chunk.clause or ''} {e.chunk.text}" for e in list(evidence)[:8]).lower()
    return all(t.lower() in seen for t in terms)


def _every_anchor_found(route: RouteDecision, evidence: Sequence[Evidence]) -> bool:
    """Whether the question has anchors and each one appears, verbatim, in the top sources."""
    wanted = [a for a in anchors(route) if a]
    return bool(wanted) and all(named_in_sources(a, list(evidence)[:8]) for a in wanted)


def echoes_schema(text: str, schema: type[BaseModel], question_terms: Sequence[str]) -> bool:
    """Whether a model's ``text`` (a query it proposes) is made of the words of the JSON schema
    it was shown rather than of the question (its :func:`key_terms`): a small model copies its
    schema ("maxLength", "items:{"), often cut off mid-word ("…,items:{max") or with a stray
    word, so three in four of its words being schema words (or their beginnings) is enough.
    Text without a content word counts too; a word of the question never does."""
    words = set(key_terms(text))
    if not words:
        return True
    if words & set(question_terms):
        return False
    known = _schema_words(schema)
    copied = sum(w in known or len(w) >= 3 and any(k.startswith(w) for k in known) for w in words)
    return 4 * copied >= 3 * len(words)


@functools.lru_cache(maxsize=32)
def _schema_words(schema: type[BaseModel]) -> frozenset[str]:
    return frozenset(key_terms(json.dumps(json_schema(schema))))


def named_in_sources(anchor: str, evidence: Sequence[Evidence]) -> bool:
    """Whether ``anchor`` (an entity, place, clause, person or year) appears verbatim in one of
    the sources: title, clause, text, dates or version."""
    a = anchor.lower()
    return any(a in f"{c.title} {c.clause or ''} {c.text} {c.publish_date or ''} {c.effective_date or ''} "
                    f"{c.version or ''}".lower() for c in (e.chunk for e in evidence))


def names_terms(text: str, evidence: Sequence[Evidence]) -> bool:
    """Whether the sources (title, clause, text) name at least half of the key terms of
    ``text`` (a missing element a model named): a term counts when it is one of their search
    terms, compared as the index compares them (stems: "universities" is named by
    "university"), or appears in them verbatim."""
    terms = key_terms(text)
    if not terms:
        return False
    body = " ".join(f"{e.chunk.title} {e.chunk.clause or ''} {e.chunk.text}" for e in evidence)
    seen, lowered = set(tokenize(body)), body.lower()
    return 2 * sum(t in seen or t.lower() in lowered for t in terms) >= len(terms)


def same_answer(a: str, b: str, question: str, *, instead_of: str = "") -> bool:
    """Whether two answer sentences (from two independent calls, often quoting different
    passages) give the same answer to ``question``: they share what the question asks for and
    does not itself say — a value for "how many / when" (90个议席 and 合计90席), most of the
    names they give for "who / where / which" — else most of their new words. With
    ``instead_of`` (the answer the two would replace) what they share must be new against it
    too, and where no value decides each must be closer to the other than to it: a second call
    that mostly repeats the answer sides with it, not with the proposed replacement.

        >>> same_answer("Refunds are paid within 5 business days.", "Paid in five business days.", "How fast?")
        True
    """
    # a clause label a quote starts with ("1.2 It applies ...", "第五条 ...") states no value
    a, b = (_LABEL.sub("", _MARKER.sub("", x).strip(), count=1) for x in (a, b))
    if not a or not b:
        return False
    asked = analyze(question).answer_type
    said = f"{question} {_MARKER.sub('', instead_of)}"
    va, vb = _new_values(a, said), _new_values(b, said)
    if asked in ("number", "date") or va and vb:
        return bool(va & vb)
    if instead_of and not (_closer(a, b, instead_of, question) and _closer(b, a, instead_of, question)):
        return False  # where no value decides, each must side with the other, not with the answer
    na, nb = _new_names(a, said), _new_names(b, said)
    if asked in ("person", "place", "organization", "name") or na and nb:
        # most of them, not one: capitalised common words (American, The) pass for names
        return bool(na & nb) and len(na & nb) * 2 >= min(len(na), len(nb))
    known = set(tokenize(said))
    wa, wb = set(tokenize(a)) - known, set(tokenize(b)) - known
    return bool(wa and wb) and len(wa & wb) * 2 >= min(len(wa), len(wb))


def _closer(x: str, y: str, z: str, question: str) -> bool:
    """Whether ``x`` shares more of its words (beyond the question's) with ``y`` than with ``z``."""
    known = set(tokenize(question))
    wx = set(tokenize(x)) - known
    return len(wx & set(tokenize(y))) > len(wx & set(tokenize(z)))


_LABEL = re.compile(r"^(?:\d+(?:\.\d+)*\.?|第[一二三四五六七八九十百零〇\d]+条)\s+")
_BARE_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")


def _new_values(text: str, question: str) -> set[tuple[str, str, float | str]]:
    """The values ``text`` states that ``question`` does not; a count or a bare number by its
    value alone (90个 = 90席 = 90人)."""
    def key(q: Quantity) -> tuple[str, str, float | str]:
        k = quantity_key(q)
        return ("n", "", k[2]) if q.kind in ("count", "number") else k

    def values(t: str) -> set[tuple[str, str, float | str]]:
        found = extract_quantities(t)
        rest = t
        for q in found:
            rest = rest.replace(q.raw, " ")
        # a number the extractor has no unit for (90个议席) is still a value
        return {key(q) for q in found} | {("n", "", float(n)) for n in _BARE_NUMBER.findall(rest)}

    return values(text) - values(question)


def _new_names(text: str, question: str) -> set[str]:
    """Proper names in ``text`` that ``question`` does not use."""
    from agentic_rag.agents.reasoner.question import is_proper_name
    from agentic_rag.text.terms import segment

    return {w.lower() for w in segment(text)
            if len(w) >= 2 and w.lower() not in question.lower() and is_proper_name(w)}


def _decision(flag: bool) -> str:
    return "RETRIEVE" if flag else "NO_RETRIEVE"


def _dedupe(items: Sequence[str]) -> list[str]:
    seen: dict[str, str] = {}
    for q in items:
        q = " ".join(q.split())
        if q:
            seen.setdefault(normalize_query(q), q)
    return list(seen.values())


@functools.lru_cache(maxsize=4096)
def normalize_query(q: str) -> str:
    """The form two queries are compared in for duplicate blocking: case, spacing and
    punctuation do not make a query new. (Cached: a round asks it of the same query up to five
    times, planning, blocking and recording it.)"""
    return _NOT_WORD.sub(" ", q.lower()).strip()


_NOT_WORD = re.compile(r"[\s\W_]+")


# --------------------------------------------------------------------------- the rules

def plan_rules(route: RouteDecision, *, missing: str = "", already_run: Sequence[str] = ()) -> list[str]:
    """The first round is the route's own query: the Retriever already expands it (sub-questions,
    slot filters, entities, multi-hop), and extra rule-made variants only dilute its ranking.
    After an INSUFFICIENT verdict, narrower queries aim at the missing element."""
    base = route.query or route.question
    s = route.slots
    year = str(s.years[0]) if s.years else (route.version if route.version != "latest" else "")
    candidates: list[str] = []
    if missing:
        # narrower: the missing element with the question's anchors, then the query plus it
        subject = (s.entities or s.places or [""])[0]
        candidates.append(" ".join(x for x in (subject, missing, year) if x and x not in missing))
        if missing not in base:
            candidates.append(f"{base} {missing}")
        for entity in [*s.entities, *s.clauses][:2]:
            candidates.append(" ".join(x for x in (entity, year) if x))
    candidates.append(base)
    ran = {normalize_query(q) for q in already_run}
    fresh = [q for q in _dedupe(candidates) if normalize_query(q) not in ran]
    return fresh[:3]


def verify_rules(answer: Answer, by_id: dict[str, Evidence]) -> list[AnswerSentence]:
    """Keep the Reasoner's verdict and add the number/term check against the cited passages."""
    out = []
    for s in answer.sentences:
        cited = [by_id[c] for c in s.citations if c in by_id]
        ok = s.supported and sentence_supported(s.text, cited)
        out.append(s if ok == s.supported else s.model_copy(update={"supported": ok}))
    return out


def citation_of(ev: Evidence) -> Citation:
    c = ev.chunk
    return Citation(chunk_id=c.chunk_id, doc_id=c.doc_id, title=c.title, clause=c.clause,
                    quote=c.text[:200], span=c.span)


def compose_text(sentences: Sequence[AnswerSentence], citations: Sequence[Citation], lang_hint: str = "") -> str:
    """Answer text in the Reasoner's format: each sentence followed by ``[n]`` markers that number
    its citations in ``citations``; a flagged sentence is marked so a reader sees that the sources
    did not confirm it."""
    zh = prompts.language_of(lang_hint or " ".join(s.text for s in sentences)) == "zh"
    index = {c.chunk_id: i for i, c in enumerate(citations, 1)}
    pieces = []
    for s in sentences:
        body = s.text.strip()
        if not _MARKER.search(body):
            body = body.rstrip("。.") + "".join(f"[{index[c]}]" for c in s.citations if c in index)
        if not s.supported:
            body += "〔未经证据证实〕" if zh else " [unverified]"
        pieces.append(body)
    if zh:
        return "".join(p if p.endswith(("。", "）", "？")) else p + "。" for p in pieces if p)
    return " ".join(p if p.endswith((".", ")")) else p + "." for p in pieces if p)
