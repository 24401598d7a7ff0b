"""Synthetic downstream suites for the report's tests: a suite's tests on a few releases as the cells
`jax-conformance downstream` stores (shaped by `downstream.cells.to_cell` itself), no JAX and no pytest run needed.

`outcome` makes one node id's outcome (a failure's frames lie under `ROOT`, the suite's installed packages);
`suite_cells` turns outcomes into the cells' JSON; `write_files` writes them, with probe cells if given, into
`<jax>-<platform>.json` files; `demo_suite` is the small suite the browser test renders (a release it cannot be
installed with, a clean baseline, two causes of regressions, a flaky test, a crash, a module that stops collecting,
a test that vanishes and one that appears).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from conformance.downstream.cells import to_cell
from conformance.downstream.outcomes import UNINSTALLABLE_ID, NodeOutcome
from tests import synthetic_results as synth

ROOT = "/site"
LIBRARIES = {"demo": ("demo",)}
LABEL, IDENT = "demo==1.0", "demo_1_0"
REPLICATED = (
    "AttributeError",
    "module 'jax' has no attribute 'device_put_replicated'",
    "jax/_src/deprecations.py",
    "getattr",
)
PMAP = (
    "AttributeError",
    "module 'jax.sharding' has no attribute 'PmapSharding'",
    "demo/_src/asserts.py",
    "assert_on_device",
)


def outcome(
    node: str, status: str, failure: Sequence[str] = (), reached: bool = True, rerun: str = "", reason: str = ""
) -> NodeOutcome:
    """One node id's outcome; `failure` is (exception type, message, file under ROOT, function) of a failing test,
    raised there from the test's own frame."""
    exception = None
    if failure:
        kind, message, path, function = failure
        test_file = node.split("::", 1)[0]
        exception = {
            "type": kind,
            "message": message,
            "frames": [[f"{ROOT}/{test_file}", 10, node.rsplit("::", 1)[-1]], [f"{ROOT}/{path}", 20, function]],
        }
    return NodeOutcome(node, status, duration=0.5, exception=exception, reason=reason, rerun=rerun, reached=reached)


def uninstallable(reason: str = "the lock does not install: jaxlib==0.7.2 has no wheel") -> NodeOutcome:
    """The suite's one outcome on a release its lock cannot serve."""
    return NodeOutcome(UNINSTALLABLE_ID, "uninstallable", reason=reason)


def suite_cells(outcomes: Sequence[NodeOutcome], label: str = LABEL, ident: str = IDENT) -> list[dict[str, Any]]:
    """The cells' JSON of one run of a suite, as `downstream` stores them."""
    return [to_cell(ident, label, o, "key", [ROOT], LIBRARIES, ("demo",)).to_json() for o in outcomes]


def write_files(
    folder: Path, by_release: dict[str, list[dict[str, Any]]], platform: str = "linux-x86_64"
) -> list[Path]:
    """Write one result file per release holding its cells (downstream cells, probe cells, or both)."""
    return [
        synth.write(folder, jax, platform, cells, finished=f"2026-11-29T10:00:{i:02d}+00:00")
        for i, (jax, cells) in enumerate(by_release.items())
    ]


A, B, C = "demo/_src/a_test.py", "demo/_src/b_test.py", "demo/_src/c_test.py"


def demo_suite() -> dict[str, list[dict[str, Any]]]:
    """The demo suite's cells per release: not run on 0.4.38; cannot be installed with 0.7.2; clean on 0.8.0 (the
    baseline); on 0.11.2 three regressions of two causes, a flaky test and a test a dead pytest never reached; on
    0.12.0.1 those three, a module that stops collecting, a vanished and an appeared test."""
    passing = [f"{A}::test_{i}" for i in range(4)] + [f"{B}::test_{i}" for i in range(3)] + [f"{C}::test_c"]
    base = [outcome(n, "passed") for n in passing] + [outcome(f"{B}::test_skip", "skipped", reason="needs 8 devices")]
    broken = {f"{A}::test_0": REPLICATED, f"{A}::test_1": REPLICATED, f"{B}::test_0": PMAP}

    def later(extra: list[NodeOutcome], drop: Sequence[str] = ()) -> list[NodeOutcome]:
        found = []
        for o in base:
            if o.nodeid in drop:
                continue
            failure = broken.get(o.nodeid)
            found.append(outcome(o.nodeid, "failed", failure, rerun="failed") if failure else o)
        return found + extra

    on_11 = later([], drop=(f"{A}::test_2", f"{A}::test_3")) + [
        outcome(f"{A}::test_2", "flaky", REPLICATED, rerun="passed"),
        outcome(f"{A}::test_3", "crash", reached=False, reason="pytest died"),
    ]
    on_12 = later(
        [
            outcome(C, "collection_error", ("ImportError", "cannot import name 'tree_map' from 'jax'", C, "<module>")),
            outcome(f"{B}::test_new", "passed"),
        ],
        drop=(f"{C}::test_c", f"{B}::test_2"),
    )
    return {
        "0.7.2": suite_cells([uninstallable()]),
        "0.8.0": suite_cells(base),
        "0.11.2": suite_cells(on_11),
        "0.12.0.1": suite_cells(on_12),
    }
