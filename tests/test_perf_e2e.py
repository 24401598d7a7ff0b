"""The performance tier end to end on a fake-slow JAX: a copy of the 0.12.0.1 environment whose
`jax.block_until_ready` burns 20 ms of CPU first (as `benchmarks/sensitivity.py` edits JAX's own source). `perf`
flags the copy, `bisect --metric run_cpu_s` names it as the first side where the metric crossed, and `gate --perf`
fails on it unless a `[[perf]]` entry acknowledges it. One workload, five rounds; slow, marked `e2e`.

The release's environment is built with the project's builder from the package index, from an empty environment
cache as `.ci/run` gives it (`JAX_CONFORMANCE_CACHE`, a fresh folder): nothing an earlier run left under
`~/.cache/jax-conformance` is read; the copy, the results and the JSON are the test's own."""

from __future__ import annotations

import json
import os
import shutil
import textwrap

import pytest

from conformance import cli
from conformance.envs.builder import EnvironmentBuilder

pytestmark = pytest.mark.e2e

RELEASE = "0.12.0.1"
WORKLOAD = "performance.scan_grad"
OLD = "  def try_to_block(x):\n"
BURN = "  import time as _t; _end = _t.process_time() + 0.02\n  while _t.process_time() < _end: pass\n"


def slow_copy(env_path, into):
    """A copy of the environment at `env_path` with its own `jax` package (edited), every other package linked."""
    shutil.copytree(env_path, into, symlinks=True, ignore=shutil.ignore_patterns("site-packages"))
    (site,) = env_path.glob("lib/python3*/site-packages")
    mine = into / site.relative_to(env_path)
    mine.mkdir(parents=True)
    for entry in site.iterdir():
        if entry.name == "jax":
            shutil.copytree(entry, mine / "jax")
        else:
            os.symlink(entry, mine / entry.name)
    api = mine / "jax" / "_src" / "api.py"
    text = api.read_text(encoding="utf-8")
    assert text.count(OLD) == 1, "the edit's anchor is not in this jax"
    api.write_text(text.replace(OLD, BURN + OLD), encoding="utf-8")
    return str(into / "bin" / "python")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """The release's interpreter and the slow copy's, measured by `perf` into a fresh results folder."""
    env = EnvironmentBuilder().prepare(RELEASE)
    root = tmp_path_factory.mktemp("perf")
    slow = slow_copy(env.path, root / "slow-env")
    results, out = root / "results", root / "perf.json"
    status = cli.main(
        [
            "perf",
            "--python",
            env.python,
            "--python",
            slow,
            "-k",
            "scan_grad",
            "--rounds",
            "5",
            "--max-rounds",
            "6",
            "--results",
            str(results),
            "--json",
            str(out),
        ]
    )
    assert status == 0
    return env.python, slow, results, json.loads(out.read_text(encoding="utf-8"))


def test_perf_flags_the_slow_copy_as_regressed_and_its_hlo_as_unchanged(measured):
    _, _, _, found = measured
    (workload,) = found["workloads"]
    good, bad = workload["releases"]
    assert bad["against"] == good["release"]
    assert bad["verdicts"]["run_cpu_s"]["verdict"] == "regressed" and bad["verdicts"]["run_s"]["verdict"] == "regressed"
    assert bad["verdicts"]["run_cpu_s"]["ratio"] > 5
    assert bad["verdicts"]["fusions"]["verdict"] == "same" and bad["verdicts"]["compiles"]["verdict"] == "same"
    assert len(good["samples"]) >= 5 and good["medians"]["compiles"] >= 1


def test_bisect_metric_names_the_slow_side_from_stored_samples(measured, capsys):
    good, slow, results, _ = measured
    capsys.readouterr()
    status = cli.main(
        ["bisect", WORKLOAD, "--metric", "run_cpu_s", "--good", good, "--bad", slow, "--results", str(results)]
    )
    out = capsys.readouterr()
    assert status == 0
    assert f"first release where run_cpu_s of {WORKLOAD} crossed: {RELEASE} ({slow})" in out.out
    assert "round" not in out.err  # answered from the stored samples: nothing sampled again


def test_gate_perf_fails_on_the_slow_copy_unless_acknowledged(measured, tmp_path, capsys):
    good, slow, results, _ = measured
    gate = ["gate", "--perf", "--from", good, "--to-python", slow, "-k", "scan_grad", "--results", str(results)]
    assert cli.main(gate) == 1
    assert "REGRESSION: performance.scan_grad run_cpu_s: regressed" in capsys.readouterr().out  # the one gate
    acks = tmp_path / "expect.toml"
    acks.write_text(
        textwrap.dedent(f"""\
        [[perf]]
        workload = "performance.scan_*"
        metric = ["run_s", "run_cpu_s"]
        jax = "=={RELEASE}"
        reason = "the copy burns 20 ms in block_until_ready on purpose"
        """),
        encoding="utf-8",
    )
    assert cli.main([*gate, "--expectations", str(acks)]) == 0
    assert "acknowledged: performance.scan_grad run_cpu_s: the copy burns 20 ms" in capsys.readouterr().out


HOSTILE = """
from conformance.core.case import Section

SECTION = Section("§H", "Hostile")


@SECTION.workload(rows=["perf.h"], claim="Sleeps past its bound.", timeout_s=2)
def a_hang():
    import time
    time.sleep(30)


@SECTION.workload(rows=["perf.h"], claim="Calls os._exit.")
def b_exits():
    import os
    os._exit(3)


@SECTION.workload(rows=["perf.h"], claim="Turns on x64.")
def c_x64():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    return (lambda x: x * 2.0), (jnp.ones((256, 256), dtype=jnp.float64),)


@SECTION.workload(rows=["perf.h"], claim="A float32 256x256 product, after the x64 one.")
def d_after():
    import jax.numpy as jnp
    return (lambda x: x * 2.0), (jnp.ones((256, 256)),)
"""


def test_a_hang_an_exit_and_x64_on_a_real_release_cost_only_themselves(tmp_path, capsys):
    """Issue 57 on a real release: one child measured them all, so `b_exits` lost the round ("failed (exit 3): no
    output"), `a_hang` was measured as normal past its `timeout_s=2`, and `d_after`'s exact `output_bytes` was
    524,288 after x64 (262,144 alone)."""
    folder = tmp_path / "hostile57"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "wl.py").write_text(HOSTILE)
    out = tmp_path / "perf.json"
    status = cli.main(
        [
            "perf",
            "--jax",
            RELEASE,
            "--cases",
            str(folder),
            "-k",
            "hostile57",
            "--rounds",
            "1",
            "--max-rounds",
            "1",
            "--results",
            str(tmp_path / "results"),
            "--json",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    assert status in (0, 1)
    assert "hostile57/wl.a_hang timeout: ran past its timeout_s of 2 s" in err
    assert "hostile57/wl.b_exits crash: its process exited with status 3" in err
    found = {w["id"]: w["releases"][0] for w in json.loads(out.read_text(encoding="utf-8"))["workloads"]}
    assert found["hostile57/wl.c_x64"]["medians"]["output_bytes"] == 524288
    assert found["hostile57/wl.d_after"]["medians"]["output_bytes"] == 262144
