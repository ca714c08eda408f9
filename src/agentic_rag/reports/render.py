"""A report as Markdown, HTML or JSON: each line followed by ``[n]`` markers that number the
clauses it cites in the report's citation list (the format of an answer's text)."""

from __future__ import annotations

import html
import json

from agentic_rag.reports.model import Report, ReportLine

__all__ = ["FORMATS", "render"]

FORMATS = ("md", "html", "json")

_STATUS_ZH = {"unchanged": "未变", "changed": "修改", "added": "新增", "removed": "删除", "renumbered": "重新编号"}


def render(report: Report, fmt: str = "md") -> str:
    """``report`` in ``fmt`` (md, html or json)."""
    if fmt == "json":
        return json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2)
    if fmt == "md":
        return _markdown(report)
    if fmt == "html":
        return _html(report)
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _markers(report: Report, line: ReportLine) -> str:
    index = {c.chunk_id: i for i, c in enumerate(report.citations, 1)}
    return "".join(f"[{index[c]}]" for c in line.citations if c in index)


def _flag(line: ReportLine) -> str:
    return "" if line.supported else f" ⚠ ({', '.join(line.missing) or 'unsupported'})"


def _markdown(report: Report) -> str:
    out = [f"# {report.title}", ""]
    out.append(" · ".join(f"{k}: {v}" for k, v in report.inputs.items()) + f" · status: {report.status}")
    out.append("")
    for section in report.sections:
        out += [f"## {section.title}", ""]
        counts = section.data.get("counts")
        if counts:
            out += ["| " + " | ".join(counts) + " |", "|" + "---:|" * len(counts),
                    "| " + " | ".join(str(v) for v in counts.values()) + " |", ""]
        groups = section.data.get("groups")
        if groups:
            lines = {cid: line for line in section.lines for cid in line.citations}
            for g in groups:
                out.append(f"### {g['title']} ({g['status'].replace('_', ' ')}"
                           f"{', ' + g['publish_date'] if g['publish_date'] else ''})")
                out += [f"- {lines[c].text} {_markers(report, lines[c])}{_flag(lines[c])}"
                        for c in g["chunk_ids"] if c in lines]
                out.append("")
        else:
            out += [f"- {line.text} {_markers(report, line)}{_flag(line)}" for line in section.lines]
        out += [f"> {c}" for c in section.checks] + [""]
    if report.gaps:
        out += ["## Gaps", ""] + [f"- {g}" for g in report.gaps] + [""]
    out += ["## Sources", ""]
    for i, c in enumerate(report.citations, 1):
        out.append(f"{i}. {c.title} {c.clause or ''} — “{c.quote}” (`{c.chunk_id}`)")
    out += ["", f"{report.usage.wall_ms:.0f} ms"]
    return "\n".join(out) + "\n"


def _html(report: Report) -> str:
    e = html.escape
    body = [f"<h1>{e(report.title)}</h1>",
            (f"<p class='inputs'>{e(' · '.join(f'{k}: {v}' for k, v in report.inputs.items()))} · "
             f"<span class='status s-{e(report.status)}'>{e(report.status)}</span></p>")]
    index = {c.chunk_id: i for i, c in enumerate(report.citations, 1)}
    for section in report.sections:
        body.append(f"<section><h2>{e(section.title)}</h2><ul>")
        for line in section.lines:
            marks = "".join(f"<a href='#src-{index[c]}'>[{index[c]}]</a>" for c in line.citations if c in index)
            cls = "" if line.supported else " class='unsupported'"
            body.append(f"<li{cls}>{e(line.text)} {marks}{e(_flag(line))}</li>")
        body.append("</ul>" + "".join(f"<p class='check'>{e(c)}</p>" for c in section.checks) + "</section>")
    if report.gaps:
        body.append("<section><h2>Gaps</h2><ul>" + "".join(f"<li>{e(g)}</li>" for g in report.gaps) + "</ul></section>")
    body.append("<section><h2>Sources</h2><ol>")
    for i, c in enumerate(report.citations, 1):
        body.append(f"<li id='src-{i}'><strong>{e(c.title)} {e(c.clause or '')}</strong> — "
                    f"<q>{e(c.quote)}</q> <code>{e(c.chunk_id)}</code></li>")
    body.append("</ol></section>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>" + e(report.title) + "</title>"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}.unsupported{color:#a00}"
            ".check{color:#555;font-size:.9em}</style></head><body>" + "\n".join(body) + "</body></html>\n")
