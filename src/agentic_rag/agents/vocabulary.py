"""The vocabulary the three agents share: synonym groups and colloquial -> formal phrasings.

One :class:`Vocabulary` is built from the packaged tables (``data/synonyms.json``,
``data/colloquial.json``) and the user's own (``retrieval.synonyms`` extends the packaged synonym
groups; ``router.colloquial_rules`` replaces the packaged rules), and the same object is handed to
the Router (it rewrites colloquial phrasings), the Retriever (it expands queries with synonyms) and
the Reasoner (a question word is covered by a sentence that says one of its synonyms), so a term a
user declares equivalent counts the same at every step.

    >>> v = Vocabulary.load()
    >>> sorted(v.synonyms("公积金"))
    ['住房公积金']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any


from agentic_rag.errors import ConfigError
from agentic_rag.text.language import is_cjk
from agentic_rag.text.terms import Term, atoms, norm, stem, stems

__all__ = ["TextCover", "Vocabulary", "load_synonyms", "load_colloquial", "packaged_vocabulary",
           "read_table", "synonyms"]

_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]+")


def read_table(path: str | Path | None, packaged: str) -> tuple[str, str]:
    """(where, text) of a data table: the user's file, or the packaged ``data/<packaged>``."""
    if path is None:
        res = resources.files("agentic_rag") / "data" / packaged
        return f"<packaged {packaged}>", res.read_text(encoding="utf-8")
    p = Path(path)
    try:
        return str(p), p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"{p}: file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read: {exc}") from exc


def _json(where: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: invalid JSON: {exc}") from exc


def load_synonyms(path: str | Path | None = None) -> list[list[str]]:
    """Synonym groups from a JSON file ``{"groups": [[term, ...], ...]}``; None -> packaged."""
    where, text = read_table(path, "synonyms.json")
    raw = _json(where, text)
    groups = raw.get("groups") if isinstance(raw, dict) else raw
    if not isinstance(groups, list) or not all(
            isinstance(g, list) and len(g) >= 2 and all(isinstance(t, str) and t for t in g) for g in groups):
        raise ConfigError(f"{where}: synonyms must be {{\"groups\": [[term, term, ...], ...]}}")
    return groups


def load_colloquial(path: str | Path | None = None) -> dict[str, str]:
    """Colloquial -> formal rules from ``{"rules": {phrase: formal terms}}``; None -> packaged.
    Phrases are lowercased (English rules match case-insensitively)."""
    where, text = read_table(path, "colloquial.json")
    raw = _json(where, text)
    rules = raw.get("rules", raw) if isinstance(raw, Mapping) else None
    if not isinstance(rules, Mapping) or not all(
            isinstance(k, str) and k and isinstance(v, str) for k, v in rules.items()):
        raise ConfigError(f"{where}: colloquial rules must map phrases to strings")
    return {k.lower(): v for k, v in rules.items() if k != "description"}


@dataclass(frozen=True)
class Vocabulary:
    """Synonym groups (each a list of terms that mean the same) and colloquial rules."""

    synonym_groups: tuple[tuple[str, ...], ...] = ()
    colloquial: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, synonyms: str | Path | None = None, colloquial: str | Path | None = None) -> Vocabulary:
        """The packaged synonym groups plus the user's (``synonyms``), and the colloquial rules
        of ``colloquial`` (the packaged ones when None). Bad files raise :class:`ConfigError`."""
        groups = load_synonyms(None) + (load_synonyms(synonyms) if synonyms is not None else [])
        return cls(tuple(tuple(g) for g in groups), load_colloquial(colloquial))

    @classmethod
    def from_settings(cls, settings: Any) -> Vocabulary:
        """The vocabulary an :class:`~agentic_rag.config.Settings` names."""
        return cls.load(settings.retrieval.synonyms, settings.router.colloquial_rules)

    def synonyms(self, term: str) -> set[str]:
        """The other terms of every group ``term`` belongs to (lowercased, case-insensitive)."""
        return set(self._synonym_index.get(term.lower(), frozenset()))

    def phrases_in(self, text: str) -> dict[str, set[str]]:
        """The English multi-word terms of the groups that ``text`` contains ("commuter pass"),
        each with its synonyms: a question's words are single, its synonyms may be phrases."""
        low = " " + re.sub(r"[^a-z0-9'\-]+", " ", text.lower()) + " "
        return {t: set(others) for t, others in self._synonym_index.items()
                if " " in t and t.isascii() and f" {t} " in low}

    @cached_property
    def _synonym_index(self) -> dict[str, frozenset[str]]:
        """term -> its synonyms, built once per vocabulary (the groups never change)."""
        index: dict[str, set[str]] = {}
        for group in self.synonym_groups:
            low = {t.lower() for t in group}
            for t in low:
                index.setdefault(t, set()).update(low - {t})
        return {t: frozenset(s) for t, s in index.items()}


@lru_cache(maxsize=1)
def packaged_vocabulary() -> Vocabulary:
    """The packaged tables alone (what an agent built without a vocabulary uses)."""
    return Vocabulary.load()


# -- does a text mention a term? ----------------------------------------------------------

def synonyms(term: str) -> set[str]:
    """The packaged synonyms of ``term`` (lowercased); a Reasoner given a user vocabulary gives
    each question :class:`Term` its own (:attr:`Term.alts`)."""
    return packaged_vocabulary().synonyms(term)


#: unit words whose first characters are another word (工作日 is a day, not 工作 "work")
_UNIT_WORDS = ("工作日",)


#: words of a character and 子 in which 子 is no noun suffix: a particle, a person, a kind of
#: thing (电子 is not 电, 女子 not 女); in 房子, 绳子, 箱子 it is, and the written word drops it
#: or replaces it (房屋, 牵引绳, 箱包)
_NOT_SUFFIXED = frozenset("电子 分子 原子 质子 中子 粒子 因子 种子 男子 女子 孩子 儿子 妻子 弟子 君子 公子 王子 "
                          "太子 天子 才子 学子 游子 赤子 样子 日子 例子 点子 法子 面子 份子 老子 影子".split())


def _suffix_stem(word: str) -> str:
    """The noun a colloquial "X子" word names with the suffix dropped (房子 -> 房), else ""."""
    return word[0] if len(word) == 2 and word[1] == "子" and is_cjk(word) and word not in _NOT_SUFFIXED else ""


#: the shortest stem a derived word is matched by (shorter ones are too often unrelated)
_DERIVED_MIN = 6


@lru_cache(maxsize=4096)
def _spread(word: str) -> re.Pattern[str]:
    """``word``'s characters in order, at most three characters apart."""
    return re.compile(".{0,3}".join(re.escape(ch) for ch in word))


_SPACES = re.compile(r"\s+")
_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")
_HYPHENATED = re.compile(r"\b[a-z]+(?:-[a-z]+)+\b")


#: answers of :meth:`TextCover.covers` kept, all covers together (past it they are forgotten
#: and asked again): a bound on the memory however many covers the caches hold
_COVERED_MAX = 32768
_COVERED: dict[tuple[TextCover, tuple[str, str, bool, tuple[str, ...]] | str], bool] = {}


class TextCover:
    """Answers "does this text mention that term?" for one piece of evidence."""

    def __init__(self, text: str) -> None:
        normed = norm(text)
        self.text = _SPACES.sub("", normed)
        self.spaced = " " + _SPACES.sub(" ", normed) + " "
        # a hyphenated word also counts in its closed spelling ("anti-virus": antivirus)
        self.stems = set(stems(_WORDS.findall(normed) + [w.replace("-", "") for w in _HYPHENATED.findall(normed)]))
        self._related: dict[str, bool] = {}

    def _text_for(self, word: str) -> str:
        """The text to look ``word`` up in: units that merely begin with it are masked, since
        工作 (work) inside 工作日 (a working day) is not the word."""
        units = [u for u in _UNIT_WORDS if word in u and word != u]
        text = self.text
        for u in units:
            text = text.replace(u, "\u25a1" * len(u))
        return text

    def _has(self, word: str) -> bool:
        w = norm(word)
        if not w:
            return False
        if is_cjk(w):
            w = _SPACES.sub("", w)
            return w in self.text and w in self._text_for(w)
        parts = w.split()
        if len(parts) > 1:
            return f" {w} " in self.spaced or all(stem(p) in self.stems for p in parts)
        return stem(w) in self.stems or w in self.stems

    def _abbreviation(self, word: str) -> bool:
        # 医保 in 医疗保险, 社保 in 社会保险: the characters in order, a few characters apart
        if not (2 <= len(word) <= 4 and _CJK_RUN.fullmatch(word)) or any(ch not in self.text for ch in word):
            return False
        return _spread(word).search(self._text_for(word)) is not None

    def _derived(self, key: str) -> bool:
        """Whether the text has a word derived from the same stem ("presidential" and
        "president", "government" and "govern"): stems sharing their first six letters or
        more, one the start of the other."""
        if len(key) < _DERIVED_MIN:
            return False
        hit = self._related.get(key)
        if hit is None:
            hit = self._related[key] = any(
                len(st) >= _DERIVED_MIN and (st.startswith(key) or key.startswith(st)) for st in self.stems)
        return hit

    def covers(self, term: Term | str) -> bool:
        """Whether the text mentions ``term`` (its words, synonyms, atoms or abbreviation).
        Kept per cover and term: a sentence's cover lives as long as its chunk's split is
        cached, and the same question words are asked of it by each step and by question after
        question. The cover is part of the key by identity (its text decides the answer)."""
        # the term by what decides the answer, as a tuple: hashing the dataclass costs more
        key = (self, (term.text, term.key, term.cjk, term.alts) if isinstance(term, Term) else term)
        hit = _COVERED.get(key)
        if hit is None:
            if len(_COVERED) >= _COVERED_MAX:
                _COVERED.clear()
            hit = _COVERED[key] = self._covers(term)
        return hit

    def _covers(self, term: Term | str) -> bool:
        word = term.text if isinstance(term, Term) else term
        alts = term.alts if isinstance(term, Term) and term.alts else ()
        if isinstance(term, Term) and not term.cjk:
            return term.key in self.stems or self._has(word) or any(self._has(s) for s in alts) \
                or self._derived(term.key)
        if self._has(word):
            return True
        if is_cjk(word) and len(word) > 2 and all(self._has(a) for a in atoms(word)) \
                and atoms(word) != (word,):
            return True
        if any(self._has(s) for s in alts or synonyms(word)):
            return True
        if (stem := _suffix_stem(word)) and stem in self.text:
            return True  # 房子 in 房屋, 绳子 in 牵引绳
        return self._abbreviation(word)


#: texts whose covers are kept (see :func:`shared_cover`)
_SHARED_COVERS = 2048


@lru_cache(maxsize=_SHARED_COVERS)
def shared_cover(text: str) -> TextCover:
    """The :class:`TextCover` of ``text``, one per text for the texts seen most recently: a
    chunk's covers (its heading, its whole context) are asked about question after question,
    and building one normalizes and stems the whole text. Callers only read it; its memos
    (derived words, the terms it was asked about) depend on the text and the term alone."""
    return TextCover(text)
