"""The report's Performance section, from the workload samples stored in result files."""

from __future__ import annotations

import pytest

from conformance import cli
from conformance.perf.store import store_perf
from conformance.report.markdown_sections import perf_summary
from conformance.report.perfview import perf_sections, perf_view, sparkline
from conformance.report.render import render_results

PLATFORM = "linux-x86_64"


def samples(run_s, temp):
    return {
        "key": "k",
        "claim": "A fake step.",
        "samples": [
            {"metrics": {"run_s": run_s * j, "compile_s": 0.5, "temp_bytes": temp, "compiles": 1}}
            for j in (1.0, 1.01, 0.99, 1.02, 0.98)
        ],
    }


def test_the_section_shows_medians_verdicts_and_a_sparkline(tmp_path):
    store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.step": samples(0.001, 100)})
    store_perf(tmp_path, "0.9.2", PLATFORM, {"performance.step": samples(0.002, 150)})
    view = perf_view(perf_sections(tmp_path))
    assert view.releases == ("0.8.3", "0.9.2")
    (row,) = view.rows
    first, second = row.cells
    assert first.flagged == () and first.run_s == 0.001 and second.temp_bytes == 150
    assert "run_s regressed ×2" in second.flagged and "temp_bytes changed ×1.5" in second.flagged
    assert row.sparkline.startswith("<svg")
    out = tmp_path / "report.html"
    render_results(tmp_path, out, releases=[])
    page = out.read_text(encoding="utf-8")
    assert 'id="performance"' in page and "run_s regressed ×2" in page and "A fake step." in page


def test_no_samples_no_section_and_a_single_value_draws_no_line(tmp_path):
    assert perf_view(perf_sections(tmp_path)) is None
    assert sparkline([1.0]) == "" and sparkline([None, 2.0, None]) == ""


def test_times_read_in_ms_under_a_second_and_in_s_from_one_never_as_an_exponent(tmp_path):
    """27 releases of compile_heavy read `compile 2.04e+03 ms` in the Performance section."""
    for version, compile_s in (("0.8.3", 2.04), ("0.9.2", 0.9997), ("0.10.0", 0.0283)):
        entry = samples(0.001, 100)
        for sample in entry["samples"]:
            sample["metrics"]["compile_s"] = compile_s
        store_perf(tmp_path, version, PLATFORM, {"performance.step": entry})
    out = tmp_path / "report.html"
    render_results(tmp_path, out, releases=[])
    section = out.read_text(encoding="utf-8").split('id="performance"', 1)[1]
    assert "compile 2.04 s" in section and "compile 1 s" in section and "compile 28.3 ms" in section
    assert "e+0" not in section and "run 1 ms" in section


def test_the_markdown_page_sorts_each_decided_move_by_direction_and_counts_the_undecided(tmp_path):
    """A Markdown reader sees what moved per release in one table, without opening the page."""
    store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.step": samples(0.001, 100_000)})
    store_perf(tmp_path, "0.9.2", PLATFORM, {"performance.step": samples(0.002, 150_000)})
    store_perf(tmp_path, "0.9.3", PLATFORM, {"performance.step": samples(0.002, 150_000)})
    wide = samples(0.001, 150_010)  # faster again; 10 bytes more; a compile time too spread to decide
    for sample, compile_s in zip(wide["samples"], (1.0, 0.3, 3.0, 1.1, 0.9)):
        sample["metrics"]["compile_s"] = compile_s
    store_perf(tmp_path, "0.10.0", PLATFORM, {"performance.step": wide})
    out, markdown = tmp_path / "report.html", tmp_path / "report.md"
    render_results(tmp_path, out, outputs={"markdown": markdown}, releases=[])
    section = markdown.read_text(encoding="utf-8").split("## Performance\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| 0")]
    assert rows == [
        "| 0.9.2 | step: temp_bytes ×1.5, run_s ×2 | none | none |",
        "| 0.10.0 | step: temp_bytes ×1.0001 | step: run_s ×0.5 | none |",
    ]
    assert section.startswith("\n1 workload on 4 releases, in interleaved rounds. What moved against the release ")
    assert "1 more move past ×1.25 that the samples could not decide (`unknown`) is in the interactive" in section
    assert "temp_bytes changed ×1.0001" in out.read_text(encoding="utf-8")  # never `×1` for a move

    assert perf_summary(None, str, "") == []  # no samples: no section


GOOD = {"metrics": {"run_s": 0.001, "compile_s": 0.5, "temp_bytes": 100, "compiles": 1}}
MALFORMED = {  # one workload entry of a result file's perf object each (issue 57: 5 of 13 ended in a traceback)
    "m.an_int": 3,
    "m.a_list": [GOOD],
    "m.samples_a_dict": {"samples": {"1": GOOD}},
    "m.sample_an_int": {"samples": [1, GOOD]},
    "m.metrics_a_list": {"samples": [{"metrics": [0.1]}]},
    "m.no_metrics": {"samples": [{"info": {}}]},
    "m.run_s_inf": {"samples": [{"metrics": {"run_s": float("inf")}}]},
    "m.run_s_nan": {"samples": [{"metrics": {"run_s": float("nan")}}]},
    "m.run_s_negative": {"samples": [GOOD, {"metrics": {"run_s": -1.0}}]},
    "m.temp_bytes_a_string": {"samples": [{"metrics": {"temp_bytes": "100"}}]},
    "m.compiles_a_bool": {"samples": [{"metrics": {"compiles": True}}]},
    "m.info_negative": {"samples": [{**GOOD, "info": {"flops": -5}}]},
    "m.error_a_dict": {"error": {"why": 1}, "samples": []},
    "m.claim_a_number": {"claim": 7, "samples": [GOOD]},
}


def _file_with(tmp_path, perf):
    """A result file of 0.8.3 stored by `store_perf`, its perf object then replaced by `perf` (NaN and inf
    written as JSON's non-standard literals, as a hand edit or another writer might)."""
    import json

    path = store_perf(tmp_path, "0.8.3", PLATFORM, {"performance.step": samples(0.001, 100)})
    data = json.loads(path.read_text(encoding="utf-8"))
    data["perf"] = perf
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_each_malformed_perf_entry_is_skipped_in_one_line_naming_workload_metric_and_file(tmp_path):
    path = _file_with(tmp_path, {"format": 1, "workloads": {**MALFORMED, "m.good": {"samples": [GOOD]}}})
    problems: list[str] = []
    (found,) = perf_sections(tmp_path, problems)
    assert list(found[2]) == ["m.good"]
    assert len(problems) == len(MALFORMED)
    for workload_id, line in zip(MALFORMED, problems):
        assert line.startswith(f"perf workload {workload_id} in {path}: ") and "\n" not in line
    assert "run_s is inf, not a finite number >= 0" in problems[6] and "sample 2: run_s is -1.0" in problems[8]
    out = tmp_path / "report.html"
    done = render_results(tmp_path, out, releases=[])
    assert done.problems == problems and "m.good" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "perf", [[], 5, {"format": 1, "workloads": []}, {"format": 2, "workloads": {}}, {"workloads": "m.step"}]
)
def test_a_malformed_perf_object_is_skipped_whole_in_one_line_and_report_exits_1(tmp_path, perf, capsys):
    path = _file_with(tmp_path, perf)
    status = cli.main(["report", str(tmp_path), "-o", str(tmp_path / "report.html")])
    err = capsys.readouterr().err
    assert (
        status == 1
        and err.strip()
        == f'jax-conformance: skipped unreadable perf object of {path}: not {{"format": 1, "workloads": {{...}}}}'
    )
    assert "Traceback" not in err


def test_report_names_a_nan_time_and_draws_the_rest(tmp_path, capsys):
    _file_with(tmp_path, {"format": 1, "workloads": {"m.nan": MALFORMED["m.run_s_nan"], "m.good": {"samples": [GOOD]}}})
    status = cli.main(["report", str(tmp_path), "-o", str(tmp_path / "report.html")])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 1 and len(err) == 1
    assert err[0].startswith("jax-conformance: skipped unreadable perf workload m.nan in ")
    assert err[0].endswith("sample 1: run_s is nan, not a finite number >= 0")


def test_a_release_in_two_result_folders_is_one_column_never_judged_against_itself(tmp_path):
    """Before: `report A B` with 0.8.3 in both made two Performance columns, the second judged against the first."""
    first, second = tmp_path / "a", tmp_path / "b"
    store_perf(first, "0.8.3", PLATFORM, {"performance.step": samples(0.001, 100)})
    store_perf(first, "0.9.2", PLATFORM, {"performance.step": samples(0.001, 100)})
    store_perf(
        second, "0.8.3", PLATFORM, {"performance.step": samples(0.002, 150), "performance.other": samples(0.001, 100)}
    )
    view = perf_view(perf_sections([first, second]))
    assert view.releases == ("0.8.3", "0.9.2")
    step = next(row for row in view.rows if row.id == "performance.step")
    assert step.cells[0].run_s == 0.002 and step.cells[0].flagged == ()  # the later folder's entry
    assert "run_s improved ×0.5" in step.cells[1].flagged
    assert [c.samples for c in next(r for r in view.rows if r.id == "performance.other").cells] == [5, 0]
