"""Run a chapter's blocks in order in this process: the chapter runner, inside the target environment.

    python -m conformance.chapter.runner PLAN.json

Standard library only (and what the chapter imports: jax, numpy). Like a notebook's kernel, every block runs in
one `__main__` namespace, so later blocks see earlier names; each block is compiled under a file name of its own
with its lines counted from 1 (tracebacks and `linecache` show the block's lines, as in Jupyter). A block whose
last line is an expression the document shows the value of displays it (`repr`, unless None). Code that asks
whether it runs in an IPython kernel is told yes, as in the notebook the chapter was run in: `get_ipython()`
resolves (a shell of no known kind, so rich and others still print plain text), and `IPython.version_info` reads
8.0 where IPython is not installed; JAX's `jax_traceback_filtering=auto` then filters as it does in Jupyter.

The plan names the blocks to run and those to run again first, quietly (`replay`: after the process before this
one crashed or was killed, the blocks that had finished are replayed to rebuild the names later blocks use). For
each block it appends a `start` record, then a `done` record (each with the runner's pid), to the records file (in
the CLI's private folder, never the working folder), flushed and synced before the block runs and after: when the
process dies or is killed, the parent knows every block that finished and which one was running. What a block
writes to stdout and stderr (the file descriptors, so output from C and from JAX's callbacks is kept too) goes to
files of its own. Each block runs under a time limit (`SIGALRM` raising
`BlockTimeout`, which `except Exception` does not catch); a block stuck where Python cannot interrupt it is killed
by the parent, which then starts the rest in a new process. A block that removed or emptied the working folder, or
closed `sys.stdout`, costs the next block nothing: both are made again before each block. A child a block forked
that comes back from the block's code ends there (`os._exit`), and a runner whose supervisor is gone starts no other
block. The runner's own failure outside any block is a `harness` record.

A block the page says something of statement by statement runs as **steps** (the plan's `steps`: line ranges of
its top-level statements, `conformance.chapter.stated`): each step's output is kept apart, a step the page states
an error for records what it raised (and whether it is an instance of the stated class, `runsteps.is_stated`) and
the next step runs, as the page shows the error and goes on; a `>>>` example runs as the prompt runs it (mode
`single`), a `%timeit`/`%time` line and a `%%time`/`%%timeit`/`%%capture` cell as the magic does
(`runmagic`). After each block the record says which of JAX's config values and environment variables it changed
(`runsteps.SettingsWatch`).
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import linecache
import os
import signal
import sys
import time
import traceback
import types
from typing import Any

from conformance.chapter.runmagic import cell_magic, line_magic
from conformance.chapter.runsteps import SettingsWatch, is_stated, summary
from conformance.portable import become_subreaper, bound_cell_processes, limit_cell_resources

OUTPUT_CHARS = 256 * 1024  # what a block printed, kept for the comparison (its head; a tail is kept apart)
STEP_CHARS = 16 * 1024  # what one step printed, kept for its own comparison

# A block's time limit is SIGALRM's (`setitimer`), which Windows has not: `chapter` says so before it starts (the
# parent's watchdog alone would kill the process, not interrupt the block, at every limit).
NO_BLOCK_LIMIT = (
    "chapter needs POSIX signals (SIGALRM, each block's time limit), which this system has not; run it "
    "on Linux or macOS (on Windows: in WSL). --blocks works here"
)


def block_limit_missing() -> str:
    """'' where this system has the alarm a block's time limit needs; else the one line `chapter` stops with."""
    return "" if hasattr(signal, "SIGALRM") and hasattr(signal, "setitimer") else NO_BLOCK_LIMIT


class BlockTimeout(BaseException):
    """The block ran past its time limit (a BaseException: the block's own `except Exception` lets it through)."""


_ARMED = [False]  # whether a block is running: an alarm that arrives just after it ended is ignored


def _on_alarm(signum: int, frame: Any) -> None:
    if _ARMED[0]:
        _ARMED[0] = False
        raise BlockTimeout()


def _assert_site(exc: BaseException, filenames: dict[str, int]) -> dict[str, Any] | None:
    """The innermost frame of a chapter block in the traceback of an AssertionError, when its line is an `assert`
    statement: {"block": index, "line": n, "text": the line}; None when the error came from elsewhere."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in filenames]
    if not frames:
        return None
    frame = frames[-1]
    text = (linecache.getline(frame.filename, frame.lineno or 0) or "").strip()
    if not text.startswith("assert"):
        return None
    return {"block": filenames[frame.filename], "line": frame.lineno, "text": text[:300]}


def _compile(tree: ast.Module, filename: str, display: bool) -> tuple[Any, Any]:
    """The block compiled, and its last expression compiled apart when it is displayed (else None)."""
    last = None
    if display and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = compile(ast.Expression(tree.body.pop().value), filename, "eval", dont_inherit=True)
    return compile(tree, filename, "exec", dont_inherit=True), last


def _first_line_of(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", None) or []
    return min([statement.lineno] + [d.lineno for d in decorators])


def _position() -> int:
    """Where the block's stdout file is now (what was printed so far, in bytes)."""
    sys.stdout.flush()
    try:
        return os.lseek(1, 0, os.SEEK_CUR)
    except OSError:
        return 0


def _slice(path: str, start: int, end: int) -> str:
    if not os.path.isfile(path):
        return ""
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(max(0, min(end - start, STEP_CHARS))).decode("utf-8", "replace")


def _read(path: str) -> tuple[str, str]:
    """The head of a block's output file (for the comparison) and its tail (for the record); nothing when the block
    removed it."""
    if not os.path.isfile(path):
        return "", ""
    with open(path, "rb") as handle:
        head = handle.read(OUTPUT_CHARS)
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 8192))
        tail = handle.read()
    return head.decode("utf-8", "replace"), tail.decode("utf-8", "replace")


def _effects_barrier() -> None:
    """Wait for JAX's pending callbacks (a `jax.debug.print` prints from a host callback) while the block's output is
    still redirected, so that what a block printed is not shown after the next one."""
    jax = sys.modules.get("jax")
    barrier = getattr(jax, "effects_barrier", None)
    if barrier is not None:
        try:
            barrier()
        except Exception:  # noqa: BLE001 - a broken state is the block's business, reported by what it raised
            pass


class KernelShell:
    """What `get_ipython()` returns in the runner: a stand-in for a notebook kernel's shell, with nothing in it."""


def present_as_kernel() -> None:
    """Let code that asks see an IPython kernel (see the module's docstring)."""
    shell = KernelShell()
    builtins.get_ipython = lambda: shell  # type: ignore[attr-defined]
    try:
        import IPython  # noqa: F401 - a real one, where the environment has it
    except ImportError:
        stand_in = types.ModuleType("IPython")
        stand_in.version_info = (8, 0, 0, "")  # type: ignore[attr-defined]
        stand_in.__version__ = "8.0.0"  # type: ignore[attr-defined]
        sys.modules["IPython"] = stand_in


class Runner:
    """One process's run of blocks: the namespace, the output redirection, the records."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.blocks = {b["index"]: b for b in plan["blocks"]}
        self.filenames = {b["filename"]: b["index"] for b in plan["blocks"]}
        self.pid, self.parent = os.getpid(), os.getppid()
        self.records = open(plan["records"], "a", encoding="utf-8")
        self.module = types.ModuleType("__main__")
        self.module.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = self.module
        sys.argv = [plan.get("argv0") or "chapter"]
        present_as_kernel()
        self.stdout_fd, self.stderr_fd = os.dup(1), os.dup(2)
        self._streams(first=True)
        signal.signal(signal.SIGALRM, _on_alarm)
        self.settings = SettingsWatch()

    def _streams(self, first: bool = False) -> None:
        """One sys.stdout and sys.stderr for the whole run (code may keep them, as a logging handler does), writing
        through to the file descriptors that point at the running block's files; made again before a block when
        an earlier block closed them (the harness's trouble, never the next block's)."""
        for name, fd in (("stdout", 1), ("stderr", 2)):
            stream = getattr(self, f"_{name}", None)
            if stream is None or stream.closed:
                stream = io.TextIOWrapper(
                    io.FileIO(fd, "w", closefd=False),
                    encoding="utf-8",
                    errors="backslashreplace",
                    line_buffering=True,
                    write_through=True,
                )
                setattr(self, f"_{name}", stream)
            current = getattr(sys, name)
            if first or current is None or getattr(current, "closed", True):
                setattr(sys, name, stream)

    def _workdir(self, block: dict[str, Any]) -> None:
        """The working folder, made again (and entered) when an earlier block removed or emptied it, with the
        block's own file (tracebacks and `inspect` read its lines)."""
        os.makedirs(self.plan["workdir"], exist_ok=True)
        os.chdir(self.plan["workdir"])
        if not os.path.exists(block["filename"]):
            with open(block["filename"], "w", encoding="utf-8") as handle:
                handle.write(block["code"] + "\n")

    def record(self, payload: dict[str, Any]) -> None:
        """Append one record to the results file, on disk before anything else happens. A process a block forked
        that came back here (it did not exit) ends at once, writing nothing: its parent runs the next block."""
        if os.getpid() != self.pid:
            os._exit(0)
        payload = {**payload, "pid": self.pid}
        self.records.write(json.dumps(payload, ensure_ascii=True) + "\n")
        self.records.flush()
        os.fsync(self.records.fileno())

    def _redirect(self, out_path: str, err_path: str) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        for path, fd in ((out_path, 1), (err_path, 2)):
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(handle, fd)
            os.close(handle)

    def _restore(self) -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os.dup2(self.stdout_fd, 1)
        os.dup2(self.stderr_fd, 2)

    def execute(self, index: int) -> dict[str, Any]:
        """Run one block under its time limit; what happened, as a record."""
        block = self.blocks[index]
        out_path = os.path.join(self.plan["workdir"], f"block-{index}.out")
        err_path = os.path.join(self.plan["workdir"], f"block-{index}.err")
        found: dict[str, Any] = {"event": "done", "index": index, "outcome": "ok"}
        steps: list[dict[str, Any]] = []
        started = time.monotonic()
        self._workdir(block)
        self._streams()
        self._redirect(out_path, err_path)
        try:
            _ARMED[0] = True
            signal.setitimer(signal.ITIMER_REAL, float(block["timeout_s"]))
            try:
                self._run(block, steps)
                _effects_barrier()
            finally:
                _ARMED[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        except BlockTimeout:
            found.update(outcome="timeout")
        except BaseException as exc:  # noqa: BLE001 - whatever the block raised is its outcome
            found.update(self._exception(exc, block))
        finally:
            if os.getpid() != self.pid:  # a child the block forked, back from the block's code: it ends here
                os._exit(0)
            _ARMED[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._restore()
        found["duration_s"] = round(time.monotonic() - started, 4)
        found["stdout"], found["stdout_tail"] = _read(out_path)
        found["stderr"], found["stderr_tail"] = _read(err_path)
        if steps:
            for step in steps:
                step["stdout"] = _slice(out_path, step.pop("start", 0), step.pop("end", 0))
            found["steps"] = steps
        found.update(self.settings.changes())
        return found

    def _run(self, block: dict[str, Any], steps: list[dict[str, Any]]) -> None:
        """The block's code, whole or step by step, under its cell magic if it has one."""
        code, filename = block["code"], block["filename"]
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        tree = ast.parse(code, filename)
        namespace = self.module.__dict__
        if block.get("steps"):

            def body() -> None:
                self._steps(block, tree, steps)
        else:

            def body() -> None:
                compiled, last = _compile(tree, filename, bool(block.get("display")))
                exec(compiled, namespace)
                self._display(last)

        if block.get("cell_magic"):
            cell_magic(
                block["cell_magic"],
                body,
                lambda: compile(ast.parse(code, filename), filename, "exec", dont_inherit=True),
                namespace,
            )
        else:
            body()

    def _display(self, last: Any) -> None:
        if last is not None:
            value = eval(last, self.module.__dict__)
            if value is not None:
                self.module.__dict__["_"] = value
                print(repr(value))

    def _steps(self, block: dict[str, Any], tree: ast.Module, done: list[dict[str, Any]]) -> None:
        """Run the block's steps in order (see the module's docstring); an exception of a step the page states an
        error for is recorded and the next step runs; any other ends the block."""
        filename, namespace = block["filename"], self.module.__dict__
        body = list(tree.body)
        plan = block["steps"]
        for number, step in enumerate(plan):
            statements = [s for s in body if step["first"] <= _first_line_of(s) <= step["last"]]
            record: dict[str, Any] = {"step": number, "start": _position()}
            done.append(record)
            try:
                if step.get("magic"):
                    line_magic(step["magic"], namespace)
                elif step.get("mode") == "single":
                    exec(compile(ast.Interactive(body=statements), filename, "single", dont_inherit=True), namespace)
                else:
                    last = None
                    if (
                        block.get("display")
                        and number == len(plan) - 1
                        and statements
                        and statements[-1] is body[-1]
                        and isinstance(body[-1], ast.Expr)
                    ):
                        last = compile(ast.Expression(statements.pop().value), filename, "eval", dont_inherit=True)
                    exec(
                        compile(ast.Module(body=statements, type_ignores=[]), filename, "exec", dont_inherit=True),
                        namespace,
                    )
                    self._display(last)
                if step.get("shown") is not None:
                    _effects_barrier()
                record["outcome"] = "ok"
            except BlockTimeout:
                raise
            except BaseException as exc:  # noqa: BLE001 - the step's outcome
                record.update(outcome="exception", **summary(exc, filename))
                if not step.get("stated"):
                    record["ended"] = True
                    raise
                record["matches"] = is_stated(exc, step["stated"], namespace)
                record["text"] = str(exc)[:4000]  # the whole message, for the page's own to be compared with
            finally:
                record["end"] = _position()

    def _exception(self, exc: BaseException, block: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = {"outcome": "exception", **summary(exc, block["filename"])}
        if isinstance(exc, AssertionError):
            found["assert"] = _assert_site(exc, self.filenames)
        if isinstance(exc, NameError) and not isinstance(exc, UnboundLocalError):
            found["name"] = getattr(exc, "name", None) or (found["message"].split("'")[1:2] or [""])[0]
        if isinstance(exc, SyntaxError):
            found["message"] = f"{exc.msg} (line {exc.lineno})"
        if block.get("raises"):
            found["matches"] = is_stated(exc, block["raises"], self.module.__dict__)
        found["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-4000:]
        return found

    def run(self) -> None:
        """Run the page's setup (the skip list's `[setup]`: the names a doctest harness provides), replay what the
        plan says, quietly, then run its blocks, recording each. A setup that raises is said as the harness's, and the
        blocks run without the rest of it."""
        if self.plan.get("setup"):
            try:
                exec(compile(self.plan["setup"], "<setup>", "exec"), self.module.__dict__)  # noqa: S102 - the page's
            except Exception as exc:  # noqa: BLE001 - said as the harness's, and the blocks run without it
                self.record({"event": "harness", "message": f"the [setup] raised {type(exc).__name__}: {exc}"[:300]})
        for index in self.plan.get("replay", []):
            self.record({"event": "replay", "index": index})
            self.execute(index)
        for index in self.plan["run"]:
            if _supervisor_going(self.parent):  # a block killed its supervisor: start no other block
                os._exit(3)
            self.record({"event": "start", "index": index, "pid": os.getpid()})
            self.record(self.execute(index))
        self.record({"event": "end"})


def _supervisor_going(parent: int) -> bool:
    """Whether this process's supervisor is gone or about to go: no longer the parent, a zombie, or a SIGKILL
    already queued for it. A block's `os.kill(os.getppid(), SIGKILL)` queues the signal before it returns, but the
    supervisor may die only after the next block has started; reading the queued signal ties the death to the block
    that sent it, not to the next one."""
    if os.getppid() != parent:
        return True
    try:
        with open(f"/proc/{parent}/status", encoding="utf-8") as status:
            fields = dict(line.split(":", 1) for line in status.read().splitlines() if ":" in line)
    except OSError:
        return False  # no /proc (macOS): the parent check alone
    pending = int(fields.get("SigPnd", "0").strip() or "0", 16) | int(fields.get("ShdPnd", "0").strip() or "0", 16)
    return fields.get("State", "").strip()[:1] in ("Z", "X") or bool(pending & (1 << (signal.SIGKILL - 1)))


def main(argv: list[str] | None = None) -> int:
    """Run the plan named on the command line."""
    args = sys.argv[1:] if argv is None else argv
    with open(args[0], encoding="utf-8") as handle:
        plan = json.load(handle)
    os.chdir(plan["workdir"])
    become_subreaper()
    bound_cell_processes(limit_cell_resources())
    runner = None
    try:
        runner = Runner(plan)
        runner.run()
    except Exception as exc:  # noqa: BLE001 - the harness's own failure, outside any block: named as the harness's
        if runner is None or os.getpid() != runner.pid:
            raise
        try:
            runner.record({"event": "harness", "message": f"{type(exc).__name__}: {exc}"[:300]})
        except Exception:  # noqa: BLE001 - the records cannot be written either: the stderr tail says it
            pass
        raise
    return 0  # what the blocks left running is killed by the supervisor, with the process group, at once


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    os._exit(code)  # JAX's threads and atexit hooks of the chapter's code cannot hang the end of the run
