"""Tokenization for BM25: Chinese via jieba, English via the Snowball stemmer, both at once.

The same function tokenizes the corpus at ingest and the query at search time, so anything that
changes its output (the dictionary, the stopwords, the HMM switch) changes :data:`TOKENIZER_ID`,
which the keyword index records next to its snapshot.

    >>> tokenize("Employers shall pay wages 按月支付工资，2024年")
    ['employ', 'pay', 'wage', '按', '月', '支付', '工资', '2024', '年']

Text is lowercased and cut into runs: CJK runs are segmented over jieba's dictionary (search
mode: a long word also yields its dictionary 2- and 3-grams, so "中华人民共和国" matches "人民" and
"共和国"), latin words are stemmed, numbers are kept whole ("2023", "7.5", "1.2.0"). Punctuation
and a small list of zh/en function words are dropped.

The dictionary is jieba's own ``dict.txt``, read into the one form segmentation needs (word ->
log probability) and kept in a cache file under ``~/.cache/agentic-rag`` (or
``$XDG_CACHE_HOME/agentic-rag``), so a new process loads it in ~0.2 s instead of loading jieba's
own cache (~0.6 s) and converting it: that load was most of ``arag ask``'s start-up time.
"""

from __future__ import annotations

import array
import contextlib
import hashlib
import importlib.util
import math
import os
import re
import struct
import threading
import unicodedata
from collections.abc import Iterable
from pathlib import Path

#: Changes whenever the tokenizer's output for the same text would change.
from agentic_rag.text.language import CJK_CHARS
from agentic_rag.text.stopwords import INDEX_EN, INDEX_ZH

TOKENIZER_ID = "jieba-search-nohmm+snowball-en/3"

# HMM guesses out-of-vocabulary words (mostly names). It costs ~30% throughput at ingest and an
# unknown name split into single characters still matches itself as a sequence of unigrams.
_HMM = False

_CJK = CJK_CHARS
# One pass over the text: CJK runs, latin words (with inner apostrophes), numbers with decimals
# or version dots. Everything else (punctuation, symbols, whitespace) separates tokens.
_RUN = re.compile(rf"([{_CJK}]+)|([a-z]+(?:'[a-z]+)*)|([0-9]+(?:\.[0-9]+)*)")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_WORD = re.compile(f"[{_CJK}]+")
_LATIN_CHAR = re.compile(r"[A-Za-z]")

# Full-width ASCII (ＡＢＣ１２３) to half-width, so "２０２４" and "2024" are the same token.
_FULLWIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FULLWIDTH[0x3000] = 0x20

#: letters with diacritics (Latin-1 Supplement, Latin Extended-A/B and Additional)
_ACCENTED = re.compile(r"[\u00c0-\u024f\u1e00-\u1eff]+")


#: letters no decomposition makes plain
_UNDECOMPOSED = str.maketrans({"ß": "ss", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE",
                               "đ": "d", "Đ": "D", "ł": "l", "Ł": "L", "ı": "i", "þ": "th", "Þ": "Th", "ð": "d",
                               "Ð": "D"})


def _plain(m: re.Match[str]) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", m.group(0).translate(_UNDECOMPOSED))
                   if not unicodedata.combining(ch))


def unaccent(text: str) -> str:
    """Latin letters without their diacritics ("Björn Ångström" -> "Bjorn Angstrom"): names are
    often typed without them, and a letter the tokenizer does not know splits a word in two.
    Letters without a decomposition are spelt out (ß -> ss, ø -> o, æ -> ae); other scripts are
    left as they are."""
    return _ACCENTED.sub(_plain, text)


_lock = threading.Lock()
_state: dict[str, object] = {}
# Tokens of recently seen CJK runs. Text repeats a lot at the phrase level (boilerplate, legal
# formulas, names), so this saves much of the segmentation work; cleared when full.
_RUN_CACHE: dict[str, tuple[str, ...]] = {}
_RUN_CACHE_MAX = 200_000


# In the dictionary, a word maps to its log probability (always <= 0), a prefix that is not
# itself a word maps to _PREFIX, and _MISSING is what ``get`` returns for anything else: one
# dict lookup per candidate instead of jieba's two.
_PREFIX = 2.0
_MISSING = 1.0
_DICT_FORMAT = 1  # bump when the cached form changes


def dictionary_path() -> Path:
    """jieba's dictionary file (found without importing jieba, which costs ~0.1 s)."""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("package jieba is not installed")
    return Path(spec.origin).parent / "dict.txt"


def _cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "agentic-rag"


def read_dictionary(path: Path) -> tuple[dict[str, int], int]:
    """Word frequencies of a jieba-format dictionary (``word freq [tag]`` per line), every
    prefix of a word present with frequency 0, and their total: what ``jieba.Tokenizer``
    builds from the same file."""
    freq: dict[str, int] = {}
    total = 0
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            line = raw.strip().decode("utf-8")
            try:
                word, count = line.split(" ")[:2]
                n = int(count)
            except ValueError:
                raise ValueError(f"invalid dictionary entry in {path} at line {lineno}: {line!r}") from None
            freq[word] = n
            total += n
            for end in range(1, len(word)):
                freq.setdefault(word[:end], 0)
    return freq, total


def _log_probs(freq: dict[str, int], total: int) -> dict[str, float]:
    logtotal = math.log(total)
    return {w: (math.log(f) - logtotal) if f else _PREFIX for w, f in freq.items()}


def load_dictionary(path: Path, cache_dir: Path | None) -> tuple[dict[str, float], int]:
    """The dictionary at ``path`` as ``({word: log probability, prefix: _PREFIX}, total)``.

    Read from a cache file in ``cache_dir`` named after the file's path, size and mtime; on a
    miss (or a damaged file) it is built from ``path`` and written there atomically. The cache
    holds the words as one newline-separated text and the values as one float64 array, which
    loads about 4x faster than a marshalled dict. A cache that cannot be written costs only the
    build (~1 s)."""
    st = path.stat()
    cache = None
    if cache_dir is not None:
        key = hashlib.sha1(str(path.resolve()).encode("utf-8")).hexdigest()[:12]
        cache = cache_dir / f"jieba-dict-v{_DICT_FORMAT}-{key}-{st.st_size}-{st.st_mtime_ns}.bin"
        try:
            got = _read_cache(cache.read_bytes())
        except OSError:
            got = None
        if got is not None:
            return got
    freq, total = read_dictionary(path)
    logp = _log_probs(freq, total)
    if cache is not None:
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            words = "\n".join(logp).encode("utf-8")
            with open(tmp, "wb") as fh:
                fh.write(_CACHE_HEAD.pack(_CACHE_MAGIC, total, len(logp), len(words)))
                fh.write(words)
                fh.write(array.array("d", logp.values()).tobytes())
            os.replace(tmp, cache)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
    return logp, total


_CACHE_MAGIC = b"ARAGDIC1"
_CACHE_HEAD = struct.Struct("<8sqqq")  # magic, total, entries, bytes of words


def _read_cache(data: bytes) -> tuple[dict[str, float], int] | None:
    """A cache file's dictionary, or ``None`` when it is not a complete one."""
    if len(data) < _CACHE_HEAD.size:
        return None
    magic, total, n, nbytes = _CACHE_HEAD.unpack_from(data)
    a = _CACHE_HEAD.size
    if magic != _CACHE_MAGIC or total <= 0 or len(data) != a + nbytes + 8 * n:
        return None
    try:
        words = data[a:a + nbytes].decode("utf-8").split("\n")
    except UnicodeDecodeError:
        return None
    values = array.array("d")
    values.frombytes(data[a + nbytes:])
    if len(words) != n:
        return None
    return dict(zip(words, values.tolist())), total


def _dictionary() -> dict[str, float]:
    """The process-wide dictionary (loaded once), including the terms :func:`add_terms` added."""
    logp = _state.get("logp")
    if logp is not None:
        return logp  # type: ignore[return-value]
    with _lock:
        if "logp" not in _state:
            logp, total = load_dictionary(dictionary_path(), _cache_dir())
            _state["total"] = total
            _state["log_one"] = -math.log(total)  # the score of a character the dictionary lacks
            _state["logp"] = logp
    return _state["logp"]  # type: ignore[return-value]


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


def _search_mode(words: Iterable[str], pget, drop: frozenset[str] = frozenset()) -> list[str]:
    """jieba's search mode over segmented ``words``: each word longer than two characters is
    preceded by the dictionary 2-grams, then 3-grams, inside it. Words in ``drop`` are left out
    (their sub-words are not)."""
    out: list[str] = []
    append = out.append
    for w in words:
        n = len(w)
        if n > 2:
            for i in range(n - 1):
                g = w[i:i + 2]
                if pget(g, _MISSING) <= 0.0:
                    append(g)
            if n > 3:
                for i in range(n - 2):
                    g = w[i:i + 3]
                    if pget(g, _MISSING) <= 0.0:
                        append(g)
        if w not in drop:
            append(w)
    return out


def _han_tokens(run: str) -> tuple[str, ...]:
    """Search-mode tokens of one CJK run, stopwords dropped (cached)."""
    got = _RUN_CACHE.get(run)
    if got is not None:
        return got
    got = tuple(_search_mode(cut(run), _dictionary().get, INDEX_ZH))
    if len(_RUN_CACHE) >= _RUN_CACHE_MAX:
        _RUN_CACHE.clear()
    _RUN_CACHE[run] = got
    return got


def cut(run: str) -> list[str]:
    """The words of one run of CJK characters: jieba's precise mode without HMM
    (``jieba.lcut(run, HMM=False)``), over the dictionary with the added terms."""
    return _segment(run, _dictionary().get, _state["log_one"])


def cut_for_search(run: str) -> list[str]:
    """``jieba.lcut_for_search(run)`` for one run of CJK characters, over the dictionary with
    the added terms: precise mode, a stretch of two or more single characters that is not a
    word handed to jieba's HMM (which may join it into a name), then search mode."""
    pget = _dictionary().get
    words: list[str] = []
    single: list[str] = []
    for w in cut(run) + [""]:
        if len(w) == 1:
            single.append(w)
            continue
        if len(single) > 1 and pget("".join(single), _MISSING) > 0.0:
            from jieba import finalseg  # imported only when a stretch is unknown

            words.extend(finalseg.cut("".join(single)))
        else:
            words.extend(single)
        single = []
        if w:
            words.append(w)
    return _search_mode(words, pget)


def _stemmer():
    stem = _state.get("stem")
    if stem is None:
        import Stemmer

        stem = Stemmer.Stemmer("english")
        stem.maxCacheSize = 100_000
        _state["stem"] = stem
    return stem


def tokenize(text: str, lang: str | None = None) -> list[str]:
    """Tokens of ``text`` for BM25: lowercase, jieba for CJK, stemmed English, numbers kept.

    ``lang`` is accepted for symmetry with callers that know it; mixed text is handled run by
    run either way, so the result does not depend on it.
    """
    if not text:
        return []
    text = unaccent(text.translate(_FULLWIDTH)).lower()
    _dictionary()
    cache = _RUN_CACHE
    en_stop = INDEX_EN
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
    """Add words to the dictionary so they stay whole (statute names, defined terms).

    Only terms made of CJK characters alone matter: segmentation sees nothing else. Each gets
    the frequency jieba's ``add_word`` would give it (just enough to beat its own pieces). The
    total frequency stays the dictionary's, so no other word's probability moves and adding is
    cheap at every index open. The change is process-wide and affects later tokenization only,
    so call it before ingesting the documents (and before the queries) that should see the
    terms whole.
    """
    logp = _dictionary()
    with _lock:
        added = False
        total = _state["total"]
        logtotal = -_state["log_one"]
        for term in terms:
            t = term.strip().translate(_FULLWIDTH).lower()
            if len(t) < 2 or not _CJK_WORD.fullmatch(t) or logp.get(t, _MISSING) <= 0.0:
                continue
            # jieba's suggest_freq: the product of the pieces' probabilities, as a count, plus one
            share = 1.0
            for piece in cut(t):
                lp = logp.get(piece, _MISSING)
                share *= math.exp(lp) if lp <= 0.0 else (0.0 if lp == _PREFIX else 1.0 / total)
            logp[t] = math.log(int(share * total) + 1) - logtotal  # type: ignore[operator]
            for end in range(1, len(t)):
                logp.setdefault(t[:end], _PREFIX)
            added = True
        if added:
            _RUN_CACHE.clear()
            _state["generation"] = dictionary_generation() + 1


def dictionary_generation() -> int:
    """A counter that :func:`add_terms` bumps whenever the dictionary changes (so a worker
    process forked before the change knows it is stale)."""
    return int(_state.get("generation", 0))  # type: ignore[call-overload]
