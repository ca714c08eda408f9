"""The tool registry and the built-in tools, against real SQLite and a real loopback HTTP server."""

from __future__ import annotations

import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from pydantic import BaseModel

from agentic_rag.errors import ToolError
from agentic_rag.runtime import StructuredQueries, ToolRegistry, builtin_tools


class Period(BaseModel):
    start: int
    end: int


def test_schema_is_derived_from_the_signature_and_docstring():
    reg = ToolRegistry()

    @reg.tool
    def claims(region: str, period: Period, limit: int = 10) -> list[dict]:
        """Claims filed in a region during a period."""
        return []

    schema = reg.schemas()[0]
    assert schema["name"] == "claims" and schema["description"] == "Claims filed in a region during a period."
    props = schema["parameters"]["properties"]
    assert props["region"]["type"] == "string" and props["limit"]["default"] == 10
    assert set(schema["parameters"]["required"]) == {"region", "period"}
    # nested pydantic parameters are validated from plain JSON
    obs = reg.run([("claims", {"region": "深圳", "period": {"start": 2023, "end": "x"}})])[0]
    assert not obs.ok and "period.end" in obs.error


def test_declaration_mistakes_are_refused():
    reg = ToolRegistry()

    def lookup(query: str) -> str:
        """Look something up."""
        return query

    reg.register(lookup)
    with pytest.raises(ToolError, match="already registered"):
        reg.register(lookup)

    def untyped(query):
        """No annotation."""

    with pytest.raises(ToolError, match="type annotation"):
        reg.register(untyped)

    def undocumented(query: str) -> str:
        return query

    with pytest.raises(ToolError, match="description"):
        reg.register(undocumented)


def test_parallel_calls_keep_order_and_errors_become_observations():
    reg = ToolRegistry(timeout_s=2)
    barrier = threading.Barrier(2, timeout=2)

    def meet(name: str) -> str:
        """Both calls must be in flight at once to pass the barrier."""
        barrier.wait()
        return f"hello {name}"

    def broken(x: int) -> str:
        """Always fails with a backend error."""
        raise LookupError("no such record")

    reg.register(meet)
    reg.register(broken)
    out = reg.run([("meet", {"name": "a"}), ("broken", {"x": 1}), ("meet", {"name": "b"}),
                   ("nope", {})])
    assert [o.content for o in out[::2]] == ["hello a", "hello b"]
    assert "no such record" in out[1].error and "unknown tool" in out[3].error
    reg.close()


def test_a_call_after_a_timed_out_one_is_not_held_up_by_it():
    reg = ToolRegistry(timeout_s=0.2)
    release = threading.Event()

    def stuck(q: str) -> str:
        """A backend that hangs until released."""
        release.wait(10)
        return q

    def echo(q: str) -> str:
        """Answers at once."""
        return q

    reg.register(stuck)
    reg.register(echo)
    try:
        assert "timed out" in reg.run([("stuck", {"q": "a"})])[0].error
        for q in ("b", "c", "d"):  # each answered in time, though the stuck call still runs
            assert reg.run([("echo", {"q": q})], timeout_s=1)[0].content == q
    finally:
        release.set()
        reg.close()


def test_a_tool_that_cannot_block_runs_in_the_callers_thread_when_alone():
    reg = ToolRegistry(timeout_s=2)
    barrier = threading.Barrier(2, timeout=2)

    def here(q: str) -> str:
        """Only computes: names the thread it ran in."""
        return threading.current_thread().name

    def guarded(q: str) -> str:
        """The same, declared as a call that may block."""
        return threading.current_thread().name

    def meet(q: str) -> str:
        """Only computes, but must meet a second call in flight."""
        barrier.wait()
        return q

    def broken(q: str) -> str:
        """Fails at once."""
        raise LookupError("no such record")

    for fn in (here, meet, broken):
        reg.register(fn, may_block=False)
    reg.register(guarded)
    caller = threading.current_thread().name
    try:
        assert reg.run([("here", {"q": "a"})])[0].content == caller
        assert reg.run([("guarded", {"q": "a"})])[0].content != caller
        # an error is the same observation, wherever the call ran
        assert "no such record" in reg.run([("broken", {"q": "a"})])[0].error
        # beside other calls it still runs in parallel with them
        assert [o.content for o in reg.run([("meet", {"q": "a"}), ("meet", {"q": "b"})])] == ["a", "b"]
        # the runtime's own calls declare it per batch
        shown = reg.run_functions([("search", {"query": "x"}, lambda: threading.current_thread().name)],
                                  may_block=False)
        assert shown[0].content == caller
    finally:
        reg.close()


@pytest.fixture
def claims_db(tmp_path):
    path = tmp_path / "claims.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE claims (region TEXT, year INT, amount REAL)")
    conn.executemany("INSERT INTO claims VALUES (?, ?, ?)",
                     [("深圳", 2023, 1200.0), ("深圳", 2024, 800.0), ("北京", 2024, 500.0)])
    conn.commit()
    conn.close()
    return path


def test_structured_query_runs_only_named_parameterized_selects(claims_db):
    q = StructuredQueries()
    q.register("claims_by_region", "SELECT year, amount FROM claims WHERE region = :region ORDER BY year",
               {"region": "region name"}, "claims of one region", database=claims_db)
    reg = builtin_tools(ToolRegistry(), queries=q)
    obs = reg.run([("structured_query", {"name": "claims_by_region", "params": {"region": "深圳"}})])[0]
    assert obs.data == [{"year": 2023, "amount": 1200.0}, {"year": 2024, "amount": 800.0}]
    # injection attempts stay parameters; unknown names and free SQL are refused
    obs = reg.run([("structured_query", {"name": "claims_by_region",
                                          "params": {"region": "x' OR '1'='1"}})])[0]
    assert obs.data is None and obs.content.startswith("(no results")
    obs = reg.run([("structured_query", {"name": "DROP TABLE claims", "params": {}})])[0]
    assert not obs.ok and "no structured query" in obs.error
    with pytest.raises(ToolError, match="read-only SELECT"):
        q.register("wipe", "DELETE FROM claims WHERE region = :r", {"r": "x"}, "no", database=claims_db)
    with pytest.raises(ToolError, match="do not match"):
        q.register("bad", "SELECT * FROM claims WHERE year = :year", {"region": "x"}, "no", database=claims_db)
    assert "claims_by_region" in reg.schemas()[0]["description"]


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        body = "rate: 80%".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_http_get_reaches_allow_listed_hosts_and_ports_only():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    other = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)  # same host, a port nobody allowed
    for s in (server, other):
        threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        reg = builtin_tools(ToolRegistry(), http_allow=[f"127.0.0.1:{server.server_port}"])
        ok, refused, wrong_port = reg.run([
            ("http_get", {"url": f"http://127.0.0.1:{server.server_port}/rate"}),
            ("http_get", {"url": "http://example.com/"}),
            ("http_get", {"url": f"http://127.0.0.1:{other.server_port}/rate"})])
        assert ok.content == "HTTP 200\nrate: 80%"
        assert not refused.ok and "not allow-listed" in refused.error
        assert not wrong_port.ok and f"port {other.server_port} is not allow-listed" in wrong_port.error
        # an entry without a port allows only the scheme's default ports
        bare = builtin_tools(ToolRegistry(), http_allow=["127.0.0.1"])
        obs = bare.run([("http_get", {"url": f"http://127.0.0.1:{server.server_port}/rate"})])[0]
        assert not obs.ok and "not allow-listed" in obs.error
    finally:
        server.shutdown()
        other.shutdown()


def test_retrieval_tools_return_evidence(corpus_store, router):
    from agentic_rag.agents.retriever import Retriever

    reg = builtin_tools(ToolRegistry(), retriever=Retriever(corpus_store), router=router, store=corpus_store)
    assert set(reg.names()) == {"semantic_search", "exact_search", "graph_lookup"}
    sem, exact, graph = reg.run([("semantic_search", {"query": "住院报销比例"}),
                                 ("exact_search", {"query": "年休假", "top_k": 2}),
                                 ("graph_lookup", {"chunk_id": "medins2024"})])
    assert sem.evidence and sem.evidence[0].chunk.doc_id in {"medins2023", "medins2024"}
    assert exact.evidence[0].chunk_id == "leave:a5:0" and len(exact.evidence) <= 2
    assert "[leave:a5:0]" in exact.content
    assert [e.chunk.doc_id for e in graph.evidence] == ["medins2023"]  # the version it supersedes
