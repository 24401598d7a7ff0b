"""Faults and hostile input, one test per item: environments, result files, output, and the command line."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conformance import cli
from conformance.envs.builder import MARKER, EnvironmentBuilder
from conformance.envs.index import PackageIndex
from conformance.envs.interpreters import Interpreter
from conformance.errors import ConformanceError
from conformance.report.html import render_html, rerun_command
from conformance.report.markdown import markdown_summary
from conformance.report.model import build_model
from conformance.results.load import ResultsError, load_result_file, read_results_tolerantly
from tests.fake_index import PAGES

GOLDEN = Path(__file__).parent / "golden"
OLD_FILE = GOLDEN / "0.4.38-linux-x86_64.json"


# ---------------------------------------------------------------- environments


class FakeUv:
    """Stands in for uv: `venv` makes the folder, `pip install` puts jax and jaxlib into site-packages."""

    def __init__(self, overlap: int = 0, fail_install: str = "") -> None:
        self.overlap = overlap  # an install waits until this many callers have reached the build lock
        self.at_lock = threading.Semaphore(0)
        self.fail_install = fail_install
        self.calls: list[list[str]] = []
        self.lock = threading.Lock()

    def __call__(self, argv, **kwargs):
        with self.lock:
            self.calls.append(list(argv))
        if argv[1] == "-c":  # the import check of a freshly built environment
            return subprocess.CompletedProcess(argv, 0, "", "")
        if argv[1] == "venv":
            target = Path(argv[-1])
            (target / "bin").mkdir(parents=True)
            (target / "bin" / "python").write_text("")
        else:
            if self.fail_install:
                return subprocess.CompletedProcess(argv, 1, "", self.fail_install)
            for _ in range(self.overlap):  # the other caller now waits at the lock this build holds
                assert self.at_lock.acquire(timeout=60), "the other build never reached the lock"
            python = Path(argv[argv.index("--python") + 1])
            site = python.parent.parent / "lib" / "python3.13" / "site-packages"
            for name in ("jax", "jaxlib"):
                (site / name).mkdir(parents=True, exist_ok=True)
                (site / name / "__init__.py").write_text("")
        return subprocess.CompletedProcess(argv, 0, "", "")

    @property
    def builds(self) -> int:
        return sum(call[1] == "venv" for call in self.calls)


def builder(tmp_path: Path, uv: FakeUv) -> EnvironmentBuilder:
    made = EnvironmentBuilder(
        root=tmp_path / "cache",
        index=PackageIndex(tmp_path / "cache", fetch=PAGES.__getitem__),
        run=uv,
        interpreters=[Interpreter("/opt/python3.13/bin/python3", "3.13.0")],
    )
    return made


@pytest.fixture(autouse=True)
def fake_uv_binary(monkeypatch):
    monkeypatch.setattr("conformance.envs.builder.uv_binary", lambda: "uv")


def test_two_runs_building_the_same_environment_at_once_both_succeed(tmp_path, monkeypatch):
    from filelock import FileLock

    uv = FakeUv(overlap=2)

    class SeenLock(FileLock):
        def acquire(self, *args, **kwargs):
            uv.at_lock.release()
            return super().acquire(*args, **kwargs)

    monkeypatch.setattr("conformance.envs.builder.FileLock", SeenLock)
    outcomes = []

    def prepare():
        try:
            outcomes.append(builder(tmp_path, uv).prepare("0.4.38").python)
        except Exception as exc:  # noqa: BLE001 - the test reports it
            outcomes.append(exc)

    threads = [threading.Thread(target=prepare) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(isinstance(o, str) and Path(o).exists() for o in outcomes), outcomes
    assert uv.builds == 1


def test_interrupted_build_leaves_nothing_behind(tmp_path):
    class Interrupting(FakeUv):
        def __call__(self, argv, **kwargs):
            if argv[1] == "pip":
                raise KeyboardInterrupt
            return super().__call__(argv, **kwargs)

    with pytest.raises(KeyboardInterrupt):
        builder(tmp_path, Interrupting()).prepare("0.4.38")
    assert list((tmp_path / "cache" / "envs").glob("*.building-*")) == []
    env = builder(tmp_path, FakeUv()).prepare("0.4.38")
    stale = env.path.with_name(env.path.name + ".building-999999999")
    stale.mkdir()
    builder(tmp_path, FakeUv()).prepare("0.4.38")
    assert not stale.exists()


@pytest.mark.parametrize(
    "damage, why",
    [
        (lambda env: (env / MARKER).write_text('{"layout": 2, "ja'), "its marker is unreadable"),
        (lambda env: (env / MARKER).write_text(""), "its marker is unreadable"),
        (lambda env: (env / "bin" / "python").unlink(), "its bin/python is missing"),
        (
            lambda env: (env / "lib/python3.13/site-packages/jaxlib/__init__.py").unlink(),
            "jaxlib is missing from its site-packages",
        ),
    ],
)
def test_a_damaged_environment_is_rebuilt_once_with_one_notice(tmp_path, damage, why):
    uv = FakeUv()
    first = builder(tmp_path, uv).prepare("0.4.38")
    damage(first.path)
    again = builder(tmp_path, uv)
    rebuilt = again.prepare("0.4.38")
    assert rebuilt.built_now and uv.builds == 2
    assert len(again.notices) == 1 and why in again.notices[0]
    third = builder(tmp_path, uv)
    assert not third.prepare("0.4.38").built_now and third.notices == []


def test_a_truncated_index_cache_is_fetched_again(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "index-jax.json").write_text('{"files": [')
    index = PackageIndex(cache, fetch=PAGES.__getitem__)
    assert "0.4.38" in index.releases("jax")
    assert index.notices and "unreadable" in index.notices[0]
    assert json.loads((cache / "index-jax.json").read_text())


def test_a_release_without_a_jaxlib_is_one_line_and_nothing_is_cached(tmp_path):
    class NoJaxlib(FakeUv):
        def __call__(self, argv, **kwargs):
            done = super().__call__(argv, **kwargs)
            if argv[1] == "pip":
                site = Path(argv[argv.index("--python") + 1]).parent.parent / "lib" / "python3.13" / "site-packages"
                (site / "jaxlib" / "__init__.py").unlink()
            return done

    with pytest.raises(ConformanceError) as caught:
        builder(tmp_path, NoJaxlib()).prepare("0.4.38")
    assert "brings no jaxlib wheel for Python 3.13.0" in str(caught.value) and "\n" not in str(caught.value)
    assert [p.name for p in (tmp_path / "cache" / "envs").iterdir() if not p.name.startswith(".")] == []


def test_a_release_that_cannot_be_installed_is_one_line_and_nothing_is_cached(tmp_path):
    uv = FakeUv(fail_install="No solution found when resolving dependencies: jaxlib has no wheel")
    with pytest.raises(ConformanceError) as caught:
        builder(tmp_path, uv).prepare("0.4.38")
    assert "could not build the environment for jax 0.4.38" in str(caught.value) and "\n" not in str(caught.value)
    assert [p.name for p in (tmp_path / "cache" / "envs").iterdir() if not p.name.startswith(".")] == []


def test_pinned_environments_install_with_hash_checking_and_a_mismatch_says_how_to_fix_it(tmp_path):
    pins = tmp_path / "pins"
    pins.mkdir()
    (pins / "jax-0.4.38.txt").write_text("jax==0.4.38 \\\n    --hash=sha256:00\n")
    uv = FakeUv()
    made = builder(tmp_path, uv)
    made.pins_dir = pins
    env = made.prepare("0.4.38")
    install = next(call for call in uv.calls if call[1] == "pip")
    assert "--require-hashes" in install and str(pins / "jax-0.4.38.txt") in install
    assert len(env.pins_hash) == 64
    (pins / "jax-0.4.38.txt").write_text("jax==0.4.38 \\\n    --hash=sha256:11\n")
    failing = builder(tmp_path, FakeUv(fail_install="error: Hash mismatch for `jax==0.4.38`"))
    failing.pins_dir = pins
    with pytest.raises(ConformanceError, match="do not match the package index.*jax-conformance pin 0.4.38"):
        failing.prepare("0.4.38")


def test_markers_are_written_atomically(tmp_path):
    env = builder(tmp_path, FakeUv()).prepare("0.4.38")
    assert json.loads((env.path / MARKER).read_text())["jax"] == "0.4.38"
    assert [p for p in env.path.iterdir() if p.name.endswith(".tmp")] == []


# ---------------------------------------------------------------- result files


def golden() -> dict:
    return json.loads(OLD_FILE.read_text(encoding="utf-8"))


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d["tests"][0]["metadata"].pop("status"), "tests[0].metadata.status` is missing"),
        (lambda d: d["tests"][0]["metadata"].update(case=7), "tests[0].metadata.case` should be str"),
        (lambda d: d["tests"][0]["metadata"].update(diff="oops"), "tests[0].metadata.diff` should be list"),
        (lambda d: d["tests"][0]["metadata"].update(duration_s="1s"), "tests[0].metadata.duration_s` should be float"),
        (lambda d: d["jax_conformance"].pop("jax"), "jax_conformance.jax` should be a JAX version"),
        (lambda d: d["jax_conformance"].update(jax="0.4.38; rm -rf ~"), "jax_conformance.jax` should be a JAX version"),
        (lambda d: d["jax_conformance"].update(schema_version=0), "schema_version` is 0"),
    ],
)
def test_a_field_of_the_wrong_shape_is_one_line_naming_the_file_and_the_field(tmp_path, edit, field):
    data = golden()
    edit(data)
    path = write(tmp_path / "0.4.38-linux-x86_64.json", data)
    with pytest.raises(ResultsError) as caught:
        load_result_file(path)
    assert str(path) in str(caught.value) and field in str(caught.value) and "\n" not in str(caught.value)


def test_report_renders_every_readable_file_names_the_others_and_exits_1(tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    write(results / "0.4.38-linux-x86_64.json", golden())
    write(results / "0.5.3-linux-x86_64.json", "{ stray")
    write(results / "notes.json", "not a result file and not named like one")
    out = tmp_path / "index.html"
    assert cli.main(["report", str(results), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "0.5.3-linux-x86_64.json" in err and "notes.json" not in err
    assert "jax 0.4.38" in out.read_text()


def test_report_refuses_to_overwrite_one_of_its_inputs(tmp_path, capsys):
    target = write(tmp_path / "0.4.38-linux-x86_64.json", golden())
    assert cli.main(["report", str(target), "-o", str(target)]) == 2
    assert "is a result file; write the output elsewhere" in capsys.readouterr().err
    assert json.loads(target.read_text())


def test_hostile_strings_never_break_rendering_and_stay_visible(tmp_path):
    data = golden()
    meta = data["tests"][0]["metadata"]
    meta["observation"] = {"text": "\udcff\x00\x1b[31m<script>alert(1)</script>`x`"}
    meta["stderr_tail"] = "\udcfe\x07bell"
    meta["reason"] = "<img src=x onerror=alert(1)>"
    data["jax_conformance"]["platform"] = "linux-x86_64"
    path = tmp_path / "0.4.38-linux-x86_64.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    table = build_model(read_results_tolerantly(path).files, [])
    page = render_html(table, "2026-11-29T00:00:00+00:00")
    page.encode("utf-8")
    assert "<script>alert(1)" not in page and "<img" not in page
    block = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    shown = json.dumps(block, ensure_ascii=False)
    assert "<script>alert(1)</script>" in shown and "<img src=x" in shown
    assert "\\\\udcff" in shown and "\\\\x00" in shown and "\\\\x07bell" in shown
    markdown = markdown_summary(table)
    assert "<script>" not in markdown and "<img" not in markdown and "`x`" not in markdown


def test_markdown_escapes_a_crafted_platform(tmp_path):
    data = golden()
    data["jax_conformance"]["platform"] = "linux-x86_64"
    path = write(tmp_path / "0.4.38-linux-x86_64.json", data)
    loaded = read_results_tolerantly(path).files
    loaded[0].header.platform = "<script>alert(1)</script>"
    assert "<script>" not in markdown_summary(build_model(loaded, []))


def test_commands_are_shell_quoted():
    assert rerun_command("0.4.38", "m.c[a b]") == "jax-conformance run --jax 0.4.38 -k 'm.c[a b]'"
    assert rerun_command("0.4.38; rm -rf ~", "x") == "jax-conformance run --jax '0.4.38; rm -rf ~' -k x"


def test_a_full_disk_is_one_line_naming_the_file_and_keeps_finished_files(tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    results.mkdir()
    kept = write(results / "0.4.38-linux-x86_64.json", golden())

    def full(path, text):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr("conformance.report.html.write_text_atomically", full)
    assert cli.main(["report", str(results), "-o", str(tmp_path / "index.html")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and "index.html" in err[0]
    assert json.loads(kept.read_text())


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "-j", "0", "--jax", "0.4.38"], "-j 0: the number of cells run at once must be at least 1"),
        (["run", "--retries", "-1", "--jax", "0.4.38"], "--retries -1: the number of retries cannot be negative"),
    ],
)
def test_bad_numbers_are_refused(tmp_path, capsys, argv, message):
    assert cli.main([*argv, "--results", str(tmp_path / "r")]) == 2
    assert message in capsys.readouterr().err


def test_report_path_is_checked_before_a_run_starts(tmp_path, capsys):
    (tmp_path / "taken").mkdir()
    assert cli.main(["run", "--jax", "0.4.38", "--results", str(tmp_path / "r"), "-o", str(tmp_path / "taken")]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_named_matrices_come_before_local_folders(tmp_path, monkeypatch):
    from conformance.envs.matrix import MATRIX_DIR, matrix_path

    monkeypatch.chdir(tmp_path)
    (tmp_path / "quick").mkdir()
    assert matrix_path("quick") == MATRIX_DIR / "quick.toml"


def test_matrix_versions_must_be_versions(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('versions = ["0.4.38", "latest; rm -rf ~"]\n')
    assert cli.main(["run", "--matrix", str(bad)]) == 2
    assert "is not a JAX version" in capsys.readouterr().err


def test_the_cli_works_under_pythonoptimize_2():
    done = subprocess.run(
        [sys.executable, "-m", "conformance", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONOPTIMIZE": "2"},
    )
    assert done.returncode == 0 and "Documented JAX behaviours" in done.stdout


def test_user_pythonpath_never_reaches_a_child(run_fixture_cell, monkeypatch, tmp_path):
    """A user's PYTHONPATH holding packages that raise on import (`conformance`, `jax`) and a `sitecustomize` that
    leaves a mark: wherever a leak put it on the child's path, before or after our source, the cell would fail or
    the mark would appear."""
    shadow = tmp_path / "shadow"
    marker = tmp_path / "sitecustomize-ran"
    for package in ("conformance", "jax"):
        (shadow / package).mkdir(parents=True)
        (shadow / package / "__init__.py").write_text(f"raise ImportError('shadow {package} imported')\n")
    (shadow / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow))
    result = run_fixture_cell("own_process")
    assert result.status.value == "conforms", result.reason
    assert not marker.exists()


def test_oversized_result_files_and_fields_are_bounded_when_read(tmp_path):
    """issue 19 item 11: a huge file is refused in one line; huge fields of a cell are bounded as when written."""
    import json as _json

    from conformance.results.load import MAX_RESULT_BYTES, ResultsError, load_result_file
    from tests.synthetic_results import cell, write

    path = write(
        tmp_path,
        "0.12.0.1",
        "linux-x86_64",
        [
            cell(
                "a.b",
                "",
                "differs",
                {"k": "v" * 300_000},
                details={"x": "y" * 300_000},
                stdout_tail="o" * 100_000,
                reason="r" * 100_000,
                attempts=[{"status": "differs"}] * 500,
            )
        ],
    )
    [loaded] = load_result_file(path).cells
    assert len(_json.dumps(loaded.observation)) < 60_000 and len(_json.dumps(loaded.details)) < 30_000
    assert len(loaded.stdout_tail) <= 4000 and len(loaded.reason) <= 2000 and len(loaded.attempts) <= 20
    big = tmp_path / "big" / "0.12.0.1-linux-x86_64.json"
    big.parent.mkdir()
    with open(big, "wb") as out:
        out.truncate(MAX_RESULT_BYTES + 1)
    with pytest.raises(ResultsError, match="larger than any result file the suite writes"):
        load_result_file(big)


def test_no_output_of_any_command_can_overwrite_a_result_file_or_another_output(tmp_path, capsys):
    """issue 19 item 7: run -o, gate --markdown and report -o/--markdown/--junit are refused, in one line, when they
    name a result file or each other; nothing is written."""
    from conformance import cli
    from tests.synthetic_results import cell, write

    results = tmp_path / "results"
    stored = write(results, "0.12.0.1", "linux-x86_64", [cell("a.b")])
    other = write(tmp_path / "b", "0.8.3", "linux-x86_64", [cell("a.b")])
    before = stored.read_text()
    same = tmp_path / "out.md"
    attempts = [
        ["run", "--jax", "0.12.0.1", "--results", str(results), "-o", str(stored)],
        ["run", "--jax", "0.12.0.1", "--results", str(results), "-o", str(results / "0.11.2-linux-x86_64.json")],
        ["gate", "--baseline", str(other), "--candidate", str(stored), "--markdown", str(stored)],
        ["report", str(results), "-o", str(same), "--markdown", str(same)],
        ["report", str(results), "-o", str(tmp_path / "r.html"), "--junit", str(other)],
    ]
    for argv in attempts:
        assert cli.main(argv) == 2, argv
        err = capsys.readouterr().err
        said = ("is a result file", "named like a result file", "both name")
        assert err.count("\n") == 1 and any(words in err for words in said), err
    assert stored.read_text() == before and not same.exists()


def test_small_bad_inputs_are_one_line(tmp_path, capsys, monkeypatch):
    """issue 19 item 19: a huge shard count, a cache that is a file, a disk full before pytest starts, and a stdout
    that cannot encode the listing are one line (or escapes), never a traceback or leftovers."""
    from conformance import cli
    from conformance.engine import matrix

    assert cli.main(["run", "--jax", "0.12.0.1", "--shard", "1/" + "9" * 400, "--results", str(tmp_path / "r")]) == 2
    assert "larger than any number of cells" in capsys.readouterr().err
    assert (
        cli.main(["run", "--jax", "0.12.0.1", "-k", "cache_size", "--shard", "1/500", "--results", str(tmp_path / "r")])
        == 2
    )
    assert "use at most" in capsys.readouterr().err
    cache = tmp_path / "cache-file"
    cache.write_text("not a folder")
    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(cache))
    assert cli.main(["matrix", "latest"]) == 2
    err = capsys.readouterr().err
    assert "is a file; set JAX_CONFORMANCE_CACHE to a folder" in err and err.count("\n") == 1
    monkeypatch.delenv("JAX_CONFORMANCE_CACHE")

    results = tmp_path / "full"
    results.mkdir()
    real_write = Path.write_text

    def disk_full(self, *args, **kwargs):
        if self.name.endswith(".cells"):
            raise OSError(28, "No space left on device", str(self))
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", disk_full)
    env = type("Env", (), {"python": sys.executable, "version": "0.12.0.1"})()
    with pytest.raises(OSError):
        matrix.run_package(env, matrix.RunRequest(versions=("0.12.0.1",), results=results), None)
    assert list(results.iterdir()) == []


def test_list_on_a_stdout_that_cannot_encode_it_escapes_instead_of_crashing(tmp_path):
    """issue 19 item 19: `list` redirected to a non-UTF-8 stdout (Windows, a pipe with another encoding)."""
    import subprocess

    from conformance.engine.runner import SOURCE_ROOT

    done = subprocess.run(
        [sys.executable, "-m", "conformance", "list"],
        cwd=SOURCE_ROOT,
        capture_output=True,
        env={**__import__("os").environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": SOURCE_ROOT},
    )
    assert done.returncode == 0 and b"Traceback" not in done.stderr and b"cells in" in done.stdout
