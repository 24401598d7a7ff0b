"""Past the releases: bisect the jax commits between two builds in a jax git checkout (`bisect --jax-source`).

jax is pure Python, so any commit can run over a released jaxlib that it accepts. Between the last good and the
first bad build's commits (their recorded `_git_hash`, else their release tags `jax-vX`), the first-parent history
of the checkout is searched with the same binary search as the releases (`decide.bisect.bisect`); from the good
end back when it is the newer one (`--find-fix`), naming the commit that made the change going forward. Each commit is
exported with `git archive` (the checkout is only read), installed with `--no-deps` over the first bad build's
jaxlib when the commit accepts it, else over the last good build's (`envs.pairs.prepare_source`), and the one cell
is run through the engine's run path (stored under `builds/commit-<hash>-jaxlib-<version>/`). A commit that
accepts neither jaxlib stops the search with the jaxlib range it would need (`SourceStop`). The git plumbing
(`git_lines`, `commit_version`, ...) is kept apart from the search (`search_commits`), which takes its runs as a
function.
"""

from __future__ import annotations

import io
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from conformance.decide.bisect import BisectOutcome, Memo, Untestable, bisect
from conformance.decide.commits import BuildCommits, commit_url
from conformance.envs.pairs import mix_problem
from conformance.portable import run_child
from conformance.errors import ConformanceError


class SourceStop(Exception):
    """A commit no available jaxlib serves: the search stops there (the message says which range it needs)."""


@dataclass
class SourceOutcome:
    """How the search through commits ended: the first bad commit (with its subject and link), or why it stopped."""

    commits: list[str]
    outcome: BisectOutcome | None = None
    stopped: str = ""
    subjects: dict[str, str] = field(default_factory=dict)
    jaxlibs: dict[str, str] = field(default_factory=dict)  # the jaxlib each tested commit ran over
    backwards: bool = False  # the good build is the newer one (`--find-fix`): searched from it back in history

    @property
    def changed_by(self) -> str:
        """The commit that changed the cell going forward in history: the first bad one, or searching backwards the
        last one like the start ('' when none was found)."""
        if self.outcome is None or not self.outcome.first_bad:
            return ""
        return self.outcome.last_good if self.backwards else self.outcome.first_bad

    def lines(self) -> list[str]:
        """What the CLI prints and the bug report quotes."""
        if self.stopped:
            return [f"jax source: stopped: {self.stopped}"]
        found = self.outcome
        if found is None or found.ends_agree:
            return [
                f"jax source: the commits {self.commits[0][:12]} and {self.commits[-1][:12]} agree on the cell "
                "when run from source: nothing to bisect there"
            ]
        if self.backwards:
            change = self.changed_by
            lines = [
                f"jax source: searched back from {self.commits[0][:12]}: commit {change[:12]} is the last like "
                f"it, {found.first_bad[:12]} (over jaxlib {self.jaxlibs.get(found.first_bad)}) the first not",
                f"jax source: the commit that made the change: {change[:12]} (over jaxlib "
                f"{self.jaxlibs.get(change)}): {self.subjects.get(change, '')}",
                f"  {commit_url(change)}",
                f"  tested {len(found.tested)} of {len(self.commits)} commits (first-parent history)",
            ]
            if found.untested_between:
                lines.insert(2, f"  untested commits between them: {', '.join(c[:12] for c in found.untested_between)}")
            return lines
        bad = found.first_bad
        lines = [
            f"jax source: last good commit {found.last_good[:12]} (over jaxlib {self.jaxlibs.get(found.last_good)})",
            f"jax source: first bad commit {bad[:12]} (over jaxlib {self.jaxlibs.get(bad)}): "
            f"{self.subjects.get(bad, '')}",
            f"  {commit_url(bad)}",
            f"  tested {len(found.tested)} of {len(self.commits)} commits (first-parent history)",
        ]
        if found.untested_between:
            lines.insert(2, f"  untested commits between them: {', '.join(c[:12] for c in found.untested_between)}")
        return lines


def git_lines(repo: Path, *args: str) -> list[str]:
    """`git -C repo args...`'s output lines; a failure is one line naming the repository."""
    done = run_child(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ConformanceError(f"git in {repo} failed ({' '.join(args[:2])}): {last}")
    return done.stdout.splitlines()


def resolve_build(repo: Path, build: BuildCommits) -> str:
    """The commit of `repo` that a build was made from: its recorded jax commit, else its tag `jax-vX`."""
    for ref in [r for r in (build.jax_hash, f"jax-v{build.jax}") if r]:
        done = run_child(
            ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip()
    raise ConformanceError(
        f"{repo} has neither commit {build.jax_hash or '(none recorded)'} nor tag jax-v{build.jax} "
        f"of jax {build.jax}; fetch jax-ml/jax with its tags into it"
    )


def first_parent_commits(repo: Path, good: str, bad: str) -> list[str]:
    """The good commit, then every first-parent commit after it up to the bad one, oldest first."""
    between = git_lines(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    if not between or between[-1] != bad:
        raise ConformanceError(f"commit {bad[:12]} does not follow {good[:12]} in the first-parent history of {repo}")
    return [good, *between]


def commit_version(repo: Path, commit: str) -> tuple[str, str]:
    """The jax version a commit declares (`_version` in `jax/version.py`) and its `_minimum_jaxlib_version`."""
    text = "\n".join(git_lines(repo, "show", f"{commit}:jax/version.py"))
    version = re.search(r"^_version\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    minimum = re.search(r"^_minimum_jaxlib_version\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
    return (version.group(1) if version else ""), (minimum.group(1) if minimum else "")


def export_tree(repo: Path, commit: str, where: Path) -> Path:
    """What installing jax needs of `commit` (the `jax` package and the top-level files: setup.py, pyproject.toml,
    README, LICENSE), exported into `where/<commit>` with `git archive`; the checkout is not touched, and large
    blobs elsewhere (a mirror may lack them) are never read."""
    target = where / commit
    if (target / "jax" / "version.py").is_file():
        return target
    entries = [line.split("\t", 1) for line in git_lines(repo, "ls-tree", commit)]
    done = run_child(
        ["git", "-C", str(repo), "archive", "--format=tar", "--prefix=jax/", f"{commit}:jax"], capture_output=True
    )
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise ConformanceError(f"git archive of {commit[:12]} in {repo} failed: {last}")
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(target, filter="data")
    for meta, name in entries:  # setup.py, pyproject.toml, README.md, LICENSE, ...: each read on its own
        if meta.split()[1] == "blob" and "/" not in name:
            blob = run_child(["git", "-C", str(repo), "show", f"{commit}:{name}"], capture_output=True)
            if blob.returncode == 0:
                (target / name).write_bytes(blob.stdout)
    return target


def acceptable_jaxlibs(version: str, minimum: str, candidates: tuple[str, ...]) -> list[str]:
    """Those of `candidates` (the first bad build's jaxlib, then the last good's) that a commit of jax `version`
    accepts, in that order; `SourceStop` naming the range it needs when none is."""
    found = [jaxlib for jaxlib in dict.fromkeys(candidates) if not mix_problem(version, jaxlib, minimum)]
    if not found:
        raise SourceStop(
            f"jax {version} at this commit accepts jaxlib {minimum or '(any)'} to {version}; none of "
            f"jaxlib {', '.join(dict.fromkeys(candidates))} is in that range, so a jaxlib of that range "
            f"is needed to go on"
        )
    return found


def choose_jaxlib(version: str, minimum: str, candidates: tuple[str, ...]) -> str:
    """The first jaxlib of `candidates` a commit of jax `version` accepts (see `acceptable_jaxlibs`)."""
    return acceptable_jaxlibs(version, minimum, candidates)[0]


def search_commits(
    commits: list[str],
    run_commit: Callable[[str], Any],
    like: Callable[[Any, Any], bool],
    on_step: Callable[[str], None] = lambda line: None,
) -> SourceOutcome:
    """Binary-search `commits` (good first, bad last) with `run_commit` (a commit's cell result, `Untestable`, or
    `SourceStop`), each commit run at most once."""
    found = SourceOutcome(commits)
    try:
        found.outcome = bisect(commits, Memo(run_commit), like, on_step=on_step, unit="commit")
    except SourceStop as stop:
        found.stopped = str(stop)
    return found


def source_session(
    repo: Path,
    good: BuildCommits,
    bad: BuildCommits,
    work: Path,
    run_tree: Callable[[Path, str, str], Any],
    like: Callable[[Any, Any], bool],
    on_step: Callable[[str], None] = lambda line: None,
) -> SourceOutcome:
    """The whole `--jax-source` search: resolve both builds in `repo`, list the first-parent commits between them,
    and search them, each commit exported under `work` and run by `run_tree(tree, commit, jaxlib)`."""
    repo = Path(repo)
    if not (repo / ".git").exists() and not (repo / "HEAD").is_file():
        raise ConformanceError(f"--jax-source {repo} is not a git checkout (no .git); clone jax-ml/jax there")
    first, last = resolve_build(repo, good), resolve_build(repo, bad)
    # `--find-fix` (or a good end newer than the bad one): the good build descends from the bad one; the history
    # between them is searched from the good end back, as the releases were.
    backwards = (
        first != last
        and run_child(
            ["git", "-C", str(repo), "merge-base", "--is-ancestor", last, first], capture_output=True
        ).returncode
        == 0
    )
    commits = first_parent_commits(repo, last, first)[::-1] if backwards else first_parent_commits(repo, first, last)
    subjects = {c: (git_lines(repo, "log", "-1", "--format=%s", c) or [""])[0] for c in commits}
    jaxlibs: dict[str, str] = {}
    on_step(
        f"jax source: {len(commits)} first-parent commits from {first[:12]} (jax {good.jax}) to {last[:12]} "
        f"(jax {bad.jax})"
    )

    def run_commit(commit: str) -> Any:
        version, minimum = commit_version(repo, commit)
        try:
            usable = acceptable_jaxlibs(
                version, minimum, (good.jaxlib, bad.jaxlib) if backwards else (bad.jaxlib, good.jaxlib)
            )  # the newer build's jaxlib first
        except SourceStop as stop:
            raise SourceStop(f"commit {commit[:12]} ({subjects.get(commit, '')}): {stop}") from None
        found: Any = None
        for jaxlib in usable:  # a dev commit may use what one jaxlib lacks: the next one it accepts is tried
            jaxlibs[commit] = jaxlib
            on_step(f"  commit {commit[:12]} ({subjects.get(commit, '')}) over jaxlib {jaxlib}")
            found = run_tree(export_tree(repo, commit, work), commit, jaxlib)
            if not isinstance(found, Untestable):
                break
            on_step(f"    not usable over jaxlib {jaxlib}: {found.why}")
        return found

    found = search_commits(commits, run_commit, like, on_step)
    found.subjects, found.jaxlibs, found.backwards = subjects, jaxlibs, backwards
    return found


__all__ = ["SourceOutcome", "SourceStop", "Untestable", "source_session", "search_commits", "choose_jaxlib"]
