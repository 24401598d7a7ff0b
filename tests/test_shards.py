"""The shard split: every cell in exactly one shard, the same split whatever the order or machine, balanced by time."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from conformance import cli
from conformance.engine.matrix import PYTEST_PLUGIN
from conformance.engine.shards import Shard, parse_shard, select_shard, split
from conformance.errors import ConformanceError
from conformance.results.durations import durations_from, recorded_durations
from conformance.results.load import load_result_file

GOLDEN = Path(__file__).parent / "golden"
CELLS = [f"mod{i % 7}.case{i}[{p}]" for i in range(40) for p in ("a", "b")]


@pytest.mark.parametrize("count", [1, 2, 3, 5, 80, 100])
def test_every_cell_is_in_exactly_one_shard(count):
    durations = {c: (i * 37 % 11) + 0.5 for i, c in enumerate(CELLS[::3])}
    shards = split(CELLS, count, durations)
    assert len(shards) == count
    flat = [c for shard in shards for c in shard]
    assert sorted(flat) == sorted(CELLS) and len(flat) == len(set(flat))


def test_the_split_does_not_depend_on_the_order_given():
    durations = {c: (i * 13 % 7) + 0.1 for i, c in enumerate(CELLS)}
    shuffled = CELLS[:]
    random.Random(4).shuffle(shuffled)
    assert [set(s) for s in split(CELLS, 4, durations)] == [set(s) for s in split(shuffled, 4, durations)]
    assert [set(s) for s in split(CELLS, 4)] == [set(s) for s in split(shuffled, 4)]


def test_longest_first_balances_measured_durations():
    durations = {"a[]": 10.0, "b[]": 6.0, "c[]": 5.0, "d[]": 4.0, "e[]": 3.0, "f[]": 2.0}
    shards = split(list(durations), 2, durations)
    # longest first onto the least loaded shard, ties to the lowest: 10|6, 10|11, 14|11, 14|14, 16|14
    assert shards == [["a[]", "d[]", "f[]"], ["b[]", "c[]", "e[]"]]


def test_the_greedy_split_stays_within_the_longest_cell_of_the_best_balance():
    rng = random.Random(7)
    durations = {c: round(rng.uniform(0.05, 8.0), 3) for c in CELLS}
    for count in (2, 3, 4):
        loads = [sum(durations[c] for c in s) for s in split(CELLS, count, durations)]
        assert max(loads) - min(loads) <= max(durations.values())


def test_without_durations_shards_hold_nearly_equal_counts_in_a_stable_hash_order():
    shards = split(CELLS, 3)
    assert max(map(len, shards)) - min(map(len, shards)) <= 1
    assert split(CELLS, 3) == shards
    assert split(CELLS + ["zzz.new[]"], 3)[0][:5] != [] and sum(map(len, split(CELLS + ["zzz.new[]"], 3))) == 81


def test_unmeasured_cells_count_at_the_median_of_the_measured_ones():
    durations = {"a[]": 9.0, "b[]": 1.0, "c[]": 1.0}
    shards = split(["a[]", "b[]", "c[]", "new1[]", "new2[]"], 2, durations)
    # at the median (1 s) the four short cells all fit beside the 9 s one; at the mean (3.7 s) they would not
    assert shards == [["a[]"], ["b[]", "c[]", "new1[]", "new2[]"]]


def test_without_any_measurement_each_cell_counts_one_second_in_hash_order():
    import hashlib

    ids = [f"m.c{i}[]" for i in range(5)]
    by_hash = sorted(ids, key=lambda c: hashlib.sha256(c.encode()).hexdigest())
    shards = split(ids, 2)
    # alternating shards in hash order: equal loads, ties to the lowest shard
    assert [set(s) for s in shards] == [set(by_hash[0::2]), set(by_hash[1::2])]
    assert all(s == [c for c in ids if c in s] for s in shards)  # each in the order given
    assert split(ids, 2, {"m.c0[]": -1.0}) == shards  # a negative duration is no measurement


def test_measured_ties_go_by_cell_id_and_to_the_lowest_shard():
    # a, b, c in id order: a to shard 1, b to shard 2, c to the tie's lowest, shard 1; each shard in the order given
    assert split(["b[]", "a[]", "c[]"], 2, {"a[]": 2.0, "b[]": 2.0, "c[]": 2.0}) == [["a[]", "c[]"], ["b[]"]]


def test_a_split_needs_a_shard_and_a_repeated_id_counts_once():
    with pytest.raises(ValueError, match="at least one shard"):
        split(CELLS, 0)
    assert split(["a[]", "a[]", "b[]"], 1) == [["a[]", "b[]"]]


def test_more_shards_than_cells_is_one_line():
    from conformance.engine.shards import check_shard_count

    check_shard_count(Shard(3, 3), 3)
    check_shard_count(Shard(1, 1), 0)
    with pytest.raises(ConformanceError) as caught:
        check_shard_count(Shard(1, 4), 3)
    assert str(caught.value) == "--shard 1/4: 4 shards for 3 selected cell(s); use at most 3 shards"


@pytest.mark.parametrize(
    "text, why",
    [
        ("", "write it as K/N, e.g. 1/4"),
        ("1", "write it as K/N, e.g. 1/4"),
        ("a/b", "write it as K/N, e.g. 1/4"),
        ("-1/2", "write it as K/N, e.g. 1/4"),
        (None, "write it as K/N, e.g. 1/4"),
        ("0/2", "K must be between 1 and N, and N at least 1"),
        ("3/2", "K must be between 1 and N, and N at least 1"),
        ("1/0", "K must be between 1 and N, and N at least 1"),
        ("0/0", "K must be between 1 and N, and N at least 1"),
        ("1/1234567", "N is larger than any number of cells; use fewer shards"),
    ],
)
def test_bad_shard_is_one_line(text, why):
    with pytest.raises(ConformanceError) as caught:
        parse_shard(text)
    assert str(caught.value) == f"--shard {text!r}: {why}"


def test_the_largest_shard_numbers_are_read():
    assert parse_shard("999999/999999") == Shard(999999, 999999) and parse_shard("1/1") == Shard(1, 1)


def test_shard_names():
    shard = parse_shard(" 2 / 5 ")
    assert shard == Shard(2, 5) and shard.label == "2/5" and shard.file_suffix == "-shard2of5"
    assert select_shard(CELLS, Shard(1, 1)) == set(CELLS)


def test_durations_are_read_from_result_files_and_missing_sources_give_none(tmp_path):
    from tests.synthetic_results import cell, files

    timed = [
        files(
            "0.8.3",
            "linux-x86_64",
            [cell("a.x", duration_s=1.0), cell("a.y", duration_s=0.0), cell("a.z", "p", duration_s=2.0)],
        ),
        files("0.8.3", "darwin-arm64", [cell("a.x", duration_s=2.0), cell("a.z", "p", duration_s=-1.0)]),
    ]
    assert durations_from(timed) == {"a.x": 1.5, "a.z[p]": 2.0}  # the mean; cells never timed left out
    assert durations_from([files("1", "l", [cell("a.x", duration_s=1.0 / 3)])]) == {"a.x": 0.333}
    golden = load_result_file(GOLDEN / "0.12.0.1-linux-x86_64.json")
    found = durations_from([golden])
    assert found and all(v > 0 for v in found.values())
    assert set(found) <= {c.cell_id for c in golden.cells}
    assert recorded_durations(GOLDEN) and recorded_durations(tmp_path / "missing") == {}
    assert recorded_durations(tmp_path) == {}  # a folder without result files


def test_shard_option_errors_are_one_line(capsys):
    assert cli.main(["run", "--shard", "3/2", "--jax", "0.12.0.1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "between 1 and N" in err


def test_a_shard_that_holds_no_cell_still_prints_its_json_document(tmp_path, capsys):
    """`run --shard K/N --json -` on a shard with no cell exited 0 with an empty standard output (which `json.loads`
    cannot read); the document now comes, with zero cells, and `--json PATH` is written too."""
    from tests import synthetic_results as synth

    # a duration recorded under a millisecond is measured as 0.0, and so is every unmeasured cell (the median):
    # every tie goes to the lowest shard, and shard 2 of 2 holds none of the 4 cells
    timed = synth.write(
        tmp_path / "timed",
        "0.12.0.1",
        "linux-x86_64",
        [synth.cell("compilation.cache_size_shared", "count", duration_s=0.0001)],
    )
    argv = ["run", "--jax", "0.12.0.1", "-k", "cache_size_shared", "--shard", "2/2", "--shard-durations", str(timed)]
    argv += ["--results", str(tmp_path / "results")]
    assert cli.main([*argv, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert (document["format"], document["selected"], document["chosen"]) == ("jax-conformance-run", 4, 0)
    assert (document["shard"], document["releases"], document["failed"], document["passed"]) == ("2/2", [], [], True)
    assert "shard 2/2 holds none of the 4 selected cells; nothing to run" in err
    assert cli.main([*argv, "--json", str(tmp_path / "run.json")]) == 0
    assert json.loads((tmp_path / "run.json").read_text())["chosen"] == 0
    assert f"json: {tmp_path / 'run.json'}" in capsys.readouterr().out
    assert cli.main(argv) == 0 and "json:" not in capsys.readouterr().out


def _shard_copy(source: Path, target: Path, shard: str, finished: str, status: str | None = None) -> None:
    data = json.loads(source.read_text())
    data["jax_conformance"].update(shard=shard, finished_at=finished)
    if status:
        data["tests"][0]["metadata"]["status"] = status
    target.write_text(json.dumps(data))


def test_report_merges_shards_and_names_every_conflicting_cell(tmp_path, capsys):
    source = GOLDEN / "0.12.0.1-linux-x86_64.json"
    _shard_copy(source, tmp_path / "0.12.0.1-linux-x86_64-shard1of2.json", "1/2", "2026-11-29T10:00:00+00:00")
    _shard_copy(
        source, tmp_path / "0.12.0.1-linux-x86_64-shard2of2.json", "2/2", "2026-11-29T11:00:00+00:00", status="crash"
    )
    shutil.copy(GOLDEN / "0.4.38-linux-x86_64.json", tmp_path)
    assert (
        cli.main(
            [
                "report",
                str(tmp_path),
                "-o",
                str(tmp_path / "out" / "index.html"),
                "--markdown",
                str(tmp_path / "out" / "summary.md"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    first = json.loads(source.read_text())["tests"][0]["metadata"]
    cell = f"{first['case']}[{first['param']}]" if first["param"] else first["case"]
    assert f"conflict: jax 0.12.0.1 linux-x86_64 {cell}:" in err
    assert "crash in" in err and err.count("conflict:") == 1
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert summary.count("| 0.12.0.1 (documented) |") == 1  # two shards, one run


def test_the_plugin_runs_one_shard_of_the_k_selection_and_names_it_in_the_header(pytester, monkeypatch):
    from conformance.engine.runner import SOURCE_ROOT

    monkeypatch.setenv("PYTHONPATH", SOURCE_ROOT)
    selection = "conforming or differing or echo or unsupported"
    seen, headers = [], []
    for shard in ("1/2", "2/2"):
        report = pytester.path / f"report-{shard[0]}.json"
        result = pytester.runpytest_subprocess(
            "--pyargs",
            "tests.fixture_cases",
            "--conformance-cases",
            "tests.fixture_cases",
            *PYTEST_PLUGIN,
            "-p",
            "no:cacheprovider",
            "-k",
            selection,
            "--jax-shard",
            shard,
            "--jax-shard-durations",
            str(pytester.path / "none"),
            "--json-report",
            f"--json-report-file={report}",
        )
        assert result.ret in (0, 1)
        data = json.loads(report.read_text())
        seen.append({t["nodeid"].split("::")[1] for t in data["tests"]})
        headers.append(data["jax_conformance"]["shard"])
    assert headers == ["1/2", "2/2"]
    assert seen[0] and seen[1] and not seen[0] & seen[1]
    assert seen[0] | seen[1] == {"conforming", "differing", "echo[a]", "echo[b]", "unsupported"}
    bad = pytester.runpytest_subprocess(
        "--pyargs",
        "tests.fixture_cases",
        "--conformance-cases",
        "tests.fixture_cases",
        *PYTEST_PLUGIN,
        "-p",
        "no:cacheprovider",
        "--jax-shard",
        "0/2",
    )
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--jax-shard" in bad.stderr.str()


def test_the_plugin_does_not_split_again_cells_that_already_are_the_shard(pytester, monkeypatch):
    """issue 19 item 3: with --jax-cells-are-shard the plugin runs exactly --jax-cells and labels the shard."""
    from conformance.engine.runner import SOURCE_ROOT

    monkeypatch.setenv("PYTHONPATH", SOURCE_ROOT)
    cells = pytester.path / "cells.json"
    cells.write_text(json.dumps(["machinery.conforming", "machinery.differing", "machinery.unsupported"]))
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        "--pyargs",
        "tests.fixture_cases",
        "--conformance-cases",
        "tests.fixture_cases",
        *PYTEST_PLUGIN,
        "-p",
        "no:cacheprovider",
        "--jax-cells",
        str(cells),
        "--jax-cells-are-shard",
        "--jax-shard",
        "2/3",
        "--jax-shard-durations",
        str(pytester.path / "none"),
        "--json-report",
        f"--json-report-file={report}",
    )
    assert result.ret in (0, 1)
    data = json.loads(report.read_text())
    assert {t["nodeid"].split("::")[1] for t in data["tests"]} == {"conforming", "differing", "unsupported"}
    assert data["jax_conformance"]["shard"] == "2/3"


def test_totals_equal_in_decimal_are_a_tie_whatever_float_rounding_makes_of_them():
    # 2.99 + 0.757 and 2.177 + 1.57 are both 3.747, yet differ as floats: the tie goes to the lowest shard
    durations = {"c0[]": 2.99, "c1[]": 0.757, "c2[]": 2.177, "c3[]": 1.57, "c4[]": 0.5}
    assert split(list(durations), 2, durations) == [["c0[]", "c1[]", "c4[]"], ["c2[]", "c3[]"]]


def test_longest_first_is_by_duration_not_by_id():
    durations = {"a[]": 1.0, "b[]": 2.0, "c[]": 3.0}
    # c to shard 1, b to shard 2, a to the lighter shard 2; by id a, b, c would give [[a, c], [b]]
    assert split(list(durations), 2, durations) == [["c[]"], ["a[]", "b[]"]]


def test_the_unmeasured_count_at_a_median_other_than_one_second():
    durations = {"a[]": 9.0, "b[]": 3.0, "c[]": 3.0}
    new = sorted(["n1[]", "n2[]"], key=lambda c: __import__("hashlib").sha256(c.encode()).hexdigest())
    # a | b c, then the first new at 3 s onto shard 2 (6 < 9), the second onto the tie's lowest, shard 1
    shards = split(["a[]", "b[]", "c[]", *new], 2, durations)
    assert shards == [["a[]", new[1]], ["b[]", "c[]", new[0]]]


@pytest.mark.parametrize("short", [0.0, 0.5])
def test_a_short_or_zero_duration_is_a_measurement(short):
    durations = {"a[]": short, "b[]": 4.0}
    # measured: b | a c (c at the median, below b's 4 s); unmeasured, a and c would count 4 s each and split up
    assert split(["a[]", "b[]", "c[]"], 2, durations) == [["b[]"], ["a[]", "c[]"]]


def test_a_split_without_a_shard_says_so_exactly():
    with pytest.raises(ValueError) as caught:
        split(CELLS, 0)
    assert str(caught.value) == "a split needs at least one shard"


def test_one_selected_cell_takes_one_shard_and_none_takes_one_too():
    from conformance.engine.shards import check_shard_count

    check_shard_count(Shard(1, 1), 1)
    for selected in (0, 1):
        with pytest.raises(ConformanceError) as caught:
            check_shard_count(Shard(1, 2), selected)
        assert str(caught.value) == f"--shard 1/2: 2 shards for {selected} selected cell(s); use at most 1 shards"


def test_select_shard_takes_its_own_shard_of_the_timed_split():
    durations = {"a[]": 1.0, "b[]": 2.0, "c[]": 3.0}
    timed = split(list(durations), 3, durations)
    assert [select_shard(durations, Shard(k, 3), durations) for k in (1, 2, 3)] == [set(s) for s in timed]
    two = split(list(durations), 2, durations)
    assert select_shard(durations, Shard(1, 2), durations) == set(two[0]) == {"c[]"}
    assert select_shard(durations, Shard(2, 2), durations) == {"a[]", "b[]"}


def test_totals_are_compared_to_the_microsecond():
    # 0.4 | 0.3, then 0.2 onto the lighter shard: not a tie, whatever the rounding
    assert split(["a[]", "b[]", "c[]"], 2, {"a[]": 0.4, "b[]": 0.3, "c[]": 0.2}) == [["a[]"], ["b[]", "c[]"]]
    # 1.0000004 and 1.0 are one total to the microsecond: a tie, so c goes to the lowest shard
    assert split(["a[]", "b[]", "c[]"], 2, {"a[]": 1.0000004, "b[]": 1.0, "c[]": 0.5}) == [["a[]", "c[]"], ["b[]"]]
