"""The maintainer's import of the project's row list: `conformance/core/rows.tsv` from a chapter's `behaviours.md`
table (`conformance.core.rowlist.refresh_rows`), or with `--check` whether it agrees with that table (exit 1 when
not). A script outside the package, so that the package's only command line is `jax-conformance`'s."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a clone, installed or not

from conformance.core.rowlist import refresh_rows  # noqa: E402
from conformance.readfile import read_regular_text  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    """Import rows.tsv from a chapter's behaviours.md, or with --check say whether it agrees with that table."""
    parser = argparse.ArgumentParser(
        prog="python tools/import_rows.py",
        description="Import conformance/core/rows.tsv from a chapter's behaviours.md.",
    )
    parser.add_argument("behaviours", type=Path, help="the chapter's behaviours.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if rows.tsv differs from it")
    args = parser.parse_args(argv)
    try:
        text = read_regular_text(args.behaviours)  # a regular file only, bounded
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        print(f"import_rows: cannot read {args.behaviours}: {reason}", file=sys.stderr)
        return 2
    line, status = refresh_rows(text, str(args.behaviours), args.check)
    print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
