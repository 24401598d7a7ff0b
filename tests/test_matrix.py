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
    with pytest.raises(ConformanceError, match="known matrices: default, latest, quick"):
        load_matrix("nightly")
