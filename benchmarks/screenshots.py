"""Screenshots of a rendered report in headless Chromium, for the published page's README
(`conformance.report.screenshots.take`).

    python benchmarks/screenshots.py reports/index.html [--cell CELL_ID] [--out reports]

A script rather than a `python -m` entry point in the package, so that `cli.py` stays the package's one argparse
command line (tests/test_cli_shape.py). Needs jax-conformance importable (`pip install -e '.[test]'`, which brings
selenium) and Debian's `chromium` and `chromium-driver`; without them it says so in one line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from conformance.report.screenshots import take


def main(argv: list[str] | None = None) -> int:
    """Parse, take, say where; a page that is not a file is one line, exit 2."""
    parser = argparse.ArgumentParser(prog="python benchmarks/screenshots.py")
    parser.add_argument("page", type=Path)
    parser.add_argument("--cell", help="the cell whose detail to open (default: the first row that changes)")
    parser.add_argument("--out", type=Path, help="folder for the PNG files (default: the page's folder)")
    args = parser.parse_args(argv)
    if not args.page.is_file():
        print(f"error: {args.page} is not a file; render one with `jax-conformance report`", file=sys.stderr)
        return 2
    for written in take(args.page, args.out or args.page.parent, args.cell):
        print(written)
    return 0


if __name__ == "__main__":
    sys.exit(main())
