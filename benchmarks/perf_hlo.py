"""The optimized HLO of one workload on two releases, and what differs in it: the check behind an exact verdict.

    python benchmarks/perf_hlo.py WORKLOAD --jax OLD --jax NEW [--xla-flags FLAGS] [--config NAME=VALUE ...]
                                  [--out DIR]

Each release's environment (prepared with the project's builder) compiles the workload in a fresh process (with
`XLA_FLAGS` and each `jax.config` option given, e.g. `--config jax_threefry_partitionable=false`) and writes
`compiled.as_text()` to `DIR/<release>.hlo`; then the opcode counts of the two are printed side by side, with
every opcode whose count differs, and each release's `temp_size_in_bytes`. This is how a `changed` fusions,
instructions or temp_bytes verdict is read, and how a flag that restores the old value is found (docs/
performance.md#what-changed-across-releases); it decides nothing.
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
for option in sys.argv[3:]:
    name, value = option.split("=", 1)
    jax.config.update(name, {"true": True, "false": False}.get(value.lower(), value))
from conformance.core.case import find_workload
from conformance.core.workload import split_built
w = find_workload(sys.argv[1])
fn, args, kwargs = split_built(w.build(), w.id)
compiled = jax.jit(fn).lower(*args, **kwargs).compile()
open(sys.argv[2], "w").write(compiled.as_text())
print(compiled.memory_analysis().temp_size_in_bytes)
"""


def dump(python: str, workload: str, out: Path, xla_flags: str, config: list[str]) -> tuple[str, str]:
    """The optimized HLO text of `workload` compiled by the interpreter at `python`, and its temp bytes."""
    extra = {"JAX_PLATFORMS": "cpu", **({"XLA_FLAGS": xla_flags} if xla_flags else {})}
    done = subprocess.run(
        [python, "-c", DUMP, workload, str(out), *config],
        env=child_environment(os.environ, extra),
        check=True,
        timeout=600,
        stdout=subprocess.PIPE,
        text=True,
    )
    return out.read_text(encoding="utf-8"), done.stdout.strip()


def main() -> int:
    """Dump both, print the opcode counts that differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload")
    parser.add_argument("--jax", action="append", required=True)
    parser.add_argument("--xla-flags", default="")
    parser.add_argument("--config", action="append", default=[], help="a jax.config option NAME=VALUE")
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="jaxconf-hlo-")))
    args = parser.parse_args()
    builder, counts, temp = EnvironmentBuilder(), {}, {}
    args.out.mkdir(parents=True, exist_ok=True)
    for version in args.jax:
        text, temp[version] = dump(
            builder.prepare(version).python, args.workload, args.out / f"{version}.hlo", args.xla_flags, args.config
        )
        counts[version] = collections.Counter(opcodes(text))
    names = sorted(set().union(*counts.values()))
    print(f"{'opcode':24}" + "".join(f"{v:>12}" for v in args.jax))
    for name in names:
        row = [counts[v][name] for v in args.jax]
        if len(set(row)) > 1:
            print(f"{name:24}" + "".join(f"{n:>12}" for n in row))
    print("total".ljust(24) + "".join(f"{sum(counts[v].values()):>12}" for v in args.jax) + f"   (HLO in {args.out})")
    print("temp_bytes".ljust(24) + "".join(f"{temp[v]:>12}" for v in args.jax))
    return 0


if __name__ == "__main__":
    sys.exit(main())
