"""The report's Performance section, from the workload samples stored in result files."""

from __future__ import annotations

from conformance.perf.store import store_perf
from conformance.report.markdown_sections import perf_summary
from conformance.report.perfview import perf_sections, perf_view, sparkline
from conformance.report.render import render_results

PLATFORM = "linux-x86_64"


def samples(run_s, temp):
    return {"key": "k", "claim": "A fake step.",
            "samples": [{"metrics": {"run_s": run_s * j, "compile_s": 0.5, "temp_bytes": temp, "compiles": 1}}
                        for j in (1.0, 1.01, 0.99, 1.02, 0.98)]}


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
    render_results(tmp_path, out, markdown=markdown, releases=[])
    section = markdown.read_text(encoding="utf-8").split("## Performance\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| 0")]
    assert rows == ["| 0.9.2 | step: temp_bytes ×1.5, run_s ×2 | none | none |",
                    "| 0.10.0 | step: temp_bytes ×1.0001 | step: run_s ×0.5 | none |"]
    assert section.startswith("\n1 workload on 4 releases, in interleaved rounds. What moved against the release ")
    assert "1 more move past ×1.25 that the samples could not decide (`unknown`) is in the interactive" in section
    assert "temp_bytes changed ×1.0001" in out.read_text(encoding="utf-8")  # never `×1` for a move

    assert perf_summary(None, str, "") == []  # no samples: no section
