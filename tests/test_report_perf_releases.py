"""`report A B` with one release in both folders: one Performance column per release, never two sessions of one
release judged one against the other (issue 57). The rule lives in `report.perfview.perf_view`."""

from __future__ import annotations

from conformance.perf.store import store_perf
from conformance.report.perfview import perf_sections, perf_view
from conformance.report.render import render_results

PLATFORM = "linux-x86_64"


def samples(run_s: float) -> dict:
    return {
        "key": "k",
        "claim": "A fake step.",
        "samples": [
            {"metrics": {"run_s": run_s * j, "compile_s": 0.5, "temp_bytes": 100, "compiles": 1}}
            for j in (1.0, 1.01, 0.99, 1.02, 0.98)
        ],
    }


def test_one_release_in_two_folders_is_one_column_with_the_later_folders_samples(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    store_perf(a, "0.11.2", PLATFORM, {"performance.step": samples(0.001)})
    store_perf(a, "0.12.0.1", PLATFORM, {"performance.step": samples(0.001), "performance.other": samples(0.003)})
    store_perf(b, "0.12.0.1", PLATFORM, {"performance.step": samples(0.002)})  # another session of 0.12.0.1
    sections = perf_sections([a, b])
    assert [s[0] for s in sections] == ["0.11.2", "0.12.0.1", "0.12.0.1"]  # as gathered: the fault's two columns
    view = perf_view(sections)
    assert view.releases == ("0.11.2", "0.12.0.1")
    rows = {row.id: row for row in view.rows}
    assert set(rows) == {"performance.step", "performance.other"}  # a's other workload is kept
    assert rows["performance.step"].cells[-1].run_s == 0.002  # b's session: the later one given
    out = tmp_path / "report.html"
    render_results([a, b], out, releases=[])
    section = out.read_text(encoding="utf-8").split('id="performance"', 1)[1]
    assert section.count(">0.12.0.1<") == 1


def test_releases_apart_stay_apart_and_another_platform_is_not_merged_in():
    one, other = {"w": samples(0.001)}, {"w": samples(0.004)}
    sections = [("0.11.2", PLATFORM, one), ("0.12.0.1", PLATFORM, one), ("0.12.0.1", "darwin-arm64", other)]
    view = perf_view(sections)
    assert view.releases == ("0.11.2", "0.12.0.1")
    assert view.rows[0].cells[-1].run_s == 0.001  # the first platform's samples, never darwin's
