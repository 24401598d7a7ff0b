"""`bisect --jax-source`: the git plumbing on a small repository, the jaxlib each commit runs over, the search
through commits (each run once), and for real: a two-commit repository made from the sdists of jax 0.12.0 and
0.12.0.1, the second patched to change a cell."""

from __future__ import annotations

import subprocess
import sys
import tarfile

import pytest

from conformance.decide.bisect import same_observation
from conformance.decide.commits import BuildCommits
from conformance.decide.source_bisect import (
    SourceStop,
    choose_jaxlib,
    commit_version,
    export_tree,
    first_parent_commits,
    resolve_build,
    source_session,
)
from conformance.errors import ConformanceError
from tests.retag import TEST_UTIL_PATCH
from tests.synthetic_results import result

CELL = "setup.explicit_test_util_import"


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit_all(repo, message, tag=""):
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", message)
    if tag:
        git(repo, "tag", tag)
    return git(repo, "rev-parse", "HEAD")


def version_file(version, minimum):
    return f"_version = \"{version}\"\n_minimum_jaxlib_version = '{minimum}'\n"


@pytest.fixture
def small_repo(tmp_path):
    """Four commits of a fake jax: 0.12.0 (tag), two dev commits (the second changes `value`), 0.12.0.1 (tag)."""
    repo = tmp_path / "jax"
    (repo / "jax").mkdir(parents=True)
    git(repo.parent, "init", "-q", str(repo))
    shas = []
    for message, version, value, tag in (
        ("release 0.12.0", "0.12.0", 1, "jax-v0.12.0"),
        ("dev: bump to 0.12.0.1", "0.12.0.1", 1, ""),
        ("dev: change the value", "0.12.0.1", 2, ""),
        ("release 0.12.0.1", "0.12.0.1", 2, "jax-v0.12.0.1"),
    ):
        (repo / "jax" / "version.py").write_text(version_file(version, "0.11.2"))
        (repo / "jax" / "value.txt").write_text(str(value))
        (repo / "CHANGELOG").write_text(message)
        shas.append(commit_all(repo, message, tag))
    return repo, shas


def test_the_plumbing_resolves_tags_lists_first_parents_and_exports_a_commit(small_repo, tmp_path):
    repo, shas = small_repo
    good = resolve_build(repo, BuildCommits("0.12.0", "0.12.0", "feedface" * 5))  # the wheel's commit is not here
    assert good == shas[0]
    assert resolve_build(repo, BuildCommits("0.12.0.1", "0.12.0.1", shas[3])) == shas[3]
    assert first_parent_commits(repo, shas[0], shas[3]) == shas
    assert commit_version(repo, shas[1]) == ("0.12.0.1", "0.11.2")
    tree = export_tree(repo, shas[2], tmp_path / "trees")
    assert (tree / "jax" / "value.txt").read_text() == "2" and not (tree / ".git").exists()
    with pytest.raises(ConformanceError, match="neither commit .* nor tag jax-v0.9.0"):
        resolve_build(repo, BuildCommits("0.9.0", "0.9.0"))


def test_each_commit_runs_over_the_first_bad_jaxlib_it_accepts_else_the_last_good_one():
    assert choose_jaxlib("0.12.0.1", "0.11.2", ("0.12.0.1", "0.12.0")) == "0.12.0.1"
    assert choose_jaxlib("0.12.0", "0.11.2", ("0.12.0.1", "0.12.0")) == "0.12.0"  # jax refuses a newer jaxlib
    with pytest.raises(SourceStop, match="accepts jaxlib 0.12.1 to 0.12.1; none of jaxlib 0.12.0.1, 0.12.0"):
        choose_jaxlib("0.12.1", "0.12.1", ("0.12.0.1", "0.12.0"))


def test_the_session_finds_the_first_bad_commit_running_each_commit_once(small_repo, tmp_path):
    repo, shas = small_repo
    ran = []

    def run_tree(tree, commit, jaxlib):
        ran.append((commit, jaxlib))
        return result(CELL, observation={"value": (tree / "jax" / "value.txt").read_text()})

    found = source_session(
        repo,
        BuildCommits("0.12.0", "0.12.0"),
        BuildCommits("0.12.0.1", "0.12.0.1"),
        tmp_path / "trees",
        run_tree,
        same_observation,
    )
    assert found.outcome.first_bad == shas[2] and found.outcome.last_good == shas[1]
    assert sorted(ran) == sorted(set(ran))  # no commit run twice
    assert dict(ran) == {shas[0]: "0.12.0", shas[3]: "0.12.0.1", **{c: "0.12.0.1" for c, _ in ran[2:]}}
    lines = found.lines()
    assert f"first bad commit {shas[2][:12]} (over jaxlib 0.12.0.1): dev: change the value" in lines[1]
    assert f"https://github.com/jax-ml/jax/commit/{shas[2]}" in lines[2]


def test_a_good_build_newer_than_the_bad_one_is_searched_back_and_names_the_commit_that_made_the_change(
    small_repo, tmp_path
):
    """`--find-fix` (or --good newer than --bad) hands the newer build as `good`: the history between them is
    searched backwards from it, and the commit named is the one that changed the cell going forward."""
    repo, shas = small_repo
    ran = []

    def run_tree(tree, commit, jaxlib):
        ran.append(commit)
        return result(CELL, observation={"value": (tree / "jax" / "value.txt").read_text()})

    found = source_session(
        repo,
        BuildCommits("0.12.0.1", "0.12.0.1"),
        BuildCommits("0.12.0", "0.12.0"),
        tmp_path / "trees",
        run_tree,
        same_observation,
    )
    assert not found.stopped and found.changed_by == shas[2]
    assert (found.outcome.last_good, found.outcome.first_bad) == (shas[2], shas[1])
    assert len(ran) == len(set(ran))
    said = "\n".join(found.lines())
    assert f"commit that made the change: {shas[2][:12]} (over jaxlib 0.12.0.1): dev: change the value" in said
    assert f"https://github.com/jax-ml/jax/commit/{shas[2]}" in said and shas[1] not in said.split("commit/")[-1]


def test_a_commit_no_jaxlib_serves_stops_the_search_with_the_range_it_needs(small_repo, tmp_path):
    repo, shas = small_repo
    (repo / "jax" / "version.py").write_text(version_file("0.12.1", "0.12.1"))
    last = commit_all(repo, "needs a newer jaxlib", "jax-v0.12.1")
    found = source_session(
        repo,
        BuildCommits("0.12.0", "0.12.0"),
        BuildCommits("0.12.1", "0.12.0.1"),
        tmp_path / "trees",
        lambda tree, commit, jaxlib: result(CELL),
        same_observation,
    )
    assert found.outcome is None
    assert found.lines() == [
        f"jax source: stopped: commit {last[:12]} (needs a newer jaxlib): jax 0.12.1 at this "
        f"commit accepts jaxlib 0.12.1 to 0.12.1; none of jaxlib 0.12.0.1, 0.12.0 is in that "
        f"range, so a jaxlib of that range is needed to go on"
    ]


def test_a_folder_that_is_no_checkout_is_one_line(tmp_path):
    with pytest.raises(ConformanceError, match="is not a git checkout"):
        source_session(
            tmp_path,
            BuildCommits("0.12.0", "0.12.0"),
            BuildCommits("0.12.0.1", "0.12.0.1"),
            tmp_path / "trees",
            lambda *a: None,
            same_observation,
        )


def _sdist(version, folder):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-binary",
            ":all:",
            "--no-deps",
            "--ignore-requires-python",
            "-q",
            f"jax=={version}",
            "-d",
            str(folder),
        ],
        check=True,
    )
    [found] = folder.glob(f"jax-{version}.tar.gz")
    return found


@pytest.mark.e2e
def test_jax_source_finds_the_patched_commit_between_two_sdists(tmp_path, capsys):
    """Real packages: the sdists of jax 0.12.0 and 0.12.0.1 as two commits, the second patched so that
    `jax.test_util` is an attribute after a bare `import jax`; both releases agree on the cell, the commits do not."""
    from conformance import cli

    repo = tmp_path / "jax"
    repo.mkdir()
    git(tmp_path, "init", "-q", str(repo))
    for version, tag, patch in (("0.12.0", "jax-v0.12.0", False), ("0.12.0.1", "jax-v0.12.0.1", True)):
        for old in [p for p in repo.iterdir() if p.name != ".git"]:
            subprocess.run(["rm", "-rf", str(old)], check=True)
        with tarfile.open(_sdist(version, tmp_path / "sdists")) as archive:
            archive.extractall(tmp_path / "unpacked", filter="data")
        subprocess.run(["cp", "-r", f"{tmp_path / 'unpacked' / f'jax-{version}'}/.", str(repo)], check=True)
        if patch:
            with open(repo / "jax" / "__init__.py", "a", encoding="utf-8") as init:
                init.write(TEST_UTIL_PATCH)
        commit_all(repo, f"jax {version}" + (": jax.test_util imported by jax" if patch else ""), tag)
    bad = git(repo, "rev-parse", "HEAD")
    results = tmp_path / "r"
    code = cli.main(
        ["bisect", CELL, "--good", "0.12.0", "--bad", "0.12.0.1", "--jax-source", str(repo), "--results", str(results)]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert f"first bad commit {bad[:12]} (over jaxlib 0.12.0.1): jax 0.12.0.1: jax.test_util imported by jax" in out
    assert sum(line.strip().startswith("commit ") and "over jaxlib" in line for line in out.splitlines()) == 2
    assert len(list((results / "builds").glob("commit-*"))) == 2  # each commit built and stored once


def test_a_commit_that_does_not_import_over_one_jaxlib_is_tried_over_the_other(small_repo, tmp_path):
    from conformance.decide.bisect import Untestable

    repo, shas = small_repo
    tried = []

    def run_tree(tree, commit, jaxlib):
        tried.append((commit, jaxlib))
        if commit == shas[2] and jaxlib == "0.12.0.1":
            return Untestable(commit, "does not import (a symbol this jaxlib lacks)")
        return result(CELL, observation={"value": (tree / "jax" / "value.txt").read_text()})

    found = source_session(
        repo,
        BuildCommits("0.12.0", "0.12.0"),
        BuildCommits("0.12.0.1", "0.12.0.1"),
        tmp_path / "trees",
        run_tree,
        same_observation,
    )
    assert (shas[2], "0.12.0") in tried and found.jaxlibs[shas[2]] == "0.12.0"
    assert found.outcome.first_bad == shas[2]
