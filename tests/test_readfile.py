"""Every file the tool reads is a regular file, read up to a bound (A14: `--expectations FIFO` and `expectations prune
FIFO` waited for a writer without end). Each command runs in a child with a deadline, so a regression fails instead of
hanging the suite; each refusal is one line naming the file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.readfile import NotRegularFile, TooLarge, read_regular_bytes, read_regular_text

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
DEADLINE_S = 120  # a refusal takes a second; a hang would take forever

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="this system has no FIFOs (os.mkfifo)")


def tool(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "conformance", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "named-pipe"
    os.mkfifo(path)
    return path


def test_the_reader_refuses_a_fifo_a_folder_and_too_much_and_reads_a_file(tmp_path, fifo):
    with pytest.raises(NotRegularFile, match="is a FIFO"):
        read_regular_bytes(fifo)
    with pytest.raises(NotRegularFile, match="is a folder"):
        read_regular_bytes(tmp_path)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 2049)
    with pytest.raises(TooLarge):
        read_regular_bytes(big, limit=2048)
    assert read_regular_text(big, limit=2049) == "x" * 2049
    link = tmp_path / "link.txt"
    link.symlink_to(big)
    assert read_regular_bytes(link) == b"x" * 2049
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "missing")


@pytest.mark.parametrize(
    "command", ["gate --expectations", "expectations prune", "report --history", "report", "run --matrix", "diff"]
)
def test_every_command_refuses_a_fifo_in_one_line(tmp_path, fifo, command):
    golden_a, golden_b = str(GOLDEN / "0.4.38-linux-x86_64.json"), str(GOLDEN / "0.12.0.1-linux-x86_64.json")
    argv = {
        "gate --expectations": ["gate", "--baseline", golden_a, "--candidate", golden_b, "--expectations", str(fifo)],
        "expectations prune": ["expectations", "prune", str(fifo), "--results", str(GOLDEN)],
        "report --history": ["report", str(GOLDEN), "-o", str(tmp_path / "r.html"), "--history", str(fifo)],
        "report": ["report", str(fifo), "-o", str(tmp_path / "r.html")],
        "run --matrix": ["run", "--matrix", str(fifo), "--results", str(tmp_path / "results")],
        "diff": ["diff", str(fifo), golden_b],
    }[command]
    done = tool(*argv, cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert str(fifo) in lines[0] and "FIFO" in lines[0] and "Traceback" not in done.stderr


@pytest.mark.parametrize("option", ["--markdown", "-o", "--junit", "--compat-json"])
def test_an_output_that_is_a_fifo_or_a_link_to_one_is_refused_and_left_as_it_was(tmp_path, fifo, option):
    """A device or FIFO named as an output (`--markdown /dev/stdout`) was replaced by a regular file: as root that
    replaces the system's own nodes. A link to a FIFO stands for `/dev/stdout` (a link to /proc/self/fd/1)."""
    link = tmp_path / "stdout"
    link.symlink_to(fifo)
    for target in (fifo, link):
        argv = ["report", str(GOLDEN), "-o", str(tmp_path / "page.html")]
        argv = argv[:-2] + [option, str(target)] if option == "-o" else argv + [option, str(target)]
        done = tool(*argv, cwd=tmp_path)
        assert done.returncode == 2 and "is a FIFO (named pipe), not a regular file" in done.stderr, done.stderr
        assert fifo.exists() and stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()


def test_a_history_that_is_a_fifo_or_a_link_to_one_is_refused_never_set_aside(tmp_path, fifo):
    """`history --history X` moved a FIFO, a device or a link aside and wrote a file in its place (as root, the real
    /dev/stdin was renamed)."""
    link = tmp_path / "stdin"
    link.symlink_to(fifo)
    for target in (fifo, link):
        done = tool("history", "--results", str(GOLDEN), "--history", str(target), cwd=tmp_path)
        assert done.returncode == 2 and "is a FIFO (named pipe), not a history file" in done.stderr, done.stderr
        assert stat.S_ISFIFO(os.stat(fifo).st_mode) and link.is_symlink()
        assert not list(tmp_path.glob("*.unreadable-*"))
