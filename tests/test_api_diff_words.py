"""`api diff`'s changes said in full (`conformance.api.diff`): each change's message, its date over a chain, the
destination a move picks, and the words of a signature change. Synthetic censuses, no JAX."""

from __future__ import annotations

from conformance.api.diff import Change, diff_chain, signature_changes, signature_key, since_of
from tests.api_censuses import census, fn, module, removed

P, K = "positional_or_keyword", "keyword_only"


def test_each_change_is_said_in_full():
    a = census(
        "1",
        {
            "jax.old": fn(("x", P, None)),
            "jax.warns": fn(),
            "jax.back": fn(state="deprecated", message="jax.back goes"),
            "jax.dep_gone": fn(state="deprecated", message="jax.dep_gone goes"),
        },
    )
    b = census(
        "2",
        {
            "jax.new": fn(("x", P, None), ("y", K, "1")),
            "jax.warns": fn(state="deprecated", message="jax.warns warns"),
            "jax.back": fn(),
            "jax.dep_gone": removed("jax.dep_gone was removed"),
            "jax.K": {"kind": "constant", "state": "present"},
            "jax.long": fn(*[(f"p{k}", P, None) for k in range(60)]),
            "jax.dep_new": fn(state="deprecated", message="jax.dep_new is on its way out"),
        },
    )
    assert diff_chain([a, b]) == [
        Change("jax.K", "added", "2", "constant"),
        Change("jax.back", "undeprecated", "2", "deprecated on 1: jax.back goes"),
        Change(
            "jax.dep_gone",
            "removed",
            "2",
            "deprecated on 1: jax.dep_gone goes — on 2 reading it raises AttributeError: jax.dep_gone was removed",
        ),
        Change("jax.dep_new", "added", "2", "function dep_new(); deprecated on 2: jax.dep_new is on its way out"),
        Change("jax.long", "added", "2", "function long(" + ", ".join(f"p{k}" for k in range(60))[:159] + "…"),
        Change("jax.new", "added", "2", "function new(x, y)"),
        Change("jax.old", "removed", "2", "not in jax 2"),
        Change("jax.warns", "deprecated", "2", "jax.warns warns"),
    ]
    assert diff_chain([a]) == [] and diff_chain([]) == []
    no_kind = census("3", {"jax.n": {"state": "present"}})
    assert diff_chain([census("0", {}), no_kind]) == [Change("jax.n", "added", "3", "name")]


def test_a_removal_quotes_the_newest_warning_of_the_releases_before_the_last():
    a = census("1", {"jax.f": fn(state="deprecated", message="first words")})
    b = census("2", {"jax.f": fn(state="deprecated", message="later words")})
    c = census("3", {"jax.f": fn(state="deprecated")})
    d = census("4", {})
    (change,) = diff_chain([a, b, c, d])
    assert change == Change("jax.f", "removed", "4", "deprecated on 2: later words — not in jax 4")


def test_since_is_the_first_release_from_which_the_change_holds_on_every_later_census():
    chain = [
        census(v, names)
        for v, names in [("1", {}), ("2", {"jax.f": fn()}), ("3", {}), ("4", {"jax.f": fn()}), ("5", {"jax.f": fn()})]
    ]
    assert since_of(chain, lambda c: c.usable("jax.f")) == "4"
    assert since_of(chain, lambda c: None) == "5"
    assert since_of(chain[:2], lambda c: c.usable("jax.f")) == "2"
    assert since_of(chain, lambda c: c.jax == "1" or None) == "5"  # the first census (A) is never asked
    deprecated = [
        census("1", {"jax.f": fn()}),
        census("2", {"jax.f": fn(state="deprecated", message="m")}),
        census("3", {"jax.f": fn(state="deprecated", message="m")}),
    ]
    assert diff_chain(deprecated)[0].since == "2"
    back = [
        census("1", {"jax.f": fn(state="deprecated", message="m")}),
        census("2", {"jax.f": fn()}),
        census("3", {"jax.f": fn()}),
    ]
    assert diff_chain(back)[0].since == "2"
    gone = [census("1", {"jax.f": fn()}), census("2", {}), census("3", {})]
    assert diff_chain(gone)[0].since == "2"


def test_a_signature_change_is_said_parameter_by_parameter_and_dated():
    assert signature_changes(
        [["a", P, None], ["b", P, "1"]], [["z", P, None], ["b", P, None], ["c", K, "2"], ["d", K, None]]
    ) == ["parameter a renamed z", "parameter c added (default 2)", "parameter d added", "default of b: 1 → no default"]
    assert signature_changes([["a", P, None]], [["b", K, None]]) == ["parameter a removed", "parameter b added"]
    assert signature_changes([["a", P, None], ["b", P, None]], [["b", P, None], ["a", P, None]]) == []
    assert signature_key(None) is None and signature_key([["a", P, None], ["bad"]]) == (("a", P, None),)
    chain = [
        census("1", {"jax.f": fn(("a", P, None))}),
        census("2", {"jax.f": {"kind": "function", "state": "present"}}),
        census("3", {"jax.f": fn(("a", P, None), ("b", P, None))}),
        census("4", {"jax.f": fn(("a", P, None), ("b", P, None))}),
    ]
    assert diff_chain(chain) == [Change("jax.f", "signature", "3", "parameter b added")]
    # parameters reordered only: the key differs, no words: no change
    swapped = [
        census("1", {"jax.f": fn(("a", P, None), ("b", P, None))}),
        census("2", {"jax.f": fn(("b", P, None), ("a", P, None))}),
    ]
    assert diff_chain(swapped) == []
    unsigned = [
        census("1", {"jax.f": fn(("a", P, None))}),
        census("2", {"jax.f": {"kind": "function", "state": "present"}}),
    ]
    assert diff_chain(unsigned) == []


def test_a_move_goes_to_the_shortest_canonical_present_path_of_the_same_object():
    origin = "jax._src.core.f"
    a = census("1", {"jax.core": module(), "jax.core.f": fn(origin=origin)})
    b = census(
        "2",
        {
            "jax.core": module(),
            "jax.a": module(),
            "jax.a.bb": module(),
            "jax.a.bb.f": fn(origin=origin),
            "jax.a.f": fn(origin=origin),
            "jax.zz": module(),
            "jax.zz.f": fn(origin=origin),
            "jax.a.g": fn(origin=origin, state="deprecated", message="m"),
        },
    )
    moved = [c for c in diff_chain([a, census("1.5", {"jax.core": module()}), b]) if c.change == "moved"]
    assert moved == [Change("jax.core.f", "moved", "2", "now jax.a.f: the same function (jax._src.core.f)")]
    by_replacement = census(
        "2",
        {
            "jax.core": module(),
            "jax.new": fn(origin="jax._src.other"),
            "jax.core.f": removed("jax.core.f was removed: use jax.new", "jax.new"),
        },
    )
    (move,) = [c for c in diff_chain([a, by_replacement]) if c.change == "moved"]
    assert move == Change(
        "jax.core.f", "moved", "2", "now jax.new: its replacement, as JAX says: jax.core.f was removed: use jax.new"
    )
    warned = census(
        "1",
        {
            "jax.core": module(),
            "jax.core.f": fn(origin=origin, state="deprecated", message="use jax.new", replacement="jax.new"),
        },
    )
    (move,) = [
        c for c in diff_chain([warned, census("2", {"jax.core": module(), "jax.new": fn()})]) if c.change == "moved"
    ]
    assert move.message == "now jax.new: its replacement, as JAX says: use jax.new"
    module_origin = census(
        "1", {"jax.core": module(), "jax.core.m": {"kind": "module", "state": "present", "origin": origin}}
    )
    assert not [c for c in diff_chain([module_origin, b]) if c.change == "moved"]
