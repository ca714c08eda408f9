"""A tiny stand-in for the engine, so the harness is tested without the real agents.

The stub "indexes" jsonl lines as one chunk each, retrieves by shared words (characters for
Chinese), and answers with the first sentence of the best chunk, citing it; with no overlap it
abstains. When two chunks state different numbers about the question it reports a conflict.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentic_rag.types import (Answer, AnswerSentence, Chunk, Citation, Conflict, ConflictValue, DocMeta,
                               Document, Evidence, Usage)


def _terms(text: str) -> set[str]:
    return {t for t in re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text.lower()) if len(t) > 1 or not t.isascii()}


class StubSystem:
    def __init__(self, docs: list[dict]) -> None:
        self.docs = docs
        self._chunks = [Chunk(chunk_id=f"d{i}:p0:0", doc_id=f"d{i}", ord=0, text=d["text"], title=d.get("title", ""),
                              clause=d.get("clause"), source=d.get("source", f"corpus.jsonl#{d['id']}"))
                        for i, d in enumerate(docs)]
        self.closed = False

    def documents(self) -> list[Document]:
        return [Document(doc_id=f"d{i}", source=f"corpus.jsonl#{d['id']}", content_hash="x", text=d["text"],
                         meta=DocMeta(title=d.get("title", "")))
                for i, d in enumerate(self.docs)]

    def chunks(self) -> list[Chunk]:
        return list(self._chunks)

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        q = _terms(question)
        scored = [(len(q & _terms(c.title + " " + c.text)), -i, c) for i, c in enumerate(self._chunks)]
        scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (s[0], s[1]), reverse=True)
        return [Evidence(chunk=c, score=float(s), rank=r) for r, (s, _, c) in enumerate(scored[:k], 1)]

    def ask(self, question: str) -> Answer:
        ev = self.retrieve(question, 3)
        if not ev:
            return Answer(question=question, text="No evidence found.", status="abstained", gaps=[question],
                          usage=Usage(retrieval_rounds=1))
        top = ev[0].chunk
        sentence = re.split(r"(?<=[。.])", top.text)[0]
        conflicts = []
        nums = {}
        for e in ev:
            for n in re.findall(r"\d+", e.chunk.text):
                nums.setdefault(n, e.chunk.chunk_id)
        if len(nums) > 1:
            vals = [ConflictValue(value=n, chunk_id=cid) for n, cid in nums.items()]
            conflicts = [Conflict(matter=question, values=vals, winner=vals[0].chunk_id, rule="newer (≥1 year)")]
        return Answer(question=question, text=sentence, status="answered",
                      sentences=[AnswerSentence(text=sentence, citations=[top.chunk_id])],
                      citations=[Citation(chunk_id=top.chunk_id, doc_id=top.doc_id, title=top.title,
                                          quote=top.text)],
                      conflicts=conflicts, usage=Usage(retrieval_rounds=1, llm_calls=0))

    def close(self) -> None:
        self.closed = True


def _articles(row: dict) -> list[dict]:
    """A statute line becomes one chunk per article (with its label); anything else one chunk."""
    pieces = [p.strip() for p in re.split(r"(?=第[一二三四五六七八九十百]+条)", row["text"]) if p.strip()]
    if len(pieces) < 2 and not re.match(r"第\S+条", row["text"]):
        return [row]
    return [{**row, "clause": re.match(r"第\S+?条", p).group(0), "text": p} for p in pieces]


class StubBackend:
    fingerprint = "stub-1"
    system_class = StubSystem

    def __init__(self) -> None:
        self.builds = 0
        self.seeds: list = []

    def build(self, sources, index_dir: Path, *, seed=None, progress=None) -> None:
        self.builds += 1
        self.seeds.append(seed)
        docs = []
        for src in sources:
            src = Path(src)
            files = sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else [src]
            for f in files:
                if f.suffix == ".jsonl":
                    for line in f.read_text("utf-8").splitlines():
                        if line.strip():
                            docs += _articles(json.loads(line))
                else:  # an examples-style document: one chunk per "第N条" line
                    for line in f.read_text("utf-8").splitlines():
                        m = re.match(r"(第\S+条)\s*(.*)", line)
                        if m:
                            docs.append({"id": f.name + m.group(1), "title": f.stem, "clause": m.group(1),
                                         "text": m.group(2), "source": str(f)})
        index_dir.mkdir(parents=True, exist_ok=True)
        (index_dir / "docs.json").write_text(json.dumps(docs, ensure_ascii=False), "utf-8")

    def open(self, index_dir: Path, k: int) -> StubSystem:
        return StubSystem(json.loads((index_dir / "docs.json").read_text("utf-8")))


@pytest.fixture
def stub_backend() -> StubBackend:
    return StubBackend()


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


@pytest.fixture
def jsonl():
    """Write rows as a JSON-lines file: ``jsonl(path, rows) -> path``."""
    return write_jsonl


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A miniature bench folder: a passage set, an article set, and the RGB sets."""
    root = tmp_path / "bench"
    write_jsonl(root / "hotpotqa" / "corpus.jsonl", [
        {"id": "p1", "title": "Paris", "text": "Paris is the capital of France.", "meta": {}},
        {"id": "p2", "title": "Seine", "text": "The Seine flows through Paris.", "meta": {}},
        {"id": "p3", "title": "Berlin", "text": "Berlin is the capital of Germany.", "meta": {}},
        {"id": "p4", "title": "Spree", "text": "The Spree river flows through Berlin.", "meta": {}},
    ])
    write_jsonl(root / "hotpotqa" / "dev.jsonl", [
        {"id": "q1", "question": "Which river flows through the capital of France?", "answers": ["Seine"],
         "gold": ["p1", "p2"], "type": "bridge", "lang": "en"},
        {"id": "q2", "question": "What is the capital of Germany?", "answers": ["Berlin"],
         "gold": ["p3"], "type": "bridge", "lang": "en"},
    ])
    write_jsonl(root / "lecoqa" / "corpus.jsonl", [
        {"id": "中华人民共和国民法典", "title": "中华人民共和国民法典",
         "text": "第一条 为了保护民事主体的合法权益，制定本法。\n\n第二条 民法调整平等主体之间的人身关系和财产关系。", "meta": {}},
        {"id": "个体工商户条例", "title": "个体工商户条例",
         "text": "第二条 有经营能力的公民，依照本条例规定经登记，从事工商业经营的，为个体工商户。", "meta": {}},
    ])
    write_jsonl(root / "lecoqa" / "dev.jsonl", [
        {"id": "l1", "question": "谁可以成为个体工商户？", "answers": ["..."], "gold": ["个体工商户条例第二条"],
         "type": "statute", "lang": "zh"},
    ])
    pos = ["会议在1月3日举行。", "1月3日举行了会议。", "据报道会议于1月3日召开。", "会议1月3日开幕。", "1月3日，会议举行。"]
    neg = [f"无关新闻第{i}篇，雨很大。" for i in range(6)]
    write_jsonl(root / "rgb" / "zh_noise" / "dev.jsonl", [
        {"id": "n1", "question": "会议在哪天举行", "answers": ["1月3日"], "gold": [], "lang": "zh", "type": "zh_noise",
         "positive": pos, "negative": neg}])
    write_jsonl(root / "rgb" / "zh_int" / "dev.jsonl", [
        {"id": "i1", "question": "会议和选举分别在哪天", "answers": ["1月3日", ["12月19日", "12.19"]], "gold": [],
         "lang": "zh", "type": "zh_int", "positive": [pos[:2], ["选举在12月19日举行。"]], "negative": neg}])
    write_jsonl(root / "rgb" / "en_fact" / "dev.jsonl", [
        {"id": "f1", "question": "How many seats does the council have", "answers": ["70"], "fakeanswer": "170",
         "gold": [], "lang": "en", "type": "en_fact", "positive": ["The council has 70 seats."],
         "positive_wrong": ["The council has 170 seats."], "negative": ["Unrelated."]}])
    (root / "README.md").write_text("mini bench", "utf-8")
    return root
