"""The Router's data tables: the intent tree (``intents.json``) and the lexicon of named entities,
places and person categories (``lexicon.txt``). Packaged defaults, replaceable by the user's
files (``router.intent_tree``, ``router.lexicon``); a malformed file is a ConfigError naming it.
Imports no agent, so :mod:`agentic_rag.config` can validate the files at load time."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentic_rag.agents.vocabulary import read_table
from agentic_rag.errors import ConfigError

__all__ = ["IntentNode", "IntentTree", "Lexicon", "load_intent_tree"]


@dataclass(frozen=True)
class IntentNode:
    name: str
    keywords: tuple[str, ...] = ()
    children: tuple[IntentNode, ...] = ()


@dataclass(frozen=True)
class IntentTree:
    nodes: tuple[IntentNode, ...]
    fallback: tuple[str, ...] = ("general",)


def _parse_node(raw: Any, where: str) -> IntentNode:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"]:
        raise ConfigError(f"{where}: every intent node needs a non-empty 'name'")
    keywords = raw.get("keywords", [])
    if not isinstance(keywords, list) or not all(isinstance(k, str) and k for k in keywords):
        raise ConfigError(f"{where}: intent {raw['name']!r}: 'keywords' must be a list of strings")
    children = raw.get("children", [])
    if not isinstance(children, list):
        raise ConfigError(f"{where}: intent {raw['name']!r}: 'children' must be a list")
    return IntentNode(raw["name"], tuple(k.lower() for k in keywords),
                      tuple(_parse_node(c, where) for c in children))


def load_intent_tree(path: str | Path | None = None) -> IntentTree:
    """Read an intent tree JSON file (``None`` -> the packaged default); ConfigError names the file."""
    where, text = read_table(path, "intents.json")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: invalid JSON: {exc}") from exc
    if not isinstance(raw, Mapping) or not isinstance(raw.get("nodes"), list):
        raise ConfigError(f"{where}: an intent tree is an object with a 'nodes' list")
    fallback = raw.get("fallback", ["general"])
    if not isinstance(fallback, list) or not fallback or not all(isinstance(f, str) for f in fallback):
        raise ConfigError(f"{where}: 'fallback' must be a non-empty list of strings")
    return IntentTree(tuple(_parse_node(n, where) for n in raw["nodes"]), tuple(fallback))


@dataclass
class Lexicon:
    # ordered sets (dicts) in the order the terms were added: the slots a question gets must not
    # depend on the process's string hash seed
    entities: dict[str, None] = field(default_factory=dict)
    places: dict[str, None] = field(default_factory=dict)
    persons: dict[str, None] = field(default_factory=dict)

    def add(self, term: str, category: str = "entity") -> None:
        term = term.strip()
        if not term:
            return
        {"place": self.places, "person": self.persons}.get(category, self.entities)[term] = None

    def load(self, path: str | Path | None) -> None:
        where, text = read_table(path, "lexicon.txt")
        for n, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            term, _, category = line.partition("\t")
            category = category.strip() or "entity"
            if category not in ("entity", "place", "person"):
                raise ConfigError(f"{where}:{n}: unknown lexicon category {category!r} "
                                  "(use entity, place or person)")
            self.add(term, category)
