"""The optimized HLO of one workload on two releases, and what differs in it: the check behind an exact verdict.

    python benchmarks/perf_hlo.py WORKLOAD --jax OLD --jax NEW [--xla-flags FLAGS] [--out DIR]

Each release's environment (prepared with the project's builder) compiles the workload in a fresh process and
writes `compiled.as_text()` to `DIR/<release>.hlo`; then the opcode counts of the two are printed side by side,
with every opcode whose count differs. This is how a `changed` fusions or instructions verdict is read (docs/
performance.md); it decides nothing.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from conformance.engine.runner import child_environment  # noqa: E402
from conformance.envs.builder import EnvironmentBuilder  # noqa: E402
from conformance.perf.hlo import opcodes  # noqa: E402

DUMP = """
import sys, jax
from conformance.core.case import find_workload
from conformance.core.workload import split_built
w = find_workload(sys.argv[1])
fn, args, kwargs = split_built(w.build(), w.id)
open(sys.argv[2], "w").write(jax.jit(fn).lower(*args, **kwargs).compile().as_text())
"""


def dump(python: str, workload: str, out: Path, xla_flags: str) -> str:
    """The optimized HLO text of `workload` compiled by the interpreter at `python`."""
    extra = {"JAX_PLATFORMS": "cpu", **({"XLA_FLAGS": xla_flags} if xla_flags else {})}
    subprocess.run([python, "-c", DUMP, workload, str(out)], env=child_environment(os.environ, extra), check=True,
                   timeout=600)
    return out.read_text(encoding="utf-8")


def main() -> int:
    """Dump both, print the opcode counts that differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("--jax", action="append", required=True)
    parser.add_argument("--xla-flags", default="")
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="jaxconf-hlo-")))
    args = parser.parse_args()
    builder, counts = EnvironmentBuilder(), {}
    args.out.mkdir(parents=True, exist_ok=True)
    for version in args.jax:
        text = dump(builder.prepare(version).python, args.workload, args.out / f"{version}.hlo", args.xla_flags)
        counts[version] = collections.Counter(opcodes(text))
    names = sorted(set().union(*counts.values()))
    print(f"{'opcode':24}" + "".join(f"{v:>12}" for v in args.jax))
    for name in names:
        row = [counts[v][name] for v in args.jax]
        if len(set(row)) > 1:
            print(f"{name:24}" + "".join(f"{n:>12}" for n in row))
    print("total".ljust(24) + "".join(f"{sum(counts[v].values()):>12}" for v in args.jax) + f"   (HLO in {args.out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
