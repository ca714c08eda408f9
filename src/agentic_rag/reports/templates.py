"""Task templates: a named plan of steps that produces a cited report, written as TOML.

    name = "compare-versions"
    title = "What changed between two versions"

    [[inputs]]
    name = "old"
    kind = "document"          # document | topic | date | text

    [[steps]]
    id = "clauses"
    op = "compare_clauses"     # an operation of :mod:`agentic_rag.reports.operations`
    title = "Clause by clause"
    produces = "each clause: unchanged, changed (old and new values), added, removed, renumbered"
    verify = ["cited", "facts"]
    args = { old = "{old}", new = "{new}" }

``args`` values may name inputs as ``{input}``; ``from`` names an earlier step whose output the
step works on. ``verify`` says how a step's lines are checked before the next step runs:
``cited`` (every line cites a clause), ``facts`` (every number and key term of a line is in the
text it cites: the Reasoner's fact-check), ``both_sides`` (a line about a change cites the old
and the new clause). The packaged templates live in ``agentic_rag/data/templates``; a user's
come from the folder ``reports.templates_dir`` names and replace packaged ones of the same name.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agentic_rag.errors import ConfigError, describe_validation

__all__ = [
    "PACKAGED",
    "VERIFY_METHODS",
    "InputSpec",
    "Step",
    "Template",
    "TemplateError",
    "load_template",
    "load_templates",
]

PACKAGED = Path(__file__).resolve().parent.parent / "data" / "templates"
VERIFY_METHODS = ("cited", "facts", "both_sides")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class TemplateError(ConfigError):
    """A template file is unreadable, invalid, or names an operation that does not exist."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class InputSpec(_Strict):
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,31}$")
    kind: Literal["document", "topic", "date", "text"] = "text"
    description: str = ""
    required: bool = True


class Step(_Strict):
    id: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
    op: str
    title: str = ""
    produces: str = ""
    verify: list[str] = Field(default_factory=lambda: ["cited", "facts"])
    args: dict[str, Any] = Field(default_factory=dict)
    #: an earlier step whose output this one works on
    from_: str | None = Field(None, alias="from")

    @field_validator("verify")
    @classmethod
    def _known_checks(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if v not in VERIFY_METHODS]
        if bad:
            raise ValueError(f"unknown verification {bad[0]!r}; known: {', '.join(VERIFY_METHODS)}")
        return value


class Template(_Strict):
    name: str
    title: str = ""
    description: str = ""
    inputs: list[InputSpec] = Field(default_factory=list)
    steps: list[Step] = Field(min_length=1)
    #: the file it was read from (None for one built in code)
    path: Path | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"a template name is lowercase letters, digits, - and _, got {value!r}")
        return value

    @model_validator(mode="after")
    def _references(self) -> Template:
        inputs = {i.name for i in self.inputs}
        seen: set[str] = set()
        for step in self.steps:
            if step.id in seen:
                raise ValueError(f"step id {step.id!r} is used twice")
            if step.from_ is not None and step.from_ not in seen:
                raise ValueError(f"step {step.id!r}: from = {step.from_!r} names no earlier step")
            for value in step.args.values():
                for name in _PLACEHOLDER.findall(value) if isinstance(value, str) else ():
                    if name not in inputs:
                        raise ValueError(f"step {step.id!r}: {{{name}}} names no input of the template")
            seen.add(step.id)
        return self

    def check_operations(self, known: Collection[str]) -> None:
        """A :class:`TemplateError` naming the file and the step whose ``op`` is not in ``known``."""
        for step in self.steps:
            if step.op not in known:
                where = f"{self.path}: " if self.path else f"template {self.name!r}: "
                raise TemplateError(f"{where}step {step.id!r} names no known operation {step.op!r} "
                                    f"(known: {', '.join(sorted(known))})")

    def bind(self, values: dict[str, str]) -> dict[str, str]:
        """The inputs of one run: every required input given, nothing unknown."""
        names = {i.name for i in self.inputs}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ConfigError(f"template {self.name!r} has no input {unknown[0]!r} "
                              f"(inputs: {', '.join(sorted(names)) or 'none'})")
        missing = [i.name for i in self.inputs if i.required and not str(values.get(i.name) or "").strip()]
        if missing:
            raise ConfigError(f"template {self.name!r} needs the input {missing[0]!r}")
        return {k: str(v).strip() for k, v in values.items() if v is not None}


def fill(value: Any, inputs: dict[str, str]) -> Any:
    """``value`` with each ``{input}`` replaced by that input's value."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: inputs.get(m.group(1), ""), value)
    return value


def load_template(path: str | Path, known_ops: Collection[str] | None = None) -> Template:
    """Read one template file; any problem is a :class:`TemplateError` naming the file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TemplateError(f"template file not found: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise TemplateError(f"{path}: cannot read the template: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise TemplateError(f"{path}: invalid TOML: {exc}") from exc
    try:
        template = Template.model_validate({**data, "path": path})
    except ValidationError as exc:
        raise TemplateError(describe_validation(exc, f"{path}: invalid template")) from exc
    if known_ops is not None:
        template.check_operations(known_ops)
    return template


def load_templates(folder: str | Path | None = None,
                   known_ops: Collection[str] | None = None) -> dict[str, Template]:
    """The packaged templates, then every ``*.toml`` of ``folder`` (a user's; same name wins)."""
    found: dict[str, Template] = {}
    folders = [PACKAGED]
    if folder is not None:
        user = Path(folder)
        if not user.is_dir():
            raise TemplateError(f"invalid setting reports.templates_dir={str(user)!r}: not a folder")
        folders.append(user)
    for where in folders:
        for path in sorted(where.glob("*.toml")):
            template = load_template(path, known_ops)
            found[template.name] = template
    return found
