"""The package has no import cycles: a test walks every module's imports (module level and
inside functions, not ``if TYPE_CHECKING:`` blocks) and fails on a loop, naming it.

Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first, so a module depends on the
packages above what it imports as well (except its own, which are already being imported): a
cycle through a package's ``__init__`` counts."""

from __future__ import annotations

import ast
from pathlib import Path

import agentic_rag

ROOT = Path(agentic_rag.__file__).parent


def _module_name(path: Path) -> str:
    parts = ["agentic_rag", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _with_parents(name: str, modules: dict[str, Path]) -> list[str]:
    parts = name.split(".")
    return [m for m in (".".join(parts[:i]) for i in range(2, len(parts) + 1)) if m in modules]


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", 0) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                if target.startswith("agentic_rag"):
                    # a package above the importer is already being imported: not an edge
                    graph[name].update(m for m in _with_parents(target, modules)
                                       if m != name and not name.startswith(m + "."))
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_the_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_walk_finds_a_cycle_when_there_is_one():
    graph = import_graph()
    # imports inside functions count (the engine imports its agents lazily), parents too
    assert {"agentic_rag.agents.router", "agentic_rag.agents.retriever"} <= graph["agentic_rag.engine"]
    graph["agentic_rag.text.language"] = graph["agentic_rag.text.language"] | {"agentic_rag.engine"}
    assert find_cycle(graph)
