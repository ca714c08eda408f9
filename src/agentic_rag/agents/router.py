"""The Router: question -> :class:`RouteDecision` (intent path, slots, normalized query, version).

Deterministic and rule-driven, so it is also the fallback whenever an LLM router fails:

    >>> r = Router().route("按照2023年的规定，退休人员在深圳市住院能报多少？")
    >>> r.intent, r.version, r.slots.places, r.slots.persons
    (['医保', '报销', '比例'], '2023', ['深圳市'], ['退休人员'])

Everything domain-specific lives in data files the user can replace or extend: the intent tree
(``intents.json``), the colloquial->formal rule table (``colloquial.json``) and the lexicon of
named entities, places and person categories (``lexicon.txt``). A route whose confidence is below
``RouterSettings.min_confidence``, or a candidate route (for example an LLM's JSON) that fails
validation, is replaced by the default route and marked ``fallback=True``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from agentic_rag.agents.intents import IntentNode, Lexicon, load_intent_tree
from agentic_rag.agents.retriever.multihop import decompose
from agentic_rag.agents.vocabulary import Vocabulary, load_colloquial
from agentic_rag.config import RouterSettings
from agentic_rag.text.dates import find_dates
from agentic_rag.text.language import detect_language
from agentic_rag.text.names import QUOTED, extract_names
from agentic_rag.text.numerals import cn_to_int, normalize_digits
from agentic_rag.text.stopwords import FILLERS_ZH
from agentic_rag.text.tokenize import dictionary_generation
from agentic_rag.types import RouteDecision, Slots

__all__ = ["Router"]

_CJK = re.compile(r"[\u3400-\u9fff]")
#: questions whose route a Router keeps
ROUTES_KEPT = 4096


# -- intent matching ---------------------------------------------------------------------------

def _keyword_hit(keyword: str, text_lower: str) -> bool:
    if keyword not in text_lower:  # necessary for every match, and cheap
        return False
    pattern = _keyword_pattern(keyword)
    return pattern is None or pattern.search(text_lower) is not None


@lru_cache(maxsize=None)  # one entry per keyword of the intent tree
def _keyword_pattern(keyword: str) -> re.Pattern[str] | None:
    """None for a keyword matched as a substring (Chinese, symbols); English keywords match
    whole words (and plurals), so "pay" does not fire inside "repayment"."""
    if _CJK.search(keyword) or not keyword[:1].isalnum():
        return None
    return re.compile(rf"(?<![a-z0-9]){re.escape(keyword)}(?:s|es)?(?![a-z0-9])")


def _best_path(nodes: Iterable[IntentNode], text_lower: str) -> tuple[list[str], float, int]:
    """(path, score, matched levels) of the best-scoring path. A node scores the summed length
    of its matched keywords (a keyword inside a longer matched one not counted again), halved
    when an ancestor matched nothing, so "工作日" alone does not outweigh "员工 ... 假"; a path
    ends at a node that matches itself."""
    best: tuple[list[str], float, int] = ([], 0.0, 0)
    stack: list[tuple[IntentNode, list[str], float, int, bool]] = [(n, [], 0.0, 0, True) for n in nodes]
    while stack:  # bounded by the tree size: every node is visited once
        node, prefix, score, levels, anchored = stack.pop()
        found = [k for k in node.keywords if _keyword_hit(k, text_lower)]
        hits = _longest(found) if len(found) > 1 else found
        gain = sum(len(k) for k in hits) * (1.0 if anchored else 0.5)
        path, total, matched = [*prefix, node.name], score + gain, levels + (1 if hits else 0)
        if hits and (total, matched, -len(path)) > (best[1], best[2], -len(best[0])):
            best = (path, total, matched)
        for child in node.children:
            stack.append((child, path, total, matched, anchored and bool(hits)))
    return best


# -- slot patterns ----------------------------------------------------------------------------

_YEAR_NUM = r"(?:19|20)\d{2}"
_YEAR_CN = r"[一二三四五六七八九][〇零○一二三四五六七八九]{3}"
_RE_CN_YEAR = re.compile(rf"({_YEAR_NUM}|{_YEAR_CN})\s*年(?!代)")
_RE_EN_YEAR = re.compile(rf"(?<![\d.,])({_YEAR_NUM})(?![\d%])")
_RE_AMOUNT = re.compile(
    r"(?:[$￥¥]\s?\d[\d,]*(?:\.\d+)?)"
    r"|(?:\d[\d,]*(?:\.\d+)?\s*(?:万元|亿元|千元|元|块钱|块|%|％|个百分点|percent|yuan|rmb|usd|dollars?|eur))"
    r"|(?:百分之[零一二三四五六七八九十百点]+)"
    r"|(?:[一二三四五六七八九十百千两]+(?:万元|千元|元|块钱))", re.IGNORECASE)
_CN_NUM = r"[零〇一二三四五六七八九十百千两\d]+"
_RE_CLAUSE = re.compile(
    rf"第{_CN_NUM}条(?:之{_CN_NUM})?|第{_CN_NUM}[章节款项]"
    # English labels as written: Section 4, 4.1, 4(b), D.4, Article 12bis
    r"|(?:Article|Section|Clause|Art\.|Sec\.|§)\s*(?:[A-Z]\.)?\d+(?:\.\d+)*(?:\([a-z0-9]{1,3}\))*"
    r"(?:bis|ter|quater|(?<=\d)[A-Za-z](?![A-Za-z]))?", re.IGNORECASE)
_PLACE_SUFFIX = r"(?:特别行政区|自治区|自治州|自治县|省|市|县|区)"
_RE_PLACE = re.compile(rf"([\u4e00-\u9fff]{{2,4}}?{_PLACE_SUFFIX})")
#: words that end in a place suffix but are not places (地区, 市区, 本市, 全省, 异地 ...)
_NOT_PLACE_HEAD = set("本全该各外他异跨城社市辖地特省县区小郊山景园校厂矿")
_PLACE_LEFT = set("在去到从和与及、，,的往赴至于是为我")
_RE_PIN_ZH = re.compile(
    rf"(?:按照?|根据|依据|依照|参照|以|适用|执行)\s*({_YEAR_NUM}|{_YEAR_CN})\s*年?(?:版|度)?"
    r"[^，。？?！!,]{0,12}?(?:规定|政策|标准|办法|通知|文件|版本|规则|条例|细则|目录|的)"
    rf"|({_YEAR_NUM}|{_YEAR_CN})\s*(?:年版|版|年度版本|年的版本|年修订版)")
_RULE_NOUN_EN = (r"(?:policy|policies|rules?|regulations?|version|edition|notice|guidelines?|standards?|law|"
                 r"handbook|measures?|provisions?|circular|agreement|contract|amendment)")
# "under the 2023 travel policy", "the 2023 policy says", "2023's policy", "the travel policy of
# 2023", "the policy (2023)", "the 2023 version": a year that names a document's version
_RE_PIN_EN = re.compile(
    rf"(?:\bthe|'s)\s+({_YEAR_NUM})\s+(?:[\w\-]+\s+){{0,3}}?{_RULE_NOUN_EN}\b"
    rf"|(?<![\d.,])({_YEAR_NUM})(?:'s|’s)\s+(?:[\w\-]+\s+){{0,3}}?{_RULE_NOUN_EN}\b"
    rf"|{_RULE_NOUN_EN}\s+(?:of|from|dated|issued in|published in)\s+({_YEAR_NUM})(?![\d%])"
    rf"|{_RULE_NOUN_EN}\s*[(（]({_YEAR_NUM})[)）]"
    rf"|({_YEAR_NUM})\s+(?:version|edition)"
    # "the policy (effective April 2022)", "the handbook in force from 1 March 2023": the date a
    # version took effect names that version
    rf"|{_RULE_NOUN_EN}\b[^?.;]{{0,80}}?\b(?:effective|in force|in effect)\s+(?:from\s+|since\s+|on\s+|in\s+)?"
    rf"(?:\d{{1,2}}\s+)?(?:[A-Za-z]+\.?\s+)?(?:\d{{1,2}},?\s+)?({_YEAR_NUM})(?![\d%])", re.IGNORECASE)
_PUNCT = re.compile(r"(?<!\d)\.|\.(?!\d)|[\s,，。!！?？;；:：、\"'“”‘’（）()\[\]【】<>《》]+")


def _cn_year(s: str) -> int:
    return cn_to_int(s) or 0


def _unique(items: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(items))


# -- the router -------------------------------------------------------------------------------

class Router:
    """Rule-based Router; see the module docstring. Data files come from ``settings`` (``None``
    fields -> packaged defaults; a user lexicon *extends* the packaged one); ``lexicon_terms``
    adds more entity terms, e.g. the defined terms the ingest pipeline found; ``vocabulary``
    (:class:`~agentic_rag.agents.vocabulary.Vocabulary`, shared with the Retriever and the
    Reasoner) supplies the colloquial rules."""

    def __init__(self, settings: RouterSettings | None = None, lexicon_terms: Iterable[str] = (),
                 vocabulary: Vocabulary | None = None) -> None:
        self.settings = settings or RouterSettings()
        self.tree = load_intent_tree(self.settings.intent_tree)
        self.lexicon = Lexicon()
        self.lexicon.load(None)
        if self.settings.lexicon is not None:
            self.lexicon.load(self.settings.lexicon)
        for term in lexicon_terms:
            self.lexicon.add(term)
        self.colloquial = dict(vocabulary.colloquial) if vocabulary is not None else \
            load_colloquial(self.settings.colloquial_rules)
        keys = sorted(self.colloquial, key=len, reverse=True)
        self._colloquial_re = re.compile("|".join(map(re.escape, keys))) if keys else None
        #: question -> (dictionary generation, its route): a service answers the same questions
        #: again and again, and a route stays the same until an ingest adds words to the
        #: segmentation dictionary (which splits the question's parts)
        self._routes: dict[str, tuple[int, RouteDecision]] = {}

    # public API
    def dictionary_terms(self) -> list[str]:
        """The lexicon's Chinese terms (entities, places, person categories), for the index's
        word-segmentation dictionary (``store.add_terms``) so they stay whole in documents and
        queries alike. Adding them only at query time would split index and query differently."""
        terms = {**self.lexicon.entities, **self.lexicon.places, **self.lexicon.persons}
        return sorted(t for t in terms if _CJK.search(t) and len(t) >= 2)

    def route(self, question: str) -> RouteDecision:
        """Route one question; never raises on odd input (empty, huge, binary-ish text). A
        question routed before under the same segmentation dictionary gets its kept route
        (a copy of its own, at most :data:`ROUTES_KEPT` questions kept)."""
        generation = dictionary_generation()
        kept = self._routes.get(question)
        if kept is None or kept[0] != generation:
            if len(self._routes) >= ROUTES_KEPT:
                self._routes.clear()
            kept = self._routes[question] = (generation, self._route(question))
        return kept[1].model_copy(deep=True)

    def _route(self, question: str) -> RouteDecision:
        question = normalize_digits(question or "").strip()
        language = detect_language(question)
        normalized = self.normalize(question) if self.settings.normalize_colloquial else question
        query = self._query_text(normalized, language)
        text_lower = f"{question}\n{normalized}".lower()
        path, score, levels = _best_path(self.tree.nodes, text_lower)
        slots = self.slots(question)
        version = self.version(question)
        confidence = self._confidence(question, path, levels, slots)
        route = RouteDecision(question=question, intent=path or list(self.tree.fallback), slots=slots,
                              query=query, version=version, language=language,
                              confidence=confidence,
                              subqueries=decompose(question, slots.entities) or self.question_parts(question))
        if confidence < self.settings.min_confidence or not path:
            return self.default_route(question, base=route)
        return route

    def from_candidate(self, question: str, candidate: Any) -> RouteDecision:
        """Validate a route proposed by someone else (an LLM's JSON, a user's override). Anything
        that does not validate, or is below the confidence threshold, becomes the default route."""
        try:
            data = json.loads(candidate) if isinstance(candidate, (str, bytes)) else candidate
            if isinstance(data, Mapping):
                data = {"question": question, **data}
            route = RouteDecision.model_validate(data)
        except (ValidationError, ValueError, TypeError):
            return self.default_route(question)
        if route.confidence < self.settings.min_confidence:
            return self.default_route(question, base=route)
        return route

    def default_route(self, question: str, base: RouteDecision | None = None) -> RouteDecision:
        """The route used when intent classification is unsure: the generic intent, the
        deterministic slots/version/query kept (they come from exact patterns), fallback marked."""
        if base is None:

            question = normalize_digits(question or "").strip()
            language = detect_language(question)
            normalized = self.normalize(question) if self.settings.normalize_colloquial else question
            slots = self.slots(question)
            base = RouteDecision(question=question, slots=slots,
                                 query=self._query_text(normalized, language),
                                 version=self.version(question), language=language,
                                 subqueries=decompose(question, slots.entities) or self.question_parts(question))
        return base.model_copy(update={"intent": list(self.tree.fallback), "fallback": True})

    def question_parts(self, question: str) -> list[str]:
        """The normalized queries of a question that asks two or three things ("……可以通过哪些
        渠道办理？……支付比例会降低吗？", "Who must approve X, and which class of Y?"), so each
        part is searched on its own; [] for a single question. A part needs two content words."""
        pieces = [p for p in _RE_PART_SPLIT.split(question) if p and p.strip()]
        if len(pieces) < 2 or any(_RE_ELLIPTICAL.search(p) for p in pieces):
            return []  # "……？那申请期限呢？" leans on the part before: it is one question
        out: list[str] = []
        for piece in pieces[:3]:
            normalized = self.normalize(piece) if self.settings.normalize_colloquial else piece
            query = self._query_text(normalized, detect_language(piece))
            if len(_content_words(query)) >= 2:
                out.append(query)
        return _unique(out) if len(out) >= 2 else []

    def normalize(self, question: str) -> str:
        """Apply the colloquial->formal rules (longest phrase first, each position rewritten once)."""
        if self._colloquial_re is None:
            return question
        out, at = [], 0
        # the alternation lists longer phrases first, so the longest rule wins at each position;
        # a phrase that maps to itself only keeps a shorter rule out of a formal term, as written
        for m in self._colloquial_re.finditer(question.lower()):
            formal = self.colloquial[m.group(0)]
            kept = formal.lower() == m.group(0)
            out += [question[at:m.start()], question[m.start():m.end()] if kept else f" {formal} "]
            at = m.end()
        out.append(question[at:])
        return re.sub(r"\s+", " ", "".join(out)).strip()

    def slots(self, question: str) -> Slots:
        question = normalize_digits(question)
        dates = find_dates(question)
        years = [_cn_year(m.group(1)) for m in _RE_CN_YEAR.finditer(question)]
        years += [int(m.group(1)) for m in _RE_EN_YEAR.finditer(question)]
        years += [d.year for d in dates]
        lower = question.lower()
        return Slots(
            places=self._places(question),
            years=sorted(set(years)),
            dates=_unique(dates),
            amounts=_unique(m.group(0).strip() for m in _RE_AMOUNT.finditer(question)),
            persons=_longest(t for t in self.lexicon.persons if _keyword_hit(t.lower(), lower)),
            entities=self._entities(question),
            clauses=_unique(re.sub(r"\s+", " ", m.group(0)) for m in _RE_CLAUSE.finditer(question)),
        )

    def version(self, question: str) -> str:
        """A pinned year ("按照2023年的规定", "under the 2023 policy") or "latest"."""
        for rx in (_RE_PIN_ZH, _RE_PIN_EN):
            m = rx.search(question)
            if m:
                raw = next(g for g in m.groups() if g)
                return str(_cn_year(raw))
        return "latest"

    # internals
    def _places(self, question: str) -> list[str]:
        found: list[str] = []
        for m in _RE_PLACE.finditer(question):
            span = m.group(1)
            # no word boundaries in Chinese: cut the match after the last particle
            # ("我在深圳市" -> "深圳市"), keeping at least two characters before the suffix
            cuts = [i for i, ch in enumerate(span[:-3]) if ch in _PLACE_LEFT]
            if cuts:
                span = span[cuts[-1] + 1:]
            # "跨省", "外省", "本市", "市区": a relative word before the suffix is no place name
            if span[0] in _NOT_PLACE_HEAD or span[-2] in _NOT_PLACE_HEAD or len(span) < 3:
                continue
            found.append(span)
        for name in self.lexicon.places:
            if name in question and not any(name in f for f in found):
                found.append(name)
        return _unique(found)

    def _entities(self, question: str) -> list[str]:
        lower = question.lower()
        terms = [t for t in self.lexicon.entities if _keyword_hit(t.lower(), lower)]
        names = extract_names(question) if detect_language(question) == "en" else [
            (m.group(1) or m.group(2)).strip() for m in QUOTED.finditer(question)]
        return _unique([*names, *_longest(terms)])

    def _query_text(self, normalized: str, language: str) -> str:
        if language != "zh":
            return normalized.strip()
        text = normalized
        for filler in FILLERS_ZH:
            text = text.replace(filler, " ")
        return re.sub(r"\s+", " ", _PUNCT.sub(" ", text)).strip()

    def _confidence(self, question: str, path: list[str], levels: int, slots: Slots) -> float:
        if not question.strip():
            return 0.0
        conf = 0.1
        if path:
            conf += 0.35 + 0.1 * min(levels, 3)
        if any([slots.places, slots.years, slots.amounts, slots.persons, slots.entities, slots.clauses]):
            conf += 0.1
        return round(min(conf, 1.0), 3)


#: where one question ends and the next begins: ？ ; and ", and which/how/…" in English
_RE_PART_SPLIT = re.compile(
    r"[？?；;]+|,?\s+and\s+(?=(?:(?:in|at|on|for|from|by|to|with|within|under)\s+)?"
    r"(?:how|what|which|who|whom|whose|when|where|why|can|is|are|do|does|may|must)\b)",
    re.IGNORECASE)


#: a part that cannot stand alone: "那申请期限呢", "what about retirees"
_RE_ELLIPTICAL = re.compile(r"^\s*(?:那么?|还有|另外|and\b|what about|how about)|呢\s*$", re.IGNORECASE)


def _content_words(text: str) -> list[str]:
    from agentic_rag.text.terms import content_terms

    return [t.text for t in content_terms(text)]


def _longest(terms: Iterable[str]) -> list[str]:
    """Drop terms contained in a longer matched term (退休 inside 退休人员)."""
    terms = sorted(set(terms), key=lambda t: (-len(t), t))  # longest first; ties in a fixed order
    kept: list[str] = []
    for t in terms:
        if not any(t in k for k in kept):
            kept.append(t)
    return kept
