"""The one language detector of the engine, and the CJK test every module uses."""

from __future__ import annotations

import re

__all__ = ["CJK_CHARS", "detect_language", "is_cjk"]

#: the CJK ideograph ranges the engine treats as Chinese (unified, extension A, compatibility)
CJK_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{CJK_CHARS}]")


def is_cjk(text: str) -> bool:
    """Whether ``text`` contains a Chinese character."""
    return _CJK_CHAR.search(text) is not None


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
