"""Tokenization for BM25: Chinese via jieba, English via the Snowball stemmer, both at once.

The same function tokenizes the corpus at ingest and the query at search time, so anything that
changes its output (the dictionary, the stopwords, the HMM switch) changes :data:`TOKENIZER_ID`,
which the keyword index records next to its snapshot.

    >>> tokenize("Employers shall pay wages 按月支付工资，2024年")
    ['employ', 'pay', 'wage', '按', '月', '支付', '工资', '2024', '年']

Text is lowercased and cut into runs: CJK runs go to jieba (search mode: a long word also
yields its dictionary 2- and 3-grams, so "中华人民共和国" matches "人民" and "共和国"), latin
words are stemmed, numbers are kept whole ("2023", "7.5", "1.2.0"). Punctuation and a small
list of zh/en function words are dropped.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable

#: Changes whenever the tokenizer's output for the same text would change.
TOKENIZER_ID = "jieba-search-nohmm+snowball-en/1"

# HMM guesses out-of-vocabulary words (mostly names). It costs ~30% throughput at ingest and an
# unknown name split into single characters still matches itself as a sequence of unigrams.
_HMM = False

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# One pass over the text: CJK runs, latin words (with inner apostrophes), numbers with decimals
# or version dots. Everything else (punctuation, symbols, whitespace) separates tokens.
_RUN = re.compile(rf"([{_CJK}]+)|([a-z]+(?:'[a-z]+)*)|([0-9]+(?:\.[0-9]+)*)")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_LATIN_CHAR = re.compile(r"[A-Za-z]")

# Full-width ASCII (ＡＢＣ１２３) to half-width, so "２０２４" and "2024" are the same token.
_FULLWIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FULLWIDTH[0x3000] = 0x20

ZH_STOPWORDS = frozenset(
    "的 了 和 与 及 或 是 在 也 等 为 以 之 其 而 被 把 这 那 就 都 着 个 并 从 向 于 则 即 但 若 "
    "所 将 已 吗 呢 吧 啊 呀 么 哪 谁 什么 怎么 怎样 如何 哪些 哪个 是否 是不是 有没有 请问 一下 "
    "我 你 他 她 它 我们 你们 他们 她们 它们 该 此 这个 那个 这些 那些 以及 或者 并且 而且 因为 所以 "
    "如果 虽然 但是 可以 能否 需要 要 会 有 没有".split()
)
EN_STOPWORDS = frozenset(
    "a an the of to in on at for by with from as into onto about than then and or nor but if "
    "is are was were be been being am do does did done have has had having it its it's this "
    "that these those there here which who whom whose what when where why how i me my we our "
    "you your he him his she her they them their not no so such can could shall should will "
    "would may might must also any all each other some".split()
)

_lock = threading.Lock()
_state: dict[str, object] = {}
# Tokens of recently seen CJK runs. Text repeats a lot at the phrase level (boilerplate, legal
# formulas, names), so this saves much of the segmentation work; cleared when full.
_RUN_CACHE: dict[str, tuple[str, ...]] = {}
_RUN_CACHE_MAX = 200_000


def _jieba():
    """The initialized default jieba tokenizer (loaded once; loading takes ~1 s)."""
    dt = _state.get("dt")
    if dt is not None:
        return dt
    with _lock:
        if "dt" not in _state:
            import jieba

            jieba.setLogLevel(60)  # jieba prints its cache loading to stderr otherwise
            jieba.dt.initialize()
            _state["logp"] = _log_probs(jieba.dt)
            _state["dt"] = jieba.dt
    return _state["dt"]


# In the merged prefix dictionary, a word maps to its log probability (always <= 0), a prefix
# that is not itself a word maps to _PREFIX, and _MISSING is what ``get`` returns for anything
# else: one dict lookup per candidate instead of jieba's two.
_PREFIX = 2.0
_MISSING = 1.0


def _log_probs(dt) -> dict[str, float]:
    logtotal = math.log(dt.total)
    return {w: (math.log(f) - logtotal) if f else _PREFIX for w, f in dt.FREQ.items()}


def _segment(run: str, pget, log_one: float) -> list[str]:
    """jieba's default cut without HMM (max-probability path over the dictionary DAG) for one run
    of CJK characters, in one right-to-left pass; same output as ``jieba.cut(run, HMM=False)``
    at about twice the speed, which matters because this is most of the ingest time.
    ``pget`` is the ``get`` of the merged dictionary built by :func:`_log_probs`."""
    n = len(run)
    best = [0.0] * (n + 1)
    nxt = [0] * (n + 1)
    neg = -math.inf
    for i in range(n - 1, -1, -1):
        bs = neg
        bx = i + 1
        j = i + 1
        lp = pget(run[i], _MISSING)
        while lp != _MISSING:  # bounded by n - i
            if lp <= 0.0:
                sc = lp + best[j]
                if sc >= bs:  # ties go to the longer word, as in jieba
                    bs = sc
                    bx = j
            if j >= n:
                break
            j += 1
            lp = pget(run[i:j], _MISSING)
        if bs == neg:
            bs = log_one + best[i + 1]
        best[i] = bs
        nxt[i] = bx
    out = []
    x = 0
    while x < n:
        y = nxt[x]
        out.append(run[x:y])
        x = y
    return out


def _han_tokens(run: str) -> tuple[str, ...]:
    """Search-mode tokens of one CJK run (cached)."""
    got = _RUN_CACHE.get(run)
    if got is not None:
        return got
    dt = _jieba()
    pget = _state["logp"].get
    out: list[str] = []
    append = out.append
    for w in _segment(run, pget, -math.log(dt.total)):
        n = len(w)
        if n > 2:
            # search mode as in jieba.cut_for_search: known 2-/3-grams inside long words
            for i in range(n - 1):
                g = w[i:i + 2]
                if pget(g, _MISSING) <= 0.0:
                    append(g)
            if n > 3:
                for i in range(n - 2):
                    g = w[i:i + 3]
                    if pget(g, _MISSING) <= 0.0:
                        append(g)
        if w not in ZH_STOPWORDS:
            append(w)
    got = tuple(out)
    if len(_RUN_CACHE) >= _RUN_CACHE_MAX:
        _RUN_CACHE.clear()
    _RUN_CACHE[run] = got
    return got


def _stemmer():
    stem = _state.get("stem")
    if stem is None:
        import Stemmer

        stem = Stemmer.Stemmer("english")
        stem.maxCacheSize = 100_000
        _state["stem"] = stem
    return stem


def detect_language(text: str) -> str:
    """``"zh"`` when CJK characters make up at least 30% of the text's content, else ``"en"``.

    Chinese text mixed with English product names or citations stays ``"zh"``; an English text
    quoting a few Chinese terms stays ``"en"``.
    """
    sample = text[:4000]
    cjk = len(_CJK_CHAR.findall(sample))
    latin_words = len(re.findall(r"[A-Za-z]+", sample))
    if cjk == 0:
        return "en" if latin_words else "zh"
    # a latin word carries about as much content as two CJK characters
    return "zh" if cjk >= 0.3 * (cjk + 2 * latin_words) else "en"


def tokenize(text: str, lang: str | None = None) -> list[str]:
    """Tokens of ``text`` for BM25: lowercase, jieba for CJK, stemmed English, numbers kept.

    ``lang`` is accepted for symmetry with callers that know it; mixed text is handled run by
    run either way, so the result does not depend on it.
    """
    if not text:
        return []
    text = text.translate(_FULLWIDTH).lower()
    _jieba()
    cache = _RUN_CACHE
    en_stop = EN_STOPWORDS
    out: list[str] = []
    latin: list[str] = []
    latin_at: list[int] = []
    append = out.append
    for han, word, number in _RUN.findall(text):
        if han:
            got = cache.get(han)
            out.extend(got if got is not None else _han_tokens(han))
        elif word:
            if word not in en_stop:
                latin_at.append(len(out))
                latin.append(word)
                append(word)
        else:
            append(number)
    if latin:
        for i, s in zip(latin_at, _stemmer().stemWords(latin)):
            out[i] = s
    return out


def add_terms(terms: Iterable[str]) -> None:
    """Add words to jieba's dictionary so they stay whole (statute names, defined terms).

    Only terms containing CJK characters matter; latin words are never split anyway. The
    change is process-wide and affects later tokenization only, so call it before ingesting
    the documents (and before the queries) that should see the terms whole.
    """
    dt = _jieba()
    with _lock:
        added = False
        for term in terms:
            t = term.strip().translate(_FULLWIDTH).lower()
            if len(t) >= 2 and _CJK_CHAR.search(t) and not dt.FREQ.get(t):
                dt.add_word(t)
                added = True
        if added:
            # jieba.add_word changes the total frequency, so every word's probability moves
            _state["logp"] = _log_probs(dt)
            _RUN_CACHE.clear()
            _state["generation"] = dictionary_generation() + 1


def dictionary_generation() -> int:
    """A counter that :func:`add_terms` bumps whenever the dictionary changes (so a worker
    process forked before the change knows it is stale)."""
    return int(_state.get("generation", 0))  # type: ignore[call-overload]
