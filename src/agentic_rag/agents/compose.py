"""Text helpers of the Reasoner: terms, sentences, answer wording, citations, fact-check.

Everything here is deterministic and language-aware (Chinese via jieba's dictionary, which the
ingest step extends with the corpus's own defined terms; English by Snowball stems).

- :func:`content_terms` — what a question is about, without question words and filler.
- :class:`TextCover` — does a piece of evidence mention a term? (substring, sub-words,
  abbreviations such as 医保 for 医疗保险, and the packaged synonym groups)
- :func:`split_sentences` — sentences with their character offsets, so quotes carry spans.
- :data:`TEMPLATES` and :func:`render` — the only words the Reasoner adds of its own; the
  fact-check strips them before checking that everything else is in the cited text.
- :func:`check_sentence` — every number and key term of a sentence must be in what it cites.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from agentic_rag.agents.quantities import extract_quantities, quantity_key
from agentic_rag.agents.vocabulary import packaged_vocabulary
from agentic_rag.numerals import normalize_digits
from agentic_rag.tokenizer import cut, cut_for_search, dictionary_path

__all__ = [
    "Term", "TextCover", "content_terms", "atoms", "segment", "split_sentences", "strip_label",
    "label_length", "unwrap", "is_heading", "render", "TEMPLATES", "check_sentence", "is_cjk", "is_nounish", "stem",
    "synonyms", "TOPIC_WORDS", "is_rule_text",
]

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")
_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+|[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*")
_STEMMER = Stemmer.Stemmer("english")

#: words that carry no subject matter: question words, particles, pronouns, modal verbs
STOP_ZH = frozenset(
    "的 了 是 在 和 与 及 以及 或 或者 等 吗 呢 吧 啊 呀 么 嘛 什么 多少 几 几个 几天 几年 哪些 哪个 哪里 哪 "
    "怎么 怎么样 怎样 如何 为什么 为何 是否 能否 可否 能不能 可不可以 是不是 有没有 能 可以 会 要 想 "
    "需要 需 应 应当 应该 必须 得 有 没有 我 我们 你 你们 他 她 它 他们 咱 自己 本人 这 那 这个 那个 "
    "这些 那些 一个 请问 请 问 一下 告诉 知道 呢 都 也 还 就 才 又 再 最 很 多 少 多长 多久 多大 "
    "多高 多远 谁 啥 咋 嗯 哦 按照 根据 依据 按 对 对于 给 被 把 让 从 到 向 由 为 其 之 所 "
    "里 中 上 下 时 后 前 内 吗？ 呗 哈 啦 百分之几 几成 几个月 几天 多少天 多少年 哪几个 哪几 哪类 哪种 "
    "什么样 多长时间 多少次 多少个 怎么办 还是 这么 那么 一般 算不算 是不是 能不能 会不会 的话 "
    "时候 什么时候 哪儿 哪里 分别 各自 各 以及".split()
)
STOP_EN = frozenset(
    "a an the of to in on at by for from with about as am is are was were be been being do does did "
    "what which who whom whose when where why how much many long often is it its this that these "
    "those i me my we our you your he she they them their can could may might must shall should "
    "will would there here and or not no any some if then than so please tell know get got under "
    "per into out up down over after before within just also really get gets got getting go goes "
    "going went have has had having happen happens happened happening fast quickly soon "
    "able allowed like want wants need needs one ones thing things way ways still yet ever "
    "two three four five six seven eight nine ten once".split()
)
#: generic words of rule texts: they help ranking but a question is not out of scope for lack of them
SOFT_ZH = frozenset(
    "规定 标准 要求 政策 办法 内容 情况 问题 方面 相关 有关 关于 具体 时间 条件 流程 方式 途径 渠道 手续 "
    "步骤 办理 享受 执行 适用 范围 现在 目前 最新 现行 文件 通知 条款 说 讲 写 现行 一般 最高 最低 "
    "期限 时限 比例 金额 额度 费用 多少钱".split()
)
SOFT_EN = frozenset(
    _STEMMER.stemWord(w) for w in
    "rule rules policy policies requirement requirements standard process procedure time "
    "current currently latest say says apply applies eligible need needed required maximum "
    "minimum limit amount rate period".split()
)


def stem(word: str) -> str:
    """The English Snowball stem of a lowercase word ("reimbursed" -> "reimburs")."""
    return _STEMMER.stemWord(word)


def is_cjk(text: str) -> bool:
    return bool(_CJK_RUN.search(text))


@lru_cache(maxsize=65536)
def _norm(text: str) -> str:
    return normalize_digits(text).lower()


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
        if len(w) == 1 and w not in STOP_ZH:
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
def word_tag(word: str) -> str | None:
    """jieba's part-of-speech tag of a dictionary word (``None`` for words it does not list)."""
    data = _jieba_dictionary()
    at = data.find(b"\n" + word.encode("utf-8") + b" ")
    if at < 0:
        return None
    end = data.find(b"\n", at + 1)
    parts = data[at + 1:end].decode("utf-8", "replace").split(" ")
    return parts[2].strip() if len(parts) == 3 else None


def is_nounish(word: str) -> bool:
    """Whether a Chinese word names a thing (公积金, 个人账户, 补贴) rather than an action, a
    manner or a place word (提交, 看病, 外面): what a question is *about* is a thing, and a
    document that lacks the thing cannot answer it, while verbs are often just phrased
    differently (提交 vs 提出). Words outside the dictionary count as things."""
    tag = word_tag(word)
    return tag is None or tag.startswith(_NOUN_TAGS)


_CN_NUMBER_WORD = re.compile(r"第?[零〇一二两三四五六七八九十百千万亿几半]+[个项次名人年月日天周倍条款章节]?")


def content_terms(text: str) -> list[Term]:
    """The subject-matter words of ``text`` in order, without stopwords, numbers, single Chinese
    characters and duplicates."""
    seen: set[str] = set()
    terms: list[Term] = []
    for tok in segment(text):
        low = tok.lower()
        if re.fullmatch(r"[\d.,]+", low):
            continue
        if _CJK_RUN.fullmatch(tok):
            if len(tok) < 2 or tok in STOP_ZH or _CN_NUMBER_WORD.fullmatch(tok):
                continue
            key, soft, cjk = tok, tok in SOFT_ZH, True
        else:
            if low in STOP_EN or len(low) < 2:
                continue
            key, cjk = _STEMMER.stemWord(low), False
            soft = key in SOFT_EN
        if key in seen:
            continue
        seen.add(key)
        terms.append(Term(tok, key, soft, cjk))
    return terms


def synonyms(term: str) -> set[str]:
    """The packaged synonyms of ``term`` (lowercased); a Reasoner given a user vocabulary gives
    each question :class:`Term` its own (:attr:`Term.alts`)."""
    return packaged_vocabulary().synonyms(term)


#: unit words whose first characters are another word (工作日 is a day, not 工作 "work")
_UNIT_WORDS = ("工作日",)


class TextCover:
    """Answers "does this text mention that term?" for one piece of evidence."""

    def __init__(self, text: str) -> None:
        self.text = re.sub(r"\s+", "", _norm(text))
        self.spaced = " " + re.sub(r"\s+", " ", _norm(text)) + " "
        self.stems = set(_STEMMER.stemWords(re.findall(r"[a-z]+(?:'[a-z]+)?", _norm(text))))

    def _text_for(self, word: str) -> str:
        """The text to look ``word`` up in: units that merely begin with it are masked, since
        工作 (work) inside 工作日 (a working day) is not the word."""
        units = [u for u in _UNIT_WORDS if word in u and word != u]
        text = self.text
        for u in units:
            text = text.replace(u, "\u25a1" * len(u))
        return text

    def _has(self, word: str) -> bool:
        w = _norm(word)
        if not w:
            return False
        if is_cjk(w):
            w = re.sub(r"\s+", "", w)
            return w in self.text and w in self._text_for(w)
        parts = w.split()
        if len(parts) > 1:
            return f" {w} " in self.spaced or all(_STEMMER.stemWord(p) in self.stems for p in parts)
        return _STEMMER.stemWord(w) in self.stems or w in self.stems

    def _abbreviation(self, word: str) -> bool:
        # 医保 in 医疗保险, 社保 in 社会保险: the characters in order, a few characters apart
        if not (2 <= len(word) <= 4 and _CJK_RUN.fullmatch(word)):
            return False
        pattern = ".{0,3}".join(re.escape(ch) for ch in word)
        return re.search(pattern, self._text_for(word)) is not None

    def covers(self, term: Term | str) -> bool:
        word = term.text if isinstance(term, Term) else term
        alts = term.alts if isinstance(term, Term) and term.alts else ()
        if isinstance(term, Term) and not term.cjk:
            return term.key in self.stems or self._has(word) or any(self._has(s) for s in alts)
        if self._has(word):
            return True
        if is_cjk(word) and len(word) > 2 and all(self._has(a) for a in atoms(word)) \
                and atoms(word) != (word,):
            return True
        if any(self._has(s) for s in alts or synonyms(word)):
            return True
        return self._abbreviation(word)


# -- sentences ------------------------------------------------------------------------------

_SENT_END = re.compile(r"[。！？!?]+|(?<=[a-z0-9)\]])\.(?=\s+[A-Z(\"“]|\s*$)")
_LABEL = re.compile(
    r"^\s*(?:#+\s*)?(?:第[一二三四五六七八九十百千零〇\d]+[条章节款项](?:之[一二三四五六七八九十]+)?|"
    r"(?:Article|Section|Clause|Art\.|Sec\.)\s*[\dIVXivx.]+[.:]?|\d+(?:\.\d+)+|[一二三四五六七八九十]+、|"
    r"[（(][一二三四五六七八九十\d]+[)）]|\d+[.、)）]|[-*•])\s*"
)
#: a line that starts something new: a list item, a heading, a table row, a clause label
_NEW_LINE = re.compile(
    r"\s*(?:#|\||[-*•]\s|[（(][一二三四五六七八九十\d]+[)）]|[一二三四五六七八九十]+、|\d+[.、)）]\s*\S|"
    r"第[一二三四五六七八九十百千零〇\d]+[条章节]|附件|注[:：\d]|(?:Article|Section|Clause)\s)")
_WRAP_END = "。！？；!?;：:"


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (terminators excluded, blanks trimmed).

    A line break ends a sentence only where the line is complete (ends with a terminator or a
    colon) or the next line starts something new (a list item, heading, table row, clause);
    otherwise it is a soft wrap, as PDF text has inside sentences ("……达到37℃以\n上").
    """
    cuts: list[tuple[int, int]] = [(m.start(), m.end()) for m in _SENT_END.finditer(text)]
    for m in re.finditer(r"\n+", text):
        before = text[:m.start()].rstrip(" \t\u3000")
        line = before[before.rfind("\n") + 1:]
        hard = m.end() - m.start() > 1 or not before or before[-1] in _WRAP_END \
            or _NEW_LINE.match(text, m.end()) is not None or is_heading(line, text[m.end():m.end() + 1])
        if hard:
            cuts.append((m.start(), m.end()))
    cuts.sort()
    out: list[tuple[int, int]] = []
    start = 0
    for cs, ce in cuts + [(len(text), len(text))]:
        if cs < start:
            start = max(start, ce)
            continue
        s, e = start, cs
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e - s >= 2:
            out.extend(_split_long(text, s, e))
        start = ce
    return out


#: a sentence longer than this is split at semicolons as well (a list of cases stays together)
LONG_SENTENCE_CHARS = 120


def _split_long(text: str, s: int, e: int) -> list[tuple[int, int]]:
    # English needs about three times the characters for the same content
    limit = LONG_SENTENCE_CHARS if is_cjk(text[s:e]) else LONG_SENTENCE_CHARS * 2.5
    if e - s <= limit:
        return [(s, e)]
    out: list[tuple[int, int]] = []
    start = s
    for m in re.finditer(r"[；;]", text[s:e]):
        out.append((start, s + m.start()))
        start = s + m.end()
    out.append((start, e))
    return [(a, b) for a, b in out if b - a >= 2]


_HEADING_EN = re.compile(r"(?:\d+(?:\.\d+)*\.?\s+)?[A-Z][\w'’&/\-]*(?:\s+[\w'’&/\-]+){0,7}")


def is_heading(line: str, after: str = "A") -> bool:
    """Whether a line is a heading (context for what follows, not part of its first sentence):
    a markdown heading, or a short line without sentence punctuation followed by a line that
    starts a sentence — "Eligibility" above "Employees who ...", "报销范围" above a rule. A PDF's
    soft wrap breaks full-width lines, so a short line before a new one is not a wrap."""
    line = line.strip()
    if not line:
        return False
    if line.startswith("#"):
        return True
    label = _LABEL.match(line)
    if label and label.end() >= len(line.rstrip()):
        return False  # a clause number alone on its line labels the text after it
    if re.search(r"[，。；：、！？,.;:!?|]", line):
        return False
    if is_cjk(line):
        return len(line) <= 15 and not re.match(r"[，。；、）)]", after)
    return bool(_HEADING_EN.fullmatch(line)) and (after[:1].isupper() or after[:1].isdigit())


def unwrap(text: str) -> str:
    """Join soft-wrapped lines: no space between Chinese characters, one space otherwise."""
    text = re.sub(r"(?<=[\u3400-\u9fff，、（）“”《》])\s*\n\s*(?=[\u3400-\u9fff，、（）“”《》\d])", "", text)
    text = re.sub(r"(?<=[\d])\s*\n\s*(?=[\u3400-\u9fff])", "", text)
    return re.sub(r"\s*\n\s*", " ", text).strip()


def label_length(sentence: str) -> int:
    """Characters of a leading clause label (and the space after it): 7 for "第十二条 统筹……"."""
    m = _LABEL.match(sentence)
    return m.end() if m and m.end() < len(sentence) else 0


def strip_label(sentence: str) -> str:
    """Drop a leading clause label (第七条, Article 7., 3.1, 一、) from a sentence."""
    return _LABEL.sub("", unwrap(sentence), count=1).strip() or unwrap(sentence)


# -- wording --------------------------------------------------------------------------------

#: every phrase the Reasoner writes itself, per language; the fact-check ignores exactly these.
#: They name sources and content, not "rules" (规定, provision), so that they read right for
#: news and reports as for regulations
TEMPLATES: dict[str, dict[str, str]] = {
    "zh": {
        "conflict": "各来源说法不一致：{winner}为{value}（胜出，规则：{rule}）；{losers}。",
        "loser": "{source}为{value}（{state}）",
        "xref": "{text}",
        "abstain": "根据现有资料，{missing}，无法回答。",
        "gap": "未找到关于{missing}的{topic}",
        "partial": "另外，{missing}。",
        "undecided": "各来源说法不一致，无法判定以哪一项为准：{values}。",
        "unsupported": "（需人工审核）",
    },
    "en": {
        "conflict": "Sources differ: {winner} states {value} (wins; rule: {rule}); {losers}.",
        "loser": "{source} states {value} ({state})",
        "xref": "{text}",
        "abstain": "This cannot be answered from the documents: {missing}.",
        "gap": "no {topic} found on {missing}",
        "partial": "Not found: {missing}.",
        "undecided": "Sources differ and no rule decides between them: {values}.",
        "unsupported": " (needs review)",
    },
}

RULE_WORDS: dict[str, dict[str, str]] = {
    "zh": {"pinned": "问题指定{v}年版本", "override": "人工指定：{v}", "superseded": "新版本优先，旧版已失效",
           "newer": "发布时间相差一年以上，新文件优先", "authority": "发文机关权威性×时效加权",
           "tie": "无法判定"},
    "en": {"pinned": "the question asks for the {v} version", "override": "manual override: {v}",
           "superseded": "the newer version supersedes the old one",
           "newer": "published at least a year later, the newer document wins",
           "authority": "issuing authority weighted by recency", "tie": "undecided"},
}
#: what the documents hold, in a gap phrase: rules in rule text, plain information otherwise (news)
TOPIC_WORDS: dict[str, dict[str, str]] = {
    "zh": {"rules": "规定", "other": "信息"},
    "en": {"rules": "provision", "other": "information"},
}
STATE_WORDS: dict[str, dict[str, str]] = {
    "zh": {"repealed": "已废止", "superseded": "已被新版本替代", "active": "未采用"},
    "en": {"repealed": "repealed", "superseded": "superseded", "active": "not applied"},
}


_RULE_TITLE = re.compile(
    r"办法|规定|条例|制度|细则|通知|政策|守则|章程|合同|协议|法$|法（|准则|指引|须知|"
    r"\b(?:policy|policies|regulations?|handbook|rules|agreement|contract|procedures?|guidelines?|code|terms|act)\b",
    re.I)


def is_rule_text(titles: Sequence[str], clauses: Sequence[str | None]) -> bool:
    """Whether documents are rule text (policies, regulations, contracts) rather than news or
    prose: most of them are numbered clauses, or their titles name a kind of rule."""
    if not titles:
        return False
    numbered = sum(1 for c in clauses if c)
    named = sum(1 for t in titles if _RULE_TITLE.search(t or ""))
    return numbered * 2 >= len(clauses) or named * 2 >= len(titles)


def render(lang: str, key: str, **values: str) -> str:
    table = TEMPLATES["zh" if lang == "zh" else "en"]
    return table[key].format(**values)


@lru_cache(maxsize=1)
def _template_literals() -> tuple[str, ...]:
    pieces: set[str] = set()
    for table in (*TEMPLATES.values(), *RULE_WORDS.values(), *STATE_WORDS.values(), *TOPIC_WORDS.values()):
        for fmt in table.values():
            for literal, *_ in string.Formatter().parse(fmt):
                for piece in re.split(r"[，。；：（）(),;:.\s]+", literal or ""):
                    if len(piece) >= 2:
                        pieces.add(piece)
    return tuple(sorted(pieces, key=len, reverse=True))


def strip_templates(sentence: str) -> str:
    """The sentence without the Reasoner's own connective words (what is left must be cited)."""
    out = sentence
    for piece in _template_literals():
        if piece.isascii():
            out = re.sub(rf"(?<![A-Za-z]){re.escape(piece)}(?![A-Za-z])", " ", out)
        else:
            out = out.replace(piece, " ")
    return out


# -- fact-check -----------------------------------------------------------------------------

_MARKERS = re.compile(r"\[\d+\]")


def check_sentence(sentence: str, cited_texts: Sequence[str],
                   cited_meta: Iterable[str] = ()) -> list[str]:
    """What in ``sentence`` its citations do not support: numbers (compared as normalized
    quantities, so 百分之九十 is supported by 90%) and key terms. ``cited_meta`` (titles,
    clause labels, dates) may support document names and years but not the facts themselves.

    Returns the unsupported items; an empty list means the sentence is supported.
    """
    body = strip_templates(_MARKERS.sub("", sentence))
    evidence = "\n".join(cited_texts)
    meta = "\n".join(cited_meta)
    have = {quantity_key(q) for q in extract_quantities(evidence)}
    have_meta = {quantity_key(q) for q in extract_quantities(meta)}
    missing: list[str] = []
    for q in extract_quantities(body):
        key = quantity_key(q)
        if key in have or (q.kind == "date" and key in have_meta):
            continue
        missing.append(q.raw)
    stated = extract_quantities(body)
    taken = "".join(q.raw for q in stated)
    plain = TextCover(evidence + "\n" + meta)
    words = body
    for q in stated:
        words = words.replace(q.raw, " ")
    for num in re.findall(r"\d+(?:\.\d+)?", normalize_digits(body)):
        if num not in normalize_digits(taken) and num not in plain.text:
            missing.append(num)
    for term in content_terms(words):
        if not plain.covers(term):
            missing.append(term.text)
    return missing
