"""`core.versions`: release numbers read from version strings, trailing zeros dropped, and the direction from the
documented release."""

from __future__ import annotations

import pytest

from conformance.core.versions import NEWER, OLDER, SAME, UNKNOWN, direction, release_tuple


@pytest.mark.parametrize(
    "text, numbers",
    [
        ("0.12.0.1", (0, 12, 0, 1)),
        ("0.12.0", (0, 12)),
        ("0.12.0.0", (0, 12)),
        ("1.0", (1,)),
        ("1.0.0", (1,)),
        ("0", (0,)),
        ("0.0", (0,)),
        ("10", (10,)),
        (" v0.4.38", (0, 4, 38)),
        ("0.13.0rc1", (0, 13)),
        ("0.12.0.1+corp.3", (0, 12, 0, 1)),
        ("0.5.0.dev20261201", (0, 5)),
    ],
)
def test_release_numbers(text, numbers):
    assert release_tuple(text) == numbers


@pytest.mark.parametrize("text", ["", None, "abc", "V1.0", "x0.4.38"])
def test_not_a_version_says_which(text):
    with pytest.raises(ValueError) as caught:
        release_tuple(text)
    assert str(caught.value) == f"not a version: {text!r}"


def test_direction_ignores_trailing_zeros_and_labels():
    assert direction("0.12.0.1.0") == SAME and direction("0.12.0.1+corp.3") == SAME
    assert direction("0.12", "0.12.0") == SAME and direction("0.11.9", "0.12") == OLDER
    assert direction("0.12.0.2") == NEWER and direction("garbage") == UNKNOWN
    assert direction("0.12", "garbage") == UNKNOWN
