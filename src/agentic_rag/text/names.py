"""Proper names in English text (capitalized runs with connectors such as "of") and quoted
titles: the Router's entity slots and the multi-hop bridge entities.

    >>> extract_names("When did Lothair II's mother die?")
    ['Lothair II']
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from typing import Any

from agentic_rag.text.stopwords import NAME_DROP_EN

__all__ = ["QUOTED", "abbreviates", "document_titles", "extract_names", "fold", "opens_with_chinese_name", "title_matches",
           "title_within"]

# English proper names: capitalized words, joined by a few lowercase connectors ("of", "de", ...)
# a name word: initials ("J. R."), a few abbreviations ("St."), a capitalized word, or a number;
# a sentence-final period never belongs to the name ("... Gurinder Chadha. The film")
_NAME_WORD = (r"(?:[A-Z]\.(?:\s?[A-Z]\.)*|(?:St|Jr|Sr|Dr|Mr|Mrs|Ms|Mt|Ft|Co|Inc)\.|[A-Z][\w'’\-]*"
              r"|\d+(?:st|nd|rd|th)?)")
# "and" is not a connector: "Are A and B both ..." must give two names
_CONNECT = (r"(?:of|the|de|da|del|della|di|du|des|la|le|van|von|der|den|y|&|for|in|on|to|a|mac|ibn|bin|"
            r"bint|al|el|zu|dos|das|do|ter|ten|op|af|av)")
# words join by spaces, connectors, or ": " (subtitles: "Wrong Turn 5: Bloodlines"); a trailing
# parenthesized qualifier stays with the name ("Illusions (1982 Film)", "Come Dance With Me (Song)")
_CAP_WORD = r"(?:[A-Z]\.(?:\s?[A-Z]\.)*|[A-Z][\w'’\-]*)"
# after a connector only a capitalized word may follow ("Nina Berg in 1990" is no name)
_RE_NAME = re.compile(rf"(?<![\w'])(?:{_NAME_WORD})"
                      rf"(?:\s+(?:{_CONNECT}\s+)+{_CAP_WORD}|(?:\s+|:\s+)(?:{_NAME_WORD}))*"
                      r"(?:\s\((?=[^()]*[A-Za-z])(?:[A-Z0-9][^()]{0,38})\))?")
# "Beatrice I, Countess of Burgundy", "Frederick I, Holy Roman Emperor": a title after a comma
_RE_STYLED = re.compile(r",\s(?:[A-Z][\w'’\-]*\s){0,3}(?:of|von|de)\s(?:the\s)?[A-Z][\w'’\-]*(?:\s[A-Z][\w'’\-]*)?")
_RE_REGNAL = re.compile(r",\s[A-Z][\w'’\-]*(?:\s[A-Z][\w'’\-]*){0,2}")
_ALWAYS_DROP = frozenset({"according", "please"})
# "and" does join the words of a document's title, which often names two matters: "Health and
# Safety Policy", "the Travel and Expenses Handbook" name one document (not "Health" and "Safety Policy")
_DOC_NOUN = (r"(?:Polic(?:y|ies)|Procedures?|Handbook|Manual|Guidelines?|Standards?|Code|Act|Regulations?|Rules|"
             r"Agreement|Plan|Notice|Measures|Provisions|Framework|Charter|Programme|Program|Scheme)")
_RE_DOC_TITLE = re.compile(rf"(?<![\w'])(?:{_CAP_WORD}\s+){{0,5}}{_CAP_WORD}\s+(?:and|&)\s+(?:{_CAP_WORD}\s+){{0,4}}"
                           rf"{_DOC_NOUN}\b")

QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]|《([^》]{1,60})》")


def document_titles(text: str) -> list[str]:
    """The titles of documents in ``text`` that join two matters with "and" ("Health and Safety
    Policy"): one name each, though "and" otherwise separates names.

    >>> document_titles("Under the Workplace First Aid and Incident Reporting Policy, who ...")
    ['Workplace First Aid and Incident Reporting Policy']
    """
    return [m.group(0) for m in _RE_DOC_TITLE.finditer(text)]

# the commonest Chinese surnames (the 2020 household-register ranking's first hundred, without
# those that are also everyday function words: 于, 向, 时, 成, 和): a given name is rarely in a
# dictionary, but a surname nearly always leads it (杨冬, 王海鸰)
_SURNAMES = ("王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏魏吕丁任沈"
             "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔汤")
#: what cannot open a given name: particles and conjunctions (张的, 马和)
_NOT_GIVEN = "的了和与及也都在是为将等们被把从向对或"
_COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "尉迟", "公孙", "慕容", "令狐", "司徒", "夏侯",
                      "端木", "宇文", "长孙", "南宫")
_CHINESE_NAME = re.compile(rf"(?:{'|'.join(_COMPOUND_SURNAMES)}|[{_SURNAMES}])(?![{_NOT_GIVEN}])[\u3400-\u9fff]{{1,2}}")


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
#: nationality adjectives are capitalized but name no entity ("an American actress")
_RE_DEMONYM = re.compile(r"(?:[A-Z][a-z]+(?:ian|ese|ish|ean))|American|German|Korean|Mexican|"
                         r"African|Cuban|Roman|Dutch|French|Greek|Thai|Swiss|Welsh|Scots|Czech|Kenyan|"
                         r"Moroccan|Sri Lankan|Puerto Rican|Chilean|Peruvian|Serbian|Slovak|Croat")


def _not_a_name(span: str) -> bool:
    words = span.split()
    if words[0].lower() in _MONTHS and (len(words) == 1 or words[1][:1].isdigit()):
        return True
    return len(words) <= 2 and all(_RE_DEMONYM.fullmatch(w) for w in words)


def extract_names(text: str) -> list[str]:
    """Proper-name spans of English text (capitalized runs with connectors such as "of") and
    quoted titles, longest first, question words stripped: used as entity slots and by multi-hop.

    >>> extract_names("When did Lothair II's mother die?")
    ['Lothair II']
    """
    names: list[str] = []
    for m in QUOTED.finditer(text):
        quoted = (m.group(1) or m.group(2)).strip()
        # a quoted title starts like one; a quoted remark ("the worst mistake ...") does not
        if m.group(2) or quoted[:1].isupper() or quoted[:1].isdigit():
            names.append(quoted)
    consumed = 0  # end of a styled name ("X, Countess of Y") or a document's title already taken whole
    titles = list(_RE_DOC_TITLE.finditer(text))
    for m in _RE_NAME.finditer(text):
        if m.start() < consumed:
            continue
        title = next((t for t in titles if m.start() < t.end() and t.start() < m.end()), None)
        if title is not None:
            m, consumed = title, title.end()
        words = m.group(0).split()
        # drop leading question words / determiners at a sentence start ("Are A and B ...",
        # "The film ..."); mid-sentence they belong to a title ("song When The Stars Go Blue")
        before = text[:m.start()].rstrip()
        at_start = not before or before[-1] in ".!?:;\"“(\n"
        while words and (at_start or words[0].lower() in _ALWAYS_DROP) \
                and (words[0].lower().strip("'’") in NAME_DROP_EN
                     or re.fullmatch(r"[A-Z][a-z]{3,}(?:ed|ing|ly)", words[0])):
            # a sentence opening with a participle or adverb ("Founded in 1930", "Situated in")
            words = words[1:]
        while words and not words[0][:1].isupper():  # a name starts capitalized
            words = words[1:]
        while words and re.fullmatch(_CONNECT, words[-1]):
            words = words[:-1]
        if not words:
            continue
        span = " ".join(words)
        styled = _RE_STYLED.match(text, m.end()) or (
            _RE_REGNAL.match(text, m.end()) if re.fullmatch(r"[IVX]{1,4}", words[-1]) else None)
        if styled and not re.search(r"(?:'s|’s)$", span):
            span += styled.group(0)
            consumed = styled.end()
        span = re.sub(r"(?:'s|’s|'|’)$", "", span).rstrip(".,")
        if len(span) < 2 or not span[0].isupper() or _not_a_name(span):
            continue
        names.append(span)
    return list(dict.fromkeys(n for n in names if n))


def title_matches(entity: str, chunk: Any) -> bool:
    """True when the chunk's document (anything with a ``title``) is *about* the entity: its title is the entity, maybe with
    a parenthesized qualifier ("Lothair II" ~ "Lothair II (King)"); case-insensitive."""
    t, e = fold(chunk.title), fold(entity)
    if not t or not e:
        return False
    return (t == e or t.strip("《》") == e
            or (t.startswith(e) and t[len(e):].lstrip()[:1] in ("(", ",")))


def title_within(entity: str, chunk: Any) -> bool:
    """Looser: the chunk's title (without qualifier) appears as whole words inside the entity
    ("Queensland Senator Barnaby Joyce" ~ "Barnaby Joyce"). Used for bridge names only."""
    t = fold(re.sub(r"\s*\(.*\)$", "", chunk.title))
    e = fold(entity)
    return len(t) >= 5 and re.search(rf"(?<!\w){re.escape(t)}(?!\w)", e) is not None


#: words an acronym of a title skips ("General Data Protection Regulation": GDPR, "Terms of Use": TOU)
_ACRONYM_SKIPS = frozenset("of and the for on in to a an at by with".split())


@lru_cache(maxsize=8192)
def abbreviates(name: str, title: str) -> bool:
    """Whether ``name`` is an acronym of ``title``: three to six capitals that are the initials of
    the title's words, from its first word or up to its last ("GDPR" for "General Data Protection
    Regulation", "LGPL" for "GNU Lesser General Public License", "PTO" for "Paid Time Off Policy").
    A document seldom spells out the acronym it is known by. (Two letters, "HR", "IT", "EU", are
    words of their own more often than a title's initials.)"""
    if not re.fullmatch(r"[A-Z]{3,6}", name):
        return False
    initials = "".join(w[0].upper() for w in re.findall(r"[A-Za-z][\w'’-]*", title) if w.lower() not in _ACRONYM_SKIPS)
    return len(initials) >= len(name) and (initials.startswith(name) or initials.endswith(name))


@lru_cache(maxsize=8192)
def fold(s: str) -> str:
    """Case, apostrophe and accent folding: "Aschenbrödel" ~ "Aschenbrodel" (questions are
    often typed without diacritics)."""
    s = unicodedata.normalize("NFKD", s.casefold().replace("’", "'"))
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    return re.sub(r"\s+", " ", s).strip()


def opens_with_chinese_name(text: str) -> bool:
    """Whether ``text`` begins with a Chinese personal name: a surname, then one or two
    characters. A given name is rarely in jieba's dictionary, so the segmenter either leaves the
    name as one unknown word (王海鸰) or splits it into single characters (杨 冬 近日); a
    dictionary word that starts with a surname character (周末, 高速公路, 王府井) is no name.

        >>> opens_with_chinese_name("杨冬近日接受采访"), opens_with_chinese_name("周末照常开放")
        (True, False)
    """
    from agentic_rag.text.terms import segment, word_tag

    if _CHINESE_NAME.match(text) is None:
        return False
    tokens = segment(text[:8])
    if len(tokens[0]) >= 2:
        tag = word_tag(tokens[0])
        return tag is None or tag.startswith("nr")
    return len(tokens) >= 2 and len(tokens[1]) == 1 and bool(_CHINESE_NAME.match(tokens[0] + tokens[1]))
