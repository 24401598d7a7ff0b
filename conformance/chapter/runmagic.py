"""Inside the target environment, for the chapter runner: the IPython magics a block runs as the magic does.
Standard library only.

- `%timeit [-n N] [-r R] STATEMENT` and `%%timeit [-n N] [-r R] [SETUP]`: the statement (or the cell's body) timed
  as IPython times it: `timeit.Timer` in the block's namespace, the number of loops grown 1, 2, 5, 10, ... until one
  repeat takes 0.2 s (unless `-n`), 7 repeats (unless `-r`), then IPython's line
  `1.23 ms ± 45.6 µs per loop (mean ± std. dev. of 7 runs, 1,000 loops each)`;
- `%time STATEMENT` and `%%time`: run once, then `CPU times: user ..., sys: ..., total: ...` and `Wall time: ...`;
- `%%capture [--no-stdout] [--no-stderr] [NAME]`: the cell's output kept from the page (captured at the file
  descriptors) and, with NAME, bound to an object with `stdout`, `stderr` and `show()`, as IPython's CapturedIO.

Every other magic is not run (`conformance.chapter.magics`).
"""

from __future__ import annotations

import math
import os
import shlex
import sys
import tempfile
import time
import timeit
from typing import Any, Callable

REPEAT_TIME_S = 0.2


def format_time(seconds: float, precision: int = 3) -> str:
    """A time as IPython's `_format_time` writes it: `precision` significant digits in s, ms, µs or ns."""
    if seconds >= 60.0:
        minutes, rest = divmod(seconds, 60.0)
        return f"{int(minutes)}min {rest:.{precision}g}s"
    units, scaling = ["s", "ms", "\u00b5s", "ns"], [1, 1e3, 1e6, 1e9]
    order = min(-int(math.floor(math.log10(seconds)) // 3), 3) if seconds > 0.0 else 3
    return "%.*g %s" % (precision, seconds * scaling[order], units[order])


def _options(args: str) -> tuple[dict[str, int], str]:
    words = args.strip().split(" ")
    found: dict[str, int] = {}
    while words and words[0].startswith("-") and len(words[0]) >= 2 and words[0][1] in "nrpqo":
        flag = words.pop(0)
        if flag[1] in "nrp":
            value = flag[2:] or (words.pop(0) if words else "0")
            found[flag[1]] = int(value)
    return found, " ".join(words)


def _report(timer: timeit.Timer, options: dict[str, int]) -> str:
    number = options.get("n", 0)
    if not number:
        number = 1
        while True:
            for factor in (1, 2, 5):
                loops = number * factor
                if timer.timeit(loops) >= REPEAT_TIME_S:
                    number = loops
                    break
            else:
                number *= 10
                continue
            break
    repeat = options.get("r", 7) or 7
    runs = [t / number for t in timer.repeat(repeat, number)]
    mean = sum(runs) / len(runs)
    spread = math.sqrt(sum((t - mean) ** 2 for t in runs) / len(runs))
    return (
        f"{format_time(mean)} ± {format_time(spread)} per loop (mean ± std. dev. of {repeat} run"
        f"{'s' if repeat != 1 else ''}, {number:,} loop{'s' if number != 1 else ''} each)"
    )


def line_magic(line: str, namespace: dict[str, Any]) -> None:
    """Run a `%timeit` or `%time` line in the namespace, printing what IPython prints."""
    name, _, args = line.lstrip("%").partition(" ")
    if name == "timeit":
        options, statement = _options(args)
        print(_report(timeit.Timer(statement, globals=namespace), options))
    elif name == "time":
        timed(lambda: exec(compile(args, "<timed exec>", "exec"), namespace))
    else:
        raise ValueError(f"not a magic the runner runs: %{name}")


def timed(body: Callable[[], None]) -> None:
    """Run `body`, then print its CPU and wall times as `%time` does (also when it raised)."""
    before, started = os.times(), time.perf_counter()
    try:
        body()
    finally:
        after, wall = os.times(), time.perf_counter() - started
        user, system = after.user - before.user, after.system - before.system
        print(f"CPU times: user {format_time(user)}, sys: {format_time(system)}, total: {format_time(user + system)}")
        print(f"Wall time: {format_time(wall)}")


class CapturedIO:
    """What `%%capture NAME` binds: the cell's captured `stdout` and `stderr`, and `show()` to print them."""

    def __init__(self, stdout: str, stderr: str) -> None:
        self.stdout, self.stderr, self.outputs = stdout, stderr, []

    def show(self) -> None:
        """Print what the cell printed, as if it had not been captured."""
        sys.stdout.write(self.stdout)
        sys.stderr.write(self.stderr)

    __call__ = show


def cell_magic(line: str, body: Callable[[], None], code: Callable[[], Any], namespace: dict[str, Any]) -> None:
    """Run the block's body (`body()`; `code()` gives it compiled, for `%%timeit`) under its cell magic `line`."""
    words = shlex.split(line.lstrip("%"))
    name, args = words[0], words[1:]
    if name == "time":
        timed(body)
    elif name == "timeit":
        options, setup = _options(" ".join(args))
        compiled = code()
        timer = timeit.Timer(lambda: exec(compiled, namespace), setup=lambda: exec(setup or "pass", namespace))
        print(_report(timer, options))
    elif name == "capture":
        _capture(args, body, namespace)
    else:
        raise ValueError(f"not a cell magic the runner runs: %%{name}")


def _capture(args: list[str], body: Callable[[], None], namespace: dict[str, Any]) -> None:
    keep = {"stdout": "--no-stdout" not in args, "stderr": "--no-stderr" not in args}
    name = next((a for a in args if not a.startswith("-")), "")
    saved: dict[int, int] = {}
    files: dict[int, Any] = {}
    for fd, stream, kept in ((1, sys.stdout, keep["stdout"]), (2, sys.stderr, keep["stderr"])):
        if kept:
            stream.flush()
            files[fd] = tempfile.TemporaryFile()
            saved[fd] = os.dup(fd)
            os.dup2(files[fd].fileno(), fd)
    try:
        body()
    finally:
        texts = {}
        for fd, stream in ((1, sys.stdout), (2, sys.stderr)):
            if fd in files:
                stream.flush()
                os.dup2(saved[fd], fd)
                os.close(saved[fd])
                files[fd].seek(0)
                texts[fd] = files[fd].read().decode("utf-8", "replace")
                files[fd].close()
        if name:
            namespace[name] = CapturedIO(texts.get(1, ""), texts.get(2, ""))
