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

A use inside code that already copes with the name's absence carries `guarded` (why, in words). A guard covers
only the names it tests, and what lies under them (`Guard.covers`):

- an `if` (or a conditional expression, or the operands of an `and` after the test) whose test calls
  `hasattr(X, "name")` or `getattr(X, "name", default)` on a JAX path X: the branch that runs where the name is
  there guards `X.name` and the names under it (`hasattr(jax, "pxla")` guards `jax.pxla.ShardedDeviceArray`), and
  nothing else (`hasattr(jax, "Array")` does not guard `jax.sharding.PmapSharding`: chex's pattern); the other
  branch (the `else`, or the body of `if not hasattr(...)`/`if getattr(...) is None`) is the fallback for where the
  name is absent and guards every name in it, as an `except` fallback does, but the tested names themselves (they
  are absent exactly there). A test on something that is not JAX (`hasattr(x, "sharding")`) guards nothing;
- a version comparison (`jax.__version_info__`, `jax.__version__`, `packaging.version`'s `parse`/`Version`): both
  branches, every name in them. The code states which releases each branch is for; the scan does not evaluate the
  comparison against the release judged;
- the body of a `try` with a handler for `AttributeError` (every use but an import statement's) or `ImportError`
  (or `ModuleNotFoundError`: the uses an import statement makes), or both (every use); and that handler's own body
  (the fallback: every name in it);
- `getattr(X, "name", default)` itself: a use of `X.name` that copes with its absence (without a default, a plain
  use of `X.name`).

Guards nest: a use is guarded by the innermost guard around it that covers it. The uses in an `if` test are not
guarded by it (`hasattr(jax.lax, "linalg")` fails where `jax.lax` is gone). A name bound by an assignment or a
`from ... import` inside a guard that covers what it binds carries the guard to every use of it (`take =
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
from collections.abc import Callable, Iterable
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


@dataclass(frozen=True)
class Guard:
    """Code that copes with a name's absence: `why` in words, and what it covers. `names`: the JAX paths an
    `hasattr`/`getattr` tests (each with what lies under it), None for every name; `only`: `import` (the uses an
    import statement makes: what `except ImportError` catches), `attribute` (every other use: `except
    AttributeError`), or '' for both."""

    why: str
    names: tuple[str, ...] | None = None
    only: str = ""
    absent: tuple[str, ...] = ()  # a fallback branch: the names known absent there, which it never covers

    def covers(self, name: str, imported: bool) -> bool:
        """Whether the guard copes with the absence of `name` (used by an import statement when `imported`)."""
        if self.only and (self.only == "import") != imported:
            return False
        if any(name == n or name.startswith(n + ".") for n in self.absent):
            return False
        return self.names is None or any(name == n or name.startswith(n + ".") for n in self.names)


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
    """`bindings(tree)`, and for the names whose winning binding stands in a guard that covers what it binds, why
    (`bound inside an hasattr(...) guard at line 7`). Two passes: the guards of an `hasattr` test are known only
    once the file's bindings are (`hasattr(np, ...)` tests JAX only where `np` is bound to it)."""
    bound = _bind_with(tree, _BindingGuards.of(tree, {}))[0]
    return _bind_with(tree, _BindingGuards.of(tree, bound))


def _bind_with(tree: ast.AST, guard_at: dict[int, tuple[Guard, ...]]) -> tuple[dict[str, str], dict[str, str]]:
    """The bindings and their guards, given the guards around each binding statement (outermost first)."""
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
        around = guard_at.get(id(node), ())
        fallback = (bool(around) and around[-1].why.startswith("inside an except")) or id(node) in broad
        for name in _bound_by(node):
            if fallback and name not in jax_paths:
                continue
            bound.pop(name, None)
            guards.pop(name, None)
        bound.update(jax_paths)
        if isinstance(node, ast.Import):
            continue
        for name, path in jax_paths.items():
            imported = isinstance(node, ast.ImportFrom)
            why = next((g.why for g in reversed(around) if g.covers(path, imported)), "")
            if why:
                guards[name] = f"bound {why} at line {node.lineno}"
    return bound, guards


GUARD_ERRORS = ("AttributeError", "ImportError", "ModuleNotFoundError")
VERSION_WORDS = ("__version_info__", "__version__", "version.parse", "parse_version", "Version(", "version_info")


HAS_NAME = ("hasattr", "getattr")


def _named(call: ast.AST, resolve: Callable[[ast.AST], str | None]) -> str:
    """The JAX path `hasattr(X, "name")` or `getattr(X, "name"[, default])` names ('' for any other expression, a
    name not written as a literal, or an X that is not JAX)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in HAS_NAME):
        return ""
    if len(call.args) not in (2, 3) or call.keywords or not _string(call.args[1]):
        return ""
    owner = resolve(call.args[0])
    return f"{owner}.{_string(call.args[1])}" if owner else ""


def _tested(call: ast.AST, resolve: Callable[[ast.AST], str | None]) -> str:
    """The JAX path an `hasattr(X, "name")` or a `getattr(X, "name", default)` tests ('' for anything else: a
    `getattr` without a default raises where the name is absent)."""
    wanted = 2 if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "hasattr" else 3
    return _named(call, resolve) if isinstance(call, ast.Call) and len(call.args) == wanted else ""


def guards_of_test(test: ast.AST, resolve: Callable[[ast.AST], str | None]) -> tuple[Guard | None, Guard | None]:
    """The guards an `if` test puts on its body and on its `else` (None where it puts none): see the module's
    docstring. `resolve` gives the JAX path an expression names (None when it names none)."""
    if any(isinstance(n, ast.Compare) and any(w in ast.unparse(n) for w in VERSION_WORDS) for n in ast.walk(test)):
        version = Guard("inside a version comparison guard")
        return version, version
    negated = False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):  # if not hasattr(...): the fallback first
        negated, test = True, test.operand
    elif (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):  # if getattr(X, "name", None) is None: the fallback first; `is not None`: the name's branch first
        negated = isinstance(test.ops[0], (ast.Is, ast.Eq))
    calls = [n for n in ast.walk(test) if isinstance(n, ast.Call)]
    tested = tuple(dict.fromkeys(t for t in (_tested(c, resolve) for c in calls) if t))
    if not tested:
        return None, None
    word = "an hasattr" if any(isinstance(c.func, ast.Name) and c.func.id == "hasattr" for c in calls) else "a getattr"
    there, absent = Guard(f"inside {word}(...) guard", tested), Guard(f"inside {word}(...) guard", absent=tested)
    return (absent, there) if negated else (there, absent)


def _guard_errors(handler: ast.ExceptHandler) -> list[str]:
    """The AttributeError, ImportError or ModuleNotFoundError an `except` handler catches."""
    caught = handler.type
    names = [ast.unparse(e) for e in (caught.elts if isinstance(caught, ast.Tuple) else [caught])] if caught else []
    return [n.split(".")[-1] for n in names if n.split(".")[-1] in GUARD_ERRORS]


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


def guard_of_try(node: ast.Try) -> Guard | None:
    """The guard a `try` body stands in (None when none): a handler for AttributeError covers every use but an
    import statement's, one for ImportError (or ModuleNotFoundError) those an import statement makes."""
    caught = [e for handler in node.handlers for e in _guard_errors(handler)]
    if not caught:
        return None
    attribute, imports = "AttributeError" in caught, any(e != "AttributeError" for e in caught)
    only = "" if attribute and imports else ("attribute" if attribute else "import")
    return Guard(f"inside try/except {caught[0]}", None, only)


def guard_of_handler(handler: ast.ExceptHandler) -> Guard | None:
    """The guard of an `except` handler's body (None when none): the fallback for AttributeError or ImportError,
    which covers every name in it."""
    caught = _guard_errors(handler)
    return Guard(f"inside an except {caught[0]} fallback") if caught else None


class _GuardWalker(ast.NodeVisitor):
    """A visitor that knows the guards around the node it visits, innermost last; `bound` (the file's bindings)
    tells which expressions name JAX paths."""

    def __init__(self, bound: dict[str, str]) -> None:
        self.guards: list[Guard] = []
        self.bound = bound

    def resolve(self, node: ast.AST) -> str | None:
        parts = _chain(node)
        if not parts or parts[0] not in self.bound:
            return None
        return ".".join([self.bound[parts[0]], *parts[1:]])

    def guarded(self, guard: Guard | None, nodes: list[ast.AST]) -> None:
        if guard:
            self.guards.append(guard)
        for node in nodes:
            self.visit(node)
        if guard:
            self.guards.pop()

    def visit_If(self, node: ast.If) -> None:
        body, orelse = guards_of_test(node.test, self.resolve)
        self.visit(node.test)
        self.guarded(body, list(node.body))
        self.guarded(orelse, list(node.orelse))

    def visit_IfExp(self, node: ast.IfExp) -> None:
        body, orelse = guards_of_test(node.test, self.resolve)
        self.visit(node.test)
        self.guarded(body, [node.body])
        self.guarded(orelse, [node.orelse])

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """`hasattr(jax, "pxla") and isinstance(x, jax.pxla.X)`: the operands after the test are guarded by it."""
        if not isinstance(node.op, ast.And):
            self.generic_visit(node)
            return
        for at, operand in enumerate(node.values):
            guard = next((g for g in (guards_of_test(v, self.resolve)[0] for v in node.values[:at]) if g), None)
            self.guarded(guard, [operand])

    def visit_Try(self, node: ast.Try) -> None:
        self.guarded(guard_of_try(node), list(node.body))
        for handler in node.handlers:
            self.guarded(guard_of_handler(handler), [handler])
        for part in [*node.orelse, *node.finalbody]:
            self.visit(part)

    visit_TryStar = visit_Try


class _BindingGuards(_GuardWalker):
    """The guards each binding statement (an import, an assignment, a definition) stands in, outermost first, by the
    node's id."""

    def __init__(self, bound: dict[str, str]) -> None:
        super().__init__(bound)
        self.at: dict[int, tuple[Guard, ...]] = {}

    @classmethod
    def of(cls, tree: ast.AST, bound: dict[str, str]) -> dict[int, tuple[Guard, ...]]:
        walker = cls(bound)
        walker.visit(tree)
        return walker.at

    def generic_visit(self, node: ast.AST) -> None:
        if self.guards and isinstance(node, _BINDING_KINDS):
            self.at[id(node)] = tuple(self.guards)
        super().generic_visit(node)


class _Finder(_GuardWalker):
    def __init__(self, path: str, bound: tuple[dict[str, str], dict[str, str]], lines: list[str]) -> None:
        super().__init__(bound[0])
        self.bound_guards, self.path, self.lines, self.found = bound[1], path, lines, []
        self.calls: dict[int, int] = {}  # id of a call's callee node → its positional arguments

    def add(
        self,
        node: ast.AST,
        name: str,
        what: str = "name",
        keywords: tuple[str, ...] = (),
        via: str = "",
        value: str = "",
        imported: bool = False,
        guard: str = "",
    ) -> None:
        """Record a use (made by an import statement when `imported`); it carries `guard` if given, else the
        innermost guard around it that covers it, else the guard its alias `via` was bound in, if any."""
        guard = guard or next((g.why for g in reversed(self.guards) if g.covers(name, imported)), "")
        guard = guard or self.bound_guards.get(via, "")
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

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.startswith("jax."):
                self.add(alias, alias.name, imported=True)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and (module == "jax" or module.startswith("jax.")):
            if module != "jax":
                self.add(node, module, imported=True)
            for alias in node.names:
                if alias.name != "*":
                    self.add(alias, f"{module}.{alias.name}", imported=True)

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
        got = _named(node, self.resolve) if isinstance(node.func, ast.Name) and node.func.id == "getattr" else ""
        if got:  # getattr(jax.sharding, "PmapSharding", None) uses the name, and with a default copes with its absence
            self.add(node, got, guard="inside a getattr(..., default)" if len(node.args) == 3 else "")
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
