"""`arag ingest` under crashes and bad arguments: a kill at any file switch leaves a usable
index that the next ingest completes; each bad path fails alone with its true reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentic_rag.cli import app
from agentic_rag.store.embedded import EmbeddedStore
from agentic_rag.store.vectors import VectorIndex

ROOT = Path(__file__).resolve().parents[1]

# `arag ...` that SIGKILLs itself on the rename whose target ends with argv[1], as
# `strace -e inject=rename:signal=SIGKILL` does: the rename itself never happens.
_KILL_AT_RENAME = textwrap.dedent("""
    import os, signal, sys
    target = sys.argv[1]
    def killing(real):
        def rename(src, dst, *args, **kwargs):
            if str(dst).endswith(target):
                os.kill(os.getpid(), signal.SIGKILL)
            return real(src, dst, *args, **kwargs)
        return rename
    os.replace, os.rename = killing(os.replace), killing(os.rename)
    from agentic_rag.cli import main
    sys.argv = ["arag", *sys.argv[2:]]
    main()
""")


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


@pytest.mark.parametrize("target", ["vectors/CURRENT", "manifest.json"],
                         ids=["vector-switch", "bm25-snapshot"])
def test_an_ingest_killed_at_a_file_switch_leaves_an_index_the_next_ingest_completes(tmp_path, target):
    index = tmp_path / "idx"
    first, new = tmp_path / "first.txt", tmp_path / "new.txt"
    first.write_text("第一条 员工每年享有带薪年休假五天。\n", encoding="utf-8")
    new.write_text("Article 1 The nightly hotel limit is 800 yuan in tier-one cities.\n", encoding="utf-8")
    assert run("ingest", str(first), "--index", str(index))[0] == 0
    killed = subprocess.run([sys.executable, "-c", _KILL_AT_RENAME, target, "ingest", str(new),
                             "--index", str(index)], capture_output=True, text=True, env=_env(),
                            timeout=300)
    assert killed.returncode == -9, killed.stderr
    code, out, err = run("ask", "What is the nightly hotel limit?", "--index", str(index))
    assert code == 0, err
    code, out, err = run("ingest", str(new), "--index", str(index), "--json")
    assert code == 0, err
    assert [f["status"] for f in json.loads(out)["files"]] == ["unchanged"]  # committed before the kill
    with EmbeddedStore(index) as store:
        chunk_ids = set(store.all_chunk_ids())
    assert set(VectorIndex.open(index / "vectors").ids()) == chunk_ids  # the vectors caught up


# -- bad paths: each fails alone (issue 11, defects 9 and 12) ------------------------------------

def _without_root_file_access():
    """preexec_fn for a subprocess that meets file permissions as an ordinary user would.

    Tests run as root, which reads everything; dropping CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH from the capability bounding set makes root's exec'd child honour
    modes like any user while still running the interpreter under /root (which `nobody`
    cannot reach)."""
    if os.geteuid() != 0:
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)

    def drop() -> None:
        for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "PR_CAPBSET_DROP failed")

    probe = subprocess.run([sys.executable, "-c", "pass"], preexec_fn=drop, capture_output=True)
    if probe.returncode != 0:
        pytest.skip("cannot drop root's file-access capabilities here (no CAP_SETPCAP)")
    return drop


def _arag(*args: str, preexec=None) -> subprocess.CompletedProcess:
    env = {**_env(), "ARAG_EMBEDDER__PROVIDER": "none"}
    return subprocess.run([sys.executable, "-m", "agentic_rag.cli", *args], capture_output=True,
                          text=True, env=env, timeout=120, preexec_fn=preexec)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_unreachable_files_and_unreadable_folders_fail_alone_with_a_reason(tmp_path):
    preexec = _without_root_file_access()
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked" / "file.txt").write_text("第一条 锁住的文件。", encoding="utf-8")
    (tmp_path / "good.txt").write_text("Article 1 The hotel limit is 800 yuan.", encoding="utf-8")
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "ok.txt").write_text("Article 2 Meals are 100 yuan a day.", encoding="utf-8")
    (tree / "sub" / "in.txt").write_text("Article 3 Taxis are reimbursed.", encoding="utf-8")
    (tree / "secret.txt").write_text("Article 4 Unreadable.", encoding="utf-8")
    os.chmod(tmp_path / "locked", 0)
    os.chmod(tree / "sub", 0)
    os.chmod(tree / "secret.txt", 0)
    try:
        proc = _arag("ingest", str(tmp_path / "locked" / "file.txt"), str(tmp_path / "good.txt"),
                     str(tree), str(tree / "secret.txt"), "--index", str(tmp_path / "idx"), "--json",
                     preexec=preexec)
    finally:
        for p in (tmp_path / "locked", tree / "sub", tree / "secret.txt"):
            os.chmod(p, 0o755)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    files = {Path(f["path"]).name: f for f in json.loads(proc.stdout)["files"]}
    assert files["good.txt"]["status"] == files["ok.txt"]["status"] == "added"
    assert "cannot enter the folder" in files["file.txt"]["reason"]
    assert files["sub"]["status"] == "failed" and "folder skipped" in files["sub"]["reason"]
    secret = [f for f in json.loads(proc.stdout)["files"] if f["path"].endswith("secret.txt")]
    assert len(secret) == 1 and "permission denied" in secret[0]["reason"]  # once, though named twice
    assert all(f["status"] == "failed" for n, f in files.items() if n not in ("good.txt", "ok.txt"))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_missing_looping_and_special_paths_fail_alone_and_the_rest_lands(tmp_path):
    good = tmp_path / "good.md"
    good.write_text("# Travel\n\nArticle 1 The hotel limit is 800 yuan.", encoding="utf-8")
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    broken = tmp_path / "broken.txt"
    broken.symlink_to(tmp_path / "gone.txt")
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    os.mkfifo(folder / "inner.md")
    (folder / "back").symlink_to(tmp_path)  # a link up the tree: followed once, no loop
    code, out, err = run("ingest", str(tmp_path / "missing.txt"), str(loop), str(broken), str(fifo),
                         str(good), str(folder), "--index", str(tmp_path / "idx"), "--json")
    assert code == 1
    rows = json.loads(out)["files"]
    by_name = {Path(f["path"]).name: f for f in rows}
    assert by_name["good.md"]["status"] == "added"
    assert by_name["missing.txt"]["reason"] == "no such file or folder"
    assert "symlink loop" in by_name["loop.txt"]["reason"]
    assert "broken symlink" in by_name["broken.txt"]["reason"]
    assert "FIFO" in by_name["pipe.txt"]["reason"] and "FIFO" in by_name["inner.md"]["reason"]
    assert sum(f["status"] == "added" for f in rows) == 1  # good.md, once despite the link back
    assert "missing.txt" in err and "Traceback" not in err


def test_a_truncated_pdf_says_truncated_not_scanned(tmp_path):
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Article 1 Employees may work remotely.", fontsize=11)
    data = doc.tobytes()
    (tmp_path / "cut.pdf").write_bytes(data[: len(data) // 2])
    blank = pymupdf.open()
    blank.new_page()
    blank.save(str(tmp_path / "blank.pdf"))
    code, out, _ = run("ingest", str(tmp_path), "--index", str(tmp_path / "idx"), "--json")
    reasons = {Path(f["path"]).name: f["reason"] for f in json.loads(out)["files"]}
    assert code == 1
    assert "truncated" in reasons["cut.pdf"] and "scanned" not in reasons["cut.pdf"]
    assert "scanned" in reasons["blank.pdf"]
