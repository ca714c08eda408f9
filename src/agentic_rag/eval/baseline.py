"""The floor every ``arag eval`` number is shown beside: plain Okapi BM25 (the ``bm25s`` package,
k1=1.5, b=0.75) over the benchmark's own units, at the same k, with no routing, no graph, no
vectors, no reasoning.

Tokenization is deliberately independent of the engine's tokenizer, so the floor does not move
when the engine changes: English uses bm25s' word pattern, its English stopword list and the
Snowball English stemmer (PyStemmer); Chinese uses jieba's search mode without stopwords; text
that mixes both uses jieba and stems the Latin words.

    >>> bm = BM25Baseline([Unit(id="a", text="The cat sat"), Unit(id="b", text="Dogs bark")], "en")
    >>> bm.search("a barking dog", k=1)
    ['b']
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
from pydantic import BaseModel

from agentic_rag.errors import MissingExtraError

_WORD = re.compile(r"(?u)\b\w\w+\b")
_LATIN = re.compile(r"^[0-9a-z_]+$")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


class Unit(BaseModel):
    """One retrievable unit of the baseline: a passage, a statute article, a clause."""

    id: str
    text: str


def _bm25s():
    try:
        import bm25s
    except ImportError as exc:  # an optional dependency: the eval extra
        raise MissingExtraError("bm25s (the eval baseline)", "eval") from exc
    return bm25s


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@lru_cache(maxsize=1)
def _stopwords_en() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@lru_cache(maxsize=1)
def _jieba():
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def tokenize(text: str, lang: str) -> list[str]:
    """Baseline tokens of ``text``; ``lang`` is "en", "zh", or anything else for mixed text."""
    text = text.lower()
    if lang == "en" and not _CJK.search(text):
        words = [w for w in _WORD.findall(text) if w not in _stopwords_en()]
        return _stemmer().stemWords(words)
    out: list[str] = []
    stop = _stopwords_en()
    for tok in _jieba().lcut_for_search(text):
        tok = tok.strip()
        if not tok or not any(ch.isalnum() for ch in tok):
            continue  # whitespace and punctuation
        if _LATIN.match(tok):
            if len(tok) < 2 or tok in stop:
                continue
            tok = _stemmer().stemWord(tok)
        out.append(tok)
    return out


class BM25Baseline:
    """Okapi BM25 over ``units``; :meth:`search` returns unit ids, best first, ties in the
    units' input order."""

    def __init__(self, units: Sequence[Unit], lang: str) -> None:
        bm25s = _bm25s()
        self.lang = lang
        self.ids = [u.id for u in units]
        self._model = None
        corpus = [tokenize(u.text, lang) for u in units]
        if any(corpus):
            self._model = bm25s.BM25()  # Okapi, k1=1.5, b=0.75
            # an empty document would break bm25s' vocabulary; a placeholder token never matches
            self._model.index([toks or ["\x00"] for toks in corpus], show_progress=False)

    def search(self, query: str, k: int) -> list[str]:
        """The ids of the top ``k`` units with a positive score."""
        if self._model is None or k <= 0:
            return []
        toks = [t for t in tokenize(query, self.lang) if t in self._model.vocab_dict]
        if not toks:
            return []
        scores = np.asarray(self._model.get_scores(toks))
        # a stable sort so tied units keep their corpus order, run after run
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.ids[int(i)] for i in order if scores[i] > 0]
