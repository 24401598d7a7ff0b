"""Census files in the results folder, reused by key, and the census run in a target's environment where storage
does not answer.

A release's census is stored as `RESULTS/api/<jax>-<platform>.json`; a given build's (`--python`, `--wheels`, a
pair) as `RESULTS/api/builds/<kind>-<hash>/<jax>-<platform>.json`, never as the release. Besides the census itself
(`conformance.api.census`) a stored file records `environment_digest` (the digest of the environment's installed
distributions and Python, as cells' keys hold it: `engine.keys.environment_digest`; for a build, with its files'
digest), `census_digest` (this checkout's census code), `key` (both hashed), `pins_hash`, `source`, `created` and
`wall_s`.

A release is answered from storage without building anything, as stored cells are: its stored file's `pins_hash`
is the release's pin file's, its `python` is the interpreter the builder would choose now, and its `key`, computed
again from the stored `environment_digest` and this checkout's census code, is the one stored. A build is
described first (one short process in its interpreter) and answered when its key is the stored one.

A census is taken with the census extras on its path (`conformance.api.extras`: absl-py, which some public modules
import on releases that do not declare it), and reads with `getattr` every name the stored censuses of its
platform hold that its own walk does not find (`probe_list`): a name another release has is called removed only
after that.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import conformance
from conformance.api import census as census_module
from conformance.api.extras import extras_digest, extras_folder
from conformance.api.model import Census, census_from, load_census
from conformance.atomic import write_text_atomically
from conformance.engine.keys import environment_digest
from conformance.engine.matrix import host_platform
from conformance.childenv import child_environment
from conformance.envs.existing import describe_interpreter
from conformance.errors import ConformanceError, one_line
from conformance.portable import run_bounded
from conformance.results.versions import version_order

API_FOLDER = "api"
CENSUS_TIMEOUT_S = 600


def census_digest() -> str:
    """The digest of the census code (the child module and the environment description it uses)."""
    digest = hashlib.sha256(f"format {census_module.FORMAT_VERSION}\nextras {extras_digest()}\n".encode())
    for module in (census_module.__file__, Path(conformance.__file__).parent / "child" / "envinfo.py"):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()


def census_key(environment: str, code: str | None = None) -> str:
    """The reuse key of a census: the environment's digest and the census code's."""
    return hashlib.sha256(f"{environment}|{code or census_digest()}".encode()).hexdigest()[:32]


def api_folder(results: Path) -> Path:
    """Where census files are stored in a results folder."""
    return Path(results) / API_FOLDER


def census_path(results: Path, version: str, platform: str, build: str = "") -> Path:
    """The stored census of a release (`build` empty) or of a build (`build` = its storage name)."""
    folder = api_folder(results) / "builds" / build if build else api_folder(results)
    return folder / f"{version}-{platform}.json"


def stored_censuses(results: Path, platform: str = "") -> list[Census]:
    """Every readable release census stored in the results folder (of `platform` when given), oldest first."""
    found = []
    for path in sorted(api_folder(results).glob("*.json")) if api_folder(results).is_dir() else []:
        try:
            census = load_census(path)
        except ConformanceError:
            continue
        if not platform or census.platform == platform:
            found.append(census)
    return sorted(found, key=lambda c: version_order(c.jax))


def _readable(path: Path) -> Census | None:
    try:
        return load_census(path) if path.is_file() else None
    except ConformanceError:
        return None


def answered_release(results: Path, builder: Any, version: str) -> Census | None:
    """The stored census of release `version` when it still answers (see the module docstring), else None."""
    stored = _readable(census_path(results, version, host_platform()))
    if stored is None:
        return None
    try:
        requirements = builder.requirements(version)
        python = builder.interpreter_for(version).version
    except (ConformanceError, OSError):
        return None
    head = stored.header
    if requirements.pin_file is None or head.get("pins_hash") != requirements.digest or head.get("python") != python:
        return None
    return stored if head.get("key") == census_key(str(head.get("environment_digest") or "")) else None


def probe_list(results: Path, platform: str) -> list[str]:
    """The names the stored censuses of `platform` hold (config options left out): what a census reads with
    `getattr` where its own walk does not find them."""
    names: set[str] = set()
    for census in stored_censuses(results, platform):
        names |= {n for n, e in census.names.items() if e.get("kind") != "config" and e.get("state") != "removed"}
    return sorted(names)


def _child_environment(python: str) -> dict[str, str]:
    environ = child_environment(os.environ, {})
    try:
        environ["PYTHONPATH"] += os.pathsep + str(extras_folder(python))
    except ConformanceError:
        pass  # the census runs without them: the modules that need them are recorded failed, with the reason
    return environ


def run_census(python: str, probe: list[str] | None = None, private: list[str] | None = None) -> dict[str, Any]:
    """The census of the interpreter at `python`, in a fresh process (bounded: its output is kept as a tail, and at
    `CENSUS_TIMEOUT_S` it and what it started are stopped), the census extras on its path and the `probe` names
    read too; `ConformanceError` when it produced none."""
    with tempfile.TemporaryDirectory(prefix="jaxconf-census-") as workdir:
        out = Path(workdir) / "census.json"
        command = [python, "-m", "conformance.api.census", "--out", str(out)]
        for option, listed in (("probe", probe), ("private", private)):
            if listed:
                (Path(workdir) / f"{option}.json").write_text(json.dumps(listed), encoding="utf-8")
                command += [f"--{option}", str(Path(workdir) / f"{option}.json")]
        try:
            done = run_bounded(
                command, env=_child_environment(python), timeout=CENSUS_TIMEOUT_S, limit=8192, cwd=workdir
            )
        except OSError as exc:
            raise ConformanceError(f"the census could not start {python} ({exc})") from None
        if done.timed_out:
            raise ConformanceError(f"the census in {python} did not finish within {CENSUS_TIMEOUT_S}s (stopped)")
        if done.returncode != 0 or not out.is_file():
            last = (done.output.strip().splitlines() or ["no output"])[-1]
            raise ConformanceError(f"the census in {python} failed (exit {done.returncode}): {one_line(last)[:300]}")
        return json.loads(out.read_text(encoding="utf-8"))


def private_census(target: Any, builder: Any, names: list[str]) -> Census:
    """The census of the private `names` (`jax._src...`) in the target's environment, taken now (never stored: it
    depends on the scanned code); its names are labelled `private`."""
    env = target.prepare(builder)
    return census_from(run_census(env.python, private=sorted(set(names))), f"private census of {env.version}")


@dataclass(frozen=True)
class CensusRun:
    """A target's census: read from storage (`stored`) or taken now in `seconds`, and where it is stored."""

    census: Census
    path: Path
    stored: bool
    seconds: float


def _store(payload: dict[str, Any], env: Any, environment: str, path_for: Any, seconds: float) -> CensusRun:
    payload.update(
        {
            "pins_hash": getattr(env, "pins_hash", "") or "",
            "environment_digest": environment,
            "census_digest": census_digest(),
            "key": census_key(environment),
            "suite_version": conformance.__version__,
            "source": getattr(env, "source", None) or {},
            "created": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "wall_s": round(seconds, 3),
        }
    )
    path = path_for(str(payload.get("jax")), str(payload.get("platform")))
    write_text_atomically(path, json.dumps(payload, allow_nan=False, separators=(",", ":")))
    return CensusRun(census_from(payload, str(path)), path, False, seconds)


def take_census(target: Any, builder: Any, results: Path, rerun: bool = False, env: Any = None) -> CensusRun:
    """The census of one target (`engine.targets`): answered from storage where its key allows (unless `rerun`),
    else its environment prepared (`env`, when it already is) and the census taken and stored."""
    started = time.monotonic()
    if target.release:
        answered = None if rerun else answered_release(results, builder, target.label)
        if answered is not None:
            return CensusRun(answered, Path(answered.source), True, time.monotonic() - started)
        env = env or target.prepare(builder)
        payload = run_census(env.python, probe_list(results, host_platform()))
        environment = environment_digest(payload.get("packages") or {}, str(payload.get("python") or ""))
        return _store(payload, env, environment, lambda v, p: census_path(results, v, p), time.monotonic() - started)
    env = env or target.prepare(builder)
    described = describe_interpreter(env.python)
    packages = environment_digest(described.get("packages") or {}, str(described.get("python") or ""))
    environment = hashlib.sha256(f"{packages}|{described.get('build_digest') or ''}".encode()).hexdigest()
    build = target.storage_name(env)
    stored = None if rerun else _readable(census_path(results, env.version, str(described.get("platform")), build))
    if stored is not None and stored.header.get("key") == census_key(environment):
        return CensusRun(stored, Path(stored.source), True, time.monotonic() - started)
    payload = run_census(env.python, probe_list(results, str(described.get("platform"))))
    return _store(payload, env, environment, lambda v, p: census_path(results, v, p, build), time.monotonic() - started)
