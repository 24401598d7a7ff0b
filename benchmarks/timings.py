"""Measure what makes a run slow: `import jax`, one cell's overhead, environment preparation, a whole version.

    python benchmarks/timings.py [--jax VERSION ...] [--repeat N]

Prints one JSON object; numbers are medians in seconds over --repeat runs. Kept out of
the tests on purpose: timings belong to the machine, not to correctness.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.core.case import find_case  # noqa: E402
from conformance.engine.runner import Target  # noqa: E402
from conformance.engine.selection import Cell  # noqa: E402
from conformance.engine.session import RunSession  # noqa: E402
from conformance.envs.builder import EnvironmentBuilder  # noqa: E402


def median_seconds(action, repeat: int) -> float:
    """Median wall time of `action()` over `repeat` runs."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return round(statistics.median(times), 3)


def measure(version: str, repeat: int) -> dict:
    """Timings for one JAX version."""
    builder = EnvironmentBuilder()
    env = builder.prepare(version)
    cheap = Cell(find_case("tracers.exception_hierarchy"), "subclassing")
    target = Target(env.python, "linux-x86_64", version)
    return {
        "python": env.interpreter.version,
        "prepare_cached_env_s": median_seconds(lambda: builder.prepare(version), repeat),
        "python_startup_s": median_seconds(lambda: subprocess.run([env.python, "-c", "pass"], check=True), repeat),
        "import_jax_s": median_seconds(lambda: subprocess.run([env.python, "-c", "import jax"], check=True), repeat),
        "one_spawned_cell_s": median_seconds(lambda: RunSession(target, launcher="spawn").run([cheap]), repeat),
    }


def main() -> int:
    """Measure each requested version and print the numbers."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--jax", action="append", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    versions = args.jax or ["0.4.38", "0.8.3", "0.12.0.1"]
    print(json.dumps({v: measure(v, args.repeat) for v in versions}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
