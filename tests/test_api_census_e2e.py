"""The API census of real releases (0.5.3, 0.6.0, 0.6.2), their environments built with the project's builder, then
`api diff` and `api scan` on what was measured. Needs the package index and a Python those releases accept; slow,
marked `e2e`. The environments are built from an empty environment cache as `.ci/run` gives it
(`JAX_CONFORMANCE_CACHE`, a fresh folder): nothing an earlier run left under `~/.cache/jax-conformance` is read, and
the censuses go to a results folder of the test's own."""

from __future__ import annotations

import json

import jsonschema
import pytest

from conformance import cli
from conformance.api.model import load_census
from conformance.api.store import census_path
from conformance.engine.matrix import host_platform
from conformance.envs.builder import EnvironmentBuilder
from tests.test_api_scan import REPOSITORY, SARIF_SCHEMA, write_repository

pytestmark = pytest.mark.e2e

RELEASES = ("0.5.3", "0.6.0", "0.6.2")


@pytest.fixture(scope="module")
def censused(tmp_path_factory):
    """The three releases' environments built by the builder (under `.ci/run`, into its empty cache; elsewhere found
    valid in the cache), then their censuses taken through the CLI into a fresh results folder."""
    builder = EnvironmentBuilder()
    for version in RELEASES:
        builder.prepare(version)
    results = tmp_path_factory.mktemp("api") / "results"
    status = cli.main(["api", "census", *[f"--jax={v}" for v in RELEASES], "--results", str(results)])
    assert status == 0
    return results, {v: load_census(census_path(results, v, host_platform())) for v in RELEASES}


def test_tree_map_is_deprecated_on_0_5_3_and_removed_on_0_6_2_in_jax_own_words(censused):
    _, censuses = censused
    old, new = censuses["0.5.3"], censuses["0.6.2"]
    assert old.state("jax.tree_map") == "deprecated"
    assert (
        "jax.tree_map is deprecated" in old.message("jax.tree_map")
        and old.replacement("jax.tree_map") == "jax.tree.map"
    )
    assert new.state("jax.tree_map") == "removed"
    assert "removed in JAX v0.6.0" in new.message("jax.tree_map")
    assert new.usable("jax.tree.map") and old.usable("jax.tree.map")


def test_shard_map_comes_with_its_signature_and_config_options_are_listed(censused):
    _, censuses = censused
    assert censuses["0.5.3"].state("jax.shard_map") == "absent"
    params = {p[0]: p[1] for p in censuses["0.6.2"].params("jax.shard_map")}
    assert params.get("out_specs") == "keyword_only"
    for census in censuses.values():
        assert census.entry("jax.config.jax_enable_x64")["env"] == "JAX_ENABLE_X64"
        assert census.entry("jax.numpy.sum")["kind"] == "function"
        assert census.counts()["modules"] > 50 and census.walked("jax.numpy")


def test_a_rerun_is_answered_from_storage(censused, capsys):
    results, _ = censused
    paths = [census_path(results, v, host_platform()) for v in RELEASES]
    before = [p.stat().st_mtime_ns for p in paths]
    capsys.readouterr()
    assert cli.main(["api", "census", *[f"--jax={v}" for v in RELEASES], "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert out.count("answered from storage") == len(RELEASES)
    assert [p.stat().st_mtime_ns for p in paths] == before


def test_api_diff_lists_tree_map_removed_and_shard_map_added_dated_over_the_stored_releases(censused, tmp_path):
    results, _ = censused
    out = tmp_path / "changes.json"
    assert cli.main(["api", "diff", "0.5.3", "0.6.2", "--results", str(results), "--json", str(out)]) == 0
    changes = {(c["name"], c["change"]): c for c in json.loads(out.read_text())["changes"]}
    removal = changes[("jax.tree_map", "removed")]
    assert removal["since"] == "0.6.0"  # 0.6.0's stored census sits between the two
    assert "deprecated on 0.5.3: jax.tree_map is deprecated: use jax.tree.map" in removal["message"]
    assert ("jax.shard_map", "added") in changes
    assert changes[("jax.numpy.reshape", "signature")]["message"].startswith("parameter newshape removed")


def test_api_scan_of_the_test_repository(censused, tmp_path, capsys):
    results, _ = censused
    repo = write_repository(tmp_path / "repo", REPOSITORY)
    capsys.readouterr()
    assert cli.main(["api", "scan", str(repo), "--to", "0.6.2", "--from", "0.5.3", "--results", str(results)]) == 1
    out = capsys.readouterr().out
    for where in (
        "train.py:12:",
        "model/layers.py:1:",
        "model/layers.py:6:",
        "model/aliased.py:3:",
        "model/aliased.py:7:",
    ):
        line = next(
            line
            for line in out.splitlines()
            if line.startswith(str(repo / where.split(":")[0]) + ":" + where.split(":")[1] + ":")
        )
        assert "jax.tree_map removed (since 0.6.0): jax.tree_map was removed in JAX v0.6.0" in line
    assert "jax.scipy.special.lpmn deprecated" in out
    assert "jax_debug_nans" not in out and "JAX_ENABLE_X64" not in out and "jax.numpy.sum" not in out
    assert cli.main(["api", "scan", str(repo), "--to", "0.5.3", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert out.count("jax.tree_map deprecated") == 5 and "use jax.tree.map" in out
    assert cli.main(["api", "scan", str(repo), "--to", "0.6.2", "--format", "sarif", "--results", str(results)]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    assert sum(r["level"] == "error" for r in log["runs"][0]["results"]) == 5
