"""Finding the uv executable (it builds the JAX environments and lists the interpreters)."""

from __future__ import annotations

import shutil

from conformance.errors import ConformanceError


def uv_binary() -> str:
    """The uv executable: the one the `uv` package ships, else one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if not found:
            raise ConformanceError(
                "uv is not installed; run `pip install uv` (it builds the JAX environments)"
            ) from None
        return found
