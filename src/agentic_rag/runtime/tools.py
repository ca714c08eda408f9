"""The tool registry: typed Python functions exposed to the agent as JSON-schema tools.

A tool is declared from a function; its parameters model (and so the JSON schema the model sees)
is derived from the signature, its description from the docstring::

    registry = ToolRegistry()

    @registry.tool
    def exact_search(query: str, top_k: int = 5) -> list[Evidence]:
        "Full-text search for exact wording: model numbers, names, clause numbers."

Calls go through :meth:`ToolRegistry.run`: arguments are validated, independent calls run in
parallel, each in a daemon thread of its own (threads are reused from call to call), and each
has a timeout (default 5 s); a call still running at its timeout is abandoned, and the process
never waits for it at exit. A tool registered with ``may_block=False`` declares that it only
computes in process memory (it never waits on I/O, a lock, a server or another process), so it
has nothing to time out: when it is the only call of a batch it runs in the calling thread,
which spares the hand-over to a worker thread and back (tens of microseconds, more than a no-op
step's own work); beside other calls it runs in parallel with them like any other. Anything the
*model* caused — an unknown tool, bad arguments, a timeout, a refused host, a failing backend —
comes back as an :class:`Observation` the model can react to; only programming errors in
declaring tools raise.

Built-ins (:func:`builtin_tools`): ``semantic_search``, ``exact_search``, ``graph_lookup``,
``structured_query`` (named, parameterized SQL registered by the user; never free SQL) and
``http_get`` (allow-listed hosts and ports only).
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from queue import SimpleQueue
from typing import Any, get_type_hints
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from agentic_rag.errors import AragError, ConfigError, MissingExtraError, ToolError
from agentic_rag.types import Evidence, RouteDecision

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_OBS_CHARS = 150  # per item shown to the model: enough to judge, cheap in tokens


class Observation(BaseModel):
    """What a tool call returned, as the model and the trace see it."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool = True
    content: str = ""  # compact text shown to the model
    evidence: list[Evidence] = Field(default_factory=list)
    data: Any = None  # structured result (rows, JSON) for non-evidence tools
    error: str | None = None
    duration_ms: float = 0.0

    def render(self) -> str:
        head = f"{self.tool}({json.dumps(self.args, ensure_ascii=False)})"
        return f"{head} -> ERROR: {self.error}" if self.error else f"{head} ->\n{self.content}"


class Tool(BaseModel):
    """One registered tool."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    fn: Callable[..., Any]
    params: type[BaseModel]
    retrieval: bool = False  # counts against the retrieval-round cap and duplicate blocking
    may_block: bool = True  # False: in-process work only, run in the caller's thread when alone

    def schema(self) -> dict[str, Any]:
        """OpenAI-style function schema."""
        params = self.params.model_json_schema()
        params.pop("title", None)
        return {"name": self.name, "description": self.description, "parameters": params}


def _params_model(fn: Callable[..., Any], name: str) -> type[BaseModel]:
    """A pydantic model of ``fn``'s parameters; every parameter must be annotated."""
    sig = inspect.signature(fn)
    hints = get_type_hints(fn)
    fields: dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ToolError(f"tool {name!r}: *args/**kwargs cannot be described to a model")
        if p.name not in hints:
            raise ToolError(f"tool {name!r}: parameter {p.name!r} needs a type annotation")
        default = ... if p.default is inspect.Parameter.empty else p.default
        fields[p.name] = (hints[p.name], default)
    return create_model(f"{name}_params", __config__=ConfigDict(extra="forbid"), **fields)


class ToolRegistry:
    """Named tools with derived JSON schemas, run with validation, parallelism and timeouts."""

    def __init__(self, *, timeout_s: float = 5.0) -> None:
        if timeout_s <= 0:
            raise ConfigError(f"tool timeout must be > 0 seconds, got {timeout_s}")
        self.timeout_s = timeout_s
        self._tools: dict[str, Tool] = {}
        self._workers = _Workers()

    def register(self, fn: Callable[..., Any], *, name: str | None = None,
                 description: str | None = None, retrieval: bool = False, may_block: bool = True) -> Tool:
        """Register ``fn`` as a tool. ``may_block=False`` declares that it never waits on
        anything outside the process's memory (see the module docstring): alone in a batch it
        then runs in the calling thread, where no timeout can stop it."""
        name = name or fn.__name__
        if not _NAME.match(name):
            raise ToolError(f"tool name {name!r} must be an identifier of at most 64 characters")
        if name in self._tools:
            raise ToolError(f"a tool named {name!r} is already registered")
        desc = description or inspect.getdoc(fn) or ""
        if not desc.strip():
            raise ToolError(f"tool {name!r} needs a description (docstring): the model chooses by it")
        tool = Tool(name=name, description=" ".join(desc.split()), fn=fn,
                    params=_params_model(fn, name), retrieval=retrieval, may_block=may_block)
        self._tools[name] = tool
        return tool

    def tool(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator form of :meth:`register`."""
        self.register(fn)
        return fn

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def names(self) -> list[str]:
        return list(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        return [t.schema() for t in self._tools.values()]

    def run(self, calls: Sequence[tuple[str, dict[str, Any]]], *,
            timeout_s: float | None = None) -> list[Observation]:
        """Run independent calls in parallel; results in the order of ``calls``."""
        prepared: list[_Prepared | Observation] = []
        for name, args in calls:
            item = self._prepare(name, args)
            if isinstance(item, Observation):
                prepared.append(item)
            else:
                tool, params = item
                prepared.append((tool.name, params.model_dump(mode="json"),
                                 lambda fn=tool.fn, kw=params.model_dump(): fn(**kw), tool.may_block))
        return self._execute(prepared, timeout_s)

    def run_functions(self, calls: Sequence[tuple[str, dict[str, Any], Callable[[], Any]]], *,
                      timeout_s: float | None = None, may_block: bool = True) -> list[Observation]:
        """Run already-bound calls (``(tool name, args shown, thunk)``) with the same parallelism,
        timeout and observation rules as model-issued tool calls; the runtime uses it for the
        retrievals it plans itself. ``may_block=False`` declares every thunk in-process work, as
        :meth:`register` does for a tool."""
        return self._execute([(name, args, thunk, may_block) for name, args, thunk in calls], timeout_s)

    def _execute(self, prepared: Sequence[_Prepared | Observation],
                 timeout_s: float | None) -> list[Observation]:
        timeout = timeout_s or self.timeout_s
        runnable = [item for item in prepared if not isinstance(item, Observation)]
        if len(runnable) == 1 and not runnable[0][3]:
            # one call that cannot block: a worker thread would only add the hand-over
            return [item if isinstance(item, Observation) else _run_inline(item) for item in prepared]
        calls = {}
        starts = {}
        for i, item in enumerate(prepared):
            if not isinstance(item, Observation):
                starts[i] = time.perf_counter()
                calls[i] = self._workers.submit(item[2])
        out: list[Observation] = []
        deadline = time.perf_counter() + timeout
        for i, item in enumerate(prepared):
            if isinstance(item, Observation):
                out.append(item)
                continue
            name, args = item[0], item[1]
            try:
                # all calls started together, so they share one deadline
                result = calls[i].result(timeout=max(0.0, deadline - time.perf_counter()))
            except FutureTimeout:
                out.append(Observation(tool=name, args=args, ok=False,
                                       error=f"timed out after {timeout:g} s; continue with what you "
                                             f"have or try another query / 超时，请基于已有结果继续或换查询",
                                       duration_ms=timeout * 1000))
                continue
            except _BACKEND_ERRORS as exc:
                out.append(_failed(name, args, exc, starts[i]))
                continue
            obs = _observe(name, args, result)
            obs.duration_ms = (time.perf_counter() - starts[i]) * 1000
            out.append(obs)
        return out

    def _prepare(self, name: str, args: dict[str, Any]) -> tuple[Tool, BaseModel] | Observation:
        tool = self._tools.get(name)
        if tool is None:
            return Observation(tool=name, args=args, ok=False,
                               error=f"unknown tool; available: {', '.join(self._tools)}")
        try:
            return tool, tool.params.model_validate(args)
        except ValidationError as exc:
            err = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
            return Observation(tool=name, args=args, ok=False, error=f"invalid arguments: {err}")

    def close(self) -> None:
        """Stop the idle worker threads (the registry stays usable: a later call starts one)."""
        self._workers.close()


#: a call ready to run: (tool name, arguments shown, thunk, whether it may block)
_Prepared = tuple[str, dict[str, Any], Callable[[], Any], bool]

#: what a failing backend raises: an observation for the model, not a crash
_BACKEND_ERRORS = (AragError, OSError, ValueError, LookupError, sqlite3.Error)


def _failed(name: str, args: dict[str, Any], exc: BaseException, start: float) -> Observation:
    return Observation(tool=name, args=args, ok=False, error=f"{type(exc).__name__}: {exc}",
                       duration_ms=(time.perf_counter() - start) * 1000)


def _run_inline(item: _Prepared) -> Observation:
    """A call that cannot block, run in the calling thread (errors as in a worker's call)."""
    name, args, thunk, _ = item
    start = time.perf_counter()
    try:
        result = thunk()
    except _BACKEND_ERRORS as exc:
        return _failed(name, args, exc, start)
    obs = _observe(name, args, result)
    obs.duration_ms = (time.perf_counter() - start) * 1000
    return obs


#: idle worker threads a registry keeps for its next calls: enough for a round of parallel
#: queries (``queries_per_round`` ≤ 3) and a model's parallel tool calls; one beyond it is
#: started for the call and ends after it
_IDLE_WORKERS = 8


class _Call:
    """One call handed to a worker thread: a lighter ``Future`` (one lock, released once the
    outcome is in), since the runtime waits on one for every search it runs."""

    __slots__ = ("thunk", "_value", "_error", "_done")

    def __init__(self, thunk: Callable[[], Any]) -> None:
        self.thunk: Callable[[], Any] | None = thunk
        self._value: Any = None
        self._error: BaseException | None = None
        self._done = threading.Lock()
        self._done.acquire()

    def run(self) -> None:
        try:
            self._value = self.thunk()  # type: ignore[misc]
        except BaseException as exc:  # handed to the caller, who decides what is an observation
            self._error = exc
        self.thunk = None

    def finish(self) -> None:
        self._done.release()

    def result(self, timeout: float) -> Any:
        """The call's return value (or its exception, raised); ``FutureTimeout`` if it has not
        finished within ``timeout`` seconds."""
        if not self._done.acquire(timeout=timeout):
            raise FutureTimeout()
        self._done.release()
        if self._error is not None:
            raise self._error
        return self._value


class _Workers:
    """The daemon threads a registry runs its calls in. Python cannot kill a thread, so a call
    that outlives its timeout is abandoned with its thread: as a daemon it cannot hold the
    process at exit (a ``ThreadPoolExecutor``'s workers would: the interpreter joins them), and
    since a thread is handed a call only while idle, one stuck backend never starves the next
    call. Reusing idle threads spares each call a thread start, which on a loaded machine costs
    more than a no-op pipeline's own work."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[SimpleQueue] = []  # the inbox of each idle worker
        self._pid = os.getpid()

    def submit(self, thunk: Callable[[], Any]) -> _Call:
        call = _Call(thunk)
        with self._lock:
            if self._pid != os.getpid():  # a forked child has none of its parent's threads
                self._idle, self._pid = [], os.getpid()
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = SimpleQueue()
            threading.Thread(target=self._work, args=(inbox,), name="arag-tool", daemon=True).start()
        inbox.put(call)
        return call

    def _work(self, inbox: SimpleQueue) -> None:
        while (call := inbox.get()) is not None:
            call.run()
            # idle again before the caller wakes, so that its next call finds this thread
            with self._lock:
                keep = len(self._idle) < _IDLE_WORKERS
                if keep:
                    self._idle.append(inbox)
            call.finish()
            call = None  # an idle thread holds nothing of its last call
            if not keep:
                return

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for inbox in idle:
            inbox.put(None)


def _observe(name: str, args: dict[str, Any], result: Any) -> Observation:
    """Turn a tool's return value into an observation: evidence lists are summarized one line
    per chunk (≤150 chars), anything else shown as compact JSON."""
    if isinstance(result, list) and result and all(isinstance(r, Evidence) for r in result):
        lines = []
        for ev in result:
            text = " ".join(ev.chunk.text.split())
            lines.append(f"[{ev.chunk_id}] 《{ev.chunk.title}》{ev.chunk.clause or ''}: "
                         f"{text[:_OBS_CHARS]}{'…' if len(text) > _OBS_CHARS else ''}")
        return Observation(tool=name, args=args, content="\n".join(lines), evidence=list(result))
    if isinstance(result, list) and not result:
        return Observation(tool=name, args=args, content="(no results / 无结果)")
    if isinstance(result, BaseModel):
        result = result.model_dump(mode="json")
    if isinstance(result, str):
        return Observation(tool=name, args=args, content=result[:2000], data=result)
    text = json.dumps(result, ensure_ascii=False, default=str)
    return Observation(tool=name, args=args, content=text[:2000], data=result)


# =========================================================================== structured queries

class NamedQuery(BaseModel):
    name: str
    sql: str
    params: dict[str, str]  # parameter name -> description
    description: str
    database: str  # sqlite file path or postgresql:// DSN


_SELECT = re.compile(r"^\s*(select|with)\b", re.I)
_WRITE = re.compile(r"\b(insert|update|delete|drop|alter|create|replace|attach|pragma|vacuum)\b", re.I)


class StructuredQueries:
    """Named, parameterized read-only SQL the user registers; the model only fills parameters.

    >>> q = StructuredQueries()
    >>> q.register("claims_by_year", "SELECT * FROM claims WHERE year = :year",
    ...            {"year": "four-digit year"}, "claims filed in a year", database="claims.db")
    """

    def __init__(self, max_rows: int = 50) -> None:
        self.max_rows = max_rows
        self._queries: dict[str, NamedQuery] = {}
        self._lock = threading.Lock()

    def register(self, name: str, sql: str, params: dict[str, str], description: str, *,
                 database: str | Path) -> None:
        if name in self._queries:
            raise ToolError(f"a structured query named {name!r} is already registered")
        body = sql.strip().rstrip(";")
        if not _SELECT.match(body) or ";" in body or _WRITE.search(body):
            raise ToolError(f"structured query {name!r}: only a single read-only SELECT is allowed")
        named = set(re.findall(r"(?<!:):([A-Za-z_]\w*)", body)) | set(re.findall(r"%\((\w+)\)s", body))
        if named != set(params):
            raise ToolError(f"structured query {name!r}: SQL parameters {sorted(named)} do not match "
                            f"the declared {sorted(params)}")
        self._queries[name] = NamedQuery(name=name, sql=body, params=params,
                                         description=description, database=str(database))

    def __bool__(self) -> bool:
        return bool(self._queries)

    def catalogue(self) -> str:
        return "; ".join(f"{q.name}({', '.join(f'{k}: {v}' for k, v in q.params.items())}): {q.description}"
                         for q in self._queries.values())

    def run(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        q = self._queries.get(name)
        if q is None:
            raise LookupError(f"no structured query {name!r}; available: {', '.join(self._queries)}")
        missing = set(q.params) - set(params)
        extra = set(params) - set(q.params)
        if missing or extra:
            raise ValueError(f"query {name!r} takes parameters {sorted(q.params)}; "
                             f"missing {sorted(missing)}, unexpected {sorted(extra)}")
        if q.database.startswith(("postgresql://", "postgres://")):
            return self._run_postgres(q, params)
        path = Path(q.database)
        if not path.is_file():
            raise LookupError(f"database file not found: {path}")
        # read-only URI: even a registered query can never write
        conn = sqlite3.connect(f"file:{path.as_posix()}?mode=ro", uri=True, check_same_thread=False)
        try:
            conn.row_factory = sqlite3.Row
            rows = conn.execute(q.sql, params).fetchmany(self.max_rows)
            return [dict(r) for r in rows]
        finally:
            conn.close()

    def _run_postgres(self, q: NamedQuery, params: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            import psycopg
            from psycopg.rows import dict_row
        except ImportError as exc:
            raise MissingExtraError("psycopg (Postgres structured queries)", "postgres") from exc
        sql = re.sub(r"(?<!:):([A-Za-z_]\w*)", r"%(\1)s", q.sql)
        with psycopg.connect(q.database, row_factory=dict_row) as conn:
            conn.read_only = True
            return list(conn.execute(sql, params).fetchmany(self.max_rows))


# =========================================================================== built-in tools

def builtin_tools(registry: ToolRegistry, *, retriever: Any = None, router: Any = None,
                  store: Any = None, queries: StructuredQueries | None = None,
                  http_allow: Iterable[str] = (), http_timeout_s: float = 5.0) -> ToolRegistry:
    """Register the built-in tools whose backends are given (a tool without one is left out, so
    the model is never offered something that cannot work)."""

    def _route(query: str) -> RouteDecision:
        if router is not None:
            return router.route(query).model_copy(update={"query": query})
        return RouteDecision(question=query, query=query)

    if retriever is not None:
        def semantic_search(query: str, top_k: int = 5) -> list[Evidence]:
            """Hybrid search (dense vectors + keywords + graph, fused): finds passages that mean the
            same thing in other words. Use a noun phrase with entity/time anchors. 语义检索。"""
            return list(retriever.retrieve(_route(query), k=max(1, min(top_k, 20))))

        registry.register(semantic_search, retrieval=True, may_block=getattr(retriever, "may_block", True))

    if store is not None:
        def exact_search(query: str, top_k: int = 5) -> list[Evidence]:
            """Full-text keyword search for exact wording: clause numbers, model numbers, names,
            defined terms. Use the documents' own words. 精确全文检索。"""
            hits = store.search(query, k=max(1, min(top_k, 20)))
            chunks = {c.chunk_id: c for c in store.get_chunks([cid for cid, _ in hits])}
            return [Evidence(chunk=chunks[cid], score=float(s), scores={"bm25": float(s)},
                             rank=r, legs=["bm25"]) for r, (cid, s) in enumerate(hits, 1) if cid in chunks]

        def graph_lookup(chunk_id: str, direction: str = "both") -> list[Evidence]:
            """Passages linked to a chunk: clauses it cites ("see Article 12" / 详见第十二条) and
            versions that supersede it. direction: out, in or both. 图谱关联查询。"""
            if direction not in ("out", "in", "both"):
                raise ValueError("direction must be out, in or both")
            edges = []
            for d in (("out", "in") if direction == "both" else (direction,)):
                edges += store.edges([chunk_id], direction=d)
            ids = list(dict.fromkeys(e.dst if e.src == chunk_id else e.src for e in edges))
            chunks: list[Any] = store.get_chunks(ids)
            if not chunks:  # SUPERSEDES edges link documents: show their first chunks
                for doc_id in ids:
                    chunks += store.chunks(doc_id)[:1]
            return [Evidence(chunk=c, score=1.0, scores={"graph": 1.0}, rank=r, legs=["graph"])
                    for r, c in enumerate(chunks[:10], 1)]

        registry.register(exact_search, retrieval=True)
        registry.register(graph_lookup)

    if queries:
        catalogue = queries.catalogue()

        def structured_query(name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
            """Run a named, parameterized read-only query over registered tables (fill the
            parameters; free SQL is not accepted). 结构化查询。"""
            return queries.run(name, params)

        registry.register(structured_query, description=(
            f"{inspect.getdoc(structured_query)} Available: {catalogue}"))

    allow = {_allow_entry(h) for h in http_allow}
    if allow:
        shown = ", ".join(sorted(h if p is None else f"{h}:{p}" for h, p in allow))

        def http_get(url: str) -> str:
            """GET a URL on an allow-listed host and return the start of its text. 调用白名单 HTTP 接口。"""
            import httpx

            parsed = urlparse(url)
            host = (parsed.hostname or "").lower()
            try:
                port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
            except ValueError:  # a port that is not a number
                port = None
            # an entry with a port allows exactly that port; one without, only the scheme defaults
            allowed = parsed.scheme in ("http", "https") and port is not None and (
                (host, port) in allow or ((host, None) in allow and port in (80, 443)))
            if not allowed:
                raise ToolError(f"{host or url!r} port {port} is not allow-listed ({shown})")
            try:
                resp = httpx.get(url, timeout=http_timeout_s, follow_redirects=False)
            except httpx.HTTPError as exc:
                raise ToolError(f"GET {url} failed: {type(exc).__name__}") from exc
            return f"HTTP {resp.status_code}\n{resp.text[:2000]}"

        registry.register(http_get, description=f"{inspect.getdoc(http_get)} Hosts: {shown}")
    return registry


def _allow_entry(entry: str) -> tuple[str, int | None]:
    """``"host"``, ``"host:8080"`` or ``"[::1]:8080"`` as (lower-case host, port or None)."""
    parsed = urlparse(f"//{entry.strip()}")
    try:
        port = parsed.port
    except ValueError as exc:
        raise ConfigError(f"http allow-list entry {entry!r}: the port is not a number") from exc
    if not parsed.hostname:
        raise ConfigError(f"http allow-list entry {entry!r} names no host")
    return parsed.hostname.lower(), port
