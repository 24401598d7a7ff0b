"""`results.load`: which files are result files, reading one with a one-line error naming the file and what is
wrong, every cell bounded as when it was written, and reading a set tolerantly."""

from __future__ import annotations

import json

import pytest

from conformance.core.observation import DETAILS_CHARS, MESSAGE_CHARS, OBSERVATION_CHARS, TAIL_CHARS, TRUNCATED
from conformance.results import load
from conformance.results.load import (
    MAX_ATTEMPTS,
    ResultsError,
    bounded_cell,
    is_result_name,
    load_result_file,
    load_results,
    read_results_tolerantly,
    result_files,
)
from conformance.results.schema import CellResult
from tests.synthetic_results import cell, write

PLATFORM = "linux-x86_64"


@pytest.mark.parametrize(
    "name",
    [
        "0.4.38-linux-x86_64.json",
        "0.12.0.1-darwin-arm64.json",
        "0.5.0+cuda12-linux-x86_64-gpu.json",
        "0.8.3-linux-x86_64-shard2of4.json",
        "tox-py311.json",
        "tox-jax-0.4.38.json",
    ],
)
def test_result_names(name):
    assert is_result_name(name) is True


@pytest.mark.parametrize(
    "name",
    [
        "notes.json",
        "v0.4.38-linux-x86_64.json",
        "0.4.38-linux.json",
        "0.4.38-linux-x86_64.json.bak",
        "0.4.38-linux-x86_64-shard2of4-x.json",
        "tox-.json",
        "x0.4.38-linux-x86_64.json",
        "0.4.38-linux-x86_64-a-b.json",
    ],
)
def test_other_names(name):
    assert is_result_name(name) is False


def test_a_folder_stands_for_its_result_files_and_those_of_its_builds(tmp_path):
    folder = tmp_path / "results"
    b = write(folder, "0.8.3", PLATFORM, [cell("a.x")])
    a = write(folder, "0.4.38", PLATFORM, [cell("a.x")])
    build = write(folder / "builds" / "wheel-abc", "0.8.3+abc", PLATFORM, [cell("a.x")])
    (folder / "notes.json").write_text("{}")
    (folder / "builds" / "wheel-abc" / "notes.json").write_text("{}")
    (folder / "0.9.0-linux-x86_64.json").mkdir()  # a folder named like a result is no file
    other = tmp_path / "elsewhere.json"
    assert result_files(folder) == [a, b, build]
    assert result_files(str(other)) == [other]  # a file is taken as given, whatever its name
    assert result_files([folder, other]) == [a, b, build, other]


def test_no_result_files_is_one_line(tmp_path):
    (tmp_path / "notes.json").write_text("{}")
    with pytest.raises(ResultsError) as caught:
        result_files(tmp_path)
    assert str(caught.value) == f"{tmp_path}: folder holds no result files (named <jax>-<platform>.json)"
    with pytest.raises(ResultsError) as caught:
        result_files([])
    assert str(caught.value) == "no result files given"


def test_each_unreadable_file_is_one_line_naming_it(tmp_path):
    missing = tmp_path / "0.1.0-linux-x86_64.json"
    folder = tmp_path / "0.2.0-linux-x86_64.json"
    folder.mkdir()
    binary = tmp_path / "0.3.0-linux-x86_64.json"
    binary.write_bytes(b"\xff\xfe\x00{")
    stray = tmp_path / "0.4.0-linux-x86_64.json"
    stray.write_text("{ stray")
    wrong = tmp_path / "0.5.0-linux-x86_64.json"
    wrong.write_text(json.dumps({"tests": []}))
    expected = {
        missing: f"{missing}: no such file",
        folder: f"{folder}: is a folder, not a result file",
        binary: f"{binary}: is not UTF-8 text, so not a result file",
    }
    for path, line in expected.items():
        with pytest.raises(ResultsError) as caught:
            load_result_file(path)
        assert str(caught.value) == line
    with pytest.raises(ResultsError) as caught:
        load_result_file(stray)
    assert str(caught.value).startswith(f"{stray}: is not JSON (") and "\n" not in str(caught.value)
    with pytest.raises(ResultsError) as caught:
        load_result_file(wrong)
    assert str(caught.value).startswith(f"{wrong}: ") and len(str(caught.value)) > len(f"{wrong}: ")


def test_a_file_larger_than_any_the_suite_writes_is_refused_unread(tmp_path, monkeypatch):
    path = write(tmp_path, "0.8.3", PLATFORM, [cell("a.x")])
    size = path.stat().st_size
    monkeypatch.setattr(load, "MAX_RESULT_BYTES", size)
    assert [c.cell_id for c in load_result_file(path).cells] == ["a.x"]  # exactly the limit is read
    monkeypatch.setattr(load, "MAX_RESULT_BYTES", size - 1)
    with pytest.raises(ResultsError) as caught:
        load_result_file(path)
    assert str(caught.value) == f"{path}: is 0 MB, larger than any result file the suite writes (0 MB at most)"
    monkeypatch.setattr(load, "MAX_RESULT_BYTES", 3 * 2**20)
    path.write_text(path.read_text() + " " * (5 * 2**20))
    with pytest.raises(ResultsError) as caught:
        load_result_file(path)
    assert str(caught.value) == f"{path}: is 5 MB, larger than any result file the suite writes (3 MB at most)"


def test_a_file_that_cannot_be_read_names_why(tmp_path, monkeypatch):
    path = write(tmp_path, "0.8.3", PLATFORM, [cell("a.x")])

    path.chmod(0o000)  # as root the mode does not stop a read, so the read itself is refused too
    from conformance.results import load

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(load, "read_regular_text", denied)
    with pytest.raises(ResultsError) as caught:
        load_result_file(path)
    assert str(caught.value) == f"{path}: cannot be read (Permission denied)"


def test_a_file_nested_too_deeply_is_one_line(tmp_path, monkeypatch):
    path = write(tmp_path, "0.8.3", PLATFORM, [cell("a.x")])

    def too_deep(data, source):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(load, "result_file_from_json", too_deep)
    with pytest.raises(ResultsError) as caught:
        load_result_file(path)
    assert str(caught.value) == f"{path}: is nested too deeply to be a result file"


def test_every_cell_is_bounded_as_when_written(tmp_path):
    huge = "x" * (OBSERVATION_CHARS + 10)
    big = cell(
        "a.x",
        observation={"v": huge},
        expected={"v": huge},
        printed_expected={"v": huge},
        details={"v": "d" * (DETAILS_CHARS + 10)},
        diff=[{"path": "v", "expected": huge}],
        printed_diff=[{"path": "v", "expected": huge}],
        stdout_tail="o" * (TAIL_CHARS + 5) + "END",
        stderr_tail="e" * (TAIL_CHARS + 5) + "END",
        reason="r" * (MESSAGE_CHARS + 5),
        claim="c" * (MESSAGE_CHARS + 5),
        discrepancy="q" * (MESSAGE_CHARS + 5),
        attempts=[{"n": i} for i in range(MAX_ATTEMPTS + 3)],
    )
    small = cell(
        "a.y",
        observation={"v": 1},
        expected={"v": 1},
        details={"d": 1},
        diff=[{"path": "v"}],
        printed_diff=[{"path": "p"}],
        stdout_tail="out",
        stderr_tail="err",
        reason="why",
        claim="c",
        discrepancy="q",
        attempts=[{"n": 1}],
    )
    loaded = {c.cell_id: c for c in load_result_file(write(tmp_path, "0.8.3", PLATFORM, [big, small])).cells}
    cut = loaded["a.x"]
    for value in (cut.observation, cut.expected, cut.printed_expected):
        assert set(value) == {TRUNCATED, "head"} and len(value["head"]) == OBSERVATION_CHARS
    assert len(cut.details["head"]) == DETAILS_CHARS
    assert cut.diff == [{"path": "<diff>", "expected": None, "observed": TRUNCATED, "kind": "changed"}]
    assert cut.printed_diff == [{"path": "<printed diff>", "expected": None, "observed": TRUNCATED, "kind": "changed"}]
    assert len(cut.stdout_tail) == len(cut.stderr_tail) == TAIL_CHARS and cut.stdout_tail.endswith("END")
    assert cut.stderr_tail.endswith("END")
    assert (len(cut.reason), len(cut.claim), len(cut.discrepancy)) == (MESSAGE_CHARS,) * 3
    assert cut.reason[0] == "r" and cut.claim[0] == "c" and cut.discrepancy[0] == "q"
    assert cut.attempts == [{"n": i} for i in range(MAX_ATTEMPTS)]
    kept = loaded["a.y"]
    assert (kept.observation, kept.expected, kept.details, kept.diff, kept.printed_diff) == (
        {"v": 1},
        {"v": 1},
        {"d": 1},
        [{"path": "v"}],
        [{"path": "p"}],
    )
    assert (kept.stdout_tail, kept.stderr_tail, kept.reason, kept.claim, kept.discrepancy, kept.attempts) == (
        "out",
        "err",
        "why",
        "c",
        "q",
        [{"n": 1}],
    )


def test_a_diff_exactly_at_the_limit_is_kept():
    pad = OBSERVATION_CHARS - len(json.dumps([{"p": ""}]))
    exact = [{"p": "x" * pad}]
    assert len(json.dumps(exact)) == OBSERVATION_CHARS
    one = CellResult.from_json(cell("a.x"))
    one.diff, one.printed_diff = exact, exact
    assert bounded_cell(one).diff == exact and one.printed_diff == exact
    over = [{"p": "x" * (pad + 1)}]
    one.diff, one.printed_diff = over, over
    assert bounded_cell(one).diff[0]["path"] == "<diff>" and one.printed_diff[0]["path"] == "<printed diff>"
    odd = CellResult.from_json(cell("a.x"))
    odd.diff = odd.printed_diff = [{"p": {1, 2}}]  # not JSON: measured by its repr, kept
    assert bounded_cell(odd).diff == [{"p": {1, 2}}]


def test_load_results_reads_each_file_and_stops_at_a_bad_one(tmp_path):
    write(tmp_path, "0.8.3", PLATFORM, [cell("a.x")])
    write(tmp_path, "0.4.38", PLATFORM, [cell("a.y")])
    assert [f.header.jax for f in load_results(tmp_path)] == ["0.4.38", "0.8.3"]
    (tmp_path / "0.5.0-linux-x86_64.json").write_text("{ stray")
    with pytest.raises(ResultsError, match="0.5.0-linux-x86_64.json: is not JSON"):
        load_results(tmp_path)


def test_reading_tolerantly_keeps_the_readable_files_and_names_the_others(tmp_path):
    write(tmp_path, "0.8.3", PLATFORM, [cell("a.x")])
    bad = tmp_path / "0.5.0-linux-x86_64.json"
    bad.write_text("{ stray")
    write(tmp_path, "0.9.0", PLATFORM, [cell("a.y")])
    loaded = read_results_tolerantly(tmp_path)
    assert [f.header.jax for f in loaded.files] == ["0.8.3", "0.9.0"]
    assert len(loaded.problems) == 1 and loaded.problems[0].startswith(f"{bad}: is not JSON")


def test_a_folder_or_file_named_twice_is_read_once_and_makes_no_conflict(tmp_path, capsys):
    """A11: `report DIR DIR` read every file twice and printed a false "conflict" for each cell."""
    from conformance import cli
    from conformance.results.load import result_files
    from tests.synthetic_results import cell, write

    folder = tmp_path / "r"
    written = write(folder, "0.8.0", "linux-x86_64", [cell("values.dtype", "", "conforms")])
    assert result_files([folder, folder, written]) == [written]
    assert cli.main(["report", str(folder), str(folder), "-o", str(tmp_path / "index.html")]) == 0
    said = capsys.readouterr()
    assert "conflict" not in (said.out + said.err).lower()


@pytest.mark.parametrize(
    "name, jax, platform, shard",
    [
        ("0.8.0-linux-x86_64-shard1of4.json", "0.8.0", "linux-x86_64", "1of4"),
        ("0.8.0-linux-x86_64-cuda12-shard2of3.json", "0.8.0", "linux-x86_64-cuda12", "2of3"),
        ("0.8.0-linux-x86_64.json", "0.8.0", "linux-x86_64", None),
        ("0.8.0-linux-x86_64-cuda12.json", "0.8.0", "linux-x86_64-cuda12", None),
        ("0.8.0-linux-x86_64-shardx.json", "0.8.0", "linux-x86_64-shardx", None),
    ],
)
def test_a_shard_suffix_is_never_read_as_part_of_the_platform(name, jax, platform, shard):
    """A two-part platform's shard file is a shard (restore refuses it as a merged file), not a third platform part."""
    from conformance.results.load import RESULT_NAME
    from conformance.results.schema import PLATFORM_NAME

    found = RESULT_NAME.fullmatch(name)
    assert (found["jax"], found["platform"], found["shard"]) == (jax, platform, shard)
    assert PLATFORM_NAME.fullmatch(found["platform"])


def test_restore_refuses_a_two_part_platforms_shard_file_as_a_merged_file():
    from conformance.results.restore import entry_problem

    entry = {"name": "0.8.0-linux-x86_64-shard1of4.json", "sha256": "0" * 64, "size": 10}
    assert entry_problem(entry) == "not the name of a merged result file"
    assert entry_problem(dict(entry, name="0.8.0-linux-x86_64.json")) is None
