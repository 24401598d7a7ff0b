"""JAX builds that are not plain index releases, without building anything: wheel folders, given interpreters,
index options, and versions with pre-release, dev and local parts wherever a version is shown or compared."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance import cli
from conformance.child.envinfo import distribution_version
from conformance.core.versions import NEWER, OLDER, SAME, direction
from conformance.decide.bisect import releases_between
from conformance.decide.diff import diff_sets, result_set
from conformance.decide.gate import gate
from conformance.decide.render import gate_text
from conformance.engine.runner import reproduction_command
from conformance.core.case import find_case
from conformance.envs.index import IndexOptions, PackageIndex, sort_versions, without_credentials
from conformance.envs.wheels import read_wheels
from conformance.errors import ConformanceError
from conformance.report.markdown import markdown_summary
from conformance.report.model import build_model, origin_text
from conformance.results.schema import RunHeader, is_version
from conformance.results.store import result_name
from conformance.results.versions import release_of, version_order
from tests.fake_index import fake_builder
from tests.synthetic_results import VMAP, cell, files, write

LINUX = ["manylinux_2_27_x86_64", "manylinux2014_x86_64", "linux_x86_64"]


def make_wheel(folder: Path, name: str, version: str | None = None, requires_python: str = ">=3.12") -> Path:
    """A minimal wheel file: its METADATA (with `version`, default the file name's) and nothing else."""
    folder.mkdir(parents=True, exist_ok=True)
    project, file_version = name.split("-")[:2]
    path = folder / name
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            f"{project}-{file_version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {project}\nVersion: {version or file_version}\n"
            f"Requires-Python: {requires_python}\n\n",
        )
    return path


# --- versions ------------------------------------------------------------------------------------------------------


def test_pre_dev_and_local_versions_are_versions_and_sort_in_pep440_order():
    shuffled = ["0.13.0", "0.12.0.1+corp.3", "0.13.0rc1", "0.12.0.1", "0.13.0.dev20261201", "0.12.0.2"]
    ordered = ["0.12.0.1", "0.12.0.1+corp.3", "0.12.0.2", "0.13.0.dev20261201", "0.13.0rc1", "0.13.0"]
    assert all(is_version(v) for v in shuffled)
    assert sorted(shuffled, key=version_order) == ordered
    assert sort_versions(shuffled) == ordered
    assert release_of("0.12.0.1+corp.3") == "0.12.0.1"
    assert release_of("not a version") == "not a version" and release_of("0.13.0rc1") == "0.13.0rc1"
    assert result_name("0.12.0.1+corp.3", "linux-x86_64") == "0.12.0.1+corp.3-linux-x86_64.json"


def test_a_local_build_of_the_documented_release_is_the_documented_release():
    assert direction("0.12.0.1+corp.3") == SAME
    assert direction("0.13.0rc1") == NEWER and direction("0.13.0.dev20261201") == NEWER
    assert direction("0.11.2+corp.1") == OLDER


def test_report_columns_follow_pep440_order_and_words_follow_the_direction(tmp_path):
    runs = [
        files(v, "linux-x86_64", [cell(VMAP, "vmap", "differs", known_issue=True)])
        for v in ("0.13.0", "0.12.0.1+corp.3", "0.13.0rc1", "0.11.2", "0.13.0.dev20261201")
    ]
    model = build_model(runs, [])
    assert [c.jax for c in model.columns] == ["0.11.2", "0.12.0.1+corp.3", "0.13.0.dev20261201", "0.13.0rc1", "0.13.0"]
    (row,) = [r for section in model.sections for case in section.cases for r in case.params]
    # A known issue gone: "bug absent" before the documented release, "changed: maybe fixed" from it on.
    assert [c.word for c in row.cells] == ["bug absent"] + ["changed: maybe fixed"] * 4
    summary = markdown_summary(model)
    assert "0.12.0.1+corp.3" in summary and summary.index("0.11.2") < summary.index("0.12.0.1+corp.3")


def test_newest_patch_per_minor_keeps_a_build_beside_its_release():
    runs = [
        files(v, "linux-x86_64", [cell("config.x")]) for v in ("0.12.0", "0.12.0.1", "0.12.0.1+corp.3", "0.13.0rc1")
    ]
    newest = {c.jax: c.newest_in_series for c in build_model(runs, []).columns}
    assert newest == {"0.12.0": False, "0.12.0.1": True, "0.12.0.1+corp.3": True, "0.13.0rc1": True}


def test_gate_and_diff_order_and_name_local_builds(tmp_path):
    base = write(tmp_path / "a", "0.12.0.1", "linux-x86_64", [cell(VMAP, "vmap", "conforms", known_issue=True)])
    build = write(tmp_path / "b", "0.12.0.1+corp.3", "linux-x86_64", [cell(VMAP, "vmap", "differs", known_issue=True)])
    from conformance.results.load import load_results

    outcome = gate(
        diff_sets(result_set(load_results(base), "baseline"), result_set(load_results(build), "candidate")), []
    )
    text = gate_text(outcome, "gate")
    assert "conforms (bug still present) -> differs (changed: maybe fixed) (jax 0.12.0.1 -> 0.12.0.1+corp.3)" in text
    assert outcome.exit_code == 0
    write(tmp_path / "b", "0.12.0.1", "linux-x86_64", [cell(VMAP, "vmap", "conforms", known_issue=True)])
    newest = result_set(load_results(tmp_path / "b"), "candidate", newest=True)
    assert newest.jax("linux-x86_64") == "0.12.0.1+corp.3"  # a build of 0.12.0.1 is newer than 0.12.0.1


def test_bisect_ranges_take_pre_releases_and_dev_builds_as_ends_only():
    listed = ["0.12.0", "0.12.0.1", "0.13.0.dev20261201", "0.13.0rc1", "0.13.0"]
    assert releases_between(listed, "0.12.0.1", "0.13.0rc1") == ["0.12.0.1", "0.13.0rc1"]
    assert releases_between(listed, "0.12.0", "0.13.0") == ["0.12.0", "0.12.0.1", "0.13.0"]


def test_a_local_build_reproduces_from_its_wheels_not_from_the_index():
    case = find_case("config.environment_info")
    assert reproduction_command(case, "", "0.12.0.1+corp.3").startswith("jax-conformance run --wheels WHEELS_DIR -k")
    assert reproduction_command(case, "", "0.13.0rc1").startswith("jax-conformance run --jax 0.13.0rc1 -k")


def test_the_header_records_the_source_and_reads_old_files_without_one():
    header = RunHeader.from_json(
        {
            "schema_version": 3,
            "jax": "0.12.0.1+corp.3",
            "platform": "linux-x86_64",
            "source": {"kind": "wheels", "wheels": [{"name": "jax.whl", "sha256": "ab" * 32}]},
            "jax_module_version": "0.12.0.1",
            "unknown_future_key": 1,
        }
    )
    assert header.source["kind"] == "wheels" and header.jax_module_version == "0.12.0.1"
    assert RunHeader.from_json({"schema_version": 3, "jax": "0.12.0.1", "platform": "linux-x86_64"}).source == {}


def test_the_report_names_where_a_build_came_from_without_machine_paths():
    assert (
        origin_text({"kind": "python", "python": "/home/alice/envs/x/bin/python"})
        == "an existing interpreter (not built by the suite)"
    )
    wheels = origin_text(
        {
            "kind": "wheels",
            "wheels": [{"name": "jax-0.12.0.1+corp.3-py3-none-any.whl", "sha256": "0123456789abcdef" * 4}],
        }
    )
    assert wheels == "wheel files jax-0.12.0.1+corp.3-py3-none-any.whl (sha256 0123456789ab)"
    assert (
        origin_text({"kind": "index", "index_url": "https://tok@mirror.corp:8443/pypi/simple"})
        == "the package index mirror.corp:8443"
    )
    assert origin_text({}) == "the package index"


def test_the_installed_distribution_names_the_version():
    assert distribution_version("packaging") is not None
    assert distribution_version("no-such-distribution-here") is None


# --- index options -------------------------------------------------------------------------------------------------


def test_index_options_go_to_uv_and_are_recorded_without_credentials():
    options = IndexOptions(
        "https://user:secret@mirror.corp/simple/", ("https://nightly.example/simple",), ("/srv/wheels",), pre=True
    )
    assert options.uv_args() == [
        "--index-url",
        "https://user:secret@mirror.corp/simple/",
        "--extra-index-url",
        "https://nightly.example/simple",
        "--find-links",
        "/srv/wheels",
        "--prerelease",
        "allow",
    ]
    described = options.describe()
    assert described == {
        "index_url": "https://mirror.corp/simple",
        "extra_index_urls": ["https://nightly.example/simple"],
        "find_links": ["wheels"],
        "pre": True,
    }
    assert "secret" not in json.dumps(described)
    assert without_credentials("https://pypi.org/simple") == "https://pypi.org/simple"
    assert not IndexOptions().given and IndexOptions().uv_args() == []


def test_the_index_reads_every_given_index_and_caches_apart(tmp_path, monkeypatch):
    asked = []

    def fetch(project, base=None, timeout=30.0):
        asked.append(base)
        return {"files": [{"filename": f"jax-{'0.13.0rc1' if 'nightly' in base else '0.12.0.1'}-py3-none-any.whl"}]}

    monkeypatch.setattr("conformance.envs.index.fetch_project_page", fetch)
    index = PackageIndex(tmp_path, options=IndexOptions("https://mirror.corp/simple", ("https://nightly.ex/simple",)))
    assert sorted(index.releases("jax")) == ["0.12.0.1", "0.13.0rc1"]
    assert asked == ["https://mirror.corp/simple", "https://nightly.ex/simple"]
    assert index.cache_file("jax").name != PackageIndex(tmp_path).cache_file("jax").name == "index-jax.json"


def test_environments_are_built_with_the_index_options_and_cached_apart(tmp_path):
    commands = []

    def run(argv, **kwargs):  # the venv is made; the install stops the build
        commands.append(argv)
        return subprocess.CompletedProcess(argv, 0 if "venv" in argv else 1, "", "stop here")

    options = IndexOptions("https://mirror.corp/simple", pre=True)
    builder = fake_builder(tmp_path, ["3.12.1"])
    builder.options, builder.run = options, run
    builder.pins_dir = tmp_path / "no-pins"
    with pytest.raises(ConformanceError):
        builder.prepare("0.12.0.1")
    install = commands[-1]
    assert install[install.index("--index-url") + 1] == "https://mirror.corp/simple"
    assert install[install.index("--prerelease") + 1] == "allow"
    assert "jax[cpu]==0.12.0.1" in install
    staging = Path(commands[0][-1]).name
    assert "-idx" + options.digest() in staging  # loose requirements from another index: another environment


def test_matrix_latest_reads_the_given_index(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(tmp_path))
    monkeypatch.setattr(
        "conformance.envs.index.fetch_project_page",
        lambda project, base=None, timeout=30.0: {
            "files": [{"filename": f"jax-{v}-py3-none-any.whl"} for v in ("0.11.2", "0.12.0.1", "0.13.0rc1")]
            if "mirror" in base
            else []
        },
    )
    assert cli.main(["matrix", "latest", "--index-url", "https://mirror.corp/simple"]) == 0
    assert capsys.readouterr().out.split() == ["0.11.2", "0.12.0.1"]  # without --pre no pre-release joins `latest`
    assert cli.main(["matrix", "latest", "--index-url", "https://mirror.corp/simple", "--pre"]) == 0
    assert capsys.readouterr().out.split() == ["0.12.0.1", "0.13.0rc1"]


# --- wheel folders -------------------------------------------------------------------------------------------------


def test_a_wheel_folder_gives_the_metadata_version_and_a_digest_of_its_files(tmp_path):
    folder = tmp_path / "wheels"
    make_wheel(folder, "jax-0.12.0.1+corp.3-py3-none-any.whl")
    make_wheel(folder, "jaxlib-0.12.0.1-cp313-cp313-manylinux_2_27_x86_64.whl")
    found = read_wheels(folder, LINUX)
    assert found.jax_version == "0.12.0.1+corp.3" and found.jaxlib.name.startswith("jaxlib-0.12.0.1")
    assert found.requires_python == ">=3.12" and found.cp_tags == {"cp313"}
    assert [w["name"] for w in found.describe()] == sorted(p.name for p in folder.iterdir())
    before = found.digest
    make_wheel(folder, "jax-0.12.0.1+corp.3-py3-none-any.whl", requires_python=">=3.13")  # rebuilt: other bytes
    assert read_wheels(folder, LINUX).digest != before


@pytest.mark.parametrize(
    "names, message",
    [
        ([], "holds no jax wheel (found: no wheel files)"),
        (["jaxlib-0.12.0.1-cp313-cp313-manylinux_2_27_x86_64.whl"], "holds no jax wheel"),
        (
            ["jax-0.12.0.1-py3-none-any.whl", "jaxlib-0.12.0.1-cp313-cp313-win_amd64.whl"],
            "is built for win_amd64, not for this machine",
        ),
        (["jax-0.12.0.1-py3-none-any.whl", "jax-0.12.0.2-py3-none-any.whl"], "holds 2 jax wheels"),
    ],
)
def test_a_wheel_folder_that_cannot_be_tested_is_one_line(tmp_path, names, message):
    folder = tmp_path / "wheels"
    folder.mkdir()
    for name in names:
        make_wheel(folder, name)
    with pytest.raises(ConformanceError) as raised:
        read_wheels(folder, LINUX)
    assert message in str(raised.value) and "\n" not in str(raised.value)


# --- bad input on the command line: one line, exit 2, nothing stored touched ------------------------------------------


@pytest.fixture
def stored(tmp_path):
    """A results folder holding one result file; returns a function that says whether it is untouched."""
    results = tmp_path / "results"
    path = write(results, "0.12.0.1", "linux-x86_64", [cell("config.environment_info")])
    before = path.read_bytes()
    return results, lambda: sorted(os.listdir(results)) == [path.name] and path.read_bytes() == before


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("jax-conformance: error: ")
    return err[0]


def plain_venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def site_packages(python: Path) -> Path:
    found = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(found.stdout.strip())


def test_bad_python_targets_are_one_line_and_touch_nothing(tmp_path, stored, capsys):
    results, untouched = stored
    not_python = tmp_path / "not-python"
    not_python.write_text("this is no interpreter\n")
    not_python.chmod(0o755)
    no_jax = plain_venv(tmp_path / "no-jax")
    broken = plain_venv(tmp_path / "broken-jax")
    shutil.copytree(Path(__file__).parent / "broken_jax", site_packages(broken), dirs_exist_ok=True)
    cases = [
        (tmp_path / "missing", "no such file"),
        (not_python, "not a Python interpreter"),
        (no_jax, "jax is not installed in it"),
        (broken, "jax 0.12.0.1 is installed but does not import (ImportError: jaxlib is missing: a broken install)"),
    ]
    for python, message in cases:
        assert (
            cli.main(["run", "--python", str(python), "-k", "config.environment_info", "--results", str(results)]) == 2
        )
        line = one_error_line(capsys)
        assert message in line, line
        assert untouched()
    assert cli.main(["gate", "--from", "0.12.0.1", "--to-python", str(no_jax), "--results", str(results)]) == 2
    assert "jax is not installed" in one_error_line(capsys) and untouched()


def test_bad_wheel_folders_are_one_line_and_touch_nothing(tmp_path, stored, capsys, monkeypatch):
    results, untouched = stored
    empty = tmp_path / "empty"
    empty.mkdir()
    other = tmp_path / "other-platform"
    make_wheel(other, "jax-0.12.0.1-py3-none-any.whl")
    make_wheel(
        other,
        "jaxlib-0.12.0.1-cp313-cp313-win_amd64.whl"
        if sys.platform != "win32"
        else "jaxlib-0.12.0.1-cp313-cp313-manylinux_2_27_x86_64.whl",
    )
    for folder, message in [
        (empty, "holds no jax wheel"),
        (other, "not for this machine"),
        (tmp_path / "nowhere", "not a folder of wheel files"),
    ]:
        assert cli.main(["run", "--wheels", str(folder), "--results", str(results)]) == 2
        assert message in one_error_line(capsys)
        assert untouched()
    assert cli.main(["gate", "--from", "0.12.0.1", "--to-wheels", str(empty), "--results", str(results)]) == 2
    assert "holds no jax wheel" in one_error_line(capsys) and untouched()


def test_gate_takes_one_candidate(tmp_path, capsys):
    assert cli.main(["gate", "--from", "0.12.0.1", "--to", "0.12.0", "--to-wheels", str(tmp_path)]) == 2
    assert "give one candidate" in one_error_line(capsys)
    assert cli.main(["gate", "--to-python", sys.executable]) == 2
    assert "--from and --to go together" in one_error_line(capsys)


def test_only_the_documented_release_itself_can_show_the_chapter_wrong():
    runs = [
        files(v, "linux-x86_64", [cell("values.debug_log", "default_level", "differs")])
        for v in ("0.12.0.1", "0.12.0.1+corp.3", "0.12.0.1rc1")
    ]
    assert [(d.jax, d.cell_id) for d in build_model(runs, []).discrepancies] == [
        ("0.12.0.1", "values.debug_log[default_level]")
    ]


def test_expectations_match_local_builds_and_pre_releases(tmp_path):
    from conformance.decide.expectations import load_expectations_file

    path = tmp_path / "ours.toml"
    path.write_text(
        '[[expect]]\ncell = "config.environment_info"\nstatus = ["differs"]\njax = ">=0.12"\n'
        '[[expect]]\ncell = "config.environment_info"\nstatus = ["differs"]\njax = "==0.12.0.1+corp.3"\n',
        encoding="utf-8",
    )
    wide, exact = load_expectations_file(path).entries
    versions = ("0.12.0.1+corp.3", "0.13.0rc1", "0.13.0.dev20261201", "0.11.2", "0.12.0.1")
    assert [wide.applies_to("linux-x86_64", "config.environment_info", "", v) for v in versions] == [
        True,
        True,
        True,
        False,
        True,
    ]
    assert [exact.applies_to("linux-x86_64", "config.environment_info", "", v) for v in versions] == [
        True,
        False,
        False,
        False,
        False,
    ]


def test_pin_resolves_with_the_index_options(tmp_path, monkeypatch, capsys):
    commands = []

    def run(argv, **kwargs):
        commands.append(argv)
        Path(argv[argv.index("-o") + 1]).write_text("jax==0.12.0.1 --hash=sha256:00\n", encoding="utf-8")
        return subprocess.CompletedProcess(argv, 0, "", "")

    from conformance.envs import pins

    builder = fake_builder(tmp_path / "cache", ["3.13.0"])

    def with_options(options=IndexOptions()):  # the CLI's builder, with the options it was given
        builder.options = options
        return builder

    monkeypatch.setattr(cli, "EnvironmentBuilder", with_options)
    monkeypatch.setattr(
        cli,
        "compile_pins",
        lambda version, index, uv_options=(): pins.compile_pins(version, index, tmp_path / "pins", run, uv_options),
    )
    assert cli.main(["pin", "0.12.0.1", "--index-url", "https://mirror.corp/simple", "--pre"]) == 0
    (compile_command,) = commands
    assert compile_command[compile_command.index("--index-url") + 1] == "https://mirror.corp/simple"
    assert "--prerelease" in compile_command and (tmp_path / "pins" / "jax-0.12.0.1.txt").is_file()


def test_diff_names_a_local_build_by_its_version(tmp_path, capsys, monkeypatch):
    from conformance.engine import matrix

    monkeypatch.setattr(matrix, "host_platform", lambda: "linux-x86_64")
    results = tmp_path / "results"
    write(results, "0.12.0.1+corp.3", "linux-x86_64", [cell(VMAP, "vmap", "differs", known_issue=True)])
    base = write(tmp_path / "base", "0.12.0.1", "linux-x86_64", [cell(VMAP, "vmap", "conforms", known_issue=True)])
    assert cli.main(["diff", str(base), "0.12.0.1+corp.3", "--results", str(results)]) == 0
    assert "(jax 0.12.0.1 -> 0.12.0.1+corp.3)" in capsys.readouterr().out
    assert cli.main(["diff", str(base), "0.12.0.1+corp.4", "--results", str(results)]) == 2
    assert "is a local build, on no package index" in one_error_line(capsys)


def test_the_report_reproduces_a_local_build_from_its_wheels():
    from conformance.report.html import rerun_command

    assert rerun_command("0.12.0.1+corp.3", "m.c[a]") == "jax-conformance run --wheels WHEELS_DIR -k 'm.c[a]'"
    model = build_model(
        [files(v, "linux-x86_64", [cell("config.environment_info")]) for v in ("0.12.0.1", "0.12.0.1+corp.3")], []
    )
    assert [c.run_target for c in model.columns] == ["--jax 0.12.0.1", "--wheels WHEELS_DIR"]


def test_uvs_own_index_variables_keep_working(monkeypatch):
    monkeypatch.setenv("UV_INDEX_URL", "https://mirror.corp/simple/")
    monkeypatch.setenv("UV_EXTRA_INDEX_URL", "https://a.corp/simple https://b.corp/simple")
    assert IndexOptions().indexes() == ["https://mirror.corp/simple", "https://a.corp/simple", "https://b.corp/simple"]
    assert IndexOptions("https://given/simple", ("https://x/simple",)).indexes() == [
        "https://given/simple",
        "https://x/simple",
    ]
    assert IndexOptions().uv_args() == []  # uv reads its variables itself


def test_an_index_url_with_a_token_is_read_with_basic_auth_and_never_shown(monkeypatch):
    import base64
    import http.client
    import io
    import urllib.request

    from conformance.envs import index

    seen = []

    def urlopen(request, timeout):
        seen.append(request)
        return io.BytesIO(b'{"files": []}')

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    assert index.fetch_project_page("jax", "https://me:s3cr3t@mirror.example/simple") == {"files": []}
    assert seen[0].full_url == "https://mirror.example/simple/jax/"
    assert seen[0].get_header("Authorization") == "Basic " + base64.b64encode(b"me:s3cr3t").decode()

    def refuses(request, timeout):
        raise http.client.InvalidURL("nonnumeric port: 'https://me:s3cr3t@mirror.example'")

    monkeypatch.setattr(urllib.request, "urlopen", refuses)
    with pytest.raises(OSError) as caught:
        index.fetch_project_page("jax", "https://me:s3cr3t@mirror.example/simple")
    assert "s3cr3t" not in str(caught.value)
    assert (
        index.scrub_credentials("see https://me:s3cr3t@mirror.example/simple/jax/")
        == "see https://***@mirror.example/simple/jax/"
    )


def test_diff_reads_a_stored_dev_build_by_its_version(tmp_path, capsys):
    from conformance import cli
    from conformance.engine.matrix import host_platform
    from tests.synthetic_results import cell, write

    write(tmp_path, "0.13.0.dev20261201", host_platform(), [cell("config.x", status="differs")], schema=3)
    release = write(tmp_path, "0.12.0.1", host_platform(), [cell("config.x")], schema=3)
    assert cli.main(["diff", str(release), "0.13.0.dev20261201", "--results", str(tmp_path)]) == 0
    assert "config.x: conforms -> differs" in capsys.readouterr().out


def test_a_local_label_is_taken_in_its_normalized_form():
    from conformance.engine.plugin import normalized_version
    from conformance.envs.existing import check_described

    assert (
        check_described("/x/python", {"jax": "0.12.0.1+corp_3", "platform": "linux-x86_64", "python": "3.13.0"})
        == "0.12.0.1+corp.3"
    )
    assert normalized_version("0.12.0.1+Corp-3") == "0.12.0.1+corp.3"
    with pytest.raises(ConformanceError, match="not a PEP 440 version"):
        check_described("/x/python", {"jax": "0.12.0.1-local build"})
