"""User templates from a folder, abort between steps, the step cap, the LLM's wording checked,
and bad input: each one clear error naming what is wrong."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from agentic_rag import Engine
from agentic_rag.cli import app
from agentic_rag.errors import ConfigError, NotFoundError
from agentic_rag.models.llm import ScriptedLLM
from agentic_rag.reports import ReportRunner, TemplateError, load_template
from agentic_rag.runtime import Limits

USER_TEMPLATE = """
name = "deadline-check"
title = "Submission deadlines"

[[inputs]]
name = "topic"
kind = "topic"

[[steps]]
id = "found"
op = "retrieve"
args = { query = "{topic}", k = 10 }
verify = ["cited"]

[[steps]]
id = "deadline"
op = "check_condition"
from = "found"
args = { condition = "mentions", term = "15个工作日" }

[[steps]]
id = "answer"
op = "ask"
args = { question = "{topic}的期限是多少？" }
"""


def test_a_user_template_from_the_configured_folder_runs(engine, tmp_path: Path):
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "deadline.toml").write_text(USER_TEMPLATE, encoding="utf-8")
    runner = ReportRunner(engine, templates_dir=folder)
    assert {"compare-versions", "topic-brief", "deadline-check"} <= set(runner.templates())
    report = runner.run("deadline-check", {"topic": "补贴申请"})
    assert [s.step for s in report.sections] == ["found", "deadline", "answer"]
    mention = report.sections[1]
    assert mention.lines and all("15个工作日" in line.text for line in mention.lines)
    answer = report.sections[2]
    assert answer.lines and all(line.citations for line in answer.lines)
    kinds = [e.kind for e in report.trace]
    assert kinds[0] == "plan" and kinds[-1] == "final" and kinds.count("step") == 3 and "route" in kinds


def test_abort_between_steps_keeps_the_sections_done(engine, doc_ids):
    abort = threading.Event()

    def on_event(event):
        if event.kind == "verify":
            abort.set()  # during the first step: the run stops before the second

    report = ReportRunner(engine).run("compare-versions", {"old": doc_ids["notice_2023"], "new": doc_ids["notice_2025"]},
                                      on_event=on_event, abort=abort)
    assert report.status == "aborted"
    assert [s.step for s in report.sections] == ["clauses"]
    assert any(e.kind == "abort" for e in report.trace)
    assert any("not run (aborted)" in g for g in report.gaps)


def test_the_step_cap_ends_the_report_incomplete(engine, doc_ids):
    runner = ReportRunner(engine, limits=Limits(max_steps=2))
    report = runner.run("compare-versions", {"old": doc_ids["notice_2023"], "new": doc_ids["notice_2025"]})
    assert report.status == "incomplete" and len(report.sections) == 2
    assert any("step cap (2)" in g for g in report.gaps)


def test_the_llm_rewords_only_what_the_clauses_support(engine, doc_ids):
    def reword(messages):
        user = next(m["content"] for m in messages if m["role"] == "user")
        lines = [line.split(". ", 1)[1] for line in user.splitlines() if ". " in line]
        # every line keeps its facts, except that 450元 becomes a number the clauses do not state
        return {"lines": [line.replace("450元", "480元") + "。" for line in lines]}

    scripted = Engine(engine.settings, store=engine.store, llm=ScriptedLLM(reword))
    report = ReportRunner(scripted).run("compare-versions", {"old": doc_ids["notice_2023"], "new": doc_ids["notice_2025"]})
    summary = next(s for s in report.sections if s.step == "summary")
    assert not any("480元" in line.text for line in summary.lines)
    assert any("450元" in line.text for line in summary.lines)
    fallbacks = [e for e in report.trace if e.kind == "fallback" and e.tool == "report_wording"]
    assert fallbacks and "not supported" in (fallbacks[0].fallback or "")
    assert any(line.text.endswith("。") for line in summary.lines)  # the supported rewordings are kept
    assert any(e.kind == "write" and e.tool == "report_wording" for e in report.trace)


def test_unknown_document_is_one_clear_error(engine, doc_ids):
    with pytest.raises(NotFoundError, match="unknown document id 'no-such-doc'"):
        ReportRunner(engine).run("compare-versions", {"old": "no-such-doc", "new": doc_ids["notice_2025"]})
    with pytest.raises(NotFoundError, match="unknown report template 'nope'"):
        ReportRunner(engine).run("nope", {})
    with pytest.raises(ConfigError, match="the same document"):
        ReportRunner(engine).run("compare-versions", {"old": doc_ids["notice_2025"], "new": doc_ids["notice_2025"]})
    with pytest.raises(ConfigError, match="needs the input 'new'"):
        ReportRunner(engine).run("compare-versions", {"old": doc_ids["notice_2025"]})


def test_a_step_naming_no_known_operation_names_file_step_and_op(tmp_path: Path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "bad"\n[[steps]]\nid = "one"\nop = "translate"\n', encoding="utf-8")
    from agentic_rag.reports import OPERATIONS

    with pytest.raises(TemplateError) as err:
        load_template(path, OPERATIONS)
    assert str(path) in str(err.value) and "'one'" in str(err.value) and "'translate'" in str(err.value)


@pytest.mark.parametrize("text, says", [
    ("name = \n", "invalid TOML"),
    ('name = "x"\n', "invalid template"),
    ('name = "x"\n[[steps]]\nid = "a"\nop = "retrieve"\nfrom = "b"\n', "names no earlier step"),
    ('name = "x"\n[[steps]]\nid = "a"\nop = "retrieve"\nargs = { query = "{topic}" }\n', "names no input"),
])
def test_an_invalid_template_file_is_named(tmp_path: Path, text: str, says: str):
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TemplateError, match=says) as err:
        load_template(path)
    assert str(path) in str(err.value)


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_cli_reports_and_errors(engine, doc_ids, tmp_path: Path):
    index = str(engine.settings.index)
    env = ("--index", index)
    code, out, _ = _cli("report", "compare-versions", doc_ids["policy_v1"], doc_ids["policy_v2"], *env)
    assert code == 0 and "USD 0.30 → USD 0.45" in out and "Added Article 5" in out
    target = tmp_path / "r.json"
    code, _, _ = _cli("report", "compare-versions", doc_ids["policy_v1"], doc_ids["policy_v2"], *env,
                      "--format", "json", "-o", str(target))
    assert code == 0 and json.loads(target.read_text(encoding="utf-8"))["status"] == "complete"
    code, out, _ = _cli("report", "topic-brief", "补贴申请", *env, "--json")
    assert code == 0 and json.loads(out)["template"] == "topic-brief"
    code, _, err = _cli("report", "compare-versions", "missing-id", doc_ids["policy_v2"], *env)
    assert code == 2 and "unknown document id 'missing-id'" in err and len(err.strip().splitlines()) == 1
    bad = tmp_path / "user"
    bad.mkdir()
    (bad / "broken.toml").write_text('name = "broken"\n[[steps]]\nid = "s"\nop = "nope"\n', encoding="utf-8")
    config = tmp_path / "arag.toml"
    config.write_text(f'[reports]\ntemplates_dir = "{bad.as_posix()}"\n', encoding="utf-8")
    code, _, err = _cli("report", "list", "--config", str(config), *env)
    assert code == 2 and "broken.toml" in err and "'nope'" in err
    code, out, _ = _cli("report", "list", *env, "--json")
    assert code == 0 and {t["name"] for t in json.loads(out)} == {"compare-versions", "topic-brief"}


def test_topic_brief_groups_by_status_and_states_conflicts(engine):
    report = ReportRunner(engine).run("topic-brief", {"topic": "补贴标准"})
    groups = next(s for s in report.sections if s.step == "by_document").data["groups"]
    assert len(groups) >= 2 and {g["status"] for g in groups} <= {"in_force", "superseded"}
    # both notice versions state the amount: the newer one wins, and the rule is named
    conflict = next(c for c in report.conflicts if any(v.value == "450元" for v in c.values))
    winner = next(v for v in conflict.values if v.chunk_id == conflict.winner)
    assert winner.value == "450元" and conflict.rule
