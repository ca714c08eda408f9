"""``arag``: a thin shell over :class:`agentic_rag.engine.Engine`. Parse, call, render.

Every command takes ``--index DIR`` and ``--json``. Errors print one line on stderr and exit
non-zero; the index is left as it was.
"""

from __future__ import annotations

import functools
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agentic_rag.config import Settings
from agentic_rag.errors import AragError

F = TypeVar("F", bound=Callable[..., Any])

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def _dump(obj: Any) -> None:
    click.echo(json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[red]error:[/red] {escape(message)}")
    sys.exit(code)


def _errors(fn: F) -> F:
    """Turn the project's errors into one line on stderr and a non-zero exit."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except AragError as exc:
            _fail(str(exc))
        except KeyboardInterrupt:
            _fail("interrupted", 130)

    return wrapper  # type: ignore[return-value]


def _common(fn: F) -> F:
    fn = click.option("--json", "as_json", is_flag=True, help="machine-readable output")(fn)
    fn = click.option("--index", "index", type=click.Path(file_okay=False, path_type=Path),
                      default=None, help="index folder (default .arag or $ARAG_INDEX)")(fn)
    fn = click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path),
                      default=None, help="arag.toml to read (default ./arag.toml when present)")(fn)
    return fn


def _engine(index: Path | None, config: Path | None, **overrides: Any):
    from agentic_rag.engine import Engine

    settings = Settings.load(config, index=index, **overrides)
    settings.check_files()
    if settings.reports.templates_dir is not None:  # a broken template fails every command, named
        from agentic_rag.reports import OPERATIONS, load_templates

        load_templates(settings.reports.templates_dir, OPERATIONS)
    return Engine(settings)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="agentic-rag")
def app() -> None:
    """Agentic RAG over your own documents: cited answers, conflicts arbitrated, silence when unsure."""


# -- ingest / docs / chunks / rm / search ----------------------------------------------------
@app.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option("--queue", "queued", is_flag=True,
              help="split the files into tasks for `arag worker` processes (workers.broker_url)")
@_common
@_errors
def ingest(paths: tuple[Path, ...], queued: bool, index: Path | None, config: Path | None,
           as_json: bool) -> None:
    """Ingest files and folders (.txt .md .html .docx .pdf .csv .xlsx .pptx .jsonl). A path that
    cannot be read fails alone, with its reason; the others are ingested (exit 1 when any failed).
    With --queue the workers do the work (a jsonl file is cut into tasks of workers.batch_records
    lines); this command waits for them and reports the same way."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    show = not as_json and sys.stderr.isatty()
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not show, transient=True) as bar:
        task = bar.add_task("ingesting", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        if queued:
            from agentic_rag.workers.ingest import queue_ingest

            settings = Settings.load(config, index=index)
            settings.check_files()
            report = queue_ingest(settings, list(paths), progress=progress,
                                  notice=lambda line: err.print(f"[yellow]note:[/yellow] {escape(line)}"))
        else:
            with _engine(index, config) as engine:
                report = engine.ingest(list(paths), progress=progress)
    rows = [r.model_dump() if hasattr(r, "model_dump") else dict(r.__dict__) for r in report.files]
    failed = [r for r in rows if r["status"] == "failed"]
    if as_json:
        _dump({"files": rows})
    else:
        table = Table("file", "status", "doc_id", "chunks", "reason")
        for r in rows:
            color = {"failed": "red", "added": "green", "replaced": "yellow", "skipped": "dim"}.get(r["status"], "")
            table.add_row(escape(r["path"]), f"[{color}]{r['status']}[/{color}]" if color else r["status"],
                          r.get("doc_id") or "", str(r.get("chunks", 0)), escape(r.get("reason") or ""))
        if len(rows) <= 200:
            out.print(table)
        counts = {s: sum(r["status"] == s for r in rows) for s in ("added", "unchanged", "replaced", "failed", "skipped")}
        out.print(" · ".join(f"{n} {s}" for s, n in counts.items()))
    if failed:
        for r in failed:
            err.print(f"[red]failed:[/red] {escape(r['path'])}: {escape(r.get('reason') or '')}")
        sys.exit(1)


@app.group(invoke_without_command=True)
@click.option("--dates", "dates", is_flag=True,
              help="show each document's candidate dates (publish, effective, signature/amendment), "
                   "the rule and the text that found each")
@_common
@_errors
@click.pass_context
def docs(ctx: click.Context, dates: bool, index: Path | None, config: Path | None, as_json: bool) -> None:
    """List documents with their metadata (`arag docs confirm` stores a confirmed value)."""
    if ctx.invoked_subcommand is not None:
        return
    from agentic_rag.ingest.metadata import date_candidates

    with _engine(index, config) as engine:
        rows = []
        counts = engine.store.chunk_counts()
        for d in engine.store.documents():
            m = d.meta
            rows.append({"doc_id": d.doc_id, "title": m.title, "source": d.source,
                         "doc_number": m.doc_number, "authority": m.authority,
                         "publish_date": m.publish_date, "effective_date": m.effective_date,
                         "version": m.version, "status": m.status, "language": m.language,
                         "chunks": counts.get(d.doc_id, 0), "provenance": m.provenance, "extra": m.extra,
                         **({"date_candidates": date_candidates(d.text, m)} if dates else {})})
    if as_json:
        _dump(rows)
        return
    if dates:
        table = Table("doc_id", "title", "kind", "date", "rule", "text")
        for r in rows:
            for c in r["date_candidates"] or [{"kind": "", "date": "(none found)", "rule": "", "text": ""}]:
                table.add_row(r["doc_id"], escape(r["title"] or ""), c["kind"], c["date"], escape(c["rule"]),
                              escape(c["text"] or ""))
        out.print(table)
        return
    table = Table("doc_id", "title", "authority", "published", "effective", "version", "status", "chunks")
    for r in rows:
        table.add_row(r["doc_id"], escape(r["title"] or ""), escape(r["authority"] or ""),
                      str(r["publish_date"] or ""), str(r["effective_date"] or ""),
                      r["version"] or "", r["status"], str(r["chunks"]))
    out.print(table)


@docs.command("confirm")
@click.argument("doc_id")
@click.argument("values", nargs=-1, required=True, metavar="FIELD=VALUE...")
@_common
@_errors
def docs_confirm(doc_id: str, values: tuple[str, ...], index: Path | None, config: Path | None,
                 as_json: bool) -> None:
    """Confirm metadata of one document, e.g. `arag docs confirm DOC_ID publish_date=2024-06-18`.
    The value goes to the file's sidecar <file>.meta.json, so it survives every re-ingest, and
    the document is ingested again at once."""
    from agentic_rag.errors import ConfigError, NotFoundError
    from agentic_rag.ingest.pipeline import confirm_fields

    pairs: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ConfigError(f"expected FIELD=VALUE, got {item!r} (e.g. publish_date=2024-06-18)")
        pairs[key.strip()] = value.strip()
    with _engine(index, config) as engine:
        doc = engine.store.get_document(doc_id)
        if doc is None:
            raise NotFoundError(f"no document {doc_id!r} in the index (see `arag docs`)")
        sidecar = confirm_fields(doc, pairs)
        report = engine.ingest([doc.source])
        if not report.ok:
            raise ConfigError(f"{doc.source}: {report.files[0].reason}")
        meta = engine.store.get_document(doc_id).meta
    shown = {k: str(getattr(meta, k)) for k in pairs}
    if as_json:
        _dump({"doc_id": doc_id, "sidecar": str(sidecar), "confirmed": shown})
    else:
        out.print(f"{doc_id}: " + ", ".join(f"{k}={v}" for k, v in shown.items())
                  + f" confirmed (stored in {escape(sidecar.name)})")


@app.command()
@click.argument("doc_id")
@_common
@_errors
def chunks(doc_id: str, index: Path | None, config: Path | None, as_json: bool) -> None:
    """Show the chunks of one document in order."""
    from agentic_rag.errors import NotFoundError

    with _engine(index, config) as engine:
        if engine.store.get_document(doc_id) is None:
            raise NotFoundError(f"no document {doc_id!r} in the index (see `arag docs`)")
        items = engine.store.chunks(doc_id)
    rows = [{"chunk_id": c.chunk_id, "clause": c.clause, "clause_no": c.clause_no, "path": c.path, "kind": c.kind,
             "text": c.text, "span": list(c.span),
             # a PDF's chunk: where it stands, to draw the citation on the page image
             **({"page": c.extra["page"], "boxes": c.extra.get("boxes", [])} if "page" in c.extra else {}),
             **({"table": c.table.model_dump()} if c.table is not None else {})} for c in items]
    if as_json:
        _dump(rows)
        return
    for r in rows:
        head = " > ".join(r["path"]) or (r["clause"] or "")
        where = f" p.{r['page']}" if "page" in r else ""
        out.print(f"[bold]{escape(r['chunk_id'])}[/bold] [dim]{r['kind']} {escape(head)}{where}[/dim]")
        out.print(escape(r["text"]))
        out.print()


@app.command()
@click.argument("doc_id")
@_common
@_errors
def rm(doc_id: str, index: Path | None, config: Path | None, as_json: bool) -> None:
    """Remove a document and its chunks."""
    from agentic_rag.errors import NotFoundError

    with _engine(index, config) as engine:
        if not engine.store.delete(doc_id):
            raise NotFoundError(f"no document {doc_id!r} in the index (see `arag docs`)")
    if as_json:
        _dump({"removed": doc_id})
    else:
        out.print(f"removed {doc_id}")


@app.command()
@click.argument("query")
@click.option("-k", "k", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--where", "where", nargs=3, multiple=True, metavar="FIELD OP VALUE",
              help="metadata filter, e.g. --where publish_date '>=' 2024-01-01 (repeatable)")
@_common
@_errors
def search(query: str, k: int, where: tuple[tuple[str, str, str], ...], index: Path | None,
           config: Path | None, as_json: bool) -> None:
    """BM25 search over chunks, with metadata filters."""
    from pydantic import ValidationError

    from agentic_rag.errors import ConfigError
    from agentic_rag.types import Filter

    try:
        filters = [Filter(field=f, op=op, value=v.split(",") if op == "in" else v) for f, op, v in where]
    except ValidationError as exc:
        raise ConfigError(f"invalid --where: {exc.errors()[0]['msg']}") from exc
    with _engine(index, config) as engine:
        hits = engine.search(query, k=k, where=filters)
    rows = [{"chunk_id": c.chunk_id, "doc_id": c.doc_id, "title": c.title, "clause": c.clause,
             "kind": c.kind, "text": c.text, "score": round(s, 4)} for c, s in hits]
    if as_json:
        _dump(rows)
        return
    if not rows:
        out.print("no matches")
    for i, r in enumerate(rows, 1):
        out.print(f"[bold]{i}. {escape(r['title'])}[/bold] {escape(r['clause'] or '')} "
                  f"[dim]{r['chunk_id']} {r['kind']} score {r['score']}[/dim]")
        out.print("   " + escape(_clip(r["text"], 240)))


# -- ask / demo ------------------------------------------------------------------------------
def _llm_options(fn: F) -> F:
    """``--llm``, ``--llm-model``, ``--llm-base-url``, ``--mode`` (the API key comes only from
    $ARAG_LLM_API_KEY, never from a flag, so it cannot leak into shell history)."""
    fn = click.option("--mode", type=click.Choice(["pipeline", "react", "plan"]), default=None,
                      help="agent loop (default: runtime.mode, pipeline)")(fn)
    fn = click.option("--llm-base-url", default=None, help="OpenAI-compatible API root, e.g. http://localhost:8000/v1")(fn)
    fn = click.option("--llm-model", default=None, help="model name (openai) or GGUF path (local)")(fn)
    fn = click.option("--llm", "llm_provider", type=click.Choice(["none", "local", "openai"]), default=None,
                      help="LLM for the gates and agents (default: llm.provider, none)")(fn)
    return fn


def _llm_overrides(llm_provider: str | None, llm_model: str | None, llm_base_url: str | None,
                   mode: str | None) -> dict[str, Any]:
    llm = {k: v for k, v in (("provider", llm_provider), ("model", llm_model), ("base_url", llm_base_url)) if v}
    return {"llm": llm or None, "runtime": {"mode": mode} if mode else None}


def _control_options(fn: F) -> F:
    """The web page's three sliders as flags (see ``Limits.with_controls``)."""
    fn = click.option("--latitude", type=click.IntRange(0, 2), default=None,
                      help="inference latitude: 0 abstain unless fully covered, 1 default, "
                           "2 quote the closest passages as needs_review")(fn)
    fn = click.option("--reflection", type=click.IntRange(0, 2), default=None,
                      help="reflection depth: 0 one round without sufficiency/verification gates, "
                           "1 default, 2 stricter sufficiency and every sentence re-verified")(fn)
    fn = click.option("--retrieval", type=click.IntRange(1, 4), default=None,
                      help="retrieval intensity: queries per round x rounds, 1 = 1x1, 2 = 2x2, "
                           "3 = 3x3 (default), 4 = 3x5")(fn)
    return fn


def _session(engine: Any, session_id: str | None = None, persist: bool = False,
             controls: dict[str, int | None] | None = None) -> Any:
    from agentic_rag.models.llm import make_llm
    from agentic_rag.runtime import AgentRuntime, Limits, Session
    from agentic_rag.state import open_sessions

    if not engine.store.stats()["docs"]:
        from agentic_rag.errors import StoreError

        raise StoreError(f"the index {engine.settings.index} is empty: run `arag ingest PATH` first")
    limits = Limits.from_settings(engine.settings).with_controls(**(controls or {}))
    runtime = AgentRuntime.from_engine(engine, llm=make_llm(engine.settings), limits=limits)
    store = open_sessions(engine.settings) if persist or session_id else None
    if session_id:
        return Session.open(runtime, session_id, store)
    return Session(runtime, store=store)


@app.command()
@click.argument("question")
@_llm_options
@_control_options
@_common
@_errors
def ask(question: str, llm_provider: str | None, llm_model: str | None, llm_base_url: str | None,
        mode: str | None, retrieval: int | None, reflection: int | None, latitude: int | None,
        index: Path | None, config: Path | None, as_json: bool) -> None:
    """Answer a question from the indexed documents, citing every sentence. Ctrl-C stops between
    steps and shows what was found so far."""
    overrides = _llm_overrides(llm_provider, llm_model, llm_base_url, mode)
    with _engine(index, config, **overrides) as engine:
        problem = _question_problem(question, engine.settings)
        if problem:
            _fail(problem)
        controls = {"retrieval": retrieval, "reflection": reflection, "latitude": latitude}
        answer = _session(engine, controls=controls).ask_interruptible(question)
    if as_json:
        _dump(answer_json(answer))
    else:
        render_answer(answer)


def fallbacks_of(answer: Any) -> list[dict[str, str]]:
    """Each place the rules decided instead of the LLM: ``{"gate", "reason"}`` in run order."""
    return [{"gate": e.tool or "", "reason": e.fallback or e.detail}
            for e in answer.trace if e.kind == "fallback"]


def answer_json(answer: Any) -> dict[str, Any]:
    """The ``--json`` form of an answer: the Answer itself plus its ``fallbacks`` listed."""
    return {**answer.model_dump(mode="json"), "fallbacks": fallbacks_of(answer)}


@app.command()
@click.option("--session", "session_id", default=None, help="continue a saved session by id")
@_llm_options
@_common
@_errors
def chat(session_id: str | None, llm_provider: str | None, llm_model: str | None, llm_base_url: str | None,
         mode: str | None, index: Path | None, config: Path | None, as_json: bool) -> None:
    """Multi-turn questions in one session, saved in <index>/sessions.db or state.url's Redis (follow-ups such as
    "那退休人员呢？" are resolved against the conversation). Ctrl-C stops the running question;
    an empty line or Ctrl-D quits."""
    overrides = _llm_overrides(llm_provider, llm_model, llm_base_url, mode)
    with _engine(index, config, **overrides) as engine:
        session = _session(engine, session_id, persist=True)
        if not as_json:
            err.print(f"[dim]session {session.id} (continue with: arag chat --session {session.id})[/dim]")
        while True:
            try:
                question = click.prompt("?", prompt_suffix=" ", default="", show_default=False,
                                        err=True)
            except (EOFError, click.Abort):
                break
            if not question.strip():
                break
            problem = _question_problem(question, engine.settings)
            if problem:  # one bad question does not end the session
                err.print(f"[red]error:[/red] {escape(problem)}")
                continue
            answer = session.ask_interruptible(question)
            if as_json:
                click.echo(json.dumps({"session_id": session.id, **answer_json(answer)},
                                      ensure_ascii=False, default=str))
            else:
                render_answer(answer)


def _question_problem(question: str, settings: Settings) -> str | None:
    """Why the runtime would refuse ``question`` (too long), as a message; None when it is fine."""
    from agentic_rag.runtime import check_question

    try:
        check_question(question, settings.runtime.max_question_chars)
    except ValueError as exc:
        return str(exc)
    return None


def render_answer(answer: Any) -> None:
    color = {"answered": "green", "abstained": "yellow", "needs_review": "red",
             "aborted": "magenta"}.get(answer.status, "white")
    out.print(f"[bold {color}]{answer.status}[/bold {color}]")
    out.print(escape(answer.text))
    if answer.citations:
        out.print("\n[bold]Citations[/bold]")
        for i, c in enumerate(answer.citations, 1):
            out.print(f" [{i}] {escape(c.title)} {escape(c.clause or '')} [dim]{c.chunk_id}[/dim]")
            out.print(f"     “{escape(_clip(c.quote, 200))}”")
    if answer.conflicts:
        out.print("\n[bold]Conflicts[/bold]")
        for c in answer.conflicts:
            vals = "; ".join(f"{v.value} ({v.title} {v.clause or ''})" for v in c.values)
            out.print(f" {escape(c.matter)}: {escape(vals)} → winner {c.winner} ({escape(c.rule)})")
    if answer.gaps:
        out.print("\n[bold]Not found[/bold]")
        for g in answer.gaps:
            out.print(f" - {escape(g)}")
    fallbacks = fallbacks_of(answer)
    if fallbacks:
        out.print("\n[bold]Fallbacks[/bold] [dim](the rules decided instead of the LLM)[/dim]")
        for f in fallbacks:
            out.print(f" - {escape(f['gate'])}: {escape(_clip(f['reason'], 300))}")
    u = answer.usage
    # top-level steps only: a search's own legs (retrieve events) are inside its tool time
    top = [e for e in answer.trace if e.kind in ("route", "tool", "reason")]
    steps = ", ".join(f"{e.tool or e.kind} {e.duration_ms:.0f} ms" for e in top)
    if u.llm_calls:
        steps += (f", LLM {u.llm_calls} call{'s' if u.llm_calls != 1 else ''} "
                  f"{u.prompt_tokens + u.completion_tokens} tokens {_ms(u.llm_ms)}")
    wall = u.wall_ms or sum(e.duration_ms for e in top)
    out.print(f"\n[dim]{steps} · total {_ms(wall)}[/dim]")


def _ms(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 10_000 else f"{ms:.0f} ms"


@app.command()
@click.option("--examples", "examples", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="folder with docs/ and questions.jsonl (default: the bundled examples/)")
@_common
@_errors
def demo(examples: Path | None, index: Path | None, config: Path | None, as_json: bool) -> None:
    """Ingest the bundled examples into a fresh index and answer the sample questions."""
    from agentic_rag.errors import ConfigError

    folder = examples or _bundled_examples()
    if folder is None or not (folder / "questions.jsonl").exists():
        raise ConfigError("examples folder not found: pass --examples DIR (with docs/ and questions.jsonl)")
    index = index or Path(".arag-demo")
    if index.exists():
        shutil.rmtree(index)
    questions = [json.loads(line) for line in (folder / "questions.jsonl").read_text("utf-8").splitlines()
                 if line.strip()]
    with _engine(index, config) as engine:
        report = engine.ingest([folder / "docs"])
        rows = []
        for q in questions:
            t0 = time.perf_counter()
            a = engine.ask(q["question"])
            ms = (time.perf_counter() - t0) * 1000
            rows.append({"id": q.get("id"), "question": q["question"], "status": a.status,
                         "answer": a.text, "citations": [c.chunk_id for c in a.citations],
                         "conflicts": len(a.conflicts), "ms": round(ms, 1)})
    if as_json:
        _dump({"ingested": len(report.files), "questions": rows})
        return
    out.print(f"ingested {len(report.files)} files into {index}")
    table = Table("id", "question", "status", "answer", "cites", "ms")
    for r in rows:
        table.add_row(r["id"] or "", escape(_clip(r["question"], 40)), r["status"],
                      escape(_clip(r["answer"], 90)), str(len(r["citations"])), f"{r['ms']:.0f}")
    out.print(table)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("answered", "needs_review", "abstained")}
    out.print(" · ".join(f"{n} {s}" for s, n in counts.items()))


# -- eval ------------------------------------------------------------------------------------
@app.command("eval")
@click.argument("target", metavar="SET|compare")
@click.argument("runs", nargs=-1, metavar="[RUN_A RUN_B]")
@click.option("--bench-dir", type=click.Path(path_type=Path), default=None,
              help="benchmark folder (default ../shared/bench or $ARAG_BENCH_DIR)")
@click.option("--questions", type=click.Path(path_type=Path), default=None,
              help="questions file replacing the set's dev.jsonl (same format)")
@click.option("--k", "k", type=click.IntRange(1, 200), default=8, show_default=True)
@click.option("--limit", type=click.IntRange(1), default=None, help="only the first N questions")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("eval-runs"), show_default=True, help="where run folders go")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="index cache (default ~/.cache/agentic-rag/eval or $ARAG_EVAL_CACHE)")
@click.option("--json", "as_json", is_flag=True, help="machine-readable output")
@click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="arag.toml to read (default ./arag.toml when present)")
@click.option("--peers", is_flag=True,
              help="also run LlamaIndex and Haystack on the same chunks and embeddings (the peers extra)")
@click.option("--answers", is_flag=True,
              help="corpus sets without short answers (lecoqa, 2wiki): also ask every question and score "
                   "whether the answer's first sentence cites a gold unit (gold_cited)")
@_errors
def eval_(target: str, runs: tuple[str, ...], bench_dir: Path | None, questions: Path | None, k: int,
          limit: int | None, out_dir: Path, cache_dir: Path | None, as_json: bool,
          config: Path | None, peers: bool, answers: bool) -> None:
    """Benchmark a set beside a plain-BM25 floor (`arag eval SET`), or diff two runs
    (`arag eval compare RUN_A RUN_B`). Sets: 2wiki hotpotqa musique lecoqa rgb/zh_noise
    rgb/zh_int rgb/zh_fact rgb/en_fact examples."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    from agentic_rag.errors import ConfigError
    from agentic_rag.eval import EngineBackend, compare_runs, load_set, run_eval
    from agentic_rag.eval.compare import diff_tables
    from agentic_rag.eval.report import table, write_run

    if target == "compare":
        if len(runs) != 2:
            raise ConfigError("usage: arag eval compare RUN_A RUN_B")
        diff = compare_runs(*runs)
        if as_json:
            _dump(diff.model_dump(mode="json"))
        else:
            for t in diff_tables(diff):
                out.print(t)
        return
    if runs:
        raise ConfigError(f"unexpected arguments after the set name: {' '.join(runs)}")
    if peers:  # before any work: a missing extra is one line, not a traceback after the run
        from agentic_rag.eval.peers import require_peers

        require_peers()
    eval_set = load_set(target, bench_dir=bench_dir, questions=questions, limit=limit)
    settings = Settings.load(config)
    settings.check_files()
    backend = EngineBackend(settings)
    show = not as_json and sys.stderr.isatty()
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not show, transient=True) as bar:
        task = bar.add_task(f"eval {target}", total=None)
        run = run_eval(eval_set, backend, k=k, cache_dir=cache_dir, answers=answers,
                       progress=lambda done, total, what: bar.update(
                           task, completed=done, total=total, description=f"eval {target}: {what}"))
    folder = write_run(run, out_dir)
    compared = _eval_peers(eval_set, backend, run, k, cache_dir) if peers else None
    if as_json:
        _dump({**run.summary(), **({"peers": [r.model_dump(mode="json") for r in compared]} if compared else {})})
    else:
        out.print(table(run))
        if compared:
            from agentic_rag.eval.peers import rich_table

            out.print(rich_table(compared, f"{target} · ours beside the peers (same chunks, same embeddings)"))
        out.print(f"run folder: {escape(str(folder))}")


# -- serve / warm / audit ---------------------------------------------------------------------
def _index_options(fn: F) -> F:
    fn = click.option("--index", "index", type=click.Path(file_okay=False, path_type=Path),
                      default=None, help="index folder (default .arag or $ARAG_INDEX)")(fn)
    fn = click.option("--config", "config", type=click.Path(dir_okay=False, path_type=Path),
                      default=None, help="arag.toml to read (default ./arag.toml when present)")(fn)
    return fn


@app.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="address to bind (give 0.0.0.0 explicitly to accept other machines)")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="API processes behind the one port (they share sessions, aborts and the cache: "
                   "through the index folder, or through state.url's Redis)")
@_index_options
@_errors
def serve(host: str, port: int, workers: int, index: Path | None, config: Path | None) -> None:
    """Serve the index over HTTP: /v1/ask (JSON and SSE), the agents' endpoints, an
    OpenAI-compatible /v1/chat/completions, sessions, documents, feedback, /metrics, /docs."""
    import os

    from agentic_rag.errors import MissingExtraError

    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise MissingExtraError("the HTTP server", "server") from exc
    settings = Settings.load(config, index=index)  # a bad config fails here, once, not in every worker
    if settings.store.url:  # so does an unreachable database: one line, not a traceback per worker
        from agentic_rag.store import open_index

        open_index(settings).close()
    if settings.state.url is not None:  # so does an unreachable Redis
        from agentic_rag.state import open_state

        open_state(settings).close()
    if settings.server.reasoner == "queue":  # and an unreachable broker
        from agentic_rag.workers import check_broker, make_celery

        check_broker(make_celery(settings), settings)
    # workers are separate processes: they read the same settings from the environment
    if index is not None:
        os.environ["ARAG_INDEX"] = str(index.resolve())
    if config is not None:
        os.environ["ARAG_CONFIG"] = str(config.resolve())
    if host not in ("127.0.0.1", "localhost", "::1") and not os.environ.get("ARAG_API_KEYS"):
        err.print(f"[yellow]warning:[/yellow] serving on {host} without ARAG_API_KEYS: "
                  "anyone who can reach this port can use it")
    err.print(f"arag serve: http://{host}:{port} (docs at /docs, {workers} worker(s))")
    uvicorn.run("agentic_rag.server.app:create_app", factory=True, host=host, port=port,
                workers=workers, log_level="warning", access_log=False, timeout_graceful_shutdown=5)


@app.command()
@click.option("--queues", default="ingest,reason", show_default=True,
              help="which task queues to take work from: ingest, reason, or both")
@click.option("--name", default=None, help="worker name (default arag-<pid>@<host>)")
@_index_options
@_errors
def worker(queues: str, name: str | None, index: Path | None, config: Path | None) -> None:
    """A queue worker: ingest tasks (`arag ingest --queue`) and reasoning tasks
    (server.reasoner = "queue"), one at a time; run several for more throughput. Ctrl-C (or
    SIGTERM) finishes the running task first; a worker killed outright loses nothing, its task
    is redelivered to another worker."""
    from agentic_rag.errors import ConfigError
    from agentic_rag.workers import ingest_queue, reason_queue, run_worker

    wanted = [q.strip() for q in queues.split(",") if q.strip()]
    if not wanted or any(q not in ("ingest", "reason") for q in wanted):
        raise ConfigError(f"--queues takes ingest, reason or both (comma-separated), got {queues!r}")
    settings = Settings.load(config, index=index)
    settings.check_files()
    names = {"ingest": ingest_queue(settings), "reason": reason_queue(settings)}
    err.print(f"arag worker: queues {', '.join(names[q] for q in wanted)} on {settings.index}")
    run_worker(settings, [names[q] for q in wanted], name)


@app.command()
@_index_options
@_errors
def mcp(index: Path | None, config: Path | None) -> None:
    """A Model Context Protocol server over stdio with the tools search, ask and get_document
    (for IDE agents and desktop assistants)."""
    from agentic_rag.errors import MissingExtraError

    try:
        import mcp as _sdk  # noqa: F401

        from agentic_rag.server.mcp_server import serve_stdio
    except ImportError as exc:
        raise MissingExtraError("the MCP server", "server") from exc
    serve_stdio(Settings.load(config, index=index))


# -- reports -------------------------------------------------------------------------------
@app.group()
def report() -> None:
    """Cited reports from task templates: compare-versions, topic-brief, and your own
    (reports.templates_dir)."""


def _report_options(fn: F) -> F:
    fn = click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
                      help="write the report to FILE instead of stdout")(fn)
    fn = click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md",
                      show_default=True)(fn)
    return fn


def _report(name: str, inputs: dict[str, str], *, fmt: str, output: Path | None, as_json: bool,
            index: Path | None, config: Path | None, llm_provider: str | None = None,
            llm_model: str | None = None, llm_base_url: str | None = None, mode: str | None = None) -> None:
    """Run one template; Ctrl-C stops it between steps and prints the sections done."""
    import threading

    from agentic_rag.reports import ReportRunner, render

    overrides = _llm_overrides(llm_provider, llm_model, llm_base_url, mode)
    with _engine(index, config, **overrides) as engine:
        if not engine.store.stats()["docs"]:
            from agentic_rag.errors import StoreError

            raise StoreError(f"the index {engine.settings.index} is empty: run `arag ingest PATH` first")
        runner = ReportRunner(engine)
        abort = threading.Event()
        result: dict[str, Any] = {}
        show = sys.stderr.isatty() and output is None

        def progress(event: Any) -> None:
            if show and event.kind in ("step", "verify", "fallback", "abort"):
                err.print(f"[dim]{escape(event.kind)} {escape(event.tool or '')}: {escape(event.detail)}[/dim]")

        def work() -> None:
            try:
                result["report"] = runner.run(name, inputs, on_event=progress, abort=abort)
            except BaseException as exc:  # re-raised in the main thread
                result["error"] = exc

        worker = threading.Thread(target=work, name="arag-report", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.2)
        except KeyboardInterrupt:
            abort.set()
            worker.join()
    if "error" in result:
        raise result["error"]
    text = render(result["report"], "json" if as_json else fmt)
    if output is not None:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            _fail(f"cannot write {output}: {exc.strerror or exc}")
        err.print(f"{result['report'].status}: wrote {output}")
    else:
        click.echo(text, nl=False)


@report.command("compare-versions")
@click.argument("old_doc")
@click.argument("new_doc")
@_report_options
@_llm_options
@_common
@_errors
def report_compare(old_doc: str, new_doc: str, fmt: str, output: Path | None, llm_provider: str | None,
                   llm_model: str | None, llm_base_url: str | None, mode: str | None, index: Path | None,
                   config: Path | None, as_json: bool) -> None:
    """What changed from OLD_DOC to NEW_DOC (document ids from `arag docs`, or source paths):
    every clause unchanged, changed (old and new values), added, removed or renumbered, with the
    material changes first; every line cites both clauses."""
    _report("compare-versions", {"old": old_doc, "new": new_doc}, fmt=fmt, output=output, as_json=as_json,
            index=index, config=config, llm_provider=llm_provider, llm_model=llm_model, llm_base_url=llm_base_url,
            mode=mode)


@report.command("topic-brief")
@click.argument("topic")
@_report_options
@_llm_options
@_common
@_errors
def report_topic(topic: str, fmt: str, output: Path | None, llm_provider: str | None, llm_model: str | None,
                 llm_base_url: str | None, mode: str | None, index: Path | None, config: Path | None,
                 as_json: bool) -> None:
    """Every clause across the corpus that governs TOPIC, by document and status (in force /
    superseded), their conflicts with the winner and the rule, and the gaps."""
    _report("topic-brief", {"topic": topic}, fmt=fmt, output=output, as_json=as_json, index=index,
            config=config, llm_provider=llm_provider, llm_model=llm_model, llm_base_url=llm_base_url, mode=mode)


@report.command("run")
@click.argument("template")
@click.argument("values", nargs=-1)
@_report_options
@_common
@_errors
def report_run(template: str, values: tuple[str, ...], fmt: str, output: Path | None, index: Path | None,
               config: Path | None, as_json: bool) -> None:
    """Run any template (a name from `arag report list`, or a .toml path) with INPUT=VALUE pairs."""
    inputs: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            _fail(f"expected INPUT=VALUE, got {item!r}")
        inputs[key] = value
    _report(template, inputs, fmt=fmt, output=output, as_json=as_json, index=index, config=config)


@report.command("list")
@_common
@_errors
def report_list(index: Path | None, config: Path | None, as_json: bool) -> None:
    """The templates: packaged ones and those in reports.templates_dir."""
    from agentic_rag.reports import OPERATIONS, load_templates

    settings = Settings.load(config, index=index)
    found = load_templates(settings.reports.templates_dir, OPERATIONS)
    rows = [{"name": t.name, "title": t.title, "inputs": [i.name for i in t.inputs],
             "steps": [f"{s.id}: {s.op}" for s in t.steps], "path": str(t.path)} for t in found.values()]
    if as_json:
        _dump(rows)
        return
    table = Table("name", "inputs", "steps", "title")
    for r in rows:
        table.add_row(escape(r["name"]), escape(" ".join(r["inputs"])), escape(", ".join(r["steps"])), escape(r["title"]))
    out.print(table)


def _service(index: Path | None, config: Path | None) -> Any:
    from agentic_rag.errors import MissingExtraError

    try:
        from agentic_rag.server.service import Service
    except ImportError as exc:
        raise MissingExtraError("the server", "server") from exc
    return Service(Settings.load(config, index=index))


@app.command()
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_common
@_errors
def warm(questions: Path, index: Path | None, config: Path | None, as_json: bool) -> None:
    """Precompute answers for frequent questions into the server's answer cache (one question
    per line, or a .jsonl file with a "question" field)."""
    from agentic_rag.errors import ConfigError
    from agentic_rag.server.schemas import AskRequest

    lines = [line.strip() for line in questions.read_text("utf-8").splitlines() if line.strip()]
    if questions.suffix == ".jsonl":
        try:
            lines = [json.loads(line)["question"] for line in lines]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{questions}: every line needs a \"question\" field ({exc})") from exc
    service = _service(index, config)
    rows = []
    try:
        for q in lines:
            t0 = time.perf_counter()
            a = service.ask(AskRequest(question=q))
            rows.append({"question": q, "status": a.status, "cached": a.cached,
                         "ms": round((time.perf_counter() - t0) * 1000, 1)})
    finally:
        service.close()
    if as_json:
        _dump(rows)
        return
    new = sum(not r["cached"] for r in rows)
    out.print(f"warmed {len(rows)} questions: {new} computed, {len(rows) - new} already cached")


@app.command()
@click.option("--cites", "doc_id", default=None, help="only answers that cited this document")
@click.option("--stale", is_flag=True, help="answers citing documents replaced, superseded or removed since")
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@_common
@_errors
def audit(doc_id: str | None, stale: bool, limit: int, index: Path | None, config: Path | None,
          as_json: bool) -> None:
    """The server's audit log: each answer with the evidence it cited and those sources'
    versions and dates."""
    from agentic_rag.errors import MissingExtraError

    try:
        from agentic_rag.server.audit import AuditLog
    except ImportError as exc:
        raise MissingExtraError("the server", "server") from exc
    settings = Settings.load(config, index=index)
    log = AuditLog(settings.index)
    try:
        if stale:
            from agentic_rag.store import open_index

            with open_index(settings, create=False) as store:
                entries = log.stale(store)
            if doc_id:
                entries = [e for e in entries if doc_id in {s.doc_id for s in e.evidence}]
            entries = entries[:limit]
        else:
            entries = log.entries(doc_id, limit=limit)
    finally:
        log.close()
    if as_json:
        _dump([e.model_dump(mode="json") for e in entries])
        return
    if not entries:
        out.print("no matching answers")
        return
    table = Table("answer_id", "at", "status", "question", "cited (doc version date)", *(["stale"] if stale else []))
    for e in entries:
        cited = "; ".join(dict.fromkeys(f"{s.doc_id} {s.version or '-'} {s.publish_date or '-'}" for s in e.evidence))
        table.add_row(e.answer_id, e.at.strftime("%Y-%m-%d %H:%M"), e.status, escape(_clip(e.question, 40)),
                      escape(cited), *([escape(e.stale)] if stale else []))
    out.print(table)
def _eval_peers(eval_set: Any, backend: Any, run: Any, k: int, cache_dir: Path | None) -> list[Any]:
    from agentic_rag.eval.peers import peer_runs, summarize

    with err.status("running the peers (LlamaIndex, Haystack)"):
        peers = peer_runs(eval_set, backend, k=k, cache_dir=cache_dir)
    return [summarize("ours", run, build_s=run.index.get("build_s") if run.index.get("built") else None), *peers]


def _bundled_examples() -> Path | None:
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        if (base / "examples" / "questions.jsonl").exists():
            return base / "examples"
    return None


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def main() -> None:
    app(prog_name="arag")


if __name__ == "__main__":
    main()
