"""The shipped matrices and the matrix reader's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.errors import ConformanceError
from conformance.envs.matrix import load_matrix, parse_matrix

DEFAULT = ["0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1"]


def test_default_matrix_is_the_latest_patch_of_every_minor_release():
    assert list(load_matrix("default").versions) == DEFAULT


def test_quick_matrix_is_oldest_middle_newest():
    assert list(load_matrix("quick").versions) == ["0.4.38", "0.8.3", "0.12.0.1"]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("versions = [", "does not parse as TOML"),
        ("versions = []", "non-empty list"),
        ("versions = [1, 2]", "non-empty list"),
        ('versions = ["0.4.38", "0.4.38"]', "twice"),
    ],
)
def test_bad_matrix_text_is_one_line(text, fragment):
    with pytest.raises(ConformanceError) as caught:
        parse_matrix(text, "bad", "bad.toml")
    assert fragment in str(caught.value) and "bad.toml" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unknown_matrix_names_the_known_ones():
    with pytest.raises(ConformanceError, match="known matrices: all, default, latest, quick"):
        load_matrix("nightly")


def test_all_matrix_is_every_final_release_since_0_4_38_read_from_the_index():
    from conformance.envs.matrix import resolve_versions

    released = ["0.4.37", "0.4.38", "0.5.0", "0.5.2", "0.9.0.1", "0.12.0.1", "0.13.0rc1", "0.13.0.dev20261201"]
    matrix = load_matrix("all")
    assert matrix.since == "0.4.38" and matrix.from_index
    assert resolve_versions(matrix, released) == ("0.4.38", "0.5.0", "0.5.2", "0.9.0.1", "0.12.0.1")
    assert resolve_versions(matrix, released + ["0.12.1"])[-1] == "0.12.1"  # a new release joins without an edit


@pytest.mark.parametrize(
    "text", ['since = "soon"', 'since = "0.4.38"\nnewest = 2', 'since = "0.4.38"\nversions = ["0.5.0"]']
)
def test_bad_since_is_one_line(text):
    with pytest.raises(ConformanceError, match="`since` must be a JAX version"):
        parse_matrix(text, "bad", "bad.toml")


def test_a_version_in_any_spelling_packaging_reads_is_one_version_in_its_one_spelling(tmp_path):
    """`v0.4.38`, `0.5.0-rc1`, `0.4.38+corp_3` are versions (issue 60: a regex of the suite's own refused them, and
    the refused word was then read as a matrix name or a path); each is used as PEP 440 spells it."""
    from conformance.envs.matrix import expand_words

    def no_matrix(word, index):
        raise AssertionError(f"{word!r} was read as a matrix name")

    words = ["v0.4.38", "0.5.0-rc1", "0.4.38+corp_3", "0.4.38"]
    assert expand_words(words, None, resolve=no_matrix) == ["0.4.38", "0.5.0rc1", "0.4.38+corp.3"]
    matrix = parse_matrix('versions = ["v0.4.38", "0.5.0-rc1"]\n', "m", "m.toml")
    assert matrix.versions == ("0.4.38", "0.5.0rc1")
    with pytest.raises(ConformanceError, match="lists a JAX version twice"):
        parse_matrix('versions = ["v0.4.38", "0.4.38"]\n', "m", "m.toml")


def test_diff_takes_a_v_spelled_version_for_the_version_not_a_path(tmp_path):
    from conformance.decide.sides import stored_build

    assert stored_build(tmp_path, Path("v0.4.38"), lambda: "linux-x86_64") == Path("0.4.38")
    assert stored_build(tmp_path, Path("0.5.0-rc1"), lambda: "linux-x86_64") == Path("0.5.0rc1")


def test_chosen_versions_given_releases_builds_only_and_the_matrix():
    """The one rule `run`, `api census`, `chapter` and `perf` use for the releases they run on: `--jax` each once in
    order, never asking the index; none beside builds alone; the named matrix, else the default one."""

    class NoIndex:
        @property
        def index(self):
            raise AssertionError("the index was asked")

    from conformance.envs.matrix import chosen_versions, load_matrix

    assert chosen_versions(["0.6.2", "0.5.3", "0.6.2"], None, NoIndex()) == ["0.6.2", "0.5.3"]
    assert chosen_versions(["0.6.2"], "quick", NoIndex(), others=True) == ["0.6.2"]
    assert chosen_versions([], None, NoIndex(), others=True) == []
    offline = type("Offline", (), {"index": None})()  # a matrix of fixed versions needs no index's answer
    assert chosen_versions(None, "quick", offline, others=True) == list(load_matrix("quick").versions)
    assert chosen_versions(None, None, offline) == list(load_matrix("default").versions)
