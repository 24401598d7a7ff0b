"""What differs between Linux, macOS and Windows for the suite's processes, in one place.

Process groups, killing a process tree, becoming a subreaper and listing descendants, asking
whether a pid is alive, where a virtual environment keeps its interpreter, and whether forking
after `import jax` is safe. Each
function takes the platform as an argument where it matters (defaulting to this machine),
so the choices are testable anywhere.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from conformance.interrupts import interrupts_held

WINDOWS = os.name == "nt"


def venv_python(env_path: str | os.PathLike, windows: bool = WINDOWS) -> Path:
    """The interpreter of a virtual environment: `Scripts/python.exe` on Windows, `bin/python` elsewhere."""
    root = Path(env_path)
    return root / "Scripts" / "python.exe" if windows else root / "bin" / "python"


def new_group_options(windows: bool = WINDOWS) -> dict[str, Any]:
    """`subprocess.Popen` options that start a child in a process group of its own (a new session on POSIX)."""
    if windows:
        return {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0x200)}
    return {"start_new_session": True}


def fork_unavailable_reason(platform: str = sys.platform, has_fork: bool | None = None) -> str:
    """Why cells cannot be forked from a server that imported jax here ('' when they can)."""
    if has_fork is None:
        has_fork = hasattr(os, "fork")
    if not has_fork:
        return f"os.fork is not available on {platform}"
    if platform == "darwin":
        return "forking after importing jax is unsafe on macOS (system frameworks start threads); every cell is spawned"
    return ""


def kill_tree(pid: int) -> None:
    """Kill the process group led by `pid` (POSIX), or the process and its descendants (Windows `taskkill /T`)."""
    if WINDOWS:
        run_child(["taskkill", "/F", "/T", "/PID", str(pid)], capture_output=True, check=False)
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


PR_SET_CHILD_SUBREAPER = 36


def become_subreaper(platform: str = sys.platform) -> bool:
    """Make this process the subreaper of its descendants (Linux `prctl(PR_SET_CHILD_SUBREAPER)`).

    An orphan below it (a grandchild whose parent exited, however it detached: its own session,
    an empty environment) is then re-parented to this process rather than to init, so it stays
    findable as a descendant and can be killed. Returns False where the platform has no such call.
    """
    if not platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


PR_SET_PDEATHSIG = 1

RESET_SIGNALS = ("SIGINT", "SIGTERM")


def _signals_to_reset() -> tuple[bool, list[int]]:
    """Whether the calling thread blocks any signal (a child inherits the mask of the thread that starts it), and
    which of SIGINT and SIGTERM this process ignores (a child inherits ignored dispositions across `exec`)."""
    blocked = bool(signal.pthread_sigmask(signal.SIG_BLOCK, [])) if hasattr(signal, "pthread_sigmask") else False
    ignored = [
        getattr(signal, name)
        for name in RESET_SIGNALS
        if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) == signal.SIG_IGN
    ]
    return blocked, ignored


def _death_signal_arm(signum: int) -> Callable[[], None]:
    """What the child runs between fork and exec to get `signum` when the process that started it dies (Linux
    `prctl(PR_SET_PDEATHSIG)`, even after `kill -9`)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()

    def arm() -> None:
        _arm_death_signal(libc, signum, parent)

    return arm


def _arm_death_signal(libc: Any, signum: int, parent: int) -> None:
    libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os.kill(os.getpid(), signum)


def die_with_parent(signum: int, parent: int, platform: str = sys.platform) -> bool:
    """Get `signum` when the parent process `parent` dies, armed from inside the process itself (a process forked
    by a server, where no `preexec_fn` runs); False where the platform has no such call."""
    if not platform.startswith("linux"):
        return False
    try:
        import ctypes

        _arm_death_signal(ctypes.CDLL(None, use_errno=True), signum, parent)
    except (OSError, AttributeError):
        return False
    return True


def child_process_options(
    new_group: bool = False,
    parent_death_signal: int | None = None,
    windows: bool = WINDOWS,
    platform: str = sys.platform,
) -> dict[str, Any]:
    """`subprocess.Popen`/`run` options for every child the suite starts: it begins with an empty signal mask and
    SIGINT and SIGTERM at their defaults, whatever the state of this process and of the thread starting it
    (`restore_signals` resets only SIGPIPE and SIGXFSZ; a blocked mask or an ignored SIGINT, as in a background
    job, would otherwise reach every child, which then never gets the SIGTERM that stops it). `new_group`: in a
    process group of its own (`new_group_options`); `parent_death_signal`: the child gets it when this process
    dies (Linux only). The reset runs between fork and exec only when something needs resetting, so that the
    usual child is started the fast way."""
    options: dict[str, Any] = dict(new_group_options(windows)) if new_group else {}
    if windows:
        return options
    options["restore_signals"] = True
    blocked, ignored = _signals_to_reset()
    arm = (
        _death_signal_arm(parent_death_signal)
        if parent_death_signal is not None and platform.startswith("linux")
        else None
    )
    if not blocked and not ignored and arm is None:
        return options

    def prepare() -> None:  # runs in the child between fork and exec, in this order: the death signal must land
        for number in ignored:
            signal.signal(number, signal.SIG_DFL)
        if blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
        if arm is not None:
            arm()

    options["preexec_fn"] = prepare
    return options


def start_child(argv: Sequence[str], **options: Any) -> subprocess.Popen:
    """`subprocess.Popen(argv, **options)`, safe from Ctrl-C and SIGTERM while it forks.

    With a `preexec_fn` (what `child_process_options` adds to reset signals or arm a death signal), Python forks the
    slow way and runs the at-fork handlers in this process, logging's among them: a `KeyboardInterrupt` raised there
    is printed as "Exception ignored" and lost, and one raised before logging's lock is released leaves it held, so
    the command then hangs at its next log line (both seen ending a run under SIGINT and SIGTERM). So SIGINT and
    SIGTERM are held over the fork (`interrupts_held`) and delivered once it returns; the child just started is then
    killed before the interrupt goes on, since the caller never got it to clean up. Without a `preexec_fn` the fork
    runs no handler, but `Popen` still waits for the exec after it: an interrupt raised there would leave the child
    running with no one holding it, so that fork is held too."""
    child: subprocess.Popen | None = None
    try:
        with interrupts_held():
            child = subprocess.Popen(argv, **options)
    except BaseException:
        if child is not None:
            _end_unseen(child)
        raise
    return child


def _end_unseen(child: subprocess.Popen) -> None:
    """Kill and reap a child its caller never got (an interrupt came as it started); it has had no time to start
    children of its own, so the child alone is killed."""
    with contextlib.suppress(OSError):
        child.kill()
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        child.wait(timeout=30)
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def run_child(
    argv: Sequence[str],
    *,
    input: Any = None,
    timeout: float | None = None,
    check: bool = False,
    capture_output: bool = False,
    **options: Any,
) -> subprocess.CompletedProcess:
    """`subprocess.run` with `child_process_options`, started by `start_child`: how the suite runs a short command
    (git, uv, an interpreter asked for its version). Written out rather than `subprocess.run`, whose fork cannot be
    held: a timeout or an interrupt kills the child, and `check` raises `CalledProcessError`, as `subprocess.run`
    does."""
    if capture_output:
        options["stdout"] = options["stderr"] = subprocess.PIPE
    if input is not None:
        options["stdin"] = subprocess.PIPE
    with start_child(argv, **child_process_options(), **options) as process:
        try:
            out, err = process.communicate(input, timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()  # then reaped, not read: a grandchild may hold the pipes open (as `subprocess.run` does)
            process.wait()
            raise
        except BaseException:
            process.kill()
            raise
        code = process.poll()
    if check and code:
        raise subprocess.CalledProcessError(code, process.args, out, err)
    return subprocess.CompletedProcess(process.args, code if code is not None else -1, out, err)


def _parents(proc: Path = Path("/proc")) -> dict[int, int]:
    """pid -> parent pid of every process, read from `/proc/<pid>/stat` (empty without /proc)."""
    found: dict[int, int] = {}
    try:
        entries = list(proc.iterdir())
    except OSError:
        return found
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(errors="replace")
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # the command name, in parentheses, may hold spaces
        if len(fields) > 2 and fields[1].lstrip("-").isdigit():
            found[int(entry.name)] = int(fields[1])
    return found


def _children_lists(root: int, proc: Path) -> dict[int, list[int]] | None:
    """parent -> children of the tree below `root`, read from `/proc/<pid>/task/<tid>/children` (only that
    tree, not every process); None where the kernel does not offer those files."""
    if not (proc / "self" / "task").is_dir() or not any((proc / "self" / "task").glob("*/children")):
        return None
    tree: dict[int, list[int]] = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        found: list[int] = []
        try:
            for task in (proc / str(pid) / "task").iterdir():
                try:
                    found += [int(c) for c in (task / "children").read_text().split()]
                except (OSError, ValueError):
                    continue
        except OSError:
            continue
        tree[pid] = found
        stack.extend(c for c in found if c not in tree)
    return tree


def descendants(root: int, skip: frozenset[int] | set[int] = frozenset(), proc: Path = Path("/proc")) -> list[int]:
    """Pids below `root` in the process tree, leaving out the subtrees of the pids in `skip` (Linux; [] elsewhere)."""
    children = _children_lists(root, proc)
    if children is None:
        children = {}
        for pid, parent in _parents(proc).items():
            children.setdefault(parent, []).append(pid)
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in skip and child != root:
                found.append(child)
                stack.append(child)
    return found


def kill_descendants(root: int, skip: frozenset[int] | set[int] = frozenset(), rounds: int = 5) -> int:
    """SIGKILL every descendant of `root` (but the subtrees of `skip`), again while new ones appear; how many.

    Meant for a `root` that is alive and a subreaper (`become_subreaper`): a descendant forked while
    its parent is being killed is re-parented to `root`, so the next round finds it.
    """
    killed: set[int] = set()
    for _ in range(rounds):
        found = [pid for pid in descendants(root, skip) if pid not in killed]  # a killed one stays, a zombie, till
        if not found:  # it is reaped: never killed again
            break
        for pid in found:
            kill_pid(pid)
        killed.update(found)
    return len(killed)


def kill_pid(pid: int) -> None:
    """Kill one process, quietly if it is gone."""
    try:
        if WINDOWS:
            run_child(["taskkill", "/F", "/PID", str(pid)], capture_output=True, check=False)
        else:
            os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def pid_alive(pid: int) -> bool:
    """Whether a process `pid` exists. Never signals it (on Windows `os.kill(pid, 0)` would terminate it)."""
    if WINDOWS:
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.GetLastError() == 5  # access denied: it exists
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def processes_with_variable(needle: str) -> list[int]:
    """Pids of processes whose environment holds the entry `needle` (`NAME=value`).

    Linux reads `/proc/*/environ`; macOS reads `ps -E` (the caller's own processes); elsewhere
    (Windows) there is no portable way, and the process-tree kill has to suffice: [].
    """
    proc = Path("/proc")
    if proc.is_dir():
        found = []
        wanted = needle.encode()
        for entry in proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if wanted in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                continue
        return found
    if sys.platform == "darwin":
        try:
            listing = run_child(
                ["ps", "-E", "-ww", "-o", "pid=,command="], capture_output=True, text=True, errors="replace", timeout=10
            ).stdout
        except (OSError, subprocess.TimeoutExpired):
            return []
        return [
            int(line.split(None, 1)[0])
            for line in listing.splitlines()
            if f" {needle}" in line and line.strip().split(None, 1)[0].isdigit()
        ]
    return []


class SignalState:
    """The signal dispositions and mask of a process at one moment, to put back later."""

    def __init__(self) -> None:
        self.handlers: dict[int, Any] = {}
        for number in sorted(signal.valid_signals()):
            try:
                handler = signal.getsignal(number)
            except (OSError, ValueError):
                continue
            if handler is not None:  # None: set outside Python, cannot be put back from here
                self.handlers[number] = handler
        self.mask = signal.pthread_sigmask(signal.SIG_BLOCK, []) if hasattr(signal, "pthread_sigmask") else None

    def restore(self) -> list[str]:
        """Put every disposition and the mask back; return the names of the signals that had changed."""
        changed = []
        for number, handler in self.handlers.items():
            try:
                if signal.getsignal(number) != handler:
                    signal.signal(number, handler)
                    changed.append(signal.Signals(number).name)
            except (OSError, ValueError, RuntimeError):
                continue
        if self.mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.mask)
        return changed


@contextlib.contextmanager
def signals_kept() -> Iterator[None]:
    """Run the body (an import of foreign code: a case module, a team's package) and put every signal disposition
    and the mask back afterwards: a module that ignores SIGCHLD at import would otherwise take every later child
    exit status of the importer with it (uv's, a spawned cell's, the fork server's children)."""
    state = SignalState()
    try:
        yield
    finally:
        state.restore()


class BoundedRun:
    """What `run_bounded` saw: the exit status (None when it timed out), and the tail of its output."""

    def __init__(self, returncode: int | None, output: str, timed_out: bool) -> None:
        self.returncode = returncode
        self.output = output
        self.timed_out = timed_out


def run_bounded(argv: list[str], *, timeout: float, limit: int = 64 * 1024, **options: Any) -> BoundedRun:
    """Run `argv` in a process group of its own with stdout and stderr merged into one pipe, keeping only the last
    `limit` bytes of what it prints (a child that prints without end costs neither memory nor disk); at `timeout`
    its whole group is killed. `options` go to `subprocess.Popen` (env, cwd)."""

    child = start_child(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        **child_process_options(new_group=True),
        **options,
    )
    tail = bytearray()

    def drain() -> None:
        assert child.stdout is not None
        for block in iter(lambda: child.stdout.read(65536), b""):
            tail.extend(block)
            del tail[:-limit]

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        code: int | None = child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        kill_tree(child.pid)  # whatever it left in its group (or, timed out, itself)
        if child.poll() is None:
            child.kill()
        child.wait()
    reader.join(timeout=5)
    child.stdout.close()
    return BoundedRun(code, bytes(tail).decode("utf-8", "replace"), code is None)


CELL_MAX_FILE_BYTES = 64 * 1024 * 1024  # any one file a cell writes, its stdout and stderr files included
CELL_MAX_PROCESSES = 512  # processes a cell may add to its user's


def _user_process_count() -> int:
    uid = os.getuid()
    count = 0
    try:
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    count += entry.stat().st_uid == uid
                except OSError:
                    continue
    except OSError:
        return 0
    return count


def limit_cell_resources() -> list[str]:
    """Bound what a cell's process (and all it starts) may use, where the platform has rlimits: no file larger than
    `CELL_MAX_FILE_BYTES` (a probe printing without end is killed by SIGXFSZ instead of filling the disk), and at
    most `CELL_MAX_PROCESSES` more processes of its user (a fork bomb fails to fork). Returns what was limited."""
    try:
        import resource
    except ImportError:  # Windows
        return []
    limited = []
    wanted = [("RLIMIT_FSIZE", lambda: CELL_MAX_FILE_BYTES)]
    if sys.platform.startswith("linux"):  # elsewhere the count of the user's processes is not at hand
        wanted.append(("RLIMIT_NPROC", lambda: _user_process_count() + CELL_MAX_PROCESSES))
    for name, value in wanted:
        which = getattr(resource, name, None)
        if which is None:
            continue
        try:
            soft, hard = resource.getrlimit(which)
            limit = value() if hard == resource.RLIM_INFINITY else min(hard, value())
            if soft == resource.RLIM_INFINITY or soft > limit:
                resource.setrlimit(which, (limit, hard))
            limited.append(name)
        except (OSError, ValueError):
            continue
    return limited


PROCESS_CAP_INTERVAL_S = 0.05
PROCESS_CAP_MESSAGE = "jax-conformance: the cell started more than {cap} processes; it and all of them were killed"
# Threads use up the system's task ids as processes do; XLA's own pools are a few hundred threads on a large host.
CELL_MAX_TASKS = 4096
TASK_CAP_MESSAGE = "jax-conformance: the cell ran more than {cap} threads and processes; it and all of them were killed"


def _tasks(pids: list[int]) -> int:
    """How many threads the processes `pids` run together (Linux: /proc/PID/task); a process gone counts none."""
    count = 0
    for pid in pids:
        try:
            count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


def watch_process_count(cap: int = CELL_MAX_PROCESSES, interval: float = PROCESS_CAP_INTERVAL_S) -> bool:
    """Where `RLIMIT_NPROC` cannot bound a cell (root ignores it, and so do processes with CAP_SYS_RESOURCE), count
    this process's descendants every `interval` seconds in a thread of its own, and once there are more than `cap`
    (or more than `CELL_MAX_TASKS` threads among them all: threads use up the system's task ids too), say so on
    stderr, kill every descendant (the tree: this process is a subreaper, so escapees from the process
    group are in it) and then the whole process group, this process included: the parent reads a cell killed by a
    signal as `crash`, with the line in its stderr tail. Linux only (it reads /proc); returns whether it watches."""
    if not sys.platform.startswith("linux") or not Path("/proc/self/task").is_dir():
        return False

    def watch() -> None:
        me = os.getpid()
        while True:
            time.sleep(interval)
            below = descendants(me)
            if len(below) > cap:
                said = PROCESS_CAP_MESSAGE.format(cap=cap)
                break
            if _tasks([me, *below]) > CELL_MAX_TASKS:
                said = TASK_CAP_MESSAGE.format(cap=CELL_MAX_TASKS)
                break
        try:
            os.write(2, (said + "\n").encode())
        except OSError:
            pass
        kill_descendants(me, rounds=20)
        try:
            os.killpg(os.getpgrp(), signal.SIGKILL)
        finally:
            os.kill(me, signal.SIGKILL)

    threading.Thread(target=watch, name="jax-conformance-process-cap", daemon=True).start()
    return True


def bound_cell_processes(limited: list[str]) -> bool:
    """Start `watch_process_count` when `limit_cell_resources` (which returned `limited`) could not bound the number
    of processes: no RLIMIT_NPROC here, or this process runs as root, which the kernel lets past it."""
    root = hasattr(os, "geteuid") and os.geteuid() == 0
    return watch_process_count() if root or "RLIMIT_NPROC" not in limited else False
