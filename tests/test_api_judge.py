"""`api scan`'s judgement (`conformance.api.judge`) on the cases the repository tests leave out: a name the target
release never had, and a removal no deprecation table reports. Synthetic censuses, no JAX."""

from __future__ import annotations

import json
import textwrap

from conformance import cli
from conformance.api.judge import Censuses, checked_name, exit_status, judge
from conformance.api.scan import uses_in_source
from tests.api_censuses import census, config, fn, module, removed

P = "positional_or_keyword"


def judged(source: str, to, before=None, history=()):
    uses = uses_in_source(textwrap.dedent(source), "a.py")
    return judge(uses, Censuses(to, before, tuple(history) or (to,)))


def test_a_name_the_target_release_never_had_is_missing_and_fails_the_scan():
    """Issue 48: an exit status that ignored `missing` (a typo, a name of a newer JAX) survived every test."""
    to = census("0.6.2", {"jax.numpy": module(), "jax.numpy.sum": fn(("a", P, None))})
    findings = judged("import jax\nimport jax.numpy as jnp\njnp.summ(x)\njax.shard_map\n", to)
    assert [(f.line, f.name, f.state, f.message) for f in findings] == [
        (3, "jax.numpy.summ", "missing", "jax 0.6.2 has no jax.numpy.summ"),
        (4, "jax.shard_map", "missing", "jax 0.6.2 has no jax.shard_map"),
    ]
    assert exit_status(findings) == 1
    assert exit_status([]) == 0


def test_the_cli_exits_1_on_a_typo_alone(tmp_path, capsys):
    to = census("0.6.2", {"jax.numpy": module(), "jax.numpy.sum": fn(("a", P, None))})
    path = tmp_path / "census-0.6.2.json"
    path.write_text(json.dumps({**to.header, "names": to.names, "modules": to.modules}), encoding="utf-8")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "a.py").write_text("import jax.numpy as jnp\njnp.summ(1)\njnp.sum(1)\n", encoding="utf-8")
    assert cli.main(["api", "scan", str(tmp_path / "repo"), "--to", str(path), "--results", str(tmp_path)]) == 1
    assert "jax.numpy.summ missing" in capsys.readouterr().out
    (tmp_path / "repo" / "a.py").write_text("import jax.numpy as jnp\njnp.sum(1)\n", encoding="utf-8")
    assert cli.main(["api", "scan", str(tmp_path / "repo"), "--to", str(path), "--results", str(tmp_path)]) == 0


def test_a_name_absent_on_the_target_but_usable_on_an_earlier_release_reads_as_a_removal():
    """Issue 48: no deprecation table on the target says so; the earlier census where it was usable makes it a
    removal ("last seen on"), never "missing"."""
    old = census(
        "0.5.3",
        {
            "jax.experimental": module(),
            "jax.experimental.maps": module(),
            "jax.experimental.maps.xmap": fn(("f", P, None)),
        },
    )
    middle = census("0.6.0", {"jax.experimental": module(), "jax.experimental.maps": module()})
    new = census("0.6.2", {"jax.experimental": module(), "jax.experimental.maps": module()})
    (finding,) = judged("from jax.experimental.maps import xmap\n", new, None, (old, middle, new))
    assert (finding.state, finding.since) == ("removed", "0.6.0")
    assert finding.message == "not in jax 0.6.2 (last seen on 0.5.3)"
    assert exit_status([finding]) == 1
    # the release it runs today (--from) is a census at hand too
    (finding,) = judged("from jax.experimental.maps import xmap\n", new, old, (new,))
    assert finding.state == "removed" and finding.message == "not in jax 0.6.2 (last seen on 0.5.3)"


def test_a_removal_says_jaxs_words_from_the_census_that_had_them_and_its_replacement():
    old = census(
        "0.5.3",
        {"jax.old": fn(("f", P, None), state="deprecated", message="jax.old goes; use jax.new", replacement="jax.new")},
    )
    new = census("0.6.2", {})
    (finding,) = judged("import jax\njax.old\n", new, None, (old, new))
    assert (finding.state, finding.message, finding.replacement) == (
        "removed",
        "not in jax 0.6.2 (last seen on 0.5.3); jax.old goes; use jax.new",
        "jax.new",
    )
    assert (finding.path, finding.line, finding.col, finding.name) == ("a.py", 2, 1, "jax.old")


def test_a_removal_of_a_table_keeps_its_own_words_and_dates_from_the_first_release_without_the_name():
    first = census("0.4.30", {"jax.old": fn()})
    old = census("0.5.3", {"jax.old": removed("jax.old was removed in 0.5.0")})
    new = census("0.6.2", {"jax.old": removed("jax.old was removed in 0.5.0", "jax.new")})
    (finding,) = judged("import jax\njax.old\n", new, None, (first, old, new))
    assert (finding.state, finding.since, finding.message, finding.replacement) == (
        "removed",
        "0.5.3",
        "jax.old was removed in 0.5.0",
        "jax.new",
    )
    (oldest,) = judged("import jax\njax.old\n", new, None, (old, new))
    assert oldest.since == "≤0.5.3"


def test_a_name_not_there_yet_on_the_release_of_today_is_named_with_the_release_it_came_in():
    old = census("0.5.3", {})
    middle = census("0.6.0", {"jax.shard_map": fn()})
    new = census("0.6.2", {"jax.shard_map": fn()})
    (finding,) = judged("import jax\njax.shard_map\n", new, old, (old, middle, new))
    assert (finding.state, finding.since, finding.message, finding.replacement) == (
        "not_yet",
        "0.6.0",
        "not in jax 0.5.3, which --from names",
        "",
    )
    (oldest,) = judged("import jax\njax.shard_map\n", new, old, (middle, new))
    assert oldest.since == "0.6.0"  # never marked ≤
    assert judged("import jax\njax.shard_map\n", new, new, (new,)) == []


def test_a_deprecation_is_dated_from_its_first_deprecated_release():
    first = census("0.4.30", {"jax.d": fn()})
    old = census("0.5.3", {"jax.d": fn(state="deprecated", message="m0")})
    new = census("0.6.2", {"jax.d": fn(state="deprecated", message="jax.d goes", replacement="jax.e")})
    (finding,) = judged("import jax\njax.d\n", new, None, (first, old, new))
    assert (finding.state, finding.since, finding.message, finding.replacement) == (
        "deprecated",
        "0.5.3",
        "jax.d goes",
        "jax.e",
    )
    assert exit_status([finding]) == 0


def test_a_name_under_a_module_the_census_could_not_import_is_not_judged():
    to = census("0.6.2", {"jax.experimental": module()}, failed=("jax.experimental.x",))
    found = judged("import jax\njax.experimental.x.f\njax.experimental.x\n", to)
    assert [(f.line, f.state) for f in found] == [(2, "not_judged"), (3, "not_judged")]  # said, never an error
    assert exit_status(found) == 0
    assert Censuses(to).to.state("jax.experimental.x.g") == "unknown"


def test_an_environment_variable_is_judged_only_when_a_census_knows_its_option():
    old = census(
        "0.5.3",
        {
            "jax.config": {"kind": "constant", "state": "present"},
            "jax.config.jax_old_flag": {"kind": "config", "state": "present"},
        },
    )
    new = census("0.6.2", {"jax.config": {"kind": "constant", "state": "present"}})
    source = "import os\nos.environ['JAX_OLD_FLAG'] = '1'\nos.environ['JAX_OTHER'] = '1'\n"
    (finding,) = judged(source, new, None, (old, new))
    assert (finding.name, finding.state) == ("jax.config.jax_old_flag", "removed")


def test_the_keywords_a_signature_takes():
    takes_all = fn(("f", P, None), ("kwargs", "var_keyword", None))
    old = census(
        "0.5.3",
        {
            "jax.f": fn(("a", P, None), ("b", "keyword_only", None)),
            "jax.g": takes_all,
            "jax.h": fn(("a", "positional_only", None)),
        },
    )
    new = census(
        "0.6.2",
        {
            "jax.f": fn(("a", P, None)),
            "jax.g": takes_all,
            "jax.h": fn(("a", "positional_only", None)),
            "jax.n": {"kind": "function", "state": "present"},
        },
    )
    found = judged("import jax\njax.f(a=1, b=2)\njax.g(z=1)\njax.h(a=1)\njax.n(q=1)\n", new, None, (old, new))
    assert [(f.line, f.name, f.state, f.since, f.message) for f in found] == [
        (
            2,
            "jax.f(b=)",
            "removed",
            "0.6.2",
            "jax.f takes no keyword argument 'b' on jax 0.6.2 (it did on 0.5.3); its signature: (a)",
        ),
        (4, "jax.h(a=)", "missing", "≤0.5.3", "jax.h takes no keyword argument 'a' on jax 0.6.2; its signature: (a)"),
    ]
    unsigned = census("0.6.2", {"jax.f": {"kind": "function", "state": "present", "params": [["a", P, None]]}})
    (bare,) = judged("import jax\njax.f(b=1)\n", unsigned)
    assert bare.message == "jax.f takes no keyword argument 'b' on jax 0.6.2"


def test_what_a_use_is_checked_as_and_the_kind_of_a_name():
    to = census(
        "0.6.2",
        {
            "jax.numpy": module(),
            "jax.numpy.linalg": module(),
            "jax.numpy.linalg.norm": fn(),
            "jax.Array": fn(kind="class"),
        },
    )
    censuses = Censuses(to)
    assert checked_name("jax.numpy.linalg.norm.x", censuses) == "jax.numpy.linalg.norm"
    assert checked_name("jax.numpy.linalg", censuses) == "jax.numpy.linalg"
    assert checked_name("jax.Array.dtype", censuses) == "jax.Array"
    assert checked_name("jax", censuses) is None
    assert checked_name("jax.nope.deeper", censuses) == "jax.nope"
    assert censuses.kind("jax.Array") == "class" and censuses.kind("jax.nope") == ""
    old = census("0.5.3", {"jax.gone": module()})
    assert Censuses(to, old, (old, to)).kind("jax.gone") == "module"
    assert [c.jax for c in Censuses(to, old, (old, to)).all] == ["0.5.3", "0.6.2"]
    assert [c.jax for c in Censuses(to, None, ()).all] == ["0.6.2"]


def test_findings_come_in_file_and_position_order():
    to = census("0.6.2", {})
    uses = uses_in_source("import jax\njax.b\njax.a; jax.c\n", "b.py") + uses_in_source("import jax\njax.z\n", "a.py")
    found = judge(uses, Censuses(to, None, (to,)))
    assert [(f.path, f.line, f.col, f.name) for f in found] == [
        ("a.py", 2, 1, "jax.z"),
        ("b.py", 2, 1, "jax.b"),
        ("b.py", 3, 1, "jax.a"),
        ("b.py", 3, 8, "jax.c"),
    ]


def test_keywords_are_judged_only_on_a_call_of_the_checked_name_that_is_usable_there():
    to = census(
        "0.6.2",
        {
            "jax.f": {
                "kind": "function",
                "state": "removed",
                "params": [["a", P, None]],
                "message": "jax.f was removed",
            },
            "jax.Array": fn(("a", P, None), kind="class"),
        },
    )
    found = judged("import jax\njax.f(b=1)\njax.Array.at(q=1)\n", to)
    assert [(f.line, f.name, f.state) for f in found] == [(2, "jax.f", "removed")]


def test_a_keyword_is_dated_over_the_censuses_that_can_tell_and_placed_at_its_call():
    old = census("0.5.3", {"jax.f": fn(("a", P, None), ("b", P, None))})
    middle = census("0.6.0", {"jax.f": {"kind": "function", "state": "present"}})
    new = census("0.6.2", {"jax.f": fn(("a", P, None))})
    (finding,) = judged("import jax\nx = 1; jax.f(b=1)\n", new, None, (old, middle, new))
    assert (finding.line, finding.col, finding.name, finding.state, finding.since) == (
        2,
        8,
        "jax.f(b=)",
        "removed",
        "0.6.2",
    )


def test_a_call_passing_by_position_what_jax_deprecated_there_is_deprecated():
    """jax.lax.dot (0.7.1): a third positional argument warns; two do not, nor a call with a starred argument."""
    old = census("0.7.0", {"jax.dot": fn(("lhs", P, None), ("rhs", P, None), ("precision", P, "None"))})
    dot = fn(
        ("lhs", P, None), ("rhs", P, None), ("args", "var_positional", None), ("precision", "keyword_only", "None")
    )
    dot["positional"] = {
        "after": 2,
        "state": "deprecated",
        "effect": "warns",
        "message": "passing precision by position is deprecated",
    }
    new = census("0.7.1", {"jax.dot": dot})
    found = judged(
        "import jax\njax.dot(a, b, p)\njax.dot(a, b)\njax.dot(a, *rest)\njax.dot(a, b, precision=p)\n",
        new,
        old,
        (old, new),
    )
    assert [(f.line, f.name, f.state, f.since, f.message) for f in found] == [
        (
            2,
            "jax.dot(…)",
            "deprecated",
            "0.7.1",
            "passing more than 2 positional arguments to jax.dot warns on jax "
            "0.7.1: passing precision by position is deprecated",
        )
    ]
    assert exit_status(found) == 0


def test_setting_a_deprecated_option_to_a_value_that_does_not_warn_is_no_finding():
    """jax 0.7.2 warns only when `jax_pmap_no_rank_reduction` is set to False (census `condition`: `not new_val`);
    a value the scan cannot read is judged deprecated, as JAX would warn for some value."""
    name, entry = config("jax_pmap_no_rank_reduction")
    entry.update(
        state="deprecated",
        message="Setting it to False is deprecated.",
        effect="warns when set",
        condition="not new_val",
    )
    bits, bits_entry = config("jax_default_dtype_bits")
    bits_entry.update(state="deprecated", message="deprecated", effect="warns when set", condition="val != '_default'")
    to = census("0.7.2", {"jax.config": {"kind": "constant", "state": "present"}, name: entry, bits: bits_entry})
    found = judged(
        """
        import jax
        jax.config.update("jax_pmap_no_rank_reduction", True)
        jax.config.update("jax_pmap_no_rank_reduction", False)
        jax.config.update("jax_pmap_no_rank_reduction", flag)
        jax.config.update("jax_default_dtype_bits", "_default")
        jax.config.update("jax_default_dtype_bits", "32")
        """,
        to,
    )
    assert [(f.line, f.state) for f in found] == [(4, "deprecated"), (5, "deprecated"), (7, "deprecated")]


def test_an_attribute_of_a_config_options_value_is_checked_as_the_option():
    """Found under mutation (issue 48): `jax.config.jax_enable_x64.real` was judged as a name of its own and reported
    missing (exit 1) on a release that has the option."""
    to = census("0.6.2", {"jax.config": {"kind": "constant", "state": "present"}, **dict([config("jax_enable_x64")])})
    assert checked_name("jax.config.jax_enable_x64.real", Censuses(to)) == "jax.config.jax_enable_x64"
    assert judged("import jax\nif jax.config.jax_enable_x64.real:\n    pass\n", to) == []
    (missing,) = judged("import jax\njax.config.jax_no_flag.real\n", to)
    assert missing.name == "jax.config.jax_no_flag" and missing.state == "missing"


def test_a_state_held_on_either_side_of_a_census_that_cannot_tell_is_dated_across_it():
    def chain(entry_old, entry_new, new_extra=None):
        old = census("0.5.3", {"jax.m": module(), "jax.m.f": entry_old} if entry_old else {"jax.m": module()})
        middle = census("0.6.0", {"jax.m": module()}, failed=("jax.m",))
        new = census("0.6.2", {"jax.m": module(), **({"jax.m.f": entry_new} if entry_new else {})})
        return old, middle, new

    old, middle, new = chain(fn(state="deprecated", message="m"), fn(state="deprecated", message="m"))
    assert judged("import jax\njax.m.f\n", new, None, (old, middle, new))[0].since == "≤0.5.3"
    first = census("0.5.0", {"jax.m": module(), "jax.m.f": fn()})
    old, middle, new = chain(removed("gone"), removed("gone"))
    assert judged("import jax\njax.m.f\n", new, None, (first, old, middle, new))[0].since == "0.5.3"
    old, middle, new = chain(None, fn())
    came = census("0.5.9", {"jax.m": module(), "jax.m.f": fn()})
    (finding,) = judged("import jax\njax.m.f\n", new, old, (old, came, middle, new))
    assert (finding.state, finding.since) == ("not_yet", "0.5.9")


def test_a_name_the_release_of_today_reports_removed_is_not_there_yet_for_it():
    before = census("0.5.3", {"jax.f": removed("gone for now")})
    to = census("0.6.2", {"jax.f": fn()})
    (finding,) = judged("import jax\njax.f\n", to, before, (before, to))
    assert finding.state == "not_yet"


def test_the_newest_release_with_the_name_is_where_it_was_last_seen_and_its_replacement_wins():
    a = census("0.4.30", {"jax.f": fn(state="deprecated", message="old words", replacement="jax.a")})
    b = census("0.5.3", {"jax.f": fn(state="deprecated", message="newer words", replacement="jax.b")})
    to = census("0.6.2", {"jax.f": removed("gone", "jax.c")})
    (finding,) = judged("import jax\njax.f\n", to, None, (a, b, to))
    assert (finding.message, finding.replacement) == ("gone", "jax.c")
    absent = census("0.6.2", {})
    (finding,) = judged("import jax\njax.f\n", absent, None, (a, b, absent))
    # found under mutation (issue 48): the replacement came from the oldest census, the words from the newest
    assert (finding.message, finding.replacement) == ("not in jax 0.6.2 (last seen on 0.5.3); newer words", "jax.b")
    (finding,) = judged("import jax\njax.g\n", absent, None, (a, b, absent))
    assert finding.replacement == ""


def test_a_use_that_cannot_be_judged_does_not_stop_the_uses_after_it():
    to = census("0.6.2", {"jax.m": module()}, failed=("jax.m",))
    found = judged("import jax\njax.m.f\njax.gone\n", to)
    assert [(f.line, f.name, f.state) for f in found] == [(2, "jax.m.f", "not_judged"), (3, "jax.gone", "missing")]
