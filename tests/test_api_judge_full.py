"""`api scan`'s judgement (`conformance.api.judge`), field by field: what a finding says where the repository tests
only check its state (issue 48: written against the survivors of a mutation run). Synthetic censuses, no JAX."""

from __future__ import annotations

import textwrap

from conformance.api.judge import Censuses, Finding, judge
from conformance.api.scan import uses_in_source
from tests.api_censuses import census, fn, module, removed

P, K = "positional_or_keyword", "keyword_only"


def judged(source: str, to, before=None, history=(), private=None):
    uses = uses_in_source(textwrap.dedent(source), "a.py")
    return judge(uses, Censuses(to, before, tuple(history) or (to,), private))


def test_a_guarded_use_keeps_every_field_of_its_finding_and_says_why_it_is_a_note():
    to = census(
        "0.6.0",
        {
            "jax.tree_map": removed("jax.tree_map was removed in 0.6.0", "jax.tree.map"),
            "jax.d": fn(state="deprecated", message="jax.d goes", replacement="jax.e"),
        },
    )
    first = census("0.5.3", {"jax.tree_map": fn(), "jax.d": fn()})
    source = "import jax\nif hasattr(jax, 'tree_map'):\n    y = jax.tree_map(f, x)\n    jax.d\n"
    assert judged(source, to, None, (first, to)) == [
        Finding(
            "a.py",
            3,
            9,
            "jax.tree_map",
            "guarded",
            "0.6.0",
            "jax.tree_map was removed in 0.6.0 (inside an hasattr(...) guard)",
            "jax.tree.map",
        ),
        Finding("a.py", 4, 5, "jax.d", "deprecated", "0.6.0", "jax.d goes", "jax.e"),
    ]  # a warning stays one


def test_a_use_the_census_does_not_cover_says_why_at_its_place_and_release():
    to = census("0.6.2", {"jax.numpy": module()})
    to.modules["jax.export"] = {"status": "skipped", "reason": "needs absl", "error": "not this"}
    to.modules["jax.extend"] = {"status": "failed", "error": "ImportError: no"}
    to.modules["jax.lib"] = {"status": "failed"}
    source = (
        "import jax\nx = jax.__version__\njax._src.core.Tracer\njax.export.export\njax.extend.ffi\n"
        "jax.lib.xla\njax.numpy.__private\n"
    )
    assert [(f.line, f.col, f.state, f.since, f.message) for f in judged(source, to)] == [
        (2, 5, "not_judged", "0.6.2", "__version__ is a module attribute, not a name the census lists"),
        (3, 1, "not_judged", "0.6.2", "jax._src is private: the census covers public names only"),
        (4, 1, "not_judged", "0.6.2", "jax.export is not in the census of jax 0.6.2 (skipped: needs absl)"),
        (5, 1, "not_judged", "0.6.2", "jax.extend is not in the census of jax 0.6.2 (failed: ImportError: no)"),
        (6, 1, "not_judged", "0.6.2", "jax.lib is not in the census of jax 0.6.2 (failed: failed)"),
        (7, 1, "not_judged", "0.6.2", "jax.numpy.__private is private: the census covers public names only"),
    ]


def test_a_call_of_the_jax_module_itself_is_passed_over_and_the_uses_after_it_judged():
    to = census("0.6.2", {})
    assert [(f.line, f.name, f.state) for f in judged("import jax as j\nj(x=1)\nj.gone\n", to)] == [
        (3, "jax.gone", "missing")
    ]


def _sentinel(version: str, handled: dict | None, in_signature: bool = True, signed: bool = True):
    """`jax.pure_callback` on a release: `vectorized` behind JAX's DeprecatedArg (`handled`), a plain parameter
    (`handled` None), or gone from the signature (`in_signature` False); `signed` False: no signature at all."""
    params = [("callback", P, None)] + ([("vectorized", K, "Deprecated")] if in_signature else [])
    entry = fn(*params)
    if handled is not None:
        entry["keywords"] = {"vectorized": handled}
    if not signed:
        entry.pop("params")
    return census(version, {"jax.pure_callback": entry})


WARNS = {"state": "deprecated", "effect": "warns", "message": "vectorized is deprecated"}
RAISES = {"state": "removed", "effect": "raises ValueError", "message": "vectorized was removed in JAX v0.6.0."}
CALL = "import jax\ny = jax.pure_callback(f, vectorized=True, other=1)\n"


def test_a_sentinel_keyword_is_dated_over_the_releases_that_can_tell_and_placed_at_its_call():
    plain, warned = _sentinel("0.5.0", None), _sentinel("0.5.3", WARNS)
    first_removed, unsigned, to = (
        _sentinel("0.6.0", RAISES),
        _sentinel("0.6.1", None, signed=False),
        _sentinel("0.6.2", RAISES),
    )
    found = judged(CALL, to, None, (plain, warned, first_removed, unsigned, to))
    assert found == [
        Finding(
            "a.py",
            2,
            5,
            "jax.pure_callback(other=)",
            "missing",
            "≤0.5.0",
            "jax.pure_callback takes no keyword argument 'other' on jax 0.6.2; its signature: (callback, vectorized)",
        ),
        Finding(
            "a.py",
            2,
            5,
            "jax.pure_callback(vectorized=)",
            "removed",
            "0.6.0",
            "passing vectorized= to jax.pure_callback raises ValueError on jax 0.6.2: "
            "vectorized was removed in JAX v0.6.0.",
        ),
    ]
    # a release where the parameter had left the signature counts as removed too
    gone = _sentinel("0.5.9", None, in_signature=False)
    (_, removal) = judged(CALL, to, None, (plain, gone, to))
    assert removal.since == "0.5.9"
    # removed from the oldest release at hand: dated from it, never `≤`
    (_, removal) = judged(CALL, to, None, (first_removed, to))
    assert removal.since == "0.6.0"


def test_a_sentinel_keyword_that_warns_keeps_its_since_and_its_words():
    warned, to = _sentinel("0.5.0", WARNS), _sentinel("0.5.3", WARNS)
    (_, deprecation) = judged(CALL, to, None, (warned, to))
    assert (deprecation.state, deprecation.since) == ("deprecated", "≤0.5.0")
    assert deprecation.message == (
        "passing vectorized= to jax.pure_callback warns on jax 0.5.3: vectorized is deprecated"
    )
    quiet = _sentinel("0.5.3", {"state": "deprecated", "effect": "unknown", "message": "ends in X"})
    (_, deprecation) = judged(CALL, quiet)
    assert deprecation.message == "passing vectorized= to jax.pure_callback is deprecated on jax 0.5.3: ends in X"
    bare = _sentinel("0.5.3", {"state": "deprecated"})
    (_, deprecation) = judged(CALL, bare)
    assert deprecation.message == "passing vectorized= to jax.pure_callback  on jax 0.5.3"


def test_a_removal_is_dated_from_a_census_that_cannot_tell_only_by_those_around_it():
    had = census("0.5.0", {"jax.m": module(), "jax.m.f": fn()})
    blind = census("0.5.3", {"jax.m": module()}, failed=("jax.m",))
    to = census("0.6.2", {"jax.m": module(), "jax.m.f": removed("gone")})
    (finding,) = judged("import jax\njax.m.f\n", to, None, (had, blind, to))
    assert finding.since == "0.6.2"  # 0.5.3 could not tell; 0.5.0 still had it
    (finding,) = judged("import jax\njax.m.f\n", to, None, (blind, to))
    assert finding.since == "≤0.6.2"


def test_the_target_releases_replacement_wins_over_the_from_release_of_a_downgrade():
    to = census("0.6.0", {"jax.f": removed("gone", "jax.c")})
    newer = census("0.6.2", {"jax.f": removed("gone too", "jax.b")})
    (finding, *_) = judged("import jax\njax.f\n", to, newer, (to,))
    assert (finding.state, finding.replacement) == ("removed", "jax.c")


def test_a_private_use_is_judged_from_its_deepest_private_module():
    to = census("0.12.0.1", {})
    private = census(
        "0.12.0.1",
        {"jax._src": module(), "jax._src.core": module(), "jax._src.core.Tracer": fn(), "jax._src.lib": module()},
        failed=("jax._src.lib",),
    )
    private.modules["jax._src.lib"] = {"status": "failed", "error": "ImportError: jaxlib"}
    source = (
        "import jax\njax._src.core.Tracer.aval\njax._src.gone\njax._src.lib.xla_client\njax._nothing.f\n"
        "jax._src.core.__x\n"
    )
    assert judged(source, to, private=private) == [
        Finding(
            "a.py",
            3,
            1,
            "jax._src.gone",
            "missing",
            "0.12.0.1",
            "private: jax 0.12.0.1 has no jax._src.gone; private names go without deprecation",
        ),
        Finding(
            "a.py",
            4,
            1,
            "jax._src.lib",
            "missing",
            "0.12.0.1",
            "private: jax._src.lib does not import on jax 0.12.0.1 (ImportError: jaxlib); private names go "
            "without deprecation",
        ),
        Finding(
            "a.py", 5, 1, "jax._nothing.f", "not_judged", "0.12.0.1", "jax._nothing.f: no private module of it imports"
        ),
        Finding(
            "a.py",
            6,
            1,
            "jax._src.core.__x",
            "missing",
            "0.12.0.1",
            "private: jax 0.12.0.1 has no jax._src.core.__x; private names go without deprecation",
        ),
    ]
    failed = dict(private.modules["jax._src.lib"])
    failed.pop("error")
    private.modules["jax._src.lib"] = failed
    (finding,) = judged("import jax\njax._src.lib.x\n", to, private=private)
    assert finding.message == (
        "private: jax._src.lib does not import on jax 0.12.0.1 (); private names go without deprecation"
    )


def test_with_a_private_census_public_uses_it_does_not_cover_stay_not_judged():
    to = census("0.12.0.1", {"jax.numpy": module()}, failed=("jax.export",))
    private = census("0.12.0.1", {"jax._src": module()})
    found = judged("import jax\njax.export.export\njax.__version__\n", to, private=private)
    assert [(f.name, f.state, f.message.split(" ")[0]) for f in found] == [
        ("jax.export.export", "not_judged", "jax.export"),
        ("jax.__version__", "not_judged", "__version__"),
    ]
