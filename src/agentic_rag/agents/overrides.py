"""Manual arbitration pins: the exception channel to the automatic rules.

The automatic rules (newer wins, authority × recency) are right most of the time; when the people
who own the rules know better ("this matter is still governed by the old clause"), they write an
overrides file — a JSON list, one object per pin, each with a ``reason``:

.. code-block:: json

    [
      {"chunk_id": "3f2a9c1d0e4b:a7:0", "reason": "legal: the 2023 rate applies until 2025"},
      {"title": "关于调整住院报销比例的通知", "clause": "第三条", "reason": "..."},
      {"doc_id": "3f2a9c1d0e4b", "matter": "住院 报销比例", "reason": "..."},
      {"matter": "备案 时限", "reason": "transition period: the old clause still applies"}
    ]

A pin selects the clause that wins a conflict (by ``chunk_id``, ``doc_id`` or ``title``,
optionally narrowed by ``clause``), or — with only ``matter`` — says which source wins conflicts
about that matter: the ``older`` one unless ``"prefer": "newer"`` (the automatic rules already
favour the newer one, so the usual exception is "以旧版为准"). ``matter``, when given with a
selector, limits the pin to conflicts about that matter. An invalid file raises
:class:`ConfigError` naming the entry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentic_rag.errors import ConfigError

__all__ = ["OverrideRule", "load_overrides", "parse_overrides"]


class OverrideRule(BaseModel):
    """One pin. At least one selector (``chunk_id``, ``doc_id``, ``title``) or a ``matter`` is
    required; ``clause`` narrows a ``doc_id``/``title`` selector; ``prefer`` (default ``older``)
    only goes with a ``matter``-only pin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matter: str | None = Field(None, min_length=1)
    chunk_id: str | None = Field(None, min_length=1)
    doc_id: str | None = Field(None, min_length=1)
    title: str | None = Field(None, min_length=1)
    clause: str | None = Field(None, min_length=1)
    prefer: Literal["older", "newer"] | None = None
    reason: str = Field(min_length=1)

    @model_validator(mode="after")
    def _selects_something(self) -> "OverrideRule":
        selectors = (self.chunk_id, self.doc_id, self.title)
        if self.clause and not (self.doc_id or self.title):
            raise ValueError("'clause' needs 'doc_id' or 'title' to say whose clause it is")
        if not any(selectors):
            if not self.matter:
                raise ValueError("names nothing to pin: give chunk_id, doc_id, title or matter")
        elif self.prefer:
            raise ValueError("'prefer' only goes with a 'matter'-only pin")
        return self


def parse_overrides(data: object, source: str = "overrides") -> list[OverrideRule]:
    """Validate already-parsed JSON; ``source`` names the file in error messages."""
    if not isinstance(data, list):
        raise ConfigError(f"{source}: expected a JSON list of override rules, got {type(data).__name__}")
    rules: list[OverrideRule] = []
    for i, entry in enumerate(data):
        try:
            rules.append(OverrideRule.model_validate(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            field = f" field {where!r}" if where else ""
            raise ConfigError(
                f"{source}: override entry {i} ({json.dumps(entry, ensure_ascii=False)[:120]}):"
                f"{field} {err['msg']}"
            ) from exc
    return rules


def load_overrides(path: str | Path) -> list[OverrideRule]:
    """Read and validate an overrides file; any problem raises :class:`ConfigError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError(f"overrides file not found: {p}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read overrides file: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    return parse_overrides(data, str(p))
