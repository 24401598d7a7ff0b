"""A block cannot take the tool down (issue 43: S04, S05, S08, S09, S10, S13, N03): a chapter's blocks run under a
supervisor apart from the CLI, in a session of their own, with their records where their working folder does not
reach; a block that kills its parent, removes or empties its folder, forks, forges records or closes its streams
costs at most itself and its process, and the harness's own trouble is never a block's. Run with this
interpreter: these blocks need no JAX."""

from __future__ import annotations

import os
import time
from pathlib import Path

from conformance.chapter.model import BlockStatus
from conformance.portable import processes_with_variable
from conformance.tempfolders import owned_temporary_folder, remove_orphaned_folders
from tests.test_chapter_runner import markdown, run

R, C = BlockStatus.RAN, BlockStatus.CRASH


def test_the_blocks_parent_is_a_supervisor_in_a_session_of_its_own_not_the_cli():
    _, ran, found = run(markdown("import os\nprint(os.getppid(), os.getsid(os.getppid()))"))
    parent, session = map(int, found[0].stdout.split())
    assert found[0].status is R
    assert parent != os.getpid() and session != os.getsid(0)


def test_a_block_that_sends_sigterm_to_its_parent_costs_nothing():
    """S05: `os.kill(os.getppid(), SIGTERM)` ended the CLI as if the user had pressed Ctrl-C: nothing stored."""
    _, ran, found = run(
        markdown(
            "x = 1",
            "import os, signal, time\nos.kill(os.getppid(), signal.SIGTERM)\ntime.sleep(0.5)\nprint('after')",
            "print(x)\n# Prints: 1",
        )
    )
    assert [o.status for o in found] == [R, R, R] and found[1].stdout == "after\n"


def test_a_block_that_kills_its_parent_is_a_crash_and_the_rest_run_in_a_new_process():
    _, ran, found = run(
        markdown(
            "x = 1",
            "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)",
            "print(x)\n# Prints: 1",
            "print('last')",
        )
    )
    assert [o.status for o in found] == [R, C, R, R]
    assert "supervisor" in found[1].message and found[2].replayed and ran.processes == 2


def test_a_block_that_stops_its_parent_is_stopped_past_its_limit(monkeypatch):
    from conformance.chapter import session

    monkeypatch.setattr(session, "GONE_GRACE_S", 1.0)
    _, ran, found = run(
        markdown("x = 1", "import os, signal, time\nos.kill(os.getppid(), signal.SIGSTOP)\ntime.sleep(60)", "print(x)"),
        timeout_s=2.0,
        grace_s=1.0,
    )
    assert [o.status for o in found] == [R, BlockStatus.TIMEOUT, R]


def test_a_block_that_removes_or_empties_its_working_folder_costs_nothing():
    """S04: removing the working folder aborted the release (exit 2, nothing stored); S13: emptying it marked a
    finished block `crash`."""
    _, ran, found = run(
        markdown(
            "x = 1",
            "import os, shutil\nshutil.rmtree(os.getcwd())\nprint('gone')",
            "print(x)\n# Prints: 1",
            "import os\nfor name in os.listdir('.'):\n    os.remove(name)",
            "print(x + 1)\n# Prints: 2",
        )
    )
    assert [o.status for o in found] == [R, R, R, R, R] and ran.processes == 1
    assert not found[2].printed_differs and not found[4].printed_differs


def test_a_block_that_closes_sys_stdout_costs_the_next_block_nothing():
    """S13: closing `sys.stdout` marked the next block `crash`."""
    _, ran, found = run(markdown("import sys\nsys.stdout.close()", "print('hi')\n# Prints: hi"))
    assert [o.status for o in found] == [R, R] and found[1].stdout == "hi\n"


def test_a_block_that_forks_a_child_that_does_not_exit_runs_no_later_block_twice(tmp_path):
    """S09: a forked child that came back from the block ran every later block too."""
    count = tmp_path / "count"
    _, ran, found = run(
        markdown(
            "import os\npid = os.fork()\nprint('forked')",
            f"with open({str(count)!r}, 'a') as f:\n    f.write('ran\\n')",
            f"with open({str(count)!r}, 'a') as f:\n    f.write('ran\\n')",
        )
    )
    time.sleep(0.5)
    assert [o.status for o in found] == [R, R, R]
    assert count.read_text().splitlines() == ["ran", "ran"]


def test_forged_records_cost_the_block_that_wrote_them():
    """S08: a forged line in the records file was a `KeyError` traceback."""
    forge = (
        "import os\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n"
        "        path = os.readlink(f'/proc/self/fd/{fd}')\n    except OSError:\n        continue\n"
        "    if path.endswith('.jsonl'):\n        os.write(int(fd), b'{\"event\": \"done\"}\\nnot json\\n'\n"
        '                 b\'{"event": "done", "index": 3, "outcome": "ok", "pid": 1}\\n\')'
    )
    _, ran, found = run(markdown("x = 1", forge, "print(x)\n# Prints: 1", "print('later')\n# Prints: later"))
    assert [o.status for o in found] == [R, C, R, R]
    assert "wrote a record the runner did not" in found[1].message
    assert found[3].stdout == "later\n"


def test_a_block_that_forks_past_the_bound_is_stopped_and_the_rest_run():
    """S10: a block forking without bound ended the release ("could not describe the environment:
    KeyboardInterrupt", exit 2, nothing stored). Here it forks up to 3,000 sleeping children, slowly (a bounded
    stand-in, so a shared machine is safe): past the cap of 512 the block's process and all of them are killed."""
    mark = f"JAXCONF_TEST_FORKS_{os.getpid()}"
    bomb = (
        f"import os, time\nos.environ[{mark!r}] = '1'\nfor _ in range(3000):\n    if os.fork() == 0:\n"
        f"        time.sleep(120)\n        os._exit(0)\n    time.sleep(0.002)"
    )
    _, ran, found = run(markdown("x = 1", bomb, "print(x)\n# Prints: 1"), timeout_s=60.0)
    assert found[0].status is R and found[1].status in (C, BlockStatus.RAISED) and found[2].status is R
    time.sleep(0.5)
    assert processes_with_variable(f"{mark}=1") == []


def test_a_folder_left_by_a_process_killed_with_sigkill_is_removed_at_the_next_start(tmp_path):
    """N03: a `jaxconf-run-*` folder stayed in the temporary folder after `kill -9` of the CLI's pytest."""
    import subprocess
    import sys

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    left = tmp_path / f"jaxconf-run-{dead}-abc"
    (left / "cell").mkdir(parents=True)
    other = tmp_path / f"jaxconf-run-{os.getpid()}-mine"
    other.mkdir()
    unrelated = tmp_path / f"someone-{dead}-x"
    unrelated.mkdir()
    assert remove_orphaned_folders(tmp_path) == [left]
    assert not left.exists() and other.exists() and unrelated.exists()
    with owned_temporary_folder("jaxconf-chapter-", tmp_path) as made:
        assert made.name.startswith(f"jaxconf-chapter-{os.getpid()}-")
    assert not Path(made).exists()


def test_a_block_cannot_rewrite_the_probe_cells_of_the_results_folder(tmp_path):
    """S14: a block rewrote the probe cells of the results folder its release was merged into. The release's probe
    cells and header are read before its blocks run and put back as they were when the blocks are stored."""
    import json

    from conformance.chapter.store import as_before, probe_snapshot, store_blocks
    from conformance.core.status import Status
    from conformance.results.load import load_result_file
    from conformance.results.schema import RunHeader
    from tests.test_chapter_cells import CHAPTER, cells_for, probe

    path = tmp_path / "0.12.0.1-linux-x86_64.json"
    header = RunHeader(jax="0.12.0.1", platform="linux-x86_64", environment_digest="d", launcher="fork").to_json()
    test = {
        "nodeid": "conformance/cases/numerics.py::p",
        "outcome": "passed",
        "metadata": probe("numerics.p", "§3.1", Status.CONFORMS).to_json(),
    }
    probes = {"jax_conformance": header, "tests": [test]}
    path.write_text(json.dumps(probes), encoding="utf-8")
    before = probe_snapshot(tmp_path, "0.12.0.1", "linux-x86_64")
    forge = (
        "import json\n"
        f"data = json.load(open({str(path)!r}))\n"
        "data['tests'][0]['metadata']['status'] = 'differs'\n"
        "data['tests'].append(dict(data['tests'][0], nodeid='conformance/cases/numerics.py::forged'))\n"
        "data['tests'][1]['metadata'] = dict(data['tests'][1]['metadata'], case='numerics.forged')\n"
        f"json.dump(data, open({str(path)!r}, 'w'))"
    )
    _, ran, found = run(markdown(forge))
    assert found[0].status is R and "numerics.forged" in path.read_text()  # the block did rewrite the file
    changed: list[str] = []
    cells = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN)
    chapter_header = RunHeader(
        jax="0.12.0.1", platform="linux-x86_64", environment_digest="d", launcher="chapter"
    ).to_json()
    stored = store_blocks(tmp_path, CHAPTER, cells, chapter_header, as_before(before, changed))
    loaded = load_result_file(stored.path)
    probe_cells = {c.case: c.status for c in loaded.cells if not c.case.startswith("chapter/")}
    assert probe_cells == {"numerics.p": Status.CONFORMS}
    assert changed and "kept as they were before" in changed[0]


def test_a_run_that_stores_its_cells_while_the_blocks_run_keeps_them(tmp_path):
    """`run` and `chapter` on one results folder at once (the published run): the release's probe cells were stored
    by `run` through the store's lock while the chapter's blocks ran. They are results, not a block's doing: the
    chapter keeps them (it put its earlier snapshot back and lost all 197 cells of 0.5.3 and 0.6.2). A block that
    rewrites the file behind the store's back is still undone (the S14 test above)."""
    from conformance.chapter.store import as_before, probe_snapshot, store_blocks
    from conformance.core.status import Status
    from conformance.results.load import load_result_file
    from conformance.results.schema import RunHeader
    from conformance.results.store import ResultStore, written_by_store
    from tests.test_chapter_cells import CHAPTER, cells_for, probe

    header = RunHeader(jax="0.12.0.1", platform="linux-x86_64", environment_digest="d", launcher="fork").to_json()
    before = probe_snapshot(tmp_path, "0.12.0.1", "linux-x86_64")  # no file yet: the run has not stored
    assert before == {"exists": False, "path": tmp_path / "0.12.0.1-linux-x86_64.json"}
    test = {
        "nodeid": "conformance/cases/numerics.py::p",
        "outcome": "passed",
        "metadata": probe("numerics.p", "§3.1", Status.CONFORMS).to_json(),
    }
    stored_by_run = ResultStore(tmp_path).merge_run({"jax_conformance": header, "tests": [test]})
    assert written_by_store(stored_by_run.path)
    changed: list[str] = []
    cells = cells_for("0.12.0.1", BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN, BlockStatus.RAN)
    chapter_header = RunHeader(
        jax="0.12.0.1", platform="linux-x86_64", environment_digest="d", launcher="chapter"
    ).to_json()
    stored = store_blocks(tmp_path, CHAPTER, cells, chapter_header, as_before(before, changed))
    loaded = load_result_file(stored.path)
    assert {c.case: c.status for c in loaded.cells if not c.case.startswith("chapter/")} == {
        "numerics.p": Status.CONFORMS
    }
    assert sum(c.case.startswith("chapter/") for c in loaded.cells) == len(cells)
    assert changed == []
    # The file as the store wrote it is recognised; one changed behind its back is not.
    assert written_by_store(stored.path)
    stored.path.write_text(stored.path.read_text(encoding="utf-8") + " ", encoding="utf-8")
    assert not written_by_store(stored.path)
