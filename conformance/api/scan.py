"""The uses of JAX names in Python source, found with `ast` (pure: nothing scanned is imported or run).

`uses_in_source(text, path)` returns every `Use`: a dotted JAX path at a line and column (1-based, in characters),
found through

- every import form: `import jax`, `import jax.numpy as jnp`, `from jax import tree_map`, `from jax import numpy as
  jnp`, `from jax.experimental.shard_map import shard_map` (the import itself is a use of what it names);
- the names those bind, aliases by plain or annotated assignment (`tm = jax.tree_util.tree_map`, `tm: T = ...`),
  and attribute chains on them
  (`jnp.linalg.norm`, `jax.tree_util.tree_map`): the whole chain is the use, the judge decides how much of it a
  census can check;
- config names: the first argument of `jax.config.update("jax_...")` (or its `name=`; as `jax.config.jax_...`,
  `what="config"`), and `JAX_...` environment variables set or read through `os.environ[...]`,
  `os.environ.get/setdefault/pop`, `os.environ.update({...})` or `update(JAX_...=...)`, `os.getenv` and
  `os.putenv` (as `jax.config.jax_...`, `what="env"`);
- keyword arguments passed to a JAX callable (`what="call"`, with `keywords`), for the judge's signature check; a
  called name's own use carries how many arguments the call passes by position (`positional`).

A use inside code that already copes with the name's absence carries `guarded` (why, in words): the branches of an
`if` (or of a conditional expression, or the operands of an `and` after it) whose test calls `hasattr(...)` or
compares a version (`jax.__version_info__`, `jax.__version__`,
`packaging.version`'s `parse`/`Version`), the body of a `try` with a handler for `AttributeError` or
`ImportError` (or `ModuleNotFoundError`, or a tuple holding one), and that handler's own body (the fallback). A name
bound by an assignment or a `from ... import` inside a guard carries the guard to every use of it (`take =
jax.core.take_current_trace` in the `else` of an `hasattr`, then `take()` anywhere: dm-haiku's pattern); an `import
jax...` statement does not, so a library that imports JAX optionally is still judged.

Bindings are per file and flow-insensitive: every import and alias in the file counts, the last binding of a name
wins, wherever it stands and whatever it binds (a function's local `import jax.numpy as jnp` binds `jnp` for the
whole file; a later `import numpy as np` unbinds an earlier `import jax.numpy as np`), except in an `except
AttributeError/ImportError` fallback (or a handler that catches them with everything else: `except Exception:`, a bare
`except:`): there a binding to anything but JAX (`jax = None`, `import numpy as jnp`) is what runs where JAX is
missing, and leaves the JAX binding standing.
"""

from __future__ import annotations

import ast
import importlib.util
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
    guarded: str = ""
    positional: int = 0  # a called name: its positional arguments (-1: a starred one, how many is not known)
    value: str = ""  # a config option set to a literal: the literal as written ('' when it is not one)


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


def _argument(call: ast.Call, index: int, keyword: str) -> ast.AST | None:
    """The call's argument at position `index`, else the one passed as `keyword=`; None when neither is there."""
    if len(call.args) > index:
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _string(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literal(node: ast.AST | None) -> str:
    """A literal (`False`, `"32"`) as written; '' for anything else."""
    try:
        ast.literal_eval(node)  # type: ignore[arg-type]
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return ""
    return ast.unparse(node)  # type: ignore[arg-type]


def _bound_by(node: ast.AST) -> list[str]:
    """The names a statement binds in its scope (imports of anything, definitions, plain assignments)."""
    if isinstance(node, ast.Import):
        return [alias.asname or alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [alias.asname or alias.name for alias in node.names if alias.name != "*"]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    target = _alias_target(node)
    return [target] if target else []


def _alias_target(node: ast.AST) -> str:
    """The one name a plain or annotated assignment binds (`tm = ...`, `tm: T = ...`); '' for any other statement."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        return node.target.id
    return ""


_BINDING_KINDS = (
    ast.Import,
    ast.ImportFrom,
    ast.Assign,
    ast.AnnAssign,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def bindings(tree: ast.AST) -> dict[str, str]:
    """The names the file binds to JAX paths: imports of jax, and plain aliases of them. The last binding of a name
    in the file wins, whatever it binds: `import numpy as np` after `import jax.numpy as np` unbinds `np`."""
    return _bind(tree)[0]


def _bind(tree: ast.AST) -> tuple[dict[str, str], dict[str, str]]:
    """`bindings(tree)`, and for the names whose winning binding stands in a guard, why (`bound inside an
    hasattr(...) guard at line 7`)."""
    guard_at = _BindingGuards.of(tree)
    broad = {
        id(statement)
        for handler in ast.walk(tree)
        if isinstance(handler, ast.ExceptHandler) and _catches_broadly(handler)
        for statement in handler.body
    }
    bound: dict[str, str] = {}
    guards: dict[str, str] = {}
    for node in sorted(
        (n for n in ast.walk(tree) if isinstance(n, _BINDING_KINDS)), key=lambda n: (n.lineno, n.col_offset)
    ):
        jax_paths: dict[str, str] = {}
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "jax" or alias.name.startswith("jax."):
                    jax_paths[alias.asname or "jax"] = alias.name if alias.asname else "jax"
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 0 and (module == "jax" or module.startswith("jax.")):
                jax_paths = {
                    alias.asname or alias.name: f"{module}.{alias.name}" for alias in node.names if alias.name != "*"
                }
        elif _alias_target(node):
            parts = _chain(node.value)  # type: ignore[attr-defined]
            if parts and parts[0] in bound:
                jax_paths[_alias_target(node)] = ".".join([bound[parts[0]], *parts[1:]])
        # A fallback for a JAX that is missing (`except ImportError: jax = None`, or in a handler that catches
        # ImportError with everything else: `except Exception:`) is not what runs where JAX is installed, which is
        # what a scan is for: it leaves the JAX binding as it was.
        fallback = guard_at.get(id(node), "").startswith("inside an except") or id(node) in broad
        for name in _bound_by(node):
            if fallback and name not in jax_paths:
                continue
            bound.pop(name, None)
            guards.pop(name, None)
        bound.update(jax_paths)
        if id(node) in guard_at and not isinstance(node, ast.Import):
            guards.update({name: f"bound {guard_at[id(node)]} at line {node.lineno}" for name in jax_paths})
    return bound, guards


GUARD_ERRORS = ("AttributeError", "ImportError", "ModuleNotFoundError")
VERSION_WORDS = ("__version_info__", "__version__", "version.parse", "parse_version", "Version(", "version_info")


def guard_of_test(test: ast.AST) -> str:
    """Why an `if` test makes its branches a guard ('' when it does not): a `hasattr` call or a version compare."""
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr":
            return "inside an hasattr(...) guard"
        if isinstance(node, ast.Compare) and any(w in ast.unparse(node) for w in VERSION_WORDS):
            return "inside a version comparison guard"
    return ""


def _guard_error(handler: ast.ExceptHandler) -> str:
    """The AttributeError or ImportError (or ModuleNotFoundError) an `except` handler catches, '' when none."""
    caught = handler.type
    names = [ast.unparse(e) for e in (caught.elts if isinstance(caught, ast.Tuple) else [caught])] if caught else []
    hit = [n.split(".")[-1] for n in names if n.split(".")[-1] in GUARD_ERRORS]
    return hit[0] if hit else ""


def _catches_broadly(handler: ast.ExceptHandler) -> bool:
    """Whether an `except` handler catches ImportError with every other error: a bare `except:`, or one for
    Exception or BaseException (alone or in a tuple). Its body is a fallback for a missing JAX, never a guard."""
    caught = handler.type
    if caught is None:
        return True
    return any(
        ast.unparse(e).split(".")[-1] in ("Exception", "BaseException")
        for e in (caught.elts if isinstance(caught, ast.Tuple) else [caught])
    )


def guard_of_try(node: ast.Try) -> str:
    """Why a `try` body is a guard ('' when it is not): a handler for AttributeError or ImportError."""
    caught = [e for e in map(_guard_error, node.handlers) if e]
    return f"inside try/except {caught[0]}" if caught else ""


def guard_of_handler(handler: ast.ExceptHandler) -> str:
    """Why an `except` handler's body is a guard ('' when it is not): it is the fallback for AttributeError or
    ImportError."""
    caught = _guard_error(handler)
    return f"inside an except {caught} fallback" if caught else ""


class _GuardWalker(ast.NodeVisitor):
    """A visitor that knows the guards (why, in words) around the node it visits, innermost last."""

    def __init__(self) -> None:
        self.guards: list[str] = []

    def guarded(self, why: str, nodes: list[ast.AST]) -> None:
        if why:
            self.guards.append(why)
        for node in nodes:
            self.visit(node)
        if why:
            self.guards.pop()

    def visit_If(self, node: ast.If) -> None:
        self.guarded(guard_of_test(node.test), [node.test, *node.body, *node.orelse])

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self.guarded(guard_of_test(node.test), [node.test, node.body, node.orelse])

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """`hasattr(jax, "pxla") and isinstance(x, jax.pxla.X)`: the operands after the test are guarded by it."""
        if not isinstance(node.op, ast.And):
            self.generic_visit(node)
            return
        for at, operand in enumerate(node.values):
            why = next((w for w in map(guard_of_test, node.values[:at]) if w), "")
            self.guarded(why, [operand])

    def visit_Try(self, node: ast.Try) -> None:
        self.guarded(guard_of_try(node), list(node.body))
        for handler in node.handlers:
            self.guarded(guard_of_handler(handler), [handler])
        for part in [*node.orelse, *node.finalbody]:
            self.visit(part)

    visit_TryStar = visit_Try


class _BindingGuards(_GuardWalker):
    """The guard each binding statement (an import, an assignment, a definition) stands in, by the node's id."""

    def __init__(self) -> None:
        super().__init__()
        self.at: dict[int, str] = {}

    @classmethod
    def of(cls, tree: ast.AST) -> dict[int, str]:
        walker = cls()
        walker.visit(tree)
        return walker.at

    def generic_visit(self, node: ast.AST) -> None:
        if self.guards and isinstance(node, _BINDING_KINDS):
            self.at[id(node)] = self.guards[-1]
        super().generic_visit(node)


class _Finder(_GuardWalker):
    def __init__(self, path: str, bound: tuple[dict[str, str], dict[str, str]], lines: list[str]) -> None:
        super().__init__()
        (self.bound, self.bound_guards), self.path, self.lines, self.found = bound, path, lines, []
        self.calls: dict[int, int] = {}  # id of a call's callee node → its positional arguments

    def add(
        self,
        node: ast.AST,
        name: str,
        what: str = "name",
        keywords: tuple[str, ...] = (),
        via: str = "",
        value: str = "",
    ) -> None:
        """Record a use; outside any guard it carries the guard its alias `via` was bound in, if any."""
        guard = self.guards[-1] if self.guards else self.bound_guards.get(via, "")
        positional = self.calls.get(id(node), 0) if what == "name" else 0
        self.found.append(
            Use(
                self.path,
                node.lineno,
                self.column(node.lineno, node.col_offset),
                name,
                what,
                keywords,
                guard,
                positional,
                value,
            )
        )

    def column(self, line: int, offset: int) -> int:
        """The 1-based character column of `ast`'s offset, which counts UTF-8 bytes."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:offset].decode("utf-8", errors="replace")) + 1

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
            self.add(node, name, via=(_chain(node) or [""])[0])

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load) and node.id in self.bound and self.bound[node.id] != "jax":
            self.add(node, self.bound[node.id], via=node.id)

    def visit_Call(self, node: ast.Call) -> None:
        callee = self.resolve(node.func)
        keywords = tuple(k.arg for k in node.keywords if k.arg)
        option = _argument(node, 0, "name")
        if callee in CONFIG_UPDATE and _string(option):
            self.add(
                option,
                f"jax.config.{_string(option)}",
                "config",  # type: ignore[arg-type]
                value=_literal(_argument(node, 1, "val")),
            )
        elif callee and keywords:
            self.add(node, callee, "call", keywords, via=(_chain(node.func) or [""])[0])
        if callee:  # the callee's own use (a name) carries how many arguments it is passed by position
            self.calls[id(node.func)] = -1 if any(isinstance(a, ast.Starred) for a in node.args) else len(node.args)
        self.env_call(node)
        self.generic_visit(node)

    def env_call(self, node: ast.Call) -> None:
        parts = _chain(node.func)
        if not parts:
            return
        dotted = ".".join(parts)
        if any(dotted == name or dotted.endswith("." + name) for name in ENV_CALLS):
            self.env(_argument(node, 0, "key"))
        elif dotted == "environ.update" or dotted.endswith(".environ.update"):
            if node.args and isinstance(node.args[0], ast.Dict):
                for key in node.args[0].keys:
                    self.env(key)
            for keyword in node.keywords:  # os.environ.update(JAX_ENABLE_X64="1")
                if keyword.arg and ENV_NAME.match(keyword.arg):
                    self.add(keyword, f"jax.config.{keyword.arg.lower()}", "env")

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
    if isinstance(text, bytes):
        text = importlib.util.decode_source(text)  # as Python reads it: its coding cookie or BOM, universal newlines
    tree = ast.parse(text, filename=path)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # the lines `ast` counts
    finder = _Finder(path, _bind(tree), lines)
    finder.visit(tree)
    return sorted(finder.found, key=lambda u: (u.line, u.col, u.name, u.what))


def uses_in_files(sources: Iterable[tuple[str, bytes]]) -> tuple[list[Use], list[str]]:
    """The uses in every `(path, source)`; and one line per file that does not parse or decode (its coding cookie
    names no text codec, `rot13`, or its bytes are not in it): left out, never fatal."""
    uses: list[Use] = []
    skipped: list[str] = []
    for path, source in sources:
        try:
            uses += uses_in_source(source, path)
        except (SyntaxError, ValueError, LookupError) as exc:  # LookupError: a codec that is none or not for text
            skipped.append(f"{path}: not parsed ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
        except (RecursionError, MemoryError) as exc:  # an expression nested or chained past what `ast` can hold
            skipped.append(f"{path}: not parsed ({type(exc).__name__}: too deeply nested for Python's parser)")
    return uses, skipped
