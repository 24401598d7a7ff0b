"""Synthetic censuses for the unit tests of `conformance.api` (no JAX needed): small, written by hand, and named as
such; what real releases hold is measured by the e2e tests (`tests/test_api_census_e2e.py`)."""

from __future__ import annotations

from typing import Any

from conformance.api.census import FORMAT, FORMAT_VERSION
from conformance.api.model import Census, census_from

PLATFORM = "linux-x86_64"


def fn(
    *params: tuple[str, str, Any],
    origin: str = "",
    state: str = "present",
    message: str = "",
    replacement: str = "",
    kind: str = "function",
    alias_of: str = "",
) -> dict[str, Any]:
    """A function (or, with `kind`, a class) entry with parameters `(name, kind, default-or-None)`."""
    entry: dict[str, Any] = {
        "kind": kind,
        "state": state,
        "origin": origin,
        "signature": "(" + ", ".join(p[0] for p in params) + ")",
        "params": [list(p) for p in params],
    }
    if message:
        entry["message"] = message
    if replacement:
        entry["replacement"] = replacement
    if alias_of:
        entry["alias_of"] = alias_of
    return entry


def module(state: str = "present") -> dict[str, Any]:
    """A module entry."""
    return {"kind": "module", "state": state}


def removed(message: str, replacement: str = "") -> dict[str, Any]:
    """A name the release's deprecation table says is removed."""
    entry: dict[str, Any] = {"kind": None, "state": "removed", "message": message}
    if replacement:
        entry["replacement"] = replacement
    return entry


def config(name: str) -> tuple[str, dict[str, Any]]:
    """A config option entry."""
    return f"jax.config.{name}", {"kind": "config", "state": "present", "value": "False", "env": name.upper()}


def census(
    jax: str, names: dict[str, dict[str, Any]], failed: tuple[str, ...] = (), platform: str = PLATFORM
) -> Census:
    """A census of `names`; every module entry (and `jax`) walked, `failed` modules failed to import."""
    names = {"jax": module(), **names}
    modules: dict[str, dict[str, Any]] = {n: {"status": "ok"} for n, e in names.items() if e.get("kind") == "module"}
    modules.update({m: {"status": "failed", "error": "ModuleNotFoundError: No module named 'absl'"} for m in failed})
    data = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "jax": jax,
        "platform": platform,
        "python": "3.13.0",
        "modules": modules,
        "names": names,
    }
    return census_from(data, f"synthetic {jax}")
