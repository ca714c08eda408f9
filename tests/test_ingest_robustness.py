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
