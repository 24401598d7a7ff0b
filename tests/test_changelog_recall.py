"""The changelog benchmark's counting rule (benchmarks/api_changelog_recall.py) on bullets of JAX's CHANGELOG: what
counts as an entry, what does not, and how a diff's change matches one."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import api_changelog_recall as recall  # noqa: E402
from conformance.api.diff import Change  # noqa: E402

MODULES = {
    "jax",
    "jax.core",
    "jax.lib.xla_extension",
    "jax.extend.ffi",
    "jax.interpreters.pxla",
    "jax.experimental.compilation_cache",
    "jax.experimental.compilation_cache.compilation_cache",
}


def stated(*bullets: str, release: str = "0.7.0") -> set[tuple[str, str, str]]:
    text = f"## JAX {release}\n\n" + "\n".join(f"* {b}" for b in bullets) + "\n"
    return {
        (e.event, e.kind, e.name + (f"({e.keyword}=)" if e.keyword else ""))
        for e in recall.entries(text, release, release, MODULES)
    }


def test_only_the_sentence_that_states_the_event_names_what_went():
    assert stated("`jax.experimental.si_vjp` has been deleted. `jax.vjp` subsumes its functionality.") == {
        ("removed", "name", "jax.experimental.si_vjp")
    }
    assert stated("{func}`jax.numpy.fix` is deprecated. {func}`jax.numpy.trunc` is a drop-in replacement.") == {
        ("deprecated", "name", "jax.numpy.fix")
    }
    assert stated(
        "Exposed `jax.set_mesh` as a context manager. Removed `jax.sharding.use_mesh` in favor of `jax.set_mesh`."
    ) == {("removed", "name", "jax.sharding.use_mesh")}


def test_an_announced_removal_is_a_deprecation():
    assert stated("`jax.lax.infeed` and `jax.lax.outfeed` are deprecated and will be removed in JAX v0.7.0.") == {
        ("deprecated", "name", "jax.lax.infeed"),
        ("deprecated", "name", "jax.lax.outfeed"),
    }
    assert stated("Setting the `jax_pmap_shmap_merge` config state is deprecated and will be removed.") == {
        ("deprecated", "config", "jax.config.jax_pmap_shmap_merge")
    }


def test_a_use_is_not_a_name_and_private_paths_do_not_count():
    assert stated(
        "Complex arguments passed to {func}`jax.numpy.arange` now result in a deprecation warning.",
        "Passing 2-dimensional arrays to {func}`jax.numpy.cross` is deprecated.",
        "{func}`jax.numpy.array` no longer accepts `None`. This behavior was deprecated.",
        "{mod}`jaxlib.hlo_helpers` has been removed.",
        "From {mod}`jax.interpreters.pxla`, `Index` and `_UNSPECIFIED` have been removed.",
    ) == {("removed", "name", "jax.interpreters.pxla.Index")}


def test_options_keywords_members_and_modules_are_read_as_what_they_are():
    assert stated(
        "Removed the `config.jax_eager_pmap` config option.",
        "In {func}`jax.lax.dot`, passing the ``precision`` argument by position is deprecated.",
        "The `.vma` property has been removed from `jax.core.ShapedArray`.",
        "All APIs in `jax.lib.xla_extension` are now deprecated.",
        "The new `implementation` argument to {func}`jax.lax.linalg.eig`. The `use_magma` argument is "
        "now deprecated in favor of `implementation`.",
        "A number of APIs in `jax.core` have been deprecated and some have been moved to `jax.extend`. "
        "These include `Var` and `gensym`.",
    ) == {
        ("removed", "config", "jax.config.jax_eager_pmap"),
        ("deprecated", "keyword", "jax.lax.dot(precision=)"),
        ("removed", "member", "jax.core.ShapedArray.vma"),
        ("deprecated", "module", "jax.lib.xla_extension"),
        ("deprecated", "keyword", "jax.lax.linalg.eig(use_magma=)"),
        ("deprecated", "name", "jax.core.Var"),
        ("deprecated", "name", "jax.core.gensym"),
    }


def test_a_list_under_a_parent_takes_its_event_a_heading_gives_none():
    text = (
        "## JAX 0.10.0\n\n* The following public APIs are no longer available:\n  * `jax.sharding.PmapSharding`\n"
        "* Deprecations:\n  * Default `axis_types` of `jax.make_mesh` will change.\n"
    )
    assert {(e.event, e.name) for e in recall.entries(text, "0.10.0", "0.10.0", MODULES)} == {
        ("removed", "jax.sharding.PmapSharding")
    }


def test_a_package_named_for_its_module_and_a_signature_change_naming_the_parameter():
    entry = recall.Entry("0.8.0", "removed", "name", "jax.experimental.compilation_cache.is_initialized", "", "")
    known = {"jax.experimental.compilation_cache.compilation_cache.is_initialized"}
    assert recall.resolve(entry, known).name == "jax.experimental.compilation_cache.compilation_cache.is_initialized"
    keyword = recall.Entry("0.10.1", "deprecated", "keyword", "jax.numpy.array", "copy", "")
    change = Change(
        "jax.numpy.array",
        "signature",
        "0.10.1",
        "parameter args added; parameter copy: positional_or_keyword → keyword_only",
    )
    assert recall.matches(keyword, change)
    assert not recall.matches(recall.Entry("0.10.1", "deprecated", "keyword", "jax.numpy.array", "cop", ""), change)
