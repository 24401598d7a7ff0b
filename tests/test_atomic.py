"""conformance.atomic (issue 60): the data reaches the disk before the rename, and the file's mode follows the
user's umask. No JAX."""

from __future__ import annotations

import os
import stat
import sys

import pytest

from conformance import atomic

posix = pytest.mark.skipif(sys.platform == "win32", reason="file modes and umask are POSIX")


def test_the_data_is_synced_before_the_rename_and_the_folder_after(monkeypatch, tmp_path):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        calls.append(("fsync", stat.S_ISDIR(os.fstat(descriptor).st_mode)))
        real_fsync(descriptor)

    def replace(source, target):
        calls.append(("replace", os.path.getsize(source)))
        real_replace(source, target)

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    monkeypatch.setattr(atomic.os, "replace", replace)
    atomic.write_text_atomically(tmp_path / "out.json", "{}")
    assert calls[:2] == [("fsync", False), ("replace", 2)]
    if sys.platform != "win32":
        assert calls[2:] == [("fsync", True)]
    assert (tmp_path / "out.json").read_text() == "{}"


@posix
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_written_file_gets_the_mode_the_umask_gives_a_new_file(tmp_path, umask, mode):
    before = os.umask(umask)
    try:
        written = atomic.write_bytes_atomically(tmp_path / "out.bin", b"x")
        assert atomic._umask() == umask
    finally:
        os.umask(before)
    assert stat.S_IMODE(written.stat().st_mode) == mode
