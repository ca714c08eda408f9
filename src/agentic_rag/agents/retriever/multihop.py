"""Deterministic multi-hop planning: question decomposition, bridge entities, sufficiency.

Pure functions over text and chunks, used by the Retriever between rounds:

- :func:`decompose` splits a comparison question into its compared entities
  ("Who was born first, A or B?" -> ["A", "B"]; "A和B谁先出生" -> ["A", "B"]).
- :func:`relations` finds the relation words of a question ("mother", "director", "母亲").
- :func:`bridge_entities` reads a retrieved passage and returns the names it gives for those
  relations ("... son of Emperor Lothair I and Ermengarde of Tours" -> "Ermengarde of Tours"),
  which become the next hop's queries.
- :func:`needs_hop` says whether the question needs another hop at all: it relates its entity
  to another one it does not name and asks something about that one ("Where was the director
  of X born?"), while "Who is the director of X?" and "What are the working hours at X?" are
  answered by X's own passage.
- :func:`coverage` is the sufficiency check: which of the question's entities and relation
  bridges the retrieved passages cover, and the one element still missing.

Everything here is generic English/Chinese text handling; no corpus-specific rules.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from agentic_rag.text.names import extract_names
from agentic_rag.text.stopwords import HOP_EN
from agentic_rag.types import Chunk

__all__ = ["bridge_entities", "content_words", "decompose", "needs_hop", "relations"]

# relation word in a question -> phrases that introduce the related entity in a passage
_EN_RELATIONS: dict[str, tuple[str, ...]] = {
    "mother": ("mother", "son of", "daughter of", "child of", "born to", "and"),
    "father": ("father", "son of", "daughter of", "child of", "born to"),
    "grandfather": ("father", "son of", "daughter of", "child of", "born to"),
    "grandmother": ("mother", "son of", "daughter of", "child of", "born to", "and"),
    "parent": ("father", "mother", "son of", "daughter of", "child of", "born to"),
    "spouse": ("married", "marriage", "wife", "husband", "spouse", "widow", "consort"),
    "wife": ("married", "marriage", "wife", "husband", "spouse", "widow", "consort", "queen"),
    "husband": ("married", "marriage", "husband", "wife", "spouse", "widow", "consort", "king"),
    "in-law": ("married", "wife", "husband", "spouse", "father", "mother"),
    "child": ("son", "daughter", "children", "child", "father of", "mother of"),
    "son": ("son", "children", "father of", "mother of"),
    "daughter": ("daughter", "children", "father of", "mother of"),
    "sibling": ("brother", "sister", "sibling"),
    "brother": ("brother", "sibling"),
    "sister": ("sister", "sibling"),
    "uncle": ("brother", "father", "mother"),
    "aunt": ("sister", "father", "mother"),
    "director": ("directed by", "director", "directed", "film by"),
    "producer": ("produced by", "producer"),
    "composer": ("composed by", "music by", "composer", "score by"),
    "performer": ("performed by", "recorded by", "song by", "single by", "album by", "singer",
                  "band", "artist", "by", "album", "single", "track"),
    "singer": ("performed by", "recorded by", "song by", "sung by", "singer", "by"),
    "artist": ("by", "artist", "painted by", "recorded by"),
    "author": ("written by", "author", "novel by", "book by", "by"),
    "writer": ("written by", "writer", "screenplay by", "by"),
    "creator": ("created by", "creator", "developed by"),
    "founder": ("founded by", "founder", "established by", "co-founded"),
    "publisher": ("published by", "publisher"),
    "developer": ("developed by", "developer"),
    "owner": ("owned by", "owner"),
    "designer": ("designed by", "designer", "architect"),
    "architect": ("designed by", "architect"),
    "manufacturer": ("manufactured by", "made by", "manufacturer"),
    "coach": ("coached by", "head coach", "coach"),
    "member": ("member of", "band", "group"),
    "editor": ("edited by", "editor"),
    "presenter": ("presented by", "hosted by", "host"),
    "successor": ("succeeded by", "successor"),
    "predecessor": ("preceded by", "predecessor", "succeeded"),
    "university": ("educated at", "graduated from", "studied at", "attended", "university", "college"),
    "school": ("educated at", "graduated from", "studied at", "attended", "school"),
    "team": ("plays for", "played for", "signed", "team", "club"),
    "company": ("works for", "worked for", "company", "founded", "subsidiary of"),
    "label": ("record label", "released by", "label"),
    "league": ("league", "competes in"),
}
_EN_ALIASES = {
    "mom": "mother", "dad": "father", "mothers": "mother", "fathers": "father",
    "directed": "director", "directors": "director", "produced": "producer",
    "composed": "composer", "performed": "performer", "sang": "singer", "sung": "singer",
    "wrote": "author", "written": "author", "novelist": "author", "poet": "author",
    "created": "creator", "founded": "founder", "published": "publisher", "developed": "developer",
    "owned": "owner", "designed": "designer", "married": "spouse", "widow": "spouse",
    "parents": "parent", "children": "child", "sons": "son", "daughters": "daughter",
    "siblings": "sibling", "brothers": "brother", "sisters": "sister", "band": "performer",
    "screenwriter": "writer", "co-founder": "founder", "alma": "university", "studied": "university",
    "educated": "university", "graduated": "university", "manufactured": "manufacturer",
}
_ZH_RELATIONS: dict[str, tuple[str, ...]] = {
    "母亲": ("母亲", "其母", "生母", "之母"), "父亲": ("父亲", "其父", "生父", "之父"),
    "祖父": ("父亲", "其父"), "祖母": ("母亲", "其母"), "妻子": ("妻子", "夫人", "其妻", "嫁给", "娶"),
    "丈夫": ("丈夫", "其夫", "嫁给"), "配偶": ("妻子", "丈夫", "配偶", "结婚"),
    "儿子": ("儿子", "之子"), "女儿": ("女儿", "之女"), "导演": ("导演", "执导"),
    "作者": ("作者", "所著", "著", "撰写", "创作"), "演唱": ("演唱", "歌手", "演唱者"),
    "歌手": ("演唱", "歌手"), "创始人": ("创始人", "创办", "创立", "创建"),
    "制片人": ("制片人", "监制", "出品"), "作曲": ("作曲", "谱曲"), "出版": ("出版社", "出版"),
    "毕业": ("毕业于", "就读于"), "上级": ("上级", "主管部门"), "制定": ("制定", "发布", "印发"),
}
_WEAK_CUES = frozenset({"by", "and", "band", "son", "daughter", "host", "team", "club", "group"})
_RE_COMPARE_EN = re.compile(
    r"\b(?:or|both|same|either|neither|than|first|earlier|later|older|younger|longer|shorter|"
    r"bigger|larger|smaller|more|less|higher|lower|compare[ds]?|difference)\b", re.IGNORECASE)
_RE_COMPARE_ZH = re.compile(r"还是|哪个|哪一个|谁更|谁先|谁后|是否都|都是|相同|一样|区别|不同|比较|更早|更晚")
_RE_ZH_PAIR = re.compile(r"([\u4e00-\u9fff\w《》·]{2,20}?)(?:和|与|跟|同|、)([\u4e00-\u9fff\w《》·]{2,20}?)"
                         r"(?=谁|哪|是否|都|的|，|,|相|一样|有|在)")
_RE_SOURCES_DISAGREE = re.compile(r"不一致|冲突|矛盾|为准|哪个优先|哪个有效")
_RE_ZH_NAME_AFTER = re.compile(r"^[是为：:，,]?\s*([\u4e00-\u9fff·]{2,8}|[A-Z][\w\s.'-]{1,40})")


def relations(question: str) -> list[str]:
    """The relation words the question asks to follow, canonical form, in order of appearance."""
    found: list[str] = []
    lower = question.lower()
    for word in re.findall(r"[a-z][a-z\-]*", lower):
        rel = word if word in _EN_RELATIONS else _EN_ALIASES.get(word)
        if rel is None and word.endswith("-in-law"):
            rel = "in-law"
        if rel and rel not in found:
            found.append(rel)
    for rel in _ZH_RELATIONS:
        if rel in question and rel not in found:
            found.append(rel)
    return found


#: relation words that chain two relations by themselves (a grandfather is a father's father)
CHAINED_RELATIONS = frozenset({"grandfather", "grandmother", "uncle", "aunt", "in-law", "祖父", "祖母"})
# a scope or condition put before the question, up to its comma ("Under the 2023 version of
# X's policy, how long ...", "If I resign, how ..."); one holding a relative clause ("In the
# country that X is a part, what ...") is part of what is asked
_RE_LEAD_EN = re.compile(r"^\s*(?:under|in|for|according to|as of|at|on|during|within|per|if|when|once|while|"
                         r"after|before)\b(?P<lead>[^,?]{1,100}),\s*(?=(?:what|which|who|whom|when|where|why|how)\b)",
                         re.IGNORECASE)
# "Who is ...", "What was ...": a question asking for the thing its head noun phrase names
_RE_DIRECT_EN = re.compile(r"^\s*(?:who|whom|what)\s+(?:is|was|are|were)\s+", re.IGNORECASE)
# "What nationality is ... / When did ...": the wh-phrase and its verb, before the noun phrase
_RE_ASK_EN = re.compile(r"^\s*(?:(?:in|at|on|for|from|of|by|to|with)\s+)?"
                        r"(?:what|which|who|whom|when|where|why|how)(?:\s+(?:much|many|long|old|far))?"
                        r"(?:\s+[a-z]+)?\s+(?:is|was|are|were|did|does|do|has|have|had)\s+", re.IGNORECASE)
# the head noun phrase asked about: "the director of the Avatar movie", "Lothair II's mother"
_RE_HEAD_EN = re.compile(r"(?:the\s+)?(?:(?:[A-Z][\w.\-]*\s+)*[\w.\-)]+['’]s\s+)?"
                         r"(?:[a-z\-]+\s+){0,2}?[a-z\-]+(?:\s+of\s+(?:the\s+)?(?:(?:film|song|album|book|novel)\s+)?"
                         r"[A-Z0-9][\w.'’\-:]*(?:\s+[A-Z0-9(][\w.'’\-:()]*)*)?")
# what relates the asked thing to a thing the question does not name: a relative clause (full
# or reduced: "the country Signmark is from", "the country containing X"), an embedded question
# word ("a singer from what state"), a comparison with another thing ("the same county as X")
_RE_CLAUSE_EN = re.compile(
    r"\b(?:where|which|who|whom|whose|that)\b(?!\s*[?]?\s*$)|"
    r"\b(?:of|from|in|by|for|at|with|on|to)\s+(?:what|which)\b|\bthe\s+same\s+[a-z]+\s+as\b|"
    r"\bthe\s+[a-z]+\s+(?:[A-Z][\w.\-]*\s+)+(?:is|was|are|were)\b|\bthe\s+[a-z]+\s+[a-z]+ing\s+[A-Z]")
# ... or another thing's property outside the head noun phrase ("the bomb on X's birthplace",
# "the place of birth of the director of film X")
_RE_RELATED_EN = re.compile(
    r"(?:\b[A-Z][\w.\-]*|\))['’]s\s+[a-z]|"
    r"\bthe\s+[a-z]+(?:\s+of\s+[a-z]+)?\s+of\s+(?:the\s+)?(?:[a-z]+\s+)?[A-Z]")
# "X的导演是谁", "X的导演", "X的导演和编剧分别是谁", "谁是X的导演": relations of X itself
_ZH_RELS = r"[\u4e00-\u9fff]{1,4}(?:[和及与、][\u4e00-\u9fff]{1,4})*"
_RE_DIRECT_ZH = re.compile(rf"^(?:[^的，,？?]{{1,30}})的(?P<rel>{_ZH_RELS}?)(?:分别)?(?:(?:是|为)(?:谁|什么|哪位|哪个|何人))?"
                           rf"[？?]?$|^谁是(?:[^的，,？?]{{1,30}})的(?P<rel2>{_ZH_RELS})[？?]?$")


def needs_hop(question: str, rels: Sequence[str] | None = None) -> bool:
    """Whether the question needs another hop: it relates an entity it names to another one it
    does not, and asks something about that one.

    Two relation words chain ("the mother of the director of X"), and so does a relation that
    is two by itself (grandfather). A relation asked for itself ("Who is the director of X?",
    "《X》的导演是谁") is answered by X's own passage, and so is a property of X ("What are the
    working hours at X?"). A property of a related thing needs the hop: "Where was the director
    of X born?", "When did X's mother die?", "the city where X was born", "the mayor of what
    city"."""
    if (lead := _RE_LEAD_EN.match(question)) and not _RE_CLAUSE_EN.search(lead.group("lead")):
        # "Under the 2023 version of X's policy, how long ...": the phrase before the question
        # says which text or case it asks about, it leads to no other thing
        question = question[lead.end():]
        rels = None if rels is None else [r for r in rels if r in relations(question)]
    rels = relations(question) if rels is None else list(rels)
    if len(rels) >= 2 or any(r in CHAINED_RELATIONS for r in rels):
        return True
    if any(r in _ZH_RELATIONS for r in rels):
        zh = _RE_DIRECT_ZH.match(question.strip())
        return not zh or not all(r in (zh.group("rel") or zh.group("rel2")) for r in rels)
    if rels and not _relational(question, rels[0]):
        rels = []  # "a lost company laptop", "a team offsite": the word names no relation here
    ask = _RE_ASK_EN.match(question)
    rest = question[ask.end():] if ask else question
    if _RE_CLAUSE_EN.search(rest):
        return True
    direct = _RE_DIRECT_EN.match(question) is not None
    head = _RE_HEAD_EN.match(rest) if ask else None
    text = head.group(0) if head else ""
    if rels:
        cues = (rels[0], *(a for a, r in _EN_ALIASES.items() if r == rels[0]))
        if not (direct and any(re.search(rf"\b{re.escape(c)}", text, re.IGNORECASE) for c in cues)):
            return True  # the relation leads to the thing asked about, not to the answer
    elif head and not direct and re.search(r"\sof\s|['’]s\s", text):
        return True  # "What nationality is the wife of X", "When did X's mother die"
    return bool(_RE_RELATED_EN.search(rest[head.end():] if head else rest))


def _relational(question: str, rel: str) -> bool:
    """Whether an English relation word links two things in the question: "the director of
    X", "X's mother", "the team that ...", "directed by X" (not "a company laptop")."""
    words = "|".join(re.escape(w) for w in (rel, *(a for a, r in _EN_ALIASES.items() if r == rel)))
    return re.search(rf"\b(?:{words})s?\s+(?:of|who|whom|whose|that|which|where|by|for|from|in|is|was)\b|"
                     rf"['’]s\s+(?:[a-z\-]+\s+)?(?:{words})\b|\b(?:{words})-in-law\b",
                     question, re.IGNORECASE) is not None


def decompose(question: str, entities: Sequence[str] = ()) -> list[str]:
    """Sub-queries of a comparison question: its compared entities, or [] when it compares
    nothing. ``entities`` are the Router's entity slots when known."""
    # "A的规定和B不一致，以哪个为准": the two sides are sources of one rule, not two things
    # to look up on their own; the whole question finds both versions of the rule
    if _RE_COMPARE_ZH.search(question) and not _RE_SOURCES_DISAGREE.search(question):
        m = _RE_ZH_PAIR.search(question)
        if m:
            return [m.group(1).strip("《》"), m.group(2).strip("《》")]
    # a capitalized compare word inside a sentence is part of a name ("First Aid", "More Than Words")
    if not any(m.group(0)[0].islower() or not question[:m.start()].strip()
               for m in _RE_COMPARE_EN.finditer(question)):
        return []
    names = list(entities) or extract_names(question)
    # "..., A or B?" names the alternatives after the last comma; prefer them when present
    tail = question.rsplit(",", 1)[-1]
    if " or " in tail:
        alts = [a.strip(" ?.!\"'") for a in re.split(r"\s+or\s+", tail) if a.strip(" ?.!\"'")]
        if len(alts) >= 2 and all(len(a) <= 120 for a in alts):
            return _unique(alts)
    return _unique(names) if len(names) >= 2 else []


def bridge_entities(question: str, chunk: Chunk, known: Iterable[str] = (), limit: int = 3) -> list[str]:
    """Names a passage gives for the question's relations ("his mother Ermengarde of Tours"),
    best first; names already known (the question's own entities, earlier hops) are skipped."""
    rels = relations(question)
    known_l = {k.casefold() for k in known} | {chunk.title.casefold()}
    text = chunk.text
    if any(r in _ZH_RELATIONS for r in rels):
        return _zh_bridges(text, rels, known_l, limit)
    if not rels and re.search(r"[\u3400-\u9fff]", question):
        return []
    # generic one-word cues ("by", "and") count half: "written by A ... recorded by B" -> B
    # for a performer; the relation's own word and multi-word phrases count fully. The
    # question's other content words are weak cues too ("worked with the mayor of what city"
    # -> the name next to "mayor" in the passage).
    weight = {c: (0.5 if c in _WEAK_CUES else 1.0)
              for r in rels if r in _EN_RELATIONS for c in _EN_RELATIONS[r]}
    for w in content_words(question, known):
        weight.setdefault(w, 0.4)
    lower = text.lower()
    cue_spans = [(m.start(), m.end(), w) for c, w in weight.items()
                 for m in re.finditer(rf"(?<![a-z]){re.escape(c)}(?![a-z])", lower)]
    if not cue_spans:
        # nothing in the passage echoes the question: its lead sentence's names are the best
        # guess ("The Bubye River is a river in southern Zimbabwe" -> Zimbabwe)
        lead = re.split(r"(?<=[.!?])\s+", text, maxsplit=1)[0]
        names = [n for n in extract_names(lead) if n.casefold() not in known_l
                 and not any(n.casefold() in k or k in n.casefold() for k in known_l if len(k) > 3)]
        return names[:min(limit, 2)]
    scored: dict[str, float] = {}
    for m in _iter_names(text):
        name, start, end = m
        folded = name.casefold()
        if folded in known_l or any(folded in k or k in folded for k in known_l if len(k) > 3):
            continue
        best = 0.0
        for cs, ce, w in cue_spans:
            if start >= ce:  # name after the cue: "directed by NAME", "mother was NAME"
                gap = start - ce
                if gap <= 80:
                    best = max(best, w / (1.0 + gap / 25.0))
            elif end <= cs:  # name before the cue: "NAME, his mother", "NAME's director"
                gap = cs - end
                if gap <= 25:
                    best = max(best, 0.5 * w / (1.0 + gap / 10.0))
        if best > 0:
            # the lead sentences state a subject's defining relations; later ones mention others
            sentence = text.count(". ", 0, start)
            best /= 1.0 + 0.3 * sentence
            scored[name] = max(scored.get(name, 0.0), best)
    return [n for n, _ in sorted(scored.items(), key=lambda kv: -kv[1])][:limit]




def content_words(question: str, known: Iterable[str] = ()) -> list[str]:
    """Lowercase content words of an English question that are not part of a known name."""
    known_l = {k.casefold() for k in known}
    words = []
    for w in re.findall(r"[a-z][a-z\-]{3,}", question.lower()):
        if w in HOP_EN or any(w in k for k in known_l):
            continue
        words.append(w)
    return _unique(words)


def _iter_names(text: str) -> list[tuple[str, int, int]]:
    out = []
    for name in extract_names(text):
        for m in re.finditer(re.escape(name), text):
            out.append((name, m.start(), m.end()))
    return out


def _zh_bridges(text: str, rels: Sequence[str], known_l: set[str], limit: int) -> list[str]:
    found: list[str] = []
    for rel in rels:
        for cue in _ZH_RELATIONS.get(rel, ()):
            for m in re.finditer(re.escape(cue), text):
                nm = _RE_ZH_NAME_AFTER.match(text[m.end():m.end() + 40])
                if nm:
                    name = nm.group(1).strip()
                    if name.casefold() not in known_l and name not in found:
                        found.append(name)
    return found[:limit]


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))
