"""Faults of a hostile build (issue 31): what a build's key sees, release environments kept apart from other
environments, decisions limited to what was asked, no secret in the CI layer, bounds everywhere.

Fast tests with fake packages and fake environments; the end-to-end checks with real JAX are marked `e2e`.
"""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.envs.existing import SOURCE_ROOT

PY = sys.executable


def _digest_of(site: Path, *names: str) -> str:
    code = f"import sys, json; from conformance.child.envinfo import build_digest; print(build_digest({names!r}))"
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), SOURCE_ROOT])}
    done = subprocess.run([PY, "-c", code], env=environ, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _editable_install(tmp_path: Path) -> tuple[Path, Path]:
    """A package `fakejax` installed the way `pip install -e` does: a dist-info whose RECORD lists no source file,
    and a `.pth` naming the checkout. Returns (site folder, checkout's module)."""
    checkout = tmp_path / "checkout"
    (checkout / "fakejax").mkdir(parents=True)
    module = checkout / "fakejax" / "config.py"
    module.write_text("def read(name):\n    return name\n", encoding="utf-8")
    (checkout / "fakejax" / "__init__.py").write_text("from fakejax.config import read\n", encoding="utf-8")
    site = tmp_path / "site"
    info = site / "fakejax-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakejax\nVersion: 1.0\n", encoding="utf-8")
    (info / "RECORD").write_text("fakejax-1.0.dist-info/METADATA,,\n__editable__.fakejax.pth,,\n", encoding="utf-8")
    (info / "direct_url.json").write_text(
        json.dumps({"url": checkout.as_uri(), "dir_info": {"editable": True}}), encoding="utf-8"
    )
    (site / "__editable__.fakejax.pth").write_text(str(checkout) + "\n", encoding="utf-8")
    return site, module


def _as_site(site: Path) -> Path:
    """A folder put on the path with `site.addsitedir` semantics (so `.pth` files are read)."""
    boot = site / "sitecustomize_boot"
    boot.mkdir(exist_ok=True)
    (boot / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(site)!r})\n", encoding="utf-8")
    return boot


def test_a_build_key_sees_an_in_place_edit_of_an_editable_install(tmp_path):
    """RECORD of an editable install lists no source file: an edit of the checkout must still change the key."""
    site, module = _editable_install(tmp_path)
    before = _digest_of(_as_site(site), "fakejax")
    module.write_text("def read(name):\n    raise KeyError(name)\n", encoding="utf-8")
    assert _digest_of(_as_site(site), "fakejax") != before


def test_a_build_key_sees_an_in_place_edit_of_an_installed_package(tmp_path):
    """A regular install edited in place (RECORD unchanged, its hashes now wrong) changes the key."""
    site = tmp_path / "site"
    (site / "fakejax").mkdir(parents=True)
    module = site / "fakejax" / "__init__.py"
    module.write_text("X = 1\n", encoding="utf-8")
    info = site / "fakejax-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakejax\nVersion: 1.0\n", encoding="utf-8")
    (info / "RECORD").write_text("fakejax/__init__.py,sha256=abc,6\n", encoding="utf-8")
    before = _digest_of(site, "fakejax")
    module.write_text("X = 2\n", encoding="utf-8")
    assert _digest_of(site, "fakejax") != before


# ---------------------------------------------------------------- release environments kept apart


class RecordingUv:
    """Stands in for uv as the faults tests' FakeUv does, but installs jax and jaxlib with a dist-info RECORD (real
    hashes), hard-linking each file from a shared "uv cache" folder unless `--link-mode copy` is given."""

    def __init__(self, cache: Path) -> None:
        from tests.test_faults import FakeUv

        self.inner = FakeUv()
        self.cache = cache
        self.calls = self.inner.calls

    def __call__(self, argv, **kwargs):
        done = self.inner(argv, **kwargs)
        if argv[1] != "pip":
            return done
        import base64
        import hashlib
        import shutil

        python = Path(argv[argv.index("--python") + 1])
        site = python.parent.parent / "lib" / "python3.13" / "site-packages"
        copy = "--link-mode" in argv and argv[argv.index("--link-mode") + 1] == "copy"
        for name in ("jax", "jaxlib"):
            shared = self.cache / name / "core.py"
            if not shared.exists():
                shared.parent.mkdir(parents=True)
                shared.write_text(f"WHAT = {name!r}\n")
            installed = site / name / "core.py"
            installed.unlink(missing_ok=True)
            (shutil.copy2 if copy else os.link)(shared, installed)
            data = installed.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            info = site / f"{name}-0.4.38.dist-info"
            info.mkdir(exist_ok=True)
            (info / "RECORD").write_text(
                f"{name}/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
                f"{name}/core.py,sha256={digest},{len(data)}\n"
                f"{name}-0.4.38.dist-info/RECORD,,\n"
            )
        return done


@pytest.fixture
def suite_builder(tmp_path, monkeypatch):
    from tests.test_faults import builder

    monkeypatch.setattr("conformance.envs.builder.uv_binary", lambda: "uv")
    uv = RecordingUv(tmp_path / "uv-cache")
    return uv, lambda: builder(tmp_path, uv)


def test_release_environments_are_installed_as_copies_not_links(suite_builder):
    uv, make = suite_builder
    env = make().prepare("0.4.38")
    install = next(call for call in uv.calls if call[1] == "pip")
    assert install[install.index("--link-mode") + 1] == "copy"
    core = env.path / "lib/python3.13/site-packages/jax/core.py"
    assert core.stat().st_nlink == 1
    (uv.cache / "jax" / "core.py").write_text("WHAT = 'edited through another environment'\n")
    assert core.read_text() == "WHAT = 'jax'\n"


def test_a_release_environment_edited_in_place_is_rebuilt_before_reuse(suite_builder):
    uv, make = suite_builder
    env = make().prepare("0.4.38")
    core = env.path / "lib/python3.13/site-packages/jax/core.py"
    core.write_text("WHAT = 'patched in place by a debugging session'\n")
    again = make()
    rebuilt = again.prepare("0.4.38")
    assert rebuilt.built_now and uv.inner.builds == 2
    assert len(again.notices) == 1 and "jax/core.py" in again.notices[0] and "changed" in again.notices[0]
    assert core.read_text() == "WHAT = 'jax'\n"
    third = make()
    assert not third.prepare("0.4.38").built_now and third.notices == []


def test_a_cached_release_environment_sharing_its_files_by_hard_links_is_unshared_before_reuse(suite_builder):
    """An environment built before `--link-mode copy` shares its files with uv's cache: reusing it first gives it
    copies of its own (the same bytes, so nothing is rebuilt), and an edit through the cache no longer reaches it."""
    uv, make = suite_builder
    env = make().prepare("0.4.38")
    core = env.path / "lib/python3.13/site-packages/jax/core.py"
    core.unlink()
    os.link(uv.cache / "jax" / "core.py", core)  # as uv's default link mode leaves it
    again = make()
    assert not again.prepare("0.4.38").built_now
    assert core.stat().st_nlink == 1
    (uv.cache / "jax" / "core.py").write_text("WHAT = 'edited through another environment'\n")
    assert core.read_text() == "WHAT = 'jax'\n"


# ---------------------------------------------------------------- end to end, with real JAX (e2e)

RELEASE = "0.12.0.1"
READ = "config.reading_the_configuration[read_raises]"
BREAK_READ = "\nConfig.read = lambda self, name: None  # edited in place: config.read no longer raises\n"


@pytest.fixture(scope="module")
def own_caches(tmp_path_factory):
    """A uv cache and an environment cache of the tests' own, so editing files shared through uv's cache never
    reaches the machine's."""
    root = tmp_path_factory.mktemp("caches")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UV_CACHE_DIR", str(root / "uv"))
        patch.setenv("JAX_CONFORMANCE_CACHE", str(root / "conformance"))
        yield root


def _uv_environment(folder: Path, *packages: str) -> Path:
    """A venv the suite did not build, installed by uv with its default link mode (hard links into its cache)."""
    from conformance.envs.builder import EnvironmentBuilder, uv_binary

    interpreter = EnvironmentBuilder().interpreter_for(RELEASE)
    uv = uv_binary()
    subprocess.run([uv, "venv", "--quiet", "--python", interpreter.path, str(folder)], check=True)
    python = folder / "bin" / "python"
    subprocess.run([uv, "pip", "install", "--quiet", "--python", str(python), *packages], check=True)
    return python


def _site(venv: Path) -> Path:
    (site,) = venv.glob("lib/python3*/site-packages")
    return site


def _status(results: Path, cell_id: str) -> str:
    files = sorted(results.glob("**/*.json"))
    statuses = {}
    for path in files:
        for test in json.loads(path.read_text(encoding="utf-8"))["tests"]:
            meta = test["metadata"]
            name = f"{meta['case']}[{meta['param']}]" if meta["param"] else meta["case"]
            statuses[(path.relative_to(results).as_posix(), name)] = meta["status"]
    return {k: v for k, v in statuses.items() if k[1] == cell_id}


@pytest.mark.e2e
def test_editing_jax_in_another_uv_environment_leaves_the_release_environment_unchanged(own_caches, tmp_path, capsys):
    from conformance import cli
    from conformance.envs.builder import EnvironmentBuilder

    results = tmp_path / "results"
    argv = ["run", "--jax", RELEASE, "-k", READ, "-j", "1", "--results", str(results), "-o", str(tmp_path / "r.html")]
    assert cli.main(argv) == 0, capsys.readouterr().out
    assert set(_status(results, READ).values()) == {"conforms"}
    env = EnvironmentBuilder().prepare(RELEASE)
    suite_config = _site(env.path) / "jax" / "_src" / "config.py"
    before = suite_config.read_bytes()

    other = _uv_environment(tmp_path / "debugging", f"jax=={RELEASE}", f"jaxlib=={RELEASE}").parent.parent
    other_config = _site(other) / "jax" / "_src" / "config.py"
    original = other_config.read_bytes()
    try:
        with open(other_config, "a", encoding="utf-8") as handle:  # in place, as an editor that keeps the inode does
            handle.write(BREAK_READ)
        assert other_config.read_bytes() != before  # the edit happened
        assert suite_config.read_bytes() == before  # ... and did not reach the suite's environment
        assert cli.main([*argv, "--rerun"]) == 0
        assert set(_status(results, READ).values()) == {"conforms"}
    finally:  # in place again: the file is uv's cached copy too, which the next test installs from
        with open(other_config, "r+b") as handle:
            handle.write(original)
            handle.truncate()


@pytest.mark.e2e
def test_gate_to_an_editable_checkout_edited_to_break_config_read_fails_without_rerun(own_caches, tmp_path, capsys):
    from conformance import cli

    python = _uv_environment(tmp_path / "fork", f"jax=={RELEASE}", f"jaxlib=={RELEASE}")
    site = _site(python.parent.parent)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    os.replace(site / "jax", checkout / "jax")  # the fork's checkout, installed as `pip install -e` does: a .pth
    (site / "__editable___jax_finder.pth").write_text(str(checkout) + "\n", encoding="utf-8")

    results = tmp_path / "results"
    argv = ["gate", "--from", RELEASE, "--to-python", str(python), "-k", READ, "-j", "1", "--results", str(results)]
    code = cli.main(argv)
    assert code == 0, capsys.readouterr().out
    capsys.readouterr()
    with open(checkout / "jax" / "_src" / "config.py", "a", encoding="utf-8") as handle:
        handle.write(BREAK_READ)
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 1, out
    assert "1 ran" in out or "(1 ran" in out, out


MARKS_MODULE = """
import os

from conformance.core.case import Expect, Observation, Section

SECTION = Section("Team §9", "What the build's other packages do")


@SECTION.case(rows=["build.marks"], claim="Neither a jax plugin nor numpy of the build marks the process.",
              expect=Expect({"plugin": "", "numpy": ""}))
def marks():
    import jax

    jax.devices()  # starts the backend: jax runs every plugin's initialize()
    return Observation({"plugin": os.environ.get("JAXCONF_PLUGIN_MARK", ""),
                        "numpy": os.environ.get("JAXCONF_NUMPY_MARK", "")})
"""


@pytest.mark.e2e
@pytest.mark.parametrize("edited", ["jax_plugins", "numpy"])
def test_gate_to_a_python_whose_plugin_or_numpy_is_edited_in_place_reruns_and_fails(
    own_caches, tmp_path, capsys, forget, edited
):
    """A02: the build key hashed jax's and jaxlib's files only; a PJRT plugin (jax runs its `initialize()`) or numpy
    edited in place at the same version reused every cell, and `gate --to-python` passed. Now both are in the key."""
    from conformance import cli

    python = _uv_environment(tmp_path / "fork", f"jax=={RELEASE}", f"jaxlib=={RELEASE}")
    site = _site(python.parent.parent)
    plugin = site / "jax_plugins" / "teamplugin" / "__init__.py"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("def initialize():\n    pass\n", encoding="utf-8")
    numpy_init = site / "numpy" / "__init__.py"
    os.replace(numpy_init, numpy_init.with_suffix(".linked"))  # a file of its own: uv's cache keeps its copy
    numpy_init.write_bytes(numpy_init.with_suffix(".linked").read_bytes())
    cases = tmp_path / f"buildmarks{edited.replace('_', '')}"  # a package name of its own per test
    forget.append(cases.name)
    cases.mkdir()
    (cases / "__init__.py").write_text("", encoding="utf-8")
    (cases / "marks.py").write_text(MARKS_MODULE, encoding="utf-8")

    results = tmp_path / "results"
    argv = [
        "gate",
        "--from",
        RELEASE,
        "--to-python",
        str(python),
        "--cases",
        str(cases),
        "-k",
        "marks",
        "-j",
        "1",
        "--results",
        str(results),
    ]
    assert cli.main(argv) == 0, capsys.readouterr()
    capsys.readouterr()
    if edited == "jax_plugins":
        with open(plugin, "a", encoding="utf-8") as handle:  # in place, the same version installed
            handle.write("    import os\n    os.environ['JAXCONF_PLUGIN_MARK'] = 'edited'\n")
    else:
        with open(numpy_init, "a", encoding="utf-8") as handle:
            handle.write("\nimport os as _os\n_os.environ['JAXCONF_NUMPY_MARK'] = 'edited'\n")
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 1, out
    assert "1 ran" in out or "(1 ran" in out, out
    assert "conforms -> differs" in out, out


# ---------------------------------------------------------------- decisions compare exactly what was asked

READ_CASE, OTHER_CASE = "config.reading_the_configuration", "numerics.debug_nans_vmap_miss"
DIGEST = "e" * 64


def _current_key(case: str, param: str) -> str:
    from conformance.core.case import find_case
    from conformance.engine.keys import cell_key

    return cell_key(find_case(case), param, DIGEST)


def _result_file(folder: Path, jax: str, cells: list[dict], suite: str = "0.2.0") -> Path:
    from tests.synthetic_results import report

    data = report(jax, "linux-x86_64", cells, suite=suite, schema=3)
    data["jax_conformance"]["environment_digest"] = DIGEST
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{jax}-linux-x86_64.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _pair(
    tmp_path: Path,
    *,
    other_key: str | None = None,
    other_status: str = "differs",
    suite: str = "0.2.0",
    other_suite: str | None = None,
) -> tuple[Path, Path]:
    """A baseline and a candidate (0.11.0 -> 0.12.0.1): the read cell conforms on both, the vmap cell regresses
    from conforms to `other_status` in the candidate."""
    from tests.synthetic_results import cell

    read = cell(READ_CASE, "read_raises", key=_current_key(READ_CASE, "read_raises"))
    key = other_key if other_key is not None else _current_key(OTHER_CASE, "vmap")
    extra = {"suite_version": other_suite} if other_suite else {}
    base = _result_file(tmp_path / "a", "0.11.0", [read, cell(OTHER_CASE, "vmap", key=key)], suite=suite)
    cand = _result_file(
        tmp_path / "b", "0.12.0.1", [read, cell(OTHER_CASE, "vmap", other_status, key=key, **extra)], suite=suite
    )
    return base, cand


def _gate(base: Path, cand: Path, *more: str) -> int:
    from conformance import cli

    return cli.main(["gate", "--baseline", str(base), "--candidate", str(cand), "--allow-missing", *more])


def test_gate_on_files_with_a_selection_matching_nothing_exits_2(tmp_path, capsys):
    base, cand = _pair(tmp_path)
    assert _gate(base, cand, "-k", "matches_nothing") == 2
    assert "selects no cell" in capsys.readouterr().err


def test_gate_on_files_compares_only_the_selected_cells(tmp_path, capsys):
    base, cand = _pair(tmp_path)
    assert _gate(base, cand) == 1  # the vmap cell regressed
    capsys.readouterr()
    assert _gate(base, cand, "-k", READ_CASE) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert OTHER_CASE not in out and "1 cell(s) compared" in out


def test_diff_on_files_compares_only_the_selected_cells(tmp_path, capsys):
    from conformance import cli

    base, cand = _pair(tmp_path)
    assert cli.main(["diff", str(base), str(cand), "-k", READ_CASE]) == 0
    assert OTHER_CASE not in capsys.readouterr().out
    assert cli.main(["diff", str(base), str(cand), "-k", "matches_nothing"]) == 2


def test_a_stored_cell_whose_key_no_longer_matches_the_checkout_is_left_out_and_named(tmp_path, capsys):
    base, cand = _pair(tmp_path, other_key="0" * 32)  # written before its case changed
    assert _gate(base, cand) == 0
    out = capsys.readouterr().out
    assert f"{OTHER_CASE}[vmap]" in out and "left out" in out and "stale" in out


def test_the_suite_version_refusal_looks_at_every_cell_not_only_the_header(tmp_path, capsys):
    base, cand = _pair(tmp_path, other_status="conforms", other_suite="0.1.0")
    assert _gate(base, cand) == 2
    assert "0.1.0" in capsys.readouterr().err


def test_a_merge_stamps_each_cell_with_the_suite_version_that_wrote_it():
    from conformance.results.merge import merge_report_json
    from tests.synthetic_results import cell, report

    stored = report("0.12.0.1", "linux-x86_64", [cell(READ_CASE, "read_raises")], suite="0.1.0")
    new = report("0.12.0.1", "linux-x86_64", [cell(OTHER_CASE, "vmap")], suite="0.2.0")
    merged = merge_report_json(stored, new)
    stamps = {t["metadata"]["case"]: t["metadata"].get("suite_version") for t in merged["tests"]}
    assert stamps == {READ_CASE: "0.1.0", OTHER_CASE: "0.2.0"}


def test_gate_from_to_compares_only_the_selected_cells(tmp_path, capsys, monkeypatch):
    """`--from/--to -k X`: whatever else the two version files hold (a stale cell of a case outside X that
    regressed), only X decides."""
    from conformance import cli
    from conformance.engine import matrix

    base, cand = _pair(tmp_path)
    monkeypatch.setattr(matrix, "run_for_answers", lambda settings, builder, targets, on_event: [base, cand])
    code = cli.main(
        ["gate", "--from", "0.11.0", "--to", "0.12.0.1", "-k", READ_CASE, "--results", str(tmp_path / "results")]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert OTHER_CASE not in out


# ---------------------------------------------------------------- no secret in the CI layer

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / ".github" / "scripts"
TOKEN = "s3cr3tTOKENx91"


def _every_text_under(folder: Path) -> str:
    texts = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            texts.append(path.read_bytes().decode("utf-8", "replace"))
    return "\n".join(texts)


def _run_script(tmp_path: Path, script: str, **env: str) -> subprocess.CompletedProcess:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    environ = {
        **os.environ,
        "PYTHON": PY,
        "JAX_CONFORMANCE_CACHE": str(work / "cache"),
        "GITHUB_OUTPUT": str(work / "github-output"),
        "GITHUB_STEP_SUMMARY": str(work / "summary"),
        "PYTHONPATH": str(ROOT),
        **env,
    }
    return subprocess.run(
        ["bash", str(SCRIPTS / script)], cwd=work, env=environ, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "given",
    [
        {"WHEELS": "wheels"},
        {"JAX": "0.12.0.1"},
    ],
)
def test_the_run_script_never_prints_an_index_token(tmp_path, given):
    (tmp_path / "work" / "wheels").mkdir(parents=True)
    urls = {
        "INDEX_URL": f"http://user:{TOKEN}@127.0.0.1:9/simple",
        "EXTRA_INDEX_URL": f"http://__token__:{TOKEN}@127.0.0.1:9/a http://{TOKEN}@127.0.0.1:9/b",
    }
    done = _run_script(tmp_path, "run-shard.sh", PRE="1", SELECT="config", SHARD="1/2", **urls, **given)
    assert done.returncode != 0  # the index cannot be reached or the folder holds no wheel: it stops, in one line
    assert "jax-conformance" in done.stdout + done.stderr
    assert TOKEN not in done.stdout and TOKEN not in done.stderr
    assert TOKEN not in _every_text_under(tmp_path / "work")


def test_the_command_line_echoed_by_the_run_script_still_names_the_index_host(tmp_path):
    (tmp_path / "work" / "wheels").mkdir(parents=True)
    done = _run_script(
        tmp_path, "run-shard.sh", WHEELS="wheels", INDEX_URL=f"https://user:{TOKEN}@mirror.invalid/simple"
    )
    assert "--index-url https://***@mirror.invalid/simple" in done.stdout, done.stdout


def test_the_actions_cache_key_holds_a_hash_of_the_index_without_its_credentials(tmp_path):
    import yaml

    action = (ROOT / ".github" / "actions" / "conformance" / "action.yml").read_text(encoding="utf-8")
    steps = yaml.safe_load(action)["runs"]["steps"]
    cache = next(s for s in steps if str(s.get("uses", "")).startswith("actions/cache@"))
    expressions = cache["with"]["key"] + cache["with"]["restore-keys"]
    assert "index-url" not in expressions and "INDEX_URL" not in expressions
    keyed = next(s for s in steps if "cache-key.sh" in s.get("run", ""))
    assert f"steps.{keyed['id']}.outputs.index" in cache["with"]["key"]

    def key(url: str) -> str:
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        done = _run_script(tmp_path, "cache-key.sh", INDEX_URL=url, GITHUB_OUTPUT=str(out))
        assert done.returncode == 0, done.stderr
        text = out.read_text(encoding="utf-8") + done.stdout + done.stderr
        assert TOKEN not in text
        (line,) = [line for line in text.splitlines() if line.startswith("index=")]
        return line.split("=", 1)[1]

    first = key(f"https://user:{TOKEN}@mirror.example/simple")
    assert first == key(f"https://other:{TOKEN}2@mirror.example/simple")  # the same index, another token
    assert first != key("https://another.example/simple") and len(first) >= 16
    assert key("") == key("")


# Passwords a mirror may hand out: an unencoded `@` or `:` (uv and urllib split the netloc at its last `@`), and an
# encoded one. Every script prints and hashes URLs through conformance.scrub (A03: a sed stopping at the first `@`
# printed `https://***@tail-123@host/...`).
HARD_PASSWORDS = [
    f"S3cr@{TOKEN}",
    f"{TOKEN}:x@y",
    f"S3cr%40{TOKEN}",
    f"a@b:{TOKEN}@c",
    f"S3cr {TOKEN}",
    f"S3cr#{TOKEN}?q",
    f"S3cr {TOKEN}#x",
]


@pytest.mark.parametrize("password", HARD_PASSWORDS)
def test_the_run_script_masks_a_password_holding_at_signs_colons_and_escapes(tmp_path, password):
    (tmp_path / "work" / "wheels").mkdir(parents=True)
    # EXTRA_INDEX_URL is a list split at spaces, as uv reads UV_EXTRA_INDEX_URL: no password there holds a space.
    extra = {} if " " in password else {"EXTRA_INDEX_URL": f"http://{password}@127.0.0.1:9/b"}
    done = _run_script(
        tmp_path, "run-shard.sh", WHEELS="wheels", INDEX_URL=f"https://ci-bot:{password}@host.invalid/simple", **extra
    )
    said = done.stdout + done.stderr
    assert TOKEN not in said and "S3cr" not in said
    assert "--index-url https://***@host.invalid/simple" in done.stdout
    assert not extra or "http://***@127.0.0.1:9/b" in done.stdout


@pytest.mark.parametrize("user", ["ci-bot:", ""])
def test_a_password_with_a_space_in_the_extra_index_list_is_masked_in_both_halves(tmp_path, user):
    """Review: EXTRA_INDEX_URL is split at spaces, so `https://ci-bot:S3cr3t pa55@host/simple` reached the echo as
    `https://ci-bot:S3cr3t` (printed raw: no `@`) and `pa55@host/simple`. Both halves are masked now."""
    (tmp_path / "work" / "wheels").mkdir(parents=True)
    done = _run_script(
        tmp_path, "run-shard.sh", WHEELS="wheels", EXTRA_INDEX_URL=f"https://{user}S3cr3t {TOKEN}@host.invalid/simple"
    )
    said = done.stdout + done.stderr
    assert TOKEN not in said and "S3cr3t" not in said and "ci-bot" not in said
    assert "--extra-index-url https://*** --extra-index-url ***@host.invalid/simple" in done.stdout


@pytest.mark.parametrize("password", HARD_PASSWORDS)
def test_the_cache_key_of_a_hard_password_is_the_key_of_the_bare_index(tmp_path, password):
    def key(url: str) -> str:
        out = tmp_path / f"out-{len(list(tmp_path.iterdir()))}"
        done = _run_script(tmp_path, "cache-key.sh", INDEX_URL=url, GITHUB_OUTPUT=str(out))
        assert done.returncode == 0 and TOKEN not in out.read_text() + done.stdout + done.stderr, done.stderr
        return out.read_text().strip()

    assert key(f"https://ci-bot:{password}@host.example/simple") == key("https://host.example/simple")


@pytest.mark.parametrize("password", HARD_PASSWORDS)
def test_the_one_scrubber_masks_printed_text_and_strips_recorded_urls(password):
    from conformance.scrub import scrub_credentials, scrub_url, without_credentials

    url = f"https://ci-bot:{password}@host.example:8443/simple/jax/"
    assert without_credentials(url) == "https://host.example:8443/simple/jax/"
    assert (
        scrub_credentials(f"fetching {url} failed", url) == "fetching https://***@host.example:8443/simple/jax/ failed"
    )
    assert TOKEN not in scrub_url(url) and TOKEN not in without_credentials(url.replace("://", ":/"))
    quoted = f"nonnumeric port: '{password}@host.example'"  # a library quoting the netloc without its scheme
    assert TOKEN not in scrub_credentials(quoted, url)
    assert without_credentials("https://host.example/simple") == "https://host.example/simple"
    assert scrub_credentials("mail me@example.com at https://host/x") == "mail me@example.com at https://host/x"


def test_no_workflow_script_prints_or_hashes_a_url_without_the_shared_scrubber():
    for script in sorted(SCRIPTS.glob("*.sh")) + [
        ROOT / ".github" / "actions" / "conformance" / "action.yml",
        ROOT / ".github" / "workflows" / "conformance.yml",
    ]:
        text = script.read_text(encoding="utf-8")
        assert not re.search(r"\bsed\b[^\n]*://", text), f"{script.name} scrubs a URL with sed"
        if "INDEX_URL" in text and script.suffix == ".sh" and ("echo" in text or "sha256" in text):
            assert "conformance.scrub" in text, f"{script.name} prints or hashes INDEX_URL without conformance.scrub"


# ---------------------------------------------------------------- a build is never a release


def test_a_build_of_a_release_version_run_alone_is_stored_apart_from_the_release(tmp_path):
    from conformance.results.store import ResultStore

    where = ResultStore(tmp_path / "results").target_folders(
        [("0.12.0.1", "python-0123456789"), ("0.12.0.1+corp.3", "wheels-abcdef0123")]
    )
    assert where[0].parent == tmp_path / "results" / "builds"
    assert where[1] == tmp_path / "results"  # its own version: no release has it


def _headed(folder: Path, jax: str, source: dict, status: str) -> Path:
    from tests.synthetic_results import cell, report

    data = report(jax, "linux-x86_64", [cell(READ_CASE, "read_raises", status)], schema=3)
    data["jax_conformance"]["source"] = source
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{jax}-linux-x86_64.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_report_of_a_folder_gives_a_build_of_a_release_version_its_own_column(tmp_path):
    from conformance.report.model import build_model
    from conformance.results.load import load_results

    results = tmp_path / "results"
    _headed(results, "0.12.0.1", {"kind": "index"}, "conforms")
    _headed(results / "builds" / "python-0123456789", "0.12.0.1", {"kind": "python", "python": "/x"}, "differs")
    model = build_model(load_results(results), [])
    assert [(c.jax, c.origin) for c in model.columns] == [
        ("0.12.0.1", "the package index"),
        ("0.12.0.1", "an existing interpreter (not built by the suite)"),
    ]


def test_a_build_is_never_merged_into_a_releases_file(tmp_path):
    from conformance.results.store import ResultStore
    from tests.synthetic_results import cell, report

    results = tmp_path / "results"
    release = _headed(results, "0.12.0.1", {"kind": "index"}, "conforms")
    run = report("0.12.0.1", "linux-x86_64", [cell(OTHER_CASE, "vmap")], schema=3)
    run["jax_conformance"]["source"] = {"kind": "python", "python": "/their/env/bin/python"}
    stored = ResultStore(results).merge_run(run)
    assert stored.set_aside is not None and "another build" in stored.set_aside.describe()
    merged = json.loads(release.read_text(encoding="utf-8"))
    assert [t["metadata"]["case"] for t in merged["tests"]] == [OTHER_CASE]  # the release's cell is not in it
    assert any(p.name.startswith(".0.12.0.1-linux-x86_64.json") for p in results.iterdir())  # kept, set aside


def test_a_wheel_whose_file_name_and_metadata_disagree_is_refused_in_one_line(tmp_path):
    from conformance.envs.wheels import read_wheels
    from conformance.errors import ConformanceError
    from tests.test_builds import LINUX, make_wheel

    make_wheel(tmp_path / "w", "jax-0.12.0.1+corp.3-py3-none-any.whl", version="0.12.0.1")
    with pytest.raises(ConformanceError) as caught:
        read_wheels(tmp_path / "w", LINUX)
    message = str(caught.value)
    assert "0.12.0.1+corp.3" in message and "METADATA" in message and "\n" not in message


# ---------------------------------------------------------------- bounded everywhere: signals, processes, output

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc, prctl and rlimits")


@linux_only
@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_importing_a_case_module_that_ignores_sigchld_leaves_the_importers_signals_alone(tmp_path, forget, launcher):
    """The CLI, pytest's collection and the fork server import case modules: a module that ignores SIGCHLD at
    import must not take the importer's child exit statuses (uv's, a spawned cell's) with it."""
    import signal

    from conformance.core.case import load_cases
    from conformance.engine.folders import case_folder, import_folder
    from conformance.engine.runner import Target
    from conformance.engine.selection import all_cells
    from conformance.engine.session import RunSession
    from tests.test_foreign_processes import SIGNAL_MODULE, write_folder

    saved = signal.getsignal(signal.SIGCHLD)
    name = f"sigimport{launcher}"
    folder = case_folder(write_folder(tmp_path, name, SIGNAL_MODULE))
    forget.append(name)
    try:
        cells = all_cells(load_cases(import_folder(folder)))
        assert signal.getsignal(signal.SIGCHLD) == saved
        done = subprocess.run([PY, "-c", "import sys; sys.exit(3)"], timeout=30)
        assert done.returncode == 3  # an exit status is still seen
        target = Target(PY, "linux-x86_64", "0.8.0", name, (str(folder.path),))
        (found,) = RunSession(target, launcher=launcher).run(cells).results
        assert found.status.value == "conforms", found.reason
    finally:
        signal.signal(signal.SIGCHLD, saved)


SLEEPER_MODULE = """
import time

from conformance.core.case import Expect, Observation, Section

SECTION = Section("Team §9", "Sleepers")


@SECTION.case(rows=["sleep.long"], claim="A probe that sleeps.", expect=Expect({"ok": True}), timeout_s=5)
def sleeps():
    time.sleep(300)
    return Observation({"ok": True})
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@linux_only
def test_the_fork_server_kills_its_children_when_its_input_closes(tmp_path):
    """Its parent (pytest) killed with -9 enforces no time limit any more: the server must not leave a cell running."""
    from conformance.core.casefolders import FOLDERS_VARIABLE, folders_variable
    from tests.test_foreign_processes import write_folder

    folder = write_folder(tmp_path, "sleepers", SLEEPER_MODULE)
    environ = {**os.environ, "PYTHONPATH": SOURCE_ROOT, FOLDERS_VARIABLE: folders_variable([folder])}
    server = subprocess.Popen(
        [PY, "-m", "conformance.child.forkserver", "--package", "sleepers"],
        env=environ,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    started = {}
    try:
        assert json.loads(server.stdout.readline())["event"] == "ready"
        cell = tmp_path / "cell"
        cell.mkdir()
        request = {
            "id": 1,
            "token": "t0k",
            "cwd": str(cell),
            "out": str(cell / "out.json"),
            "case": "sleepers/cases.sleeps",
            "param": "",
        }
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        started = json.loads(server.stdout.readline())
        assert started["event"] == "started" and _alive(started["pid"])
        server.stdin.close()  # as when its parent dies
        assert server.wait(timeout=20) == 0
        assert not _alive(started["pid"])
    finally:
        server.kill()
        server.wait()
        if started:
            try:
                os.killpg(started["pid"], 9)  # before the fix the cell outlives the server
            except OSError:
                pass


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body + "\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_child_command_keeps_only_a_bounded_tail_of_what_it_prints(tmp_path):
    from conformance.portable import run_bounded

    printer = _script(tmp_path / "printer", "head -c 20000000 /dev/zero | tr '\\0' a; echo; echo LAST LINE; exit 3")
    done = run_bounded([str(printer)], timeout=60, limit=4096)
    assert done.returncode == 3 and not done.timed_out
    assert len(done.output) <= 4096 and done.output.rstrip().endswith("LAST LINE")


@linux_only
def test_a_python_that_hangs_is_refused_after_a_short_timeout_and_its_children_are_killed(tmp_path, monkeypatch):
    import time

    from conformance.envs import existing
    from conformance.errors import ConformanceError

    assert existing.DESCRIBE_TIMEOUT_S <= 120  # not five minutes
    monkeypatch.setattr(existing, "DESCRIBE_TIMEOUT_S", 3)
    pids = tmp_path / "pids"
    hanging = _script(tmp_path / "python", f"sleep 300 & echo $! > {pids}; wait")
    started = time.monotonic()
    with pytest.raises(ConformanceError) as caught:
        existing.describe_interpreter(str(hanging))
    assert time.monotonic() - started < 30
    assert "\n" not in str(caught.value) and "did not answer" in str(caught.value)
    assert not _alive(int(pids.read_text()))


def test_a_python_that_prints_without_end_is_refused_in_one_bounded_line(tmp_path, monkeypatch):
    from conformance.envs import existing
    from conformance.errors import ConformanceError

    printer = _script(tmp_path / "python", "head -c 30000000 /dev/zero | tr '\\0' x; exit 1")
    with pytest.raises(ConformanceError) as caught:
        existing.describe_interpreter(str(printer))
    message = str(caught.value)
    assert "\n" not in message and len(message) < 600


def test_a_wheel_whose_metadata_is_a_zip_bomb_is_refused_in_one_line(tmp_path):
    import zipfile

    from conformance.envs.wheels import read_wheels
    from conformance.errors import ConformanceError
    from tests.test_builds import LINUX

    folder = tmp_path / "w"
    folder.mkdir()
    with zipfile.ZipFile(folder / "jax-0.12.0.1-py3-none-any.whl", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "jax-0.12.0.1.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: jax\nVersion: 0.12.0.1\n" + "X-Pad: " + "0" * 60_000_000,
        )
    assert (folder / "jax-0.12.0.1-py3-none-any.whl").stat().st_size < 1_000_000
    with pytest.raises(ConformanceError) as caught:
        read_wheels(folder, LINUX)
    assert "METADATA" in str(caught.value) and "\n" not in str(caught.value)


@linux_only
def test_wheels_hashes_regular_files_only_a_fifo_named_like_a_wheel_is_refused(tmp_path):
    folder = tmp_path / "w"
    folder.mkdir()
    os.mkfifo(folder / "jax-0.12.0.1-py3-none-any.whl")
    code = (
        "from conformance.envs.wheels import read_wheels\nfrom conformance.errors import ConformanceError\n"
        "try:\n    read_wheels(__import__('pathlib').Path(%r), ['linux_x86_64'])\n"
        "except ConformanceError as exc:\n    print('refused:', exc)\n"
    ) % str(folder)
    done = subprocess.run(
        [PY, "-c", code], env={**os.environ, "PYTHONPATH": SOURCE_ROOT}, capture_output=True, text=True, timeout=30
    )
    assert done.stdout.startswith("refused:") and "not a regular file" in done.stdout, done.stdout + done.stderr


PRINTER_MODULE = """
import os
import sys

from conformance.core.case import Expect, Observation, Section

SECTION = Section("Team §9", "Printers")


@SECTION.case(rows=["print.lots"], claim="A probe that prints 100 MB.", expect=Expect({"ok": True}), timeout_s=60)
def prints_a_lot():
    block = "x" * (1 << 20) + "\\n"
    for _ in range(100):
        sys.stdout.write(block)
    sys.stdout.flush()
    return Observation({"ok": True})
"""


@linux_only
@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_a_probe_that_prints_without_bound_is_stopped_at_the_cells_file_size_limit(tmp_path, forget, launcher):
    from conformance.core.case import load_cases
    from conformance.engine.folders import case_folder, import_folder
    from conformance.engine.runner import Target
    from conformance.engine.selection import all_cells
    from conformance.engine.session import RunSession
    from tests.test_foreign_processes import write_folder

    name = f"printers{launcher}"
    folder = case_folder(write_folder(tmp_path, name, PRINTER_MODULE))
    forget.append(name)
    cells = all_cells(load_cases(import_folder(folder)))
    target = Target(PY, "linux-x86_64", "0.8.0", name, (str(folder.path),))
    (found,) = RunSession(target, launcher=launcher).run(cells).results
    # Python ignores SIGXFSZ, so the write past the limit raises in the probe: an error naming why.
    assert found.status.value in ("error", "crash"), (found.status, found.reason)
    assert "File too large" in found.reason or "SIGXFSZ" in found.reason, found.reason


@linux_only
def test_a_cell_runs_under_a_file_size_and_a_process_count_limit(tmp_path):
    import resource

    code = (
        "import resource; from conformance.portable import limit_cell_resources; limit_cell_resources(); "
        "print(resource.getrlimit(resource.RLIMIT_FSIZE)[0], resource.getrlimit(resource.RLIMIT_NPROC)[0])"
    )
    done = subprocess.run(
        [PY, "-c", code], env={**os.environ, "PYTHONPATH": SOURCE_ROOT}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    fsize, nproc = map(int, done.stdout.split())
    assert 0 < fsize <= 256 * 1024 * 1024
    assert nproc != resource.RLIM_INFINITY and nproc > 0


def test_sigterm_during_diff_ends_as_during_run(tmp_path):
    """`diff A B` runs cells (a side named by a version): SIGTERM must unwind it as it unwinds `run` (children
    killed, temporaries removed, exit 143), not end it where it stands."""
    script = (
        "import os, signal, sys, time\nfrom conformance import cli\n"
        "def under_way(args):\n    os.kill(os.getpid(), signal.SIGTERM)\n    time.sleep(30)\n    return 0\n"
        "cli.COMMANDS[sys.argv[1]] = under_way\nsys.exit(cli.main(sys.argv[1:]))\n"
    )
    for command in (["diff", "a", "b"], ["run", "--jax", "0.12.0.1"]):
        done = subprocess.run(
            [PY, "-c", script, *command],
            env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 143 and "interrupted" in done.stderr, (command, done.returncode, done.stderr)


def test_a_run_removes_the_running_files_of_a_process_that_is_gone(tmp_path):
    from conformance.engine.matrix import remove_orphaned_running_files

    results = tmp_path / "results"
    results.mkdir()
    gone = [results / ".running-999999999-x1.json", results / ".running-999999999-x1.json.cells"]
    mine = [results / f".running-{os.getpid()}-y2.json", results / f".running-{os.getpid()}-y2.json.cells"]
    for path in gone + mine:
        path.write_text("{}")
    assert sorted(remove_orphaned_running_files(results)) == sorted(gone)
    assert not any(p.exists() for p in gone) and all(p.exists() for p in mine)


@linux_only
def test_the_pytest_of_a_run_ends_when_its_cli_is_killed(tmp_path):
    """`kill -9` of the CLI: the pytest it started must not go on alone (Linux: the parent-death signal)."""
    import time

    pid_file = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\nfrom conformance.engine.matrix import pytest_process_options\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
        f"**pytest_process_options())\nopen({str(pid_file)!r}, 'w').write(str(child.pid))\ntime.sleep(120)\n"
    )
    parent = subprocess.Popen([PY, "-c", script], env={**os.environ, "PYTHONPATH": SOURCE_ROOT})
    try:
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        child = int(pid_file.read_text())
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child)
    finally:
        parent.kill()
        if pid_file.exists() and pid_file.read_text():
            try:
                os.kill(int(pid_file.read_text()), 9)
            except OSError:
                pass


def test_one_line_errors_escape_the_control_characters_they_echo(capsys):
    from conformance import cli

    assert cli.main(["run", "--python", "/no/such/\x1b[31mred\rline\nnext"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\r" not in err and err.count("\n") == 1, repr(err)
    assert "\\x1b[31mred" in err


# ---------------------------------------------------------------- indexes: HTML-only (PEP 503), file://, provenance

PEP503_PAGE = """<!DOCTYPE html><html><body>
<a href="../../files/jax-0.12.0.1-py3-none-any.whl#sha256=00" data-requires-python="&gt;=3.12">jax-0.12.0.1-py3-none-any.whl</a>
<a href="../../files/jax-0.12.0.2-py3-none-any.whl" data-requires-python="&gt;=3.12" data-yanked="">jax-0.12.0.2-py3-none-any.whl</a>
<a href="../../files/jax-0.4.38.tar.gz">jax-0.4.38.tar.gz</a>
</body></html>
"""  # noqa: E501 - a PEP 503 page's anchors, one a line as an index writes them


def _html_index(root: Path) -> Path:
    (root / "simple" / "jax").mkdir(parents=True)
    (root / "simple" / "jax" / "index.html").write_text(PEP503_PAGE, encoding="utf-8")
    return root / "simple"


def test_a_file_index_with_html_pages_is_read(tmp_path):
    from conformance.envs.index import IndexOptions, PackageIndex

    simple = _html_index(tmp_path)
    index = PackageIndex(tmp_path / "cache", options=IndexOptions(index_url=simple.as_uri()))
    releases = index.releases("jax")
    assert set(releases) == {"0.12.0.1", "0.4.38"}  # the yanked one left out
    assert releases["0.12.0.1"].requires_python == ">=3.12"


def test_an_html_only_http_index_is_read(tmp_path):
    import functools
    import http.server
    import threading

    from conformance.envs.index import fetch_project_page, parse_simple_json

    simple = _html_index(tmp_path)

    class HtmlOnly(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(HtmlOnly, directory=str(simple)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        page = fetch_project_page("jax", f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
        server.server_close()
    assert set(parse_simple_json(page)) == {"0.12.0.1", "0.4.38"}


def test_pip_index_url_is_not_named_as_the_index_uv_reads(monkeypatch):
    from conformance.envs.index import DEFAULT_INDEX, index_url

    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_INDEX_URL", "https://pip-only.example/simple")
    assert index_url() == DEFAULT_INDEX  # uv does not read PIP_INDEX_URL, so it is not the provenance either
    monkeypatch.setenv("UV_INDEX_URL", "file:///srv/simple")
    assert index_url() == "file:///srv/simple"


# ---------------------------------------------------------------- low items


@pytest.mark.parametrize(
    "kind, target",
    [
        ("python", "--python PYTHON"),
        ("wheels", "--wheels WHEELS_DIR"),
        ("pair", "--pair 0.12.0.1:JAXLIB"),
        ("source", "--python PYTHON"),
        ("", "--jax 0.12.0.1"),
    ],
)
def test_the_reproduce_line_of_a_build_names_the_build_not_the_release(kind, target):
    from conformance.engine.runner import SOURCE_KINDS

    assert kind in SOURCE_KINDS  # the plugin's --jax-source-kind takes every kind a build records
    from conformance.core.case import find_case
    from conformance.engine.runner import reproduction_command

    line = reproduction_command(find_case(READ_CASE), "read_raises", "0.12.0.1", source_kind=kind)
    assert line.startswith(f"jax-conformance run {target} -k"), line


def test_diff_names_a_local_build_in_any_spelling_of_its_label(tmp_path):
    from conformance.decide.sides import stored_build
    from tests.synthetic_results import cell, write

    results = tmp_path / "results"
    stored = write(results, "0.12.0.1+corp.3", "linux-x86_64", [cell(READ_CASE, "read_raises")])
    on = lambda: "linux-x86_64"  # noqa: E731
    assert stored_build(results, Path("0.12.0.1+corp_3"), on) == stored
    assert stored_build(results, Path("0.12.0.1+CORP-3"), on) == stored


def test_every_report_labels_a_builds_column_by_its_source(tmp_path):
    from conformance.report.markdown import markdown_summary
    from conformance.report.model import build_model
    from conformance.results.load import load_results

    results = tmp_path / "results"
    _headed(results, "0.12.0.1", {"kind": "index"}, "conforms")
    _headed(results / "builds" / "python-0123456789", "0.12.0.1", {"kind": "python", "python": "/x"}, "differs")
    model = build_model(load_results(results), [])
    assert [c.label for c in model.columns] == ["0.12.0.1", "0.12.0.1 (existing interpreter)"]
    text = markdown_summary(model, full=True)
    assert "\n| 0.12.0.1 (existing interpreter) | " in text  # the overview's row
    assert "| section | cell | 0.12.0.1 | 0.12.0.1 (existing interpreter) |" in text  # the every-cell table


def test_the_plan_script_never_prints_an_index_token(tmp_path):
    done = _run_script(
        tmp_path,
        "plan.sh",
        VERSIONS="latest",
        RUNNERS="2",
        UV_INDEX_URL=f"http://user:{TOKEN}@127.0.0.1:9/simple",
        UV_EXTRA_INDEX_URL=f"http://{TOKEN}@127.0.0.1:9/b",
    )
    assert done.returncode != 0 and "package index" in done.stderr, done.stderr
    assert TOKEN not in done.stdout + done.stderr and TOKEN not in _every_text_under(tmp_path / "work")


def test_a_merge_stamps_each_cell_with_the_build_that_ran_it():
    from conformance.results.merge import merge_report_json
    from conformance.results.schema import CellResult, build_identity
    from tests.synthetic_results import cell, report

    before = {"kind": "wheels", "wheels": [{"name": "jax-0.12.0.1+corp.3-py3-none-any.whl", "sha256": "a" * 64}]}
    after = {"kind": "wheels", "wheels": [{"name": "jax-0.12.0.1+corp.3-py3-none-any.whl", "sha256": "b" * 64}]}
    stored = report("0.12.0.1+corp.3", "linux-x86_64", [cell(READ_CASE, "read_raises")])
    stored["jax_conformance"]["source"] = before
    new = report("0.12.0.1+corp.3", "linux-x86_64", [cell(OTHER_CASE, "vmap")])
    new["jax_conformance"]["source"] = after
    merged = merge_report_json(stored, new)
    builds = {t["metadata"]["case"]: CellResult.from_json(t["metadata"]).build for t in merged["tests"]}
    assert builds == {READ_CASE: build_identity(before), OTHER_CASE: build_identity(after)}
    assert build_identity(before) != build_identity(after) != ""


@linux_only
@pytest.mark.parametrize(
    "written, said",
    [
        ("[1, 2]", "is JSON but not an object (list)"),
        ('"text"', "is JSON but not an object (str)"),
        ('{"jax": "0.12.0.1", "python": "3.13.0", "platform": "../../x"}', "names the platform '../../x'"),
        ('{"jax": "0.12.0.1", "python": "3.13.0", "platform": 7}', "names the platform '7'"),
        (
            '{"jax": "0.12.0.1", "python": "3.13 \\u001b[2J\\u001b[31mRED", "platform": "linux-x86_64"}',
            "names the Python version '3.13 \\x1b[2J\\x1b[31mRED'",
        ),
    ],
)
def test_a_python_whose_description_is_not_a_usable_object_is_one_line(tmp_path, capsys, written, said):
    """A12: a description that was JSON but not an object gave a traceback, and its platform went into a path."""
    from conformance import cli

    fake = _script(
        tmp_path / "python",
        f"""out=""; while [ $# -gt 0 ]; do [ "$1" = --out ] && out="$2"; shift; done
printf '%s' '{written}' > "$out" """,
    )
    results = tmp_path / "results"
    assert cli.main(["run", "--python", str(fake), "--results", str(results), "-k", "values"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0] and "Traceback" not in err[0], err
    assert not (tmp_path / "x").exists() and not any(tmp_path.parent.glob("x*.json"))
    assert not results.exists() or not any(results.rglob("*.json"))


FORKER_MODULE = """
import os
import time

from conformance.core.case import Expect, Observation, Section

SECTION = Section("§0", "Hostile")


@SECTION.case(rows=["fork.many"], claim="A probe that starts more processes than a cell may.",
              expect=Expect({"ok": True}), timeout_s=120)
def forks_too_many():
    started = []
    for _ in range(700):
        pid = os.fork()
        if pid == 0:
            time.sleep(300)
            os._exit(0)
        started.append(pid)
    with open(os.environ["FORKED_PIDS"], "w") as out:
        out.write(" ".join(map(str, started)))
    time.sleep(300)
    return Observation({"ok": True})
"""


@linux_only
@pytest.mark.skipif(os.geteuid() != 0, reason="as another user RLIMIT_NPROC already bounds a cell (its test above)")
@pytest.mark.parametrize("launcher", ["spawn", "fork"])
def test_as_root_a_cell_that_starts_too_many_processes_is_killed_with_all_of_them(
    tmp_path, forget, launcher, monkeypatch
):
    """N12: root ignores RLIMIT_NPROC, so a cell could fork without bound; its process count is watched instead."""
    import time

    from conformance.core.case import load_cases
    from conformance.engine.folders import case_folder, import_folder
    from conformance.engine.runner import Target
    from conformance.engine.selection import all_cells
    from conformance.engine.session import RunSession
    from conformance.portable import CELL_MAX_PROCESSES
    from tests.test_foreign_processes import write_folder

    assert CELL_MAX_PROCESSES < 700
    pids = tmp_path / "pids"
    monkeypatch.setenv("FORKED_PIDS", str(pids))
    name = f"forkers{launcher}"
    folder = case_folder(write_folder(tmp_path, name, FORKER_MODULE))
    forget.append(name)
    cells = all_cells(load_cases(import_folder(folder)))
    target = Target(PY, "linux-x86_64", "0.8.0", name, (str(folder.path),))
    started = time.monotonic()
    (found,) = RunSession(target, launcher=launcher).run(cells).results
    assert time.monotonic() - started < 100  # not the probe's 300 s of sleep, nor its 120 s limit
    assert found.status.value == "crash", (found.status, found.reason)
    assert f"started more than {CELL_MAX_PROCESSES} processes" in found.stderr_tail, found.stderr_tail
    from conformance.portable import pid_alive
    from tests.waiting import wait_until

    forked = [int(pid) for pid in pids.read_text().split()] if pids.exists() else []
    assert wait_until(lambda: not any(pid_alive(pid) for pid in forked), timeout_s=30)  # none left sleeping


def _runtime_digest(site: Path, setup: str = "") -> str:
    code = (
        "import sys, json; from conformance.child.envinfo import build_digest, runtime_files; "
        f"{setup}; print(build_digest((), runtime_files()))"
    )
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), SOURCE_ROOT])}
    done = subprocess.run([PY, "-c", code], env=environ, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def test_a_build_key_sees_a_loaded_helper_module_and_an_unchecked_pyc(tmp_path):
    """Review of A02: a plugin's own helper module (imported from outside jax_plugins) and a hash-based .pyc that
    Python runs without checking its source changed behaviour while the key stayed; the key now also holds every file
    the process has loaded."""
    import importlib.util
    import py_compile

    site = tmp_path / "site"
    site.mkdir()
    helper = site / "corphelper.py"
    helper.write_text("X64 = False\n", encoding="utf-8")
    before = _runtime_digest(site, "import corphelper")
    helper.write_text("X64 = True\n", encoding="utf-8")
    after = _runtime_digest(site, "import corphelper")
    assert after != before
    package = site / "corpfast"
    package.mkdir()
    source = package / "__init__.py"
    source.write_text("VALUE = 1\n", encoding="utf-8")
    cached = Path(importlib.util.cache_from_source(str(source)))
    py_compile.compile(str(source), cfile=str(cached), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    first = _runtime_digest(site, "import corpfast")
    source.write_text("VALUE = 2\n", encoding="utf-8")  # the .py edited: Python still runs the unchecked .pyc
    py_compile.compile(str(source), cfile=str(cached), invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    source.write_text("VALUE = 1\n", encoding="utf-8")  # and the .py put back: only the .pyc differs now
    assert _runtime_digest(site, "import corpfast") != first


def test_a_plugin_named_by_an_entry_point_that_is_no_identifier_is_in_the_key(tmp_path):
    """Review of A02: an entry point `corp = corp-plugin` (a module name with a dash, which jax imports all the same)
    was dropped from the plugin modules, so its edits reused every cell."""
    site = tmp_path / "site"
    info = site / "corp_plugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: corp-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[jax_plugins]\ncorp = corp-plugin\n", encoding="utf-8")
    module = site / "corp-plugin.py"
    module.write_text("def initialize():\n    pass\n", encoding="utf-8")
    code = "from conformance.child.envinfo import plugin_modules; print(plugin_modules())"
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), SOURCE_ROOT])}
    shown = subprocess.run([PY, "-c", code], env=environ, capture_output=True, text=True, timeout=60, check=True)
    assert "corp-plugin" in shown.stdout
    before = _digest_of(site, "corp-plugin")
    module.write_text("def initialize():\n    import os\n    os.environ['X'] = '1'\n", encoding="utf-8")
    assert _digest_of(site, "corp-plugin") != before


@linux_only
def test_a_cell_running_too_many_threads_is_killed_with_its_group(tmp_path):
    """Review of N12: threads use up the system's task ids as processes do, and 1,502 of them in one cell went on."""
    script = (
        "import sys, threading, time\n"
        "from conformance import portable\n"
        "portable.CELL_MAX_TASKS = 300\n"
        "assert portable.watch_process_count(cap=512)\n"
        "stop = threading.Event()\n"
        "for _ in range(1000):\n"
        "    threading.Thread(target=stop.wait, daemon=True).start()\n"
        "time.sleep(60)\n"
        "print('not killed')\n"
    )
    done = subprocess.run(
        [PY, "-c", script],
        env={**os.environ, "PYTHONPATH": SOURCE_ROOT},
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )  # its own group: the watcher kills it
    assert done.returncode == -9 and "not killed" not in done.stdout
    assert "ran more than 300 threads and processes" in done.stderr
