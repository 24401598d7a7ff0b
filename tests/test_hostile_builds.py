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
