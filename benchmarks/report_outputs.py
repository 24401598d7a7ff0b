"""Size and build time of the report's outputs for the published report: the Markdown page (plain and full), the
compat JSON and the wptreports (one per run; their total).

    python benchmarks/report_outputs.py [RESULTS ...]

With result files or folders, from them; without, from the data embedded in reports/index.html (the published
`all` run). Prints each output's size in bytes and KiB and the seconds it took to build; the 25 KB budget of the
plain Markdown page is checked in tests/test_report_outputs.py, the numbers belong here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.core.case import load_cases  # noqa: E402
from conformance.report.compat import compat_data  # noqa: E402
from conformance.report.markdown import markdown_summary  # noqa: E402
from conformance.report.model import build_model  # noqa: E402
from conformance.report.outputs import as_json  # noqa: E402
from conformance.report.wptreport import wptreports  # noqa: E402
from conformance.results.load import load_results  # noqa: E402


def main(argv: list[str]) -> int:
    if argv:
        files = load_results([Path(a) for a in argv])
    else:
        from tests.published_report import published_files

        files = published_files()
    model = build_model(files, load_cases())
    print(f"{len(model.columns)} columns x {len(model.param_rows)} cells")
    outputs = {
        "markdown": lambda: markdown_summary(model, generated_at="(now)"),
        "markdown --markdown-full": lambda: markdown_summary(model, full=True, generated_at="(now)"),
        "compat json": lambda: as_json(compat_data(model, "(now)")),
        f"wptreports ({len(model.columns)} files)": lambda: "".join(
            as_json(report, indent=None) for _, report in wptreports(model)
        ),
    }
    for name, build in outputs.items():
        start = time.perf_counter()
        size = len(build().encode("utf-8"))
        print(f"{name:26} {size:>10,} bytes {size / 1024:>9.1f} KiB {time.perf_counter() - start:>7.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
