"""Fixtures for runtime tests: a real embedded store holding a small bilingual corpus, the real
Router and Retriever, and a minimal Reasoner that honours the contract (cite the top evidence;
abstain with the question named when there is none). The real Reasoner is used where its own
behaviour (conflict arbitration) is what a test looks at."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from agentic_rag.agents.retriever import Retriever
from agentic_rag.agents.router import Router
from agentic_rag.models.llm import ScriptedLLM
from agentic_rag.runtime import AgentRuntime, Limits
from agentic_rag.store import open_store
from agentic_rag.types import (Answer, AnswerSentence, Chunk, Citation, DocMeta, Document, Edge,
                               Evidence, RouteDecision)

# (doc id, title, publish date, authority, status, language, [(clause, clause_no, text)])
CORPUS = [
    ("medins2023", "某市职工医疗保障办法（2023年）", dt.date(2023, 1, 10), "某市医疗保障局", "active", "zh", [
        ("第十条", "10", "参保职工住院发生的政策范围内医疗费用，报销比例为70%。"),
        ("第十二条", "12", "参保人员应当在出院后5日内提交报销申请材料。"),
    ]),
    ("medins2024", "某市职工医疗保障办法（2024年修订）", dt.date(2024, 3, 1), "某市医疗保障局", "active", "zh", [
        ("第十条", "10", "参保职工住院发生的政策范围内医疗费用，报销比例为80%。"),
        ("第十二条", "12", "参保人员应当在出院后3个工作日内提交报销申请材料。"),
        ("第十五条", "15", "异地就医备案可通过国家医保服务平台办理。"),
    ]),
    ("leave", "员工休假管理规定", dt.date(2022, 6, 1), "人力资源部", "active", "zh", [
        ("第五条", "5", "员工累计工作满1年不满10年的，年休假5天。"),
        ("第六条", "6", "员工请病假须提供医院出具的病假证明。"),
    ]),
    ("travel", "Travel Expense Policy", dt.date(2024, 1, 15), "Finance Department", "active", "en", [
        ("Section 3", "3", "Hotel costs are reimbursed up to 500 yuan per night for business trips."),
        ("Section 4", "4", "Airfare is reimbursed at economy class; receipts are required within 30 days."),
    ]),
]


def build_corpus(store: Any) -> None:
    for doc_id, title, date, authority, status, lang, clauses in CORPUS:
        text = "\n".join(c[2] for c in clauses)
        meta = DocMeta(title=title, authority=authority, publish_date=date, status=status, language=lang)
        doc = Document(doc_id=doc_id, source=f"{doc_id}.txt", text=text, meta=meta,
                       content_hash=hashlib.sha256(text.encode()).hexdigest())
        chunks, pos = [], 0
        for i, (clause, no, body) in enumerate(clauses):
            chunks.append(Chunk(chunk_id=f"{doc_id}:a{no}:0", doc_id=doc_id, ord=i, text=body,
                                clause=clause, clause_no=no, path=[clause], span=(pos, pos + len(body)),
                                title=title, source=doc.source, authority=authority, publish_date=date,
                                status=status, language=lang))
            pos += len(body) + 1
        store.upsert(doc, chunks, [])
    store.add_edges([Edge(src="medins2024", dst="medins2023", kind="SUPERSEDES", phrase="修订")])


class MiniReasoner:
    """The Reasoner contract at its simplest: one sentence per top-2 evidence, cited."""

    def __init__(self) -> None:
        self.calls = 0

    def reason(self, question: str, route: RouteDecision, evidence: list[Evidence]) -> Answer:
        self.calls += 1
        if not evidence:
            return Answer(question=question, text="未找到相关依据。", status="abstained", gaps=[question])
        top = evidence[:2]
        sentences = [AnswerSentence(text=e.chunk.text, citations=[e.chunk_id]) for e in top]
        citations = [Citation(chunk_id=e.chunk_id, doc_id=e.chunk.doc_id, title=e.chunk.title,
                              clause=e.chunk.clause, quote=e.chunk.text) for e in top]
        return Answer(question=question, text="".join(f"{s.text}[{s.citations[0]}]" for s in sentences),
                      status="answered", sentences=sentences, citations=citations)


class CountingRetriever:
    """The real Retriever, counting calls (to prove a blocked query never ran)."""

    def __init__(self, inner: Retriever) -> None:
        self.inner = inner
        self.queries: list[str] = []

    def retrieve(self, route: RouteDecision, k: int | None = None) -> list[Evidence]:
        self.queries.append(route.query)
        return self.inner.retrieve(route, k)


@pytest.fixture(scope="session")
def corpus_store(tmp_path_factory):
    store = open_store(tmp_path_factory.mktemp("index"))
    build_corpus(store)
    yield store
    store.close()


@pytest.fixture(scope="session")
def router():
    return Router()


@pytest.fixture
def make_runtime(corpus_store, router):
    """``make_runtime(llm=None, reasoner=None, router_=None, **limits)`` -> (runtime, counting retriever)."""
    made = []

    def make(llm=None, reasoner=None, tools=None, mode="pipeline", router_=None,
             **limits) -> tuple[AgentRuntime, CountingRetriever]:
        retriever = CountingRetriever(Retriever(corpus_store))
        rt = AgentRuntime(router=router_ or router, retriever=retriever, reasoner=reasoner or MiniReasoner(),
                          store=corpus_store, llm=llm, limits=Limits(**limits), tools=tools, mode=mode)
        made.append(rt)
        return rt, retriever

    yield make
    for rt in made:
        rt.tools.close()


def kind_of(messages: list[dict[str, str]]) -> str:
    """Which prompt a scripted model is looking at (by its output schema's title)."""
    schema_note = messages[-1]["content"] if messages[-1]["role"] == "system" else ""
    for m in reversed(messages):
        if m["role"] == "system" and "JSON schema" in m["content"]:
            schema_note = m["content"]
            break
    try:
        return json.loads(schema_note.split("\n", 1)[1]).get("title", "")
    except (IndexError, ValueError):
        return ""


def scripted(responses: dict[str, Any], default: Any = None) -> ScriptedLLM:
    """A model answering each prompt kind (schema title) from ``responses``: a value, or a
    callable of the messages, or a list consumed one per call (last one repeats). The
    retrieve-or-not gate answers RETRIEVE and the verifier finds nothing unsupported unless a
    test says otherwise."""

    responses = {"RetrieveDecision": {"decision": "RETRIEVE"}, "Verification": {"unsupported": []}, **responses}

    def fn(messages: list[dict[str, str]]) -> Any:
        kind = kind_of(messages)
        r = responses.get(kind, default)
        if isinstance(r, list):
            return r.pop(0) if len(r) > 1 else r[0]
        if callable(r):
            return r(messages)
        if r is None:
            raise AssertionError(f"unexpected prompt kind {kind!r}")
        return r

    return ScriptedLLM(fn)


@pytest.fixture
def script() -> Callable[..., ScriptedLLM]:
    return scripted


class UnsureRouter:
    """The real Router, but always unsure (its default route): what the LLM router is for."""

    def __init__(self, inner: Router) -> None:
        self.inner = inner
        self.tree = inner.tree

    def route(self, question: str) -> RouteDecision:
        return self.inner.default_route(question)

    def from_candidate(self, question: str, candidate: Any) -> RouteDecision:
        return self.inner.from_candidate(question, candidate)


@pytest.fixture
def unsure_router(router):
    return UnsureRouter(router)
