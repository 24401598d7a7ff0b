"""child/envinfo: what the child reports of its environment, which the reuse keys digest."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _packages_seen_from(folder: Path) -> dict[str, str]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]); "
        "from conformance.child.envinfo import installed_packages; print(json.dumps(installed_packages()))"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(folder), str(ROOT)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout)


def _distribution(folder: Path, name: str, version: str) -> None:
    info = folder / f"{name.replace('-', '_')}.egg-info"
    info.mkdir(parents=True)
    (info / "PKG-INFO").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_the_suite_s_own_distribution_never_enters_the_environment_s_packages(tmp_path):
    """A checkout installed with `pip install -e .` holds `jax_conformance.egg-info`, which a child running from it
    sees as installed: counted, every cell's key changed with the install, and a CI run from a fresh clone reran
    what an installed checkout had stored. Another distribution seen the same way still counts."""
    _distribution(tmp_path, "jax-conformance", "0.2.0")
    _distribution(tmp_path, "some-plugin", "1.2.3")
    packages = _packages_seen_from(tmp_path)
    assert packages.get("some-plugin") == "1.2.3"
    assert "jax-conformance" not in packages
