"""No import circles among the suite's modules, lazy imports inside functions included (issue 39: `envs.find_links`
and `envs.index` imported each other from inside functions; a circle hides who owns what and breaks as soon as one
import moves to the top)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "conformance"


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the suite's modules it imports anywhere in its source (`from conformance.x import y` names the
    module `conformance.x.y` when that is a module, else `conformance.x`)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("conformance"):
                for alias in node.names:
                    whole = f"{node.module}.{alias.name}"
                    graph[name].add(whole if whole in modules else node.module)
            elif isinstance(node, ast.Import):
                graph[name].update(a.name for a in node.names if a.name.startswith("conformance"))
    return {name: {m for m in found if m in modules and m != name} for name, found in graph.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_finder_sees_a_circle_made_by_lazy_imports():
    graph = {
        "conformance.a": {"conformance.b"},
        "conformance.b": {"conformance.c"},
        "conformance.c": {"conformance.a"},
        "conformance.d": {"conformance.a"},
    }
    assert circles(graph) == [["conformance.a", "conformance.b", "conformance.c"]]


def test_the_suite_has_no_import_circle():
    graph = import_graph()
    assert "conformance.envs.pages" in graph["conformance.envs.find_links"]  # lazy imports are read too
    assert circles(graph) == []
