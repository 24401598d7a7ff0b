"""One virtual environment per JAX version, built with uv and cached between runs, safely shared.

An environment holds jax, jaxlib and their dependencies (and rich, as in the chapter's
environment), never this project: the child reaches our source through PYTHONPATH. The
hashed requirement set `matrix/pins/jax-<version>.txt` is installed with hash checking when
it exists, so runs are repeatable; otherwise `jax[cpu]==<version>` (with the same jaxlib
where the index has one) and rich.

Besides releases from the index, `prepare_wheels` builds an environment from a folder of jax/jaxlib wheel files
(cached under the wheels' sha256) and `prepare_python` takes an interpreter the suite did not build, as it is.
`IndexOptions` (`--index-url`, `--extra-index-url`, `--find-links`, `--pre`) go to every uv install; an unpinned
environment built with them is cached apart. Each environment says where it came from (`source`), for the header.

Builds of one environment are serialised by a file lock beside it, so runs that share the
cache never delete an environment another run is using. A build happens in a staging folder
that is removed when the build fails or is interrupted (and, if a process died mid-build,
by the next run). A cached environment whose marker is unreadable, whose interpreter is
missing, that lacks jax or jaxlib or whose jax/jaxlib files no longer match their RECORD (`envs.integrity`) is
rebuilt once, with a notice saying why. Environments are installed as copies (`--link-mode copy`), never as hard
links into uv's cache, so no other environment shares their files.
"""

from __future__ import annotations

import hashlib
import re
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from filelock import FileLock
from packaging.version import Version

from conformance.atomic import write_text_atomically
from conformance.errors import ConformanceError
from conformance.readfile import read_regular_text
from conformance.envs.existing import existing_interpreter
from conformance.envs.integrity import files_problem
from conformance.envs.index import IndexOptions, PackageIndex, check_cache_folder
from conformance.scrub import scrub_credentials
from conformance.envs.interpreters import Interpreter, choose_interpreter, discover_interpreters
from conformance.envs.uvbin import uv_binary  # noqa: F401 - where the others import it from
from conformance.envs.wheels import WheelSet, read_wheels
from conformance.envs.matrix import MATRIX_DIR
from conformance.portable import pid_alive, run_child, venv_python

MARKER = "jax-conformance-env.json"
ENV_LAYOUT = 2
PINS_DIR = MATRIX_DIR / "pins"
EXTRA_PACKAGES = ("rich",)


def cache_root() -> Path:
    """Where environments and index answers are kept: JAX_CONFORMANCE_CACHE, else the user cache folder."""
    if os.environ.get("JAX_CONFORMANCE_CACHE"):
        return Path(os.environ["JAX_CONFORMANCE_CACHE"]).absolute()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "jax-conformance"


@dataclass(frozen=True)
class Requirements:
    """What an environment installs: a hashed pin file, or loose requirement lines."""

    lines: tuple[str, ...]
    pin_file: Path | None = None

    @property
    def digest(self) -> str:
        """The sha256 of the pin file (or of the lines): the pin set's identity, recorded in result headers."""
        data = self.pin_file.read_bytes() if self.pin_file else "\n".join(self.lines).encode()
        return hashlib.sha256(data).hexdigest()


def check_pin_file(path: Path, version: str) -> None:
    """Refuse, in one line naming the file and the fix, a pin file that is empty, garbled, unhashed or of another
    JAX version (uv would otherwise blame a wheel, a hash or a caret)."""
    try:
        text = read_regular_text(path, 16 * 1024 * 1024)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConformanceError(f"{path} cannot be read ({exc}); run `jax-conformance pin {version}`") from None
    pinned = re.findall(r"^jax==(\S+)", text, flags=re.M)
    if not text.strip():
        problem = "is empty"
    elif not pinned:
        problem = "pins no jax (not a pin file)"
    elif pinned != [version]:
        problem = f"pins jax {', '.join(pinned)}, not {version}"
    elif "--hash=sha256:" not in text:
        problem = "has no hashes"
    else:
        return
    raise ConformanceError(f"{path} {problem}; run `jax-conformance pin {version}` to write it again")


def requirements_for(version: str, jaxlib_known: bool | str, pins_dir: Path = PINS_DIR) -> Requirements:
    """The requirements of the environment for jax `version`: its pin file when there is one. `jaxlib_known`:
    True pins jaxlib of the same version, a version string pins that jaxlib (a dev build's of the same night),
    False leaves jaxlib to jax's declared range."""
    pinned = pins_dir / f"jax-{version}.txt"
    if pinned.exists():
        check_pin_file(pinned, version)
        return Requirements((), pinned)
    jaxlib = (f"jaxlib=={version if jaxlib_known is True else jaxlib_known}",) if jaxlib_known else ()
    return Requirements((f"jax[cpu]=={version}", *jaxlib, *EXTRA_PACKAGES))


@dataclass(frozen=True)
class JaxEnvironment:
    """A ready environment for one JAX version.

    `source` says where its jax came from, as the result header records it: `{"kind": "index", "index_url": ...}`,
    `{"kind": "wheels", "wheels": [{"name", "sha256"}, ...], ...}` or `{"kind": "python", "python": PATH}` for an
    interpreter the suite did not build (`executable`; otherwise the interpreter is the venv's own)."""

    version: str
    path: Path
    interpreter: Interpreter
    built_now: bool
    seconds: float
    pins_hash: str = ""
    executable: str = ""
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def python(self) -> str:
        """The environment's interpreter (`Scripts/python.exe` on Windows, `bin/python` elsewhere)."""
        return self.executable or str(venv_python(self.path))

    @property
    def release(self) -> bool:
        """Whether it is a release installed from the index (its results can answer for that release)."""
        return self.source.get("kind", "index") == "index"


def _site_packages(path: Path) -> list[Path]:
    return list(path.glob("lib/python3*/site-packages")) + list(path.glob("Lib/site-packages"))


def environment_problem(path: Path, wanted: dict) -> str | None:
    """Why the cached environment at `path` cannot be used as it is ('' when absent); None when it is fine."""
    marker = path / MARKER
    if not path.exists():
        return ""
    if not marker.exists():
        return "it has no marker (an unfinished build)"
    try:
        found = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "its marker is unreadable"
    if found != wanted:
        return "its requirements changed"
    if not venv_python(path).exists():
        return f"its {venv_python(path).relative_to(path).as_posix()} is missing"
    packages = _site_packages(path)
    for name in ("jax", "jaxlib"):
        if not any((p / name / "__init__.py").exists() for p in packages):
            return f"{name} is missing from its site-packages"
    return files_problem(path, packages)


class EnvironmentBuilder:
    """Builds (or reuses, or repairs) the environment of each JAX version.

    `notices` collects one line for every environment repaired, for the CLI to print.
    """

    def __init__(
        self,
        root: Path | None = None,
        index: PackageIndex | None = None,
        run: Callable[..., subprocess.CompletedProcess] = run_child,
        interpreters: list[Interpreter] | None = None,
        pins_dir: Path = PINS_DIR,
        options: IndexOptions = IndexOptions(),
    ) -> None:
        self.root = root or cache_root()
        self.options = options
        self.index = index or PackageIndex(self.root, options=options)
        self.run = run
        self.pins_dir = pins_dir
        self._interpreters = interpreters
        self.notices: list[str] = []

    @property
    def interpreters(self) -> list[Interpreter]:
        """The installed interpreters, found once."""
        if self._interpreters is None:
            self._interpreters = discover_interpreters()
        return self._interpreters

    def interpreter_for(self, version: str) -> Interpreter:
        """The installed interpreter chosen for jax `version`."""
        release = self.index.jax_release(version)
        wheel_tags = {t for t in self.index.jaxlib_pythons(self.jaxlib_for(version)) if t.startswith("cp")}
        return choose_interpreter(self.interpreters, release.requires_python, frozenset(wheel_tags), f"jax {version}")

    def jaxlib_for(self, version: str) -> str:
        """The jaxlib installed with jax `version`: the same release, or a dev build's jaxlib of the same night;
        '' when the index has no jaxlib wheel for it (jax's declared range then chooses)."""
        found = self.index.jaxlib_for(version)
        return found if found and self.index.jaxlib_pythons(found) else ""

    def requirements(self, version: str) -> Requirements:
        """The requirements of jax `version`'s environment."""
        return requirements_for(version, self.jaxlib_for(version) or False, self.pins_dir)

    def prepare(self, version: str, packages: tuple[str, ...] = ()) -> JaxEnvironment:
        """A ready environment for jax `version`: reused, built now, or rebuilt after a fault. With `packages` (a
        page's own imports, `chapter --with`, checked by `page_packages`), an environment of its own beside the
        release's: the release's requirements, then the packages with jax and jaxlib held at the release's, so the
        environment the probes use never gets them."""
        started = time.monotonic()
        interpreter = self.interpreter_for(version)
        requirements = self.requirements(version)
        minor = ".".join(interpreter.version.split(".")[:2])
        # The pin set's digest is part of the folder, so a run with other pins builds beside a running one
        # instead of replacing the environment it uses. Hashed pins install the same files from any index; loose
        # requirements resolved with other index options are another environment.
        apart = f"-idx{self.options.digest()}" if self.options.given and requirements.pin_file is None else ""
        extra = f"-with{hashlib.sha256(' '.join(packages).encode()).hexdigest()[:10]}" if packages else ""
        path = self.root / "envs" / f"jax-{version}-py{minor}-{requirements.digest[:10]}{apart}{extra}"
        wanted = {
            "layout": ENV_LAYOUT,
            "jax": version,
            "python": interpreter.version,
            "requirements": requirements.digest,
            **({"with": list(packages)} if packages else {}),
        }
        if apart:
            wanted["index"] = self.options.digest()
        source = {"kind": "index", **self.options.describe(), **({"with": list(packages)} if packages else {})}
        jaxlib = self.jaxlib_for(version)
        held = [f"jax=={version}", *([f"jaxlib=={jaxlib}"] if jaxlib else [])]
        if requirements.pin_file is not None:
            install = ["--require-hashes", "-r", str(requirements.pin_file)]
        else:
            install = list(requirements.lines)
        return self._prepare(
            path,
            wanted,
            interpreter,
            install,
            version,
            requirements.digest,
            source,
            pinned=requirements.pin_file is not None,
            started=started,
            then=([*packages, *held],) if packages else (),
        )

    def prepare_python(self, python: str) -> JaxEnvironment:
        """The interpreter at `python`, as it is (nothing built); its jax version read from its metadata."""
        version, interpreter, _, seconds = existing_interpreter(python)
        return JaxEnvironment(
            version,
            Path(interpreter.path).parent,
            interpreter,
            False,
            seconds,
            executable=interpreter.path,
            source={"kind": "python", "python": interpreter.path},
        )

    def wheels_interpreter(self, wheels: WheelSet) -> Interpreter:
        """The installed interpreter for a wheel set: its jax's Requires-Python, and the CPython tags of its
        compiled wheels (or, without a jaxlib wheel, of the index's jaxlib of that release)."""
        tags = set(wheels.cp_tags)
        if wheels.jaxlib is None:
            tags = {t for t in self.index.jaxlib_pythons(Version(wheels.jax_version).public) if t.startswith("cp")}
        return choose_interpreter(
            self.interpreters,
            wheels.requires_python,
            frozenset(tags),
            f"the wheels of {wheels.folder.name} (jax {wheels.jax_version})",
        )

    def prepare_wheels(self, folder: Path) -> JaxEnvironment:
        """An environment built from the jax (and jaxlib) wheel files of `folder`, the rest from the index; cached
        under the wheels' sha256 and the index options."""
        started = time.monotonic()
        wheels = read_wheels(folder)
        interpreter = self.wheels_interpreter(wheels)
        minor = ".".join(interpreter.version.split(".")[:2])
        apart = f"-idx{self.options.digest()}" if self.options.given else ""
        path = self.root / "envs" / f"wheels-jax-{wheels.jax_version}-py{minor}-{wheels.digest[:10]}{apart}"
        wanted = {
            "layout": ENV_LAYOUT,
            "jax": wheels.jax_version,
            "python": interpreter.version,
            "wheels": wheels.digest,
            "index": self.options.digest(),
        }
        # Without its jaxlib wheel, jax's `cpu` extra names the jaxlib it was released with (from the index).
        jax = f"jax{'' if wheels.jaxlib else '[cpu]'} @ {wheels.jax.path.as_uri()}"
        install = [
            jax,
            *([str(wheels.jaxlib.path)] if wheels.jaxlib else []),
            *EXTRA_PACKAGES,
            "--find-links",
            str(wheels.folder),
        ]
        source = {"kind": "wheels", "wheels": wheels.describe(), **self.options.describe()}
        return self._prepare(
            path, wanted, interpreter, install, wheels.jax_version, wheels.digest, source, pinned=False, started=started
        )

    def _prepare(
        self,
        path: Path,
        wanted: dict,
        interpreter: Interpreter,
        install: list[str],
        version: str,
        digest: str,
        source: dict[str, Any],
        *,
        pinned: bool,
        started: float,
        then: tuple[list[str], ...] = (),
    ) -> JaxEnvironment:
        """Reuse the environment at `path` when its marker says `wanted`, else build it with `install`."""
        check_cache_folder(self.root)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path.parent / f".{path.name}.lock")):
            self._remove_stale_staging(path)
            problem = environment_problem(path, wanted)
            if problem is None:
                return JaxEnvironment(
                    version, path, interpreter, False, time.monotonic() - started, digest, source=source
                )
            if problem and problem != "its requirements changed":
                self.notices.append(f"the cached environment for jax {version} was broken ({problem}); rebuilt it")
            self._build(path, interpreter, install, version, pinned, then)
            write_text_atomically(path / MARKER, json.dumps(wanted, indent=1))
        return JaxEnvironment(version, path, interpreter, True, time.monotonic() - started, digest, source=source)

    def _check_importable(self, staging: Path, version: str, interpreter: Interpreter) -> None:
        """Refuse (one line; the staging folder is then removed) an environment where jax cannot be imported."""
        if not any((p / "jaxlib" / "__init__.py").exists() for p in _site_packages(staging)):
            raise ConformanceError(
                f"jax {version} brings no jaxlib wheel for Python {interpreter.version} (nor for "
                f"any other installed Python), so it cannot run here; nothing was kept"
            )
        done = self.run([str(venv_python(staging)), "-c", "import jax"], capture_output=True, text=True)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConformanceError(
                f"jax {version} installs but does not import with Python {interpreter.version} "
                f"({last}); nothing was kept"
            )

    def _remove_stale_staging(self, path: Path) -> None:
        for staging in path.parent.glob(f"{path.name}.building-*"):
            pid = staging.name.rsplit("-", 1)[-1]
            if not pid.isdigit() or int(pid) == os.getpid() or not pid_alive(int(pid)):
                shutil.rmtree(staging, ignore_errors=True)

    def _build(
        self,
        path: Path,
        interpreter: Interpreter,
        requirements: list[str],
        version: str,
        pinned: bool,
        then: tuple[list[str], ...] = (),
    ) -> None:
        """Make the venv in a staging folder, install `requirements`, then each of `then` (more `uv pip install`
        arguments, such as a jax over another release's jaxlib), check that jax imports, and move it in place."""
        staging = path.with_name(f"{path.name}.building-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        uv = uv_binary()
        python = venv_python(staging)
        # Copies, not uv's default hard links into its cache: an edit in another environment made from that cache
        # must not change this one.
        install = [
            uv,
            "pip",
            "install",
            "--quiet",
            "--link-mode",
            "copy",
            "--python",
            str(python),
            *self.options.uv_args(),
            *requirements,
        ]
        try:
            more = [
                [uv, "pip", "install", "--quiet", "--python", str(python), *self.options.uv_args(), *args]
                for args in then
            ]
            for step in ([uv, "venv", "--quiet", "--python", interpreter.path, str(staging)], install, *more):
                done = self.run(step, capture_output=True, text=True)
                if done.returncode != 0:
                    last = scrub_credentials(
                        (done.stderr.strip().splitlines() or ["no output"])[-1], *self.options.urls()
                    )
                    if pinned and "hash" in done.stderr.lower():
                        raise ConformanceError(
                            f"the pinned hashes for jax {version} do not match the package "
                            f"index ({last}); refresh them with `jax-conformance pin {version}`"
                        )
                    raise ConformanceError(
                        f"could not build the environment for jax {version} with Python {interpreter.version}: {last}"
                    )
            self._check_importable(staging, version, interpreter)
            altered = files_problem(staging, _site_packages(staging))
            if altered:
                raise ConformanceError(
                    f"jax {version} installed altered files ({altered[4:]}): uv's cache holds a "
                    f"copy edited in place; run `uv cache clean jax jaxlib` and run again"
                )
            shutil.rmtree(path, ignore_errors=True)
            os.replace(staging, path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


_JAX_ITSELF = re.compile(r"^(?:jax|jaxlib|jax[-_.](?:cuda|rocm|plugin|tpu)[\w.-]*|libtpu[\w.-]*)$", re.I)


def page_packages(texts: Any) -> tuple[str, ...]:
    """The packages `chapter --with` installs for a page (`optax`, `optax==0.2.4`, `flax>=0.10`), checked: each a
    PEP 508 requirement without a URL or a path, never jax, jaxlib or a JAX plugin (they would change the release
    under test); one `ConformanceError` line naming the first that is not, and how to write it."""
    from packaging.requirements import InvalidRequirement, Requirement

    found = []
    for text in texts or ():
        try:
            requirement = Requirement(text) if not text.lstrip().startswith("-") else None
        except InvalidRequirement:
            requirement = None
        if requirement is None or requirement.url:
            raise ConformanceError(
                f"--with {text!r} is not a package requirement; write a name from the package "
                f"index, with a version if you want one (--with optax, --with 'optax==0.2.4')"
            )
        if _JAX_ITSELF.match(requirement.name):
            raise ConformanceError(
                f"--with {requirement.name} would change the release under test; name the "
                f"packages the page imports besides jax (the release is chosen with --jax)"
            )
        found.append(str(requirement))
    return tuple(dict.fromkeys(found))
