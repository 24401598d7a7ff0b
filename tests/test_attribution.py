"""jax or jaxlib: the verdict table, which mixes jax accepts, the pair target, and `bisect --attribute` for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.decide.attribution import LIKE_BAD, LIKE_GOOD, NEITHER, Mix, attribute, verdict
from conformance.engine.targets import BUILD_KINDS, JaxPair
from conformance.envs.pairs import declared_allows, installed_jax_facts, mix_problem, release_numbers
from conformance.errors import ConformanceError


def test_the_verdict_reads_the_two_mixes_as_the_table_says():
    def mixes(first, second):
        return Mix("0.9.0", "0.8.3", first), Mix("0.8.3", "0.9.0", second)

    assert verdict(*mixes(LIKE_BAD, LIKE_GOOD)) == "changed by jax (Python)"
    assert verdict(*mixes(LIKE_GOOD, LIKE_BAD)) == "changed by jaxlib"
    assert verdict(*mixes(LIKE_GOOD, LIKE_GOOD)) == "needs both"
    assert verdict(*mixes(LIKE_BAD, LIKE_BAD)) == "either side alone changes it"
    assert verdict(*mixes(NEITHER, LIKE_BAD)).startswith("cannot be split")
    refused = Mix("0.8.3", "0.9.0", problem="jax 0.8.3 refuses jaxlib 0.9.0, which is newer than itself")
    assert verdict(Mix("0.9.0", "0.8.3", LIKE_BAD), refused) == "changed by jax (Python)"
    assert verdict(Mix("0.9.0", "0.8.3", LIKE_GOOD), refused).startswith("changed by jaxlib (jax 0.8.3 over jaxlib")


def test_a_refused_first_mix_cannot_be_split_and_nothing_is_run():
    ran = []
    found = attribute(
        ("0.7.2", "0.7.2"),
        ("0.8.0", "0.8.0"),
        lambda jax, jaxlib: mix_problem(jax, jaxlib, "0.8.0" if jax == "0.8.0" else "0.7.2"),
        lambda jax, jaxlib: ran.append((jax, jaxlib)) or Mix(jax, jaxlib, LIKE_BAD),
    )
    assert found.verdict == "cannot be split: jax 0.8.0 requires jaxlib >= 0.8.0" and ran == []
    assert found.details == ["jax 0.8.0 over jaxlib 0.7.2: not run (jax 0.8.0 requires jaxlib >= 0.8.0)"]


def test_an_accepted_first_mix_runs_and_decides_with_the_reverse_refused():
    ran = []
    found = attribute(
        ("0.11.2", "0.11.2"),
        ("0.12.0.1", "0.12.0.1"),
        lambda jax, jaxlib: mix_problem(jax, jaxlib, "0.11.2"),
        lambda jax, jaxlib: ran.append((jax, jaxlib)) or Mix(jax, jaxlib, LIKE_BAD),
    )
    assert ran == [("0.12.0.1", "0.11.2")] and found.verdict == "changed by jax (Python)"
    assert "not run (jax 0.11.2 refuses jaxlib 0.12.0.1, which is newer than itself)" in found.details[1]


def test_which_mixes_jax_accepts_follow_its_import_check_and_declared_range():
    assert release_numbers("0.12.0.1rc1") == (0, 12, 0, 1)
    assert mix_problem("0.12.0.1", "0.11.2", "0.11.2") == ""
    assert mix_problem("0.12.0.1", "0.11.1", "0.11.2") == "jax 0.12.0.1 requires jaxlib >= 0.11.2"
    assert "newer than itself" in mix_problem("0.11.2", "0.12.0.1", "0.11.2")
    assert declared_allows("<=0.12.0.1,>=0.11.2", "0.11.2") and not declared_allows("<=0.12.0.1,>=0.11.2", "0.11.1")
    assert declared_allows("", "0.4.38")


def test_the_pair_is_a_build_kind_of_its_own_stored_apart():
    assert JaxPair in BUILD_KINDS and JaxPair.option == "pair"
    pair = JaxPair("0.12.0.1:0.11.2")
    assert (pair.jax, pair.jaxlib, pair.label) == ("0.12.0.1", "0.11.2", "0.12.0.1")
    assert pair.storage_name(None) == "pair-0.12.0.1-0.11.2" and pair.apart and not pair.release
    with pytest.raises(ConformanceError, match="should be JAX:JAXLIB"):
        JaxPair("0.12.0.1").check(None)


@pytest.mark.e2e
def test_what_a_real_jax_declares_is_read_from_its_files():
    """The release environment is built (or reused) like any run's, from the package index: nothing an earlier run
    left is assumed."""
    from conformance.envs.builder import EnvironmentBuilder

    environment = EnvironmentBuilder().prepare("0.12.0.1")
    facts = installed_jax_facts(Path(environment.path))
    assert facts == {"minimum": "0.11.2", "requires": "<=0.12.0.1,>=0.11.2"}


@pytest.mark.e2e
def test_bisect_attribute_on_a_pair_whose_mix_jax_refuses_says_cannot_be_split_in_one_line(tmp_path, capsys):
    """Real packages: jax 0.8.0 requires jaxlib >= 0.8.0, so the debug_nans vmap miss that appears in 0.8.0 cannot
    be split between jax and jaxlib; the bisect still exits 0 and writes its report and verdict."""
    from conformance import cli

    issue, verdict_file = tmp_path / "bug.md", tmp_path / "verdict.json"
    code = cli.main(
        [
            "bisect",
            "numerics.debug_nans.vmap_miss.vmap",
            "--good",
            "0.7.2",
            "--bad",
            "0.8.0",
            "--attribute",
            "--results",
            str(tmp_path / "r"),
            "--issue",
            str(issue),
            "--json",
            str(verdict_file),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    lines = [line for line in out.splitlines() if line.startswith("attribution:")]
    assert lines == ["attribution: cannot be split: jax 0.8.0 requires jaxlib >= 0.8.0"]
    assert "first bad build: jax 0.8.0 (no commit recorded; tag jax-v0.8.0)" in out  # its wheel records none
    assert json.loads(verdict_file.read_text())["attribution"]["verdict"].startswith("cannot be split")
    assert "**Attribution:** cannot be split" in issue.read_text()
    assert not (tmp_path / "r" / "builds").exists()  # nothing was built or run for a refused mix


class PairBuilder:
    """Stands in for the environment builder: release environments with the jax files a wheel installs, and
    `_prepare` recorded instead of run."""

    def __init__(self, root, declared, minimum):
        from conformance.envs.builder import Requirements
        from conformance.envs.index import IndexOptions, Release
        from conformance.envs.interpreters import Interpreter

        self.root, self.options, self.calls = root, IndexOptions(), []
        self.interpreters = [Interpreter("/usr/bin/python3.13", "3.13.0")]
        self.index = type(
            "Index",
            (),
            {"jax_release": lambda _, v: Release(v, ">=3.11"), "jaxlib_pythons": lambda _, v: frozenset({"cp313"})},
        )()
        self.requirements = lambda version: Requirements((f"jax[cpu]=={version}",))
        self.declared, self.minimum = declared, minimum

    def prepare(self, version):
        packages = self.root / f"rel-{version}" / "lib" / "python3.13" / "site-packages"
        (packages / "jax").mkdir(parents=True, exist_ok=True)
        (packages / "jax" / "version.py").write_text(
            f"_version = '{version}'\n_minimum_jaxlib_version = '{self.minimum}'\n"
        )
        (packages / f"jax-{version}.dist-info").mkdir(exist_ok=True)
        (packages / f"jax-{version}.dist-info" / "METADATA").write_text(
            f'Name: jax\nRequires-Dist: jaxlib{self.declared}\nRequires-Dist: jaxlib==0.1; extra == "ci"\n'
        )
        return type("Env", (), {"path": self.root / f"rel-{version}"})()

    def _prepare(self, path, wanted, interpreter, install, version, digest, source, **kwargs):
        self.calls.append((install, kwargs["then"], source))
        return source


def test_a_pair_installs_jax_over_the_jaxlib_release_and_with_no_deps_only_where_the_declared_range_refuses(tmp_path):
    from conformance.envs.pairs import prepare_pair

    accepted = PairBuilder(tmp_path / "a", "<=0.12.0.1,>=0.11.2", "0.11.2")
    source = prepare_pair(accepted, "0.12.0.1", "0.11.2")
    [(install, then, _)] = accepted.calls
    assert install[0] == "jax[cpu]==0.11.2" and then == (["jax==0.12.0.1", "jaxlib==0.11.2"],)
    assert source["no_deps"] is False and source["declared"] == "<=0.12.0.1,>=0.11.2"
    only_declared = PairBuilder(tmp_path / "b", "<=0.12.0.1,>=0.12.0", "0.11.2")  # import accepts 0.11.2
    source = prepare_pair(only_declared, "0.12.0.1", "0.11.2")
    assert only_declared.calls[0][1] == (["--no-deps", "jax==0.12.0.1"],) and source["no_deps"] is True
    refused = PairBuilder(tmp_path / "c", "<=0.8.0,>=0.8.0", "0.8.0")
    with pytest.raises(
        ConformanceError, match="^jax 0.8.0 cannot run over jaxlib 0.7.2: jax 0.8.0 requires jaxlib >= 0.8.0$"
    ):
        prepare_pair(refused, "0.8.0", "0.7.2")
    assert refused.calls == []
