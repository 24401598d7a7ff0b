"""The upgrade review's names dated over the censuses stored between A and B (`api.dating`, issue 56): when a name
was deprecated and when removed, a range where a release between has no census, a name removed and added again, a
deprecation A already shows, and only A and B stored (the review as before). Synthetic censuses, no JAX needed."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import jsonschema

from conformance.api.dating import date_change
from conformance.api.diff import diff_chain
from conformance.decide.upgrade import _final_releases
from conformance.decide.upgrade_render import review_json, review_markdown, summary_text
from conformance.decide.upgrade_tiers import Review, names_tier
from tests.api_censuses import census, fn, removed

SCHEMA = Path(__file__).resolve().parents[1] / "conformance" / "decide" / "schemas" / "upgrade-1.schema.json"
P = "positional_or_keyword"
NAME = "jax.tree_map"
GONE = "jax.tree_map was removed in JAX v0.6.0; use jax.tree.map."


def _present() -> dict:
    return fn(("f", P, None), ("tree", P, None))


def _deprecated() -> dict:
    return fn(("f", P, None), ("tree", P, None), state="deprecated", message="jax.tree_map is deprecated")


def _tier(chain, releases):
    changes = diff_chain(chain)
    return names_tier(changes, dating=lambda change: date_change(change, chain, releases))


def _reasons(chain, releases) -> dict[str, str]:
    return {found.subject: found.reason for found in _tier(chain, releases).findings}


def _review(chain, releases) -> Review:
    return Review(chain[0].jax, chain[-1].jax, (_tier(chain, releases),))


def _json_items(review: Review) -> dict[str, dict]:
    data = review_json(review, "test")
    jsonschema.validate(data, json.loads(SCHEMA.read_text(encoding="utf-8")))
    return {i["name"]: i for i in data["tiers"][0]["items"]}


def test_a_release_between_without_a_census_makes_a_range_never_a_wrong_release():
    chain = [
        census("0.8.0", {NAME: _present()}),
        census("0.8.3", {NAME: _deprecated()}),
        census("0.10.0", {NAME: removed(GONE)}),
    ]
    releases = ["0.8.0", "0.8.3", "0.9.0", "0.10.0", "0.11.0"]  # 0.9.0 is released, its census not stored
    reason = _reasons(chain, releases)[NAME]
    assert reason == "deprecated in 0.8.3, removed between 0.8.3 and 0.10.0 (no census answers for 0.9.0)"
    dated = _json_items(_review(chain, releases))[NAME]["dated"]
    assert dated == [
        {"event": "deprecated", "in": "0.8.3", "after": "0.8.0", "by": "0.8.3"},
        {"event": "removed", "in": None, "after": "0.8.3", "by": "0.10.0"},  # no exact release: a range
    ]
    # the same chain with 0.9.0's census stored: now exact, in the release that first shows it
    full = [*chain[:2], census("0.9.0", {NAME: removed(GONE)}), chain[2]]
    assert _reasons(full, releases)[NAME] == "deprecated in 0.8.3, removed in 0.9.0"
    # the index's releases not known here (offline): a range, since which releases lie between is unknown
    assert _reasons(chain, None)[NAME] == "deprecated between 0.8.0 and 0.8.3, removed between 0.8.3 and 0.10.0"


def test_a_name_removed_then_added_again_is_dated_by_its_last_removal():
    chain = [
        census("0.5.0", {NAME: _present()}),
        census("0.6.0", {}),  # removed ...
        census("0.7.0", {NAME: _present()}),  # ... added again ...
        census("0.8.0", {}),  # ... and removed for good
        census("0.9.0", {}),
    ]
    releases = ["0.5.0", "0.6.0", "0.7.0", "0.8.0", "0.9.0"]
    assert _reasons(chain, releases)[NAME] == "removed in 0.8.0"  # not 0.6.0: it was back on 0.7.0
    # removed and back again by B: no change from A to B, nothing listed
    back = [chain[0], chain[1], chain[2]]
    assert NAME not in _reasons(back, releases)


def test_a_deprecation_a_already_shows_is_dated_at_a_or_before():
    chain = [
        census("0.4.26", {NAME: _deprecated()}),
        census("0.5.0", {NAME: _deprecated()}),
        census("0.6.0", {NAME: removed(GONE)}),
    ]
    releases = ["0.4.26", "0.5.0", "0.6.0"]
    review = _review(chain, releases)
    assert review.tiers[0].findings[0].reason == "deprecated in 0.4.26 or before, removed in 0.6.0"
    assert _json_items(review)[NAME]["dated"][0] == {"event": "deprecated", "in": None, "after": None, "by": "0.4.26"}
    # the summary and the Markdown carry the same words
    assert "jax.tree_map: deprecated in 0.4.26 or before, removed in 0.6.0" in summary_text(review)
    assert "deprecated in 0.4.26 or before, removed in 0.6.0" in review_markdown(review)
    # removed right after A: the deprecation is A's, the removal exact
    assert _reasons([chain[0], chain[2], census("0.7.0", {})], ["0.4.26", "0.6.0", "0.7.0"])[NAME] == (
        "deprecated in 0.4.26 or before, removed in 0.6.0"
    )


def test_only_a_and_b_stored_the_review_is_as_before():
    chain = [census("0.8.0", {NAME: _deprecated()}), census("0.10.0", {NAME: removed(GONE)})]
    undated = names_tier(diff_chain(chain))
    dated = _tier(chain, ["0.8.0", "0.9.0", "0.10.0"])
    assert dated == undated and dated.findings[0].reason == "removed in 0.10.0"
    item = _json_items(Review("0.8.0", "0.10.0", (dated,)))[NAME]
    assert "dated" not in item and item["change"] == "removed in 0.10.0"  # the optional field left out


def test_a_signature_change_is_dated_and_the_release_candidates_make_no_range():
    chain = [
        census("0.8.0", {NAME: _present()}),
        census("0.9.0", {NAME: _present()}),
        census("0.10.0", {NAME: fn(("f", P, None), ("tree", P, None), ("is_leaf", P, "None"))}),
    ]
    builder = SimpleNamespace(index=SimpleNamespace(cached_releases=lambda project: ["0.9.0", "0.10.0rc1", "0.10.0"]))
    releases = _final_releases(lambda: builder)
    assert releases == ["0.9.0", "0.10.0"]  # a release candidate is no release a census is missing for
    assert _reasons(chain, releases)[NAME] == "signature changed in 0.10.0"
    offline = SimpleNamespace(index=SimpleNamespace(cached_releases=lambda project: None))
    assert _final_releases(lambda: offline) is None


def test_a_keyword_is_dated_when_passing_it_warned_and_when_it_raised():
    vec = ("vectorized", "keyword_only", "Deprecated")
    warns = {"state": "deprecated", "effect": "warns", "message": "The vectorized argument is deprecated."}
    raises = {"state": "removed", "effect": "raises ValueError", "message": "vectorized was removed in v0.6.0."}

    def callback(keyword, *params):
        entry = fn(("callback", P, None), *params)
        if keyword is not None:
            entry["keywords"] = {"vectorized": keyword}
        return entry

    chain = [
        census("0.4.38", {"jax.pure_callback": callback(None, ("vectorized", "keyword_only", "False"))}),
        census("0.5.3", {"jax.pure_callback": callback(warns, vec)}),
        census("0.6.0", {"jax.pure_callback": callback(raises, vec)}),
        census("0.7.0", {"jax.pure_callback": callback(raises, vec)}),
    ]
    releases = ["0.4.38", "0.5.0", "0.5.1", "0.5.2", "0.5.3", "0.6.0", "0.7.0"]
    assert _reasons(chain, releases)["jax.pure_callback(vectorized=)"] == (
        "deprecated between 0.4.38 and 0.5.3 (no census answers for 0.5.0, 0.5.1, 0.5.2), removed in 0.6.0"
    )
