"""The perf child: a process of a release's environment that imports jax once, then measures each workload it is
asked for in a process of the workload's own, and hands back one record per workload.

    python -m conformance.perf.child --socket-fd FD [--package PKG] [--min-time S] [--no-fork]

The parent (`perf.childrun`) talks to it over a Unix socket: the child says `ready` once jax and the case folders
are imported (within `START_BOUND_S`); then, for each request `{"id", "timeout_s"}`, which comes with the write end
of a pipe the parent made for that one workload, it forks (`--no-fork`, where forking after importing jax is not
safe: it measures that one workload itself and exits), says `started`, and says `exit` with the forked process's
exit status when it ends. The forked process measures the workload, writes its record (one JSON line) through the
pipe it was handed before the workload ran, and ends with `os._exit`: it shares no state with the workloads before
or after it (JAX's configuration, `os.environ`, the working folder, a crash), and a workload writes no record but
its own. Its declared `timeout_s` is armed as `SIGALRM` at its default action (the process ends, even inside XLA);
the parent kills it a little after as well. Linux's `PR_SET_PDEATHSIG` ends the child and a forked process with
the process above it; the child also ends when the parent's end of the socket closes.

A workload is measured with `jax.clear_caches()` first, with JAX's own instruments:

- exact: `compiles` (backend compilations, counted by a `jax.monitoring` listener on
  `/jax/core/compile/backend_compile_duration`, while the workload is traced and first run), `temp_bytes`,
  `code_bytes`, `argument_bytes`, `output_bytes` (`compiled.memory_analysis()`, where the release has it),
  `fusions` and `instructions` (counted in `compiled.as_text()`);
- timed: `compile_s` (lower and compile, caches cleared), `run_s` (median wall time of steady-state calls, each
  with `block_until_ready`), `run_cpu_s` (the process's CPU time per steady call);
- information only: `flops` and `bytes_accessed` of `cost_analysis()`.

A record names its workload, the host (cores, load average, CPU model), `XLA_FLAGS`, `JAX_PLATFORMS` and whether a
persistent compilation cache was on (it is forced off); its numbers pass `perf.numbers` (else the record is the
workload's error). Standard library only, jax imported here.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import sys
import time
from typing import Any, Callable

from conformance.core.case import DEFAULT_CASE_PACKAGE, find_workload
from conformance.core.casefolders import import_declared_folders
from conformance.core.workload import split_built
from conformance.perf.hlo import hlo_counts
from conformance.perf.numbers import sample_problem
from conformance.portable import die_with_parent

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
MAX_CALLS = 2000
MAX_STEADY_S = 3.0
MIN_CALLS = 5
START_BOUND_S = 600  # importing jax and the case folders
MAX_MESSAGE = 65536


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
    for name, attribute in (
        ("temp_bytes", "temp_size_in_bytes"),
        ("code_bytes", "generated_code_size_in_bytes"),
        ("argument_bytes", "argument_size_in_bytes"),
        ("output_bytes", "output_size_in_bytes"),
    ):
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


def _alarm(seconds: float) -> None:
    """End this process with SIGALRM in `seconds` (0: disarm); the default action works even inside native code."""
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, max(float(seconds), 0.0))


def _say(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


def _first_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:300]}"


def measure_one(out: Any, request: dict[str, Any], shared: dict[str, Any], package: str, min_time: float) -> None:
    """Measure the workload of `request` under its time bound and write its record (one JSON line) to `out`."""
    import jax

    workload_id = str(request.get("id"))
    _alarm(float(request.get("timeout_s") or 0) or 0.001)
    try:
        home = workload_id.split("/", 1)[0] if "/" in workload_id else package  # a case folder's own package
        result = measure(find_workload(workload_id, home), jax, shared["counter"], min_time)
        problem = sample_problem(result)
        if problem:
            result = {"error": problem, "status": "error"}
    except BaseException as exc:  # noqa: BLE001 - a workload is foreign code (SystemExit, KeyboardInterrupt too)
        result = {"error": _first_line(exc), "status": "error"}
    _alarm(0)
    facts = {k: v for k, v in shared.items() if k != "counter"}
    try:
        line = json.dumps({"workload": workload_id, **facts, **result}, allow_nan=False)
    except (TypeError, ValueError) as exc:
        line = json.dumps({"workload": workload_id, **facts, "error": _first_line(exc), "status": "error"})
    out.write(line.encode() + b"\n")
    out.flush()


def _finish(code: int) -> None:
    """Leave at once (no atexit handler of a workload runs, no thread of one keeps the process)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)


def serve(sock: socket.socket, package: str, min_time: float, forking: bool) -> int:
    """Import jax and the case folders, say `ready`, then answer each request (see the module docstring) until the
    parent closes its end."""
    _alarm(START_BOUND_S)
    try:
        import_declared_folders()
        import jax
        import jax.monitoring

        shared: dict[str, Any] = {
            "jax": jax.__version__,
            "host": host_facts(),
            "xla_flags": os.environ.get("XLA_FLAGS", ""),
            "jax_platforms": os.environ.get("JAX_PLATFORMS", ""),
            "persistent_cache": _persistent_cache_off(jax),
            "counter": CompileCounter(jax.monitoring),
        }
    except BaseException as exc:  # noqa: BLE001 - the release or a case folder cannot be imported
        _say(sock, {"failed": _first_line(exc)})
        return 3
    _alarm(0)
    _say(sock, {"ready": jax.__version__})
    server = os.getpid()
    while True:
        message, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 1)
        if not message or not fds:
            return 0  # the parent is gone, or done
        request = json.loads(message.decode())
        pid = os.fork() if forking else 0
        if pid == 0:
            code = 0
            try:
                if forking:
                    sock.close()  # the workload reaches neither the requests nor another workload's record
                    die_with_parent(signal.SIGKILL, server)
                else:
                    _say(sock, {"started": os.getpid()})
                    sock.close()
                with os.fdopen(fds[0], "wb") as out:
                    measure_one(out, request, shared, package, min_time)
            except BaseException:  # noqa: BLE001 - nothing a workload raised may reach the request loop
                code = 4
            _finish(code)
        os.close(fds[0])
        _say(sock, {"started": pid})
        _, status = os.waitpid(pid, 0)
        _say(sock, {"exit": os.waitstatus_to_exitcode(status)})


def main(argv: list[str] | None = None) -> int:
    """Entry point: serve the parent on the socket it handed over."""
    parser = argparse.ArgumentParser(prog="conformance.perf.child")
    parser.add_argument("--socket-fd", type=int, required=True)
    parser.add_argument("--package", default=DEFAULT_CASE_PACKAGE)
    parser.add_argument("--min-time", type=float, default=0.2)
    parser.add_argument("--no-fork", action="store_true")
    args = parser.parse_args(argv)
    sock = socket.socket(fileno=args.socket_fd)
    return serve(sock, args.package, args.min_time, forking=not args.no_fork)


if __name__ == "__main__":
    sys.exit(main())
