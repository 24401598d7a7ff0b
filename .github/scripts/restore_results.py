"""The CI's restore step: fetch the result files of the last published run into this run's results folder
(`conformance.results.restore.restore_results`), so the run starts from them.

    python .github/scripts/restore_results.py SOURCE --into DIR [--keep DIR] [--platform NAME ...]

A script beside the workflow's shell scripts rather than a `python -m` entry point in the package, so that `cli.py`
stays the package's one argparse command line (tests/test_cli_shape.py). It needs jax-conformance installed in the
interpreter that runs it (restore-results.sh runs it with $PYTHON). Exit 0 unless the arguments are wrong: a restore
that fails is a notice, and the run runs every cell.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from conformance.results.restore import restore_results


def main(argv: Sequence[str] | None = None) -> int:
    """Restore SOURCE into --into; an --into that is a file is one line, exit 2."""
    parser = argparse.ArgumentParser(prog="restore_results.py", description=__doc__.split("\n")[0])
    parser.add_argument("source", metavar="SOURCE", help="the published site: an http(s) or file:// URL, or a folder")
    parser.add_argument("--into", type=Path, required=True, metavar="DIR", help="the results folder of this run")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="also copy the restored files (and history.json) into this folder, which the run leaves untouched",
    )
    parser.add_argument(
        "--platform",
        action="append",
        default=[],
        metavar="NAME",
        help="restore only this platform's files (repeatable; default: every platform)",
    )
    args = parser.parse_args(argv)
    if args.into.exists() and not args.into.is_dir():
        print(f"jax-conformance: restore: --into {args.into} is a file; name a folder", file=sys.stderr)
        return 2
    print("\n".join(restore_results(args.source, args.into, args.keep, args.platform).lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
