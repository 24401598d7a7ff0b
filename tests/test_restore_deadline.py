"""A05's remainder (issue 43): a restore against a site that sends one byte a second ran until CI killed it (exit 124
after 90 s): each fetch had a deadline of its own, one after the other (the index, then the history). Now the whole
restore has one deadline, under the minute and a half a CI step gives it, and ends in one line."""

from __future__ import annotations

import subprocess
import sys
import time

from conformance.results import restore
from conformance.results.restore import restore_results
from tests.test_ci_restore import ROOT, serving, trickling_site


Trickle = trickling_site(pause_s=0.2)


def test_the_whole_restore_index_and_history_ends_by_one_deadline(tmp_path, monkeypatch):
    monkeypatch.setattr(restore, "FETCH_DEADLINE_S", 20)
    monkeypatch.setattr(restore, "RESTORE_DEADLINE_S", 3)
    with serving(Trickle) as site:
        started = time.monotonic()
        restored = restore_results(site, tmp_path / "results", keep=tmp_path / "keep")
        took = time.monotonic() - started
    assert took < 12, took  # one deadline for all: not 20 s for the index and 20 more for the history
    assert restored.restored == [] and "took longer than 3 s to fetch" in restored.failure
    assert "ran past its 3 s" in restored.history_problem
    lines = restored.lines()
    assert all("\n" not in line for line in lines)


def test_the_default_deadline_fits_a_ci_step():
    assert restore.RESTORE_DEADLINE_S + 15 < 90 and restore.FETCH_DEADLINE_S <= restore.RESTORE_DEADLINE_S


def test_the_restore_command_against_a_trickling_site_ends_in_time_with_exit_0(tmp_path):
    code = (
        "import sys; from conformance.results import restore; restore.RESTORE_DEADLINE_S = 3; "
        "sys.path.insert(0, '.github/scripts'); from restore_results import main; sys.exit(main(sys.argv[1:]))"
    )
    with serving(Trickle) as site:
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", code, site, "--into", str(tmp_path / "r"), "--keep", str(tmp_path / "k")],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
        took = time.monotonic() - started
    assert done.returncode == 0 and "Traceback" not in done.stderr and took < 20, (done.stdout, done.stderr)
