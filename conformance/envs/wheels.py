"""A folder of jax and/or jaxlib wheel files (`run --wheels DIR`): what it holds, checked before anything is built.

`read_wheels(folder)` finds the folder's jax wheel (there must be exactly one) and its jaxlib wheel (optional:
without one, jaxlib comes from the index as the jax wheel requires it), reads the jax wheel's version from its
metadata (`0.12.0.1+corp.3` for a build with a local label) and `Requires-Python`, hashes every file, and refuses
in one line a folder without a jax wheel or with wheels for another platform. Other wheels in the folder are
passed to uv as `--find-links`, so a team may ship its own dependencies beside them.
"""

from __future__ import annotations

import email.parser
import hashlib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from packaging.tags import Tag, platform_tags
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from conformance.errors import ConformanceError

JAX_PACKAGES = ("jax", "jaxlib")
MAX_METADATA_BYTES = 1024 * 1024  # jax's is a few kB


@dataclass(frozen=True)
class Wheel:
    """One wheel file: its path, project, version (from the file name), tags and sha256."""

    path: Path
    project: str
    version: str
    tags: frozenset[Tag]
    sha256: str

    @property
    def name(self) -> str:
        """The file name."""
        return self.path.name

    @property
    def python_tags(self) -> frozenset[str]:
        """Its interpreter tags (`cp313`, `py3`)."""
        return frozenset(tag.interpreter for tag in self.tags)


@dataclass(frozen=True)
class WheelSet:
    """The wheels of a folder: the jax wheel, the jaxlib wheel (or None), all of them, and jax's metadata."""

    folder: Path
    jax: Wheel
    jaxlib: Wheel | None
    wheels: tuple[Wheel, ...]
    jax_version: str
    requires_python: str | None

    @property
    def digest(self) -> str:
        """The sha256 of the wheels' own hashes, in name order: the identity of the set, naming its environment."""
        text = "\n".join(f"{w.name} {w.sha256}" for w in sorted(self.wheels, key=lambda w: w.name))
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def cp_tags(self) -> frozenset[str]:
        """The CPython tags the compiled jax/jaxlib wheels accept (empty when they are pure Python)."""
        found: set[str] = set()
        for wheel in (self.jax, self.jaxlib):
            if wheel is None or any(t.abi == "abi3" or t.interpreter.startswith("py") for t in wheel.tags):
                continue  # pure Python, or the stable ABI: any CPython from its version on
            tags = {t for t in wheel.python_tags if t.startswith("cp")}
            found = tags if not found else found & tags
        return frozenset(found)

    def describe(self) -> list[dict[str, str]]:
        """What a result header records: each wheel's file name and sha256 (never the folder's path)."""
        return [{"name": w.name, "sha256": w.sha256} for w in sorted(self.wheels, key=lambda w: w.name)]


def sha256_of(path: Path) -> str:
    """The sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheel_metadata(path: Path) -> dict[str, list[str]]:
    """The METADATA fields of a wheel (`Version`, `Requires-Python`, ...), each a list of its values."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")]
            if len(names) != 1:
                raise ConformanceError(f"{path.name} is not a wheel: it holds {len(names)} .dist-info/METADATA files")
            size = archive.getinfo(names[0]).file_size
            if size > MAX_METADATA_BYTES:  # a zip bomb would be read whole into memory
                raise ConformanceError(
                    f"{path.name} is not a wheel the suite reads: its METADATA unpacks to {size} "
                    f"bytes (at most {MAX_METADATA_BYTES})"
                )
            with archive.open(names[0]) as member:
                text = member.read(MAX_METADATA_BYTES + 1)[:MAX_METADATA_BYTES].decode("utf-8")
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise ConformanceError(f"{path.name} is not a readable wheel ({exc})") from None
    message = email.parser.Parser().parsestr(text, headersonly=True)
    return {key: message.get_all(key) or [] for key in set(message.keys())}


def fits_this_machine(wheel: Wheel, machine_platforms: Iterable[str]) -> bool:
    """Whether the wheel installs on this machine's platform (pure-Python wheels always do)."""
    platforms = set(machine_platforms) | {"any"}
    return any(tag.platform in platforms for tag in wheel.tags)


def read_wheels(folder: Path, machine_platforms: Iterable[str] | None = None) -> WheelSet:
    """The checked wheel set of `folder`; one-line `ConformanceError` when it holds no (or two) jax wheels, a file
    whose name is not a wheel's, or a jax/jaxlib wheel for another platform."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConformanceError(f"--wheels {folder}: not a folder of wheel files")
    machine = list(platform_tags() if machine_platforms is None else machine_platforms)
    wheels = []
    for path in sorted(folder.glob("*.whl")):
        if not path.is_file():  # a FIFO or a device named like a wheel would be read without end
            raise ConformanceError(f"--wheels {folder}: {path.name} is not a regular file; put wheel files there")
        try:
            project, version, _, tags = parse_wheel_filename(path.name)
        except InvalidWheelFilename as exc:
            raise ConformanceError(f"--wheels {folder}: {path.name} is not a wheel's file name ({exc})") from None
        wheels.append(Wheel(path.absolute(), str(project), str(version), frozenset(tags), sha256_of(path)))
    by_project = {name: [w for w in wheels if w.project == canonicalize_name(name)] for name in JAX_PACKAGES}
    if not by_project["jax"]:
        found = ", ".join(w.name for w in wheels) or "no wheel files"
        raise ConformanceError(
            f"--wheels {folder} holds no jax wheel (found: {found}); put the jax-*.whl to test "
            f"there, with its jaxlib-*.whl if it is a build of your own"
        )
    for name, found in by_project.items():
        if len(found) > 1:
            raise ConformanceError(
                f"--wheels {folder} holds {len(found)} {name} wheels "
                f"({', '.join(w.name for w in found)}); keep the one to test"
            )
    for wheel in [w for found in by_project.values() for w in found]:
        if not fits_this_machine(wheel, machine):
            platforms = ", ".join(sorted({t.platform for t in wheel.tags}))
            raise ConformanceError(
                f"--wheels {folder}: {wheel.name} is built for {platforms}, not for this machine "
                f"({machine[0] if machine else 'unknown platform'})"
            )
    jax = by_project["jax"][0]
    metadata = wheel_metadata(jax.path)
    version = (metadata.get("Version") or [jax.version])[0]
    try:  # as PEP 440 normalizes it, the form result files and the plugin use (`+corp_3` is `+corp.3`)
        version = str(Version(version))
    except InvalidVersion:
        raise ConformanceError(
            f"{jax.path.name} says its version is {version!r}, which is not a PEP 440 version; fix the wheel's METADATA"
        ) from None
    if Version(version) != Version(jax.version):  # the file name labels a build its METADATA does not say it is
        raise ConformanceError(
            f"--wheels {folder}: {jax.path.name} is named jax {jax.version} but its METADATA says "
            f"{version}; rename the file or fix its METADATA so both name the build"
        )
    return WheelSet(
        folder.absolute(),
        jax,
        (by_project["jaxlib"] or [None])[0],
        tuple(wheels),
        version,
        (metadata.get("Requires-Python") or [None])[0],
    )
