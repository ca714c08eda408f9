"""Benchmark sets of ``arag eval``: where they live, how their questions read, what counts as gold.

Every set normalizes to :class:`EvalSet` (its questions as :class:`EvalQuestion`), whatever the
file format: the corpus sets (``2wiki``, ``hotpotqa``, ``musique``, ``lecoqa``) have a shared
``corpus.jsonl``; the RGB sets carry their passages inside each question; ``examples`` reads the
project's own ``examples/questions.jsonl`` over ``examples/docs``.

    >>> s = load_set("hotpotqa", bench_dir="../shared/bench")   # doctest: +SKIP
    >>> len(s.questions), s.spec.unit                             # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentic_rag.errors import EvalError

SetKind = Literal["corpus", "rgb_noise", "rgb_int", "rgb_fact", "examples"]
UnitKind = Literal["passage", "article", "clause", "none"]


class SetSpec(BaseModel):
    """What a set is and how it is scored."""

    name: str
    kind: SetKind
    lang: str  # "zh", "en", or "mixed" (examples)
    unit: UnitKind  # what a gold id names
    score_answers: bool  # answers are short aliases worth matching

    def scores_answer(self, q: EvalQuestion) -> bool:
        """Whether ``q``'s answer is scored: every question of a set whose answers are short
        aliases; in the others (lecoqa's answers are lawyers' paragraphs) a question whose
        file gives its ``facts`` as short aliases or says it cannot be answered."""
        return (self.score_answers or q.scored) and bool(q.parts or not q.answerable or q.conflict)


SETS: dict[str, SetSpec] = {s.name: s for s in (
    SetSpec(name="2wiki", kind="corpus", lang="en", unit="passage", score_answers=False),
    SetSpec(name="hotpotqa", kind="corpus", lang="en", unit="passage", score_answers=True),
    SetSpec(name="musique", kind="corpus", lang="en", unit="passage", score_answers=True),
    SetSpec(name="lecoqa", kind="corpus", lang="zh", unit="article", score_answers=False),
    SetSpec(name="rgb/zh_noise", kind="rgb_noise", lang="zh", unit="none", score_answers=True),
    SetSpec(name="rgb/zh_int", kind="rgb_int", lang="zh", unit="none", score_answers=True),
    SetSpec(name="rgb/zh_fact", kind="rgb_fact", lang="zh", unit="none", score_answers=True),
    SetSpec(name="rgb/en_fact", kind="rgb_fact", lang="en", unit="none", score_answers=True),
    SetSpec(name="examples", kind="examples", lang="mixed", unit="clause", score_answers=True),
)}

#: the RGB noise protocol: share of the 5 passages that are negatives; 1.0 tests rejection
NOISE_RATIOS: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
PASSAGES_PER_QUESTION = 5


class ConflictGold(BaseModel):
    winner: str
    loser: str
    rule: str = ""


class EvalQuestion(BaseModel):
    """One benchmark question, normalized across formats."""

    id: str
    question: str
    lang: str = "en"
    type: str = ""
    gold: list[str] = Field(default_factory=list)  # unit ids (passages, article names, clauses)
    answers: list[str] = Field(default_factory=list)  # aliases as given
    #: required parts of a correct answer, each a list of aliases (one part for most sets)
    parts: list[list[str]] = Field(default_factory=list)
    #: answers are lists of facts, so the share of facts present is worth reporting too
    score_parts: bool = False
    answerable: bool = True
    fake: list[str] = Field(default_factory=list)  # counterfactual value(s) (rgb *_fact)
    conflict: ConflictGold | None = None
    #: per-question passages of the RGB sets: positive, negative, positive_wrong
    passages: dict[str, list[str]] = Field(default_factory=dict)
    #: its file asks for its answer to be scored in a set that scores retrieval alone
    scored: bool = False
    #: rgb/zh_int: the positive passages grouped per sub-answer, in the file's order
    passage_groups: list[list[str]] = Field(default_factory=list)


class EvalSet(BaseModel):
    spec: SetSpec
    root: Path  # folder of the set (bench/<set>, or the examples folder)
    questions_file: Path
    corpus: list[Path] = Field(default_factory=list)  # what gets ingested once for the set
    questions: list[EvalQuestion]

    @property
    def name(self) -> str:
        return self.spec.name


# -- locating --------------------------------------------------------------------------------
def find_bench_dir(bench_dir: str | Path | None = None, start: Path | None = None) -> Path:
    """The benchmark folder: ``bench_dir`` when given, else ``$ARAG_BENCH_DIR``, else the first
    ``shared/bench`` found beside the current folder or one of its parents (``../shared/bench``
    is the project's layout)."""
    if bench_dir is not None:
        p = Path(bench_dir).expanduser()
        if not p.is_dir():
            raise EvalError(f"benchmark folder not found: {p}")
        return p
    env = os.environ.get("ARAG_BENCH_DIR")
    if env:
        return find_bench_dir(env)
    here = (start or Path.cwd()).resolve()
    for base in (here, *here.parents):
        for cand in (base / "shared" / "bench", base / "bench"):
            # a folder named bench is not enough (the project has one for its perf scripts)
            if any((cand / n / "dev.jsonl").is_file() for n in SETS if n != "examples"):
                return cand
    raise EvalError("benchmark folder not found: pass --bench-dir DIR (expected ../shared/bench)")


def find_examples_dir(start: Path | None = None) -> Path:
    """The project's ``examples/`` folder (with ``questions.jsonl``), from the current folder up,
    then beside the installed package (an editable install)."""
    here = (start or Path.cwd()).resolve()
    for base in (here, *here.parents, Path(__file__).resolve().parents[3]):
        if (base / "examples" / "questions.jsonl").is_file():
            return base / "examples"
    raise EvalError("examples/questions.jsonl not found: run from the project folder")


# -- loading ---------------------------------------------------------------------------------
def load_set(name: str, bench_dir: str | Path | None = None, questions: str | Path | None = None,
             limit: int | None = None) -> EvalSet:
    """Load one set; ``questions`` replaces its ``dev.jsonl`` (held-out questions, same format).

    Raises :class:`EvalError` naming the set or file for an unknown set, a missing file or a
    malformed line."""
    spec = SETS.get(name)
    if spec is None:
        raise EvalError(f"unknown benchmark set {name!r}; choose one of: {', '.join(SETS)}")
    if spec.kind == "examples":
        qfile = Path(questions) if questions else find_examples_dir() / "questions.jsonl"
        # the corpus is the docs/ folder beside the questions (examples/, examples/holdout/)
        root = qfile.parent if (qfile.parent / "docs").is_dir() or not questions else find_examples_dir()
        docs = root / "docs"
        if not docs.is_dir():  # never the whole folder: it holds the answer keys and the holdout
            raise EvalError(f"{docs}: the examples corpus folder is missing")
        corpus = [docs]
    else:
        root = find_bench_dir(bench_dir) / name
        if not root.is_dir():
            raise EvalError(f"benchmark set {name!r} not found under {root.parent}")
        qfile = Path(questions) if questions else root / "dev.jsonl"
        corpus = []
        if spec.kind == "corpus":
            cfile = next((p for p in (root / "corpus.jsonl", root / "corpus.jsonl.gz") if p.is_file()), None)
            if cfile is None:
                raise EvalError(f"{root / 'corpus.jsonl'}: corpus file not found for set {name!r}")
            corpus = [cfile]
    rows = read_jsonl(qfile)
    if limit is not None:
        rows = rows[: max(0, limit)]
    parsed = [_question(spec, row, qfile, i) for i, row in enumerate(rows, 1)]
    return EvalSet(spec=spec, root=root, questions_file=qfile, corpus=corpus, questions=parsed)


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Objects of a JSON-lines file (blank lines skipped); errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise EvalError(f"{path}: questions file not found")
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EvalError(f"{path}:{n}: not valid JSON: {exc.msg}") from exc
            if not isinstance(obj, dict):
                raise EvalError(f"{path}:{n}: expected a JSON object")
            rows.append(obj)
    return rows


def _question(spec: SetSpec, row: dict[str, Any], path: Path, n: int) -> EvalQuestion:
    where = f"{path}:{n}"
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise EvalError(f"{where}: missing 'question'")
    qid = str(row.get("id") or f"q{n}")
    lang = str(row.get("lang") or (spec.lang if spec.lang != "mixed" else _guess_lang(question)))
    answers = _aliases(row.get("answers"), where)
    base: dict[str, Any] = {"id": qid, "question": question, "lang": lang,
                            "type": str(row.get("type") or ""), "answers": answers}
    if spec.kind == "corpus":
        gold = row.get("gold") or []
        if not isinstance(gold, list):
            raise EvalError(f"{where}: 'gold' must be a list")
        # "facts" (each a list of short aliases, as in the examples format) or "abstain" ask for
        # the answer to be scored where the set itself scores retrieval alone
        facts = [_aliases(f, where) for f in row.get("facts") or []]
        parts = [f for f in facts if f] or ([answers] if answers else [])
        return EvalQuestion(**base, gold=[str(g) for g in gold], parts=parts, score_parts=len(parts) > 1,
                            answerable=not bool(row.get("abstain")),
                            scored=bool(facts) or bool(row.get("abstain")))
    if spec.kind == "examples":
        facts = row.get("facts") or []
        parts = [_aliases(f, where) for f in facts] if facts else ([answers] if answers else [])
        gold = [_clause_unit(c.get("source", ""), c.get("clause")) for c in row.get("citations") or []
                if isinstance(c, dict)]
        conflict = row.get("conflict")
        return EvalQuestion(**base, gold=gold, parts=[p for p in parts if p], score_parts=True,
                            answerable=not bool(row.get("abstain")),
                            conflict=ConflictGold(**{k: str(v) for k, v in conflict.items()
                                                     if k in ("winner", "loser", "rule")})
                            if isinstance(conflict, dict) and conflict.get("winner") else None)
    # the RGB sets: passages travel with the question
    passages = {key: _passages(row.get(key), where, key) for key in ("positive", "negative", "positive_wrong")
                if key in row}
    if "positive" not in passages:
        raise EvalError(f"{where}: missing 'positive' passages")
    if spec.kind == "rgb_int":
        parts = [_aliases(a, where) for a in row.get("answers") or []]
        flat = [a for p in parts for a in p]
        groups = [_passages(g, where, "positive") if isinstance(g, list) else _passages([g], where, "positive")
                  for g in row["positive"]]
        return EvalQuestion(**{**base, "answers": flat}, parts=parts, passages=passages, score_parts=True,
                            passage_groups=[g for g in groups if g])
    if spec.kind == "rgb_fact":
        fake = _aliases(row.get("fakeanswer"), where)
        if not fake:
            raise EvalError(f"{where}: missing 'fakeanswer'")
        return EvalQuestion(**base, parts=[answers], fake=fake, passages=passages)
    if not passages.get("negative"):
        raise EvalError(f"{where}: missing 'negative' passages (needed for the noise ratios)")
    return EvalQuestion(**base, parts=[answers], passages=passages)


def _aliases(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, (int, float)):
        return [str(value)]
    if isinstance(value, list):
        out: list[str] = []
        for v in value:
            out.extend(_aliases(v, where))
        return out
    raise EvalError(f"{where}: answers must be strings or lists of strings, got {type(value).__name__}")


def _passages(value: Any, where: str, key: str) -> list[str]:
    """Passages as a flat list; zh_int nests one list per sub-answer, kept in order."""
    if not isinstance(value, list):
        raise EvalError(f"{where}: {key!r} must be a list of passages")
    out: list[str] = []
    for v in value:
        if isinstance(v, list):
            out.extend(str(x) for x in v if str(x).strip())
        elif isinstance(v, str) and v.strip():
            out.append(v)
    return out


def _guess_lang(text: str) -> str:
    cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in text)
    return "zh" if cjk * 4 >= len(text.strip()) or cjk >= 2 else "en"


# -- units -----------------------------------------------------------------------------------
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_ARTICLE = re.compile(r"第([零〇一二两三四五六七八九十百千\d]+)条(?:之([零〇一二两三四五六七八九十\d]+))?")
_STATE_PREFIX = re.compile(r"^(中华人民共和国|中國|中国)")


def cn_number(s: str) -> int | None:
    """Chinese or Arabic numeral below 10,000 -> int ("一百零五" -> 105, "十二" -> 12)."""
    s = s.strip()
    if s.isdigit():
        return int(s)
    total = current = 0
    seen = False
    for ch in s:
        if ch in _CN_DIGITS:
            current = _CN_DIGITS[ch]
            seen = True
        elif ch in _CN_UNITS:
            total += (current or 1) * _CN_UNITS[ch]
            current = 0
            seen = True
        else:
            return None
    return total + current if seen else None


def norm_title(title: str) -> str:
    """A statute title without the state prefix or spaces: 中华人民共和国民法典 -> 民法典."""
    return _STATE_PREFIX.sub("", re.sub(r"\s+", "", title))


def article_label(text: str | None) -> str | None:
    """The first article reference in ``text`` in canonical form (``第54条``, ``第12条之1``)."""
    if not text:
        return None
    m = _ARTICLE.search(text)
    if not m:
        return None
    n = cn_number(m.group(1))
    if n is None:
        return None
    sub = cn_number(m.group(2)) if m.group(2) else None
    return f"第{n}条" + (f"之{sub}" if sub else "")


def article_unit(name: str) -> str:
    """A gold article name (statute title + article) as a unit id: 中华人民共和国民法典第五十四条
    -> 民法典第54条. Unparseable names stay as they are (normalized), so they simply never match."""
    m = None
    for m in _ARTICLE.finditer(name):
        pass
    if m is None:
        return norm_title(name)
    label = article_label(m.group(0))
    return norm_title(name[: m.start()]) + (label or m.group(0))


def _clause_unit(source: str, clause: str | None) -> str:
    base = Path(str(source)).name
    clause = re.sub(r"\s+", "", clause or "")
    return f"{base}#{clause}" if clause else base
