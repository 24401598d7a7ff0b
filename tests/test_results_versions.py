"""`results.versions`: PEP 440 order of the versions result files name, a build's public release, exact releases and
normalized names."""

from __future__ import annotations

from packaging.version import Version

from conformance.results.versions import is_exactly, normalized_or_same, release_of, version_order


def test_versions_sort_in_pep_440_order_and_unparsable_ones_last_by_text():
    given = [
        "zeta",
        "0.12.0.2",
        "0.13.0",
        "0.12.0.1+corp.3",
        "0.13.0rc1",
        "0.12.0.1",
        "0.13.0.dev20261201",
        "alpha",
        "0.4.38",
    ]
    assert sorted(given, key=version_order) == [
        "0.4.38",
        "0.12.0.1",
        "0.12.0.1+corp.3",
        "0.12.0.2",
        "0.13.0.dev20261201",
        "0.13.0rc1",
        "0.13.0",
        "alpha",
        "zeta",
    ]
    assert version_order("0.4.38") == (0, Version("0.4.38"), "0.4.38")
    assert version_order("nope") == (1, Version("0"), "nope") and version_order(None) == (1, Version("0"), "None")
    # the text decides between spellings of one version, so the order never depends on the order given
    assert sorted(["1.0.0", "1.0", "1"], key=version_order) == ["1", "1.0", "1.0.0"]


def test_a_build_belongs_to_its_public_release():
    assert release_of("0.12.0.1+corp.3") == "0.12.0.1" and release_of("0.13.0rc1") == "0.13.0rc1"
    assert release_of("not a version") == "not a version" and release_of(None) == "None"


def test_exactly_a_release_is_not_a_build_or_pre_release_of_it():
    assert is_exactly("0.12.0.1", "0.12.0.1") and is_exactly("0.12.0.1.0", "0.12.0.1")
    assert not is_exactly("0.12.0.1+corp.3", "0.12.0.1") and not is_exactly("0.13.0rc1", "0.13.0")
    assert is_exactly("main", "main") and not is_exactly("main", "0.12.0.1") and not is_exactly(None, "x")
    assert is_exactly(None, None)


def test_names_are_normalized_as_result_files_spell_them():
    assert normalized_or_same("0.12.0.1+corp_3") == "0.12.0.1+corp.3" and normalized_or_same("v1.0") == "1.0"
    assert normalized_or_same("not a version") == "not a version"
