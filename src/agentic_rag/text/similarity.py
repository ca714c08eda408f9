"""Character-gram overlap: how alike two texts are, without a model.

- :func:`char_bigrams` — the character bigrams of a text, whitespace and case ignored: two
  versions of one clause share most of them whatever the language
- :func:`mixed_bigrams` — character bigrams of Chinese, word bigrams of English: how much of a
  question's own wording a sentence repeats
- :func:`jaccard` — overlap of two gram sets; :func:`sampled_grams` — a content-defined sample of
  a text's 8-grams, to find near-duplicates quickly
"""

from __future__ import annotations

import re
from collections.abc import Set
from functools import lru_cache

from agentic_rag.text.language import is_cjk

__all__ = ["char_bigrams", "containment", "jaccard", "mixed_bigrams", "sampled_grams", "squash"]

_SPACE = re.compile(r"\s+")

#: texts whose grams are kept: the same chunks are compared question after question (near
#: duplicates, other versions' clauses), and the same sentences with questions (mixed
#: bigrams), and their grams are pure functions of the text. A text's bigrams take about 100
#: bytes per character, its sampled 8-grams an eighth of that
_BIGRAM_TEXTS = 512
_SAMPLED_TEXTS = 4096
_MIXED_TEXTS = 2048  # sentences (a question's candidates: about 15)


def squash(text: str) -> str:
    """Lowercase, without whitespace."""
    return _SPACE.sub("", text.lower())


@lru_cache(maxsize=_BIGRAM_TEXTS)
def char_bigrams(text: str) -> frozenset[str]:
    """Character bigrams of ``text`` (whitespace and case ignored); a one-character text is its
    own gram, so that it still matches itself."""
    t = squash(text)
    return frozenset(t[i:i + 2] for i in range(len(t) - 1)) or frozenset({t} if t else ())


@lru_cache(maxsize=_MIXED_TEXTS)
def mixed_bigrams(text: str) -> frozenset[str]:
    """Character bigrams of a Chinese text (punctuation removed), word bigrams of English."""
    t = re.sub(r"[^\w]", "", text.lower())
    if is_cjk(t):
        return frozenset(t[i:i + 2] for i in range(len(t) - 1))
    words = re.findall(r"[a-z0-9]+", text.lower())
    return frozenset(" ".join(words[i:i + 2]) for i in range(len(words) - 1))


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0 when either is empty."""
    return len(a & b) / len(a | b) if a and b else 0.0


def containment(a: Set[str], b: Set[str]) -> float:
    """The share of the smaller set that the larger holds (the overlap coefficient): a text that
    another extends ("…办理" / "…办理，也可以网上办理") is contained in it, however much longer."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


@lru_cache(maxsize=_SAMPLED_TEXTS)
def sampled_grams(t: str) -> frozenset[str]:
    """Content-defined sample of a text's 8-grams (about one in eight, the same ones in any
    text that contains them); short texts use the whole text."""
    if len(t) < 16:
        return frozenset({t})
    # str hashes vary between processes but not within one, which is all this needs
    return frozenset(g for g in (t[i:i + 8] for i in range(len(t) - 7)) if hash(g) & 7 == 0) or frozenset({t[:8]})
