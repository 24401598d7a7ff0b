"""Faults of a hostile build (issue 31): what a build's key sees, release environments kept apart from other
environments, decisions limited to what was asked, no secret in the CI layer, bounds everywhere.

Fast tests with fake packages and fake environments; the end-to-end checks with real JAX are marked `e2e`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.envs.existing import SOURCE_ROOT

PY = sys.executable


def _digest_of(site: Path, *names: str) -> str:
    code = ("import sys, json; from conformance.child.envinfo import build_digest; "
            f"print(build_digest({names!r}))")
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
    (info / "direct_url.json").write_text(json.dumps({"url": checkout.as_uri(), "dir_info": {"editable": True}}),
                                          encoding="utf-8")
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
            (info / "RECORD").write_text(f"{name}/__init__.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n"
                                         f"{name}/core.py,sha256={digest},{len(data)}\n"
                                         f"{name}-0.4.38.dist-info/RECORD,,\n")
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
