"""End to end: JAX builds that are not releases of the index, run and gated through the CLI (`e2e`, needs the index).

- a wheel of jax 0.12.0.1 re-tagged `0.12.0.1+corp.3` (downloaded, unpacked, its metadata's version changed and
  one patch of a fork applied: the fix of known issue 2, repacked), run with `run --wheels`, then gated with
  `gate --from 0.12.0.1 --to-wheels`;
- a virtual environment the suite did not build (`uv venv` + `uv pip install jax==0.12.0.1`), run with
  `run --python`.

A few cheap cells only (a config cell, a cell that differs on the documented release, a known-issue cell).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli
from conformance.core.versions import SAME, direction
from conformance.envs.builder import EnvironmentBuilder, uv_binary
from conformance.envs.wheels import sha256_of
from conformance.report.model import build_model
from conformance.results.load import load_results
from tests.retag import download_wheel, retag_wheel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from mutants import mutant_named  # noqa: E402

pytestmark = pytest.mark.e2e

DOCUMENTED = "0.12.0.1"
CORP = "0.12.0.1+corp.3"
VMAP = "numerics.debug_nans_vmap_miss[vmap]"
CELLS = f"config.environment_info or values.debug_log[default_level] or {VMAP}"


@pytest.fixture(scope="module")
def corp_wheels(tmp_path_factory) -> Path:
    """A folder holding jax 0.12.0.1 re-tagged 0.12.0.1+corp.3, with the fork's fix of known issue 2."""
    work = tmp_path_factory.mktemp("wheels")
    released = download_wheel("jax", DOCUMENTED, work / "download")
    fix = mutant_named("debug_nans_vmap_miss_fixed")
    return retag_wheel(released, CORP, work / "corp", edits=[(f"jax/{fix.file}", fix.old, fix.new)]).parent


def cells_of(path: Path) -> dict[str, dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        f"{t['metadata']['case']}[{t['metadata']['param']}]" if t["metadata"]["param"] else t["metadata"]["case"]: t[
            "metadata"
        ]
        for t in data["tests"]
    }


def test_a_retagged_wheel_runs_under_its_own_version_and_gates_against_the_release(corp_wheels, tmp_path, capsys):
    results = tmp_path / "results"
    assert cli.main(["run", "--wheels", str(corp_wheels), "-k", CELLS, "-j", "1", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    stored = results / f"{CORP}-linux-x86_64.json"
    assert stored.is_file(), sorted(p.name for p in results.iterdir())
    header = json.loads(stored.read_text(encoding="utf-8"))["jax_conformance"]
    (wheel,) = corp_wheels.glob("*.whl")
    assert header["jax"] == CORP and header["jax_module_version"] == DOCUMENTED and header["jaxlib"] == DOCUMENTED
    assert header["source"]["kind"] == "wheels"
    assert header["source"]["wheels"] == [{"name": wheel.name, "sha256": sha256_of(wheel)}]
    assert f"jax {CORP}: Python" in out and "environment from wheel files" in out
    corp_cells = cells_of(stored)
    assert corp_cells[VMAP]["status"] == "differs"  # the fork's fix: the known issue is gone
    assert corp_cells[VMAP]["command"].startswith("jax-conformance run --wheels WHEELS_DIR -k")

    # The gate runs the release, reuses the build's stored cells, and decides.
    code = cli.main(
        [
            "gate",
            "--from",
            DOCUMENTED,
            "--to-wheels",
            str(corp_wheels),
            "-k",
            CELLS,
            "-j",
            "1",
            "--results",
            str(results),
            "--markdown",
            str(tmp_path / "gate.md"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"gate (linux-x86_64: jax {DOCUMENTED} -> {CORP})" in out
    assert "3 cells (0 ran, 3 reused)" in out  # the build's side: nothing ran again
    # Direction: a +local build of 0.12.0.1 IS the documented release, so a known issue that is gone reads
    # "changed: maybe fixed" (an older release would read "bug absent").
    assert direction(CORP) == SAME
    assert f"{VMAP}: conforms (bug still present) -> differs (changed: maybe fixed)" in out
    assert "GOOD NEWS (1)" in out and "PASS" in out
    assert CORP in (tmp_path / "gate.md").read_text(encoding="utf-8")

    # The report: the build's column follows the release's, under its own name. "Where JAX 0.12.0.1 differs from
    # the chapter" stays about the release itself; the build's own changes are what changed between the columns.
    model = build_model(load_results(results), [])
    assert [c.jax for c in model.columns] == [DOCUMENTED, CORP]
    assert model.columns[1].origin.startswith(f"wheel files {wheel.name}")
    assert {(d.jax, d.cell_id) for d in model.discrepancies} == {(DOCUMENTED, "values.debug_log[default_level]")}
    (step,) = model.steps
    assert (step.before, step.after) == (DOCUMENTED, CORP)

    # The other way round the known issue appears: a regression, exit 1.
    back = cli.main(
        ["gate", "--baseline", str(stored), "--candidate", str(results / f"{DOCUMENTED}-linux-x86_64.json")]
    )
    assert back == 1, capsys.readouterr().out


def test_a_rebuilt_wheel_of_the_same_version_never_reuses_the_results_of_the_build_before(
    corp_wheels, tmp_path, capsys
):
    """The team rebuilds 0.12.0.1+corp.3 without the fix and keeps the label: its cells run again, since a
    build's reuse keys hold its installed files, not only its version."""
    results = tmp_path / "results"
    argv = ["run", "-k", VMAP, "-j", "1", "--results", str(results)]
    assert cli.main([*argv, "--wheels", str(corp_wheels)]) == 0
    assert cells_of(results / f"{CORP}-linux-x86_64.json")[VMAP]["status"] == "differs"  # with the fix
    released = download_wheel("jax", DOCUMENTED, tmp_path / "download")
    rebuilt = retag_wheel(released, CORP, tmp_path / "rebuilt").parent  # the same label, without the fix
    capsys.readouterr()
    assert cli.main([*argv, "--wheels", str(rebuilt)]) == 0
    assert "1 cells (1 ran, 0 reused)" in capsys.readouterr().out
    assert cells_of(results / f"{CORP}-linux-x86_64.json")[VMAP]["status"] == "conforms"  # the bug is back


def test_run_python_takes_an_environment_the_suite_did_not_build(tmp_path, capsys):
    interpreter = EnvironmentBuilder().interpreter_for(DOCUMENTED)
    venv = tmp_path / "their-env"
    uv = uv_binary()
    subprocess.run([uv, "venv", "--quiet", "--python", interpreter.path, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), f"jax=={DOCUMENTED}"], check=True)

    results, report = tmp_path / "results", tmp_path / "report.html"
    code = cli.main(
        [
            "run",
            "--python",
            str(python),
            "-k",
            "config.environment_info",
            "-j",
            "1",
            "--results",
            str(results),
            "-o",
            str(report),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "an existing interpreter (nothing built)" in out
    # Its version is a release's: even run alone, a build is stored apart from the release (never in its file).
    assert not (results / f"{DOCUMENTED}-linux-x86_64.json").exists()
    (stored,) = (results / "builds").glob(f"python-*/{DOCUMENTED}-linux-x86_64.json")
    header = json.loads(stored.read_text(encoding="utf-8"))["jax_conformance"]
    assert header["source"] == {"kind": "python", "python": str(python)}
    assert header["jax"] == DOCUMENTED and header["python"] == interpreter.version
    assert cells_of(stored)["config.environment_info"]["status"] == "conforms"
    page = report.read_text(encoding="utf-8")
    assert "an existing interpreter" in page and str(tmp_path) not in page  # no path of this machine

    # Gated against the release of the same version: both are 0.12.0.1 on this platform; the build's results stay
    # in their folder, the release gets its own file, and the gate compares the two.
    code = cli.main(
        [
            "gate",
            "--from",
            DOCUMENTED,
            "--to-python",
            str(python),
            "-k",
            "config.environment_info",
            "-j",
            "1",
            "--results",
            str(results),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    (own,) = (results / "builds").glob(f"python-*/{DOCUMENTED}-linux-x86_64.json")
    assert own == stored
    assert json.loads(own.read_text(encoding="utf-8"))["jax_conformance"]["source"]["kind"] == "python"
    release = results / f"{DOCUMENTED}-linux-x86_64.json"
    assert json.loads(release.read_text(encoding="utf-8"))["jax_conformance"]["source"]["kind"] == "index"
    assert f"gate (linux-x86_64: jax {DOCUMENTED} -> {DOCUMENTED})" in out and "1 cell(s) compared" in out
