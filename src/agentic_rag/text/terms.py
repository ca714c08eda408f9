"""Terms: what a text is about, word by word, in Chinese (jieba's dictionary, which the ingest
step extends with the corpus's own defined terms) and English (Snowball stems).

- :func:`content_terms` — the subject-matter words of a question, without question words and filler
- :func:`segment`, :func:`atoms` — ordered tokens; the smallest dictionary words inside a word
- :func:`word_tag`, :func:`is_nounish` — jieba's part of speech: things vs actions
- :func:`is_everyday` — jieba's word counts: everyday words (房子) vs the terms of a field (公积金)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from agentic_rag.text.numerals import normalize_digits
from agentic_rag.text.stopwords import (
    GENERIC_EN,
    GENERIC_ZH,
    QUESTION_EN,
    QUESTION_ZH,
    SOFT_EN,
    SOFT_ZH,
)
from agentic_rag.text.tokenize import cut, cut_for_search, dictionary_generation, dictionary_path, unaccent

__all__ = ["A_NOT_A", "Term", "answer_classes", "asked_noun", "atoms", "content_terms", "english_verbs",
           "irregular_form", "is_everyday", "is_nounish", "norm", "segment", "stem", "stems", "word_tag", "words"]

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+|[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*")
_STEMMER = Stemmer.Stemmer("english")


#: English word forms the Snowball stemmer does not bring to their base: irregular past tenses
#: and participles ("paid" -> pay; forms that are also common nouns or adjectives, such as left,
#: found, felt, ground, are left alone), and British spellings (behaviour -> behavior)
_IRREGULAR = {form: base for base, forms in (
        ("pay", "paid"), ("spend", "spent"), ("buy", "bought"), ("bring", "brought"), ("catch", "caught"),
        ("teach", "taught"), ("sell", "sold"), ("tell", "told"), ("hold", "held"), ("keep", "kept"),
        ("sleep", "slept"), ("meet", "met"), ("mean", "meant"), ("build", "built"), ("send", "sent"),
        ("lose", "lost"), ("win", "won"), ("go", "went gone"), ("give", "gave given"), ("take", "took taken"),
        ("make", "made"), ("get", "got gotten"), ("come", "came"), ("become", "became"),
        ("begin", "began begun"), ("write", "wrote written"), ("choose", "chose chosen"),
        ("drive", "drove driven"), ("eat", "ate eaten"), ("fly", "flew flown"), ("know", "knew known"),
        ("grow", "grew grown"), ("draw", "drew drawn"), ("throw", "threw thrown"), ("break", "broke broken"),
        ("forget", "forgot forgotten"), ("hide", "hid hidden"), ("run", "ran"), ("sit", "sat"),
        ("stand", "stood"), ("understand", "understood"), ("withdraw", "withdrew withdrawn"),
        ("undertake", "undertook undertaken"), ("say", "said"), ("hear", "heard"), ("seek", "sought"),
        ("fight", "fought"), ("deal", "dealt"), ("feed", "fed"), ("flee", "fled"), ("lend", "lent"),
        ("speak", "spoke spoken"), ("steal", "stole stolen"), ("forbid", "forbade forbidden"),
        ("forgive", "forgave forgiven"), ("arise", "arose arisen"), ("bear", "borne"), ("swear", "swore sworn"),
        ("tear", "tore torn"), ("wear", "wore worn"), ("freeze", "froze frozen"), ("shake", "shook shaken"),
        ("ride", "rode ridden"), ("rise", "risen"), ("sing", "sang sung"), ("drink", "drank drunk"),
        ("swim", "swam swum"), ("ring", "rang rung"), ("sink", "sank sunk"), ("overtake", "overtook overtaken"),
    ) for form in forms.split()}
_BRITISH = {form: base for base, forms in (
        ("behavior", "behaviour behaviours"), ("labor", "labour labours"), ("color", "colour colours"),
        ("favor", "favour favours"), ("honor", "honour honours"), ("neighbor", "neighbour neighbours"),
        ("harbor", "harbour"), ("humor", "humour"), ("rumor", "rumour rumours"), ("endeavor", "endeavour"),
        ("license", "licence licences"), ("defense", "defence"), ("offense", "offence offences"),
        ("practice", "practise"), ("center", "centre centres"), ("meter", "metre metres"),
        ("liter", "litre litres"), ("theater", "theatre"), ("program", "programme programmes"),
        ("check", "cheque cheques"), ("catalog", "catalogue"), ("analyze", "analyse"),
        ("organize", "organise"), ("organization", "organisation organisations"),
        ("recognize", "recognise"), ("realize", "realise"), ("authorize", "authorise"),
        ("authorization", "authorisation"), ("prioritize", "prioritise"), ("minimize", "minimise"),
        ("maximize", "maximise"), ("summarize", "summarise"), ("utilize", "utilise"),
        ("categorize", "categorise"), ("finalize", "finalise"), ("apologize", "apologise"),
        ("emphasize", "emphasise"), ("criticize", "criticise"), ("specialize", "specialise"),
        ("standardize", "standardise"),
        ("traveled", "travelled"), ("traveling", "travelling"), ("traveler", "traveller travellers"),
        ("canceled", "cancelled"), ("canceling", "cancelling"), ("labeled", "labelled"),
        ("fulfill", "fulfil"), ("enroll", "enrol"), ("enrollment", "enrolment"),
        ("installment", "instalment instalments"), ("judgment", "judgement"), ("aging", "ageing"),
        ("gray", "grey"), ("tire", "tyre tyres"), ("pediatric", "paediatric"), ("skeptical", "sceptical"),
        ("maneuver", "manoeuvre"), ("mold", "mould"), ("plow", "plough"), ("cozy", "cosy"),
    ) for form in forms.split()}
_BASE_FORMS = {**_IRREGULAR, **_BRITISH}


def stem(word: str) -> str:
    """The English Snowball stem of a lowercase word ("reimbursed" -> "reimburs"), after
    bringing an irregular or British form to its base ("paid" -> "pay", "behaviour" -> "behavior")."""
    return _STEMMER.stemWord(_BASE_FORMS.get(word, word))


def stems(words: list[str]) -> list[str]:
    """:func:`stem` of each lowercase word."""
    return _STEMMER.stemWords([_BASE_FORMS.get(w, w) for w in words])


#: the word after a modal or auxiliary, with its pronoun subject ("can't I bring", "do I have
#: to claim", "may we take"), or after "have to" / "need to" ...: a verb
_MODAL = r"(?:can|cannot|could|may|might|must|shall|should|will|would|do|does|did|ca|wo|sha)(?:n't|not)?"
_PRONOUN = r"(?:i|we|you|they|he|she|it|one)"
_VERB_AFTER = re.compile(
    rf"\b{_MODAL}\s+{_PRONOUN}\s+(?:not\s+)?(?:(?:have|need|want|ought|got|going|able|allowed)\s+to\s+)?(?P<verb>[a-z]+)\b|"
    rf"\b{_PRONOUN}\s+{_MODAL}\s+(?:not\s+)?(?P<said>[a-z]+)\b|"
    r"\b(?:have|has|had|need|needs|want|wants|ought|going|able|allowed|how)\s+to\s+(?P<inf>[a-z]+)\b|"
    # a word after a subject pronoun ("if I resign") or before an object pronoun ("my manager
    # calls me back"), unless it is an adverb or a preposition
    r"\b(?:i|we|you|they|he|she)\s+(?!(?:also|just|still|only|never|already|really|always|often|usually|"
    r"then|now|first|currently|ever|even|both|all)\b)(?P<subj>[a-z]+)\b|"
    r"\b(?!(?:to|for|with|from|about|by|of|on|at|in|into|onto|against|after|before|between|behind|without|"
    r"toward|towards|like|than|over|under|upon|via|per|and|or|but|if|when|let)\b)(?P<obj>[a-z]+)\s+(?:me|us|him|them)\b",
    re.I)


def english_verbs(text: str) -> frozenset[str]:
    """Lowercase words that ``text`` uses as verbs, read off the words around them: after a
    modal or auxiliary ("can't I bring" -> bring), "have to" / "need to" ("how long do I have
    to claim" -> claim), a subject pronoun ("if I resign") or before an object pronoun ("my
    manager calls me back"). An action is worded many ways; a question is not out of scope for
    lacking its exact verb.

    >>> sorted(english_verbs("Which countries can't I bring my laptop to? Do I have to claim it back?"))
    ['bring', 'claim']
    >>> sorted(english_verbs("If we relocate, who reimburses us?"))
    ['relocate', 'reimburses']
    """
    out = set()
    for m in _VERB_AFTER.finditer(text):
        word = next(g for g in m.group("verb", "said", "inf", "subj", "obj") if g).lower()
        if word not in ("i", "we", "you", "they", "he", "she", "it", "the", "a", "an", "my", "your", "not", "to"):
            out.add(word)
    return frozenset(out)


def irregular_form(word: str) -> bool:
    """Whether a lowercase English word is an irregular past tense or participle ("paid", "sent"):
    an action, whatever its ending."""
    return word in _IRREGULAR


@lru_cache(maxsize=65536)
def norm(text: str) -> str:
    return unaccent(normalize_digits(text)).lower()


@dataclass(frozen=True)
class Term:
    """A content word of a question: ``text`` as written, ``key`` used for matching (a stem for
    English), ``soft`` for generic rule words that rank but do not decide coverage, ``alts`` the
    words the vocabulary says mean the same (empty: the packaged synonyms)."""

    text: str
    key: str
    soft: bool = False
    cjk: bool = True
    alts: tuple[str, ...] = ()


def _merge_unknown(words: list[str]) -> list[str]:
    """Three or more single characters in a row are an unknown name (他克莫司 -> 他/克/莫/司
    without HMM): keep them as one word. Two are usually colloquial fragments (先办, 能领)."""
    out: list[str] = []
    run: list[str] = []
    for w in words + [""]:
        if len(w) == 1 and w not in QUESTION_ZH:
            run.append(w)
            continue
        if len(run) >= 3:
            out.append("".join(run))
        else:
            out.extend(run)
        run = []
        if w:
            out.append(w)
    return out


def segment(text: str) -> list[str]:
    """Ordered tokens: jieba's precise mode for Chinese runs, words and numbers otherwise."""
    return list(_segment(text))


@lru_cache(maxsize=8192)
def _segment(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for m in _TOKEN.finditer(normalize_digits(text)):
        tok = m.group(0)
        if _CJK_RUN.fullmatch(tok):
            # no HMM: an unknown colloquial run (先办, 能领) falls apart into single characters,
            # which are not terms, instead of becoming a made-up word nobody's text contains
            out.extend(_merge_unknown(cut(tok)))
        else:
            out.append(tok)
    return tuple(out)


@lru_cache(maxsize=4096)
def atoms(word: str) -> tuple[str, ...]:
    """The smallest dictionary words (2+ characters) inside a Chinese word: 住院费用 -> 住院, 费用.

    Two sources that segment the same phrase differently still share atoms."""
    if not _CJK_RUN.fullmatch(word) or len(word) <= 2:
        return (word,)
    parts = [p for p in cut_for_search(word) if len(p) >= 2 and p != word]
    smallest = [p for p in parts if not any(q != p and q in p for q in parts)]
    if not smallest:
        return (word,)
    # keep the characters the sub-words do not cover (住院 + 费 would lose 费 otherwise)
    covered = "".join(smallest)
    if len(set(word) - set(covered)) > 0:
        return (word,)
    return tuple(dict.fromkeys(smallest))


_NOUN_TAGS = ("n", "vn", "j", "l", "i", "eng", "nz", "s")


@lru_cache(maxsize=1)
def _jieba_dictionary() -> bytes:
    """jieba's dictionary file as bytes (read once; searched, never parsed whole — parsing its
    350,000 lines would cost more than the answers it helps)."""
    try:
        return b"\n" + dictionary_path().read_bytes()
    except (OSError, ModuleNotFoundError):
        return b""


@lru_cache(maxsize=8192)
def _entry(word: str) -> tuple[int, str | None] | None:
    """(frequency, part-of-speech tag) of a word in jieba's dictionary; ``None`` if it is not listed."""
    data = _jieba_dictionary()
    at = data.find(b"\n" + word.encode("utf-8") + b" ")
    if at < 0:
        return None
    end = data.find(b"\n", at + 1)
    parts = data[at + 1:end].decode("utf-8", "replace").split(" ")
    freq = int(parts[1]) if len(parts) >= 2 and parts[1].isdigit() else 0
    return freq, (parts[2].strip() if len(parts) == 3 else None)


def word_tag(word: str) -> str | None:
    """jieba's part-of-speech tag of a dictionary word (``None`` for words it does not list)."""
    entry = _entry(word)
    return entry[1] if entry else None


#: a word at least this frequent in the general-language counts of jieba's dictionary is
#: everyday vocabulary: 医院 (7376), 房子 (3194), 孩子, 东西, 合法; the terms of a field are
#: rarer: 公积金 (556), 罚款 (689), 工伤 (63), 产假 (21)
EVERYDAY_FREQ = 1000


def is_everyday(word: str) -> bool:
    """Whether a Chinese word is everyday vocabulary rather than the term of a field: how people
    name things (医院, 房子, 孩子) where rule text has its own terms (医疗机构, 房屋, 未成年人)."""
    entry = _entry(word)
    return entry is not None and entry[0] >= EVERYDAY_FREQ


def is_nounish(word: str) -> bool:
    """Whether a Chinese word names a thing (公积金, 个人账户, 补贴) rather than an action, a
    manner or a place word (提交, 看病, 外面): what a question is *about* is a thing, and a
    document that lacks the thing cannot answer it, while verbs are often just phrased
    differently (提交 vs 提出). Words outside the dictionary count as things."""
    tag = word_tag(word)
    return tag is None or tag.startswith(_NOUN_TAGS)


#: measure words that count things (一棵树, 两辆车, 几张卡)
_MEASURE_ZH = "个只头匹棵株辆台张件套间栋座家所户支把本部份块条"
_CN_NUMBER_WORD = re.compile(rf"第?[零〇一二两三四五六七八九十百千万亿几半]+[{_MEASURE_ZH}项次名人年月日天周倍款章节]?")
#: a count and its measure word before a noun, which the segmenter may keep as one word
#: (一棵树, 一辆车): the count is no part of the thing
_COUNTED = re.compile(rf"^[零〇一二两三四五六七八九十百千万几半]+[{_MEASURE_ZH}]")


_ORDINAL = re.compile(r"第[零〇一二两三四五六七八九十百千\d]+")


def _with_separable(tokens: list[str]) -> list[str]:
    """A verb split by an aspect particle as the word it is (报了名 -> 报名, 请 + 了 + 假 -> 请假,
    加过班 -> 加班): Chinese separable verbs take 了 / 过 inside, while documents write them whole."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if len(tok) == 3 and tok[1] in _ASPECT and _CJK_RUN.fullmatch(tok) and word_tag(tok[0] + tok[2]):
            out.append(tok[0] + tok[2])
        elif i + 2 < len(tokens) and tokens[i + 1] in _ASPECT and len(tok) == len(tokens[i + 2]) == 1 \
                and _CJK_RUN.fullmatch(tok + tokens[i + 2]) and word_tag(tok + tokens[i + 2]):
            out.append(tok + tokens[i + 2])
            i += 2
        else:
            out.append(tok)
        i += 1
    return out


#: the aspect particles a separable verb takes inside
_ASPECT = frozenset("了过")


def _with_suffixes(tokens: list[str]) -> list[str]:
    """A word and the money suffix the segmenter left alone after it as one word (垃圾处理 + 费
    -> 垃圾处理费, 房产 + 税 -> 房产税): the fee is what is asked, not the service it pays for."""
    out: list[str] = []
    for tok in tokens:
        if tok in _MONEY_SUFFIX and out and len(out[-1]) >= 2 and _CJK_RUN.fullmatch(out[-1]) \
                and out[-1] not in QUESTION_ZH and out[-1] not in SOFT_ZH:
            out[-1] += tok
        else:
            out.append(tok)
    return out


#: one-character suffixes that make a word the money paid for it
_MONEY_SUFFIX = frozenset("费税")


def _with_ordinals(tokens: list[str]) -> list[str]:
    """An ordinal and the measure word after it as one word (第一 + 棒 -> 第一棒, "the first
    torchbearer"): which one is asked for is part of what the question is about."""
    out: list[str] = []
    for tok in tokens:
        if out and len(tok) == 1 and _CJK_RUN.fullmatch(tok) and _ORDINAL.fullmatch(out[-1]):
            out[-1] += tok
        else:
            out.append(tok)
    return out


#: question words that open a noun phrase ("哪些地方", "什么材料")
_ASKING_ZH = ("哪些", "哪个", "哪种", "哪类", "哪家", "哪几个", "哪几", "什么", "多少")


def asked_noun(word: str) -> str | None:
    """The noun of a question word the dictionary joined to it ("哪些地方" -> 地方), else None."""
    return next((word[len(q):] for q in _ASKING_ZH if word.startswith(q) and len(word) - len(q) >= 2), None)


def words(text: str) -> list[str]:
    """The words of ``text`` as a question means them: the segmenter's tokens with a separable
    verb made whole (报了名 -> 报名), a verb asked as "X不X" whole (能 + 不能 -> 能不能), an
    ordinal and its measure word joined (第一 + 棒) and a fee kept with its word (垃圾处理 + 费)."""
    return _with_suffixes(_with_ordinals(_with_separable(_with_a_not_a(segment(text)))))


def _with_a_not_a(tokens: list[str]) -> list[str]:
    """A verb asked as "X不X" / "X没X" as one word (能 + 不能 -> 能不能, 给 + 不 + 给 -> 给不给):
    the form asks whether, it says "not" of nothing."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if len(tok) <= 2 and _CJK_RUN.fullmatch(tok):
            if i + 1 < len(tokens) and tokens[i + 1] in ("不" + tok, "没" + tok):
                out.append(tok + tokens[i + 1])
                i += 2
                continue
            if i + 2 < len(tokens) and tokens[i + 1] in ("不", "没") and tokens[i + 2] == tok:
                out.append(tok + tokens[i + 1] + tok)
                i += 3
                continue
        out.append(tok)
        i += 1
    return out


#: a verb asked as "X不X" / "X没X" (要不要, 需不需要, 有没有)
A_NOT_A = re.compile(r"([\u4e00-\u9fff]{1,2})[不没]\1")


#: words that point or ask rather than name: the segmenter's 由谁来, 找谁, 干啥, 这件 (of 这件事)
_FUNCTION_ZH = re.compile(r"[谁啥咋]|^[这那每各某][个件条只位种项次本份些]$")


def content_terms(text: str) -> list[Term]:
    """The subject-matter words of ``text`` in order, without stopwords, numbers, single Chinese
    characters and duplicates."""
    # kept per text and dictionary: the Reasoner asks for the words of the same question and
    # sentences at several steps, and question after question
    return list(_content_terms(text, dictionary_generation()))


_ORDINALS_EN = frozenset("first second third fourth fifth".split())
#: words after an ordinal that are no noun it qualifies ("the first to ...", "first of all")
_NOT_NOUN_EN = "of|to|in|on|at|by|for|and|or|than|with|from|is|was|are|were|be|been"


@lru_cache(maxsize=8192)
def _content_terms(text: str, generation: int) -> tuple[Term, ...]:
    seen: set[str] = set()
    terms: list[Term] = []
    for tok in words(unaccent(text)):
        low = tok.lower()
        if re.fullmatch(r"[\d.,]+", low):
            continue
        if _CJK_RUN.fullmatch(tok):
            tok = asked_noun(tok) or tok  # 哪些地方: the noun
            if (counted := _COUNTED.match(tok)) and len(tok) > counted.end():
                tok = tok[counted.end():]  # 一棵树: 树
            if len(tok) < 2 or tok in QUESTION_ZH or _CN_NUMBER_WORD.fullmatch(tok) or _FUNCTION_ZH.search(tok) \
                    or A_NOT_A.search(tok):
                continue
            key, soft, cjk = tok, tok in SOFT_ZH or tok in GENERIC_ZH, True
        else:
            if low in QUESTION_EN or len(low) < 2:
                continue
            key, cjk = stem(low), False
            # an ordinal before its noun picks one of several ("the first time", "a second
            # offence"); alone it compares ("which came first?")
            soft = (key in SOFT_EN or low in GENERIC_EN) and not (
                low in _ORDINALS_EN and re.search(rf"\b{low}\s+(?!(?:{_NOT_NOUN_EN})\b)[a-z]", text, re.I))
        if key in seen:
            continue
        seen.add(key)
        terms.append(Term(tok, key, soft, cjk))
    return tuple(terms)


_CLASS_ZH = re.compile(r"(?:什么|哪个|哪些|哪种|哪类|哪家|哪位|哪一个|哪一种|哪几个|哪几种|哪几|何种|何)(?:样的|的)?"
                       r"(?P<noun>[\u4e00-\u9fff]{2,4})")
_CLASS_EN = re.compile(r"\b(?:which|what|whose|how many)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?P<noun>[a-z][a-z'\-]+)", re.I)
#: "who is the [...] winner / director / founder": the role the person asked for holds, which a
#: document may state otherwise ("directed by", "wins the award")
_ROLE_EN = re.compile(r"^\s*who\s+(?:is|was|are|were)\s+the\s+(?:[\w'\-]+\s+){0,4}?"
                      r"(?P<noun>[a-z]+(?:er|or|ist|ent|ant))\b(?=\s*(?:[?？]|$|(?:in|of|for|at|on)\b))", re.I)


def answer_classes(question: str) -> set[str]:
    """The nouns right after a question word ("什么地方", "哪个部门", "which jobs", "what
    percentage", "how many days"): the kind of thing the answer is, not what it is about."""
    out: set[str] = set()
    for m in _CLASS_ZH.finditer(question):
        noun = m.group("noun")
        words = segment(noun)
        if words:
            out.add(words[0])
    for m in (*_CLASS_EN.finditer(question), *_ROLE_EN.finditer(question)):
        out.add(m.group("noun").lower())
    return out
