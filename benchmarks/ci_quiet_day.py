"""What a daily CI run of the `all` matrix costs on the 4 runner kinds, from the plan job's own planning
(`engine.ciwork.plan_work`, as `plan.sh` calls it), before and after the run starts from the last published one.

The stored results are simulated from the published report (reports/index.html, rebuilt by tests/published_report.py:
27 releases on linux-x86_64, every cell's status): each column is written for each of the 4 platforms with the
reuse key this checkout gives each cell, the release's pin file digest and Python 3.13, as a daily run would have
published them (the other platforms' statuses are linux-x86_64's; an assumption, since only linux was run). Cells
the page shows as error, timeout or flaky keep that status, so they have work as in a real run. A crash gets the two
crashed attempts a run records with its default retry (the page does not show attempts; the `all` run's files
record two for each of its crash cells), so, like `run`, the plan answers it from storage.

    python benchmarks/ci_quiet_day.py

Prints the plan's summary line for: no stored results (every run before this change, and the first one after it),
a day without news, a day with a new release (the newest one's results absent), and a day with one case module
edited (its cells' stored keys differ).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.core.case import load_cases  # noqa: E402
from conformance.engine.ciwork import RUNNER_PLATFORMS, WorkRequest, plan_work  # noqa: E402
from conformance.engine.keys import cell_key  # noqa: E402
from conformance.engine.selection import all_cells  # noqa: E402
from conformance.envs.builder import EnvironmentBuilder  # noqa: E402
from conformance.envs.index import sort_versions  # noqa: E402
from tests.published_report import published_files  # noqa: E402

EDITED_MODULE = "tracers"


def write_stored(folder: Path, versions: list[str], skip_release: str = "", edited: str = "") -> None:
    """The simulated published results (see the module's docstring)."""
    declared = {cell.id: cell for cell in all_cells(load_cases())}
    for column in published_files():
        version = column.header.jax
        if version not in versions or version == skip_release:
            continue
        pins = (ROOT / "matrix" / "pins" / f"jax-{version}.txt").read_bytes()
        for platform in RUNNER_PLATFORMS.values():
            environment = hashlib.sha256(f"{version}|{platform}".encode()).hexdigest()
            tests = []
            for stored in column.cells:
                cell = declared.get(stored.cell_id)
                key = cell_key(cell.case, cell.param, environment) if cell else ""
                if edited and stored.case.startswith(f"{edited}."):
                    key = "0" * 32  # stored by the module before its edit
                metadata = {**stored.to_json(), "key": key}
                if stored.status.value == "crash" and not stored.attempts:
                    metadata["attempts"] = [{"status": "crash"}, {"status": "crash"}]
                tests.append({"nodeid": f"x.py::{stored.case}", "outcome": "passed", "metadata": metadata})
            header = {
                "schema_version": 4,
                "suite_version": column.header.suite_version,
                "jax": version,
                "platform": platform,
                "python": "3.13.0",
                "environment_digest": environment,
                "pins_hash": hashlib.sha256(pins).hexdigest(),
                "finished_at": "2026-12-01T04:00:00+00:00",
            }
            (folder / f"{version}-{platform}.json").write_text(json.dumps({"jax_conformance": header, "tests": tests}))


def main() -> None:
    """Print each day's plan summary."""
    builder = EnvironmentBuilder()
    versions = sort_versions([f.header.jax for f in published_files()])
    request = WorkRequest(tuple(versions), tuple(RUNNER_PLATFORMS), 2)
    print(f"{len(versions)} releases, runners: {', '.join(RUNNER_PLATFORMS)}")
    print(f"nothing stored (before; and the first run after):  {plan_work(request, builder).summary()}")
    days = {
        "a day without news": {},
        f"a new release ({versions[-1]})": {"skip_release": versions[-1]},
        f"the {EDITED_MODULE} case module edited": {"edited": EDITED_MODULE},
    }
    for day, change in days.items():
        with tempfile.TemporaryDirectory() as folder:
            write_stored(Path(folder), versions, **change)
            plan = plan_work(WorkRequest(request.versions, request.runners, 2, None, Path(folder)), builder)
            print(f"{day + ':':50} {plan.summary()}")


if __name__ == "__main__":
    main()
