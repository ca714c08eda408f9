"""Task templates that produce a cited report: ``compare-versions``, ``topic-brief``, and the
user's own (see :mod:`agentic_rag.reports.templates` for the format).

    from agentic_rag.reports import ReportRunner
    report = ReportRunner(engine).run("compare-versions", {"old": OLD_ID, "new": NEW_ID})
    print(render(report, "md"))
"""

from agentic_rag.reports.model import (
           ClauseChange,
           Report,
           ReportLine,
           ReportSection,
           ValueChange,
)
from agentic_rag.reports.operations import OPERATIONS
from agentic_rag.reports.render import FORMATS, render
from agentic_rag.reports.runner import ReportRunner
from agentic_rag.reports.templates import (
           Template,
           TemplateError,
           load_template,
           load_templates,
)

__all__ = ["FORMATS", "OPERATIONS", "ClauseChange", "Report", "ReportLine", "ReportRunner", "ReportSection",
           "Template", "TemplateError", "ValueChange", "load_template", "load_templates", "render"]
