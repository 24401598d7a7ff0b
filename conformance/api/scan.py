"""The uses of JAX names in Python source, found with `ast` (pure: nothing scanned is imported or run).

`uses_in_source(text, path)` returns every `Use`: a dotted JAX path at a line and column (1-based), found through

- every import form: `import jax`, `import jax.numpy as jnp`, `from jax import tree_map`, `from jax import numpy as
  jnp`, `from jax.experimental.shard_map import shard_map` (the import itself is a use of what it names);
- the names those bind, aliases by plain assignment (`tm = jax.tree_util.tree_map`), and attribute chains on them
  (`jnp.linalg.norm`, `jax.tree_util.tree_map`): the whole chain is the use, the judge decides how much of it a
  census can check;
- config names: the first argument of `jax.config.update("jax_...")` (as `jax.config.jax_...`, `what="config"`),
  and `JAX_...` environment variables set or read through `os.environ[...]`, `os.environ.get/setdefault/pop`,
  `os.environ.update({...})`, `os.getenv` and `os.putenv` (as `jax.config.jax_...`, `what="env"`);
- keyword arguments passed to a JAX callable (`what="call"`, with `keywords`), for the judge's signature check.

Bindings are per file and flow-insensitive: every import and alias in the file counts, the last one of a name wins,
wherever it stands (a function's local `import jax.numpy as jnp` binds `jnp` for the whole file).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

ENV_NAME = re.compile(r"^JAX_[A-Z0-9_]+$")
CONFIG_UPDATE = ("jax.config.update", "jax.config.config.update")
ENV_CALLS = ("environ.get", "environ.setdefault", "environ.pop", "getenv", "putenv")


@dataclass(frozen=True)
class Use:
    """One use of a JAX name: `name` is the dotted path as written (resolved through the file's imports); `what`
    is `name` (an import or a reference), `call` (a call passing `keywords`), `config` or `env`."""

    path: str
    line: int
    col: int
    name: str
    what: str = "name"
    keywords: tuple[str, ...] = field(default=())


def _chain(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ['a', 'b', 'c'] when the expression is only names and attributes, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def bindings(tree: ast.AST) -> dict[str, str]:
    """The names the file binds to JAX paths: imports of jax, and plain aliases of them (later ones win)."""
    bound: dict[str, str] = {}
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))),
                       key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "jax" or alias.name.startswith("jax."):
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["jax"] = "jax"
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and (module == "jax" or module.startswith("jax.")):
                for alias in node.names:
                    if alias.name != "*":
                        bound[alias.asname or alias.name] = f"{module}.{alias.name}"
        elif len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = _chain(node.value)
            target = node.targets[0].id
            if parts and parts[0] in bound:
                bound[target] = ".".join([bound[parts[0]], *parts[1:]])
            elif target in bound:
                del bound[target]  # rebound to something else
    return bound


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, bound: dict[str, str]) -> None:
        self.path, self.bound, self.found = path, bound, []

    def add(self, node: ast.AST, name: str, what: str = "name", keywords: tuple[str, ...] = ()) -> None:
        self.found.append(Use(self.path, node.lineno, node.col_offset + 1, name, what, keywords))

    def resolve(self, node: ast.AST) -> str | None:
        parts = _chain(node)
        if not parts or parts[0] not in self.bound:
            return None
        return ".".join([self.bound[parts[0]], *parts[1:]])

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("jax."):
                self.add(alias, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and (module == "jax" or module.startswith("jax.")):
            if module != "jax":
                self.add(node, module)
            for alias in node.names:
                if alias.name != "*":
                    self.add(alias, f"{module}.{alias.name}")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.resolve(node)
        if name is None:
            self.generic_visit(node)
        else:
            self.add(node, name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id in self.bound and self.bound[node.id] != "jax":
            self.add(node, self.bound[node.id])

    def visit_Call(self, node: ast.Call) -> None:
        callee = self.resolve(node.func)
        keywords = tuple(k.arg for k in node.keywords if k.arg)
        if callee in CONFIG_UPDATE and node.args and _string(node.args[0]):
            self.add(node.args[0], f"jax.config.{_string(node.args[0])}", "config")
        elif callee and keywords:
            self.add(node, callee, "call", keywords)
        self.env_call(node)
        self.generic_visit(node)

    def env_call(self, node: ast.Call) -> None:
        parts = _chain(node.func)
        if not parts:
            return
        dotted = ".".join(parts)
        if any(dotted == name or dotted.endswith("." + name) for name in ENV_CALLS) and node.args:
            self.env(node.args[0])
        elif (dotted == "environ.update" or dotted.endswith(".environ.update")) and node.args \
                and isinstance(node.args[0], ast.Dict):
            for key in node.args[0].keys:
                self.env(key)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        parts = _chain(node.value)
        if parts and parts[-1] == "environ":
            self.env(node.slice)
        self.generic_visit(node)

    def env(self, node: ast.AST | None) -> None:
        text = _string(node)
        if text and ENV_NAME.match(text):
            self.add(node, f"jax.config.{text.lower()}", "env")


def uses_in_source(text: str | bytes, path: str) -> list[Use]:
    """Every use of a JAX name in one file's source (`SyntaxError` when it does not parse)."""
    tree = ast.parse(text, filename=path)
    finder = _Finder(path, bindings(tree))
    finder.visit(tree)
    return sorted(finder.found, key=lambda u: (u.line, u.col, u.name, u.what))


def uses_in_files(sources: Iterable[tuple[str, bytes]]) -> tuple[list[Use], list[str]]:
    """The uses in every `(path, source)`; and one line per file that does not parse (left out, never fatal)."""
    uses: list[Use] = []
    skipped: list[str] = []
    for path, source in sources:
        try:
            uses += uses_in_source(source, path)
        except (SyntaxError, ValueError) as exc:
            skipped.append(f"{path}: not parsed ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
        except (RecursionError, MemoryError) as exc:  # an expression nested or chained past what `ast` can hold
            skipped.append(f"{path}: not parsed ({type(exc).__name__}: too deeply nested for Python's parser)")
    return uses, skipped
