"""jax or jaxlib? Which side of a build a change between two releases comes from. Pure: the runs are passed in.

Between the last good build (jax G, jaxlib g) and the first bad (jax B, jaxlib b) there are two mixes: the bad
jax over the good jaxlib, and the good jax over the bad jaxlib. Each is run where jax accepts that jaxlib (see
`envs.pairs.mix_problem`); the verdict then reads

| bad jax, good jaxlib | good jax, bad jaxlib | verdict |
|---|---|---|
| like bad | like good | changed by jax (Python) |
| like good | like bad | changed by jaxlib |
| like good | like good | needs both |
| like bad | like bad | either side alone changes it |

A release's jax refuses a newer jaxlib at import, so between two releases the second mix is usually refused: then
the first decides alone (like bad: changed by jax; like good: changed by jaxlib, both sides needed not excluded) and
the verdict says so. When the first is refused too (the bad jax requires a newer jaxlib than the good build's), the
change cannot be split: `cannot be split: jax B requires jaxlib >= M`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# What a mix's run gave: "good" or "bad" (like which end), "neither", or why it could not run.
LIKE_GOOD, LIKE_BAD, NEITHER = "like good", "like bad", "like neither"


@dataclass(frozen=True)
class Mix:
    """One jax/jaxlib combination and what it gave: `like good`, `like bad`, `like neither`, or `refused` with
    why (`problem`); `no_deps` when it was installed over jax's declared range."""

    jax: str
    jaxlib: str
    outcome: str = ""
    problem: str = ""
    no_deps: bool = False
    observation_line: str = ""

    def line(self) -> str:
        """`jax 0.12.0.1 over jaxlib 0.11.2: like bad (…)`, or why it was not run."""
        head = f"jax {self.jax} over jaxlib {self.jaxlib}"
        if self.problem:
            return f"{head}: not run ({self.problem})"
        said = (
            f" (installed with --no-deps: jax {self.jax}'s declared range refuses jaxlib {self.jaxlib})"
            if self.no_deps
            else ""
        )
        return f"{head}: {self.outcome}{said}" + (f": {self.observation_line}" if self.observation_line else "")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {
            "jax": self.jax,
            "jaxlib": self.jaxlib,
            "outcome": self.outcome,
            "problem": self.problem,
            "no_deps": self.no_deps,
        }


@dataclass
class Attribution:
    """The verdict (one line) and the mixes it rests on."""

    verdict: str
    mixes: list[Mix] = field(default_factory=list)

    @property
    def details(self) -> list[str]:
        """One line per mix."""
        return [mix.line() for mix in self.mixes]

    def to_json(self) -> dict[str, Any]:
        """Plain JSON."""
        return {"verdict": self.verdict, "mixes": [m.to_json() for m in self.mixes]}


def verdict(new_jax: Mix, new_jaxlib: Mix) -> str:
    """The one-line verdict from the two mixes (`new_jax`: the bad jax over the good jaxlib; `new_jaxlib`: the good
    jax over the bad jaxlib)."""
    if new_jax.problem:
        return f"cannot be split: {new_jax.problem}"
    if NEITHER in (new_jax.outcome, new_jaxlib.outcome):
        return "cannot be split: a mix behaves like neither build"
    if new_jaxlib.problem:
        if new_jax.outcome == LIKE_BAD:
            return "changed by jax (Python)"
        return (
            f"changed by jaxlib (jax {new_jaxlib.jax} over jaxlib {new_jaxlib.jaxlib} cannot run: "
            f"{new_jaxlib.problem}; so needing both sides is not excluded)"
        )
    table = {
        (LIKE_BAD, LIKE_GOOD): "changed by jax (Python)",
        (LIKE_GOOD, LIKE_BAD): "changed by jaxlib",
        (LIKE_GOOD, LIKE_GOOD): "needs both",
        (LIKE_BAD, LIKE_BAD): "either side alone changes it",
    }
    return table[(new_jax.outcome, new_jaxlib.outcome)]


def attribute(
    good: tuple[str, str], bad: tuple[str, str], problem: Callable[[str, str], str], run_mix: Callable[[str, str], Mix]
) -> Attribution:
    """Run the two mixes of the good (jax, jaxlib) and the bad (jax, jaxlib) builds where `problem(jax, jaxlib)`
    is '' (`run_mix` runs one and says what it gave), and say which side changed it."""
    mixes = []
    for jax, jaxlib in ((bad[0], good[1]), (good[0], bad[1])):
        why = problem(jax, jaxlib)
        mixes.append(Mix(jax, jaxlib, problem=why) if why else run_mix(jax, jaxlib))
        if mixes[0].problem:  # without the first mix the second cannot decide anything
            break
    if len(mixes) == 1:
        mixes.append(Mix(good[0], bad[1], problem="not needed"))
    found = Attribution(verdict(mixes[0], mixes[1]), mixes if not mixes[0].problem else mixes[:1])
    return found
