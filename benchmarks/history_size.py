"""Time and size of the run history on the published `all` run: an entry for a first run, for a run without news,
for a run where every cell changed (the cap of 200 listed cells at work), and a history.json of 365 worst-case and
365 typical entries (size, and the time to read it back).

    python benchmarks/history_size.py

Reads the data embedded in reports/index.html (no JAX, no result files needed). The cells there carry no reuse key,
so each gets a made-up one per (version, cell); the timings are of the comparison, not of reading result files.
"""

from __future__ import annotations

import copy
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.core.status import Status  # noqa: E402
from conformance.results.history import history_entry  # noqa: E402
from conformance.results.history_file import history_text, parse_history  # noqa: E402
from tests.published_report import published_files  # noqa: E402


def timed(make):
    started = time.perf_counter()
    made = make()
    return made, time.perf_counter() - started


def main() -> int:
    files = published_files()
    for result_file in files:
        for cell in result_file.cells:
            cell.key = f"{result_file.header.jax}-{cell.cell_id}"
    changed = copy.deepcopy(files)
    for result_file in changed:
        for cell in result_file.cells:
            cell.status = Status.DIFFERS if cell.status is Status.CONFORMS else Status.CONFORMS
            cell.key += "-edited"
    print(f"{len(files)} columns, {sum(len(f.cells) for f in files)} cells")
    entries = {}
    for name, previous, new in (("first run", None, files), ("no news", files, files), ("every cell", files, changed)):
        entry, seconds = timed(functools.partial(history_entry, previous, new, "2026-12-01", "0" * 40))
        entries[name] = entry
        size = len(history_text([entry])) - len(history_text([]))
        print(
            f"{name}: {entry.total_changes} changes, {len(entry.changed)} listed, {seconds * 1000:.0f} ms, "
            f"{size:,} bytes"
        )
    for name in ("every cell", "no news"):
        text = history_text([entries[name]] * 365)
        _, seconds = timed(functools.partial(parse_history, text))
        print(f"365 entries like '{name}': {len(text) / 2**20:.2f} MiB, read back in {seconds * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
