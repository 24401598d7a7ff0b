"""A small synthetic report for the browser test and for screenshots: five JAX versions, seven rows, one of each
kind of change (a known issue that appears, an API that arrives, a fix in a range, a printed-only change, an
unexplained regression). No JAX needed; the probes below stand in for real ones. `write_large` renders a report
larger than the page draws whole (150 rows x 24 columns), for the drawing of the table's visible part.

`write(out, review=True)` renders the same releases with what "Everything that changes from A to B" must count as
`jax-conformance upgrade` does (`review_inputs` gives the same inputs, for the upgrade tiers' own functions): a row
whose printed output changes while both sides carry the printed mark P, a name deprecated and then removed within a
range, and a downstream suite (`tests.synthetic_downstream.demo_suite`) not run on the oldest release.

    python -m tests.synthetic_report OUT.html [--large]
"""

from __future__ import annotations

import sys
from pathlib import Path

from conformance.core.case import Case, Change, Expect, Observation, Param
from conformance.report.html import write_report
from conformance.report.perfview import perf_view
from conformance.results.versions import version_order
from tests import synthetic_results as synth

VERSIONS = ["0.4.38", "0.7.2", "0.8.0", "0.11.2", "0.12.0.1"]
PLATFORM = "linux-x86_64"
VMAP_WHY = "The miss first appears in 0.8.0: a traced vmap leaves older jit functions unchecked."
API_WHY = "jax.debug.log first exists in 0.8.0."
MESSAGE_WHY = "The error names the primitive from 0.7.2 on."


def vmap_miss(mode):
    """Stand-in probe: whether an old jit function's NaN is caught after a vmap."""
    return Observation({"old_jit": "missed" if mode == "vmap" else "caught"})


def plain():
    """Stand-in probe without parameters."""
    return Observation({"ok": True})


def _case(case_id: str, claim: str, params: tuple[Param, ...], probe=plain, section: str = "§3 Finding NaNs") -> Case:
    return Case(id=case_id, section=section.split()[0], heading=section, claim=claim, params=params, probe=probe)


CASES = [
    _case(
        "demo.vmap_miss",
        "After a vmap is traced, jax_debug_nans misses NaNs of older jit functions.",
        (
            Param("with", ["demo.vmap.with"], Expect({"old_jit": "caught"})),
            Param(
                "vmap",
                ["demo.vmap.miss"],
                Expect({"old_jit": "missed"}),
                known_issue=True,
                changes=[Change(since="0.8.0", why=VMAP_WHY, evidence="measured: caught in 0.7.2, missed in 0.8.0")],
            ),
        ),
        probe=vmap_miss,
    ),
    _case(
        "demo.old_message",
        "The NaN error names the primitive that produced it.",
        (
            Param(
                "",
                ["demo.message"],
                Expect({"ok": True}),
                changes=[Change(versions="0.4.38..0.7.2", why=MESSAGE_WHY, evidence="measured")],
            ),
        ),
    ),
    _case("demo.stable", "A behaviour that never changes.", (Param("", ["demo.stable"], Expect({"ok": True})),)),
    _case(
        "demo.new_api",
        "jax.debug.log logs through the jax logger.",
        (
            Param(
                "",
                ["demo.api"],
                Expect({"ok": True}),
                changes=[Change(since="0.8.0", why=API_WHY, evidence="CHANGELOG 0.8.0")],
            ),
        ),
        section="§4 Printing values",
    ),
    _case(
        "demo.wording",
        "The message reads as the chapter prints it.",
        (Param("", ["demo.wording"], Expect({"ok": True})),),
        section="§4 Printing values",
    ),
    _case(
        "demo.regressed",
        "A behaviour that breaks in the newest release, for no declared reason.",
        (Param("", ["demo.regressed"], Expect({"ok": True})),),
        section="§5 Compilation",
    ),
]


REWORDED = _case(
    "demo.reworded",
    "The chapter prints a line whose wording JAX changes twice.",
    (Param("", ["demo.reworded"], Expect({"ok": True})),),
    section="§4 Printing values",
)


def _reworded(version: str) -> dict:
    """The printed mark P on every release; what is printed differs from the chapter's `x` as `y`, and as `z` on the
    newest release: a printed change with P on both sides. On 0.11.2 alone it records a deprecation warning: from
    0.8.0 to 0.11.2 it changes by that warning only. On the oldest the chapter printed `y` itself, so no P there:
    from 0.4.38 to 0.7.2 it changes by the mark alone."""
    said = "z" if version == VERSIONS[-1] else "y"
    printed: dict = {"printed_expected": {"text": "y"}}
    if version != VERSIONS[0]:
        warned = {"category": "DeprecationWarning", "message": "demo.reworded's keyword is deprecated", "module": "jax"}
        printed = {
            "printed_expected": {"text": "x"},
            "printed_diff": [{"path": "text", "expected": "x", "observed": said, "kind": "changed"}],
            "warnings": [warned] if version == "0.11.2" else [],
        }
    return synth.cell("demo.reworded", "", "conforms", {"ok": True, "text": said}, expected={"ok": True}, **printed)


def _cells(version: str) -> list[dict]:
    i = VERSIONS.index(version)
    missed = i >= 2
    printed = (
        {
            "printed_expected": {"text": "x"},
            "printed_diff": [{"path": "text", "expected": "x", "observed": "y", "kind": "changed"}],
        }
        if i == 0
        else {}
    )
    # From 0.11.2 the regressed row's probe touches a deprecated API (a warning: it never changes a status).
    warned = (
        {
            "warnings": [
                {
                    "category": "DeprecationWarning",
                    "message": "jax.demo_api is deprecated",
                    "module": "jax._src.deprecations",
                    "deprecation": "jax-demo-api",
                }
            ]
        }
        if i >= 3
        else {}
    )
    return [
        synth.cell("demo.vmap_miss", "with", "conforms", {"old_jit": "caught"}, expected={"old_jit": "caught"}),
        synth.cell(
            "demo.vmap_miss",
            "vmap",
            "conforms" if missed else "differs",
            {"old_jit": "missed" if missed else "caught"},
            known_issue=True,
            expected={"old_jit": "missed"},
            diff=[] if missed else [{"path": "old_jit", "expected": "missed", "observed": "caught", "kind": "changed"}],
        ),
        synth.cell(
            "demo.old_message",
            "",
            "differs" if i == 0 else "conforms",
            {"ok": i > 0},
            expected={"ok": True},
            diff=[{"path": "ok", "expected": True, "observed": False, "kind": "changed"}] if i == 0 else [],
        ),
        # A NaN is an observation: stored as {"$float": "nan"}, shown as NaN.
        synth.cell("demo.stable", "", "conforms", {"ok": True, "sample": {"$float": "nan"}}, expected={"ok": True}),
        synth.cell(
            "demo.new_api",
            "",
            "conforms" if i >= 2 else "unsupported",
            {"ok": True} if i >= 2 else None,
            expected={"ok": True},
            reason="" if i >= 2 else "not yet there: jax.debug.log",
        ),
        synth.cell(
            "demo.wording",
            "",
            "conforms",
            {"ok": True, "text": "y" if i == 0 else "x"},
            expected={"ok": True},
            **printed,
        ),
        synth.cell(
            "demo.regressed",
            "",
            "differs" if version == VERSIONS[-1] else "conforms",
            {"ok": version != VERSIONS[-1]},
            expected={"ok": True},
            **warned,
        ),
    ]


def _censuses(review: bool = False) -> list:
    """A census per release (synthetic): the page's API section, so that the page checks (axe-core) cover it too;
    with `review`, `jax.old_api` too: present up to 0.7.2, deprecated on 0.8.0, removed from 0.11.2 on."""
    from tests.api_censuses import census, fn, removed

    def names(version: str) -> dict:
        found = {"jax.tree_util.tree_map": fn(("f", "positional_or_keyword", None))}
        if review:
            at = VERSIONS.index(version)
            found["jax.old_api"] = (
                fn(("x", "positional_or_keyword", None))
                if at < 2
                else fn(
                    ("x", "positional_or_keyword", None),
                    state="deprecated",
                    message="jax.old_api is deprecated: use jax.new_api",
                    replacement="jax.new_api",
                )
                if at == 2
                else removed("jax.old_api was removed", "jax.new_api")
            )
        found["jax.tree_map"] = (
            fn(
                ("f", "positional_or_keyword", None),
                state="deprecated",
                message="jax.tree_map is deprecated: use jax.tree.map",
            )
            if version_order(version) < version_order("0.8")
            else removed("jax.tree_map was removed", "jax.tree.map")
        )
        # deprecated from 0.11.2 on: "Everything that changes" lists it as deprecated between 0.8.0 and 0.12.0.1
        found["jax.demo_api"] = fn(
            ("x", "positional_or_keyword", None),
            **(
                {
                    "state": "deprecated",
                    "message": "jax.demo_api is deprecated: use jax.demo",
                    "replacement": "jax.demo",
                }
                if version_order(version) >= version_order("0.11.2")
                else {}
            ),
        )
        return found

    return [census(v, names(v), platform=PLATFORM) for v in VERSIONS]


def _samples(run_s: float, temp: int = 0) -> list[dict]:
    """Five rounds of one workload on one release: run time spread ±2 % around `run_s`, exact metrics fixed."""
    return [
        {
            "metrics": {
                "run_s": run_s * (1 + 0.01 * k),
                "compile_s": 0.05 * (1 + 0.01 * k),
                "temp_bytes": temp,
                "compiles": 1,
                "fusions": 3,
            },
            "round": r,
        }
        for r, k in enumerate((-2, 1, 0, 2, -1))
    ]


def _perf_sections() -> list:
    """Workload samples per release (synthetic), for the page's Performance section and "Everything that changes":
    `perf.dispatch_loop` drifts ×1.08 a release (each step inside ×1.25, ×1.36 over the whole range), `perf.buffer`
    needs a temporary buffer from 0.11.2 on (an exact metric growing from 0), `perf.gone` fails on the newest."""
    sections = []
    for i, version in enumerate(VERSIONS):
        workloads = {
            "perf.dispatch_loop": {
                "claim": "Dispatching a small jitted function in a loop.",
                "samples": _samples(0.002 * 1.08**i),
            },
            "perf.buffer": {
                "claim": "A reduction that may need a temporary buffer.",
                "samples": _samples(0.01, 4096 if i >= 3 else 0),
            },
            "perf.gone": {
                "claim": "A workload whose API the newest release removed.",
                "samples": [] if i == len(VERSIONS) - 1 else _samples(0.5),
            },
        }
        if i == len(VERSIONS) - 1:
            workloads["perf.gone"]["error"] = "AttributeError: module 'jax' has no attribute 'demo_api'"
        sections.append((version, PLATFORM, workloads))
    return sections


def review_inputs() -> dict:
    """What `write(out, review=True)` renders from: `probes` (release -> its probe cells' parsed file), `suite`
    (release -> the downstream suite's cells, JSON: none on 0.4.38), `censuses` and `cases`."""
    from tests import synthetic_downstream as sd

    probes = {
        v: synth.files(v, PLATFORM, _cells(v) + [_reworded(v)], finished=f"2026-11-29T10:00:0{i}+00:00")
        for i, v in enumerate(VERSIONS)
    }
    return {"probes": probes, "suite": sd.demo_suite(), "censuses": _censuses(True), "cases": [*CASES, REWORDED]}


def write(out: Path, review: bool = False) -> Path:
    """Render the synthetic report to `out`: cells, censuses and workload samples of five releases (with `review`,
    those of `review_inputs`, and the downstream suite's section)."""
    from conformance.downstream.cells import without_tests
    from conformance.report.downstreamview import downstream_view
    from conformance.results.merge import merge_files

    files = [
        synth.files(v, PLATFORM, _cells(v), finished=f"2026-11-29T10:00:0{i}+00:00") for i, v in enumerate(VERSIONS)
    ]
    downstream = None
    if review:
        inputs = review_inputs()
        suite = [
            synth.files(v, PLATFORM, cells, finished=f"2026-11-29T11:00:0{i}+00:00")
            for i, (v, cells) in enumerate(inputs["suite"].items())
        ]
        files = [*inputs["probes"].values(), *suite]
        downstream = downstream_view(merge_files(files))  # the suite's section; not the probes' table (render.py)
    return write_report(
        without_tests(files),
        out,
        cases=inputs["cases"] if review else CASES,
        generated_at="2026-11-29T10:00:00+00:00",
        releases=VERSIONS,
        censuses=_censuses(review),
        perf=perf_view(_perf_sections()),
        downstream=downstream,
    )


LARGE_VERSIONS = [f"0.{minor}.{patch}" for minor in range(4, 10) for patch in range(2)]
LARGE_PLATFORMS = ["linux-x86_64", "darwin-arm64"]
LARGE_CASES = [
    _case(
        f"big.case{i:03d}",
        f"Claim {i}, a sentence as long as a real one.",
        (Param("", [f"big.row{i:03d}"], Expect({"ok": True})),),
        section=f"§{1 + i // 30} Part {1 + i // 30}",
    )
    for i in range(150)
]


def _large_cells(v: int) -> list[dict]:
    # Every 7th row differs from its 6th column on, every 11th crashes in one column: changes to find by release.
    return [
        synth.cell(
            case.id,
            "",
            "crash" if i % 11 == 0 and v == 3 else "differs" if i % 7 == 0 and v >= 5 else "conforms",
            {"ok": True},
            expected={"ok": True},
        )
        for i, case in enumerate(LARGE_CASES)
    ]


def write_large(out: Path) -> Path:
    """Render a report of 150 rows x 12 versions x 2 platforms (3,600 cells) to `out`."""
    files = [
        synth.files(version, platform, _large_cells(v), finished=f"2026-11-29T10:{v:02d}:00+00:00")
        for v, version in enumerate(LARGE_VERSIONS)
        for platform in LARGE_PLATFORMS
    ]
    return write_report(
        files, out, cases=LARGE_CASES, generated_at="2026-11-29T10:00:00+00:00", releases=LARGE_VERSIONS
    )


if __name__ == "__main__":
    print((write_large if "--large" in sys.argv[2:] else write)(Path(sys.argv[1])))
