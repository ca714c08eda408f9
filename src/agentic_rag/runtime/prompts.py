"""Every prompt the engine sends, in one place, versioned, each with its pydantic output schema.

A prompt is a system text (Chinese and English versions; the question's language picks one) plus a
user message built from typed inputs. The model must answer with JSON matching the schema; callers
go through :func:`agentic_rag.models.llm.structured`, which validates, retries once with the error,
and otherwise hands control back to the deterministic implementation.

Bump :data:`PROMPT_VERSION` whenever a text or a schema changes: it is recorded in every trace so
an answer can be traced back to the exact prompt that shaped it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator, model_validator

from agentic_rag.types import Conflict, Evidence, RouteDecision

PROMPT_VERSION = "2026.12-3"

Messages = list[dict[str, str]]
#: a non-empty string; in the JSON schema, so grammar-constrained local models cannot emit ""
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
_CJK = re.compile(r"[\u3400-\u9fff]")


def language_of(text: str) -> str:
    """"zh" when at least a fifth of the letters are CJK, else "en"."""
    letters = "".join(filter(str.isalpha, text))
    if not letters:
        return "zh"
    return "zh" if len(_CJK.findall(letters)) / len(letters) >= 0.2 else "en"


# =========================================================================== output schemas

class RouterOutput(BaseModel):
    """Router: intent path + slots; mapped onto :class:`~agentic_rag.types.RouteDecision`."""

    intent: list[str] = Field(min_length=1, max_length=4)
    places: list[str] = Field(default_factory=list)
    years: list[int] = Field(default_factory=list)
    persons: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    amounts: list[str] = Field(default_factory=list)
    clauses: list[str] = Field(default_factory=list)
    query: str = Field(min_length=1, max_length=200)
    version: str = "latest"
    confidence: float = Field(0.5, ge=0, le=1)

    @field_validator("years")
    @classmethod
    def _plausible_years(cls, v: list[int]) -> list[int]:
        bad = [y for y in v if not 1900 <= y <= 2100]
        if bad:
            raise ValueError(f"years must be four-digit calendar years, got {bad}")
        return v


class RetrieveDecision(BaseModel):
    """Gate 1, retrieve-or-not: the decision only; reasons are forbidden because a model that
    explains tends to leak an unretrieved answer into the reason."""

    decision: Literal["RETRIEVE", "NO_RETRIEVE"]


class RetrievalPlan(BaseModel):
    """Gate 2, retrieval planning: at most three noun-phrase queries with entity/time anchors."""

    #: maxLength is in the JSON schema, so a grammar-constrained model closes each string in
    #: time instead of running into max_tokens mid-string (invalid JSON); a blank query is
    #: dropped below rather than failing the plan (the grammar allows " ")
    queries: list[Annotated[str, StringConstraints(min_length=1, max_length=80)]] = \
        Field(min_length=1, max_length=3)

    @field_validator("queries")
    @classmethod
    def _short_phrases(cls, v: list[str]) -> list[str]:
        out = [q.strip() for q in v if q.strip()]
        if not out:
            raise ValueError("queries must not be empty")
        too_long = [q for q in out if len(q) > 80]
        if too_long:
            raise ValueError(f"each query must be a short noun phrase (≤80 chars): {too_long[0][:40]}…")
        return out


class SufficiencyJudgement(BaseModel):
    """Gate 3, sufficiency: three 1–5 scores, a verdict, and the one most missing element."""

    coverage: int = Field(ge=1, le=5)
    timeliness: int = Field(ge=1, le=5)
    authority: int = Field(ge=1, le=5)
    verdict: Literal["SUFFICIENT", "INSUFFICIENT"]
    missing: str = Field("", max_length=120)

    @model_validator(mode="after")
    def _missing_named(self) -> "SufficiencyJudgement":
        if self.verdict == "INSUFFICIENT" and not self.missing.strip():
            raise ValueError("an INSUFFICIENT verdict must name the one missing element in 'missing'")
        return self


class SentenceFix(BaseModel):
    index: int = Field(ge=1, description="1-based number of the unsupported sentence")
    rewritten: str = Field("", max_length=500,
                           description="the sentence rewritten from the evidence; empty = flag it")
    evidence_ids: list[Annotated[str, StringConstraints(max_length=100)]] = Field(default_factory=list, max_length=3)


class Verification(BaseModel):
    """Gate 4, answer verification and self-correction (VERIFIED_ANSWER / SUPPORT_EVIDENCE /
    CORRECTION_REASON): unsupported sentence numbers, a fix per sentence, and the reason.

    Every list and string is bounded in the schema (and :func:`verification_schema` bounds the
    numbers by the answer's sentences), so a grammar-constrained model closes its reply within
    the tokens the schema needs: unbounded, SmolLM2 listed 1, 2, 3, … 101 as unsupported
    sentences until max_tokens cut the JSON off."""

    unsupported: list[int] = Field(default_factory=list, max_length=10)
    fixes: list[SentenceFix] = Field(default_factory=list, max_length=10)
    correction_reason: str = Field("", max_length=200)


class DraftSentence(BaseModel):
    text: Text
    citations: list[Text] = Field(min_length=1)


class AnswerDraft(BaseModel):
    """The answer writer: sentences, each citing the chunk ids it stands on, and open gaps."""

    sentences: list[DraftSentence] = Field(min_length=1, max_length=10)
    gaps: list[str] = Field(default_factory=list, max_length=5)


class ToolCall(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class FactNote(BaseModel):
    text: str
    chunk_ids: list[str] = Field(default_factory=list)


class AgentStep(BaseModel):
    """One ReAct turn: think, then either call tools (run in parallel) or finish."""

    thought: str = Field("", max_length=600)
    tool_calls: list[ToolCall] = Field(default_factory=list, max_length=3)
    final: bool = False
    confidence: float = Field(0.0, ge=0, le=1, description="how sufficient the evidence is, 0–1")
    facts: list[FactNote] = Field(default_factory=list, max_length=5)
    gaps: list[str] = Field(default_factory=list, max_length=3)

    @model_validator(mode="after")
    def _acts(self) -> "AgentStep":
        if not self.final and not self.tool_calls:
            raise ValueError("either set final=true or give at least one tool call")
        return self


class PlanOutput(BaseModel):
    """Plan-and-Execute: the sub-questions, in order."""

    steps: list[Text] = Field(min_length=1, max_length=4)


class PlanCheck(BaseModel):
    """After each executed sub-question: does the plan still hold?"""

    keep: bool = True
    revised_steps: list[str] = Field(default_factory=list, max_length=4)


class ConversationSummary(BaseModel):
    summary: str = Field(max_length=800)


class StandaloneQuestion(BaseModel):
    question: str = Field(min_length=1, max_length=300)


# =========================================================================== rendering helpers

def render_evidence(evidence: Sequence[Evidence], *, max_chars: int = 300, limit: int = 10,
                    focus: Sequence[str] = (), ids: bool = True) -> str:
    """Evidence as the model sees it: id, source, date, status and a trimmed text, one per line.
    With ``focus`` terms, the shown window of a long passage is the one that holds most of them
    (the clause's number is rarely in its first words). ``ids=False`` numbers the passages
    instead of naming their chunk ids, for prompts whose output never cites them."""
    lines = []
    last_doc = None
    for n, ev in enumerate(list(evidence)[:limit], 1):
        c = ev.chunk
        if c.doc_id != last_doc:  # one source line per run of passages from the same document
            meta = ", ".join(x for x in (
                str(c.publish_date) if c.publish_date else "", c.authority or "",
                c.status if c.status != "active" else "") if x)
            lines.append(f"《{c.title}》" + (f" ({meta})" if meta else ""))
            last_doc = c.doc_id
        text = " ".join(c.text.split())
        label = c.clause or ""
        if label and text.startswith(label):  # "第二条 高温津贴…" already says which clause
            label = ""
        start = _focus_window(text, focus, max_chars) if focus and len(text) > max_chars else 0
        lines.append(f"  [{c.chunk_id if ids else n}] {label + ': ' if label else ''}{'…' if start else ''}"
                     f"{text[start:start + max_chars]}{'…' if len(text) > start + max_chars else ''}")
    return "\n".join(lines) if lines else "(none / 无)"


def _focus_window(text: str, focus: Sequence[str], width: int) -> int:
    """Start of the ``width``-char window of ``text`` containing the most focus-term hits."""
    low = text.lower()
    hits = sorted(i for t in focus if t for i in _find_all(low, t.lower()))
    best, best_n = 0, 0
    for i in hits:  # windows starting a little before each hit
        start = max(0, min(i - width // 5, len(text) - width))
        n = sum(start <= j < start + width for j in hits)
        if n > best_n:
            best, best_n = start, n
    return best


def _find_all(text: str, term: str) -> list[int]:
    out, i = [], text.find(term)
    while i >= 0 and len(out) < 50:
        out.append(i)
        i = text.find(term, i + 1)
    return out


def _sys(lang: str, zh: str, en: str) -> dict[str, str]:
    return {"role": "system", "content": zh if lang == "zh" else en}


def _user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def _route_line(route: RouteDecision) -> str:
    s = route.slots
    anchors = {"places": s.places, "years": s.years, "persons": s.persons,
               "entities": s.entities, "clauses": s.clauses, "amounts": s.amounts}
    shown = "; ".join(f"{k}={v}" for k, v in anchors.items() if v)
    return f"intent={'/'.join(route.intent)}; version={route.version}" + (f"; {shown}" if shown else "")


def _anchor_line(route: RouteDecision) -> str:
    """The route's time and slot anchors, or nothing when it has none (saves tokens)."""
    s = route.slots
    anchors = {"places": s.places, "years": s.years, "persons": s.persons,
               "entities": s.entities, "clauses": s.clauses}
    shown = "; ".join(f"{k}={v}" for k, v in anchors.items() if v)
    if route.version != "latest":
        shown = f"version={route.version}" + (f"; {shown}" if shown else "")
    return f"\nanchors: {shown}" if shown else ""


def fit_prompt(build: Callable[[int, int], Messages], budget: int | None, *, limit: int,
               max_chars: int, schema: type[BaseModel] | None = None) -> Messages:
    """``build(limit, max_chars)`` sized to ``budget`` prompt tokens (None: as asked): quotes are
    shortened first (to 120 characters), then passages dropped from the bottom of the ranking.
    Raises :class:`PromptTooLarge` when even one short quote does not fit, so the caller runs
    its rules instead of sending a prompt the model would truncate."""
    from agentic_rag.models.llm import _estimate_messages, with_schema

    while True:
        msgs = build(limit, max_chars)
        if budget is None or _estimate_messages(with_schema(msgs, schema)) <= budget:
            return msgs
        if max_chars > 120:
            max_chars = max(120, int(max_chars * 0.7))
        elif limit > 1:
            limit -= 1
        else:
            raise PromptTooLarge(f"the prompt needs more than the {budget} tokens left for it "
                                 f"(llm.context_tokens, runtime.max_tokens)")


class PromptTooLarge(ValueError):
    """No form of a prompt fits the tokens left for it."""


def verification_schema(sentences: int) -> type[Verification]:
    """:class:`Verification` for an answer of ``sentences`` sentences: each sentence number is
    one of 1..n, and at most n are listed or fixed. In the JSON schema, so a grammar-constrained
    model cannot count on past the answer.

    >>> verification_schema(2).model_json_schema()["properties"]["unsupported"]["maxItems"]
    2
    """
    from pydantic import create_model

    n = max(1, sentences)
    number = Literal[tuple(range(1, n + 1))]  # type: ignore[valid-type]
    fix = create_model("SentenceFix", __base__=SentenceFix, index=(number, ...))
    return create_model("Verification", __base__=Verification,
                        unsupported=(list[number], Field(default_factory=list, max_length=n)),
                        fixes=(list[fix], Field(default_factory=list, max_length=n)))  # type: ignore[valid-type]


def draft_schema(citable: Sequence[str]) -> type[AnswerDraft]:
    """:class:`AnswerDraft` whose citations must be one of ``citable`` (in the JSON schema as an
    enum, so a grammar-constrained model cannot cite anything else)."""
    from pydantic import create_model

    allowed = tuple(dict.fromkeys(citable))
    if not allowed:
        return AnswerDraft
    cite = Literal[allowed]  # type: ignore[valid-type]
    sentence = create_model("DraftSentence", __base__=DraftSentence,
                            citations=(list[cite], Field(min_length=1)))  # type: ignore[valid-type]
    return create_model("AnswerDraft", __base__=AnswerDraft,
                        sentences=(list[sentence], Field(min_length=1, max_length=10)))  # type: ignore[valid-type]


# =========================================================================== the prompts

def router_messages(question: str, intents: Sequence[str] = ()) -> Messages:
    lang = language_of(question)
    known = ", ".join(intents) if intents else "general"
    return [
        _sys(lang,
             "你是问题路由器。把用户问题归入意图路径（从给定意图中选，由粗到细），抽取槽位：地点、年份、"
             "人员类别、实体（政策/文件/产品名）、金额、条款引用（如第七条）；给出用于检索的规范化查询"
             "（去掉口语词）；version 为 \"latest\" 或问题指定的年份。不回答问题本身。",
             "You route questions. Put the question on an intent path (choose from the given intents, "
             "coarse to fine) and extract slots: places, years, person categories, entities (policy, "
             "document or product names), amounts, clause references (e.g. Article 7); give a normalized "
             "search query (no filler words); version is \"latest\" or the year the question pins. "
             "Do not answer the question."),
        _user(f"intents: {known}\nquestion: {question}"),
    ]


def retrieve_messages(question: str) -> Messages:
    lang = language_of(question)
    return [
        _sys(lang,
             "你是一个严谨的知识助手。请判断：1) 问题是否涉及时效性强的事实（政策、数字、事件）；"
             "2) 是否涉及专业领域的具体规定；3) 是否只是寒暄或可用常识直接回答。"
             "综合给出唯一决策 RETRIEVE 或 NO_RETRIEVE。禁止解释原因，只输出决策。",
             "You are a careful knowledge assistant. Judge: 1) does the question involve time-sensitive "
             "facts (policies, figures, events); 2) specific domain rules; 3) is it small talk or common "
             "knowledge. Give one decision: RETRIEVE or NO_RETRIEVE. Do not explain; output the decision only."),
        _user(question),
    ]


def plan_messages(route: RouteDecision, *, missing: str = "", already_run: Sequence[str] = ()) -> Messages:
    lang = language_of(route.question)
    extra = ""
    if missing:
        extra += ("\n上一轮缺失的要素：" if lang == "zh" else "\nMissing after the last round: ") + missing
    if already_run:
        extra += ("\n已执行的查询（不要重复）：" if lang == "zh" else "\nQueries already run (do not repeat): ") \
            + " | ".join(already_run)
    return [
        _sys(lang,
             "你已决定对问题执行检索。生成最多 3 个精准检索短语：必须是名词性短语（如“医保目录 2024年”“第十二条 "
             "报销比例”），不要动词或形容词；尽量带时间锚点（年份、最新版）或来源/实体锚点；必须与问题中的核心"
             "主语直接相关，禁止引入问题中没有的新实体。",
             "You decided to retrieve. Write at most 3 precise search phrases: noun phrases only (e.g. "
             "\"GDPR Article 32\", \"reimbursement rate 2024\"), no verbs or adjectives; carry a time anchor "
             "(year, latest) or a source/entity anchor where possible; stay tied to the question's core "
             "subject and never introduce entities the question does not mention."),
        _user(f"question: {route.question}\nroute: {_route_line(route)}{extra}"),
    ]


def sufficiency_messages(route: RouteDecision, evidence: Sequence[Evidence],
                         focus: Sequence[str] = (), *, limit: int = 6, max_chars: int = 300) -> Messages:
    lang = language_of(route.question)
    evidence = list(evidence)[:limit]  # the judgement is about the top of the ranking
    return [
        _sys(lang,
             "评估检索结果能否回答问题，各打 1–5 分：coverage 问题的每个要素是否有直接对应；timeliness "
             "时间/版本是否符合要求（废止、被替代的低分）；authority 来源等级是否合适。verdict 为 SUFFICIENT 或 "
             "INSUFFICIENT；不足时在 missing 写出最缺的 1 个要素。",
             "Judge whether the results answer the question; score 1–5: coverage (every element of the "
             "question directly matched), timeliness (dates/versions meet the question; superseded or "
             "repealed score low), authority (right standing of the source). verdict SUFFICIENT or "
             "INSUFFICIENT; if insufficient, name the single most missing element in 'missing'."),
        _user(f"question: {route.question}{_anchor_line(route)}\n"
              f"results:\n{render_evidence(evidence, max_chars=max_chars, limit=limit, focus=focus, ids=False)}"),
    ]


def verify_messages(question: str, sentences: Sequence[tuple[str, Sequence[str]]],
                    evidence: Sequence[Evidence], *, limit: int = 10, max_chars: int = 400) -> Messages:
    lang = language_of(question)
    numbered = "\n".join(f"{i}. {text} [{', '.join(cites)}]" for i, (text, cites) in enumerate(sentences, 1))
    # only the passages the answer cites: the check is against them, and it keeps the prompt short
    cited = {c for _, cites in sentences for c in cites}
    evidence = [e for e in evidence if e.chunk_id in cited] or list(evidence)
    return [
        _sys(lang,
             "你已生成以下答案。执行核验：答案中的每个事实性陈述（数字、名称、日期、期限、因果）是否能在其"
             "引用的检索结果中找到直接、无歧义的支持？在 unsupported 中列出未获支持的句子编号；对每个未获支持"
             "的句子给出 fix：能依据检索结果改写的，写出改写句和依据的片段 ID；不能的，rewritten 留空（标记）。"
             "correction_reason 简述原因（如“原答案称5日，片段A为3个工作日”）。全部通过则 unsupported 为空。",
             "You wrote the answer below. Verify it: is every factual statement (numbers, names, dates, "
             "durations, causes) directly and unambiguously supported by the passages it cites? List the "
             "numbers of unsupported sentences in 'unsupported'; for each give a fix: a rewrite grounded in "
             "the passages with their ids, or an empty rewrite to flag it. 'correction_reason' says why "
             "(e.g. 'answer said 5 days, passage A says 3 working days'). If all pass, 'unsupported' is empty."),
        _user(f"question: {question}\nanswer:\n{numbered}\npassages:\n"
              f"{render_evidence(evidence, max_chars=max_chars, limit=limit)}"),
    ]


def writer_messages(question: str, evidence: Sequence[Evidence], *, conflicts: Sequence[Conflict] = (),
                    facts: Sequence[str] = (), gaps: Sequence[str] = (), limit: int = 12,
                    max_chars: int = 300) -> Messages:
    """The answer writer's prompt: the passages as short quotes numbered [1]..[n] (the numbers
    are what the model cites, listed explicitly; :func:`draft_schema` makes them its only
    choices)."""
    lang = language_of(question)
    shown = list(evidence)[:limit]
    number = {e.chunk_id: str(i) for i, e in enumerate(shown, 1)}
    notes = ""
    if conflicts:
        notes += "\nconflicts (use the winner, say why):\n" + "\n".join(
            f"- {c.matter}: winner [{number.get(c.winner, c.winner)}] by rule '{c.rule}'; values "
            + ", ".join(f"{v.value} [{number.get(v.chunk_id, v.chunk_id)}]" for v in c.values) for c in conflicts)
    if facts:
        notes += "\nconfirmed facts:\n" + "\n".join(f"- {f}" for f in facts)
    if gaps:
        notes += "\nopen gaps:\n" + "\n".join(f"- {g}" for g in gaps)
    return [
        _sys(lang,
             "只依据给定片段回答问题。每句话必须在 citations 中引用支撑它的片段编号（方括号中的数字）；"
             "数字、期限、日期照抄原文，不换算、不推测。来源冲突时采用 winner 并说明依据的规则。片段未覆盖的"
             "内容不要写，而是列入 gaps。",
             "Answer only from the given passages. Every sentence must cite, in 'citations', the numbers of "
             "the passages that support it (the bracketed numbers); copy numbers, durations and dates "
             "verbatim, never convert or guess. When sources conflict, use the winner and name the rule. "
             "Whatever the passages do not cover goes into 'gaps', not into the answer."),
        _user(f"question: {question}{notes}\npassages:\n"
              f"{render_evidence(shown, limit=limit, max_chars=max_chars, ids=False)}\n"
              f"citable: {', '.join(number.values()) or '(none)'}"),
    ]


def react_messages(question: str, tools: Sequence[dict[str, Any]], *, facts: Sequence[str],
                   gaps: Sequence[str], observations: Sequence[str], notices: Sequence[str],
                   step: int, max_steps: int, history: str = "") -> Messages:
    lang = language_of(question)
    tool_lines = "\n".join(f"- {t['name']}: {t['description']} params={t['parameters'].get('properties', {})}"
                           for t in tools)
    state = (f"step {step}/{max_steps}\n"
             + ("conversation so far:\n" + history + "\n" if history else "")
             + "confirmed facts:\n" + ("\n".join(f"- {f}" for f in facts) or "(none)")
             + "\nopen gaps:\n" + ("\n".join(f"- {g}" for g in gaps) or "(none)")
             + "\nrecent observations:\n" + ("\n".join(observations) or "(none)")
             + ("\nnotices:\n" + "\n".join(notices) if notices else ""))
    return [
        _sys(lang,
             "你是检索型问答代理，循环执行：思考 → 调用工具 → 观察。每轮先判断还缺什么信息，再决定调用哪些工具"
             "（互不依赖的调用可以一次给出，最多 3 个，会并行执行）；不要重复已经执行过的查询，换角度或换工具。"
             "把已确认的事实（附片段 ID）写入 facts，把仍缺的信息写入 gaps。信息足够时设 final=true，并给出 "
             "0–1 的 confidence（信息充分度）。",
             "You are a retrieval agent looping think → call tools → observe. Each turn, decide what is still "
             "missing, then which tools to call (independent calls may be given together, at most 3, run in "
             "parallel); never repeat a query already run: change the angle or the tool. Put confirmed "
             "facts (with chunk ids) in 'facts' and what is still missing in 'gaps'. When the information "
             "suffices set final=true with a 0–1 'confidence' (how sufficient the evidence is)."),
        _user(f"question: {question}\ntools:\n{tool_lines}\n{state}"),
    ]


def plan_steps_messages(question: str, route: RouteDecision) -> Messages:
    lang = language_of(question)
    return [
        _sys(lang,
             "把问题拆成最多 4 个按顺序执行的检索子问题，每个子问题独立可检索、带上问题中的实体和时间锚点；"
             "简单问题只给 1 个。",
             "Split the question into at most 4 ordered sub-questions, each answerable by one search and "
             "carrying the question's entities and time anchors; a simple question gets exactly 1."),
        _user(f"question: {question}\nroute: {_route_line(route)}"),
    ]


def plan_check_messages(question: str, done: Sequence[tuple[str, str]], remaining: Sequence[str]) -> Messages:
    lang = language_of(question)
    done_lines = "\n".join(f"- {q}: {summary}" for q, summary in done) or "(none)"
    return [
        _sys(lang,
             "计划执行了一步。判断剩余计划是否仍然成立：成立则 keep=true；否则 keep=false，并在 revised_steps "
             "中给出新的剩余子问题（可追加、删减、调序，最多 4 个）。",
             "One plan step ran. Does the remaining plan still hold? If so keep=true; otherwise keep=false "
             "and give the new remaining sub-questions in revised_steps (add, drop or reorder; at most 4)."),
        _user(f"question: {question}\ndone:\n{done_lines}\nremaining:\n" + ("\n".join(f"- {s}" for s in remaining) or "(none)")),
    ]


def summary_messages(previous: str, turns: Sequence[tuple[str, str]]) -> Messages:
    text = "\n".join(f"{role}: {content}" for role, content in turns)
    lang = language_of(text or previous)
    return [
        _sys(lang, "把已有摘要和以下对话合并成一段不超过 200 字的摘要，保留实体、数字和用户关心的问题。",
             "Merge the existing summary and the turns below into one summary of at most 120 words; keep "
             "entities, figures and what the user cares about."),
        _user(f"summary: {previous or '(none)'}\nturns:\n{text}"),
    ]


def condense_messages(question: str, history: str) -> Messages:
    lang = language_of(question)
    return [
        _sys(lang, "结合对话历史，把追问改写成一个独立、完整的问题（补全省略的主语、地点、时间）。只改写，不回答。",
             "Using the conversation, rewrite the follow-up as one standalone question (fill in the "
             "omitted subject, place, time). Rewrite only; do not answer."),
        _user(f"conversation:\n{history}\nfollow-up: {question}"),
    ]


# =========================================================================== reports

class ReportWording(BaseModel):
    """A report step's lines reworded: as many lines, in the same order."""

    lines: list[Text] = Field(min_length=1, max_length=60)


def report_wording_messages(lines: Sequence[str], lang: str) -> Messages:
    """Reword the lines of one report step; each must keep every number, date and name exactly
    (each is fact-checked against the clauses it cites, and a line that fails keeps the rules'
    wording)."""
    numbered = "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    return [_sys(lang,
                 "你负责润色一份政策报告中的句子。逐句改写得更通顺，不增删事实：每个数字、日期、期限、条款号和"
                 "名称必须原样保留，不得加入原句没有的内容。按原顺序返回同样数量的句子，JSON：{\"lines\": [...]}。",
                 "You polish the sentences of a policy report. Reword each line to read well without adding "
                 "or dropping facts: keep every number, date, duration, clause label and name exactly; add "
                 "nothing the line does not say. Return as many lines, in order, as JSON: {\"lines\": [...]}."),
            _user(numbered)]
