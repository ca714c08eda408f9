"""Probe `arag ingest` and the settings with bad inputs, bad configurations and kills (a script,
not a test): every case must end in a clear message, never a traceback, never an index that
later commands cannot use, never a lost document.

    python bench/probe_ingest.py                 # all three parts (~3-5 minutes on 2 cores)
    python bench/probe_ingest.py --skip-kills    # inputs and configs only (~1 minute)

Parts:

1. **bad inputs** (empty, binary, huge, encrypted/truncated/blank PDFs, bad sidecars, mixed
   encodings, symlink loops, FIFOs, unreadable files and folders, ...): each is ingested in one
   command together with a good control file. Counted: tracebacks; inputs that got no row in
   the report (silently skipped); indexes that `arag docs`/`arag search` cannot use afterwards;
   control documents lost. Unreadable cases run in a subprocess without root's file-access
   capabilities, so permissions apply as for an ordinary user.
2. **bad configurations** (wrong types, unknown keys, misspelled ARAG_* variables, bad data
   file paths, zero or negative weights, malformed TOML, ...): `arag search` under each.
   Counted: tracebacks, multi-line errors, and bad values accepted (exit 0).
3. **SIGKILL at each rename** of an ingest of a new file into an index that holds one (`strace
   -e inject=rename:signal=SIGKILL:when=N`, or an os.replace hook where strace is missing), then
   the same checks plus: the vector index is not set aside as damaged, and the re-run of that
   ingest completes the index (its vectors hold every stored chunk).

Exit status 1 when any count that should be 0 is not.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

from click.testing import CliRunner  # noqa: E402

from agentic_rag.cli import app  # noqa: E402

GOOD = "Article 1 The nightly hotel limit for staff travelling on business is 800 yuan.\n"


def _env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    return {**base, "PYTHONPATH": str(SRC), **extra}


def _cli(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str, str]:
    """(exit code, stdout, stderr, traceback or "") of `arag ARGS` run in this process."""
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=True)
    trace = ""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        trace = "".join(traceback.format_exception(result.exception))
    return result.exit_code, result.stdout, result.stderr, trace


def _no_dac() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH out of the bounding set
        libc.prctl(24, cap, 0, 0, 0)


def _subprocess_cli(args: list[str], unprivileged: bool = False, **env: str) -> tuple[int, str, str, str]:
    proc = subprocess.run([sys.executable, "-m", "agentic_rag.cli", *args], capture_output=True,
                          text=True, env=_env(**env), timeout=300,
                          preexec_fn=_no_dac if unprivileged and os.geteuid() == 0 else None)
    trace = proc.stderr if "Traceback" in proc.stderr else ""
    return proc.returncode, proc.stdout, proc.stderr, trace


def _usable(index: Path, env: dict[str, str] | None = None) -> str:
    """"" when `arag docs` and `arag search` work on ``index``, else why not."""
    for args in (["docs", "--json"], ["search", "hotel limit", "--json"]):
        code, _, err, trace = _cli([*args, "--index", str(index)], env=env)
        if code != 0 or trace:
            return f"arag {args[0]} exit {code}: {(trace or err).strip().splitlines()[-1:]}"
    return ""


# ---------------------------------------------------------------------------------- 1. inputs

def _pdf_bytes(text: str = "Article 2 Meals are 100 yuan a day.", **save: object) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text, fontsize=11)
    return doc.tobytes(**save)


def _docx_bytes() -> bytes:
    import io

    import docx

    d = docx.Document()
    d.add_paragraph("Article 3 Taxis are reimbursed.")
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def _make_inputs(base: Path) -> list[tuple[str, Path, bool]]:
    """(kind, path, unprivileged) of each bad input, created under ``base``."""
    made: list[tuple[str, Path, bool]] = []

    def file(kind: str, name: str, data: bytes | str, unprivileged: bool = False) -> Path:
        folder = base / kind
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        made.append((kind, path, unprivileged))
        return path

    file("empty", "empty.txt", b"")
    file("whitespace only", "blank.txt", "   \n\n\t \n")
    file("binary as .txt", "blob.txt", bytes(range(256)) * 40)
    file("NUL bytes in text", "nul.txt", b"Article 1 text\x00\x00\x00 more")
    file("huge (over max_file_mb)", "huge.txt", b"a" * (51 * 1024 * 1024))
    file("one 5 MB line", "long.txt", ("x" * 5_000_000) + "\n")
    file("mixed UTF-8 + Latin-1", "mixed.txt", "Café au lait\n".encode() + "Crème brûlée\n".encode("latin-1"))
    file("mixed UTF-8 + GBK", "mixedzh.txt", "第一条 甲。\n".encode() + "第二条 乙。\n".encode("gbk"))
    file("UTF-16 without BOM", "u16.txt", "Article 1 text".encode("utf-16-le"))
    file("invalid UTF-8 after BOM", "bom.txt", b"\xef\xbb\xbfArticle \xff\xfe\xfd")
    file("control characters", "ctrl.txt", "".join(chr(i) for i in range(1, 31)) * 50)
    file("unsupported suffix", "data.xyz", "Article 1 text")
    file("no suffix", "README", "Article 1 text")
    pdf = _pdf_bytes()
    file("truncated PDF", "cut.pdf", pdf[: len(pdf) // 2])
    file("truncated PDF (tail lost)", "tail.pdf", pdf[: len(pdf) - 40])
    file("encrypted PDF", "locked.pdf", _pdf_bytes(encryption=4, user_pw="u", owner_pw="o"))
    import pymupdf

    blank = pymupdf.open()
    blank.new_page()
    file("PDF without text", "scan.pdf", blank.tobytes())
    file("not a PDF", "fake.pdf", b"%PDF-1.7\n garbage garbage")
    file("corrupt DOCX", "bad.docx", b"PK\x03\x04 not really a zip")
    file("truncated DOCX", "cut.docx", _docx_bytes()[:600])
    file("HTML of scripts only", "js.html", "<html><script>var a=1;</script></html>")
    file("deeply nested HTML", "deep.html", "<div>" * 20000 + "Article 1 deep" + "</div>" * 20000)
    file("Markdown of 20,000 headings", "outline.md", "\n\n".join(f"## Part {i}" for i in range(20000)))
    doc = file("sidecar: invalid JSON", "a.txt", GOOD.replace("800", "801"))
    doc.with_name("a.txt.meta.json").write_text("{not json", encoding="utf-8")
    doc = file("sidecar: bad status", "b.txt", GOOD.replace("800", "802"))
    doc.with_name("b.txt.meta.json").write_text('{"status": "draft"}', encoding="utf-8")
    doc = file("sidecar: wrong types", "c.txt", GOOD.replace("800", "803"))
    doc.with_name("c.txt.meta.json").write_text('{"title": 5, "supersedes": {"x": 1}}', encoding="utf-8")
    doc = file("sidecar: a JSON list", "d.txt", GOOD.replace("800", "804"))
    doc.with_name("d.txt.meta.json").write_text("[1, 2]", encoding="utf-8")
    doc = file("sidecar: bad date", "e.txt", GOOD.replace("800", "805"))
    doc.with_name("e.txt.meta.json").write_text('{"publish_date": "someday"}', encoding="utf-8")
    file("jsonl: garbage lines", "bad.jsonl", '{"id": 1, "text": "ok line"}\nnot json\n[1]\n{"id": 2}\n')
    file("jsonl: bad meta", "meta.jsonl", '{"id": "m", "text": "Article 9 x", "meta": {"status": 7}}\n')
    file("jsonl: not documents", "q.jsonl", '{"question": "what?"}\n')
    file("gzip: corrupt", "bad.jsonl.gz", b"\x1f\x8b\x08\x00 not gzip at all")

    def special(kind: str, make) -> None:
        folder = base / kind
        folder.mkdir(parents=True, exist_ok=True)
        path = make(folder)
        made.append((kind, path, False))

    special("missing path", lambda f: f / "missing.txt")
    special("symlink loop", lambda f: (f / "loop.txt").symlink_to(f / "loop.txt") or f / "loop.txt")
    special("broken symlink", lambda f: (f / "dead.txt").symlink_to(f / "gone.txt") or f / "dead.txt")
    special("FIFO", lambda f: os.mkfifo(f / "pipe.txt") or f / "pipe.txt")
    special("folder with a FIFO and a link up", lambda f: (
        os.mkfifo(f / "inner.md"), (f / "up").symlink_to(base), f)[-1])
    special("a path through a file", lambda f: (f / "file.txt").write_text("x") and f / "file.txt" / "y.txt")
    locked = file("unreadable file", "secret.txt", GOOD.replace("800", "806"), unprivileged=True)
    os.chmod(locked, 0)
    inside = file("file in a folder without x", "inner.txt", GOOD.replace("800", "807"), unprivileged=True)
    os.chmod(inside.parent, 0o600)
    tree = base / "unreadable subfolder"
    (tree / "sub").mkdir(parents=True)
    (tree / "ok.txt").write_text(GOOD.replace("800", "808"), encoding="utf-8")
    (tree / "sub" / "in.txt").write_text(GOOD.replace("800", "809"), encoding="utf-8")
    os.chmod(tree / "sub", 0)
    made.append(("unreadable subfolder", tree, True))
    return made


def probe_inputs(work: Path) -> dict[str, object]:
    base = work / "inputs"
    base.mkdir()
    control = work / "control.txt"
    control.write_text(GOOD, encoding="utf-8")
    cases = _make_inputs(base)
    rows, tracebacks, unreported, unusable, lost = [], 0, 0, 0, 0
    for n, (kind, path, unprivileged) in enumerate(cases):
        index = work / f"idx-in-{n}"
        args = ["ingest", str(path), str(control), "--index", str(index), "--json"]
        t0 = time.perf_counter()
        if unprivileged:
            index.mkdir()
            code, out, err, trace = _subprocess_cli(args, unprivileged=True, ARAG_EMBEDDER__PROVIDER="none")
        else:
            code, out, err, trace = _cli(args, env={"ARAG_EMBEDDER__PROVIDER": "none"})
        seconds = time.perf_counter() - t0
        try:
            files = json.loads(out)["files"]
        except (ValueError, KeyError):
            files = []
        mine = [f for f in files if Path(f["path"]).name != "control.txt"]
        ok_control = any(Path(f["path"]).name == "control.txt" and f["status"] == "added" for f in files)
        why_unusable = _usable(index, env={"ARAG_EMBEDDER__PROVIDER": "none"})
        tracebacks += bool(trace)
        unreported += not mine
        unusable += bool(why_unusable)
        lost += not ok_control
        shown = "; ".join(f"{f['status']}: {f['reason']}"[:110] for f in mine[:2]) or "(no row)"
        rows.append((kind, code, round(seconds, 1), shown, trace.strip().splitlines()[-1:] or "",
                     why_unusable))
    for p in base.rglob("*"):  # let the temp folder be removed
        with contextlib.suppress(OSError):
            if not p.is_symlink():
                os.chmod(p, 0o755)
    return {"cases": len(cases), "tracebacks": tracebacks, "unreported": unreported,
            "unusable_indexes": unusable, "documents_lost": lost, "rows": rows}


# --------------------------------------------------------------------------------- 2. configs

def _config_cases(tmp: Path) -> list[tuple[str, dict[str, str], str]]:
    """(what, env, arag.toml text)."""
    bad_json = tmp / "bad.json"
    bad_json.write_text("{not json", encoding="utf-8")
    bad_lex = tmp / "lexicon.txt"
    bad_lex.write_text("社保卡\tnonsense\n", encoding="utf-8")
    folder = tmp / "a-folder"
    folder.mkdir()
    missing = tmp / "missing.json"
    env_cases = {
        "ARAG_LLM=x": {"ARAG_LLM": "x"},
        "ARAG_LLM=[]": {"ARAG_LLM": "[]"},
        "ARAG_RETRIEVAL={bad": {"ARAG_RETRIEVAL": "{bad"},
        "ARAG_RETRIEVAL__WEIGHTS={bad": {"ARAG_RETRIEVAL__WEIGHTS": "{bad"},
        "ARAG_RETRIEVAL__WEIGHTS=3": {"ARAG_RETRIEVAL__WEIGHTS": "3"},
        "ARAG_RETRIVAL__K=3 (typo)": {"ARAG_RETRIVAL__K": "3"},
        "ARAG_RETRIEVAL__TOPK=3 (typo)": {"ARAG_RETRIEVAL__TOPK": "3"},
        "ARAG_LMM__PROVIDER=openai (typo)": {"ARAG_LMM__PROVIDER": "openai"},
        "ARAG_LLM_APIKEY (typo)": {"ARAG_LLM_APIKEY": "sk-x"},
        "ARAG_INDX (typo)": {"ARAG_INDX": "x"},
        "ARAG_FOO": {"ARAG_FOO": "1"},
        "ARAG_RETRIEVAL__K=abc": {"ARAG_RETRIEVAL__K": "abc"},
        "ARAG_RETRIEVAL__K=0": {"ARAG_RETRIEVAL__K": "0"},
        "ARAG_RETRIEVAL__K=1e9": {"ARAG_RETRIEVAL__K": "1000000000"},
        "ARAG_RETRIEVAL__FUSION=max": {"ARAG_RETRIEVAL__FUSION": "max"},
        "ARAG_RETRIEVAL__WEIGHTS__VECTOR=-1": {"ARAG_RETRIEVAL__WEIGHTS__VECTOR": "-1"},
        "ARAG_RETRIEVAL__WEIGHTS__BM25=nan": {"ARAG_RETRIEVAL__WEIGHTS__BM25": "nan"},
        "ARAG_RETRIEVAL__WEIGHTS__GRAPH=inf": {"ARAG_RETRIEVAL__WEIGHTS__GRAPH": "inf"},
        "ARAG_RETRIEVAL__WEIGHTS all 0": {"ARAG_RETRIEVAL__WEIGHTS": '{"vector":0,"bm25":0,"graph":0,"position":0}'},
        "ARAG_REASONER__AUTHORITY_WEIGHTS=[1]": {"ARAG_REASONER__AUTHORITY_WEIGHTS": "[1]"},
        "ARAG_REASONER__AUTHORITY_WEIGHTS negative": {"ARAG_REASONER__AUTHORITY_WEIGHTS": '{"npc": -2}'},
        "ARAG_REASONER__AUTHORITY_WEIGHTS__NPC=-1": {"ARAG_REASONER__AUTHORITY_WEIGHTS__NPC": "-1"},
        "ARAG_LLM__PROVIDER=gpt": {"ARAG_LLM__PROVIDER": "gpt"},
        "ARAG_LLM__TIMEOUT_S=-5": {"ARAG_LLM__TIMEOUT_S": "-5"},
        "ARAG_RUNTIME__MAX_STEPS=0": {"ARAG_RUNTIME__MAX_STEPS": "0"},
        "ARAG_RUNTIME__MODE=loop": {"ARAG_RUNTIME__MODE": "loop"},
        "ARAG_EMBEDDER__PROVIDER=bert": {"ARAG_EMBEDDER__PROVIDER": "bert"},
        "ARAG_EMBEDDER__BATCH_SIZE=0": {"ARAG_EMBEDDER__BATCH_SIZE": "0"},
        "ARAG_INGEST__MAX_FILE_MB=0": {"ARAG_INGEST__MAX_FILE_MB": "0"},
        "ARAG_ROUTER__MIN_CONFIDENCE=2": {"ARAG_ROUTER__MIN_CONFIDENCE": "2"},
        "ARAG_ROUTER__LEXICON missing": {"ARAG_ROUTER__LEXICON": str(missing)},
        "ARAG_ROUTER__INTENT_TREE bad JSON": {"ARAG_ROUTER__INTENT_TREE": str(bad_json)},
        "ARAG_RETRIEVAL__SYNONYMS a folder": {"ARAG_RETRIEVAL__SYNONYMS": str(folder)},
        "ARAG_REASONER__OVERRIDES_FILE bad JSON": {"ARAG_REASONER__OVERRIDES_FILE": str(bad_json)},
        "ARAG_CONFIG missing": {"ARAG_CONFIG": str(missing)},
    }
    toml_cases = {
        "toml: malformed": "[retrieval\nk=",
        "toml: k a string": '[retrieval]\nk = "many"\n',
        "toml: k negative": "[retrieval]\nk = -1\n",
        "toml: unknown key": "[retrieval]\ntop_k = 5\n",
        "toml: unknown section": "[retreival]\nk = 5\n",
        "toml: section a string": 'retrieval = "x"\n',
        "toml: weights a list": "[retrieval]\nweights = [1, 2]\n",
        "toml: all-zero weights": "[retrieval.weights]\nvector = 0\nbm25 = 0\ngraph = 0\nposition = 0\n",
        "toml: negative authority": '[reasoner.authority_weights]\n"国务院" = -1\n',
        "toml: api_key in file": '[llm]\napi_key = "sk-file"\n',
        "toml: lexicon bad category": f'[router]\nlexicon = "{bad_lex}"\n',
        "toml: colloquial rules missing": f'[router]\ncolloquial_rules = "{missing}"\n',
        "toml: intent tree a folder": f'[router]\nintent_tree = "{folder}"\n',
        "toml: synonyms bad JSON": f'[retrieval]\nsynonyms = "{bad_json}"\n',
        "toml: overrides missing": f'[reasoner]\noverrides_file = "{missing}"\n',
        "toml: max_rounds 99": "[retrieval]\nmax_rounds = 99\n",
        "toml: diversity a dict": "[retrieval]\ndiversity = {a = 1}\n",
        "toml: not UTF-8": "[retrieval]\n# caf\xe9\n",
    }
    cases = [(what, env, "") for what, env in env_cases.items()]
    cases += [(what, {}, text) for what, text in toml_cases.items()]
    return cases


def probe_configs(work: Path) -> dict[str, object]:
    tmp = work / "configs"
    tmp.mkdir()
    index = work / "idx-config"
    _cli(["ingest", str(work / "control.txt"), "--index", str(index)], env={"ARAG_EMBEDDER__PROVIDER": "none"})
    rows, tracebacks, multiline, accepted = [], 0, 0, 0
    cwd = os.getcwd()
    for n, (what, env, toml) in enumerate(_config_cases(tmp)):
        folder = tmp / f"case-{n}"
        folder.mkdir()
        if toml:
            data = toml.encode("latin-1") if "not UTF-8" in what else toml.encode("utf-8")
            (folder / "arag.toml").write_bytes(data)
        os.chdir(folder)
        try:
            code, out, err, trace = _cli(["search", "hotel", "--index", str(index)], env=env)
        finally:
            os.chdir(cwd)
        lines = [line for line in err.strip().splitlines() if line.strip()]
        tracebacks += bool(trace)
        multiline += len(lines) > 1
        accepted += code == 0
        rows.append((what, code, (lines[0] if lines else "(no message)")[:150],
                     trace.strip().splitlines()[-1:] or ""))
    return {"cases": len(rows), "tracebacks": tracebacks, "multi_line_errors": multiline,
            "accepted": accepted, "rows": rows}


# ----------------------------------------------------------------------------------- 3. kills

_HOOK = textwrap.dedent("""
    import os, signal, sys
    n, count = int(sys.argv[1]), [0]
    def killing(real):
        def rename(src, dst, *args, **kwargs):
            count[0] += 1
            if count[0] == n:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dst, *args, **kwargs)
        return rename
    os.replace, os.rename = killing(os.replace), killing(os.rename)
    from agentic_rag.cli import main
    sys.argv = ["arag", *sys.argv[2:]]
    main()
""")


def _vector_ids(index: Path) -> tuple[set[str], bool]:
    """The chunk ids in ``index``'s vector index, and whether it was found damaged (set aside,
    or an error opening it)."""
    from agentic_rag.errors import AragError
    from agentic_rag.store.vectors import VectorIndex

    try:
        vectors = VectorIndex.open(index / "vectors")
    except AragError:
        return set(), True
    return set(vectors.ids()), bool(vectors.reset_reason)


def probe_kills(work: Path) -> dict[str, object]:
    from agentic_rag.store.embedded import EmbeddedStore

    strace = shutil.which("strace")
    first, new = work / "kill-first.txt", work / "kill-new.txt"
    first.write_text("第一条 员工每年享有带薪年休假五天。\n", encoding="utf-8")
    new.write_text("Article 1 The nightly hotel limit is 800 yuan in tier-one cities.\n", encoding="utf-8")

    def prepared(name: str) -> Path:
        index = work / name
        _cli(["ingest", str(first), "--index", str(index)])
        return index

    def killed_at(n: int, index: Path) -> int:
        args = ["ingest", str(new), "--index", str(index)]
        if strace:
            cmd = ["strace", "-f", "-qq", "-o", os.devnull, "-e", "trace=rename",
                   "-e", f"inject=rename:signal=SIGKILL:when={n}", sys.executable, "-m", "agentic_rag.cli", *args]
        else:
            cmd = [sys.executable, "-c", _HOOK, str(n), *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300).returncode

    # how many renames a clean ingest of the new file makes
    count_index = prepared("idx-count")
    if strace:
        trace_file = work / "renames.txt"
        subprocess.run(["strace", "-f", "-qq", "-o", str(trace_file), "-e", "trace=rename",
                        sys.executable, "-m", "agentic_rag.cli", "ingest", str(new), "--index", str(count_index)],
                       capture_output=True, env=_env(), timeout=300)
        renames = [line for line in trace_file.read_text().splitlines() if "rename(" in line]
    else:
        renames = []
    total = len(renames) or 12
    rows, tracebacks, unusable, lost, behind, set_aside = [], 0, 0, 0, 0, 0
    for n in range(1, total + 1):
        index = prepared(f"idx-kill-{n}")
        rc = killed_at(n, index)
        named = re.search(r'rename\("[^"]*", "([^"]*)"', renames[n - 1]) if renames else None
        what = named.group(1) if named else f"rename {n}"
        set_aside += _vector_ids(index)[1]
        why = _usable(index)
        code, out, err, trace = _cli(["ask", "What is the nightly hotel limit?", "--index", str(index)])
        if code != 0 or trace:
            why = why or f"arag ask exit {code}: {(trace or err).strip().splitlines()[-1:]}"
        code2, out2, err2, trace2 = _cli(["ingest", str(new), "--index", str(index), "--json"])
        tracebacks += bool(trace or trace2)
        if code2 != 0:
            why = why or f"re-ingest exit {code2}: {err2.strip()[:120]}"
        unusable += bool(why)
        with EmbeddedStore(index) as store:
            sources = {Path(d.source).name for d in store.documents()}
            chunk_ids = set(store.all_chunk_ids())
        vectors, damaged = _vector_ids(index)
        behind_why = "vector index unreadable" if damaged and not vectors else ""
        lost += not {"kill-first.txt", "kill-new.txt"} <= sources
        behind += vectors != chunk_ids
        rows.append((n, what.replace(str(work / "idx-count"), "<index>"), rc, why or "usable",
                     "complete" if vectors == chunk_ids else
                     behind_why or f"vectors {len(vectors)} / chunks {len(chunk_ids)}"))
    return {"kills": total, "via": "strace" if strace else "os.replace hook", "tracebacks": tracebacks,
            "unusable_indexes": unusable, "documents_lost": lost, "vectors_set_aside": set_aside,
            "vectors_behind_after_reingest": behind, "rows": rows}


# ------------------------------------------------------------------------------------- main

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-kills", action="store_true", help="only bad inputs and configs")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    opts = parser.parse_args()
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="arag-probe-"))
    try:
        inputs = probe_inputs(work)
        configs = probe_configs(work)
        kills = probe_kills(work) if not opts.skip_kills else None
    finally:
        for p in work.rglob("*"):
            with contextlib.suppress(OSError):
                if not p.is_symlink():
                    os.chmod(p, 0o755)
        shutil.rmtree(work, ignore_errors=True)
    summary = {"inputs": inputs, "configs": configs, "kills": kills,
               "seconds": round(time.perf_counter() - t0, 1)}
    bad = (inputs["tracebacks"] + inputs["unreported"] + inputs["unusable_indexes"]
           + inputs["documents_lost"] + configs["tracebacks"] + configs["multi_line_errors"]
           + configs["accepted"])
    if kills:
        bad += (kills["tracebacks"] + kills["unusable_indexes"] + kills["documents_lost"]
                + kills["vectors_set_aside"] + kills["vectors_behind_after_reingest"])
    if opts.json:
        print(json.dumps(summary, ensure_ascii=False, indent=1, default=str))
        return 1 if bad else 0
    print(f"## bad inputs: {inputs['cases']} kinds")
    for kind, code, secs, shown, trace, why in inputs["rows"]:
        print(f"  {kind:34} exit {code}  {secs:5.1f}s  {shown}{'  TRACEBACK ' + str(trace) if trace else ''}"
              f"{'  UNUSABLE: ' + why if why else ''}")
    print(f"  -> tracebacks {inputs['tracebacks']}, unreported inputs {inputs['unreported']}, "
          f"unusable indexes {inputs['unusable_indexes']}, documents lost {inputs['documents_lost']}")
    print(f"## bad configurations: {configs['cases']} (arag search under each)")
    for what, code, line, trace in configs["rows"]:
        print(f"  {what:42} exit {code}  {line}{'  TRACEBACK ' + str(trace) if trace else ''}")
    print(f"  -> tracebacks {configs['tracebacks']}, multi-line errors {configs['multi_line_errors']}, "
          f"bad values accepted {configs['accepted']}")
    if kills:
        print(f"## SIGKILL at each rename of an ingest ({kills['kills']} renames, via {kills['via']})")
        for n, what, rc, why, vec in kills["rows"]:
            print(f"  {n:2} {what:48} exit {rc}  then: {why}; after re-ingest: {vec}")
        print(f"  -> tracebacks {kills['tracebacks']}, unusable indexes {kills['unusable_indexes']}, "
              f"documents lost {kills['documents_lost']}, vector indexes set aside as damaged "
              f"{kills['vectors_set_aside']}, vectors behind after re-ingest "
              f"{kills['vectors_behind_after_reingest']}")
    print(f"total {summary['seconds']} s; {'all zero' if not bad else f'{bad} findings'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
