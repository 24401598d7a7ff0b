"""The shipped matrices and the matrix reader's errors."""

from __future__ import annotations

import pytest

from conformance.errors import ConformanceError
from conformance.envs.matrix import load_matrix, parse_matrix

DEFAULT = ["0.4.38", "0.5.3", "0.6.2", "0.7.2", "0.8.3", "0.9.2", "0.10.2", "0.11.2", "0.12.0.1"]


def test_default_matrix_is_the_latest_patch_of_every_minor_release():
    assert list(load_matrix("default").versions) == DEFAULT


def test_quick_matrix_is_oldest_middle_newest():
    assert list(load_matrix("quick").versions) == ["0.4.38", "0.8.3", "0.12.0.1"]


@pytest.mark.parametrize("text, fragment", [
    ("versions = [", "does not parse as TOML"),
    ("versions = []", "non-empty list"),
    ("versions = [1, 2]", "non-empty list"),
    ('versions = ["0.4.38", "0.4.38"]', "twice"),
])
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


@pytest.mark.parametrize("text", ['since = "soon"', 'since = "0.4.38"\nnewest = 2', 'since = "0.4.38"\nversions = ["0.5.0"]'])
def test_bad_since_is_one_line(text):
    with pytest.raises(ConformanceError, match="`since` must be a JAX version"):
        parse_matrix(text, "bad", "bad.toml")
