"""Time of one release's API census, and of its rerun answered from storage.

    python benchmarks/api_census.py [--jax VERSION ...] [--repeat N]

For each version (default 0.6.2): the environment prepared with the project's builder (timed apart: built or
reused from the cache), then, in a fresh results folder, the census taken (`api census`'s work: a fresh process in
the environment walks the public API) `--repeat` times with `rerun` (the median is printed), then once more without
it, answered from the stored file (nothing built, nothing run). Prints one JSON object per version: the seconds of
each, the names and modules counted, the census file's size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.api.store import take_census  # noqa: E402
from conformance.engine.targets import Release  # noqa: E402
from conformance.envs.builder import EnvironmentBuilder  # noqa: E402


def measure(version: str, repeat: int, builder: EnvironmentBuilder) -> dict:
    started = time.perf_counter()
    env = builder.prepare(version)
    prepared = time.perf_counter() - started
    with tempfile.TemporaryDirectory(prefix="api-census-bench-") as folder:
        taken = []
        for _ in range(repeat):
            started = time.perf_counter()
            run = take_census(Release(version), builder, Path(folder), rerun=True)
            taken.append(time.perf_counter() - started)
        started = time.perf_counter()
        again = take_census(Release(version), builder, Path(folder))
        stored = time.perf_counter() - started
        counted = run.census.counts()
        return {
            "jax": version,
            "python": env.interpreter.version,
            "environment_s": round(prepared, 2),
            "environment_built_now": env.built_now,
            "census_s": [round(t, 2) for t in taken],
            "census_median_s": round(statistics.median(taken), 2),
            "census_in_child_s": run.census.header.get("census_seconds"),
            "rerun_answered_from_storage": again.stored,
            "rerun_s": round(stored, 3),
            "names": counted["names"],
            "deprecated": counted["deprecated"],
            "removed": counted["removed"],
            "modules": counted["modules"],
            "failed_modules": counted["failed_modules"],
            "file_bytes": run.path.stat().st_size,
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python benchmarks/api_census.py", description=__doc__.split("\n")[0])
    parser.add_argument("--jax", action="append", metavar="VERSION", help="a release (default 0.6.2); repeatable")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="censuses taken per release (default 3)")
    args = parser.parse_args(argv)
    builder = EnvironmentBuilder()
    for version in args.jax or ["0.6.2"]:
        print(json.dumps(measure(version, max(1, args.repeat), builder)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
