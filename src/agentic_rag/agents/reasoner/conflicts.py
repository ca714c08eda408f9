"""Conflicts between sources: which statements disagree about the same matter.

A conflict is two documents stating different values for the *same matter*: 2023年通知 says the
inpatient rate is 80%, 2024年通知 says 90%. Claims are paired by their matter (the words around
the quantity, compared as dictionary atoms so that 住院费用 and 住院医疗费用 match while 门诊 and
住院 do not) and by comparable quantities (same kind; 3个工作日 vs 5日 is a disagreement, 5日 vs
5天 is not). Values in one document never conflict with each other (a clause may list several
cases); only different documents do.

Which source wins is :mod:`~agentic_rag.agents.reasoner.arbitration`.

Prose states its facts without units: "Tampa hosted the 2021 Super Bowl" and "Glendale hosted the
2021 Super Bowl" disagree about a place, "郭敬明是《小时代》的作者" and "韩寒是《小时代》的作者"
about a person. Two sentences of different documents that say the same thing except for one
short span (:func:`value_differences`) state two values of one matter when that span is a value —
a number, a date, or a name (capitalized words in English; a noun or a name in Chinese, never a
verb or a degree word): :func:`aligned_conflicts`. The rest of the two sentences is the matter.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agentic_rag.agents.vocabulary import synonyms
from agentic_rag.text.dates import MONTH
from agentic_rag.text.numerals import normalize_digits
from agentic_rag.text.quantities import (bounded_by, comparable, extract_quantities, period_of, quantity_key, rounds_to,
                                         same_value)
from agentic_rag.text.sentences import LIST_ITEM, strip_label
from agentic_rag.text.similarity import char_bigrams
from agentic_rag.text.stopwords import NOT_MATTER, QUESTION_EN, QUESTION_ZH
from agentic_rag.text.terms import atoms, is_nounish, segment, stem, word_tag
from agentic_rag.text.tokenize import dictionary_generation
from agentic_rag.types import Chunk, Quantity

__all__ = ["NOT_CLASS", "Fact", "aligned_conflicts", "facts_of", "find_conflicts", "replaced_conflict", "matter_label",
           "matter_terms", "rows_apart", "stated", "same_fact_matter", "same_matter", "value_differences"]

_SEGMENT_END = re.compile(r"[，,；;：:（）()“”\"]")


@dataclass
class Fact:
    """One quantity in one claim sentence, with the matter it is about."""

    chunk: Chunk
    sentence: str
    quantity: Quantity
    matter: tuple[str, ...]  # context + local, in reading order
    rank: int = 0
    local: tuple[str, ...] = ()  # the words of the quantity's own segment (and list item)
    context: tuple[str, ...] = ()  # the words of the sentence's lead-in and the list's intro


def matter_terms(text: str) -> tuple[str, ...]:
    """Matter words of a phrase as atoms: ``"住院医疗费用报销比例"`` -> 住院, 医疗, 费用, 报销, 比例."""
    return _matter_terms(text, dictionary_generation())


#: the matter words of recent phrases, by phrase and dictionary generation (words added to the
#: dictionary change the segmentation): the same clauses are compared question after question
@lru_cache(maxsize=8192)
def _matter_terms(text: str, generation: int) -> tuple[str, ...]:
    out: list[str] = []
    for tok in _join_singles(segment(text)):
        low = tok.lower()
        if re.fullmatch(r"[\d.,]+", low) or low in QUESTION_EN or tok in QUESTION_ZH or tok in NOT_MATTER:
            continue
        if re.fullmatch(r"[\u3400-\u9fff]", tok) or re.fullmatch(r"第?[一二三四五六七八九十百零〇两]+[条款项章节]?", tok):
            continue
        for a in atoms(tok) if re.match(r"[\u3400-\u9fff]", tok) else (stem(low),):
            if a not in NOT_MATTER and a not in out and not re.fullmatch(r"[一二三四五六七八九十百零〇两第条]+", a):
                out.append(a)
    return tuple(out)


#: single characters that are words of their own (particles, copulas, prepositions), never
#: half of a word the segmenter did not know
_FUNCTION_CHARS = frozenset("的了在是为和与及或也都将被把对向从于以由其之而并且就还又再共约达年月日号时")


#: the prefix that names everything but a class (非居民用户, 非机动车): one word with it
NOT_CLASS = "非"


def _join_singles(tokens: Sequence[str]) -> list[str]:
    """Tokens with each run of two or more single Chinese characters the segmenter split from
    one unknown word joined again (营 + 收 -> 营收, 青 + 岚 -> 青岚); a matter loses no word.
    非 joins the word after it (非 + 居民 -> 非居民)."""
    out: list[str] = []
    run: list[str] = []
    for tok in [*tokens, ""]:
        if run and run[-1] == NOT_CLASS and re.fullmatch(r"[\u3400-\u9fff]{2,}", tok):
            run.pop()
            out.extend(["".join(run)] if len(run) >= 2 else run)
            run = []
            out.append(NOT_CLASS + tok)  # 非 + 居民: the others, not the 居民
            continue
        if len(tok) == 1 and re.fullmatch(r"[\u3400-\u9fff]", tok) and tok not in _FUNCTION_CHARS:
            run.append(tok)
            continue
        out.extend(["".join(run)] if len(run) >= 2 else run)
        run = []
        if tok:
            out.append(tok)
    return out


#: a date that opens a text and is set off from it ("Jul 13, 2019 ... Halep beats ...") is when
#: the text was written, not a value it states
_DATELINE = re.compile(r"\s*(?:\.{2,}|…|—|–|-\s|\||·|:)")
#: an ellipsis: the text a snippet or an excerpt left out
_CUT = re.compile(r"\.{3}|…")
#: a mark inside a differing stretch: it runs across clauses ("纳达尔，"/"原标题：" are trimmed,
#: "……再就业，困难人员就业183万人" is not one value)
_NOT_ONE_VALUE = re.compile(r"[，：:；;。！？!?]")  # not ",": "Porto, Portugal" is one place
#: who wrote or carried a report, not what it says (datelines, bylines, a page's source line)
_ATTRIBUTION = re.compile(rf"记者|新华社|通讯员|网讯|日报|晚报|客户端|原标题|编辑|来源|报道|^\s*{MONTH}\.?\s*$")
_RESPECTIVELY = re.compile(r"分别|respectively", re.I)


def _segments(sentence: str) -> list[tuple[int, int]]:
    bounds = [0] + [m.end() for m in _SEGMENT_END.finditer(sentence)] + [len(sentence)]
    return [(s, e) for s, e in zip(bounds, bounds[1:]) if e > s]


def _lead_sentence(chunk: Chunk, sentence: str) -> str:
    """The sentence that introduces a list item ("统筹基金支付比例如下：" for "（二）住院：……")."""
    if not LIST_ITEM.match(sentence):
        return ""
    text = chunk.text
    at = text.find(sentence[:20])
    head = text[:at] if at > 0 else ""
    lines = [ln for ln in re.split(r"[\n。；;]", head) if ln.strip() and not LIST_ITEM.match(ln)]
    return strip_label(lines[-1]) if lines else ""


def _items_before(text: str, count: int) -> list[str]:
    """The ``count`` list items that precede 分别: "一级、二级、三级定点医疗机构" -> 一级, 二级, 三级."""
    m = re.search(r"([^，,；;：:、\s]+(?:[、,，]\s*[^，,；;：:、\s]+){%d})[^，,；;：:、]*$" % (count - 1), text)
    if not m:
        return []
    items = [x.strip() for x in re.split(r"[、,，]", m.group(1)) if x.strip()]
    if len(items) != count:
        return []
    # the first item carries what precedes the list, the last the shared noun
    # ("在职职工在一级", "三级定点医疗机构"): keep the part as long as the middle items
    size = len(items[1]) if count > 2 else min(len(items[0]), len(items[-1]))
    items[0] = items[0][-size:] if len(items[0]) > size + 1 else items[0]
    items[-1] = items[-1][:size] if len(items[-1]) > size + 1 else items[-1]
    return items


def facts_of(sentence: str, chunk: Chunk, rank: int = 0) -> list[Fact]:
    """The quantities of a claim sentence, each with its matter.

    The matter of a quantity is the sentence's lead-in (the text before the first segment that
    states a value) plus the quantity's own segment: in "在职职工百分之七十，退休人员百分之八十"
    the two values are about different people. A list item inherits the sentence that introduces
    the list; "一级、二级、三级……分别为90%、85%、80%" gives each value its own item. In
    ``由80%提高至90%`` / ``from 80% to 90%`` the first value is the old one and is dropped."""
    return [Fact(chunk, sentence, q, matter, rank, local, context) for q, matter, local, context
            in _facts(sentence, _lead_sentence(chunk, sentence), dictionary_generation())]


#: the facts of recent sentences (quantity, matter, local, context), by sentence, the sentence
#: that introduces it (a list item's) and dictionary generation: the same clauses are compared
#: question after question
@lru_cache(maxsize=8192)
def _facts(sentence: str, lead_sentence: str, generation: int
           ) -> tuple[tuple[Quantity, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]:
    quantities = extract_quantities(sentence)
    spans: list[tuple[int, int]] = []
    pos = 0
    for q in quantities:
        i = sentence.find(q.raw, pos)
        if i < 0:
            i = sentence.find(q.raw)
        spans.append((i, i + len(q.raw)))
        pos = max(pos, i + len(q.raw))
    segs = _segments(sentence) or [(0, len(sentence))]

    def seg_of(i: int) -> int:
        return next((k for k, (s, e) in enumerate(segs) if s <= i < e), len(segs) - 1)

    valued = [k for k, q in enumerate(quantities) if not (q.kind == "date" and q.unit == "year")
              and not (q.kind == "date" and _DATELINE.match(sentence, spans[k][1]) and not sentence[:spans[k][0]].strip())]
    first_seg = min((seg_of(spans[k][0]) for k in valued), default=0)
    raws = [q.raw for q in quantities]
    # the values blanked out in place, so that a value a segment boundary cuts ("March 3, 2019"
    # split at its comma) leaves no word of itself in the matter
    blank = list(sentence)
    for i, j in spans:
        if i >= 0:
            blank[i:j] = " " * (j - i)
    blanked = "".join(blank)
    lead = lead_sentence + " " + blanked[:segs[first_seg][0]]

    # 分别为 lists: items before, values after, matched in order
    item_of: dict[int, str] = {}
    last_items: list[str] = []
    for m in _RESPECTIVELY.finditer(sentence):
        run: list[int] = []
        for k in (k for k in valued if spans[k][0] >= m.end()):
            gap = sentence[spans[run[-1]][1]:spans[k][0]] if run else ""
            if run and not re.fullmatch(r"\s*(?:[、,，]|和|及|and|,\s*and)\s*", gap):
                break
            run.append(k)
        if len(run) >= 2:
            seg_start = segs[seg_of(m.start())][0]
            items = _items_before(sentence[seg_start:m.start()], len(run))
            if not items and len(last_items) == len(run):
                items = last_items  # "退休人员分别为……": the same items as the list before
            last_items = items or last_items
            for k, item in zip(run, items):
                item_of[k] = item

    found: list[Fact] = []
    for idx in valued:
        q, (s, e) = quantities[idx], spans[idx]
        nxt = quantities[idx + 1] if idx + 1 < len(quantities) else None
        if nxt is not None and comparable(q, nxt):
            between = sentence[e:spans[idx + 1][0]]
            before = sentence[max(0, s - 3):s]
            if (re.search(r"由|从", before) and re.search(r"[调提降增减改]|至|为", between)) or \
                    re.search(r"\bfrom\b", before, re.I) and re.search(r"\bto\b", between, re.I):
                continue
        k = seg_of(s)
        seg_s, seg_e = segs[k]
        own = blanked[seg_s:seg_e]
        for raw in raws:
            own = own.replace(raw, " ")
        if not matter_terms(own) and k > first_seg:
            seg_s = segs[k - 1][0]  # "，共4个月": the value continues the previous segment
            own = blanked[seg_s:seg_e]
            for raw in raws:
                own = own.replace(raw, " ")
        lead_text = lead
        for raw in raws:
            lead_text = lead_text.replace(raw, " ")
        local = list(matter_terms(own))
        context = [t for t in matter_terms(lead_text) if t not in local]
        if idx in item_of:
            # the value belongs to one item: the other items are not its matter
            others = {t for k, it in item_of.items() if k != idx for t in matter_terms(it)}
            local = [t for t in local if t not in others]
            context = [t for t in context if t not in others]
            own_item = list(matter_terms(item_of[idx])) or [item_of[idx]]
            local += [t for t in own_item if t not in local]
        found.append((q, tuple(context + local), tuple(local), tuple(context)))
    return tuple(found)


#: what joins the two ends of a range: "五千元以上五万元以下", "5至10日", "£25,000 to £100,000"
_RANGE_GAP = re.compile(r"\s*(?:以上|至|到|-|–|—|~|～|\bto\b|\band\b)\s*", re.I)
_RANGE_TAIL = re.compile(r"以下|以内")


def stated(fact: Fact) -> str:
    """A fact's value as its sentence states it: the whole range when the value opens one (a
    fine of "五千元以上五万元以下" is not "五千元")."""
    raw = fact.quantity.raw
    at = fact.sentence.find(raw)
    if at < 0:
        return raw
    end = at + len(raw)
    for q in extract_quantities(fact.sentence[end:end + 40]):
        if not comparable(q, fact.quantity):
            return raw
        nxt = fact.sentence.find(q.raw, end)
        if nxt < 0 or not _RANGE_GAP.fullmatch(fact.sentence[end:nxt]):
            return raw
        stop = nxt + len(q.raw)
        tail = _RANGE_TAIL.match(fact.sentence, stop)
        return fact.sentence[at:tail.end() if tail else stop]
    return raw


def same_matter(a: Sequence[str], b: Sequence[str]) -> bool:
    """Two matters are the same when one contains the other (and they share at least two
    words): 住院 费用 报销 比例 ~ 参保 住院 医疗 费用 报销 比例. Words that only one side has are
    detail; words *each* side has alone are contrasts (门诊 vs 住院, 一级 vs 三级, 在职 vs 退休),
    so such matters are different. Synonyms (报销/支付) count as the same word."""
    sa, sb = {_canonical(t) for t in a}, {_canonical(t) for t in b}
    if not sa or not sb:
        return False
    inter = len(sa & sb)
    return inter >= min(2, len(sa), len(sb)) and (sa <= sb or sb <= sa)


@lru_cache(maxsize=4096)
def _years(sentence: str) -> frozenset[str]:
    """The years a sentence is about (its dateline aside)."""
    found = extract_quantities(sentence)
    if found and sentence.lstrip().startswith(found[0].raw) and \
            _DATELINE.match(sentence, sentence.find(found[0].raw) + len(found[0].raw)):
        found = found[1:]
    return frozenset(str(q.value)[:4] for q in found
                     if q.kind == "date" and re.match(r"\d{4}", str(q.value)))


def same_fact_matter(a: Fact, b: Fact) -> bool:
    """Two facts are about the same matter when their own segments agree (one contains the
    other: 在职职工 vs 退休人员 are different) and their lead-ins are mostly shared (half of the
    words or more), since two documents introduce the same rule in their own words. Sentences
    about different years ("2022年春运……" / "2023年春运……") are about different periods; the
    year of a date that is itself the value compared ("launched on May 1, 2002" / "on May 15,
    2012") is what they disagree on, not their period."""
    ya, yb = _years(a.sentence) - _years(a.quantity.raw), _years(b.sentence) - _years(b.quantity.raw)
    if ya and yb and not ya & yb:
        return False
    if rows_apart((a, b)):
        return False
    if not (a.local and b.local):
        return same_matter(a.matter, b.matter)
    if not same_matter(a.local, b.local):
        return False
    ca, cb = {_canonical(t) for t in a.context}, {_canonical(t) for t in b.context}
    if not ca or not cb:
        return True
    return ca <= cb or cb <= ca or len(ca & cb) / len(ca | cb) >= 0.5


_ROW_KEY = re.compile(r"\s*([^:;：；，为]{1,40})(?:[:：]\s*|为)([^;；，]{1,60})[;；，]")


def _row_key(f: Fact) -> tuple[str, str] | None:
    """(first column, its cell) of a fact read from a table row ("Vehicle type: Bicycle; Rate …"
    or "类别为门诊，比例为……"), else ``None``."""
    if f.chunk.table is None:
        return None
    m = _ROW_KEY.match(f.sentence)
    return (m.group(1).strip().lower(), m.group(2).strip().lower()) if m else None


def rows_apart(group: Sequence[Fact]) -> bool:
    """Whether facts come from rows of a table that its first column tells apart: "Vehicle type:
    Bicycle" is no "Vehicle type: Car or van", however alike the rest of the rows reads."""
    keys = [_row_key(f) for f in group]
    return all(keys) and len({k[0] for k in keys}) == 1 and len({k[1] for k in keys}) > 1  # type: ignore[index]


def _closeness(a: Fact, b: Fact) -> float:
    """How closely two same-matter facts match: overlap of their own segments, then of their
    lead-ins (Jaccard of canonical words), so equal rows beat a row that merely contains another."""
    def jac(x: Sequence[str], y: Sequence[str]) -> float:
        sx, sy = {_canonical(t) for t in x}, {_canonical(t) for t in y}
        return len(sx & sy) / len(sx | sy) if sx and sy else 0.0

    return jac(a.local or a.matter, b.local or b.matter) + 0.5 * jac(a.context, b.context)


@lru_cache(maxsize=8192)
def _canonical(term: str) -> str:
    group = synonyms(term)
    return min(group | {term}) if group else term


def find_conflicts(facts: Sequence[Fact]) -> list[list[Fact]]:
    """Groups of facts about one matter from different documents that state different values.

    Facts pair when their quantities are comparable and their matters the same; a fact is linked
    only to its *closest* match in each other document (ties all kept), because "the same
    matter" allows one matter to contain another: 在职职工 (普通门诊) is contained in 在职职工在一级
    医疗机构 (住院), and linking every such pair would chain a clause's rows into one group whose
    representatives are about different things. Groups are the connected components of the
    closest-match links (bounded by the number of facts)."""
    n = len(facts)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    best: dict[tuple[int, str], tuple[float, list[int]]] = {}
    for i in range(n):
        for j in range(n):
            a, b = facts[i], facts[j]
            if a.chunk.doc_id == b.chunk.doc_id:
                continue
            if comparable(a.quantity, b.quantity) and same_fact_matter(a, b):
                score = _closeness(a, b)
                key = (i, b.chunk.doc_id)
                held = best.get(key)
                if held is None or score > held[0] + 1e-9:
                    best[key] = (score, [j])
                elif abs(score - held[0]) <= 1e-9:
                    held[1].append(j)
    for (i, _), (_, js) in best.items():
        for j in js:
            parent[root(j)] = root(i)
    groups: dict[int, list[Fact]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(facts[i])
    return _disagreements(groups.values())


def _disagreements(groups: Iterable[Sequence[Fact]]) -> list[list[Fact]]:
    """The groups whose documents disagree, each with one representative per document (its
    best-ranked fact), when those representatives still state different values."""
    out: list[list[Fact]] = []
    for members in groups:
        per_doc: dict[str, Fact] = {}
        for f in sorted(members, key=lambda f: f.rank):
            per_doc.setdefault(f.chunk.doc_id, f)
        reps = list(per_doc.values())
        if len({quantity_key(f.quantity) for f in reps}) > 1 and not any(
                all(f is g or _consistent(f, g) for f in reps) for g in reps):
            out.append(reps)
    return out


def _consistent(a: Fact, b: Fact) -> bool:
    """Whether two statements of a large figure agree though worded apart: one rounds the other
    ("6万亿美元" / "6.05万亿美元"), or states a bound the other's figure is within ("突破60亿" /
    "60.39亿")."""
    qa, qb = a.quantity, b.quantity
    return same_value(qa, qb) or rounds_to(qa, qb) or rounds_to(qb, qa) \
        or bounded_by(qb, qa, a.sentence) or bounded_by(qa, qb, b.sentence)


# -- conflicts in prose -------------------------------------------------------------------------

_LATIN = "A-Za-z\u00c0-\u024f"  # with accents: Pogačar, Müller
_ALIGN_TOKEN = re.compile(
    rf"[\u3400-\u9fff]+|\d+(?:[.,:]\d+)*|[{_LATIN}](?:\.[{_LATIN}])+\.?|[{_LATIN}]+(?:['’\-][{_LATIN}]+)*|\S")
#: tokens that join the parts of one name ("史蒂文·斯皮尔伯格", "Tampa, Florida"): a difference
#: on both sides of one is a single difference
_JOINERS = frozenset("·・-‐'’,")
#: English words that may stand inside a name ("Bank of China", "Tampa, Florida")
_NAME_LINKS = frozenset("of and the de du la le von van der den da di y & ,".split())
_PROPER_TAGS = ("nr", "ns", "nt", "nz")
#: the shared part of two aligned sentences: at least this share of the shorter one's words
ALIGNED_SHARE = 0.6
#: a differing value is short: at most this many characters on either side
_MAX_VALUE_CHARS = 30


def _align_tokens(text: str) -> list[tuple[str, int, int]]:
    """Tokens with their spans: Chinese runs cut into dictionary words, numbers whole, English
    words and abbreviations (U.S.) whole, every other character alone."""
    out: list[tuple[str, int, int]] = []
    for m in _ALIGN_TOKEN.finditer(text):
        tok, at = m.group(0), m.start()
        if re.match(r"[\u3400-\u9fff]", tok) and len(tok) > 1:
            words = segment(tok)
            if "".join(words) != tok:
                words = list(tok)
            for w in words:
                out.append((w, at, at + len(w)))
                at += len(w)
        else:
            out.append((tok, at, m.end()))
    return out


#: what joins a thing to its value: "起付标准为800元", "the limit is 500"
_COPULA = frozenset({"为", "是", "达", "达到", "约", "约为", "共", ":", "：", "is", "are", "was", "were", "of", "at"})


def _names_thing(tok: str) -> bool:
    """Whether a token between a differing stretch and a value keeps the stretch naming what
    the value is of: a copula or a noun ("hotel *limit is* 500"), not a verb ("由成年人*使用不
    超过*2米")."""
    low = tok.lower()
    if low in _COPULA:
        return True
    if re.fullmatch(r"[\u3400-\u9fff]+", tok):
        return is_nounish(tok)
    return bool(re.fullmatch(r"[a-z]+", low)) and not re.search(r"(?:ed|ing)$", low) and low not in QUESTION_EN


def _norm_token(tok: str) -> str:
    return normalize_digits(tok).lower()


def _is_content(tok: str) -> bool:
    low = tok.lower()
    if re.fullmatch(r"\W", tok):
        return False
    return not (low in QUESTION_EN or tok in QUESTION_ZH)


def _is_value(text: str, words: Sequence[str]) -> bool:
    """Whether a differing span states a value: a number (a bare year names the matter, not a
    value), how often ("weekly"), a name in English (capitalized words), a noun or a name in
    Chinese (no verb); an amount in Chinese numerals (五千元) is a number."""
    if period_of(text):
        return True
    if re.search(r"\d", text) or _CN_AMOUNT.search(text) and extract_quantities(text):
        if _is_year(text):
            return False
        # the amount and what is written onto it (人数1193万, 骁龙835, 五千元以上五万元以下), not
        # a clause around a number ("比赛分为4个组别", "却上升了13.2万人", "11时在")
        rest = text
        for q in extract_quantities(text):
            rest = rest.replace(q.raw, " ")
        rest = re.sub(r"\d+(?:[.,]\d+)*", " ", rest)
        return not re.search(r"[，。；：、,;:]", rest.strip(" ，,：:")) and \
            all(w in _AMOUNT_WORDS or is_nounish(w) for w in segment(rest) if re.match(r"[\u3400-\u9fff]", w))
    if re.search(r"[\u3400-\u9fff]", text):
        cjk = [w for w in words if re.match(r"[\u3400-\u9fff]", w)]
        if not cjk or any(w in QUESTION_ZH for w in cjk):
            return False
        tags = [word_tag(w) for w in cjk]
        if any(len(w) >= 2 and t is not None and t.startswith("v") and not t.startswith("vn")
               for w, t in zip(cjk, tags)):
            return False  # 提高 / 降低: a change of wording, not of value
        proper = any(t is not None and t.startswith(_PROPER_TAGS) for t in tags) or \
            any(t is None and len(w) >= 2 for w, t in zip(cjk, tags))
        return proper or all(is_nounish(w) for w in cjk if len(w) >= 2) and len("".join(cjk)) >= 2
    names = [w for w in words if re.match(f"[{_LATIN}]", w)]
    if not names or any(w.lower() not in _NAME_LINKS and not w[0].isupper() for w in names):
        return False
    return any(w[0].isupper() and w.lower() not in QUESTION_EN for w in names)


#: words an amount is written with: a range, an approximation
_AMOUNT_WORDS = frozenset({"以上", "以下", "以内", "至", "到", "约", "共", "余", "多", "近", "超", "逾", "不到", "左右"})
#: a Chinese numeral, the start of an amount written in characters
_CN_AMOUNT = re.compile(r"[零〇一二两三四五六七八九十百千万亿]")


def _is_year(text: str) -> bool:
    year = re.fullmatch(r"\s*(\d{4})\s*年?\s*", text)
    return bool(year) and 1900 <= int(year.group(1)) <= 2100


#: the word after a bare English number, when it is the number's unit
_UNIT_AFTER_EN = re.compile(r" ([A-Za-z]{3,})\b")
_NOT_UNIT_EN = frozenset("and are but for from has have into its not per than that the then this was were "
                         "will with".split())


def _widen(sentence: str, start: int, end: int) -> tuple[int, int]:
    """A numeric difference widened to its whole quantity (1361 of 1361万人 -> 1361万人, 二 of
    二万元 -> 二万元)."""
    if not re.search(r"\d", sentence[start:end]) and not _CN_AMOUNT.search(sentence[start:end]):
        return start, end
    pos = 0
    for q in extract_quantities(sentence):
        at = sentence.find(q.raw, pos)
        if at < 0:
            continue
        pos = at + len(q.raw)
        if at <= start < pos or at < end <= pos:
            return min(start, at), max(end, pos)
    m = re.compile(r"\s*(?:[%‰％]|[万亿]+)").match(sentence, end)
    if m:
        return start, m.end()
    # a bare number glued to the name it numbers: 骁龙835, iPhone11
    head = re.search(r"(?:[A-Za-z]+|[\u3400-\u9fff]{2,4})$", sentence[:start])
    if head and not re.match(r"[\u3400-\u9fff]", head.group(0)):
        return head.start(), end
    if head:
        words = segment(head.group(0))
        singles = len(words) - next((k for k, w in enumerate(reversed(words)) if len(w) > 1), len(words))
        # an unknown name falls apart into characters (骁龙 -> 骁, 龙): they are one word
        word = "".join(words[singles:]) if len(words) - singles >= 2 else words[-1]
        tag = word_tag(word)
        if len(word) >= 2 and (tag is None or tag.startswith(("n", "eng"))):
            return start - len(word), end
    if re.fullmatch(r"[\d.,]+", sentence[start:end]):
        # a bare number said with a unit the reader has no rule for ("at least 14 characters",
        # "不少于40学时"): the unit word right after it is part of the value
        m = _UNIT_AFTER_EN.match(sentence, end)
        if m and m.group(1).lower() not in _NOT_UNIT_EN:
            return start, m.end()
        words = segment(sentence[end:end + 6]) if re.match(r"[\u3400-\u9fff]", sentence[end:end + 1]) else []
        if words and len(words[0]) == 2 and (word_tag(words[0]) or "").startswith(("q", "n")):
            return start, end + 2
    return start, end


def value_differences(a: str, b: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The spans where two versions of one statement state different values.

    The sentences are aligned word by word; they are versions of one statement when their
    shared words are at least :data:`ALIGNED_SHARE` of the shorter one's (and three or more).
    Each differing stretch (stretches joined by a name joiner count as one) that is a value on
    both sides is returned as ``((start_a, end_a), (start_b, end_b))``. More than one differing
    value, or other words in the place of others beside the value ("起付标准为800元" /
    "最高支付限额为5000元"), means the two sentences are about different things (another year,
    another place, another attribute), so the answer is then empty, as it is when the
    sentences do not align.

        >>> a, b = "Tampa hosted the 2021 final.", "Glendale hosted the 2021 final."
        >>> [(a[x:y], b[u:v]) for (x, y), (u, v) in value_differences(a, b)]
        [('Tampa', 'Glendale')]
    """
    return _value_differences(_Aligned.of(a), _Aligned.of(b))


@dataclass(frozen=True)
class _Aligned:
    """A sentence's alignment tokens, computed once however many sentences it is compared with."""

    text: str
    tokens: list[tuple[str, int, int]]
    norm: list[str]
    content: Counter  # normalized content tokens, to bound the aligned share before difflib

    @classmethod
    def of(cls, text: str) -> _Aligned:
        tokens = _align_tokens(text)
        norm = [_norm_token(t[0]) for t in tokens]
        return cls(text, tokens, norm, Counter(n for n, t in zip(norm, tokens) if _is_content(t[0])))


def _value_differences(x: _Aligned, y: _Aligned, several: bool = False
                       ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``several``: the two are versions of one clause, where an amendment may change more than
    one value (the body that fines and the fine): every differing value, not none."""
    a, b, ta, tb, na, nb = x.text, y.text, x.tokens, y.tokens, x.norm, y.norm
    if not ta or not tb:
        return []
    # no alignment shares more content words than the two bags of words do
    size = min(sum(x.content.values()), sum(y.content.values()))
    bound = sum((x.content & y.content).values())
    if bound < 3 or bound < ALIGNED_SHARE * size:
        return []
    ops = difflib.SequenceMatcher(None, na, nb, autojunk=False).get_opcodes()
    shared = sum(1 for tag, i1, i2, _, _ in ops if tag == "equal" for k in range(i1, i2) if _is_content(ta[k][0]))
    size = min(sum(_is_content(t[0]) for t in ta), sum(_is_content(t[0]) for t in tb))
    if shared < 3 or shared < ALIGNED_SHARE * size:
        return []
    regions: list[list[int]] = []  # [i1, i2, j1, j2]
    for k, (tag, i1, i2, j1, j2) in enumerate(ops):
        if tag == "equal":
            continue
        if regions and k >= 2 and ops[k - 1][0] == "equal" and regions[-1][1] == ops[k - 1][1] \
                and all(t[0] in _JOINERS for t in ta[ops[k - 1][1]:ops[k - 1][2]]):
            regions[-1][1], regions[-1][3] = i2, j2
            continue
        regions.append([i1, i2, j1, j2])
    values: list[tuple[tuple[int, int], tuple[int, int]]] = []
    reworded = 0
    value_at: list[int] = []  # where each differing value starts, in a's tokens
    renamed_end: list[int] = []  # where each stretch of other words ends
    for i1, i2, j1, j2 in regions:
        if i1 == i2 or j1 == j2:
            continue  # a word only one side has: detail or scope, not another value
        sa, sb = _widen(a, ta[i1][1], ta[i2 - 1][2]), _widen(b, tb[j1][1], tb[j2 - 1][2])
        va, vb = a[sa[0]:sa[1]], b[sb[0]:sb[1]]
        if max(len(va), len(vb)) > _MAX_VALUE_CHARS:
            continue
        if _DATELINE.match(a, sa[1]) and not a[:sa[0]].strip():
            continue  # when each text was written, not what it says
        if _CUT.search(va) or _CUT.search(vb):
            continue  # where a source was cut off ("Jan 6, 2022 ...", "产量319 ..."): no value is stated
        if _NOT_ONE_VALUE.search(va.strip(" ，,：:")) or _NOT_ONE_VALUE.search(vb.strip(" ，,：:")) \
                or _ATTRIBUTION.search(va) or _ATTRIBUTION.search(vb):
            continue  # a stretch across a clause, or who reported it ("新华社北京" / "中新网"): no value
        if _is_year(va) and _is_year(vb):
            return []  # another year: another period or event, not another value
        na_, nb_ = _norm_token(va), _norm_token(vb)
        amounts_a, amounts_b = extract_quantities(va), extract_quantities(vb)
        if (na_ in nb_ or nb_ in na_) and not re.search(r"\d", na_ + nb_) and not amounts_a and not amounts_b:
            continue  # a narrower or broader name (跨省异地就医 / 异地就医): not another value
        if any(same_value(x, y) for x in amounts_a for y in amounts_b):
            # one amount worded two ways (总人口为14.126亿人 / 全国人口141260万人): no other
            # value, but still a stretch where the two differ
            reworded += 1
            continue
        if _is_value(va, [t[0] for t in ta[i1:i2]]) and _is_value(vb, [t[0] for t in tb[j1:j2]]):
            values.append((sa, sb))
            value_at.append(i1)
        elif any(_is_content(t[0]) for t in ta[i1:i2]) and any(_is_content(t[0]) for t in tb[j1:j2]):
            renamed_end.append(i2)
    # other words naming what the value is of: "年度起付标准为800元" / "年度最高支付限额为
    # 5000元" state two things, each its own value (a reworded party elsewhere in the clause,
    # "由成年人使用不超过2米的" / "由完全民事行为能力人使用不超过1.5米的", is an amendment of one)
    renamed = sum(1 for end in renamed_end for at in value_at
                  if end <= at and all(_names_thing(t[0]) for t in ta[end:at]))
    # the same substitution made twice ("大武汉 … 湖北武汉" / "大成都 … 湖北成都") is one value
    pairs = {(_norm_token(a[x:y]), _norm_token(b[u:v])) for (x, y), (u, v) in values}
    if several:
        return values
    return values[:1] if len(pairs) == 1 and not reworded and not renamed else []


@lru_cache(maxsize=1024)
def _aligned(text: str) -> _Aligned:
    """:meth:`_Aligned.of`, kept per sentence: the same sentences are compared with each
    other question after question."""
    return _Aligned.of(text)


@lru_cache(maxsize=8192)
def _differences(a: str, b: str, several: bool = False) -> tuple[tuple[tuple[int, int], tuple[int, int]], ...]:
    """:func:`_value_differences` of two sentences, kept per pair (a pure function of the two)."""
    return tuple(_value_differences(_aligned(a), _aligned(b), several))


def _value_quantity(text: str) -> Quantity:
    period = period_of(text)
    if period:  # once per period: two frequencies disagree when their periods differ
        return Quantity(kind="duration", value=1.0, unit=f"per {period}", raw=text.strip())
    found = extract_quantities(text)
    if len(found) == 1 and found[0].raw.strip() == text.strip():
        return found[0]
    return Quantity(kind="entity", value=re.sub(r"\s+", " ", normalize_digits(text)).strip().lower(),
                    unit="", raw=text.strip())


def replaced_conflict(new: tuple[str, Chunk, int], old: tuple[str, Chunk, int],
                      values: tuple[str, str]) -> list[Fact] | None:
    """The conflict an amending item states when it replaces a name in a clause ("将第五条中的
    “市住房和城乡建设主管部门”修改为“市交通运输主管部门”"): the clause's own wording and the
    item's (``new`` and ``old`` are (sentence, chunk, rank), ``values`` the (old, new) words).
    None for amounts, which the facts of the item as amended already state."""
    was, now = values
    if extract_quantities(was) or extract_quantities(now) or was not in old[0]:
        return None
    matter = matter_terms(old[0].replace(was, " "))
    return [Fact(new[1], new[0], _value_quantity(now), matter, new[2], matter, ()),
            Fact(old[1], old[0], _value_quantity(was), matter, old[2], matter, ())]


def aligned_conflicts(sentences: Sequence[tuple[str, Chunk, int]],
                      anchors: Sequence[str] = ()) -> list[list[Fact]]:
    """Conflict groups from sentences of different documents that are versions of one
    statement with one value changed (:func:`value_differences`).

    ``sentences`` are (sentence, chunk, rank); when ``anchors`` are given (the sentences an
    answer quotes), only pairs with an anchor are compared. Pairs that disagree between the
    same two values ("Tampa" vs "Glendale" in three pairs of reports) form one group with one
    representative per document, its best-ranked sentence."""
    anchored = set(anchors)
    grams = [char_bigrams(s) for s, _, _ in sentences]
    by_values: dict[frozenset, list[Fact]] = {}
    for i, (sa, ca, ra) in enumerate(sentences):
        for j in range(i + 1, len(sentences)):
            sb, cb, rb = sentences[j]
            if ca.doc_id == cb.doc_id or (anchored and sa not in anchored and sb not in anchored):
                continue
            if len(grams[i] & grams[j]) < 0.3 * min(len(grams[i]), len(grams[j])):
                continue  # cheap test first: too few shared character pairs to align
            # two versions of one clause (same title, same label) may differ in several values
            several = bool(ca.clause) and ca.clause == cb.clause and ca.title == cb.title
            for (x, y), (u, v) in _differences(sa, sb, several):
                qa, qb = _value_quantity(sa[x:y]), _value_quantity(sb[u:v])
                if not comparable(qa, qb) or quantity_key(qa) == quantity_key(qb) \
                        or qb.raw.lower() in synonyms(qa.raw):
                    continue
                matter = matter_terms(sa[:x] + " " + sa[y:])
                key = frozenset({quantity_key(qa), quantity_key(qb)})
                group = by_values.setdefault(key, [])
                group.append(Fact(ca, sa, qa, matter, ra, matter, ()))
                group.append(Fact(cb, sb, qb, matter, rb, matter, ()))
    return _disagreements(by_values.values())




# -- authority ------------------------------------------------------------------------------

def matter_label(fact: Fact, limit: int = 40) -> str:
    """What a conflict is about, as the reader saw it: the words of the value's own clause
    before the value ("住院：在职职工在一级、二级、三级定点医疗机构分别为"), list marker dropped."""
    sentence = fact.sentence
    at = sentence.find(fact.quantity.raw)
    if at < 0:
        return " ".join(fact.matter)
    head = re.split(r"[；;]", sentence[:at])[-1]
    label = LIST_ITEM.sub("", head).strip(" ，,;；:：、")
    if len(label) > limit:
        label = "…" + label[-(limit - 1):]
    return label or " ".join(fact.matter)
