"""The published report's result data, rebuilt from the data block and run lines embedded in reports/index.html.

The `all` run's result files are not committed; the page holds every cell's status, expected and observed
values, diffs and printed facts, and each column's environment, which is what the Markdown page, the compat
JSON and the wptreport are made from. No JAX needed.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from conformance.results.schema import CellResult, RunHeader, ResultFile

PUBLISHED = Path(__file__).resolve().parent.parent / "reports" / "index.html"
_RUN_LINE = re.compile(
    r"<div>jax (\S+) on (\S+): jaxlib (\S+), numpy (\S+), Python (\S+), .*?, suite (\S+) "
    r"\(schema (\d+)\), run (\S+) – (\S+), from"
)


def published_files(page: Path = PUBLISHED) -> list[ResultFile]:
    """One `ResultFile` per column of the published page, with every cell the page shows."""
    text = page.read_text(encoding="utf-8")
    data = json.loads(text.split('<script type="application/json" id="data">', 1)[1].split("</script>", 1)[0])
    runs = {(m[0], m[1]): m for m in _RUN_LINE.findall(html.unescape(text))}
    files = []
    for i, column in enumerate(data["columns"]):
        # A page whose run lines read otherwise still gives its cells; the environment then reads "?".
        unknown = (column["jax"], column["platform"], "?", "?", "?", data["suite"], str(data["schema"]), "", "")
        jax, platform, jaxlib, numpy, python, suite, schema, started, finished = runs.get(
            (column["jax"], column["platform"]), unknown
        )
        header = RunHeader(
            jax=jax,
            platform=platform,
            schema_version=int(schema),
            suite_version=suite,
            jaxlib=jaxlib,
            numpy=numpy,
            python=python,
            started_at=started,
            finished_at=finished,
        )
        cells = []
        for row, row_cells in zip(data["rows"], data["cells"]):
            cell = row_cells[i]
            if not cell:
                continue
            case = data["cases"][row["c"]]
            expected = data["expected"][cell["e"]]
            cells.append(
                CellResult.from_json(
                    {
                        "case": case["id"],
                        "param": row["p"],
                        "rows": row["rows"],
                        "status": cell["s"],
                        "known_issue": bool(row["k"]),
                        "expected": expected,
                        "observation": cell.get("o", expected),
                        "diff": cell.get("d", []),
                        "details": cell.get("x"),
                        "reason": cell.get("r", ""),
                        "duration_s": cell.get("t", 0.0),
                        "printed_diff": cell.get("pd", []),
                        "printed_expected": cell.get("pe"),
                        "heading": case["section"],
                        "claim": case["claim"],
                    }
                )
            )
        files.append(ResultFile(header=header, cells=cells, source=f"{jax}-{platform}.json"))
    return files
