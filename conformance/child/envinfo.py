"""Describe a target environment: versions of Python, jax, jaxlib, numpy, and the platform tag.

    python -m conformance.child.envinfo --out FILE

Runs inside the target environment (standard library plus whatever is installed),
writing one JSON object to FILE: versions, platform, backend, devices and the installed
packages. A missing jax is recorded, not raised. The jax and jaxlib versions are the installed distributions'
metadata (a re-tagged build keeps its module's `__version__`; `jax_module_version` records that one), and
`jax_git_hash`/`jaxlib_git_hash` the commits their `version.py` records.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
from typing import Any

from conformance.child.main import write_json_atomically

_MACHINE_ALIASES = {"amd64": "x86_64", "aarch64": "arm64"}
# Windows names its machines as the platform's own tools do: windows-amd64, windows-arm64.
_WINDOWS_MACHINE_ALIASES = {"x86_64": "amd64", "aarch64": "arm64"}


def platform_tag(system: str, machine: str, backend: str | None, gpu_runtime: str = "") -> str:
    """The platform name used by expectations, e.g. `linux-x86_64`, `darwin-arm64`, `windows-amd64`,
    `linux-x86_64-cuda`, `linux-x86_64-rocm` (jax calls both GPU backends `gpu`; `gpu_runtime` is the
    client's platform version, which names ROCm when that is what runs)."""
    machine = machine.lower()
    system = system.lower()
    aliases = _WINDOWS_MACHINE_ALIASES if system == "windows" else _MACHINE_ALIASES
    tag = f"{system}-{aliases.get(machine, machine)}"
    if backend == "gpu":
        return f"{tag}-rocm" if "rocm" in gpu_runtime.lower() else f"{tag}-cuda"
    if backend and backend != "cpu":
        return f"{tag}-{backend}"
    return tag


def _version(module_name: str) -> str | None:
    try:
        return getattr(importlib.import_module(module_name), "__version__", None)
    except Exception:  # noqa: BLE001 - a broken package reads as absent
        return None


def git_hash(package: str) -> str:
    """The commit a jax or jaxlib wheel was built from (`<package>.version._git_hash`); '' when the build records
    none (jax before 0.8 leaves it None) or the package is absent."""
    try:
        found = getattr(importlib.import_module(f"{package}.version"), "_git_hash", None)
    except Exception:  # noqa: BLE001 - a broken package reads as absent
        return ""
    return found if isinstance(found, str) else ""


def distribution_version(name: str) -> str | None:
    """The installed distribution's version from its metadata (`0.12.0.1+corp.3` for a re-tagged wheel, whose
    module still says `__version__ = "0.12.0.1"`); None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def describe_environment() -> dict[str, Any]:
    """Versions and platform of the running interpreter's environment."""
    info: dict[str, Any] = {
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "numpy": _version("numpy"),
        "jax": None,
        "jaxlib": None,
        "backend": None,
        "devices": None,
    }
    try:
        import jax

        info["jax"] = distribution_version("jax") or jax.__version__
        info["jax_module_version"] = jax.__version__
        info["jaxlib"] = distribution_version("jaxlib") or _version("jaxlib")
        info["jax_git_hash"], info["jaxlib_git_hash"] = git_hash("jax"), git_hash("jaxlib")
        info["backend"] = jax.default_backend()
        info["devices"] = [str(d) for d in jax.devices()]
        if info["backend"] == "gpu":
            client = getattr(jax.devices()[0], "client", None)
            info["gpu_runtime"] = str(getattr(client, "platform_version", "") or "")
    except Exception as exc:  # noqa: BLE001
        info["jax_error"] = f"{type(exc).__name__}: {exc}"
        info["jax_installed"] = distribution_version("jax")
    info["platform"] = platform_tag(
        platform.system(), platform.machine(), info["backend"], info.get("gpu_runtime") or ""
    )
    info["packages"] = installed_packages()
    info["build_digest"] = build_digest(OBSERVED_PACKAGES + plugin_modules(), runtime_files())
    return info


# What a build's identity (`--python`, `--wheels`: builds whose files a version number does not pin) covers: every
# package whose files jax runs in a probe's process, so an in-place edit of any of them reruns the build's cells.
# jax and jaxlib; numpy, ml_dtypes and opt_einsum, which `import jax` imports and whose code computes what probes
# observe (dtypes, array conversion, contraction paths); scipy, which jax.scipy calls into; and the plugins
# (`plugin_modules`), whose `initialize()` jax runs when a backend starts; the shared libraries they vendor
# (`numpy.libs`, `scipy.libs`); and, measured rather than listed (`runtime_files`), every file this process has run
# once `import jax` and a backend's start are done: each loaded module outside the standard library (a plugin's own
# helper, sitecustomize), each shared object mapped into the process (Linux), and the `.pth` files that run at start.
# Other installed distributions count by name and version only (`installed_packages`).
OBSERVED_PACKAGES = ("jax", "jaxlib", "numpy", "ml_dtypes", "opt_einsum", "scipy")


def plugin_modules() -> tuple[str, ...]:
    """The modules jax loads as plugins, found as jax finds them (`jax._src.xla_bridge.discover_pjrt_plugins`) but
    without importing any: the `jax_plugins` namespace package (every portion of it), each module an entry point of
    the `jax_plugins` group names, and every other top-level `jax_*` module or `libtpu` (a PJRT plugin's kernels,
    such as `jax_cuda12_plugin`, which jaxlib imports)."""
    import pkgutil
    from importlib import metadata

    found = {"jax_plugins"}
    try:
        entries = metadata.entry_points(group="jax_plugins")
    except Exception:  # noqa: BLE001 - a broken distribution's metadata reads as no entry point
        entries = []
    # An entry point may name a module that is no identifier (`corp-plugin`): jax imports it all the same.
    found.update(entry.value.split(":", 1)[0].split(".", 1)[0].strip() for entry in entries)
    found.update(
        module.name for module in pkgutil.iter_modules() if module.name.startswith("jax_") or module.name == "libtpu"
    )
    return tuple(sorted(name for name in found if name and not any(c in name for c in "/\\ \t\n")))


def _unchecked_pyc(path: str) -> bool:
    """Whether `path` is a hash-based `.pyc` whose source is never checked (PEP 552 flags 0b01): Python runs it
    whatever its `.py` holds."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(8)
    except OSError:
        return False
    return len(header) == 8 and int.from_bytes(header[4:8], "little") & 0b11 == 0b01


def runtime_files() -> list[str]:
    """The files this process has run that are not the standard library's nor the suite's own (see
    OBSERVED_PACKAGES): each loaded module's file (and its cached `.pyc` where Python runs that unchecked), each
    shared object mapped into the process (Linux: /proc/self/maps), the `.pth` files of the site folders, and the
    shared libraries the observed packages vendor (`numpy.libs`)."""
    import os
    import site
    import sysconfig

    # The standard library of the base interpreter (in a venv, `platstdlib` would name the venv's own lib folder).
    base = {
        "base": sys.base_prefix,
        "platbase": sys.base_exec_prefix,
        "installed_base": sys.base_prefix,
        "installed_platbase": sys.base_exec_prefix,
    }
    skip = [os.path.realpath(sysconfig.get_path(k, vars=base)) + os.sep for k in ("stdlib", "platstdlib")]
    skip.append(os.path.realpath(os.path.join(os.path.dirname(__file__), "..")) + os.sep)  # the suite's own code
    found: set[str] = set()
    for module in list(sys.modules.values()):
        for attribute in ("__file__", "__cached__"):
            path = getattr(module, attribute, None)
            if isinstance(path, str) and os.path.isfile(path) and (attribute == "__file__" or _unchecked_pyc(path)):
                found.add(os.path.realpath(path))
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            found.update(
                line.split(None, 5)[5].strip()
                for line in maps
                if len(line.split(None, 5)) == 6 and ".so" in line.rsplit("/", 1)[-1]
            )
    except OSError:
        pass
    folders = [*getattr(site, "getsitepackages", lambda: [])(), site.getusersitepackages()]
    for folder in folders:
        if os.path.isdir(folder):
            found.update(os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".pth"))
            for name in OBSERVED_PACKAGES:
                libs = os.path.join(folder, f"{name}.libs")
                if os.path.isdir(libs):
                    found.update(os.path.join(libs, n) for n in os.listdir(libs))
    system = ("/usr/lib", "/lib", "/usr/lib64", "/lib64", "/usr/local/lib/x86_64-linux-gnu")
    return sorted(
        p for p in found if os.path.isfile(p) and not any(p.startswith(s) for s in skip) and not p.startswith(system)
    )


# The files of a package that run: its Python source and its compiled extensions.
_IMPORTED_SUFFIXES = (".py", ".so", ".pyd", ".dylib", ".dll")


def _package_folders(name: str) -> list[str]:
    """The folders the module `name` is imported from (a checkout's, for an editable install), found without
    importing it; [] when it is not importable."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return sorted(str(p) for p in spec.submodule_search_locations)
    return [spec.origin] if spec.origin else []


def _imported_files(folder: str) -> list[str]:
    import os

    if os.path.isfile(folder):
        return [folder]
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(dirs)
        if os.path.basename(root) == "__pycache__":  # a .pyc Python runs whatever its .py says (PEP 552)
            found += [
                os.path.join(root, f)
                for f in sorted(files)
                if f.endswith(".pyc") and _unchecked_pyc(os.path.join(root, f))
            ]
            continue
        found += [
            os.path.join(root, f)
            for f in sorted(files)
            if f.endswith(_IMPORTED_SUFFIXES) or ".so." in f or ".cpython-" in f
        ]
    return found


def _hash_file(digest: Any, path: str) -> None:
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        digest.update(f"unreadable {exc.errno}".encode())


def build_digest(names: tuple[str, ...], files: list[str] | tuple[str, ...] = ()) -> str:
    """sha256 over what the named packages run: every `.py` and shared object under the folders they are imported
    from (found as `import NAME` would, so an editable install's checkout, edited in place, counts), each file's
    path relative to its folder and content, and the distribution's `direct_url.json` (where an editable or local
    install came from); then each of `files` (`runtime_files`), path and content. What tells two builds of one version
    apart; RECORD alone does not, since an editable install lists no source file in it and an in-place edit changes
    no RECORD."""
    import hashlib
    import os
    from importlib import metadata

    digest = hashlib.sha256()
    for path in files:
        digest.update(f"file {path}\n".encode())
        _hash_file(digest, path)
    for name in names:
        digest.update(f"package {name}\n".encode())
        for folder in _package_folders(name):
            for path in _imported_files(folder):
                digest.update(f"{os.path.relpath(path, folder)}\n".encode())
                _hash_file(digest, path)
        try:
            direct_url = metadata.distribution(name).read_text("direct_url.json") or ""
        except metadata.PackageNotFoundError:
            direct_url = ""
        digest.update(f"\ndirect_url {direct_url}\n".encode())
    return digest.hexdigest()


# The suite's own distribution is seen from the checkout the child runs in only when that checkout was installed
# (`pip install -e .` leaves `jax_conformance.egg-info` there); its version is already part of every reuse key.
SUITE_DISTRIBUTION = "jax-conformance"


def installed_packages() -> dict[str, str]:
    """Every installed distribution of this environment and its version, the suite's own left out (whether it shows
    depends on the checkout, not on the environment: counted, installing the suite made every stored cell stale)."""
    from importlib import metadata

    found = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name and name != SUITE_DISTRIBUTION:
            found[name] = dist.version
    return dict(sorted(found.items()))


def main(argv: list[str] | None = None) -> int:
    """Write the environment description to --out."""
    parser = argparse.ArgumentParser(prog="python -m conformance.child.envinfo")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    write_json_atomically(args.out, describe_environment())
    return 0


if __name__ == "__main__":
    sys.exit(main())
