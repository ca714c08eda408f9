"""The agent runtime: drives Router → gates → Retriever → Reasoner as a bounded loop.

Three modes (:data:`Mode`):

- ``pipeline`` — route, retrieve-or-not, then up to ``max_rounds`` rounds of plan → retrieve
  (queries in parallel) → sufficiency; each INSUFFICIENT verdict narrows the next round by the
  missing element. Then the Reasoner answers and the verification gate checks every sentence.
- ``react`` — think → call tools (in parallel) → observe, until the model says it is done.
- ``plan`` — a plan of sub-questions, each executed and checked; the plan may be revised.

Every loop is bounded: ``max_steps`` (6), ``max_rounds`` of retrieval (3), a token budget, a
sufficiency threshold, duplicate-query blocking (the model is told the query already ran and is
shown what it returned), a per-tool timeout, and a per-question deadline (``deadline_s``, 30 s)
after which the LLM is no longer waited for and the deterministic answer from what was found is
returned. Input is bounded too: a question longer than ``max_question_chars`` is refused
(``ValueError``), and queries and plan steps longer than ``max_query_chars`` are cut (a
``truncate`` event). Hitting a cap ends in a *forced final answer*, with
tools disabled, that states what is still missing. Without an LLM every decision is made by the
rules; with one, any invalid or failed LLM call falls back to the rules and says so in the trace.
An abort flag is checked between steps.

The LLM is asked where it can add something, which keeps a pipeline question at about two calls
(``bench/llm_cost.py``): the LLM router only when the rules fell back to the default route;
retrieve-or-not only for a question with no anchor; planning after an INSUFFICIENT verdict (or an
unsure route); one sufficiency judgement per round; verification of text an LLM wrote, or of
sentences the Reasoner's own check flagged (so the LLM may rewrite them from the evidence).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentic_rag.runtime import prompts
from agentic_rag.agents.reasoner.question import analyze, carries
from agentic_rag.agents.sufficiency import Sufficiency, anchors, key_terms, sufficiency_rules
from agentic_rag.runtime.gates import (Gates, citation_of, compose_text, echoes_schema, fitted, named_in_sources,
                                       names_terms, normalize_query, plan_rules, same_answer)
from agentic_rag.models.llm import LLM, LLMCall, LLMFallback, MeteredLLM, redact, structured
from agentic_rag.runtime.memory import QueryRecord, SessionState
from agentic_rag.runtime.tools import Observation, StructuredQueries, ToolRegistry, builtin_tools
from agentic_rag.runtime.trace import Tracer
from agentic_rag.types import Answer, AnswerSentence, Evidence, RouteDecision, Usage

Mode = Literal["pipeline", "react", "plan"]
MODES: tuple[str, ...] = ("pipeline", "react", "plan")


class Limits(BaseModel):
    """The hard bounds of one run (defaults from the issue and the source articles)."""

    max_steps: int = Field(6, ge=1, le=50)
    max_rounds: int = Field(3, ge=1, le=10)
    max_tokens: int = Field(8000, ge=100, description="LLM token budget per question")
    max_llm_calls: int = Field(8, ge=1, le=200, description="LLM calls per question")
    llm_timeout_s: float = Field(60.0, gt=0, le=600, description="per LLM call")
    tool_timeout_s: float = Field(5.0, gt=0)
    sufficiency_threshold: float = Field(0.6, ge=0, le=1)
    k: int = Field(8, ge=1, le=50, description="evidence handed to the Reasoner")
    max_plan_steps: int = Field(4, ge=1, le=8)
    deadline_s: float = Field(30.0, gt=0, le=3600, description="wall-clock limit per question")
    max_question_chars: int = Field(2000, ge=10)
    max_query_chars: int = Field(300, ge=10, description="search queries and plan steps are cut here")
    max_reply_chars: int = Field(32_000, ge=100, description="longer LLM replies are invalid output")
    queries_per_round: int = Field(3, ge=1, le=3, description="search queries run per retrieval round")
    reflection: Literal[0, 1, 2] = Field(
        1, description="0: one round, no sufficiency gate, no LLM writer, the Reasoner's own "
                       "sentence check only; 1: every gate; 2: as 1, plus a sufficiency bar of at "
                       "least 0.8 and every sentence re-verified (by the LLM too, when one runs)")
    latitude: Literal[0, 1, 2] = Field(
        1, description="0: abstain, naming what is missing, unless the evidence covers the whole "
                       "question; 1: answer what was found and name the rest; 2: as 1, and where "
                       "the Reasoner would abstain but passages were found, quote the best of them "
                       "as an answer marked needs_review")

    @classmethod
    def from_settings(cls, settings: Any) -> "Limits":
        rt, rv = settings.runtime, settings.retrieval
        return cls(max_steps=rt.max_steps, max_tokens=rt.max_tokens, tool_timeout_s=rt.tool_timeout_s,
                   max_llm_calls=rt.max_llm_calls, llm_timeout_s=settings.llm.timeout_s,
                   sufficiency_threshold=rt.sufficiency_threshold, max_rounds=rv.max_rounds, k=rv.k,
                   deadline_s=rt.deadline_s, max_question_chars=rt.max_question_chars,
                   max_query_chars=rt.max_query_chars, max_reply_chars=settings.llm.max_reply_chars)

    def with_controls(self, *, retrieval: int | None = None, reflection: int | None = None,
                      latitude: int | None = None) -> "Limits":
        """These limits under the web page's three sliders (None: leave as configured).
        ``retrieval`` 1-4 is retrieval intensity: 1 = one query in one round, 2 = two queries
        per round in up to two rounds, 3 = three and three (the defaults), 4 = three queries in
        up to five rounds. ``reflection`` and ``latitude`` set the fields of the same names.

        >>> Limits().with_controls(retrieval=1).max_rounds
        1
        """
        update: dict[str, Any] = {}
        if retrieval is not None:
            if retrieval not in RETRIEVAL_LEVELS:
                raise ValueError(f"retrieval intensity must be one of 1-4, got {retrieval!r}")
            update["queries_per_round"], update["max_rounds"] = RETRIEVAL_LEVELS[retrieval]
        if reflection is not None:
            update["reflection"] = reflection
        if latitude is not None:
            update["latitude"] = latitude
        return self.model_validate({**self.model_dump(), **update}) if update else self


#: retrieval intensity → (queries per round, retrieval rounds)
RETRIEVAL_LEVELS: dict[int, tuple[int, int]] = {1: (1, 1), 2: (2, 2), 3: (3, 3), 4: (3, 5)}


def check_question(question: str, max_chars: int) -> None:
    """Refuse a question longer than ``max_chars`` (``runtime.max_question_chars``) with a
    ``ValueError`` that says both lengths: past it a run is no longer a question's work."""
    if len(question) > max_chars:
        raise ValueError(f"the question is {len(question)} characters long; the limit is {max_chars} "
                         f"(runtime.max_question_chars)")


class _Aborted(Exception):
    """Raised at a checkpoint after Session.abort(); caught by the runtime, never escapes."""


def _newest(evidence: Sequence[Evidence]) -> dt.date:
    """The latest date a source of ``evidence`` took effect or was published (``date.min``: none says)."""
    return max((d for e in evidence for d in (e.chunk.effective_date, e.chunk.publish_date) if d is not None),
               default=dt.date.min)


class _Run:
    """Mutable per-question state of one run (lives only while the run does)."""

    def __init__(self, question: str, state: SessionState, tracer: Tracer, gates: Gates,
                 llm: MeteredLLM | None, abort: threading.Event, *, deadline_s: float = 30.0,
                 max_query_chars: int = 300) -> None:
        self.question = question
        self.deadline_s = deadline_s
        self.deadline = time.monotonic() + deadline_s
        self.started = time.monotonic()
        self.max_query_chars = max_query_chars
        self.timed_out = False  # the deadline came; the deterministic answer follows
        self.llm_off = False  # react: the model's turns ended (budget, deadline, endpoint)
        self.state = state
        self.tracer = tracer
        self.gates = gates
        self.llm = llm
        self.abort = abort
        self.step = 0
        self.tool_calls = 0
        self.cap: str | None = None  # which bound ended the loop, when one did
        self.route: RouteDecision | None = None
        self.last_sufficiency: Sufficiency | None = None
        self.observations: list[Observation] = []  # the last three, rendered for the model's prompt
        self.notices: list[str] = []

    @property
    def retrieval(self):
        return self.state.retrieval

    @functools.cached_property
    def zh(self) -> bool:
        """Whether the question is Chinese (the language of the notes added to the answer)."""
        return prompts.language_of(self.question) == "zh"

    def checkpoint(self) -> None:
        if self.abort.is_set():
            raise _Aborted()

    def next_step(self) -> None:
        self.checkpoint()
        self.step += 1
        self.tracer.step = self.step

    def left(self) -> float:
        """Seconds until the question's deadline (negative once it has passed)."""
        return self.deadline - time.monotonic()

    def tool_timeout(self, configured: float) -> float:
        """The per-tool timeout, shortened so no call outlives the deadline."""
        return max(0.05, min(configured, self.left()))

    def clip(self, text: str, what: str) -> str:
        """``text`` cut to ``max_query_chars`` (a ``truncate`` event says so): a runaway query,
        plan step or gap must not make embedding, search or the answer text unbounded."""
        if len(text) <= self.max_query_chars:
            return text
        self.tracer.emit("truncate", tool=what, args={"chars": len(text), "kept": self.max_query_chars},
                         detail=f"{what} cut from {len(text)} to {self.max_query_chars} characters")
        return text[:self.max_query_chars]


class AgentRuntime:
    """Runs questions through the agents. The agents are used only through their contracts:
    ``router.route(question) -> RouteDecision``, ``retriever.retrieve(route, k) -> [Evidence]``,
    ``reasoner.reason(question, route, evidence) -> Answer``. A retriever whose ``retrieve``
    only computes in memory (it never waits on I/O, a lock or a server) may say so with an
    attribute ``may_block = False``: a search it runs alone is then called in the calling thread
    instead of a worker thread under the tool timeout (see :mod:`agentic_rag.runtime.tools`).

    >>> rt = AgentRuntime.from_engine(engine, llm=make_llm(settings))   # doctest: +SKIP
    >>> Session(rt).ask("住院报销比例是多少？", mode="react").text       # doctest: +SKIP
    """

    def __init__(self, *, router: Any, retriever: Any, reasoner: Any, store: Any = None,
                 llm: LLM | None = None, limits: Limits | None = None, tools: ToolRegistry | None = None,
                 queries: StructuredQueries | None = None, http_allow: Sequence[str] = (),
                 mode: Mode = "pipeline") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.router = router
        self.retriever = retriever
        self.reasoner = reasoner
        self.store = store
        self.llm = llm
        self.limits = limits or Limits()
        self.mode: Mode = mode
        if tools is None:
            tools = builtin_tools(ToolRegistry(timeout_s=self.limits.tool_timeout_s), retriever=retriever,
                                  router=router, store=store, queries=queries, http_allow=http_allow)
        self.tools = tools

    @classmethod
    def from_engine(cls, engine: Any, *, llm: LLM | None = None, **kwargs: Any) -> "AgentRuntime":
        """Build from an :class:`~agentic_rag.engine.Engine` (its store, agents and settings)."""
        kwargs.setdefault("limits", Limits.from_settings(engine.settings))
        kwargs.setdefault("mode", engine.settings.runtime.mode)
        return cls(router=engine.router, retriever=engine.retriever, reasoner=engine.reasoner,
                   store=engine.store, llm=llm, **kwargs)

    # ------------------------------------------------------------------ entry point
    def run(self, question: str, *, state: SessionState | None = None, mode: Mode | None = None,
            on_event: Callable[..., None] | None = None, abort: threading.Event | None = None,
            llm: LLM | None = None, deadline_s: float | None = None) -> Answer:
        """Answer ``question`` within the limits; ``state`` (a session's memory) is updated in place.
        ``deadline_s`` overrides ``limits.deadline_s`` for this question (None: the limit). A
        question longer than ``limits.max_question_chars`` raises ``ValueError``."""
        mode = mode or self.mode
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        check_question(question, self.limits.max_question_chars)
        if deadline_s is None:
            deadline_s = self.limits.deadline_s
        elif not 0 < deadline_s <= 3600:
            raise ValueError(f"deadline_s must be in (0, 3600] seconds, got {deadline_s!r}")
        fresh = state is None
        state = state or SessionState()
        tracer = Tracer(state.session_id, on_event)
        chosen = llm if llm is not None else self.llm
        meter = None
        if chosen is not None:
            meter = MeteredLLM(chosen, max_tokens=self.limits.max_tokens,
                               deadline=time.monotonic() + deadline_s,
                               max_reply_chars=self.limits.max_reply_chars,
                               max_calls=self.limits.max_llm_calls,
                               call_timeout_s=self.limits.llm_timeout_s,
                               on_call=lambda call: _trace_call(tracer, meter, call))
        gates = Gates(meter, tracer, fact_check=getattr(self.reasoner, "verify", None))
        run = _Run(question, state, tracer, gates, meter, abort or _NEVER,
                   deadline_s=deadline_s, max_query_chars=self.limits.max_query_chars)
        state.status = "running"
        if not fresh:  # a state made for this run has no earlier question to put away
            state.start_question()
        history = state.conversation.render()
        self._remember(run, "user", question)
        try:
            run.checkpoint()
            standalone = self._contextualize(run, question, history)
            route = _clip_route(run, self._route(run, standalone))
            run.route = route
            if not run.gates.should_retrieve(route) and not self._documents_cover(run, route):
                answer = _no_retrieval_answer(route)
            elif mode == "pipeline":
                answer = self._pipeline(run, route)
            elif mode == "react":
                answer = self._react(run, route, history)
            else:
                answer = self._plan(run, route)
            answer = self._latitude(run, answer)
            state.status = "answered"
        except _Aborted:
            answer = self._aborted(run)
            state.status = "aborted"
        answer = self._finish(run, answer)
        self._remember(run, "assistant", answer.text)
        state.answers = [*state.answers[-4:], answer]
        return answer

    # ------------------------------------------------------------------ shared steps
    def _contextualize(self, run: _Run, question: str, history: str) -> str:
        """A follow-up ("那退休人员呢？", "what about 2023?") becomes a standalone question."""
        prev = _previous_question(run.state)
        if not prev or not _looks_like_followup(question):
            return question
        rules = f"{prev} {question}"
        if run.llm is None:
            run.tracer.emit("contextualize", args={"question": rules}, detail="rules")
            return rules
        try:
            out = structured(run.llm, prompts.condense_messages(question, history),
                             prompts.StandaloneQuestion, max_tokens=80)
        except LLMFallback as exc:
            run.tracer.fallback("contextualize", exc.reason, args={"question": rules})
            return rules
        run.tracer.emit("contextualize", args={"question": out.question}, detail="llm")
        return out.question

    def _documents_cover(self, run: _Run, route: RouteDecision) -> bool:
        """After the LLM declined a search the rules would run: whether one search finds
        sources the Reasoner answers from, in which case the documents win and a ``fallback``
        event says so. A wrong skip would lose the answer; the check costs one search and one
        extractive answer, and only where the model and the rules disagree."""
        if not run.gates.declined_by_llm:
            return False
        probe = list(self.retriever.retrieve(route, k=self.limits.k))
        if not probe or self.reasoner.reason(route.question or run.question, route, probe).status == "abstained":
            return False
        run.tracer.fallback("retrieve_or_not", "the LLM said NO_RETRIEVE, but the documents answer "
                                               "the question: retrieving",
                            args={"decision": "RETRIEVE"}, evidence_ids=[e.chunk_id for e in probe][:10])
        return True

    def _route(self, run: _Run, question: str) -> RouteDecision:
        """The deterministic Router first; the LLM router is consulted only when the rules fell
        back to the default route, and its proposal is validated by the Router."""
        with run.tracer.timed() as ms:
            route = self.router.route(question)
        base_query = route.query or route.question
        if route.fallback and run.llm is not None:
            try:
                out = structured(run.llm, prompts.router_messages(question, _intents(self.router)),
                                 prompts.RouterOutput, max_tokens=200)
            except LLMFallback as exc:
                run.tracer.fallback("route", exc.reason)
            else:
                proposed = self._validated(question, route, out)
                if proposed is None:
                    run.tracer.fallback("route", f"the LLM's query {out.query[:60]!r} repeats the output "
                                                 f"schema, not the question: the rules' route stands")
                elif not proposed.fallback:
                    route = proposed
                    query, lost = query_keeping_terms(base_query, proposed.query)
                    if lost:
                        # a model that shortens the question (cuts it mid-word, drops "what city")
                        # searches for something else; what it adds is kept, what it drops is not
                        route = route.model_copy(update={"query": query})
                        run.tracer.fallback("route", f"the LLM's query {proposed.query[:60]!r} drops "
                                                     f"{', '.join(lost[:3])}: the rules' query stands, "
                                                     f"with the words it added", args={"query": query})
                else:
                    run.tracer.fallback("route", "LLM route below the confidence threshold")
        run.tracer.emit("route", duration_ms=ms(), confidence=route.confidence,
                        args={"intent": route.intent, "query": route.query, "version": route.version},
                        fallback="low confidence: default route" if route.fallback else None,
                        detail=f"prompts {prompts.PROMPT_VERSION}")
        return route

    def _validated(self, question: str, route: RouteDecision, out: prompts.RouterOutput) -> RouteDecision | None:
        """The LLM's route over the rules' ``route``, validated by the Router; None when its
        query only repeats the output schema (searched as it is, it would answer something else)."""
        if echoes_schema(out.query, prompts.RouterOutput, key_terms(question)):
            return None
        candidate = _route_from_llm(question, route, out, known=_intents(self.router))
        validate = getattr(self.router, "from_candidate", None)
        return validate(question, candidate.model_dump(mode="json")) if validate else candidate

    def _retrieve(self, run: _Run, route: RouteDecision, queries: Sequence[str], *,
                  timeout_s: float | None = None) -> list[Evidence]:
        """Run each query as its own retrieval, in parallel, each under the tool timeout (cut to
        the time left before the deadline unless ``timeout_s`` says otherwise); a duplicate
        query is blocked and its old result reused."""
        fresh = []
        for q in (run.clip(q, "query") for q in queries):
            rec = run.retrieval.queries.get(normalize_query(q))
            if rec is not None:
                run.tracer.emit("blocked", tool="semantic_search", args={"query": q},
                                evidence_ids=rec.result_ids, detail="duplicate query: already run")
            else:
                fresh.append(q)
        if not fresh:
            return []
        if run.retrieval.rounds >= self.limits.max_rounds:
            run.cap = f"retrieval round cap ({self.limits.max_rounds})"
            run.tracer.emit("blocked", tool="semantic_search", args={"queries": fresh}, detail=run.cap)
            return []
        run.retrieval.rounds += 1
        k = self.limits.k

        legs: dict[str, list[Any]] = {}
        with_trace = getattr(self.retriever, "retrieve_with_trace", None)

        def one(q: str) -> Callable[[], list[Evidence]]:
            def call() -> list[Evidence]:
                # a narrower side query is searched as itself, not re-expanded into the
                # route's sub-questions again
                sub = (route if q == route.query else
                       route.model_copy(update={"query": q, "subqueries": []}))
                if with_trace is None:
                    return list(self.retriever.retrieve(sub, k=k))
                evidence, legs[q] = with_trace(sub, k)  # the Retriever's own steps, kept per query
                return list(evidence)
            return call

        results = self.tools.run_functions([("semantic_search", {"query": q}, one(q)) for q in fresh],
                                           timeout_s=timeout_s or run.tool_timeout(self.tools.timeout_s),
                                           may_block=getattr(self.retriever, "may_block", True))
        found: list[Evidence] = []
        for q, obs in zip(fresh, results):
            for event in legs.get(q, []):
                run.tracer.add(event.model_copy(update={"detail": f"[{q}] {event.detail}".strip()}))
            self._observe(run, obs)
            found.extend(obs.evidence)
        return found

    def _observe(self, run: _Run, obs: Observation) -> None:
        """Record one tool observation: trace, query log, evidence, and a fact card when the top
        result covers the question's key terms. (The Retriever's own steps, when it reports them,
        are ``retrieve`` events just before.)"""
        run.tool_calls += 1
        ids = [e.chunk_id for e in obs.evidence]
        run.tracer.emit("tool", tool=obs.tool, args=obs.args, duration_ms=obs.duration_ms,
                        evidence_ids=ids, detail=obs.error or f"{len(ids) or ('ok' if obs.ok else 0)} results")
        query = str(obs.args.get("query") or "")
        if query:
            run.retrieval.queries[normalize_query(query)] = QueryRecord(
                query=query, tool=obs.tool, result_ids=ids, round=run.retrieval.rounds,
                summary=(obs.content if obs.ok else f"ERROR: {obs.error}")[:600])
        run.retrieval.add_evidence(obs.evidence, max(1, run.retrieval.rounds))
        if obs.evidence:
            top = obs.evidence[0]
            terms = key_terms(run.route.question if run.route else run.question)
            text = top.chunk.text
            if terms and sum(t in text.lower() for t in terms) / len(terms) >= 0.5:
                run.retrieval.add_fact(_first_sentence(text), [top.chunk_id])
        run.observations = [*run.observations[-2:], obs]

    def _reason(self, run: _Run, route: RouteDecision,
                evidence: list[Evidence] | None = None) -> tuple[Answer, list[Evidence]]:
        evidence = run.retrieval.ranked(self.limits.k) if evidence is None else evidence
        with run.tracer.timed() as ms:
            # route.question is the standalone form of a follow-up ("那申请期限呢？" in context)
            answer = self.reasoner.reason(route.question or run.question, route, evidence)
        for event in answer.trace:
            run.tracer.add(event)
        if not any(e.kind == "reason" for e in answer.trace):  # the Reasoner may record its own
            run.tracer.emit("reason", duration_ms=ms(), detail=answer.status,
                            evidence_ids=[c.chunk_id for c in answer.citations])
        return answer.model_copy(update={"trace": [], "question": run.question}), evidence

    # ------------------------------------------------------------------ pipeline
    def _pipeline(self, run: _Run, route: RouteDecision) -> Answer:
        missing = ""
        #: the evidence the rules stopped at, when the LLM's INSUFFICIENT overruled them, and
        #: what the LLM said was missing there
        stopped_at: list[Evidence] | None = None
        claim = ""
        for _ in range(self.limits.max_rounds):
            if self._past_deadline(run, route):
                break
            if run.step >= self.limits.max_steps:
                run.cap = f"step cap ({self.limits.max_steps})"
                break
            run.next_step()
            queries = run.gates.plan(route, missing=missing,
                                     already_run=[r.query for r in run.retrieval.queries.values()])
            queries = queries[:self.limits.queries_per_round]
            if not [q for q in queries if normalize_query(q) not in run.retrieval.queries]:
                run.cap = "no new query left to run"
                break
            self._retrieve(run, route, queries)
            if self.limits.reflection == 0:
                run.tracer.emit("gate", tool="sufficiency", args={"verdict": "SKIPPED"},
                                detail="skipped: reflection depth 0 (one retrieval round)")
                break
            suff = run.gates.sufficiency(route, run.retrieval.ranked(self.limits.k))
            run.last_sufficiency = suff
            if suff.sufficient and suff.confidence >= self._sufficiency_bar():
                run.retrieval.gaps.clear()
                break
            missing = suff.missing_element(route)
            overruled = run.gates.overruled
            if stopped_at is None and overruled is not None and overruled.confidence >= self._sufficiency_bar():
                stopped_at, claim = run.retrieval.ranked(self.limits.k), missing
            run.retrieval.set_gap(missing)
            if run.llm is not None and run.llm.unavailable() and "budget" in (run.llm.unavailable() or ""):
                run.cap = run.llm.unavailable()
                break
        else:
            run.cap = f"retrieval round cap ({self.limits.max_rounds})"
        run.checkpoint()
        self._past_deadline(run, route)  # recorded even when the last round ended on its own
        answer, evidence = self._reason(run, route, self._vindicated(run, route, stopped_at, claim))
        if answer.status == "abstained" and evidence and run.llm is not None and self.limits.reflection > 0:
            written = self._write_over_abstention(run, answer, evidence)
            if written is not None:
                return written
        return self._verify(run, answer, evidence)

    def _vindicated(self, run: _Run, route: RouteDecision, stopped_at: list[Evidence] | None,
                    claim: str) -> list[Evidence] | None:
        """The evidence the Reasoner answers from when the LLM's INSUFFICIENT overruled the
        rules' SUFFICIENT: all of it when what the LLM said was missing (``claim``) is something
        the question asks about and the searches that followed found it, else the evidence the
        rules had stopped at (``stopped_at``) — a wrong INSUFFICIENT brings in passages about
        something else, and the Reasoner must not answer from those where the rules had enough.
        A claim that shares no word with the question ("the version in force" for a question
        that pins no version) is the model's own worry: it holds only when the searches brought
        a source newer than any the rules had (the worry was about time), else what they bring
        is about that worry, not the question."""
        if stopped_at is None:
            return None
        known = {e.chunk_id for e in stopped_at}
        added = [e for e in run.retrieval.ranked(self.limits.k) if e.chunk_id not in known]
        asked = bool(set(key_terms(f"{route.question or run.question} {route.query}")) & set(key_terms(claim)))
        if added and (names_terms(claim, added) if asked else _newest(added) > _newest(stopped_at)):
            return None
        why = "the searches it asked for did not find it" if asked else \
            "the question does not ask about it, and no newer source turned up"
        run.tracer.fallback("sufficiency", f"the LLM called {claim!r} missing where the rules found enough, "
                                           f"and {why}: the Reasoner answers from the evidence the rules "
                                           f"stopped at", evidence_ids=[e.chunk_id for e in added])
        return stopped_at

    def _write_over_abstention(self, run: _Run, answer: Answer, evidence: list[Evidence]) -> Answer | None:
        """The one place the pipeline asks the LLM to write: the Reasoner found passages but no
        sentence in them that answers (a colloquial question, an answer that needs two passages
        put together). The draft is kept only when every sentence is confirmed against the
        passages it cites; otherwise the abstention stands (a ``fallback`` event)."""
        evidence = self._with_planned_hits(run, evidence)
        draft, written = self._write(run, answer.model_copy(update={"gaps": []}), evidence)
        if not written:
            return None
        by_id = {e.chunk_id: e for e in evidence}
        cited = [by_id[c] for c in dict.fromkeys(c for s in draft.sentences for c in s.citations) if c in by_id]
        route = run.route or self.router.route(run.question)
        missing = [a for a in anchors(route) if not named_in_sources(a, cited)]
        terms = key_terms(route.question)
        named = [t for t in terms if named_in_sources(t, cited)]
        if not missing and terms and len(named) * 2 < len(terms):
            missing = [next(t for t in terms if t not in named)]
        asked = analyze(route.question).answer_type
        states = any(carries(asked, s.text, route.question) for s in draft.sentences)
        if missing:
            # an answer about X must cite a source that names X: a grounded sentence from a
            # passage about something else is the commonest way a weak model "answers" —
            # unless it states what is asked and a second, independent answer says the same
            # (a colloquial question names X in words the sources do not use)
            whole = AnswerSentence(text=" ".join(s.text for s in draft.sentences), citations=[])
            if not states or not self._second_opinion(run, answer, evidence)(whole):
                run.tracer.fallback("write", f"the LLM's answer cites no source naming {missing[0]!r}: "
                                             f"the Reasoner's abstention stands")
                return None
        if not states:
            # the Reasoner abstained because no sentence states what is asked (a number, a
            # date); a written sentence that states none does not answer either
            run.tracer.fallback("write", f"the LLM's answer states no {asked.replace('_', ' ')}, which the "
                                         f"question asks for: the Reasoner's abstention stands")
            return None
        checked = run.gates.verify(draft, evidence, written_by_llm=True)
        if checked.sentences and all(s.supported for s in checked.sentences) \
                and any(carries(asked, s.text, route.question) for s in checked.sentences):
            return checked
        run.tracer.fallback("write", "the LLM's answer failed verification: the Reasoner's abstention stands",
                            args={"unsupported": [s.text for s in checked.sentences if not s.supported]})
        return None

    def _with_planned_hits(self, run: _Run, evidence: list[Evidence]) -> list[Evidence]:
        """``evidence`` plus the top hit of each search the LLM planned, when the fused ranking
        left it out: the writer should see what the searches it asked for found (a colloquial
        question's own words rank other passages higher)."""
        known = {e.chunk_id for e in evidence}
        extra = []
        for q in run.gates.planned:
            rec = run.retrieval.queries.get(normalize_query(q))
            top = next((i for i in (rec.result_ids if rec else [])[:1] if i not in known), None)
            if top is not None and top in run.retrieval.evidence:
                known.add(top)
                extra.append(run.retrieval.evidence[top])
        return [*evidence, *extra]

    def _sufficiency_bar(self) -> float:
        """The confidence at which retrieval stops: reflection depth 2 asks for at least 0.8."""
        bar = self.limits.sufficiency_threshold
        return max(bar, 0.8) if self.limits.reflection >= 2 else bar

    def _verify(self, run: _Run, answer: Answer, evidence: list[Evidence]) -> Answer:
        """Gate 4 on the Reasoner's own (extractive) answer, as deep as the reflection depth
        says: 0 keeps the Reasoner's sentence check (the gate is skipped and says so), 1 runs
        the gate, 2 re-checks every sentence as if a model had written it."""
        if self.limits.reflection == 0:
            if answer.sentences:
                run.tracer.emit("verify", args={"unsupported": [s.text for s in answer.sentences
                                                                 if not s.supported]},
                                detail="skipped: reflection depth 0 (the Reasoner's own sentence check)")
            return answer
        # a quote the rules confirm can still answer something else than was asked; where the
        # rules were not sure the evidence suffices, the LLM gets a second look at it — when
        # the run can still fit the two calls a swap needs (the look and a second opinion):
        # one that cannot finish only costs the wait, and the rules' answer stands either way
        second = None
        looks = self.limits.reflection < 2 and all(s.supported for s in answer.sentences)
        if run.llm is not None and not run.gates.sure and answer.sentences and looks:
            short = run.llm.room_for(2)
            if short is None:
                second = self._second_opinion(run, answer, evidence)
            else:
                run.tracer.fallback("verify", f"no second look at the answer the rules confirm: {short}",
                                    args={"calls_needed": 2})
        return run.gates.verify(answer, evidence, written_by_llm=self.limits.reflection >= 2,
                                second_opinion=second)

    def _second_opinion(self, run: _Run, base: Answer,
                        evidence: list[Evidence]) -> Callable[[AnswerSentence], bool]:
        """An independent check of one LLM decision that overrides the rules (self-consistency,
        Wang et al. 2022): the writer answers the question afresh from the same passages shown
        in reverse order, and the decision stands only when that answer says the same thing
        (:func:`same_answer`). A model that knows the answer gives it however the passages are
        ordered; a guess seldom comes out the same twice. One extra call, made only when a
        decision would override the rules."""
        question = run.route.question if run.route and run.route.question else run.question

        said = " ".join(s.text for s in base.sentences)

        def agrees(sentence: AnswerSentence) -> bool:
            short = run.llm.room_for(1) if run.llm is not None else "no LLM"
            if short is not None:
                run.tracer.fallback("second_opinion", f"no second, independent LLM answer: {short}: "
                                                      f"the rules' decision stands",
                                    args={"proposed": sentence.text})
                return False
            draft, written = self._write(run, base.model_copy(update={"gaps": []}), evidence[::-1])
            if written and any(same_answer(sentence.text, s.text, question, instead_of=said)
                               for s in draft.sentences):
                return True
            run.tracer.fallback("second_opinion", "a second, independent LLM answer does not say the same: "
                                                  "the rules' decision stands",
                                args={"proposed": sentence.text,
                                      "second": [s.text for s in draft.sentences] if written else []})
            return False

        return agrees

    # ------------------------------------------------------------------ react
    def _react(self, run: _Run, route: RouteDecision, history: str) -> Answer:
        tools = self.tools.schemas()
        finished = False
        while run.step < self.limits.max_steps:
            if self._past_deadline(run, route):
                break
            run.next_step()
            # a spent token budget (or a dead endpoint) ends the model's turns, not the search:
            # _think falls back to the rules, which go on retrieving until they are satisfied
            action = self._think(run, route, tools, history)
            for fact in action.facts:
                run.retrieval.add_fact(run.clip(fact.text, "fact"), fact.chunk_ids)
            for gap in action.gaps:
                run.retrieval.set_gap(run.clip(gap, "gap"))
            if action.final:
                conf = action.confidence
                run.tracer.emit("think", detail=action.thought[:300], confidence=conf,
                                args={"final": True})
                if conf < self.limits.sufficiency_threshold:
                    run.retrieval.set_gap(_low_confidence_gap(route, run))
                finished = True
                break
            run.tracer.emit("think", detail=action.thought[:300], confidence=action.confidence,
                            args={"tool_calls": [c.model_dump() for c in action.tool_calls]})
            self._act(run, action.tool_calls)
        if not finished and run.cap is None:
            run.cap = f"step cap ({self.limits.max_steps})"
        return self._final(run, route)

    def _think(self, run: _Run, route: RouteDecision, tools: list[dict[str, Any]],
               history: str) -> prompts.AgentStep:
        if run.llm is not None and not run.llm_off:
            msgs = prompts.react_messages(
                run.question, tools, facts=[f"{f.text} {f.chunk_ids}" for f in run.retrieval.facts],
                gaps=run.retrieval.gaps, observations=[o.render()[:900] for o in run.observations], notices=run.notices,
                step=run.step, max_steps=self.limits.max_steps, history=history)
            run.notices = []
            names = set(self.tools.names())

            def known_tools(step: prompts.AgentStep) -> None:
                unknown = [c.tool for c in step.tool_calls if c.tool not in names]
                if unknown:
                    raise ValueError(f"unknown tool(s) {unknown}; use one of {sorted(names)}")

            try:
                return structured(run.llm, msgs, prompts.AgentStep, max_tokens=400, validate=known_tools)
            except LLMFallback as exc:
                run.tracer.fallback("think", exc.reason)
                if run.llm.unavailable():  # budget, deadline or endpoint gone: rules from now on
                    run.llm_off = True
        return self._rules_action(run, route)

    def _rules_action(self, run: _Run, route: RouteDecision) -> prompts.AgentStep:
        """The deterministic agent: search the planned queries until the rules call it sufficient."""
        evidence = run.retrieval.ranked(self.limits.k)
        missing = ""
        if self.limits.reflection == 0 and run.retrieval.rounds >= 1:
            return prompts.AgentStep(thought="rules: one round at reflection depth 0", final=True,
                                     confidence=0.0)
        if run.retrieval.rounds >= self.limits.max_rounds:
            run.cap = f"retrieval round cap ({self.limits.max_rounds})"
            return prompts.AgentStep(thought="rules: retrieval rounds used up", final=True,
                                     confidence=run.last_sufficiency.confidence if run.last_sufficiency else 0.0)
        if evidence:
            suff = sufficiency_rules(route, evidence)
            run.last_sufficiency = suff
            if suff.sufficient and (suff.confidence >= self._sufficiency_bar() or self.limits.reflection == 0):
                return prompts.AgentStep(thought="rules: evidence sufficient", final=True,
                                         confidence=suff.confidence)
            missing = suff.missing
        queries = plan_rules(route, missing=missing,
                             already_run=[r.query for r in run.retrieval.queries.values()])
        tool = "semantic_search" if "semantic_search" in self.tools else "exact_search"
        if not queries or tool not in self.tools:
            return prompts.AgentStep(thought="rules: no new query left", final=True,
                                     confidence=run.last_sufficiency.confidence if run.last_sufficiency else 0.0,
                                     gaps=[missing] if missing else [])
        return prompts.AgentStep(thought=f"rules: search {queries[0]!r}" + (f" for {missing!r}" if missing else ""),
                                 tool_calls=[prompts.ToolCall(tool=tool, args={"query": queries[0]})],
                                 gaps=[missing] if missing else [])

    def _act(self, run: _Run, calls: Sequence[prompts.ToolCall]) -> None:
        """Duplicate and over-cap retrieval calls are answered without running; the rest run in
        parallel under the tool timeout."""
        to_run: list[tuple[str, dict[str, Any]]] = []
        retrieval_round = False
        for call in calls:
            if isinstance(call.args.get("query"), str):
                call = call.model_copy(update={"args": {**call.args,
                                                        "query": run.clip(call.args["query"], "query")}})
            tool = self.tools[call.tool] if call.tool in self.tools else None
            query = str(call.args.get("query") or "")
            if tool is not None and tool.retrieval and query:
                rec = run.retrieval.queries.get(normalize_query(query))
                if rec is not None:
                    run.tracer.emit("blocked", tool=call.tool, args=call.args, evidence_ids=rec.result_ids,
                                    detail="duplicate query: already run")
                    run.notices.append(
                        f"The query {query!r} was already run (step {rec.round}); it returned:\n{rec.summary}\n"
                        f"Judge whether something is still missing, or change the angle. / 该查询已执行过，"
                        f"请基于已有结果判断缺口或换角度。")
                    continue
                if run.retrieval.rounds >= self.limits.max_rounds:
                    run.tracer.emit("blocked", tool=call.tool, args=call.args,
                                    detail=f"retrieval round cap ({self.limits.max_rounds})")
                    run.notices.append(f"Retrieval is capped at {self.limits.max_rounds} rounds: answer now "
                                       f"from what you have and name what is missing.")
                    run.cap = f"retrieval round cap ({self.limits.max_rounds})"
                    continue
                retrieval_round = True
            to_run.append((call.tool, call.args))
        if retrieval_round:
            run.retrieval.rounds += 1
        for obs in self.tools.run(to_run, timeout_s=run.tool_timeout(self.tools.timeout_s)):
            self._observe(run, obs)

    def _final(self, run: _Run, route: RouteDecision) -> Answer:
        """The final answer, tools disabled: the Reasoner's (conflicts arbitrated), rewritten by the
        LLM writer when one is available and its draft validates, then verified."""
        run.checkpoint()
        self._past_deadline(run, route)
        run.next_step()
        answer, evidence = self._reason(run, route)
        written = False
        if run.llm is not None and evidence and answer.status != "abstained" and self.limits.reflection > 0:
            draft, written = self._write(run, answer, evidence)
        if not written:
            return self._verify(run, answer, evidence)
        checked = run.gates.verify(draft, evidence, written_by_llm=True)
        if all(s.supported for s in checked.sentences):
            return checked
        return self._unverified_draft(run, answer, checked, evidence)

    def _unverified_draft(self, run: _Run, base: Answer, checked: Answer,
                          evidence: list[Evidence]) -> Answer:
        """The LLM's answer failed verification. It never replaces a verified deterministic
        answer (a model that obeys an instruction planted in a document writes exactly such
        sentences); otherwise its supported sentences are kept and the rest dropped. Either way
        a ``fallback`` event names the sentences and the choice."""
        flagged = [s.text for s in checked.sentences if not s.supported]
        base = run.gates.verify(base, evidence, written_by_llm=False)
        kept = [s for s in checked.sentences if s.supported]
        if (base.status == "answered" and all(s.supported for s in base.sentences)) or not kept:
            run.tracer.fallback("write", f"the LLM's answer failed verification ({len(flagged)} "
                                         f"unsupported sentence(s)): the deterministic answer is kept",
                                args={"unsupported": flagged})
            return base
        cited = {c for s in kept for c in s.citations}
        citations = [c for c in checked.citations if c.chunk_id in cited]
        run.tracer.fallback("write", f"{len(flagged)} unsupported sentence(s) dropped from the LLM's answer",
                            args={"unsupported": flagged})
        return checked.model_copy(update={"sentences": kept, "citations": citations, "status": "answered",
                                          "text": compose_text(kept, citations, run.question)})

    def _write(self, run: _Run, base: Answer, evidence: list[Evidence]) -> tuple[Answer, bool]:
        """(answer, whether the LLM wrote it)."""
        by_id = {e.chunk_id: e for e in evidence}
        losers = {v.chunk_id for c in base.conflicts for v in c.values if v.chunk_id != c.winner}
        shown: list[Evidence] = []

        def resolve(cite: str) -> str:
            """A cited passage number ("2", "[2]") as its chunk id; a chunk id as itself."""
            bare = cite.strip().strip("[]")
            if bare.isdigit() and 1 <= int(bare) <= len(shown):
                return shown[int(bare) - 1].chunk_id
            return cite

        def grounded(draft: prompts.AnswerDraft) -> None:
            for s in draft.sentences:
                ids = [resolve(c) for c in s.citations]
                unknown = [c for c, i in zip(s.citations, ids) if i not in by_id]
                if unknown:
                    raise ValueError(f"citations {unknown} are not passage numbers")
                if losers and set(ids) <= losers:
                    raise ValueError(f"sentence {s.text[:30]!r} cites only the losing side of a conflict")

        question = run.route.question if run.route else run.question
        facts = [f.text for f in run.retrieval.facts]

        def build(limit: int, max_chars: int) -> prompts.Messages:
            shown[:] = evidence[:limit]
            return prompts.writer_messages(question, shown, conflicts=base.conflicts, facts=facts,
                                           gaps=run.retrieval.gaps, limit=limit, max_chars=max_chars)

        try:
            with run.tracer.timed() as ms:
                msgs = fitted(run.llm, build, 600, limit=12, max_chars=300, schema=prompts.AnswerDraft)
                # the passage numbers (and, for models that copy them, the ids) are the only citations
                schema = prompts.draft_schema([*(str(i) for i in range(1, len(shown) + 1)),
                                               *(e.chunk_id for e in shown)])
                draft = structured(run.llm, msgs, schema, max_tokens=600, validate=grounded)
        except LLMFallback as exc:
            run.tracer.fallback("write", exc.reason)
            return base, False
        sentences = [AnswerSentence(text=_MARKERS.sub("", s.text).strip(),
                                    citations=list(dict.fromkeys(resolve(c) for c in s.citations)))
                     for s in draft.sentences]
        cited = list(dict.fromkeys(c for s in sentences for c in s.citations))
        old = {c.chunk_id: c for c in base.citations}
        citations = [old.get(cid) or citation_of(by_id[cid]) for cid in cited]
        run.tracer.emit("write", duration_ms=ms(), evidence_ids=cited, detail="llm")
        return base.model_copy(update={
            "sentences": sentences, "citations": citations,
            "text": compose_text(sentences, citations, run.question),
            "gaps": list(dict.fromkeys([*base.gaps, *(run.clip(g, "gap") for g in draft.gaps)])),
            "status": "answered"}), True

    # ------------------------------------------------------------------ plan and execute
    def _plan(self, run: _Run, route: RouteDecision) -> Answer:
        steps = self._make_plan(run, route)
        done: list[tuple[str, str]] = []
        retried: set[str] = set()
        while steps:
            if self._past_deadline(run, route):
                if done:  # the steps not reached are gaps; with none done, the whole question was searched
                    for s in steps:
                        run.retrieval.set_gap(s)
                break
            if run.step >= self.limits.max_steps - 1 or run.retrieval.rounds >= self.limits.max_rounds:
                # keep one step for the final answer; unexecuted sub-questions become gaps
                run.cap = (f"step cap ({self.limits.max_steps})" if run.step >= self.limits.max_steps - 1
                           else f"retrieval round cap ({self.limits.max_rounds})")
                for s in steps:
                    run.retrieval.set_gap(s)
                break
            run.next_step()
            sub = steps.pop(0)
            sub_route = self.router.route(sub)
            if not sub_route.slots.years and route.slots.years:  # the question's time anchor holds for every step
                sub_route = sub_route.model_copy(update={"slots": sub_route.slots.model_copy(
                    update={"years": route.slots.years}), "version": route.version})
            queries = plan_rules(sub_route, already_run=[r.query for r in run.retrieval.queries.values()])[
                :min(2, self.limits.queries_per_round)]
            found = self._retrieve(run, sub_route, queries) if queries else []
            suff = run.gates.sufficiency(sub_route, found or run.retrieval.ranked(self.limits.k))
            if suff.sufficient:
                done.append((sub, "covered"))
            else:
                run.retrieval.set_gap(suff.missing or sub)
                done.append((sub, f"missing {suff.missing}"))
                narrower = f"{sub_route.query or sub} {suff.missing}".strip()
                spare = self.limits.max_rounds - run.retrieval.rounds - len(steps)
                if sub not in retried and suff.missing and spare > 0 and self.limits.reflection > 0:  # one narrower retry, if rounds allow
                    retried.add(narrower)
                    steps.insert(0, narrower)
                    run.tracer.emit("plan", args={"steps": steps}, detail="revised: narrower retry")
                    continue
            if steps and run.llm is not None:
                steps = self._check_plan(run, done, steps)
        return self._final(run, route)

    def _make_plan(self, run: _Run, route: RouteDecision) -> list[str]:
        rules = route.subqueries[:self.limits.max_plan_steps] or split_question(route.question)[:self.limits.max_plan_steps]
        rules = [run.clip(s, "plan step") for s in rules]
        if run.llm is None:
            run.tracer.emit("plan", args={"steps": rules}, detail="rules")
            return rules
        try:
            out = structured(run.llm, prompts.plan_steps_messages(route.question or run.question, route),
                             prompts.PlanOutput, max_tokens=200)
        except LLMFallback as exc:
            run.tracer.fallback("plan", exc.reason, args={"steps": rules})
            return rules
        steps = [run.clip(s.strip(), "plan step") for s in out.steps if s.strip()][:self.limits.max_plan_steps]
        run.tracer.emit("plan", args={"steps": steps}, detail="llm")
        return steps

    def _check_plan(self, run: _Run, done: list[tuple[str, str]], steps: list[str]) -> list[str]:
        try:
            out = structured(run.llm, prompts.plan_check_messages(run.question, done, steps),
                             prompts.PlanCheck, max_tokens=200)
        except LLMFallback as exc:
            run.tracer.fallback("plan_check", exc.reason)
            return steps
        if out.keep or not out.revised_steps:
            return steps
        revised = [run.clip(s.strip(), "plan step") for s in out.revised_steps if s.strip()][:self.limits.max_plan_steps]
        run.tracer.emit("plan", args={"steps": revised}, detail="revised by llm")
        return revised

    # ------------------------------------------------------------------ endings
    def _past_deadline(self, run: _Run, route: RouteDecision) -> bool:
        """Whether the question's deadline has passed. The first time it has, the cap is set, a
        ``deadline`` event recorded, and, when nothing was searched yet, one deterministic
        retrieval runs (under the plain tool timeout) so the answer rests on the documents."""
        if run.timed_out:
            return True
        if run.left() > 0:
            return False
        run.timed_out = True
        run.cap = f"question deadline ({run.deadline_s:g} s)"
        run.tracer.emit("deadline", args={"deadline_s": run.deadline_s},
                        detail=f"deadline of {run.deadline_s:g} s reached after "
                               f"{time.monotonic() - run.started:.1f} s: the LLM is no longer waited "
                               f"for; the deterministic answer from what was found follows")
        if run.retrieval.rounds == 0:
            queries = plan_rules(route)[:1]
            if queries:
                self._retrieve(run, route, queries, timeout_s=self.tools.timeout_s)
        return True

    def _latitude(self, run: _Run, answer: Answer) -> Answer:
        """How far the answer may go beyond what the evidence fully covers (``limits.latitude``):
        0 turns a partial or unconfirmed answer into an abstention naming what is missing; 2
        turns an abstention over found passages into their best sentences, marked
        ``needs_review``. Either change is a ``gate`` event (tool ``latitude``)."""
        level = self.limits.latitude
        gaps = list(dict.fromkeys([*answer.gaps, *run.retrieval.gaps]))
        if level == 0 and answer.status in ("answered", "needs_review") and (gaps or answer.status == "needs_review"):
            missing = gaps or [s.text for s in answer.sentences if not s.supported][:2]
            text = (f"证据未完整覆盖这个问题（缺少：{'、'.join(missing)}），按严格的推断范围不作回答。" if run.zh else
                    f"The evidence does not cover the whole question (missing: {', '.join(missing)}), "
                    f"so under strict inference latitude there is no answer.")
            run.tracer.emit("gate", tool="latitude", args={"level": level, "from": answer.status,
                                                           "to": "abstained", "missing": missing},
                            detail="strict: a partial answer becomes an abstention")
            return answer.model_copy(update={"text": text, "status": "abstained", "sentences": [],
                                             "citations": [], "conflicts": [], "gaps": missing})
        evidence = run.retrieval.ranked(self.limits.k) if level == 2 and answer.status == "abstained" else []
        if evidence:
            sentences, citations = [], []
            for ev in evidence[:2]:
                quote = _first_sentence(ev.chunk.text)
                sentences.append(AnswerSentence(text=quote, citations=[ev.chunk_id]))
                citations.append(citation_of(ev).model_copy(update={"quote": quote}))
            run.tracer.emit("gate", tool="latitude", args={"level": level, "from": "abstained",
                                                           "to": "needs_review"},
                            evidence_ids=[c.chunk_id for c in citations],
                            detail="lenient: the closest passages instead of an abstention, to be reviewed")
            lead = "证据不足，以下是最接近的条文，需人工核对：" if run.zh else                 "The evidence is partial; the closest passages, to be reviewed: "
            return answer.model_copy(update={
                "text": lead + compose_text(sentences, citations, run.question), "status": "needs_review",
                "sentences": sentences, "citations": citations, "gaps": gaps or [run.question]})
        return answer

    def _aborted(self, run: _Run) -> Answer:
        r = run.retrieval
        zh = run.zh
        text = (f"已中止：在第 {run.step} 步后停止；已运行 {len(r.queries)} 个查询，找到 {len(r.evidence)} 条证据。"
                if zh else f"Aborted after step {run.step}: {len(r.queries)} queries run, "
                           f"{len(r.evidence)} passages found.")
        run.tracer.emit("abort", detail="aborted between steps", evidence_ids=list(r.evidence)[:20])
        return Answer(question=run.question, text=text, status="aborted",
                      gaps=list(r.gaps) or ([] if r.evidence else [run.question]))

    def _finish(self, run: _Run, answer: Answer) -> Answer:
        """Say what a cap left missing, then stamp trace and usage."""
        gaps = list(dict.fromkeys([*answer.gaps, *run.retrieval.gaps]))
        text = answer.text
        # an abstention already says what is missing in the Reasoner's words, and so does a
        # partial answer for the parts it names ("另外，未找到关于牌照的规定"): the note adds
        # only what the text does not say yet; gaps stay listed
        unsaid = [g for g in gaps if g not in text]
        if answer.status == "answered" and not answer.gaps:
            # the Reasoner answered the whole question: a word of it that the search rules found
            # in no passage ("户口", "I've") is how the question was put, not a part left out
            unsaid = [g for g in unsaid if not _question_words(g, run)]
        if answer.status in ("answered", "needs_review") and run.cap and unsaid:
            note = (f"（检索已停止：{_cap_zh(run.cap)}；仍缺少：{'、'.join(unsaid)}。）" if run.zh else
                    f" (Search stopped: {run.cap}; still missing: {', '.join(unsaid)}.)")
            text = f"{text}{note}"
        elif answer.status in ("answered", "needs_review") and unsaid:
            # an answer that covers only part of the question says which part it could not find
            note = f"（未找到：{'、'.join(unsaid)}。）" if run.zh else f" (Not found: {', '.join(unsaid)}.)"
            text = f"{text}{note}"
        run.tracer.emit("final", detail=answer.status + (f"; {run.cap}" if run.cap else ""),
                        evidence_ids=[c.chunk_id for c in answer.citations],
                        args={"cap": run.cap, "gaps": gaps})
        llm_usage = run.llm.usage if run.llm is not None else _NO_USAGE
        usage = Usage(llm_calls=llm_usage.llm_calls + answer.usage.llm_calls,
                      prompt_tokens=llm_usage.prompt_tokens + answer.usage.prompt_tokens,
                      completion_tokens=llm_usage.completion_tokens + answer.usage.completion_tokens,
                      tool_calls=run.tool_calls, retrieval_rounds=run.retrieval.rounds,
                      llm_ms=round(llm_usage.llm_ms + answer.usage.llm_ms, 1),
                      wall_ms=round((time.monotonic() - run.started) * 1000.0, 1))
        return answer.model_copy(update={"question": run.question, "text": text, "gaps": gaps,
                                         "trace": list(run.tracer.events), "usage": usage,
                                         "route": answer.route or run.route})

    def _remember(self, run: _Run, role: Literal["user", "assistant"], content: str) -> None:
        conv = run.state.conversation
        dropped = conv.add(role, content)
        if not dropped:
            return
        summary = None
        if run.llm is not None and not run.llm.unavailable():
            try:
                summary = structured(run.llm, prompts.summary_messages(
                    conv.summary, [(t.role, t.content[:500]) for t in dropped]),
                    prompts.ConversationSummary, max_tokens=300).summary
            except LLMFallback as exc:
                run.tracer.fallback("summarize", exc.reason)
        conv.fold(dropped, summary)


# ---------------------------------------------------------------------- helpers

_NO_USAGE = Usage()  # a run without an LLM (read only)
_NEVER = threading.Event()  # the abort flag of a run nobody can abort (never set: only read)


def _trace_call(tracer: Tracer, meter: MeteredLLM | None, call: LLMCall) -> None:
    """One ``llm`` trace event per LLM call made: the prompt it answered (by its schema), its
    tokens, time and outcome, and the run's tokens so far. Refused calls make none (the gate's
    ``fallback`` event says why)."""
    if call.outcome == "refused":
        return
    args: dict[str, Any] = {"prompt_tokens": call.prompt_tokens, "completion_tokens": call.completion_tokens,
                            "outcome": call.outcome}
    if meter is not None:
        args["run_tokens"] = meter.tokens
        args["run_calls"] = meter.usage.llm_calls
    tracer.emit("llm", tool=call.schema_name, duration_ms=call.ms, args=args,
                detail=redact(call.outcome + (f": {call.reason}" if call.reason else "")))


_FOLLOWUP = re.compile(r"^\s*(那|那么|还有|另外|再问|它|这个|该|如果是|要是|and\b|what about|how about|and if|same for)", re.I)


def _looks_like_followup(question: str) -> bool:
    q = question.strip()
    if _FOLLOWUP.match(q):
        return True
    return (len(q) <= 8 if prompts.language_of(q) == "zh" else len(q.split()) <= 3) and q.endswith(("呢", "呢？", "?"))


def _previous_question(state: SessionState) -> str | None:
    users = [t.content for t in state.conversation.turns if t.role == "user"]
    return users[-2] if len(users) >= 2 else None  # the last one is the current question


def _intents(router: Any) -> list[str]:
    tree = getattr(router, "tree", None)
    out: list[str] = []

    def walk(nodes: Any, prefix: str) -> None:
        for n in nodes:
            path = f"{prefix}/{n.name}" if prefix else n.name
            out.append(path)
            if len(out) < 60:
                walk(n.children, path)

    if tree is not None:
        walk(tree.nodes, "")
    return out[:60]


def _route_from_llm(question: str, base: RouteDecision, out: prompts.RouterOutput, *,
                    known: Sequence[str] = ()) -> RouteDecision:
    """The LLM's intent and slots over the deterministic route; exact-pattern slots (years,
    clauses) found by the rules are kept when the model drops them. With ``known`` intent
    paths, an intent outside them (a name the model made up or copied from its schema) is
    dropped."""
    s = base.slots
    slots = s.model_copy(update={
        "places": out.places or s.places, "years": out.years or s.years, "persons": out.persons or s.persons,
        "entities": out.entities or s.entities, "amounts": out.amounts or s.amounts,
        "clauses": out.clauses or s.clauses})
    names = {p for path in known for p in path.split("/")}
    intent = [p for part in out.intent for p in part.split("/") if p and (not names or p in names)]
    return base.model_copy(update={"intent": intent or base.intent, "slots": slots, "query": out.query,
                                   "version": out.version or base.version, "confidence": out.confidence,
                                   "fallback": False})


def query_keeping_terms(rules_query: str, proposed: str) -> tuple[str, list[str]]:
    """(the query to search, the key terms of ``rules_query`` that ``proposed`` lost). A proposed
    query that keeps every key term of the rules' query is searched as it is; otherwise the
    rules' query is, followed by the words ``proposed`` adds to it (a rewrite may add the
    documents' words for a colloquial one, but a query without the question's own words finds
    passages about something else)."""
    mine = set(key_terms(rules_query))
    theirs = set(key_terms(proposed))
    lost = [t for t in key_terms(rules_query) if t not in theirs]
    if not lost:
        return proposed, []
    added: list[str] = []
    for word in proposed.split():
        terms = key_terms(word)
        new = [t for t in terms if t not in mine]
        if new:
            added.append(word if len(terms) == 1 else " ".join(new))
            mine.update(new)
    return " ".join([rules_query, *added]), lost


_MARKERS = re.compile(r"\[\d+\]|\[[\w.-]+:[\w.-]+:\d+\]")  # [1] or [doc:clause:n] a model copied

_SPLIT = re.compile(r"[；;]|？|\?|(?:以及|并且|另外|同时)|\band also\b|\bas well as\b")


def split_question(question: str) -> list[str]:
    """Rules for plan mode: split a compound question on question marks, semicolons and
    coordinating phrases; parts too short to search on their own stay with the whole."""
    parts = [p.strip(" ，,。.") for p in _SPLIT.split(question)]
    parts = [p for p in parts if len(p) >= 4]
    return parts if len(parts) >= 2 else [question]


_SENTENCE = re.compile(r"^(.{8,160}?[。！？!?；;]|.{8,160}?\.\s)")


def _first_sentence(text: str) -> str:
    m = _SENTENCE.search(" ".join(text.split()))
    return (m.group(1) if m else " ".join(text.split())[:160]).strip()


def _question_words(gap: str, run: _Run) -> bool:
    """Whether a gap only names search words of the question itself (its key terms, none of them
    a slot value the answer must touch), rather than something a judge named (a version, a body)."""
    words = set(key_terms(run.question))
    slots = set(anchors(run.route)) if run.route is not None else set()
    parts = [p for p in re.split(r"\s*[、,，]\s*", gap) if p]
    return bool(parts) and all(p in words and p not in slots for p in parts)


def _low_confidence_gap(route: RouteDecision, run: _Run) -> str:
    suff = sufficiency_rules(route, run.retrieval.ranked())
    return suff.missing or ("信息充分度不足" if route.language == "zh" else "evidence below the sufficiency threshold")


def _no_retrieval_answer(route: RouteDecision) -> Answer:
    if route.language == "zh":
        text = "这个问题看起来是寒暄或与文档无关，未检索文档。请提出关于已收录文档的问题。"
        gap = "与文档相关的问题"
    else:
        text = ("This looks like small talk rather than a question about the documents, so nothing "
                "was retrieved. Ask about the ingested documents.")
        gap = "a question about the documents"
    return Answer(question=route.question, text=text, status="abstained", gaps=[gap], route=route)


def _clip_route(run: _Run, route: RouteDecision) -> RouteDecision:
    """The route with its query and sub-questions cut to the run's query length."""
    query = run.clip(route.query, "query")
    subs = [run.clip(s, "subquery") for s in route.subqueries]
    if query == route.query and subs == list(route.subqueries):
        return route
    return route.model_copy(update={"query": query, "subqueries": subs})


def _cap_zh(cap: str) -> str:
    return (cap.replace("retrieval round cap", "检索轮数上限").replace("step cap", "步数上限")
            .replace("question deadline", "单题时限")
            .replace("token budget of", "token 预算").replace("spent", "已用完")
            .replace("no new query left to run", "没有新的查询可执行"))
