"""`arag` end to end on real files made in the test: md, html, docx, pdf, a corrupt pdf, an empty file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentic_rag.cli import app

POLICY_MD = """# 江南省医疗保障局关于调整住院费用报销比例的通知

江医保发〔2024〕9号

发布日期：2024年3月1日

## 第一章 总则

第一条 为规范住院医疗费用报销，制定本办法。

第二条 参保人员住院发生的符合规定的医疗费用，具体比例详见第七条。

## 第二章 报销标准

第七条 在职职工住院费用报销比例为90%，退休人员为95%。

第八条 报销款在审核通过后5个工作日内拨付至本人社会保障卡。

本办法自2024年4月1日起施行。

江南省医疗保障局
2024年3月1日
"""

HTML = """<html><head><title>Travel Expense Policy</title></head><body>
<h1>Travel Expense Policy</h1>
<p>Issued: 2024-01-15</p>
<h2>Section 1 Scope</h2><p>This policy applies to all employees travelling on company business.</p>
<h2>Section 2 Hotels</h2><p>The nightly hotel limit is 800 yuan in tier-one cities; see Section 1.</p>
<table><tr><th>City tier</th><th>Limit</th></tr><tr><td>Tier 1</td><td>800</td></tr>
<tr><td>Tier 2</td><td>500</td></tr></table>
</body></html>"""


def _docx(path: Path) -> None:
    import docx

    d = docx.Document()
    d.add_heading("员工休假管理办法", level=1)
    d.add_paragraph("第一条 员工每年享有带薪年休假。")
    d.add_paragraph("第二条 工作满一年不满十年的，年休假5天。")
    d.save(str(path))


def _pdf(path: Path) -> None:
    import pymupdf

    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "Article 1 Employees may work remotely two days per week.", fontsize=11)
    page.insert_text((72, 100), "Article 2 Requests are approved by the line manager.", fontsize=11)
    doc.save(str(path))


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "policy.md").write_text(POLICY_MD, encoding="utf-8")
    (root / "travel.html").write_text(HTML, encoding="utf-8")
    _docx(root / "leave.docx")
    _pdf(root / "remote.pdf")
    return root


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_ingest_search_docs_chunks_rm(corpus: Path, tmp_path: Path):
    index = str(tmp_path / "idx")
    code, out, _ = run("ingest", str(corpus), "--index", index, "--json")
    assert code == 0, out
    files = {Path(f["path"]).name: f for f in json.loads(out)["files"]}
    assert {f["status"] for f in files.values()} == {"added"}
    assert set(files) == {"policy.md", "travel.html", "leave.docx", "remote.pdf"}

    # same content again: nothing changes
    code, out, _ = run("ingest", str(corpus), "--index", index, "--json")
    assert {f["status"] for f in json.loads(out)["files"]} == {"unchanged"}

    code, out, _ = run("docs", "--index", index, "--json")
    docs = {d["title"]: d for d in json.loads(out)}
    policy = docs["江南省医疗保障局关于调整住院费用报销比例的通知"]
    assert policy["publish_date"] == "2024-03-01"
    assert policy["effective_date"] == "2024-04-01"
    assert policy["status"] == "active"

    code, out, _ = run("chunks", policy["doc_id"], "--index", index, "--json")
    clauses = [c["clause"] for c in json.loads(out)]
    assert "第七条" in clauses and "第八条" in clauses
    seventh = next(c for c in json.loads(out) if c["clause"] == "第七条")
    assert "90%" in seventh["text"] and "第八条" not in seventh["text"]

    code, out, _ = run("search", "住院 报销比例", "-k", "3", "--index", index, "--json")
    hits = json.loads(out)
    assert hits and hits[0]["doc_id"] == policy["doc_id"]
    assert {"chunk_id", "doc_id", "title", "clause", "kind", "text", "score"} <= set(hits[0])

    code, out, _ = run("search", "remotely", "--index", index, "--json",
                       "--where", "language", "=", "en")
    assert json.loads(out) and all(h["title"] != policy["title"] for h in json.loads(out))

    code, out, _ = run("rm", policy["doc_id"], "--index", index)
    assert code == 0
    code, out, _ = run("search", "住院 报销比例", "--index", index, "--json")
    assert all(h["doc_id"] != policy["doc_id"] for h in json.loads(out))


def test_changed_file_is_replaced(corpus: Path, tmp_path: Path):
    index = str(tmp_path / "idx")
    run("ingest", str(corpus / "policy.md"), "--index", index)
    (corpus / "policy.md").write_text(POLICY_MD.replace("90%", "85%"), encoding="utf-8")
    code, out, _ = run("ingest", str(corpus / "policy.md"), "--index", index, "--json")
    assert json.loads(out)["files"][0]["status"] == "replaced"
    code, out, _ = run("search", "在职职工 住院费用 报销比例", "--index", index, "--json")
    texts = " ".join(h["text"] for h in json.loads(out))
    assert "85%" in texts and "90%" not in texts


def test_bad_files_fail_alone_and_leave_index_unchanged(corpus: Path, tmp_path: Path):
    index = str(tmp_path / "idx")
    run("ingest", str(corpus / "policy.md"), "--index", index)
    _, before, _ = run("docs", "--index", index, "--json")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "corrupt.pdf").write_bytes(b"%PDF-1.4\n garbage that is not a pdf")
    (bad / "empty.txt").write_bytes(b"")
    (bad / "ok.md").write_text("第一条 出差住宿标准为每晚500元。", encoding="utf-8")
    code, out, err = run("ingest", str(bad), "--index", index, "--json")
    assert code == 1
    status = {Path(f["path"]).name: f for f in json.loads(out)["files"]}
    assert status["ok.md"]["status"] == "added"
    assert status["corrupt.pdf"]["status"] == "failed" and status["corrupt.pdf"]["reason"]
    assert status["empty.txt"]["status"] == "failed" and "empty" in status["empty.txt"]["reason"]
    assert "corrupt.pdf" in err
    _, after, _ = run("docs", "--index", index, "--json")
    assert len(json.loads(after)) == len(json.loads(before)) + 1


def test_clear_errors(tmp_path: Path):
    code, _, err = run("ingest", str(tmp_path / "missing"), "--index", str(tmp_path / "i"))
    assert code != 0 and "missing" in err
    code, _, err = run("chunks", "nope", "--index", str(tmp_path / "i"))
    assert code != 0 and "nope" in err
    code, _, err = run("search", "x", "--index", str(tmp_path / "i"), "--where", "colour", "=", "red")
    assert code != 0 and "colour" in err


def test_subprocess_exit_code_and_one_line_error(tmp_path: Path):
    bad = tmp_path / "arag.toml"
    bad.write_text("[retrieval]\nk = -1\n", encoding="utf-8")
    env = {**os.environ, "ARAG_CONFIG": str(bad)}
    proc = subprocess.run([sys.executable, "-m", "agentic_rag.cli", "docs", "--index", str(tmp_path / "i")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "retrieval.k" in proc.stderr


def test_the_readme_ask_example_is_answered_from_the_bundled_corpus(tmp_path: Path):
    examples = Path(__file__).resolve().parents[1] / "examples" / "docs"
    runner = CliRunner()
    idx = tmp_path / "idx"
    assert runner.invoke(app, ["ingest", str(examples), "--index", str(idx)]).exit_code == 0
    r = runner.invoke(app, ["ask", "2024年住院费用报销比例是多少？", "--index", str(idx), "--json"])
    assert r.exit_code == 0
    answer = json.loads(r.output)
    assert answer["status"] == "answered"
    # the 2024 rates (the 2023 version had 85/80/75), cited from the clause that lists them
    assert "百分之九十、百分之八十五、百分之八十" in answer["text"]
    assert any(c["clause"] == "第十二条" and "百分之九十" in c["quote"] for c in answer["citations"])


@pytest.mark.parametrize("env, named", [
    ({"ARAG_LLM": "x"}, "ARAG_LLM"),
    ({"ARAG_RETRIEVAL__WEIGHTS": "{bad"}, "ARAG_RETRIEVAL__WEIGHTS"),
    ({"ARAG_RETRIVAL__K": "3"}, "did you mean ARAG_RETRIEVAL__K"),
])
def test_a_bad_env_var_is_one_line_and_exit_2_not_a_traceback(tmp_path: Path, env, named):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ARAG_")}
    proc = subprocess.run([sys.executable, "-m", "agentic_rag.cli", "search", "x", "--index",
                           str(tmp_path / "i")], capture_output=True, text=True,
                          env={**clean, **env}, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and named in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [["search", "x"], ["ask", "x"], ["ingest", "."], ["docs"]])
def test_every_command_checks_the_data_files_config_names(tmp_path: Path, monkeypatch, command):
    bad = tmp_path / "lexicon.txt"
    bad.write_text("社保卡\tnot-a-category\n", encoding="utf-8")
    (tmp_path / "arag.toml").write_text(f'[router]\nlexicon = "{bad}"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(*command, "--index", str(tmp_path / "i"))
    assert code == 2 and "router.lexicon" in err and "not-a-category" in err


def test_ask_takes_the_three_controls_as_flags(corpus: Path, tmp_path: Path):
    index = str(tmp_path / "idx")
    run("ingest", str(corpus), "--index", index)
    question = "2021年住院费用报销比例是多少？"  # the corpus has 2024 rules only
    code, out, _ = run("ask", question, "--index", index, "--json", "--retrieval", "1")
    assert code == 0 and json.loads(out)["usage"]["retrieval_rounds"] == 1
    code, out, _ = run("ask", question, "--index", index, "--json")
    normal = json.loads(out)
    code, out, _ = run("ask", question, "--index", index, "--json", "--latitude", "0")
    strict = json.loads(out)
    # a partial answer (the year is missing) becomes an abstention under strict latitude
    assert normal["status"] == "answered" and normal["gaps"] == ["2021"] and normal["citations"]
    assert strict["status"] == "abstained" and not strict["citations"] and "2021" in strict["text"]
    code, _, err = run("ask", question, "--index", index, "--reflection", "3")
    assert code == 2 and "--reflection" in err
