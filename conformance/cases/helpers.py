"""Helpers that probes share, so that each probe stays a few lines. Runs in the child (stdlib, numpy, jax).

Every helper imports jax inside its body, after the case's environment variables are set.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

from conformance.portable import run_child
from conformance.core.case import Unsupported


# Why a debug_nans error names the primitive only from 0.5.1 (five cells change there). Measured on linux-x86_64:
# jax.jit(lambda x: jnp.log(x)) and jax.jit(lambda x: jnp.log(x) * 2 + 1) at -1.0 both raise "invalid value (nan)
# encountered in jit(<lambda>). Because ... the de-optimized function did not produce invalid values" on 0.4.38 and
# 0.5.0, with no notice printed, and "invalid value (nan) encountered in log" after the notice on 0.5.1; on 0.5.0,
# core.jaxpr_as_fun of the lambda's jaxpr, called under debug_nans, raises nothing.
DEOPT_RERUN_WHY = (
    "From 0.5.1 a NaN in a jit function's output makes JAX call the Python function again, without jit "
    "(dispatch.maybe_recursive_nan_check, new in 0.5.1, after printing 'Calling the de-optimized version'), and its "
    "eager operations check their own outputs, so the error names the primitive; 0.5.0 and older re-evaluated the "
    "traced jaxpr instead, which raises nothing for one-equation and multi-equation functions alike, so the error "
    "names the jit function (jit(<lambda>), jit(step)) and says the de-optimized function produced no invalid value."
)
DEOPT_RERUN_EVIDENCE = (
    "jax/_src/dispatch.py maybe_recursive_nan_check (0.5.1; 0.5.0's pjit._pjit_call_impl_python ran "
    "core.jaxpr_as_fun(jaxpr)(*args) instead); measured (linux-x86_64): jit(lambda x: jnp.log(x)) and "
    "jit(lambda x: jnp.log(x) * 2 + 1) at -1.0 raise 'invalid value (nan) encountered in jit(<lambda>)' with no "
    "notice on 0.4.38 and 0.5.0, 'invalid value (nan) encountered in log' after the notice on 0.5.1"
)


def require(dotted: str) -> Any:
    """The object at `dotted` (`jax.debug.log`, `jax.stages.Lowered.as_text`), or `Unsupported(dotted)`.

    The longest importable module prefix is imported, then attributes are followed.
    """
    parts = dotted.split(".")
    obj: Any = None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(obj, attribute):
                raise Unsupported(dotted)
            obj = getattr(obj, attribute)
        return obj
    raise Unsupported(dotted)


def require_keyword(function: Callable[..., Any], keyword: str, name: str) -> None:
    """Raise `Unsupported` unless `function` accepts the keyword argument `keyword` (named `name` in the message)."""
    import inspect

    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return
    if keyword not in parameters and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        raise Unsupported(f"{name}({keyword}=...)")


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (empty when it has none)."""
    text = str(exc)
    return text.splitlines()[0] if text else ""


@dataclass
class Outcome:
    """What one call did: its value, or the exception it raised."""

    value: Any = None
    exception: BaseException | None = None

    @property
    def raised(self) -> str | None:
        """The exception's class name, or None when the call returned."""
        return type(self.exception).__name__ if self.exception is not None else None

    @property
    def message(self) -> str:
        """The first line of the exception's message ('' when it returned)."""
        return first_line(self.exception) if self.exception is not None else ""

    @property
    def verdict(self) -> str:
        """`allowed` when the call returned, else the exception's class name."""
        return self.raised or "allowed"

    def summary(self) -> dict[str, Any]:
        """`{"raised": ..., "message": ...}`, for the details."""
        return {"raised": self.raised, "message": self.message}


def outcome_of(call: Callable[[], Any], catch: type[BaseException] | tuple = Exception) -> Outcome:
    """Call `call()`, blocking on an array result; record its value or the exception it raised."""
    try:
        value = call()
        if hasattr(value, "block_until_ready"):
            value.block_until_ready()
        return Outcome(value=value)
    except catch as exc:  # noqa: BLE001 - the exception is the observation
        return Outcome(exception=exc)


def block(value: Any) -> Any:
    """Block on every array in `value` (a pytree) and return it."""
    import jax

    return jax.block_until_ready(value)


def printed_lines(call: Callable[[], Any]) -> list[str]:
    """The lines written to `sys.stdout` while `call()` runs, its result is blocked on and effects are flushed.

    This is how `jax.debug.print` output is seen: it goes through Python's `sys.stdout`.
    """
    import jax

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        block(call())
        jax.effects_barrier()
    return buffer.getvalue().splitlines()


class LogCapture(logging.Handler):
    """Collects the messages of one logger (and its children) while active; nothing propagates further.

    with LogCapture("jax", logging.WARNING) as logs:
        ...
    logs.messages
    """

    def __init__(self, logger: str = "jax", level: int = logging.DEBUG) -> None:
        super().__init__(level=logging.DEBUG)
        self.logger = logging.getLogger(logger)
        self.capture_level = level
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the record."""
        self.records.append(record)

    @property
    def messages(self) -> list[str]:
        """The captured messages, formatted."""
        return [r.getMessage() for r in self.records]

    def __enter__(self) -> "LogCapture":
        self._saved = (self.logger.level, self.logger.propagate)
        self.logger.addHandler(self)
        self.logger.setLevel(self.capture_level)
        self.logger.propagate = False
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.logger.removeHandler(self)
        self.logger.setLevel(self._saved[0])
        self.logger.propagate = self._saved[1]


BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def compiles_of(names: list[str], fun_name: str) -> int:
    """How many of the backend-compile events `names` count for `fun_name` (e.g. `jit(mlp_step)`).

    One rule for every compile count of the suite: an event named `fun_name` counts, and so does an event
    with an empty name, which is how releases before 0.6 send every event (jax/_src/dispatch.py; the naming
    itself is the row setup.compile_monitoring_event). So a probe counts only events seen while nothing but
    `fun_name` can compile (its inputs built beforehand).
    """
    return sum(name in (fun_name, "") for name in names)


class CompileCounter:
    """Counts XLA backend compilations through `jax.monitoring` while active, with each `fun_name`.

    Registering needs the public `register_event_duration_secs_listener` (the behaviour is about
    it). Removing the listener uses the public `unregister_event_duration_listener` where it exists
    and, before it was public (0.4.38-0.7.x), the private function it replaced: the counter is
    incidental to most rows that use it, so its removal must not make them unsupported.
    `unregistered_publicly` says which one was used.

    An expectation of *nothing* (no compile) passes when the listener itself is dead, so a
    probe that expects no compile also calls `control()` inside the same counter: one deliberate
    fresh compilation that must be seen.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.unregistered_publicly = False

    @property
    def count(self) -> int:
        """How many backend compilations were seen."""
        return len(self.names)

    def _listener(self, event: str, duration: float, **kwargs: Any) -> None:
        if event == BACKEND_COMPILE_EVENT:
            self.names.append(str(kwargs.get("fun_name", "")))

    def control(self) -> bool:
        """Compile a new function once, and say whether the counter saw that compilation (a positive control).

        The compilation is taken out of `names` again, so the count stays the probe's own.
        """
        import jax
        import jax.numpy as jnp

        def compile_counter_control(x):
            return x * 3 + 1

        before = len(self.names)
        jax.jit(compile_counter_control)(jnp.arange(7.0)).block_until_ready()
        seen = len(self.names) > before  # by count: releases before 0.5 send no fun_name
        del self.names[before:]
        return seen

    def __enter__(self) -> "CompileCounter":
        self._register = require("jax.monitoring.register_event_duration_secs_listener")
        try:
            self._unregister = require("jax.monitoring.unregister_event_duration_listener")
            self.unregistered_publicly = True
        except Unsupported:
            private = importlib.import_module("jax._src.monitoring")
            self._unregister = getattr(private, "_unregister_event_duration_listener_by_callback", None)
            if self._unregister is None:
                raise Unsupported("jax.monitoring.unregister_event_duration_listener") from None
        self._register(self._listener)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._unregister(self._listener)


def child_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without JAX_* and XLA_FLAGS*, with PYTHON_COLORS=0, then `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_", "XLA_FLAGS"))}
    env["PYTHON_COLORS"] = "0"
    env.update(extra or {})
    return env


def run_script(
    name: str, *args: str, env: dict[str, str] | None = None, stdin: str | None = None, timeout_s: float = 300
) -> subprocess.CompletedProcess:
    """Run `conformance/scripts/<name>.py` with this interpreter in a clean environment; capture its text output."""
    from conformance.scripts import script_path

    return run_child(
        [sys.executable, script_path(name), *args],
        env=child_environment(env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
