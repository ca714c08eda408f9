"""Two documents clause by clause: which clause became which, and which of its values changed.

Clauses are aligned first by label (第七条 ↔ 第七条, Article 4 ↔ 4) and then by content, so a
clause that kept its wording under a new number is *renumbered*, not one clause removed and
another added. Every candidate pair is scored by the character-bigram overlap of the two texts
with their labels left out (:func:`~agentic_rag.text.similarity.char_bigrams`), a pair with the
same label gets a bonus, and pairs are taken best first, each clause once: a clause whose old
number now holds different text loses its label partner to the clause that really continues it.

Within a pair, sentences are aligned the same way and each changed sentence is read for what
changed (:class:`~agentic_rag.reports.model.ValueChange`): numbers, amounts and percentages,
dates and durations (normalized by :mod:`agentic_rag.text.quantities`, so 百分之八十 = 80% is not
a change and 3个工作日 → 3日 is), list items, conditions, obligation words (应当 → 可以, shall →
may), and otherwise the wording.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentic_rag.ingest.chunking import heading_only
from agentic_rag.reports.model import ChangeKind, ClauseChange, ValueChange
from agentic_rag.text.clauses import clause_number
from agentic_rag.text.language import is_cjk
from agentic_rag.text.quantities import extract_quantities, quantity_key
from agentic_rag.text.sentences import split_sentences, strip_label, unwrap
from agentic_rag.text.similarity import char_bigrams, jaccard, squash
from agentic_rag.types import Chunk, Citation, Quantity

__all__ = ["Clause", "align", "clauses_of", "compare_documents", "value_changes"]

#: a pair under one label needs this much shared wording to be one clause; under two labels,
#: a renumbering, it needs much more
SAME_LABEL_MIN = 0.2
MOVED_MIN = 0.5
#: a same-label pair wins over a content pair only when the content pair is not clearly better
SAME_LABEL_BONUS = 0.15
#: two sentences of a clause pair are one sentence revised when they share this much
SENTENCE_MIN = 0.3

_MATERIAL: frozenset[str] = frozenset({"number", "date", "duration", "list", "condition", "obligation"})
_KIND: dict[str, ChangeKind] = {"percent": "number", "money": "number", "number": "number",
                                "count": "number", "date": "date", "duration": "duration"}
_OBLIGATION = re.compile(r"应当|必须|不得|禁止|可以|无须|不需|须|shall not|must not|may not|"
                         r"\bshall\b|\bmust\b|\bmay\b|\bshould\b|\bis required to\b|\bneed not\b", re.IGNORECASE)
_CONDITION = re.compile(r"如果|若|凡|除[^，。；]{1,30}外|但|经[^，。；]{1,20}(?:同意|批准)|[^，。；]{2,30}的[，,]|"
                        r"\bif\b|\bunless\b|\bprovided that\b|\bexcept\b|\bwhere\b|\bsubject to\b|"
                        r"\bonly when\b|\bprovided\b", re.IGNORECASE)
_ITEM_SPLIT = re.compile(r"[、；;]|(?<=[a-z)]), (?:and |or )?|\band\b|\bor\b|和|及|或")
_CLAUSE_REF = re.compile(r"第[一二三四五六七八九十百零〇\d]+条(?:之[一二三四五六七八九十]+)?|"
                         r"(?:Article|Section|Clause)\s+\d+(?:\.\d+)*(?:\([a-z0-9]+\))?", re.IGNORECASE)


@dataclass
class Clause:
    """One clause of a document: the chunks it was stored as, joined."""

    key: str
    label: str | None
    number: str | None
    chunks: list[Chunk]
    text: str
    body: str
    grams: frozenset[str] = field(default_factory=frozenset)

    @property
    def first(self) -> Chunk:
        return self.chunks[0]

    def citation(self, quote: str = "") -> Citation:
        """A citation of the chunk holding ``quote`` (the clause's first chunk otherwise), with
        the quote's character span in the document."""
        quote = quote.strip()
        for chunk in self.chunks:
            i = chunk.text.find(quote) if quote else -1
            if i >= 0:
                start = chunk.span[0] + i
                return Citation(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, title=chunk.title,
                                clause=chunk.clause, quote=quote, span=(start, start + len(quote)))
        c = self.first
        return Citation(chunk_id=c.chunk_id, doc_id=c.doc_id, title=c.title, clause=c.clause,
                        quote=quote or _lead(self.body), span=c.span)


def clauses_of(chunks: Sequence[Chunk]) -> list[Clause]:
    """The clauses of a document in order: the pieces of a long clause and its tables (chunks
    in a row with one label and heading path) joined; heading-only chunks and unlabelled front matter left out
    when the document has labelled clauses."""
    groups: dict[str, list[Chunk]] = {}
    last: list[Chunk] | None = None
    for chunk in sorted(chunks, key=lambda c: c.ord):
        if heading_only(chunk.text) or not chunk.text.strip():
            continue
        if last and chunk.clause and (last[0].clause, last[0].path) == (chunk.clause, chunk.path):
            last.append(chunk)  # a table of the clause, or the next piece of a long one
            continue
        last = groups.setdefault(chunk.chunk_id.rsplit(":", 1)[0], [])
        last.append(chunk)
    labelled = any(g[0].clause for g in groups.values())
    out: list[Clause] = []
    for key, group in groups.items():
        label = group[0].clause
        if labelled and not label:
            continue
        text = "\n".join(c.text for c in group)
        body = _without_heading(strip_label(text) if label else unwrap(text))
        # 附件2 and 第二条 are different clauses even if both are numbered 2
        number = f"{group[0].kind}:{(group[0].clause_no or clause_number(label)).lower()}" if label else None
        out.append(Clause(key, label, number, group, text, body, char_bigrams(_shape(body))))
    return out


def _without_heading(text: str) -> str:
    return re.sub(r"^#+\s*", "", text).strip()


def _shape(text: str) -> str:
    """The wording of a clause for alignment: clause references and digits masked, so that a
    renumbered clause whose references moved with it still reads as the same text."""
    return re.sub(r"\d", "0", _CLAUSE_REF.sub("§", text))


#: a clause that grew (or shrank) by a sentence still continues the other when most of the
#: shorter text is in the longer one and it is not tiny beside it
CONTAINED_MIN, CONTAINED_SIZE = 0.6, 0.4
#: a removed clause was merged into a kept one when that much of its wording is in it
MERGED_MIN = 0.7


def similarity(a: Clause, b: Clause) -> float:
    """How alike two clauses are: the bigram overlap (Jaccard) of their wording, or, when one
    keeps most of the other's words and adds or drops a sentence, the share of the shorter
    one found in the longer, less a margin."""
    if squash(a.body) == squash(b.body):
        return 1.0
    sim = jaccard(a.grams, b.grams)
    small, large = sorted((len(a.grams), len(b.grams)))
    if small and small / large >= CONTAINED_SIZE:
        contained = len(a.grams & b.grams) / small
        if contained >= CONTAINED_MIN:
            sim = max(sim, contained - 0.1)
    return sim


def align(old: Sequence[Clause], new: Sequence[Clause]) -> list[tuple[Clause | None, Clause | None, float]]:
    """Pairs (old, new, similarity), in the new document's order with removed clauses placed
    after the clause they followed; ``None`` on one side for an added or removed clause."""
    candidates: list[tuple[float, float, int, int]] = []
    for i, a in enumerate(old):
        for j, b in enumerate(new):
            sim = similarity(a, b)
            same = a.number is not None and a.number == b.number
            if sim >= (SAME_LABEL_MIN if same else MOVED_MIN):
                candidates.append((sim + (SAME_LABEL_BONUS if same else 0.0), sim, i, j))
    candidates.sort(key=lambda c: (-c[0], abs(c[2] - c[3])))
    of_old: dict[int, tuple[int, float]] = {}
    taken_new: set[int] = set()
    for _, sim, i, j in candidates:
        if i in of_old or j in taken_new:
            continue
        of_old[i] = (j, sim)
        taken_new.add(j)
    of_new = {j: (i, sim) for i, (j, sim) in of_old.items()}
    pairs: list[tuple[Clause | None, Clause | None, float]] = []
    placed: set[int] = set()
    for j, b in enumerate(new):
        if j in of_new:
            i, sim = of_new[j]
            # removed clauses that came before this one's partner in the old order go first
            for k in range(i):
                if k not in of_old and k not in placed:
                    pairs.append((old[k], None, 0.0))
                    placed.add(k)
            pairs.append((old[i], b, sim))
            placed.add(i)
        else:
            pairs.append((None, b, 0.0))
    pairs.extend((old[k], None, 0.0) for k in range(len(old)) if k not in placed)
    return pairs


def compare_documents(old_chunks: Sequence[Chunk], new_chunks: Sequence[Chunk]) -> list[ClauseChange]:
    """Every clause of both documents with its status and, for a changed one, what changed. A
    removed clause whose wording now stands inside another clause (two merged into one) says
    which, with the values that changed on the way; the sentences it brought are not also
    reported as added to that clause."""
    pairs = align(clauses_of(old_chunks), clauses_of(new_chunks))
    merged = _merges(pairs)
    out: list[ClauseChange] = []
    for a, b, sim in pairs:
        if a is None and b is not None:
            out.append(ClauseChange(status="added", new=b.citation(_lead(b.body)), material=True))
        elif b is None and a is not None:
            into = merged.get(a.key)
            if into is None:
                out.append(ClauseChange(status="removed", old=a.citation(_lead(a.body)), material=True))
                continue
            changes, old_quote, new_quote = value_changes(a.body, into.body)
            changes = [c for c in changes if not c.whole]
            out.append(ClauseChange(status="removed", old=a.citation(old_quote or _lead(a.body)),
                                    merged_into=into.citation(new_quote or _lead(into.body)), changes=changes,
                                    similarity=round(similarity(a, into), 3), material=True))
        elif a is not None and b is not None:
            brought = [m for m in pairs if m[0] is not None and m[1] is None and merged.get(m[0].key) is b]
            out.append(_pair(a, b, sim, [m[0] for m in brought if m[0] is not None]))
    return out


def _merges(pairs: list[tuple[Clause | None, Clause | None, float]]) -> dict[str, Clause]:
    """Removed clause key -> the kept new clause that now holds most of its wording."""
    kept = [b for a, b, _ in pairs if a is not None and b is not None]
    out: dict[str, Clause] = {}
    for a, b, _ in pairs:
        if a is None or b is not None or not a.grams:
            continue
        best = max(kept, key=lambda n: len(a.grams & n.grams), default=None)
        if best is not None and len(a.grams & best.grams) / len(a.grams) >= MERGED_MIN:
            out[a.key] = best
    return out


def _pair(a: Clause, b: Clause, sim: float, brought: Sequence[Clause] = ()) -> ClauseChange:
    change = _compared(a, b, sim, brought)
    if brought:
        change = change.model_copy(update={"merged_from": [c.citation(_lead(c.body)) for c in brought]})
    return change


def _compared(a: Clause, b: Clause, sim: float, brought: Sequence[Clause]) -> ClauseChange:
    moved = a.number != b.number
    if squash(a.body) == squash(b.body):
        return ClauseChange(status="renumbered" if moved else "unchanged", old=a.citation(_lead(a.body)),
                            new=b.citation(_lead(b.body)), similarity=1.0)
    changes, old_quote, new_quote = value_changes(a.body, b.body)
    if brought:  # what came from a clause merged into this one is reported with that clause
        theirs = [char_bigrams(_shape(p)) for c in brought for p in _sentences(c.body)]
        from_them = [p for p in _sentences(b.body)
                     if any(jaccard(char_bigrams(_shape(p)), g) >= SENTENCE_MIN for g in theirs)]
        changes = [c for c in changes if c.old or not c.new or not any(c.new in p for p in from_them)]
        if not changes:
            return ClauseChange(status="renumbered" if moved else "changed", old=a.citation(_lead(a.body)),
                                new=b.citation(_lead(b.body)), similarity=round(sim, 3))
    if not changes:  # only spacing or punctuation differs
        return ClauseChange(status="renumbered" if moved else "unchanged", old=a.citation(_lead(a.body)),
                            new=b.citation(_lead(b.body)), similarity=round(sim, 3))
    return ClauseChange(status="renumbered" if moved else "changed",
                        old=a.citation(old_quote or _lead(a.body)), new=b.citation(new_quote or _lead(b.body)),
                        similarity=round(sim, 3), changes=changes,
                        material=any(c.kind in _MATERIAL for c in changes))


def _lead(text: str) -> str:
    spans = split_sentences(text)
    return text[spans[0][0]:spans[0][1]] if spans else text[:120]


def _sentences(text: str) -> list[str]:
    """The pieces of a clause compared one with another: its sentences, cut at semicolons too,
    so that each case of a list of cases is compared with its own counterpart."""
    out = []
    for s, e in split_sentences(text):
        out.extend(p.strip() for p in re.split(r"[；;]\s*", text[s:e]) if p.strip())
    return out


def value_changes(old: str, new: str) -> tuple[list[ValueChange], str, str]:
    """What changed from the text ``old`` to ``new``, and the first old and new sentence that
    changed (the quotes to cite)."""
    a, b = _sentences(old), _sentences(new)
    pairs: list[tuple[str | None, str | None]] = []
    used: set[int] = set()
    grams_a = [char_bigrams(_shape(s)) for s in a]
    for sb in b:
        gb = char_bigrams(_shape(sb))
        best = max(((jaccard(ga, gb), i) for i, ga in enumerate(grams_a) if i not in used), default=(0.0, -1))
        if best[0] >= SENTENCE_MIN:
            used.add(best[1])
            pairs.append((a[best[1]], sb))
        else:
            pairs.append((None, sb))
    pairs.extend((a[i], None) for i in range(len(a)) if i not in used)
    changes: list[ValueChange] = []
    quotes: list[tuple[str, str]] = []
    for sa, sb in pairs:
        if sa is not None and sb is not None and squash(sa) == squash(sb):
            continue
        found = _sentence_changes(sa or "", sb or "")
        if found:
            changes.extend(found)
            quotes.append((sa or "", sb or ""))
    old_quote = next((q for q, _ in quotes if q), "")
    new_quote = next((q for _, q in quotes if q), "")
    return _dedupe(changes), old_quote, new_quote


def _dedupe(changes: list[ValueChange]) -> list[ValueChange]:
    seen: set[tuple[str, str, str]] = set()
    out = []
    for c in changes:
        key = (c.kind, c.old, c.new)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def _values(text: str) -> list[Quantity]:
    return [q for q in extract_quantities(text) if q.kind in _KIND]


def _sentence_changes(a: str, b: str) -> list[ValueChange]:
    if not a or not b:  # a sentence added to or dropped from the clause
        text = b or a
        kinds = {_KIND[q.kind] for q in _values(text)}
        kind: ChangeKind = (next((k for k in ("number", "duration", "date") if k in kinds), "wording")
                            if kinds else "obligation" if _OBLIGATION.search(text) else "wording")
        return [ValueChange(kind=kind, old=a, new=b, whole=True)]
    out: list[ValueChange] = []
    qa, qb = _values(a), _values(b)
    ka, kb = [quantity_key(q) for q in qa], [quantity_key(q) for q in qb]
    if ka != kb:
        out.extend(_quantity_changes(qa, qb, b))
    out.extend(_list_changes(a, b))
    oa, ob = _words(_OBLIGATION, a), _words(_OBLIGATION, b)
    if oa != ob:
        out.append(ValueChange(kind="obligation", old="、".join(oa), new="、".join(ob), matter=_matter(b, "")))
    ca, cb = _conditions(a), _conditions(b)
    if ca != cb and not out:
        out.append(ValueChange(kind="condition", old="；".join(ca), new="；".join(cb), matter=_matter(b, "")))
    if not out:
        old_part, new_part = _differing(a, b)
        if old_part or new_part:
            out.append(ValueChange(kind="wording", old=old_part, new=new_part))
    return out


def _quantity_changes(qa: list[Quantity], qb: list[Quantity], b: str) -> list[ValueChange]:
    """Old and new values paired in order when both pieces state as many; otherwise one change
    with each side's values listed (which old value became which new one is not knowable)."""
    matters = _matters(b, qb)
    if len(qa) == len(qb):
        return [ValueChange(kind=_KIND[y.kind], old=x.raw, new=y.raw, matter=m)
                for x, y, m in zip(qa, qb, matters) if quantity_key(x) != quantity_key(y)]
    sep = "、" if is_cjk(b) else ", "
    first = (qb or qa)[0]
    return [ValueChange(kind=_KIND[first.kind], old=sep.join(q.raw for q in qa), new=sep.join(q.raw for q in qb),
                        matter=matters[0] if matters else "")]


def _items(text: str) -> list[str]:
    """The items of an enumeration (``甲、乙和丙``, ``a, b and c``); none when the text does
    not enumerate short items."""
    if not re.search(r"、|, ", text):
        return []
    body = re.sub(r"^[^：:]{0,40}[：:]", "", text)  # a list's lead-in ("材料包括：") is not an item
    parts = [p.strip(" ，,。.()（）") for p in _ITEM_SPLIT.split(body)]
    short = [p for p in parts if p and (len(p) <= 16 if is_cjk(p) else len(p.split()) <= 5)]
    return short if len(short) >= 2 else []


def _list_changes(a: str, b: str) -> list[ValueChange]:
    ia, ib = _items(a), _items(b)
    if not ia or not ib:
        return []
    sa, sb = {squash(x) for x in ia}, {squash(x) for x in ib}
    removed = [x for x in ia if squash(x) not in sb and not _values(x)]
    added = [x for x in ib if squash(x) not in sa and not _values(x)]
    # an item reworded is not an item added and one removed: keep only clear additions/removals
    removed = [x for x in removed if not any(jaccard(char_bigrams(x), char_bigrams(y)) >= 0.5 for y in added)]
    added = [y for y in added if not any(jaccard(char_bigrams(x), char_bigrams(y)) >= 0.5 for x in ia)]
    if not removed and not added:
        return []
    sep = "、" if is_cjk(a + b) else ", "
    return [ValueChange(kind="list", old=sep.join(removed), new=sep.join(added), matter=_matter(b, ""))]


def _words(pattern: re.Pattern[str], text: str) -> list[str]:
    return sorted({m.group(0).lower() for m in pattern.finditer(text)})


def _conditions(text: str) -> list[str]:
    return [squash(m.group(0)) for m in _CONDITION.finditer(text)]


def _tokens(text: str) -> list[str]:
    return re.findall(r"[\u3400-\u9fff]|[A-Za-z0-9]+(?:[.,'-][A-Za-z0-9]+)*|\S", text)


def _differing(a: str, b: str) -> tuple[str, str]:
    """The first stretch where ``a`` and ``b`` differ, on both sides (a few tokens of context
    to keep it readable)."""
    ta, tb = _tokens(a), _tokens(b)
    sm = difflib.SequenceMatcher(a=ta, b=tb, autojunk=False)
    joiner = "" if is_cjk(a + b) else " "
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            continue
        if all(not t.strip() or re.fullmatch(r"[，,。.；;：:、\s]", t) for t in ta[i1:i2] + tb[j1:j2]):
            continue
        return joiner.join(ta[i1:i2])[:80], joiner.join(tb[j1:j2])[:80]
    return "", ""


def _matters(sentence: str, values: list[Quantity]) -> list[str]:
    """What each value of ``sentence`` is about: the words before it in its segment, or, for a
    value in a list (``分别为90%、85%``), the words before the list."""
    out: list[str] = []
    pos = 0
    for q in values:
        i = sentence.find(q.raw, pos)
        if i < 0:
            out.append(out[-1] if out else "")
            continue
        head = sentence[pos if out else 0:i]
        seg = re.split(r"[，,；;：:。、]", head)[-1].strip()
        if not seg or re.fullmatch(r"(?:and|or|和|及|或)?\s*", seg):
            seg = re.split(r"[，,；;：:。、]", sentence[:i].rstrip("、, "))[-1].strip() if not out else out[-1]
        out.append(_clip(seg, sentence))
        pos = i + len(q.raw)
    return out


def _clip(seg: str, sentence: str) -> str:
    return seg[-30:] if is_cjk(sentence) else " ".join(seg.split()[-6:])


def _matter(sentence: str, raw: str) -> str:
    """The words before a value in its sentence segment: what the value is about."""
    i = sentence.find(raw) if raw else -1
    head = sentence[:i] if i > 0 else sentence
    seg = re.split(r"[，,；;：:。]", head)[-1].strip() or head.strip()
    return seg[-30:] if is_cjk(seg) else " ".join(seg.split()[-6:])
