"""Each release's own resolver pick (`--resolve each`) and the `api scan` of the suite's installed source against the
candidate, with a synthetic census (no JAX needed)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace

import pytest

from tests.api_censuses import census, fn, module, removed
from conformance.api.census import FORMAT, FORMAT_VERSION
from conformance.downstream.lock import Lock, Uninstallable, lock_inputs
from conformance.downstream.manifest import read_suite
from conformance.downstream.picks import across_line, each_release, pick_lines, picked_version
from conformance.downstream.sourcescan import library_files, scan_lines, scan_source


def test_the_pick_is_read_from_the_lock_by_its_normalised_name():
    lock = "# via x\nchex==0.1.92\n    # via -r in\ndm-haiku==0.0.13 ; python_version >= '3.10'\njax==0.7.0\n"
    assert picked_version(lock, "chex") == "0.1.92"
    assert picked_version(lock, "dm_haiku") == "0.0.13"
    assert picked_version(lock, "Chex") == "0.1.92"
    assert picked_version(lock, "optax") == ""
    assert picked_version("chexx==1\n", "chex") == ""


def test_each_release_is_resolved_unpinned_under_its_own_ident():
    suite = replace(read_suite("chex==0.1.90"), resolve="each")
    assert lock_inputs(suite, "0.7.0", "0.7.0")[:2] == ["chex", "jax[cpu]==0.7.0"]  # the pin dropped
    assert suite.ident == "chex_each" and suite.ident != read_suite("chex==0.1.90").ident
    assert lock_inputs(read_suite("chex==0.1.90"), "0.7.0", "0.7.0")[0] == "chex==0.1.90"


class _Options:
    def uv_args(self):
        return []

    def urls(self):
        return []

    def digest(self):
        return "idx"


class _Resolver:
    """uv's `pip compile` as told: `picks` maps a jax version to the chex it picks; a version not in it fails."""

    def __init__(self, root, picks):
        self.root, self.options, self.picks = root, _Options(), picks

    def interpreter_for(self, version):
        from conformance.envs.interpreters import Interpreter

        return Interpreter("/usr/bin/python3", "3.11.7")

    def jaxlib_for(self, version):
        return version

    def run(self, argv, **kwargs):
        given = open(argv[-3]).read()
        jax = given.split("jax[cpu]==")[1].split()[0]
        if jax not in self.picks:
            return subprocess.CompletedProcess(argv, 1, "", "  x No solution found: chex>=0.1.91 needs jax>=0.7.0")
        with open(argv[-1], "w") as out:
            out.write(f"chex=={self.picks[jax]}\njax=={jax}\njaxlib=={jax}\n")
        return subprocess.CompletedProcess(argv, 0, "", "")


def test_each_release_gets_its_own_pick_and_one_that_does_not_resolve_is_uninstallable(tmp_path):
    suite = replace(read_suite("chex==0.1.90"), resolve="each")
    resolver = _Resolver(tmp_path, {"0.5.3": "0.1.90", "0.7.0": "0.1.92"})
    locks = each_release(suite, ["0.5.3", "0.7.0", "0.4.0"], resolver)
    assert {v: picked_version(lock.text, "chex") for v, lock in locks.items() if isinstance(lock, Lock)} == {
        "0.5.3": "0.1.90",
        "0.7.0": "0.1.92",
    }
    assert isinstance(locks["0.4.0"], Uninstallable) and "needs jax>=0.7.0" in locks["0.4.0"].reason


def test_the_compatibility_answer_groups_releases_by_picked_version_and_says_when_a_pair_compares_two():
    picks = {"0.5.3": "0.1.90", "0.6.0": "0.1.90", "0.7.0": "0.1.92", "0.4.0": ""}
    assert pick_lines("chex", picks) == [
        "  chex 0.1.90 with jax 0.5.3, 0.6.0",
        "  chex 0.1.92 with jax 0.7.0",
        "  no chex version resolves with jax 0.4.0",
    ]
    assert across_line("chex", picks, "0.5.3", "0.6.0") == ""
    said = across_line("chex", picks, "0.5.3", "0.7.0")
    assert "chex 0.1.90 on jax 0.5.3 with chex 0.1.92 on jax 0.7.0" in said and "library's, not JAX's" in said


LIBRARY = {
    "lib/__init__.py": "from lib._src import api\n",
    "lib/_src/__init__.py": "",
    "lib/_src/api.py": "import jax\n\n\ndef replicate(x, devices):\n    return jax.device_put_replicated(x, devices)\n"
    "\n\ndef put(x):\n    return jax.device_put(x)\n\n\ndef more(x, d):\n"
    "    return jax.device_put_replicated(x, d)\n",
    # chex's pattern (asserts.py, 0.1.90): a guard that tests another name than the one it guards (issue 58)
    "lib/_src/sharding.py": "import jax\n\n\ndef on_many(x):\n    if hasattr(jax, 'Array'):\n"
    "        return isinstance(x.sharding, jax.sharding.PmapSharding)\n\n\ndef positional(x):\n"
    "    if hasattr(jax.sharding, 'PositionalSharding'):\n"
    "        return isinstance(x.sharding, jax.sharding.PositionalSharding)\n",
    "lib/_src/api_test.py": "import jax\n\njax.tree_map(lambda x: x, 1)\n",
    "lib/tests/test_more.py": "import jax\n\njax.tree_map(lambda x: x, 1)\n",
    "other/__init__.py": "import jax\n\njax.tree_map(lambda x: x, 1)\n",
}


@pytest.fixture
def installed(tmp_path):
    root = tmp_path / "site-packages"
    for name, text in LIBRARY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _census_file(tmp_path, names):
    made = census("0.10.0", names)
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "jax": made.jax,
        "platform": made.platform,
        "python": "3.13.0",
        "modules": made.modules,
        "names": made.names,
    }
    path = tmp_path / "census-0.10.0.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_librarys_own_source_is_scanned_its_tests_and_other_packages_aside(installed):
    files = [p.relative_to(installed).as_posix() for p in library_files(installed, ["lib"])]
    assert files == ["lib/__init__.py", "lib/_src/__init__.py", "lib/_src/api.py", "lib/_src/sharding.py"]
    assert library_files(installed, ["missing"]) == []


def test_a_removed_name_the_tests_never_reach_shows_with_its_places(installed, tmp_path):
    path = _census_file(
        tmp_path,
        {
            "jax.device_put_replicated": removed("jax.device_put_replicated was removed in JAX v0.10.0"),
            "jax.device_put": fn(("x", "positional_or_keyword", None)),
            "jax.tree_map": removed("jax.tree_map was removed"),  # used only by test files and another package
            "jax.tree_util": module(),
            "jax.sharding": module(),  # PmapSharding and PositionalSharding absent: missing names
        },
    )
    findings = scan_source(
        library_files(installed, ["lib"]), str(path), tmp_path / "results", lambda: None, lambda line: None
    )
    lines = scan_lines(findings, installed, "lib's installed source", "0.10.0", 4)
    assert lines[0] == (
        "  api scan of lib's installed source (4 files) against jax 0.10.0: 2 used names removed or "
        "missing, 1 more inside a guard"
    )
    assert lines[1] == "    removed since ≤0.10.0: jax.device_put_replicated at lib/_src/api.py:5 and 1 more place"
    # inside `hasattr(jax, 'Array')`, which tests another name: a break, not a guarded use
    assert lines[2] == "    missing since ≤0.10.0: jax.sharding.PmapSharding at lib/_src/sharding.py:6"
    assert lines[3] == (
        "    guarded (absent on jax 0.10.0; inside an hasattr(...) guard): "
        "jax.sharding.PositionalSharding at lib/_src/sharding.py:11"
    )
    assert len(lines) == 4  # jax.device_put is present; jax.tree_map is used only by tests and another package


def test_a_scan_with_nothing_removed_says_so():
    assert scan_lines([], __import__("pathlib").Path("/x"), "lib's installed source", "0.8.0", 2) == [
        "  api scan of lib's installed source (2 files) against jax 0.8.0: 0 used names removed or missing"
    ]


def test_resolve_each_judges_each_release_under_its_own_pick_and_says_which_version_works(tmp_path):
    from conformance.downstream.cells import run_key, to_cell
    from conformance.downstream.command import DownstreamRequest, run_downstream
    from conformance.downstream.lock import lock_for, suite_env_digest
    from conformance.downstream.outcomes import NodeOutcome
    from conformance.downstream.store import store_suite, suite_cells
    from conformance.engine.matrix import host_platform

    builder = _Resolver(tmp_path / "cache", {"0.5.3": "0.1.90", "0.6.0": "0.1.90", "0.7.0": "0.1.92"})
    results = tmp_path / "results"
    suite = replace(read_suite("chex==0.1.90"), resolve="each")
    for version, status in (("0.5.3", "passed"), ("0.6.0", "passed"), ("0.7.0", "failed")):
        # stored cells under each release's own lock answer the run (no environment is built here)
        key = run_key(
            suite.spec,
            suite.manifest.text,
            "",
            suite_env_digest(lock_for(suite, version, builder), version, builder),
            None,
        )
        cell = to_cell(suite.ident, suite.label, NodeOutcome("chex/_src/a_test.py::t", status, 0.1), key, [], {}, ())
        store_suite(results, version, host_platform(), suite.ident, [cell], "3.11.7", 1.0)
    said: list[str] = []
    request = DownstreamRequest(
        ("chex==0.1.90",),
        ("0.5.3", "0.6.0", "0.7.0", "0.4.0"),
        results,
        json_path=tmp_path / "out.json",
        resolve="each",
        api_scan=False,
    )
    outcome = run_downstream(request, builder, said.append)
    text = "\n".join(said)
    assert "jax 0.7.0 (chex==0.1.92, the resolver's pick): 1 failed (stored results)" in text
    assert "compares chex 0.1.90 on jax 0.5.3 with chex 0.1.92 on jax 0.7.0" in text
    assert "compares chex 0.1.90 on jax 0.5.3 with chex 0.1.90" not in text  # same pick: no note for 0.6.0
    answer = said.index("downstream chex (each release's own pick): the resolver's pick per release")
    assert said[answer + 1 : answer + 4] == [
        "  chex 0.1.90 with jax 0.5.3, 0.6.0",
        "  chex 0.1.92 with jax 0.7.0",
        "  no chex version resolves with jax 0.4.0",
    ]
    assert "jax 0.4.0: uninstallable: the requirements of chex (each release's own pick) do not resolve" in text
    assert outcome.exit_code == 1  # 0.7.0's regressed test and 0.4.0's uninstallable both gate
    assert json.loads((tmp_path / "out.json").read_text())["picks"] == {
        "chex (each release's own pick)": {"0.5.3": "0.1.90", "0.6.0": "0.1.90", "0.7.0": "0.1.92", "0.4.0": ""}
    }
    assert [c.details["suite"] for c in suite_cells(results, "0.4.0", host_platform(), "chex_each")] == [
        "chex (each release's own pick)"
    ]


def test_a_test_folders_helpers_and_conftest_are_aside_whatever_their_names(tmp_path):
    names = ["lib/core.py", "lib/conftest.py", "lib/tests/helpers.py", "lib/test/util.py", "lib/testing/fakes.py"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import jax\n", encoding="utf-8")
    files = [p.relative_to(tmp_path).as_posix() for p in library_files(tmp_path, ["lib"])]
    assert files == ["lib/core.py", "lib/testing/fakes.py"]  # `testing` is the library's own, not a test folder


def test_a_pick_with_extras_and_a_release_that_resolved_none_are_read_and_said():
    assert picked_version("chex[dev,test] == 0.1.92 ; python_version >= '3.10'\n", "chex") == "0.1.92"
    said = across_line("chex", {"0.4.0": "", "0.5.3": "0.1.90"}, "0.4.0", "0.5.3")
    assert "chex (none) on jax 0.4.0 with chex 0.1.90 on jax 0.5.3" in said
