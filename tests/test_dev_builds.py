"""`bisect --pre`: the dev builds between two releases (PEP 440 order), the jaxlib of the same night, the
`--find-links` listing, the search from the releases' ends, and for real: a folder of re-tagged dev wheels of jax
0.10.2 between it and a re-tagged 0.10.3, the second and third patched to change a cell."""

from __future__ import annotations

import json
import zipfile

import pytest

from conformance.decide.bisect import BisectOutcome, Memo, Untestable, same_observation
from conformance.decide.commits import BuildCommits
from conformance.decide.dev_builds import search_dev_builds
from conformance.envs.builder import EnvironmentBuilder
from conformance.envs.find_links import find_links_files
from conformance.envs.index import IndexOptions, PackageIndex
from conformance.envs.interpreters import Interpreter
from conformance.envs.nightlies import dev_builds_between, matching_jaxlib
from conformance.errors import ConformanceError
from tests.retag import download_wheel, jax_build
from tests.synthetic_results import result

CELL = "setup.explicit_test_util_import"
NIGHTS = ["0.12.1.dev20260103", "0.12.1.dev20260101+gaaaa", "0.12.1.dev20260102", "0.12.1rc1"]


def test_the_dev_builds_between_two_releases_come_in_pep_440_order_from_the_first_end():
    versions = ["0.12.0", "0.12.0.1", *NIGHTS, "0.12.1", "0.12.2.dev20260201", "not a version"]
    assert dev_builds_between(versions, "0.12.0.1", "0.12.1") == [
        "0.12.1.dev20260101+gaaaa",
        "0.12.1.dev20260102",
        "0.12.1.dev20260103",
        "0.12.1rc1",
    ]
    assert dev_builds_between(versions, "0.12.1", "0.12.0.1")[0] == "0.12.1rc1"  # --find-fix searches backwards
    assert dev_builds_between(versions, "0.12.0", "0.12.0.1") == []  # final releases are not dev builds
    assert dev_builds_between(versions, "0.12.0", "garbage") == []


def test_one_build_per_night_is_searched_and_nights_that_pep_440_puts_out_of_date_order_are_named():
    """Two builds of one night differ only in their `+g<hash>` labels, which PEP 440 orders by the hash's letters,
    not by history: searching both could end "between" them in an order that never happened. One per night is
    searched (the plain one first) and the rest are named; a series built beside another is flagged."""
    from conformance.envs.nightlies import left_out_of_nights, nights_out_of_order

    versions = [
        "0.12.0.1",
        "0.13.0",
        "0.13.0.dev20260102+gfff",
        "0.13.0.dev20260102+gaaa",
        "0.13.0.dev20260103",
        "0.13.0.dev20260103+g123",
        "0.12.1.dev20260105",
        "0.13.0.dev20260101",
    ]
    between = dev_builds_between(versions, "0.12.0.1", "0.13.0")
    assert between == ["0.12.1.dev20260105", "0.13.0.dev20260101", "0.13.0.dev20260102+gaaa", "0.13.0.dev20260103"]
    assert left_out_of_nights(versions, "0.12.0.1", "0.13.0") == ["0.13.0.dev20260102+gfff", "0.13.0.dev20260103+g123"]
    assert nights_out_of_order(between) == [("0.12.1.dev20260105", "0.13.0.dev20260101")]
    assert dev_builds_between(
        [*versions, "0.12.0.1.post1", "0.12.0.1.post1.dev5", "0.13.0rc1", "0.13.0+gabc1234"], "0.12.0.1", "0.13.0"
    ) == ["0.12.0.1.post1.dev5", *between, "0.13.0rc1"]  # no finals
    good, bad = result(CELL, observation={"value": 1}), result(CELL, observation={"value": 2})
    step = search_dev_builds(
        versions,
        _outcome("0.12.0.1", "0.13.0", good, bad),
        lambda v: result(CELL, observation={"value": 1 if v < "0.13.0.dev20260102" else 2}),
        same_observation,
        lambda v: BuildCommits(v, v),
    )
    said = "\n".join(step.lines())
    assert "not searched, another build of the same night is: 0.13.0.dev20260102+gfff, 0.13.0.dev20260103+g123" in said
    assert "jax 0.12.1.dev20260105 is dated after jax 0.13.0.dev20260101" in said
    assert step.to_json()["left_out"] == ["0.13.0.dev20260102+gfff", "0.13.0.dev20260103+g123"]


def test_a_dev_jax_goes_with_the_jaxlib_of_its_night_else_an_earlier_one_else_its_declared_range():
    jaxlibs = ["0.12.0.1", "0.12.1.dev20260101+gffff", "0.12.1.dev20260103"]
    assert matching_jaxlib("0.12.0.1", jaxlibs) == "0.12.0.1"
    assert matching_jaxlib("0.12.1.dev20260101+gaaaa", jaxlibs) == "0.12.1.dev20260101+gffff"
    assert matching_jaxlib("0.12.1.dev20260102", jaxlibs) == "0.12.1.dev20260101+gffff"  # none that night
    assert matching_jaxlib("0.12.1.dev20260103", jaxlibs) == "0.12.1.dev20260103"
    assert matching_jaxlib("0.12.2.dev20260101", jaxlibs) == ""  # another release's nights do not count
    assert matching_jaxlib("0.12.1", jaxlibs) == ""


def _wheel(folder, name, requires_python=">=3.12"):
    with zipfile.ZipFile(folder / name, "w") as wheel:
        project, version = name.split("-")[:2]
        wheel.writestr(
            f"{project}-{version}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\nRequires-Python: {requires_python}\n",
        )


def test_find_links_folders_list_their_jax_files_with_requires_python_and_join_the_index(tmp_path):
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "jax-0.12.1.dev20260102+gbbbb-py3-none-any.whl")
    _wheel(links, "jaxlib-0.12.1.dev20260102-cp313-cp313-manylinux_2_27_x86_64.whl")
    _wheel(links, "jax_cuda12_plugin-0.12.1-cp313-cp313-manylinux_2_27_x86_64.whl")
    (links / "notes.txt").write_text("not a distribution")
    assert find_links_files((str(links),), "jax") == [
        {"filename": "jax-0.12.1.dev20260102+gbbbb-py3-none-any.whl", "requires-python": ">=3.12"}
    ]
    pages = {
        "jax": {"files": [{"filename": "jax-0.12.0.1-py3-none-any.whl", "requires-python": ">=3.12"}]},
        "jaxlib": {"files": [{"filename": "jaxlib-0.12.0.1-cp313-cp313-manylinux_2_27_x86_64.whl"}]},
    }
    index = PackageIndex(
        tmp_path / "cache", fetch=pages.__getitem__, options=IndexOptions(find_links=(links.as_uri(),), pre=True)
    )
    assert sorted(index.releases("jax")) == ["0.12.0.1", "0.12.1.dev20260102+gbbbb"]
    assert index.jax_release("0.12.1.dev20260102+gbbbb").requires_python == ">=3.12"
    assert index.jaxlib_for("0.12.1.dev20260102+gbbbb") == "0.12.1.dev20260102"
    with pytest.raises(ConformanceError, match="--find-links .*nowhere: no such folder"):
        find_links_files((str(tmp_path / "nowhere"),), "jax")


def test_a_hostile_wheel_in_a_find_links_folder_costs_neither_memory_nor_a_traceback(tmp_path):
    """A METADATA that inflates to far more than its headers is read only as far as its headers; a wheel whose
    METADATA uses a compression method zipfile lacks is left out instead of raising."""
    import tracemalloc

    links = tmp_path / "links"
    links.mkdir()
    with zipfile.ZipFile(links / "jax-0.13.0.dev20260102-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(
            "jax-0.13.0.dev20260102.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: jax\n"
            "Version: 0.13.0.dev20260102\nRequires-Python: >=3.12\n\n" + "x" * 64 * 2**20,
        )
    odd = links / "jax-0.13.0.dev20260103-py3-none-any.whl"
    _wheel(links, odd.name)
    data = bytearray(odd.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # compression method 99 (unknown)
        at = data.find(signature)
        data[at + offset : at + offset + 2] = (99).to_bytes(2, "little")
    odd.write_bytes(bytes(data))
    tracemalloc.start()
    try:
        found = find_links_files((str(links),), "jax")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == [{"filename": "jax-0.13.0.dev20260102-py3-none-any.whl", "requires-python": ">=3.12"}]
    assert peak < 16 * 2**20, f"read {peak} bytes to list two wheels"


def test_files_named_like_jax_wheels_that_could_not_install_are_left_out_of_the_releases_and_named(tmp_path):
    """Junk in a team's folder: were they listed, `matrix latest` would choose them and install would fail."""
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "jax-0.12.1.dev20260102-py3-none-any.whl")
    (links / "jax-1.0.0-py3-none-any.whl").write_bytes(b"not a zip")  # the newest, and no wheel
    with zipfile.ZipFile(links / "jax-0.99.0-py3-none-any.whl", "w") as wheel:  # its METADATA says another version
        wheel.writestr("jax-0.99.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: jax\nVersion: 0.10.2\n")
    with zipfile.ZipFile(links / "jax-0.98.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr("jax/__init__.py", "")
    (links / "notes.txt").write_text("not a distribution")
    pages = {"jax": {"files": [{"filename": "jax-0.12.0.1-py3-none-any.whl", "requires-python": ">=3.12"}]}}
    index = PackageIndex(tmp_path / "cache", fetch=pages.__getitem__, options=IndexOptions(find_links=(str(links),)))
    assert sorted(index.releases("jax")) == ["0.12.0.1", "0.12.1.dev20260102"]
    said = "\n".join(index.notices)
    assert "left out jax-1.0.0-py3-none-any.whl (not a readable wheel" in said
    assert "left out jax-0.99.0-py3-none-any.whl (its METADATA says version '0.10.2', its name 0.99.0)" in said
    assert "left out jax-0.98.0-py3-none-any.whl (it holds no .dist-info/METADATA)" in said
    assert len(index.notices) == 3 and all("\n" not in notice for notice in index.notices)


def test_matrix_latest_never_chooses_a_junk_wheel_of_a_find_links_folder_and_says_so(monkeypatch, capsys, tmp_path):
    from conformance import cli

    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(
        "conformance.envs.index.fetch_project_page",
        lambda project, base=None, timeout=30.0: {
            "files": [{"filename": f"{project}-{v}-py3-none-any.whl"} for v in ("0.11.2", "0.12.0.1")]
        },
    )
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "jax-0.13.0-py3-none-any.whl")
    (links / "jax-1.0.0-py3-none-any.whl").write_bytes(b"<html>a proxy's error page</html>")
    assert cli.main(["matrix", "latest", "--find-links", str(links)]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["0.12.0.1", "0.13.0"]
    assert err.startswith("note: --find-links") and "left out jax-1.0.0-py3-none-any.whl" in err


def test_a_find_links_page_that_cannot_be_read_is_named_without_any_part_of_its_password(tmp_path):
    place = "http://team:p@ss@word@127.0.0.1:9/links/"  # unencoded `@`s: urllib takes the password up to the last
    with pytest.raises(ConformanceError) as caught:
        find_links_files((place,), "jax")
    said = str(caught.value)
    assert "http://***@127.0.0.1:9/links/ cannot be read" in said
    assert "ss" not in said.replace("address", "") and "word" not in said and "team" not in said


def test_a_dev_build_is_installed_with_the_jaxlib_of_its_night_and_a_release_as_before(tmp_path):
    pages = {
        "jax": {
            "files": [
                {"filename": f"jax-{v}-py3-none-any.whl", "requires-python": ">=3.12"}
                for v in ("0.12.1.dev20260102", "0.12.1.dev20260103", "9.0")
            ]
        },
        "jaxlib": {
            "files": [
                {"filename": f"jaxlib-{v}-cp313-cp313-manylinux_2_27_x86_64.whl"}
                for v in ("0.12.1.dev20260102+gcccc", "9.0")
            ]
        },
    }
    builder = EnvironmentBuilder(
        root=tmp_path,
        index=PackageIndex(tmp_path, fetch=pages.__getitem__),
        interpreters=[Interpreter("/p/3.12", "3.12.1"), Interpreter("/p/3.13", "3.13.0")],
        pins_dir=tmp_path / "no-pins",
    )
    assert builder.requirements("0.12.1.dev20260102").lines[:2] == (
        "jax[cpu]==0.12.1.dev20260102",
        "jaxlib==0.12.1.dev20260102+gcccc",
    )
    assert builder.requirements("9.0").lines[:2] == ("jax[cpu]==9.0", "jaxlib==9.0")
    assert builder.interpreter_for("0.12.1.dev20260103").version == "3.13.0"


def test_pinning_a_dev_build_pins_the_jaxlib_its_environment_would_get(tmp_path):
    """`pin 0.12.1.dev20260102` writes the pin file the builder then prefers to its own requirements: it must hold
    the jaxlib of the same night (`+g` label and all), not leave jaxlib to jax's declared range."""
    import subprocess

    from conformance.envs.pins import compile_pins

    pages = {
        "jax": {"files": [{"filename": "jax-0.12.1.dev20260102-py3-none-any.whl", "requires-python": ">=3.12"}]},
        "jaxlib": {
            "files": [
                {"filename": f"jaxlib-{v}-cp313-cp313-manylinux_2_27_x86_64.whl"}
                for v in ("0.12.1.dev20260102+gcccc", "0.12.1.dev20260105")
            ]
        },
    }
    wanted = []

    def run(argv, **kwargs):
        wanted.append(open(argv[argv.index("-o") - 1]).read())  # the requirements.in it resolves
        with open(argv[argv.index("-o") + 1], "w") as out:
            out.write("jax==0.12.1.dev20260102\n")
        return subprocess.CompletedProcess(argv, 0, "", "")

    compile_pins("0.12.1.dev20260102", PackageIndex(tmp_path, fetch=pages.__getitem__), tmp_path / "pins", run)
    assert "jaxlib==0.12.1.dev20260102+gcccc" in wanted[0].splitlines()


def _outcome(last_good, first_bad, good, bad):
    return BisectOutcome(
        [last_good, first_bad],
        last_good,
        first_bad,
        good,
        bad,
        last_good=last_good,
        first_bad=first_bad,
        last_good_result=good,
        first_bad_result=bad,
    )


def test_the_search_starts_from_the_releases_answers_and_ends_at_the_narrowest_pair_with_its_commits():
    good, bad = result(CELL, observation={"value": 1}), result(CELL, observation={"value": 2})
    values = {"0.12.1.dev20260101": 1, "0.12.1.dev20260102": 2, "0.12.1.dev20260103": 2}
    asked = []

    def oracle(version):
        asked.append(version)
        if version == "0.12.1.dev20260103":
            return Untestable(version, "does not build")
        return result(CELL, observation={"value": values[version]})

    memo = Memo(oracle)
    memo.answers.update({"0.12.0.1": good, "0.12.1": bad})  # the release search answered the ends already
    step = search_dev_builds(
        ["0.12.0.1", "0.12.1", *values, "0.12.1rc1"],
        _outcome("0.12.0.1", "0.12.1", good, bad),
        memo,
        same_observation,
        lambda v: BuildCommits(v, "0.12.0.1", v[-2:] * 20, "f" * 40),
    )
    assert (step.outcome.last_good, step.outcome.first_bad) == ("0.12.1.dev20260101", "0.12.1.dev20260102")
    assert "0.12.0.1" not in asked and "0.12.1" not in asked and "0.12.1rc1" not in asked
    assert len(asked) == len(set(asked))
    lines = step.lines()
    assert "  skipped jax 0.12.1.dev20260103: does not build" in lines
    assert lines[0] == "dev builds between jax 0.12.0.1 and jax 0.12.1: 4, tested 2"
    assert "  first bad dev build: jax 0.12.1.dev20260102" in lines
    assert f"  jax commits between them: https://github.com/jax-ml/jax/compare/{'01' * 20}...{'02' * 20}" in lines
    step.find_fix = True
    assert "  first dev build without it: jax 0.12.1.dev20260102" in step.lines()
    assert not [line for line in step.lines() if "good" in line or "bad" in line]  # --find-fix words throughout
    data = step.to_json()
    assert data["first_bad"]["jax_commit"] == "02" * 20 and data["first_bad"]["dev_build"] is True
    assert data["tested"] == ["0.12.1.dev20260102", "0.12.1.dev20260101"]


def test_without_dev_builds_between_the_step_says_where_to_find_them():
    good, bad = result(CELL, observation={"value": 1}), result(CELL, observation={"value": 2})
    step = search_dev_builds(
        ["0.12.0.1", "0.12.1"],
        _outcome("0.12.0.1", "0.12.1", good, bad),
        lambda v: pytest.fail("nothing is run"),
        same_observation,
        BuildCommits,
    )
    assert step.outcome is None and not step.found
    assert step.lines() == [
        "dev builds between jax 0.12.0.1 and jax 0.12.1: none on the index (name a place that "
        "holds them with --find-links or --index-url, with --pre)"
    ]


BASE, NEXT = "0.10.2", "0.10.3"  # jax 0.10.3 never came (0.11.0 followed 0.10.2), so no index will list it
BUILDS = [
    (f"{NEXT}.dev20260101+gaaaaaaa", "a" * 40, False),
    (f"{NEXT}.dev20260102+gbbbbbbb", "b" * 40, True),
    (f"{NEXT}.dev20260103+gccccccc", "c" * 40, True),
    (NEXT, "d" * 40, True),
]


@pytest.fixture(scope="module")
def dev_wheels(tmp_path_factory):
    """A --find-links folder of jax builds re-tagged from jax 0.10.2's wheel: three dev builds of 0.10.3 and
    0.10.3 itself, the second night and later patched (jaxlib: 0.10.2's from the index, as jax declares)."""
    work = tmp_path_factory.mktemp("dev-builds")
    released = download_wheel("jax", BASE, work / "download")
    for version, commit, patched in BUILDS:
        jax_build(released, version, work / "links", commit, patched)
    return work / "links"


@pytest.mark.e2e
def test_bisect_goes_on_through_the_dev_builds_and_names_the_first_bad_ones_commit(dev_wheels, tmp_path, capsys):
    """Real packages: the release bisect ends at 0.10.2 / 0.10.3; with --pre it goes on through the three dev builds
    between them, ends at the second night (never running the third), names its commit and the compare link, and
    `--attribute` on that pair (one jaxlib under both) says jax changed it."""
    from conformance import cli

    issue, verdict_file, results = tmp_path / "bug.md", tmp_path / "verdict.json", tmp_path / "r"
    code = cli.main(
        [
            "bisect",
            CELL,
            "--good",
            BASE,
            "--bad",
            NEXT,
            "--pre",
            "--find-links",
            str(dev_wheels),
            "--attribute",
            "--results",
            str(results),
            "--issue",
            str(issue),
            "--json",
            str(verdict_file),
        ]
    )
    out = capsys.readouterr().out
    print(out)  # the session's output, for the record
    assert code == 0, out
    first, last = BUILDS[1][0], BUILDS[0][0]
    assert "dev builds between jax 0.10.2 and jax 0.10.3: 3, tested 2" in out
    assert f"  last good dev build: jax {last}" in out and f"  first bad dev build: jax {first}" in out
    assert f"  first bad build: jax {first} (commit bbbbbbbbbbbb) with jaxlib {BASE}" in out
    assert f"https://github.com/jax-ml/jax/compare/{'a' * 40}...{'b' * 40}" in out
    dev_part = out.split("dev builds between jax 0.10.2")[1]  # the attribution is the narrowest pair's
    assert "attribution: changed by jax (Python)" in dev_part and "jaxlib commits between" not in dev_part
    assert f"jax {first} over jaxlib {BASE}: like bad" in dev_part
    assert f"jax {BUILDS[2][0]}" not in out  # the third night never ran
    assert list(results.glob(f"{first}-*.json")) and not list(results.glob(f"{BUILDS[2][0]}-*.json"))
    verdict = json.loads(verdict_file.read_text())
    assert verdict["first_bad"]["jax"] == NEXT and verdict["dev_builds"]["first_bad"]["jax_commit"] == "b" * 40
    assert verdict["dev_builds"]["last_good"]["version"] == last
    assert f"first bad dev build: jax {first}" in issue.read_text()


@pytest.mark.e2e
def test_attribute_on_a_release_pair_whose_jax_is_patched_says_changed_by_jax(dev_wheels, tmp_path, capsys):
    """Real packages: jax 0.10.2 and a patched re-tag of it as 0.10.3, both over jaxlib 0.10.2 (which both accept),
    so both mixes run; without --pre the dev builds are not searched."""
    from conformance import cli

    code = cli.main(
        [
            "bisect",
            CELL,
            "--good",
            BASE,
            "--bad",
            NEXT,
            "--find-links",
            str(dev_wheels),
            "--attribute",
            "--results",
            str(tmp_path / "r"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert [line for line in out.splitlines() if line.startswith("attribution:")] == [
        "attribution: changed by jax (Python)"
    ]
    assert f"  jax {NEXT} over jaxlib {BASE}: like bad: differs" in out
    assert f"  jax {BASE} over jaxlib {BASE}: like good: conforms" in out
    assert "dev build" not in out and "--no-deps" not in out
    built = sorted(p.name for p in (tmp_path / "r" / "builds").iterdir())
    assert built == [f"pair-{BASE}-{BASE}", f"pair-{NEXT}-{BASE}"]


def test_a_wheel_no_interpreter_here_can_install_is_left_out_and_named(monkeypatch, capsys, tmp_path):
    """A13: `matrix latest --pre` chose a `cp27-win32` wheel of a --find-links folder, and the run failed in uv."""
    from conformance import cli
    from conformance.envs.find_links import tags_problem

    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(
        "conformance.envs.index.fetch_project_page",
        lambda project, base=None, timeout=30.0: {
            "files": [{"filename": f"{project}-{v}-py3-none-any.whl"} for v in ("0.11.2", "0.12.0.1")]
        },
    )
    links = tmp_path / "links"
    links.mkdir()
    _wheel(links, "jax-0.13.0.dev20260101-py3-none-any.whl")
    _wheel(links, "jax-0.14.0.dev20260101-cp27-cp27m-win32.whl")
    assert cli.main(["matrix", "latest", "--pre", "--find-links", str(links)]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["0.12.0.1", "0.13.0.dev20260101"]
    assert (
        "left out jax-0.14.0.dev20260101-cp27-cp27m-win32.whl (no interpreter here can install its tags "
        "(cp27-cp27m-win32))" in err
    )
    assert tags_problem("jax-0.13.0-py3-none-any.whl") == ""


def test_a_find_links_page_wheel_no_interpreter_here_can_install_is_left_out_too(monkeypatch, capsys, tmp_path):
    """Review of A13: the tag check covered folders only; the same cp27-win32 wheel served on a page was chosen."""
    import http.server
    import threading

    from conformance import cli

    page = (
        '<a href="jax-0.13.0.dev20260101-py3-none-any.whl">jax-0.13.0.dev20260101-py3-none-any.whl</a>'
        '<a href="jax-0.14.0-cp27-cp27m-win32.whl">jax-0.14.0-cp27-cp27m-win32.whl</a>'
    ).encode()

    class Links(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Links)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("JAX_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(
        "conformance.envs.index.fetch_project_page",
        lambda project, base=None, timeout=30.0: {
            "files": [{"filename": f"{project}-{v}-py3-none-any.whl"} for v in ("0.11.2", "0.12.0.1")]
        },
    )
    try:
        assert cli.main(["matrix", "latest", "--pre", "--find-links", f"http://127.0.0.1:{server.server_port}/"]) == 0
    finally:
        server.shutdown()
    out, err = capsys.readouterr()
    assert out.split() == ["0.12.0.1", "0.13.0.dev20260101"]
    assert "left out jax-0.14.0-cp27-cp27m-win32.whl (no interpreter here can install its tags" in err
