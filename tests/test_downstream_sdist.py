"""A library's tests from its sdist (`tests = "sdist"`): found on a `file://` index made here, downloaded once, its
test folder extracted safely (hostile archives refused in one line), run against the installed library; and the
manifest's grammar for it."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from conformance.downstream.command import _tests_of
from conformance.downstream.lock import SuiteEnv
from conformance.downstream.manifest import parse_manifest, read_suite
from conformance.downstream import sdist
from conformance.downstream.runner import run_suite
from conformance.downstream.sdist import extract_tests, pick_sdist, sdist_tests
from conformance.errors import ConformanceError

TINY = {
    "tinylib/__init__.py": 'WHERE = "sdist copy"\n',
    "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef answer():\n    return 42\n",
    "tests/test_tiny.py": textwrap.dedent("""
        import tinylib

        def test_uses_the_installed_library(answer, from_the_top):
            assert tinylib.WHERE == "installed" and answer == 42 and from_the_top == "top"

        def test_fails():
            assert tinylib.WHERE == "sdist copy"
        """).lstrip(),
    "conftest.py": "import pytest\n\n@pytest.fixture\ndef from_the_top():\n    return 'top'\n",
    "pyproject.toml": '[tool.pytest.ini_options]\nmarkers = ["slow: slow"]\n',
    "README.md": "tiny\n",
}


def _tarball(members: dict, top: str = "tinylib-1.0", links: dict | None = None) -> bytes:
    """A gzipped tar of `members` (name -> text) under `top/` (names starting with `/` or `..` kept as given), with
    symbolic links `links` (name -> target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name if name.startswith(("/", "..")) else f"{top}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buffer.getvalue()


class _Options:
    def __init__(self, index: Path) -> None:
        self.index = index

    def indexes(self):
        return [self.index.as_uri()]

    def urls(self):
        return []


class _Builder:
    def __init__(self, root: Path, index: Path) -> None:
        self.root, self.options = root, _Options(index)


def _index(tmp_path: Path, archive: bytes, filename: str = "tinylib-1.0.tar.gz", page: dict | None = None) -> Path:
    index = tmp_path / "index"
    (index / "tinylib").mkdir(parents=True)
    (index / "tinylib" / filename).write_bytes(archive)
    if page is not None:
        (index / "tinylib" / "index.json").write_text(json.dumps(page), encoding="utf-8")
    return index


def test_the_sdists_test_folder_is_extracted_once_without_the_librarys_source(tmp_path):
    builder = _Builder(tmp_path / "cache", _index(tmp_path, _tarball(TINY)))
    folder = sdist_tests("tinylib", "1.0", "", ("tinylib",), builder)
    taken = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert taken == ["conftest.py", "pyproject.toml", "tests/conftest.py", "tests/test_tiny.py"]  # no tinylib/
    sha = hashlib.sha256((tmp_path / "index" / "tinylib" / "tinylib-1.0.tar.gz").read_bytes()).hexdigest()
    assert folder.name == f"{sha}-tests"
    assert (builder.root / "downstream" / "sdists" / f"{sha}.tar.gz").is_file()
    (tmp_path / "index" / "tinylib" / "tinylib-1.0.tar.gz").unlink()  # downloaded once: the cache answers now
    assert sdist_tests("tinylib", "1.0", "", ("tinylib",), builder) == folder


def test_the_tests_import_the_installed_library_not_the_sdists_copy(tmp_path):
    builder = _Builder(tmp_path / "cache", _index(tmp_path, _tarball(TINY)))
    env_path = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(env_path)], check=True)
    env = SuiteEnv("0", env_path, "3", "lock", False)
    (env.site_packages() / "tinylib").mkdir()
    (env.site_packages() / "tinylib" / "__init__.py").write_text('WHERE = "installed"\n', encoding="utf-8")
    suite = replace(
        read_suite("tinylib==1.0"), manifest=parse_manifest('tests = "sdist"\npackages = ["tinylib"]\n', "m")
    )
    runs_as, digest = _tests_of(suite, "1.0", builder)
    assert runs_as.kind == "folder" and len(digest) == 64
    ran = run_suite(runs_as, env)
    assert {n: o.status for n, o in ran.outcomes.items()} == {
        "tests/test_tiny.py::test_uses_the_installed_library": "passed",  # both of the sdist's conftest fixtures
        "tests/test_tiny.py::test_fails": "failed",
    }


@pytest.mark.parametrize(
    "members, links, said",
    [
        ({**TINY, "../evil.py": "x"}, None, "points outside the archive"),
        ({**TINY, "/tmp/evil.py": "x"}, None, "points outside the archive"),
        ({**TINY, "tinylib-1.0/tests/../../evil.py": "x"}, None, "points outside the archive"),
        (TINY, {"tests/escape.py": "/etc/passwd"}, "is a link"),
        (TINY, {"tests/data": "../.."}, "is a link"),
    ],
)
def test_a_hostile_archive_is_refused_in_one_line_and_nothing_is_written(tmp_path, members, links, said):
    dest = tmp_path / "out"
    with pytest.raises(ConformanceError, match=said) as raised:
        extract_tests(_tarball(members, links=links), dest, "", ("tinylib",), "tinylib==1.0's sdist")
    assert "\n" not in str(raised.value) and not dest.exists() and not (tmp_path / "evil.py").exists()


def test_a_link_outside_the_test_folder_is_never_taken_and_not_refused(tmp_path):
    archive = _tarball(TINY, links={"docs/link": "/etc"})
    assert extract_tests(archive, tmp_path / "out", "", ("tinylib",), "s") == "tests"
    assert not (tmp_path / "out" / "docs").exists()


def test_no_test_folder_or_a_package_as_the_test_folder_is_one_line(tmp_path):
    bare = {k: v for k, v in TINY.items() if not k.startswith("tests/")}
    with pytest.raises(ConformanceError, match="holds no test folder .*its folders: tinylib.*sdist_tests"):
        extract_tests(_tarball(bare), tmp_path / "a", "", ("tinylib",), "s")
    with pytest.raises(ConformanceError, match="holds no test folder spec"):
        extract_tests(_tarball(TINY), tmp_path / "b", "spec", ("tinylib",), "s")
    with pytest.raises(ConformanceError, match='is the library\'s package tinylib.*tests = "pyargs"'):
        extract_tests(_tarball(TINY), tmp_path / "c", "tinylib", ("tinylib",), "s")
    assert extract_tests(_tarball(TINY), tmp_path / "d", "tests/", ("tinylib",), "s") == "tests"


def test_no_sdist_on_the_index_is_one_line(tmp_path):
    builder = _Builder(tmp_path / "cache", _index(tmp_path, b"", filename="tinylib-1.0-py3-none-any.whl"))
    with pytest.raises(ConformanceError, match=r"tinylib==1.0 has no source distribution \(.tar.gz\) on the package"):
        sdist_tests("tinylib", "1.0", "", ("tinylib",), builder)
    with pytest.raises(ConformanceError, match="has no source distribution"):
        sdist_tests(
            "tinylib", "2.0", "", ("tinylib",), _Builder(tmp_path / "c2", _index(tmp_path / "i2", _tarball(TINY)))
        )


def test_an_sdist_whose_bytes_are_not_the_indexs_sha256_is_not_used(tmp_path):
    archive = _tarball(TINY)
    page = {"files": [{"filename": "tinylib-1.0.tar.gz", "url": "tinylib-1.0.tar.gz", "hashes": {"sha256": "0" * 64}}]}
    builder = _Builder(tmp_path / "cache", _index(tmp_path, archive, page=page))
    with pytest.raises(ConformanceError, match="is not the index's 0000"):
        sdist_tests("tinylib", "1.0", "", ("tinylib",), builder)
    assert not list((tmp_path / "cache" / "downstream" / "sdists").glob("*-tests"))


def test_the_sdist_is_picked_by_its_normalised_name_and_version_with_the_pages_sha256():
    page = {
        "files": [
            {"filename": "dm_haiku-0.0.13-py3-none-any.whl", "url": "w"},
            {"filename": "dm_haiku-0.0.14.tar.gz", "url": "../../p/dm_haiku-0.0.14.tar.gz"},
            {"filename": "dm_haiku-0.0.13.tar.gz", "url": "../../p/dm_haiku-0.0.13.tar.gz#sha256=ABC"},
        ]
    }
    found = pick_sdist(page, "https://example.org/simple/dm-haiku/", "dm-haiku", "0.0.13")
    assert found is not None and found.url == "https://example.org/p/dm_haiku-0.0.13.tar.gz" and found.sha256 == "abc"
    assert pick_sdist(page, "https://example.org/simple/dm-haiku/", "dm-haiku", "0.0.12") is None


def test_the_manifest_takes_tests_from_the_sdist_and_checks_its_folder():
    manifest = parse_manifest('tests = "sdist"\nsdist_tests = "tests/unit"\n', "m")
    assert (manifest.tests, manifest.sdist_tests) == ("sdist", "tests/unit")
    for bad, said in (
        ('tests = "sdist"\nsdist_tests = "../x"', "folder inside the sdist"),
        ('tests = "sdist"\nsdist_tests = "/abs"', "folder inside the sdist"),
        ('sdist_tests = "tests"', 'goes with tests = "sdist"'),
    ):
        with pytest.raises(ConformanceError, match=said):
            parse_manifest(bad, "m")


def test_a_file_and_a_folder_of_one_name_are_refused_in_one_line_and_nothing_is_kept(tmp_path):
    # tests/test_tiny.py is a file, then the parent of another member: one line naming it, not an OSError
    archive = _tarball({**TINY, "tests/test_tiny.py/inner.py": "x"})
    builder = _Builder(tmp_path / "cache", _index(tmp_path, archive))
    with pytest.raises(ConformanceError, match="member 'tinylib-1.0/tests/test_tiny.py/inner.py' collides") as raised:
        sdist_tests("tinylib", "1.0", "", ("tinylib",), builder)
    assert "\n" not in str(raised.value)
    assert [p.name for p in (builder.root / "downstream" / "sdists").iterdir() if p.is_dir()] == []


def test_an_archive_that_is_no_tar_is_one_line(tmp_path):
    with pytest.raises(ConformanceError, match="s: not a readable tar archive") as raised:
        extract_tests(b"not a tarball" * 100, tmp_path / "out", "", ("tinylib",), "s")
    assert "\n" not in str(raised.value) and not (tmp_path / "out").exists()


@pytest.mark.parametrize("bound, value", [("MAX_SDIST_MEMBERS", len(TINY) - 1), ("MAX_UNPACKED_BYTES", 64)])
def test_the_whole_listing_is_bounded_though_the_test_folder_is_small(tmp_path, monkeypatch, bound, value):
    # a small gzip can declare millions of members or terabytes of zeros outside the test folder
    monkeypatch.setattr(sdist, bound, value)
    with pytest.raises(ConformanceError, match="s: refused: past the bound of an sdist"):
        extract_tests(_tarball(TINY), tmp_path / "out", "", ("tinylib",), "s")
    monkeypatch.undo()
    assert extract_tests(_tarball(TINY), tmp_path / "ok", "", ("tinylib",), "s") == "tests"


def _raw_tarball(extra: list[tarfile.TarInfo]) -> bytes:
    """TINY's tarball with the members `extra` (names as given, no data) appended."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member in tarfile.open(fileobj=io.BytesIO(_tarball(TINY))).getmembers():
            tar.addfile(member, io.BytesIO(TINY[member.name.split("/", 1)[1]].encode()))
        for info in extra:
            tar.addfile(info)
    return buffer.getvalue()


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


@pytest.mark.parametrize(
    "extra, said",
    [
        (_info("C:evil.py"), "points outside the archive"),  # a drive-relative name on Windows
        (_info("tinylib-1.0/tests/h.py", tarfile.LNKTYPE, "tinylib-1.0/tinylib/__init__.py"), "is a link"),
        (_info("tinylib-1.0/tests/tty", tarfile.CHRTYPE), "is not a plain file or folder"),
        (_info("tinylib-1.0/tests/pipe", tarfile.FIFOTYPE), "is not a plain file or folder"),
    ],
)
def test_a_hostile_member_is_refused_by_kind(tmp_path, extra, said):
    with pytest.raises(ConformanceError, match=said):
        extract_tests(_raw_tarball([extra]), tmp_path / "out", "", ("tinylib",), "s")
    assert not (tmp_path / "out").exists()


def test_the_test_folder_is_bounded_in_files_and_bytes(tmp_path, monkeypatch):
    monkeypatch.setattr(sdist, "MAX_TEST_FILES", 3)  # tests/, its two files, two top-level files: five
    with pytest.raises(ConformanceError, match="its test folder tests/ is past the bound"):
        extract_tests(_tarball(TINY), tmp_path / "a", "", ("tinylib",), "s")
    monkeypatch.setattr(sdist, "MAX_TEST_FILES", 100)
    monkeypatch.setattr(sdist, "MAX_TEST_BYTES", 50)
    with pytest.raises(ConformanceError, match="its test folder tests/ is past the bound"):
        extract_tests(_tarball(TINY), tmp_path / "b", "", ("tinylib",), "s")


def test_only_the_test_folder_is_taken_not_a_folder_whose_name_starts_like_it(tmp_path):
    archive = _tarball({**TINY, "tests_private/secret.py": "x", "testsuite.py": "y"})
    assert extract_tests(archive, tmp_path / "out", "", ("tinylib",), "s") == "tests"
    assert not (tmp_path / "out" / "tests_private").exists() and not (tmp_path / "out" / "testsuite.py").exists()


def test_the_extracted_tests_answer_again_only_for_the_same_folder(tmp_path):
    builder = _Builder(tmp_path / "cache", _index(tmp_path, _tarball(TINY)))
    assert sdist_tests("tinylib", "1.0", "", ("tinylib",), builder).is_dir()
    with pytest.raises(ConformanceError, match="holds no test folder spec"):  # not the extraction of tests/
        sdist_tests("tinylib", "1.0", "spec", ("tinylib",), builder)


def test_members_under_two_top_folders_are_no_sdist(tmp_path):
    with pytest.raises(ConformanceError, match="not an sdist .*under 2 top folders"):
        extract_tests(_raw_tarball([_info("other-1.0/tests/x.py")]), tmp_path / "out", "", ("tinylib",), "s")
