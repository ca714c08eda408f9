"""The Reasoner's own wording: :data:`TEMPLATES` and :func:`render` are the only words it adds;
the fact-check (:mod:`~agentic_rag.agents.reasoner.factcheck`) strips exactly these
(:func:`strip_templates`) before checking that everything else is in the cited text.
:func:`is_rule_text` tells rule text from news, so messages fit the corpus."""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["RULE_WORDS", "STATE_WORDS", "TEMPLATES", "TOPIC_WORDS", "is_rule_text", "render", "strip_templates"]

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
        "compare": "{winner}：{value}；{other}为{other_value}",
        "which": "{winner}",
        "yes": "是",
        "no": "否",
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
        "compare": "{winner}: {value}, against {other_value} for {other}",
        "which": "{winner}",
        "yes": "Yes",
        "no": "No",
    },
}

RULE_WORDS: dict[str, dict[str, str]] = {
    "zh": {"pinned": "问题指定{v}年版本", "former": "问题询问修改前的规定", "override": "人工指定：{v}",
           "superseded": "新版本优先，旧版已失效",
           "newer": "发布时间相差一年以上，新文件优先", "authority": "发文机关权威性×时效加权",
           "tie": "无法判定"},
    "en": {"pinned": "the question asks for the {v} version", "former": "the question asks for the value before the change",
           "override": "manual override: {v}",
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


@lru_cache(maxsize=1)
def _template_patterns() -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """Each literal with the pattern an English one is removed by (compiled once)."""
    return tuple((piece, re.compile(rf"(?<![A-Za-z]){re.escape(piece)}(?![A-Za-z])") if piece.isascii() else None)
                 for piece in _template_literals())


def strip_templates(sentence: str) -> str:
    """The sentence without the Reasoner's own connective words (what is left must be cited)."""
    out = sentence
    for piece, pattern in _template_patterns():
        if piece not in out:
            continue  # most literals are not in a given sentence
        out = pattern.sub(" ", out) if pattern is not None else out.replace(piece, " ")
    return out
