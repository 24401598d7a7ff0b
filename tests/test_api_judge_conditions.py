"""`api scan`'s judgement of a deprecated config option set to a literal (the census's warning `condition`,
`conformance.api.judge.condition_holds`) and of a call passing by position what a `*args` warns of
(`judge_positional`). Synthetic censuses, no JAX."""

from __future__ import annotations

import textwrap

from conformance.api.judge import Censuses, Finding, condition_holds, exit_status, judge
from conformance.api.scan import uses_in_source
from tests.api_censuses import census, config, fn, module

P, K, V = "positional_or_keyword", "keyword_only", "var_positional"


def judged(source: str, to, before=None, history=()):
    uses = uses_in_source(textwrap.dedent(source), "a.py")
    return judge(uses, Censuses(to, before, tuple(history) or (to,)))


def deprecated_option(name: str, **fields) -> tuple[str, dict]:
    key, entry = config(name)
    entry.update(state="deprecated", **fields)
    return key, entry


def test_a_condition_of_names_literals_and_comparisons_is_evaluated_for_the_value_set():
    assert condition_holds("not new_val", "True") is False
    assert condition_holds("not new_val", "False") is True
    assert condition_holds("val != '_default'", "'32'") is True
    assert condition_holds("val != '_default'", "'_default'") is False
    assert condition_holds("new_val in ('int32', 'int64') or new_val is None", "'int32'") is True
    assert condition_holds("new_val > 1", "'a'") is None  # a comparison the literal does not support: not known
    assert condition_holds("", "True") is None and condition_holds("not new_val", "") is None
    assert condition_holds("not new_val", "flag") is None  # no literal: not known


def test_a_condition_that_reads_an_attribute_or_calls_is_never_evaluated():
    """A census is a file anyone can hand `api scan`: its condition is evaluated only when it is names, literals
    and operators, so `new_val.lower()` (or worse, `new_val.__class__...`) is not known rather than run."""
    assert condition_holds("new_val.lower() != '_default'", "'_DEFAULT'") is None
    assert condition_holds("new_val.__class__.__name__ == 'bool'", "True") is None
    key, entry = deprecated_option(
        "jax_default_dtype_bits",
        message="jax_default_dtype_bits is deprecated",
        effect="warns when set",
        condition="new_val.lower() != '_default'",
    )
    to = census("0.7.2", {"jax.config": {"kind": "constant", "state": "present"}, key: entry})
    (finding,) = judged('import jax\njax.config.update("jax_default_dtype_bits", "_DEFAULT")\n', to)
    assert (finding.line, finding.name, finding.state) == (2, "jax.config.jax_default_dtype_bits", "deprecated")


def test_an_option_deprecated_without_a_condition_is_deprecated_whatever_literal_it_is_set_to():
    """jax 0.9.0 warns whenever `jax_pmap_shmap_merge` is set (its validator tests nothing: no `condition`), so
    `False` and `0` are flagged as `True` is."""
    said = "Setting `jax_pmap_shmap_merge` is deprecated in JAX v0.9.0 and will be removed in JAX v0.10.0."
    key, entry = deprecated_option("jax_pmap_shmap_merge", message=said, effect="warns when set")
    to = census("0.9.0", {"jax.config": {"kind": "constant", "state": "present"}, key: entry})
    found = judged(
        """\
        import jax
        jax.config.update("jax_pmap_shmap_merge", False)
        jax.config.update("jax_pmap_shmap_merge", 0)
        jax.config.update("jax_pmap_shmap_merge", True)
        """,
        to,
    )
    assert found == [
        Finding("a.py", line, 19, "jax.config.jax_pmap_shmap_merge", "deprecated", "≤0.9.0", said) for line in (2, 3, 4)
    ]
    assert exit_status(found) == 0


def dot(**positional) -> dict:
    """jax.lax.dot from 0.7.1: `(lhs, rhs, *args, precision=None)`, with `args` warned of as `positional`."""
    entry = fn(("lhs", P, None), ("rhs", P, None), ("args", V, None), ("precision", K, "None"))
    entry["positional"] = {"after": 2, "state": "deprecated", **positional}
    return entry


def lax(jax: str, entry: dict | None, failed: bool = False):
    names = {"jax.lax": module(), **({"jax.lax.dot": entry} if entry else {})}
    return census(jax, names, failed=("jax.lax",) if failed else ())


def test_passing_by_position_counts_what_a_call_passes_and_not_a_reference_or_a_starred_call():
    warns = dot(effect="warns", message="Passing precision to dot by position is deprecated in JAX")
    to = lax("0.7.1", warns)
    found = judged(
        """\
        import jax
        dot = jax.lax.dot
        jax.lax.dot(a, b, *rest)
        jax.lax.dot(a, b)
        jax.lax.dot(a, b, precision=p)
        x = 1; dot(a, b, p)
        """,
        to,
    )
    assert found == [
        Finding(
            "a.py",
            6,
            8,
            "jax.lax.dot(…)",
            "deprecated",
            "≤0.7.1",
            "passing more than 2 positional arguments to jax.lax.dot warns on jax 0.7.1: "
            "Passing precision to dot by position is deprecated in JAX",
        )
    ]


def test_passing_by_position_is_said_in_the_censuss_words_and_without_them_still_warns():
    said = dot(effect="warns with a DeprecationWarning", message="Passing precision by position is deprecated.")
    (finding,) = judged("import jax\njax.lax.dot(a, b, p)\n", lax("0.7.1", said))
    assert finding.message == (
        "passing more than 2 positional arguments to jax.lax.dot warns with a "
        "DeprecationWarning on jax 0.7.1: Passing precision by position is deprecated."
    )
    (finding,) = judged("import jax\njax.lax.dot(a, b, p)\n", lax("0.7.1", dot()))
    assert finding.message == "passing more than 2 positional arguments to jax.lax.dot warns on jax 0.7.1"


def test_passing_by_position_is_dated_from_the_first_release_that_warns_across_one_that_cannot_tell():
    """0.7.0 takes precision by position silently, 0.7.1 warns, 0.7.2 could not import jax.lax, 0.8.0 warns."""
    warns = dot(effect="warns", message="deprecated")
    history = (
        lax("0.7.0", fn(("lhs", P, None), ("rhs", P, None), ("precision", P, "None"))),
        lax("0.7.1", warns),
        lax("0.7.2", None, failed=True),
        lax("0.8.0", warns),
    )
    (finding,) = judged("import jax\njax.lax.dot(a, b, p)\n", history[-1], None, history)
    assert (finding.name, finding.state, finding.since) == ("jax.lax.dot(…)", "deprecated", "0.7.1")
    (finding,) = judged("import jax\njax.lax.dot(a, b, p)\n", history[-1], None, history[1:])
    assert finding.since == "≤0.7.1"
