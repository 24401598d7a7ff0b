"""The perf child: measure workloads in a fresh process of a release's environment and write the samples to a file.

    python -m conformance.perf.child --out FILE [--package PKG] [--min-time S] WORKLOAD ...

One process measures the named workloads in order, `jax.clear_caches()` before each, with JAX's own instruments:

- exact: `compiles` (backend compilations, counted by a `jax.monitoring` listener on
  `/jax/core/compile/backend_compile_duration`, while the workload is traced and first run), `temp_bytes`,
  `code_bytes`, `argument_bytes`, `output_bytes` (`compiled.memory_analysis()`, where the release has it),
  `fusions` and `instructions` (counted in `compiled.as_text()`);
- timed: `compile_s` (lower and compile, caches cleared), `run_s` (median wall time of steady-state calls, each
  with `block_until_ready`), `run_cpu_s` (the process's CPU time per steady call);
- information only: `flops` and `bytes_accessed` of `cost_analysis()`.

The file records the host (cores, load average, CPU model), `XLA_FLAGS`, `JAX_PLATFORMS` and whether a persistent
compilation cache was on (it is forced off). Standard library only, jax imported here.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from typing import Any, Callable

from conformance.atomic import write_text_atomically
from conformance.core.case import DEFAULT_CASE_PACKAGE, find_workload
from conformance.core.casefolders import import_declared_folders
from conformance.core.workload import split_built
from conformance.perf.hlo import hlo_counts

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
MAX_CALLS = 2000
MAX_STEADY_S = 3.0
MIN_CALLS = 5


def host_facts() -> dict[str, Any]:
    """The host a sample was taken on: cores, load average and CPU model."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        pass
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    return {"cores": os.cpu_count() or 0, "loadavg": load, "cpu_model": model}


class CompileCounter:
    """Counts backend compilations through `jax.monitoring` (installed once per process)."""

    def __init__(self, monitoring: Any) -> None:
        self.count = 0
        monitoring.register_event_duration_secs_listener(self._heard)

    def _heard(self, event: str, duration: float, *args: Any, **kwargs: Any) -> None:
        if event == COMPILE_EVENT:
            self.count += 1


def _blocked(jax: Any, out: Any) -> Any:
    block = getattr(jax, "block_until_ready", None)
    if block is not None:
        return block(out)
    return jax.tree_util.tree_map(lambda x: x.block_until_ready() if hasattr(x, "block_until_ready") else x, out)


def steady_calls(call: Callable[[], Any], jax: Any, min_time: float) -> dict[str, float]:
    """`run_s` (median wall per call) and `run_cpu_s` (process CPU per call) over steady calls: at least
    `MIN_CALLS`, until `min_time` has passed (at most `MAX_CALLS` or `MAX_STEADY_S`)."""
    _blocked(jax, call())  # warm
    walls: list[float] = []
    cpu0, start = time.process_time(), time.perf_counter()
    while len(walls) < MIN_CALLS or (time.perf_counter() - start < min_time and len(walls) < MAX_CALLS):
        t0 = time.perf_counter()
        _blocked(jax, call())
        walls.append(time.perf_counter() - t0)
        if time.perf_counter() - start > MAX_STEADY_S and len(walls) >= MIN_CALLS:
            break
    cpu = (time.process_time() - cpu0) / len(walls)
    return {"run_s": statistics.median(walls), "run_cpu_s": cpu, "calls": len(walls)}


def compiled_facts(compiled: Any) -> tuple[dict[str, int], dict[str, float]]:
    """The exact metrics (memory analysis, HLO counts) and the information (cost analysis) of a compiled function."""
    exact: dict[str, int] = {}
    try:
        memory = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a release without it
        memory = None
    for name, attribute in (("temp_bytes", "temp_size_in_bytes"), ("code_bytes", "generated_code_size_in_bytes"),
                            ("argument_bytes", "argument_size_in_bytes"), ("output_bytes", "output_size_in_bytes")):
        value = getattr(memory, attribute, None)
        if isinstance(value, int):
            exact[name] = int(value)
    try:
        exact.update(hlo_counts(compiled.as_text() or ""))
    except Exception:  # noqa: BLE001
        pass
    info: dict[str, float] = {}
    try:
        cost = compiled.cost_analysis()
        cost = cost[0] if isinstance(cost, (list, tuple)) and cost else cost
        for name, key in (("flops", "flops"), ("bytes_accessed", "bytes accessed")):
            if isinstance(cost, dict) and isinstance(cost.get(key), (int, float)) and cost[key] >= 0:
                info[name] = float(cost[key])
    except Exception:  # noqa: BLE001
        pass
    return exact, info


def measure(workload: Any, jax: Any, counter: CompileCounter, min_time: float) -> dict[str, Any]:
    """Every metric of one workload (see the module docstring)."""
    jax.clear_caches()
    fn, args, kwargs = split_built(workload.build(), workload.id)
    jitted = jax.jit(fn) if workload.jit else fn
    before, start = counter.count, time.perf_counter()
    _blocked(jax, jitted(*args, **kwargs))
    first_s = time.perf_counter() - start
    metrics: dict[str, Any] = {"compiles": counter.count - before}
    info: dict[str, Any] = {"first_call_s": first_s}
    if workload.jit:
        jax.clear_caches()
        start = time.perf_counter()
        compiled = jitted.lower(*args, **kwargs).compile()
        metrics["compile_s"] = time.perf_counter() - start
        exact, cost = compiled_facts(compiled)
        metrics.update(exact)
        info.update(cost)
    else:
        metrics["compile_s"] = first_s
    steady = steady_calls(lambda: jitted(*args, **kwargs), jax, min_time)
    info["calls"] = steady.pop("calls")
    metrics.update(steady)
    return {"metrics": metrics, "info": info}


def _persistent_cache_off(jax: Any) -> bool:
    """Turn a persistent compilation cache off; whether one is still on."""
    for name, value in (("jax_enable_compilation_cache", False), ("jax_compilation_cache_dir", None)):
        try:
            jax.config.update(name, value)
        except Exception:  # noqa: BLE001 - an option this release lacks
            pass
    return bool(getattr(jax.config, "jax_compilation_cache_dir", None))


def run(workload_ids: list[str], package: str, min_time: float) -> dict[str, Any]:
    """Import jax, then measure each workload; a workload that fails is recorded with its error."""
    import_declared_folders()
    import jax
    import jax.monitoring

    record: dict[str, Any] = {"jax": jax.__version__, "host": host_facts(),
                              "xla_flags": os.environ.get("XLA_FLAGS", ""),
                              "jax_platforms": os.environ.get("JAX_PLATFORMS", ""),
                              "persistent_cache": _persistent_cache_off(jax), "workloads": {}}
    counter = CompileCounter(jax.monitoring)
    for workload_id in workload_ids:
        try:
            home = workload_id.split("/", 1)[0] if "/" in workload_id else package  # a case folder's own package
            record["workloads"][workload_id] = measure(find_workload(workload_id, home), jax, counter, min_time)
        except Exception as exc:  # noqa: BLE001 - a workload is foreign code
            first = (str(exc).strip().splitlines() or [""])[0][:300]
            record["workloads"][workload_id] = {"error": f"{type(exc).__name__}: {first}"}
    return record


def main(argv: list[str] | None = None) -> int:
    """Entry point: measure, write the record to `--out`."""
    parser = argparse.ArgumentParser(prog="conformance.perf.child")
    parser.add_argument("workloads", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--package", default=DEFAULT_CASE_PACKAGE)
    parser.add_argument("--min-time", type=float, default=0.2)
    args = parser.parse_args(argv)
    record = run(args.workloads, args.package, args.min_time)
    write_text_atomically(args.out, json.dumps(record, allow_nan=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
