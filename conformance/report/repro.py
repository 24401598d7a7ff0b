"""Self-contained reproduction scripts: the case API stand-ins, the shared helpers and a case module, flattened.

A script needs only `pip install jax==V jaxlib==V`: imports of the suite's own modules are
removed (the stand-ins and helpers are defined above them in the same file), and a `main`
runs one probe and prints its facts as JSON. The script of a stored cell then prints, last, the expected facts, the
release's and this machine's observed ones and its verdict, `reproduced: differs as on 0.4.38` (exit status 0) or
`not reproduced: conforms here` (exit status 1): `verdict_main` (the HTML report fills in the same text in the
browser). Pure apart from reading the sources.
"""

from __future__ import annotations

import ast
import inspect
import json
import sys
from pathlib import Path

_REPORT_DIR = Path(__file__).resolve().parent
_HELPERS = _REPORT_DIR.parent / "cases" / "helpers.py"
_SCRIPTS = _REPORT_DIR.parent / "scripts"


def without_suite_imports(source: str) -> str:
    """`source` with every top-level `import conformance...` / `from conformance... import ...` removed."""
    tree = ast.parse(source)
    drop: set[int] = set()
    for node in tree.body:
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        if names and all(n == "conformance" or n.startswith("conformance.") for n in names):
            drop.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return "\n".join(line for i, line in enumerate(source.splitlines(), 1) if i not in drop) + "\n"


def _strip_future(source: str) -> str:
    return "\n".join(line for line in source.splitlines() if line.strip() != "from __future__ import annotations")


def script_sources() -> dict[str, str]:
    """The plain scripts probes run as files (`run_script("name")`), by name."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(_SCRIPTS.glob("*.py")) if p.stem != "__init__"}


def scripts_used(module_text: str) -> list[str]:
    """The scripts a case module runs with `run_script`, which a reproduction must save beside itself."""
    return sorted(name for name in script_sources() if f'"{name}"' in module_text)


def prelude() -> str:
    """The stand-ins and the shared helpers, ready to precede a case module."""
    shim = (_REPORT_DIR / "repro_shim.py").read_text(encoding="utf-8")
    # run_script finds its scripts next to the reproduction script instead of in the suite's package.
    helpers = without_suite_imports(_HELPERS.read_text(encoding="utf-8")).replace(
        "    from conformance.scripts import script_path\n",
        "    def script_path(name):\n"
        '        return os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")\n',
    )
    return (
        "from __future__ import annotations\n\n# ---- stand-ins for the suite's case API\n"
        + _strip_future(shim)
        + "\n\n# ---- the suite's shared probe helpers\n"
        + _strip_future(helpers)
    )


MAIN_PLACES = ("__CALL__", "__EXPECTED__", "__PRINTED__", "__RELEASE__", "__STATUS__", "__OBSERVED__")
_MAIN = """if __name__ == "__main__":
    import sys
    import traceback
    EXPECTED, PRINTED_KEYS, OBSERVED = json.loads(__EXPECTED__), json.loads(__PRINTED__), json.loads(__OBSERVED__)
    try:
        result = __CALL__
        status_here, facts = "observed", result.facts
        print(json.dumps({"facts": result.facts, "details": result.details}, indent=1, default=repr))
    except Unsupported as missing:
        status_here, facts = "unsupported", None
        print(f"unsupported here: {missing}")
    except Exception:
        status_here, facts = "error", None
        traceback.print_exc()
    lines, code = verdict(status_here, facts, EXPECTED, PRINTED_KEYS, __RELEASE__, __STATUS__, OBSERVED)
    print("\\n".join(lines))
    sys.exit(code)
"""
_FACTS_MAIN = """if __name__ == "__main__":
    import json
    result = __CALL__
    print(json.dumps({"facts": result.facts, "details": result.details}, indent=1, default=repr))
"""


def main_template(verdict: bool = True) -> str:
    """The script's `__main__`, its places (`MAIN_PLACES`) to fill: the probe's call, then, as Python string
    literals of JSON, the expected facts, the printed tier's keys, the release, its status and its observation
    (`verdict` False: the facts alone, for a cell with no stored result)."""
    return _MAIN if verdict else _FACTS_MAIN


def verdict_main(
    call: str, expected: object, printed_keys: list[str], release: str, status: str, observed: object
) -> str:
    """The `__main__` of a stored cell's script (see the module's docstring)."""
    values = (
        call,
        repr(json.dumps(expected)),
        repr(json.dumps(list(printed_keys))),
        repr(release),
        repr(status),
        repr(json.dumps(observed, default=repr)),
    )
    text = _MAIN
    for place, value in zip(MAIN_PLACES, values):
        text = text.replace(place, value)
    return text


def module_source(module_name: str) -> str:
    """A case module's source without its imports of the suite, '' when it cannot be read."""
    module = sys.modules.get(module_name)
    try:
        source = inspect.getsource(module) if module else ""
    except (OSError, TypeError):
        return ""
    return _strip_future(without_suite_imports(source))


def run_line(case: object, param: str) -> str:
    """How to run a cell's reproduction: its environment variables, `python repro.py`, and `< stdin.txt` when the
    case reads its standard input."""
    own = getattr(case.param(param), "env", {})  # type: ignore[attr-defined]
    env = {**dict(getattr(case, "env", {}) or {}), **dict(own or {})}
    stdin = getattr(case, "stdin", None)
    return " ".join([*(f"{k}={v}" for k, v in env.items()), "python repro.py"]) + (" < stdin.txt" if stdin else "")


def reproduction_script(
    case: object, param: str, jax: str, jaxlib: str = "", suite: str = "", cell: object = None
) -> str:
    """One cell's self-contained script (as the HTML report's case page assembles it): the install line, the
    stand-ins and helpers, the case module, and a `__main__` that runs the probe and prints its facts as JSON;
    given the cell's stored result on `jax` (`cell`, a `CellResult`), then its verdict (`verdict_main`).
    The scripts it runs with `run_script` (`scripts_used`) must be saved beside it."""
    probe = case.probe
    module = module_source(probe.__module__)
    stdin = getattr(case, "stdin", None)
    run = run_line(case, param)
    call = f"{probe.__name__}({param!r})" if param else f"{probe.__name__}()"
    claim = " ".join(str(getattr(case, "claim", "")).split())
    head = [
        f"# Reproduction of jax-conformance case {case.id}{f'[{param}]' if param else ''}"
        f"{f' (suite {suite})' if suite else ''}.",
        f"# Claim: {claim}",
        f"#   pip install jax=={jax} jaxlib=={jaxlib or jax}",
        f"#   {run}",
    ]
    if stdin:
        head += ["# stdin.txt holds:", *(f"#   {line}" for line in str(stdin).split("\n"))]
    if cell is None:
        main = _FACTS_MAIN.replace("__CALL__", call)
    else:
        printed = sorted((getattr(cell, "printed_expected", None) or {}).keys())
        status = getattr(cell.status, "value", str(cell.status))
        main = verdict_main(call, cell.expected, printed, jax, status, cell.observation)
    return "\n".join(head) + "\n" + prelude() + "\n\n# ---- the case module\n" + module + "\n\n" + main
