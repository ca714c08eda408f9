"""Graph edges: cross-references between clauses and supersession between documents.

``REFERENCES`` (chunk -> chunk) come from phrases such as 详见第七条, 依照本办法第五条, 见附件1,
see Section 5, pursuant to Article 3; within a document they resolve at once, a named document
(《中华人民共和国民法典》第五十四条) resolves in the pipeline after every document is stored.
``SUPERSEDES`` (newer document -> older document) come from explicit statements (同时废止,
supersedes) and from a newer version (later publish date) of the same title. An item of an
amending act (关于修改《X》的决定: "将第九条中的……修改为……"; "X – Amendment No. 1": "Clause 4.2
is deleted and replaced with") REFERENCES the clause of X it changes
(:attr:`agentic_rag.types.Edge.amends`); its other clause references ("违反本条例第十九条", "under
section 5") are to clauses of X as well, since the act has no clauses of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from agentic_rag.ingest.chunking import EN_CLAUSE_NO, roman_to_int
from agentic_rag.text.numerals import CN_NUMERAL_CHARS, cn_to_int
from agentic_rag.text.clauses import AMENDED_CLAUSE, amended_title
from agentic_rag.types import Chunk, Edge

_NUM = f"[{CN_NUMERAL_CHARS}0-9０-９]+"
_OWN = r"本(?:办法|条例|法|规定|细则|实施细则|规则|通知|决定|意见|方案|准则|章程|合同|协议|标准|制度|办法实施细则)"
_VERB = r"(?:详见|参见|参照|见|依照|依据|按照|根据|适用|违反|符合|依|按|照)"
# 详见第七条 / 依照本办法第五条 / 本法第十二条规定 ; the clause number group is "no", 之一 is "sub"
_CN_REF = re.compile(
    rf"(?:{_VERB}\s*(?:{_OWN})?|{_OWN})\s*第(?P<no>{_NUM})条(?:之(?P<sub>{_NUM}))?")
_CN_MORE = re.compile(rf"(?:第[{CN_NUMERAL_CHARS}0-9]+款)?\s*[、和及与或至]\s*第(?P<no>{_NUM})条(?:之(?P<sub>{_NUM}))?")
_CN_APPX_REF = re.compile(rf"{_VERB}\s*(?:{_OWN})?\s*(?P<kind>附件|附录|附表)\s*(?P<no>[0-9０-９一二三四五六七八九十]+|[A-Z])?")
_EN_REF = re.compile(
    r"\b(?:see|pursuant to|under|in accordance with|as (?:provided|set out|defined|described|specified) in|"
    r"subject to|referred to in|according to|per)\s+(?:this\s+\w+'s\s+)?"
    r"(?P<kind>Article|Section|Sec\.|§|Clause|Appendix|Annex|Schedule|Exhibit)\s*"
    rf"(?P<no>{EN_CLAUSE_NO}|[A-Z]\b)(?!\s+of\s+the\s+[A-Z])",
    re.I)
# 《中华人民共和国民法典》第五十四条 -> another document's clause
_DOC_REF = re.compile(rf"《(?P<title>[^《》\n]{{2,80}})》\s*(?:[（(][^()（）\n]{{0,40}}[)）])?\s*第(?P<no>{_NUM})条(?:之(?P<sub>{_NUM}))?")


@lru_cache(maxsize=8192)
def amended_clauses(text: str) -> tuple[tuple[str, str], ...]:
    """(clause number, phrase) of each clause an amending act's item changes ("将第九条中的……"
    -> ("9", "将第九条"), "Clause 4.2 is deleted and replaced" -> ("4.2", …)). Cached: the
    Reasoner asks it of the same item for every clause it compares the item with."""
    out = []
    for m in AMENDED_CLAUSE.finditer(text):
        no = m.group("en") or m.group("en_do") or (_cn_no(m.group("no"), m.group("sub")) if m.group("no")
                                                    else _cn_no(m.group("no2"), m.group("sub2")))
        if no is not None:
            out.append((no, m.group(0)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PendingReference:
    """A reference to a clause of another document, resolved once that document is stored."""

    src: str  # chunk id
    title: str  # the document title as written between 《》
    clause_no: str  # normalized: "54", "12-1"
    phrase: str


def _cn_no(no: str, sub: str | None) -> str | None:
    value = cn_to_int(no)
    if value is None:
        return None
    if sub:
        sub_value = cn_to_int(sub)
        return f"{value}-{sub_value}" if sub_value is not None else None
    return str(value)


def _en_no(no: str) -> str:
    if re.fullmatch(r"[IVXLC]{2,}", no):
        value = roman_to_int(no)
        if value is not None:
            return str(value)
    return no.upper() if len(no) == 1 and no.isalpha() else no


_APPENDIX_LABEL = re.compile(r"(附件|附录|附表|Appendix|Annex|Schedule|Exhibit)", re.I)


def clause_index(chunks: Sequence[Chunk]) -> dict[tuple[str, str], str]:
    """(group, clause_no) -> the first chunk id of that clause; group is "appendix" for chunks
    labelled with an appendix (附件1, Appendix A: its text or its tables) and "clause" otherwise."""
    index: dict[tuple[str, str], str] = {}
    for chunk in chunks:
        if chunk.clause_no is None or chunk.clause is None or chunk.kind == "footnote":
            continue
        group = "appendix" if _APPENDIX_LABEL.match(chunk.clause) else "clause"
        index.setdefault((group, chunk.clause_no), chunk.chunk_id)
    return index


def references(chunks: Sequence[Chunk]) -> tuple[list[Edge], list[PendingReference]]:
    """Same-document REFERENCES edges, and references to clauses of other named documents."""
    index = clause_index(chunks)
    edges: list[Edge] = []
    pending: list[PendingReference] = []
    seen: set[tuple[str, str]] = set()
    for chunk in chunks:
        text = chunk.text
        english = _maybe_english(text)
        if "第" not in text and "附" not in text and not english:
            continue
        doc_spans: list[tuple[int, int]] = []
        amended = amended_title(chunk.title)
        if amended:
            # "将第九条中的……修改为……" changes clause 9 of the amended act, not of this one
            pending.extend(PendingReference(chunk.chunk_id, amended, no, phrase)
                           for no, phrase in amended_clauses(text))
        targets: list[tuple[str | None, str]] = []

        def clause_ref(no: str | None, phrase: str) -> None:
            # an amending act has no clauses of its own to refer to: its "违反本条例第十九条"
            # and "under section 5" are clauses of the act it amends
            if amended and no:
                pending.append(PendingReference(chunk.chunk_id, amended, no, phrase))
            else:
                targets.append((index.get(("clause", no or "")), phrase))
        for m in _DOC_REF.finditer(text):
            no = _cn_no(m.group("no"), m.group("sub"))
            if no is not None:
                pending.append(PendingReference(chunk.chunk_id, m.group("title").strip(), no, m.group(0)))
                doc_spans.append(m.span())
        for m in _CN_REF.finditer(text):
            if any(s <= m.start() < e for s, e in doc_spans):
                continue
            clause_ref(_cn_no(m.group("no"), m.group("sub")), m.group(0))
            # 依照本规定第五条、第六条: every article of the list is referenced
            end = m.end()
            for _ in range(50):  # bounded: a list longer than this is not a reference
                more = _CN_MORE.match(text, end)
                if more is None:
                    break
                no = _cn_no(more.group("no"), more.group("sub"))
                clause_ref(no, m.group(0) + text[m.end():more.end()])
                end = more.end()
        for m in _CN_APPX_REF.finditer(text):
            raw = m.group("no")
            no = (str(cn_to_int(raw)) if cn_to_int(raw) is not None else raw.upper()) if raw else None
            target = index.get(("appendix", no)) if no else None
            if target is None and not no:
                target = next((cid for (g, _), cid in index.items() if g == "appendix"), None)
            targets.append((target, m.group(0)))
        if english:
            for m in _EN_REF.finditer(text):
                if m.group("kind").lower() in ("appendix", "annex", "schedule", "exhibit"):
                    targets.append((index.get(("appendix", _en_no(m.group("no")))), m.group(0)))
                else:
                    clause_ref(_en_no(m.group("no")), m.group(0))
        for target, phrase in targets:
            if target is None or target == chunk.chunk_id or target.rsplit(":", 1)[0] == chunk.chunk_id.rsplit(":", 1)[0]:
                continue  # unknown clause, or the clause pointing at itself
            key = (chunk.chunk_id, target)
            if key in seen:
                continue
            seen.add(key)
            edges.append(Edge(src=chunk.chunk_id, dst=target, kind="REFERENCES", phrase=phrase.strip()))
    return edges, pending


_EN_CUES = ("rticle", "ection", "§", "ppendix", "nnex", "chedule", "xhibit", "lause", "ARTICLE", "SECTION")


def _maybe_english(text: str) -> bool:
    # substring tests are far cheaper than a regex over every chunk of a bulk import
    return any(cue in text for cue in _EN_CUES)


_VERSION_PAREN = re.compile(
    r"[（(]\s*(?:(?:19|20)\d{2}\s*年?\s*)?(?:修订|修正|修改|版|试行|暂行|Version\s*[\d.]+|Rev\.?\s*\d+)?\s*[)）]",
    re.I)


def normalize_title(title: str) -> str:
    """A title reduced to what versions of one document share: no 《》, spaces, leading
    中华人民共和国, or version marks such as （2024年修订）, 2024版, (Version 2)."""
    t = title.strip().strip("《》")
    t = _VERSION_PAREN.sub("", t)
    t = re.sub(r"(?:19|20)\d{2}\s*年?版|\b(?:Version|Ver\.)\s*[\d.]+|\bv\d+(?:\.\d+)+", "", t, flags=re.I)
    t = re.sub(r"^中华人民共和国", "", t)
    return re.sub(r"[\s\u3000]+", "", t).lower()


def resolve_pending(pending: Iterable[PendingReference], chunks_of_title) -> list[Edge]:
    """Turn cross-document references into edges. ``chunks_of_title(title)`` returns the chunks
    of the stored document with that title (or an empty list)."""
    edges: list[Edge] = []
    cache: dict[str, dict[tuple[str, str], str]] = {}
    for ref in pending:
        key = normalize_title(ref.title)
        if key not in cache:
            cache[key] = clause_index(chunks_of_title(ref.title))
        target = cache[key].get(("clause", ref.clause_no))
        if target is not None and target != ref.src:
            edges.append(Edge(src=ref.src, dst=target, kind="REFERENCES", phrase=ref.phrase))
    return edges
