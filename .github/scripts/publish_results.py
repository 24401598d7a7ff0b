"""The report job's publishing step: merge the folders of result files given into one file per (JAX version,
platform) under `--out`, with `index.json` (`conformance.results.publish.publish_results`).

    python .github/scripts/publish_results.py --out site/results [--date YYYY-MM-DD] [--commit SHA] FOLDER...

A script beside the workflow's shell scripts rather than a `python -m` entry point in the package, so that `cli.py`
stays the package's one argparse command line (tests/test_cli_shape.py). It needs jax-conformance installed in the
interpreter that runs it (render-report.sh runs it with $PYTHON).
"""

from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path
from typing import Sequence

from conformance.results.load import ResultsError
from conformance.results.publish import publish_results


def main(argv: Sequence[str] | None = None) -> int:
    """Publish the folders given into `--out`; a missing input or an unreadable result file is one line, exit 2."""
    parser = argparse.ArgumentParser(prog="publish_results.py", description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", type=Path, metavar="FOLDER", help="folders (or files) of result files")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="the site's results folder")
    parser.add_argument(
        "--date",
        default=datetime.datetime.now(datetime.timezone.utc).date().isoformat(),
        metavar="YYYY-MM-DD",
        help="the date the index records (default: today, UTC)",
    )
    parser.add_argument("--commit", default="", metavar="SHA", help="the commit the run checked out")
    args = parser.parse_args(argv)
    inputs = [path for path in args.inputs if path.exists()]
    if not inputs:
        print(
            f"jax-conformance: publish: none of {', '.join(map(str, args.inputs))} exists; nothing to publish",
            file=sys.stderr,
        )
        return 2
    try:
        done = publish_results(inputs, args.out, args.date, args.commit)
    except ResultsError as exc:
        print(f"jax-conformance: publish: {exc}", file=sys.stderr)
        return 2
    print("\n".join(done.lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
