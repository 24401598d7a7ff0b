"""A small stand-in for the package index, so environment and CLI tests need no network."""

from __future__ import annotations

from pathlib import Path

from conformance.envs.builder import EnvironmentBuilder
from conformance.envs.index import PackageIndex
from conformance.envs.interpreters import Interpreter

PAGES = {
    "jax": {
        "files": [
            {"filename": "jax-0.4.38-py3-none-any.whl", "requires-python": ">=3.10"},
            {"filename": "jax-0.4.38.tar.gz", "requires-python": ">=3.10"},
            {"filename": "jax-0.12.0.1-py3-none-any.whl", "requires-python": ">=3.12"},
            {"filename": "jax-0.12.0.2-py3-none-any.whl", "requires-python": ">=3.12", "yanked": True},
        ]
    },
    "jaxlib": {
        "files": [
            {"filename": "jaxlib-0.4.38-cp310-cp310-manylinux2014_x86_64.whl", "requires-python": ">=3.10"},
            {"filename": "jaxlib-0.4.38-cp313-cp313-manylinux2014_x86_64.whl", "requires-python": ">=3.10"},
            {"filename": "jaxlib-0.12.0.1-cp312-cp312-manylinux_2_27_x86_64.whl", "requires-python": ">=3.12"},
            {"filename": "jaxlib-0.12.0.1-cp314-cp314t-manylinux_2_27_x86_64.whl", "requires-python": ">=3.12"},
        ]
    },
}


def fake_builder(cache: Path, pythons: list[str]) -> EnvironmentBuilder:
    """A builder whose index is `PAGES` and whose installed interpreters have the given versions."""
    interpreters = [Interpreter(f"/opt/python{v}/bin/python3", v) for v in pythons]
    return EnvironmentBuilder(root=cache, index=PackageIndex(cache, fetch=PAGES.__getitem__), interpreters=interpreters)
