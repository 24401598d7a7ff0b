"""The CI's memory, without JAX: publishing merged result files with results/index.json, restoring them (each file
checked, a bad one set aside, a failed restore a notice), and the plan that keeps only the jobs with work.

The three-run test of the whole workflow is `test_ci_cache.py` (e2e)."""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conformance import cli
from conformance.engine import matrix
from conformance.engine.ciwork import WorkRequest, plan_work
from conformance.engine.keys import cell_key
from conformance.engine.selection import all_cells
from conformance.core.case import load_cases
from conformance.results.load import load_results
from conformance.results.publish import publish_results
from conformance.results.restore import restore_results
from tests.synthetic_results import cell, report, write
from tests.test_engine_matrix import StoredBuilder

ROOT = Path(__file__).resolve().parents[1]
LINUX, MAC = "linux-x86_64", "darwin-arm64"
VMAP = ("numerics.debug_nans_vmap_miss", "vmap")


def site_with(tmp_path: Path, files: dict[str, list]) -> Path:
    """A published site (a folder standing in for it) made by `publish_results` from the given runs' cells."""
    runs = tmp_path / "runs"
    for name, cells in files.items():
        jax, platform = name.split("-", 1)
        write(runs, jax, platform, cells)
    site = tmp_path / "site"
    publish_results([runs], site / "results", "2026-12-01", "abc1234", retired=lambda cell_id: False)
    return site


@contextlib.contextmanager
def serving(handler: type[http.server.BaseHTTPRequestHandler]):
    """A site on 127.0.0.1 answered by `handler`, for as long as the block runs; yields its URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


def test_publish_merges_shards_over_the_restored_file_and_indexes_each_file(tmp_path):
    folder = tmp_path / "all-results"
    write(
        folder,
        "0.8.0",
        LINUX,
        [cell(*VMAP, status="differs"), cell("numerics.checkify_set_contents"), cell("numerics.deleted_case")],
        finished="2026-11-30T10:00:00+00:00",
    )
    shard = report("0.8.0", LINUX, [cell(*VMAP, status="conforms")], finished="2026-12-01T10:00:00+00:00")
    shard["jax_conformance"]["shard"] = "1/2"
    (folder / "0.8.0-linux-x86_64-shard1of2.json").write_text(json.dumps(shard))
    write(folder, "0.8.0", MAC, [cell(*VMAP)])
    done = publish_results([folder], tmp_path / "site" / "results", "2026-12-01", "abc1234")
    out = tmp_path / "site" / "results"
    assert [p.name for p in done.files] == ["0.8.0-darwin-arm64.json", "0.8.0-linux-x86_64.json"]
    merged = {c.cell_id: c.status.value for c in load_results(out / "0.8.0-linux-x86_64.json")[0].cells}
    # The shard's run replaces the restored cell; the cell of a case no longer declared is dropped.
    assert merged == {"numerics.debug_nans_vmap_miss[vmap]": "conforms", "numerics.checkify_set_contents": "conforms"}
    assert load_results(out / "0.8.0-linux-x86_64.json")[0].header.shard == ""
    index = json.loads((out / "index.json").read_text())
    assert (index["date"], index["commit"], index["format"]) == ("2026-12-01", "abc1234", 1)
    assert [e["name"] for e in index["files"]] == [p.name for p in done.files]
    for entry in index["files"]:
        data = (out / entry["name"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["size"] == len(data)
        assert entry["name"] == f"{entry['jax']}-{entry['platform']}.json" and entry["suite_version"] == "0.2.0"
    assert not list(out.glob(".*"))  # no lock files on the site


def test_report_diff_and_gate_read_the_published_folder(tmp_path, capsys):
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)], f"0.8.1-{LINUX}": [cell(*VMAP, status="differs")]})
    results = str(site / "results")
    assert len(load_results(results)) == 2  # index.json is not read as a result file
    assert cli.main(["report", results, "-o", str(tmp_path / "r.html"), "--markdown", str(tmp_path / "r.md")]) == 0
    assert "debug_nans_vmap_miss" in (tmp_path / "r.md").read_text()
    assert (
        cli.main(["diff", str(site / "results" / f"0.8.0-{LINUX}.json"), str(site / "results" / f"0.8.1-{LINUX}.json")])
        == 0
    )
    assert "conforms -> differs" in capsys.readouterr().out
    # The gate takes the folder's newest release (0.8.1) as the candidate: the vmap cell regressed.
    assert (
        cli.main(
            ["gate", "--baseline", str(site / "results" / f"0.8.0-{LINUX}.json"), "--candidate", results, "--newest"]
        )
        == 1
    )
    said = capsys.readouterr()
    assert "debug_nans_vmap_miss" in said.out and "unreadable" not in said.err


def test_restore_checks_every_file_and_sets_aside_those_that_fail(tmp_path):
    site = site_with(
        tmp_path,
        {
            f"0.8.0-{LINUX}": [cell(*VMAP)],
            f"0.8.1-{LINUX}": [cell(*VMAP)],
            f"0.8.2-{LINUX}": [cell(*VMAP)],
            f"0.8.0-{MAC}": [cell(*VMAP)],
        },
    )
    published = site / "results"
    tampered = published / f"0.8.1-{LINUX}.json"
    tampered.write_text(tampered.read_text().replace('"conforms"', '"conform!"'))  # same size, another sha256
    copied = published / f"0.8.2-{LINUX}.json"  # a copy of another version's file, its index entry made to match
    copied.write_bytes((published / f"0.8.0-{LINUX}.json").read_bytes())
    index = json.loads((published / "index.json").read_text())
    for entry in index["files"]:
        if entry["name"] == copied.name:
            entry.update(sha256=hashlib.sha256(copied.read_bytes()).hexdigest(), size=copied.stat().st_size)
    index["files"].append({"name": "../escape.json", "sha256": "0" * 64, "size": 10})
    (published / "index.json").write_text(json.dumps(index))
    into, keep = tmp_path / "results", tmp_path / "previous"
    restored = restore_results(str(site), into, keep, platforms=[LINUX])
    assert restored.restored == [f"0.8.0-{LINUX}.json"] and not restored.failure
    assert set(restored.set_aside) == {tampered.name, copied.name, "../escape.json"}
    assert "sha256" in restored.set_aside[tampered.name]
    assert "header says jax 0.8.0" in restored.set_aside[copied.name]
    assert sorted(p.name for p in into.iterdir()) == [f"0.8.0-{LINUX}.json"] == sorted(p.name for p in keep.iterdir())
    lines = restored.lines()
    assert len(lines) == 4 and all("\n" not in line for line in lines)
    assert any(line.startswith(f"jax-conformance: restore: set aside {tampered.name} (") for line in lines)


def test_a_restore_that_fails_is_one_line_and_the_script_exits_0(tmp_path):
    for source in (tmp_path / "no-site", "http://127.0.0.1:9/site/", "https://user:s3cret@127.0.0.1:9/"):
        restored = restore_results(str(source), tmp_path / "results")
        assert restored.restored == [] and restored.failure
        assert len(restored.lines()) == 1 and "every cell runs" in restored.lines()[0]
        assert "s3cret" not in restored.lines()[0]
    bad = tmp_path / "bad-site" / "results"
    bad.mkdir(parents=True)
    (bad / "index.json").write_text("{not json")
    assert "not JSON" in restore_results(str(tmp_path / "bad-site"), tmp_path / "results").failure
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "SITE_URL": (tmp_path / "bad-site").as_uri(),
        "RESULTS": str(tmp_path / "r"),
    }
    done = subprocess.run(
        ["bash", str(ROOT / ".github" / "scripts" / "restore-results.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "nothing restored" in done.stdout and "every cell runs" in done.stdout


def test_the_plan_keeps_only_jobs_whose_cells_are_not_answered(tmp_path):
    pins = tmp_path / "jax-0.8.0.txt"
    pins.write_text("jax==0.8.0 --hash=sha256:00\n")
    builder = StoredBuilder(pins)
    cells = [c for c in all_cells(load_cases()) if c.id.startswith("numerics.debug_nans_vmap_miss")]
    entries = [cell(c.case.id, c.param, key=cell_key(c.case, c.param, "env")) for c in cells]
    stored = tmp_path / "restored"
    for version in ("0.8.0", "0.8.1"):
        path = write(stored, version, LINUX, entries if version == "0.8.0" else entries[:1])
        data = json.loads(path.read_text())
        data["jax_conformance"].update(
            environment_digest="env", pins_hash=builder.requirements(version).digest, python="3.13.0"
        )
        path.write_text(json.dumps(data))
    request = WorkRequest(("0.8.0", "0.8.1"), ("ubuntu-24.04", "macos-14"), 1, "debug_nans_vmap_miss", stored)
    plan = plan_work(request, builder)
    # 0.8.0 on linux is answered in full; 0.8.1 on linux misses cells; macOS has nothing stored.
    assert [(j.runner, j.job.versions) for j in plan.planned] == [
        ("macos-14", ("0.8.0",)),
        ("ubuntu-24.04", ("0.8.1",)),
        ("macos-14", ("0.8.1",)),
    ]
    assert plan.cells == 4 * len(cells) and plan.to_run == 2 * len(cells) + len(cells) - 1
    assert "3 of 4 jobs have work" in plan.summary()
    builder.pin_file.write_text("jax==0.8.0 --hash=sha256:11\n")  # the release's pins changed: everything has work
    assert len(plan_work(request, builder).planned) == 4
    builder.pin_file.write_text("jax==0.8.0 --hash=sha256:00\n")
    builder.python = "3.12.8"  # another Python series: its environment is another one
    assert len(plan_work(request, builder).planned) == 4
    assert (
        len(plan_work(WorkRequest(request.versions, request.runners, 1, request.expression, None), builder).planned)
        == 4
    )


def test_a_sharded_run_is_answered_from_storage_too(tmp_path):
    from tests.test_engine_matrix import stored_setup
    from conformance.engine.shards import parse_shard
    import dataclasses

    request, builder, target, _ = stored_setup(tmp_path)
    sharded = dataclasses.replace(request, shard=parse_shard("1/1"))
    assert list(matrix.stored_cells(sharded, builder, "0.8.0", [target])) == [target.id]
    assert matrix.stored_run(sharded, builder, "0.8.0", [target]) is not None


def test_the_restore_script_says_how_many_files_it_restored(tmp_path):
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)], f"0.8.0-{MAC}": [cell(*VMAP)]})
    counts = []
    for platform in ("", MAC):
        output = tmp_path / f"output{platform}"
        output.write_text("")
        env = {
            **os.environ,
            "PYTHON": sys.executable,
            "SITE_URL": str(site),
            "RESULTS": str(tmp_path / f"r{platform}"),
            "PLATFORM": platform,
            "GITHUB_OUTPUT": str(output),
        }
        done = subprocess.run(
            ["bash", str(ROOT / ".github" / "scripts" / "restore-results.sh")],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0 and "restored" in done.stdout
        counts.append(output.read_text())
    # The report job compares its line with the plan job's: the count and which files.
    assert [line.split(",")[0] for line in counts] == ["restored=2 files", "restored=1 files"]
    assert counts[0] != counts[1]


def test_the_restore_output_tells_which_files_not_only_how_many(tmp_path):
    # The plan restored A (B's fetch failed: its cells were planned), the report job B (A's failed): equal counts, but
    # publishing would drop A, which no job reran.
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)], f"0.8.1-{LINUX}": [cell(*VMAP)]})
    said = []
    for missing in ("0.8.1", "0.8.0"):
        copy = tmp_path / f"site-{missing}"
        shutil.copytree(site, copy)
        (copy / "results" / f"{missing}-{LINUX}.json").unlink()
        output = tmp_path / f"output-{missing}"
        output.write_text("")
        env = {
            **os.environ,
            "PYTHON": sys.executable,
            "SITE_URL": str(copy),
            "RESULTS": str(tmp_path / f"r{missing}"),
            "GITHUB_OUTPUT": str(output),
        }
        subprocess.run(
            ["bash", str(ROOT / ".github" / "scripts" / "restore-results.sh")],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        said.append(output.read_text())
    assert said[0].startswith("restored=1 files") and said[0] != said[1]


def test_a_fetch_error_never_prints_the_site_urls_credentials(tmp_path):
    # http.client quotes the netloc it could not parse (`nonnumeric port: 'TOKEN@host'`), past the `://` scrubbing.
    for source in ("https://user:s3cr3tTOKEN@example.invalid/", "https://x:s3cr3tTOKEN@more@example.invalid/"):
        restored = restore_results(source, tmp_path / "results")
        assert restored.failure and "s3cr3tTOKEN" not in "\n".join(restored.lines()), restored.lines()


def test_names_from_the_index_never_break_the_one_line_log_nor_name_a_file_with_a_newline(tmp_path):
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    published = site / "results"
    good = published / f"0.8.0-{LINUX}.json"
    odd = f"0.8.1-{LINUX}.json\n"  # `$` matches before a final newline: RESULT_NAME.match takes it
    data = good.read_text().replace('"0.8.0"', '"0.8.1"').encode()
    (published / odd).write_bytes(data)
    index = json.loads((published / "index.json").read_text())
    index["files"] += [
        {"name": odd, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)},
        {"name": "x\n::error::injected", "sha256": "0" * 64, "size": 10},
    ]
    (published / "index.json").write_text(json.dumps(index))
    restored = restore_results(str(site), tmp_path / "results")
    assert restored.restored == [good.name]
    assert [p.name for p in (tmp_path / "results").iterdir()] == [good.name]
    lines = restored.lines()
    assert len(lines) == 3 and all("\n" not in line and "\r" not in line for line in lines), lines


def test_a_history_as_large_as_the_history_command_reads_is_restored(tmp_path):
    # history.json may grow to MAX_HISTORY_BYTES; one the restore refused would be replaced by a new one-entry history
    # when the report job publishes: the whole history lost.
    from conformance.results.history_file import MAX_HISTORY_BYTES

    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    big = json.dumps({"format": "jax-conformance-history", "version": 1, "entries": [], "pad": "x" * (20 * 2**20)})
    assert len(big) < MAX_HISTORY_BYTES
    (site / "history.json").write_text(big)
    restored = restore_results(str(site), tmp_path / "results", tmp_path / "previous")
    assert restored.history and (tmp_path / "previous" / "history.json").stat().st_size == len(big)


def test_a_history_the_site_holds_but_did_not_give_stops_the_publication(tmp_path, monkeypatch):
    # Absent (404: the first run with a history) starts a new history; a history.json the site holds but did not give
    # (site down, too large, a timeout) must not be replaced by a new one-entry history when the report job publishes.
    from conformance.results import restore

    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    absent = restore_results(str(site), tmp_path / "r1", tmp_path / "p1")
    assert not absent.history and not absent.history_problem and not (tmp_path / "p1" / "history.json.unread").exists()
    (site / "history.json").write_text(
        json.dumps({"format": "jax-conformance-history", "version": 1, "entries": [], "pad": "x" * 2000})
    )
    monkeypatch.setattr(restore, "MAX_HISTORY_BYTES", 1000)
    unread = restore_results(str(site), tmp_path / "r2", tmp_path / "p2")
    assert not unread.history and "larger than 1000 bytes" in unread.history_problem
    assert any("history.json could not be read" in line for line in unread.lines())
    assert (tmp_path / "p2" / "history.json.unread").is_file()
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "RESULTS": str(tmp_path / "r2"),
        "SITE": str(tmp_path / "out"),
        "PUBLISH": "1",
        "PREVIOUS": str(tmp_path / "p2"),
    }
    done = subprocess.run(
        ["bash", str(ROOT / ".github" / "scripts" / "render-report.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "not publishing" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "out" / "results").exists() and not (tmp_path / "out" / "history.json").exists()


def test_a_site_that_does_not_answer_at_all_stops_the_publication_too(tmp_path):
    # Index and history unreachable alike (site down, not a 404): the plan and the report job may both restore 0 files,
    # so the count check passes; the history the site holds must still not be replaced by a new one.
    down = restore_results("http://127.0.0.1:9/site/", tmp_path / "r", tmp_path / "p")
    assert down.failure and down.history_problem and (tmp_path / "p" / "history.json.unread").is_file()
    assert len(down.lines()) == 2 and "every cell runs" in down.lines()[0]
    first = restore_results(str(tmp_path / "no-site-yet"), tmp_path / "r2", tmp_path / "p2")  # 404 alike: a first run
    assert first.failure and not first.history_problem and not (tmp_path / "p2" / "history.json.unread").exists()


def test_a_history_the_history_command_refuses_still_publishes_the_results_and_keeps_it(tmp_path):
    # A history from a newer suite (a revert, an older branch's checkout) is refused by `history`, never overwritten;
    # the run's results and report must still publish, the site's history.json as it was.
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    newer = '{"format": "jax-conformance-history", "version": 99, "entries": []}\n'
    (site / "history.json").write_text(newer)
    restored = restore_results(str(site), tmp_path / "all-results", tmp_path / "previous")
    assert restored.history
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "RESULTS": str(tmp_path / "all-results"),
        "SITE": str(tmp_path / "out"),
        "PUBLISH": "1",
        "PREVIOUS": str(tmp_path / "previous"),
    }
    done = subprocess.run(
        ["bash", str(ROOT / ".github" / "scripts" / "render-report.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "newer" in done.stderr and (tmp_path / "out" / "index.html").is_file()
    assert (tmp_path / "out" / "results" / f"0.8.0-{LINUX}.json").is_file()
    assert (tmp_path / "out" / "history.json").read_text() == newer


def test_the_plan_and_run_agree_on_a_cell_whose_python_patch_changed(tmp_path):
    """Review of #30: the plan took a stored run's Python by series (3.13.x), run by exact version, so a runner
    whose 3.13 moved on by a patch reran cells the plan called answered, or not, by its neighbours in the shard."""
    from tests.test_engine_matrix import stored_setup
    from conformance.engine import ciwork

    request, builder, target, _ = stored_setup(tmp_path, python="3.13.0")
    builder.python = "3.13.5"  # the runner image's Python 3.13 moved on by a patch release
    work = WorkRequest(("0.8.0",), ("ubuntu-24.04",), 1, None, request.results)
    answered_by_plan = ciwork.pending(work, builder, "0.8.0", matrix.host_platform(), [target]) == 0
    answered_by_run = target.id in matrix.stored_cells(request, builder, "0.8.0", [target])
    assert answered_by_plan == answered_by_run


def test_a_file_the_index_names_twice_is_restored_once_and_not_said_to_be_set_aside(tmp_path):
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    index = json.loads((site / "results" / "index.json").read_text())
    index["files"] *= 2
    (site / "results" / "index.json").write_text(json.dumps(index))
    restored = restore_results(str(site), tmp_path / "results")
    assert restored.restored == [f"0.8.0-{LINUX}.json"] and restored.set_aside == {}
    assert restored.lines() == [f"restored 1 result file(s) from {site}"]


def test_a_file_larger_than_its_index_entry_is_not_read_past_that_size(tmp_path, monkeypatch):
    from conformance.results import restore

    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    index = json.loads((site / "results" / "index.json").read_text())
    index["files"][0]["size"] = 100  # the file is far larger: at most 101 bytes of it are read
    (site / "results" / "index.json").write_text(json.dumps(index))
    asked = []
    real = restore.fetch
    monkeypatch.setattr(restore, "fetch", lambda url, limit, *by: asked.append(limit) or real(url, limit, *by))
    restored = restore_results(str(site), tmp_path / "results")
    assert restored.restored == [] and "larger than 100 bytes" in restored.set_aside[f"0.8.0-{LINUX}.json"]
    assert asked[1] == 100


def test_a_file_named_twice_with_a_bad_entry_first_is_set_aside_once_and_not_restored(tmp_path):
    """A07: a bad entry and then the good one for one name printed "set aside ... its cells run" and then restored the
    file. Two entries that disagree leave nothing to trust: the file is set aside, once, and not written."""
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    index = json.loads((site / "results" / "index.json").read_text())
    bad = dict(index["files"][0], sha256="0" * 64)
    index["files"] = [bad, index["files"][0]]
    (site / "results" / "index.json").write_text(json.dumps(index))
    restored = restore_results(str(site), tmp_path / "results")
    name = f"0.8.0-{LINUX}.json"
    assert restored.restored == [] and list(restored.set_aside) == [name]
    assert "names it twice with different contents" in restored.set_aside[name]
    assert not (tmp_path / "results" / name).exists()
    assert [line for line in restored.lines() if name in line] == [
        f"jax-conformance: restore: set aside {name} (the index names it twice with different contents; neither is "
        f"restored); its cells run"
    ]


def test_a_restore_onto_a_full_disk_sets_the_file_aside_and_leaves_no_partial_file(tmp_path):
    """A06: writing past what the disk takes (here the file-size limit, which fails a write as a full disk does) gave
    an OSError traceback and left `.restoring-*` behind."""
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    into = tmp_path / "results"
    size = json.loads((site / "results" / "index.json").read_text())["files"][0]["size"]
    code = (
        f"import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, ({size // 2}, {size // 2})); "
        f"sys.path.insert(0, {str(ROOT / '.github' / 'scripts')!r}); from restore_results import main; "
        "sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site), "--into", str(into), "--keep", str(tmp_path / "keep")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert f"set aside 0.8.0-{LINUX}.json (cannot be written here (File too large)); its cells run" in done.stdout
    assert sorted(p.name for p in into.iterdir()) == [] and sorted(p.name for p in (tmp_path / "keep").iterdir()) == []


def trickling_site(pause_s: float) -> type[http.server.BaseHTTPRequestHandler]:
    """A request handler that promises 100,000 bytes and sends one every `pause_s` seconds (a site that never ends)."""
    import time

    class Trickle(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            try:
                for _ in range(100000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(pause_s)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    return Trickle


def test_a_site_trickling_bytes_is_cut_off_at_the_fetch_deadline(tmp_path, monkeypatch):
    """A05: the per-read timeout bounded each read, so a site sending a byte a second held the step for weeks."""
    import time

    from conformance.results import restore

    Trickle = trickling_site(pause_s=0.05)
    monkeypatch.setattr(restore, "FETCH_DEADLINE_S", 2)
    with serving(Trickle) as site:
        started = time.monotonic()
        restored = restore_results(site, tmp_path / "results")
        took = time.monotonic() - started
    assert restored.restored == [] and "took longer than 2 s to fetch" in restored.failure
    assert took < 60  # the deadline, not the 100000 bytes at 20 a second (83 minutes)


def test_a_reason_phrase_with_escape_sequences_reaches_the_log_escaped(tmp_path):
    """A09: the site's HTTP reason phrase went to the CI log raw, terminal escape sequences included."""

    class Hostile(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(503, "Down \x1b[2J\x1b[31mred\x07 ::error::x")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    with serving(Hostile) as site:
        restored = restore_results(site, tmp_path / "results")
    text = "\n".join(restored.lines())
    assert "\x1b" not in text and "\x07" not in text and "\\x1b[2J" in text and "red" in text


def test_a_site_trickling_its_headers_or_many_files_is_bounded_as_a_whole(tmp_path, monkeypatch):
    """Review of A05: the deadline was checked only while reading a body, so headers sent a byte at a time held the
    fetch, and an index naming many slow files held the restore for each of them in turn."""
    import time

    from conformance.results import restore

    class Headers(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            try:
                for byte in b"HTTP/1.0 200 OK\r\nX-Slow: " + b"y" * 100000:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(0.05)
            except OSError:
                pass

        def log_message(self, *args):
            pass

    monkeypatch.setattr(restore, "FETCH_DEADLINE_S", 2)
    with serving(Headers) as site:
        started = time.monotonic()
        restored = restore_results(site, tmp_path / "results")
        took = time.monotonic() - started
    assert "took longer than 2 s to fetch" in restored.failure and took < 30
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)], f"0.9.0-{LINUX}": [cell(*VMAP)]})
    monkeypatch.setattr(restore, "RESTORE_DEADLINE_S", -1)  # every file after the index is past the deadline
    late = restore_results(str(site), tmp_path / "late")
    assert late.restored == [] and all("ran past its -1 s" in why for why in late.set_aside.values())
    assert len(late.set_aside) == 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="this system has no FIFOs")
def test_a_local_site_whose_index_names_a_fifo_sets_it_aside_without_waiting(tmp_path):
    """Review of A05: urlopen of a file:// FIFO blocked for good."""
    site = site_with(tmp_path, {f"0.8.0-{LINUX}": [cell(*VMAP)]})
    target = site / "results" / f"0.8.0-{LINUX}.json"
    target.unlink()
    os.mkfifo(target)
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / '.github' / 'scripts')!r}); "
        "from restore_results import main; sys.exit(main(sys.argv[1:]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site), "--into", str(tmp_path / "results")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0 and "not a regular file" in done.stdout and "its cells run" in done.stdout


def test_the_publish_script_refuses_inputs_that_do_not_exist_in_one_line(tmp_path):
    """`.github/scripts/publish_results.py` (the report job's publishing step, outside the package so that cli.py is
    its one argparse user): no input folder exists, nothing is written, one line, exit 2."""
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / ".github" / "scripts" / "publish_results.py"),
            str(tmp_path / "missing"),
            "--out",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and not (tmp_path / "site").exists()
    assert done.stderr == f"jax-conformance: publish: none of {tmp_path / 'missing'} exists; nothing to publish\n"
