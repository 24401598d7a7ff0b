"""The registry of declared cases and the loader of case packages: importing a package's case modules (foreign
code: a failure is one line), finding one case or workload by id, and forgetting a scratch package.

Standard library only (the child imports it).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import traceback
from typing import Any

from conformance.core import workload as workload_model
from conformance.core.model import DEFAULT_CASE_PACKAGE, Case, CaseDeclarationError
from conformance.portable import signals_kept

_REGISTRY: dict[tuple[str, str], Case] = {}


def _register(case: Case) -> None:
    key = (case.package, case.id)
    if key in _REGISTRY:
        previous = _REGISTRY[key]
        if (
            previous.probe.__code__.co_filename != case.probe.__code__.co_filename
            or previous.probe.__code__.co_firstlineno != case.probe.__code__.co_firstlineno
        ):
            raise CaseDeclarationError(
                f"{case.id}: declared twice in {case.package} (a second probe with the "
                f"same name replaces the first); rename one"
            )
    _REGISTRY[key] = case


def case_modules(package: str = DEFAULT_CASE_PACKAGE) -> list[str]:
    """The dotted names of the case modules in `package`, in file-name order (helpers start with `_`)."""
    pkg = importlib.import_module(package)
    return sorted(
        f"{package}.{info.name}"
        for info in pkgutil.iter_modules(pkg.__path__)
        if not info.name.startswith("_") and info.name != "helpers"
    )


def load_module_cases(module_name: str) -> list[Case]:
    """Import one case module and return the cases it declares, in declaration order."""
    try:
        with signals_kept():  # foreign code: what it does to signal dispositions stays in its own import
            module = importlib.import_module(module_name)
    except CaseDeclarationError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - a case module is foreign code
        raise CaseDeclarationError(f"{module_name}: the case module failed to import: {import_failure(exc)}") from None
    package = module.__name__.rpartition(".")[0]
    return [c for (pkg, _), c in _REGISTRY.items() if pkg == package and c.probe.__module__ == module.__name__]


def import_failure(exc: BaseException) -> str:
    """One line for an exception raised while importing a module: its type, first line and where."""
    text = str(exc).strip()
    line = f"{type(exc).__name__}: {text.splitlines()[0][:300]}" if text else type(exc).__name__
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if "importlib" not in f.filename] or frames
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{line} ({exc.filename}:{exc.lineno})"
    return f"{line} ({own[-1].filename}:{own[-1].lineno})" if own else line


def section_order(title: str) -> list[tuple[int, Any]]:
    """Sort key of a section title in chapter order: numbers compare as numbers (§5.3 before §10)."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", title)]


def load_cases(package: str = DEFAULT_CASE_PACKAGE) -> list[Case]:
    """Import every case module of `package` and return all their cases, in chapter order."""
    found = [c for name in case_modules(package) for c in load_module_cases(name)]
    return sorted(found, key=lambda c: section_order(c.section))


def load_workloads(package: str = DEFAULT_CASE_PACKAGE) -> list["workload_model.Workload"]:
    """Import every case module of `package` and return the workloads they declare, in chapter order."""
    found = []
    for name in case_modules(package):
        load_module_cases(name)
        found.extend(workload_model.registered(package, name))
    return sorted(found, key=lambda w: (section_order(w.section), w.id))


def find_workload(workload_id: str, package: str = DEFAULT_CASE_PACKAGE) -> "workload_model.Workload":
    """The workload called `workload_id`, importing only its module."""
    module_short = workload_id.rpartition("/")[2].split(".", 1)[0]
    module = f"{package}.{module_short}"
    load_module_cases(module)
    for found in workload_model.registered(package, module):
        if found.id == workload_id:
            return found
    raise KeyError(f"no workload {workload_id!r} in {package}")


def find_case(case_id: str, package: str = DEFAULT_CASE_PACKAGE) -> Case:
    """The case called `case_id` (`<module>.<probe>`, or `<folder>/<module>.<probe>`), importing only its module."""
    module_short = case_id.rpartition("/")[2].split(".", 1)[0]
    for found in load_module_cases(f"{package}.{module_short}"):
        if found.id == case_id:
            return found
    raise KeyError(f"no case {case_id!r} in {package}")


def forget_package(package: str) -> None:
    """Drop the registered cases of `package` and its imported modules (tests load scratch packages)."""
    for key in [k for k in _REGISTRY if k[0] == package]:
        del _REGISTRY[key]
    workload_model.forget(package)
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
