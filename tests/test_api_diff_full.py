"""`api diff`'s changes (`conformance.api.diff`), field by field: the words of a keyword's removal, the date of
each change over a chain with censuses that cannot tell, the destination a move picks, and which names a whole
module change hides (issue 48: written against the survivors of a mutation run). Synthetic censuses, no JAX."""

from __future__ import annotations

from conformance.api.diff import Change, diff_chain, keyword_state, signature_changes
from tests.api_censuses import census, config, fn, module, removed

P, K, VK = "positional_or_keyword", "keyword_only", "var_keyword"
WARNS = {"state": "deprecated", "effect": "warns", "message": "vectorized is deprecated"}
RAISES = {"state": "removed", "effect": "raises ValueError", "message": "vectorized was removed in JAX v0.6.0."}


def _unsigned(entry: dict) -> dict:
    """The entry without a signature (a census that could not read it)."""
    entry = dict(entry)
    entry.pop("params")
    entry.pop("signature")
    return entry


def _callback(
    *keywords: tuple[str, dict | None],
    params=(("callback", P, None), ("vectorized", K, "Deprecated")),
    signed: bool = True,
) -> dict:
    """`jax.pure_callback`: `params`, each `(keyword, how JAX handles it)` of `keywords` behind its sentinel."""
    entry = fn(*params)
    handled = {k: h for k, h in keywords if h is not None}
    if handled:
        entry["keywords"] = handled
    return entry if signed else _unsigned(entry)


def _chain(*entries: dict | None) -> list:
    """Censuses "1", "2", ... of `jax.pure_callback` (None: the name is not there)."""
    return [census(str(i), {} if e is None else {"jax.pure_callback": e}) for i, e in enumerate(entries, 1)]


def test_an_added_name_is_described_by_its_own_last_part_and_its_whole_signature_up_to_the_limit():
    b = census(
        "2",
        {
            "jax.numpy": module(),
            "jax.numpy.f": fn(("x", P, None)),
            "jax.fits": fn(("a" * 158, P, None)),
            "jax.over": fn(("a" * 159, P, None)),
        },
    )
    assert diff_chain([census("1", {"jax.numpy": module()}), b]) == [
        Change("jax.fits", "added", "2", "function fits(" + "a" * 158 + ")"),  # 160 characters: said whole
        Change("jax.numpy.f", "added", "2", "function f(x)"),
        Change("jax.over", "added", "2", "function over(" + "a" * 159 + "…"),
    ]


def test_a_keyword_is_said_in_jax_own_words_whatever_of_them_the_census_holds():
    def said(handled: dict) -> str:
        (change,) = [
            c
            for c in diff_chain(_chain(_callback(("vectorized", None)), _callback(("vectorized", handled))))
            if c.name.endswith("=)")
        ]
        assert (change.name, change.change, change.since) == ("jax.pure_callback(vectorized=)", handled["state"], "2")
        return change.message

    assert said(WARNS) == "passing it warns: vectorized is deprecated"
    assert said(RAISES) == "passing it raises ValueError: vectorized was removed in JAX v0.6.0."
    assert said({"state": "deprecated", "message": "goes"}) == "passing it is deprecated: goes"
    assert said({"state": "deprecated", "effect": "", "message": "goes"}) == "passing it is deprecated: goes"
    assert said({"state": "deprecated", "effect": "unknown", "message": "goes"}) == "passing it is deprecated: goes"
    assert said({"state": "deprecated", "effect": "warns"}) == "passing it warns"
    assert said({"state": "deprecated", "effect": "unknown"}) == "passing it is deprecated"
    assert said({"state": "removed", "effect": "raises TypeError", "message": ""}) == "passing it raises TypeError"


def test_a_keyword_that_leaves_the_signature_with_no_words_of_jax_is_said_removed_from_it():
    chain = _chain(_callback(("vectorized", WARNS)), _callback(params=(("callback", P, None),)))
    assert diff_chain(chain) == [
        Change("jax.pure_callback", "signature", "2", "parameter vectorized removed"),
        Change(
            "jax.pure_callback(vectorized=)",
            "removed",
            "2",
            "parameter vectorized removed from the signature of jax.pure_callback",
        ),
    ]


def test_a_keyword_removal_is_dated_over_the_censuses_that_can_tell_only():
    plain = _callback(("vectorized", None), params=(("callback", P, None), ("vectorized", K, "False")))
    raising = _callback(("vectorized", RAISES))
    chain = _chain(plain, raising, _callback(("vectorized", RAISES), signed=False), raising)
    assert [c for c in diff_chain(chain) if c.name.endswith("=)")] == [
        Change(
            "jax.pure_callback(vectorized=)",
            "removed",
            "2",
            "passing it raises ValueError: vectorized was removed in JAX v0.6.0.",
        )
    ]


def test_each_keyword_is_looked_at_one_after_the_other_and_one_the_older_release_cannot_tell_is_left_out():
    params = (("callback", P, None), ("alpha", K, "Deprecated"), ("beta", K, "Deprecated"))
    a = _callback(("alpha", WARNS), ("beta", None), params=params)
    b = _callback(("alpha", WARNS), ("beta", WARNS), params=params)
    assert diff_chain(_chain(a, b)) == [
        Change("jax.pure_callback(beta=)", "deprecated", "2", "passing it warns: vectorized is deprecated")
    ]
    # the older release has no signature: nothing known of its keywords, nor of the signature
    assert diff_chain(_chain(_unsigned(fn(("callback", P, None))), _callback(("vectorized", RAISES)))) == []


def test_a_name_that_is_not_usable_has_no_keywords_or_signature_to_compare_even_where_its_entry_keeps_them():
    kept = {**_callback(("vectorized", RAISES)), "state": "removed", "message": "jax.pure_callback was removed"}
    assert keyword_state(census("1", {"jax.pure_callback": kept}), "jax.pure_callback", "vectorized") is None
    assert keyword_state(census("1", {}), "jax.pure_callback", "vectorized") is None
    was = fn(("callback", P, None), ("vectorized", K, "False"))
    assert diff_chain(_chain(was, kept)) == [
        Change(
            "jax.pure_callback", "removed", "2", "on 2 reading it raises AttributeError: jax.pure_callback was removed"
        )
    ]


def test_an_added_name_is_dated_past_a_census_that_cannot_tell():
    chain = [
        census("1", {"jax.m": module()}),
        census("2", {"jax.m": module(), "jax.m.f": fn()}),
        census("3", {"jax.m": module()}, failed=("jax.m",)),
        census("4", {"jax.m": module(), "jax.m.f": fn()}),
    ]
    assert diff_chain(chain) == [Change("jax.m.f", "added", "2", "function f()")]


def test_a_signature_change_is_dated_past_a_census_without_a_signature():
    new = fn(("a", P, None), ("b", P, None))
    chain = [
        census("1", {"jax.f": fn(("a", P, None))}),
        census("2", {"jax.f": new}),
        census("3", {"jax.f": _unsigned(new)}),
        census("4", {"jax.f": new}),
    ]
    assert diff_chain(chain) == [Change("jax.f", "signature", "2", "parameter b added")]


def test_a_keyword_only_parameter_lost_does_not_stop_the_renames_after_it():
    before = [["x", P, None], ["k", K, None], ["kwargs", VK, None]]
    after = [["x", P, None], ["j", K, None], ["kw", VK, None]]
    assert signature_changes(before, after) == [
        "parameter kwargs renamed kw",
        "parameter k removed",
        "parameter j added",
    ]


def test_names_under_a_changed_name_that_is_not_a_whole_module_added_or_removed_are_listed_one_by_one():
    a = census("1", {"jax.m": module(), "jax.C": fn(kind="class"), "jax.C.attr": fn()})
    flag, option = config("jax_flag")
    b = census(
        "2",
        {
            "jax.m": module(state="deprecated"),
            "jax.m.fresh": fn(),
            flag: option,
            "jax.config": {"kind": "constant", "state": "present"},
        },
    )
    assert [(c.name, c.change) for c in diff_chain([a, b])] == [
        ("jax.C", "removed"),
        ("jax.C.attr", "removed"),
        ("jax.config", "added"),
        ("jax.config.jax_flag", "added"),
        ("jax.m", "deprecated"),
        ("jax.m.fresh", "added"),
    ]


def test_a_move_by_the_same_class_and_every_old_name_looked_at_after_one_without_destination():
    a = census("1", {"jax.a_gone": fn(), "jax.b_old": fn(kind="class", origin="jax._src.b.B")})
    b = census("2", {"jax.b_new": fn(kind="class", origin="jax._src.b.B")})
    assert [c for c in diff_chain([a, b]) if c.change == "moved"] == [
        Change("jax.b_old", "moved", "2", "now jax.b_new: the same class (jax._src.b.B)")
    ]


def test_a_move_goes_to_the_path_with_fewest_dots_never_to_an_alias_of_another():
    origin = "jax._src.core.f"
    a = census("1", {"jax.core": module(), "jax.core.f": fn(origin=origin)})
    b = census(
        "2",
        {
            "jax.core": module(),
            "jax.x": module(),
            "jax.x.y": module(),
            "jax.x.y.f": fn(origin=origin),
            "jax.longer_name": fn(origin=origin),
        },
    )
    assert [c.message for c in diff_chain([a, b]) if c.change == "moved"] == [
        "now jax.longer_name: the same function (jax._src.core.f)"
    ]
    aliased = census(
        "2",
        {
            "jax.core": module(),
            "jax.x": module(),
            "jax.x.y": module(),
            "jax.x.y.f": fn(origin=origin),
            "jax.f": fn(origin=origin, alias_of="jax.x.y.f"),
        },
    )
    assert [c.message for c in diff_chain([a, aliased]) if c.change == "moved"] == [
        "now jax.x.y.f: the same function (jax._src.core.f)"
    ]


def test_a_move_is_dated_from_the_release_where_the_old_name_stops_being_present_and_the_new_one_is_usable():
    origin = "jax._src.core.f"
    old, new = fn(origin=origin), fn(origin=origin)
    going = fn(origin=origin, state="deprecated", message="use jax.n.f")
    chain = [
        census("1", {"jax.core": module(), "jax.n": module(), "jax.core.f": old}),
        census("2", {"jax.core": module(), "jax.n": module(), "jax.core.f": old, "jax.n.f": new}),
        census("3", {"jax.core": module(), "jax.n": module(), "jax.core.f": going, "jax.n.f": new}),
        census("4", {"jax.core": module(), "jax.n": module(), "jax.core.f": removed("gone"), "jax.n.f": new}),
    ]
    (move,) = [c for c in diff_chain(chain) if c.change == "moved"]
    assert move == Change("jax.core.f", "moved", "3", "now jax.n.f: the same function (jax._src.core.f)")
    # a census where the new path cannot be told (its module failed) does not break the run
    blind = census("3", {"jax.core": module(), "jax.n": module(), "jax.core.f": going}, failed=("jax.n",))
    dated = [
        chain[0],
        census("2", {"jax.core": module(), "jax.n": module(), "jax.core.f": going, "jax.n.f": new}),
        blind,
        chain[3],
    ]
    assert [c.since for c in diff_chain(dated) if c.change == "moved"] == ["2"]


def test_no_move_for_a_name_the_newer_census_cannot_tell():
    a = census(
        "1", {"jax.m": module(), "jax.m.f": fn(state="deprecated", message="use jax.new", replacement="jax.new")}
    )
    b = census("2", {"jax.m": module(), "jax.new": fn()}, failed=("jax.m",))
    assert diff_chain([a, b]) == [Change("jax.new", "added", "2", "function new()")]
