"""`api scan`'s guards, aliases bound in them, config values and positional counts (`conformance.api.scan`), on the
code a team writes: `hasattr` tests, `try/except AttributeError/ImportError` with their `else` and `finally`, `and`
and `or` chains, an alias bound in a guard and rebound outside it, `jax.config.update` with literal values, and calls
passing by position. Pure: synthetic censuses, nothing imported."""

from __future__ import annotations

import ast
import textwrap

from conformance.api.judge import Censuses, exit_status, judge
from conformance.api.scan import Use, bindings, uses_in_source
from tests.api_censuses import census, fn, module, removed

P = "positional_or_keyword"
TRY_IMPORT = "inside try/except ImportError"


def uses(source: str) -> list[Use]:
    return uses_in_source(textwrap.dedent(source), "a.py")


def rows(source: str) -> list[tuple]:
    """Every field of every use but the path: (line, col, name, what, keywords, guarded, positional, value)."""
    return [(u.line, u.col, u.name, u.what, u.keywords, u.guarded, u.positional, u.value) for u in uses(source)]


def test_a_handler_for_another_error_is_no_fallback_and_guards_nothing():
    """Only an `except` for AttributeError or ImportError is the code's fallback for a missing name; the uses in a
    `ValueError` handler run wherever the `try` fails for any other reason, and are judged as they stand."""
    source = """\
        import jax

        try:
            y = compute()
        except ValueError:
            y = jax.tree_map(f, t)
        except (KeyError, AttributeError):
            y = jax.tree_leaves(t)
        """
    assert rows(source) == [
        (6, 9, "jax.tree_map", "name", (), "", 2, ""),
        (8, 9, "jax.tree_leaves", "name", (), "inside an except AttributeError fallback", 1, ""),
    ]
    to = census(
        "0.6.2",
        {
            "jax.tree_map": removed("jax.tree_map was removed in JAX v0.6.0"),
            "jax.tree_leaves": removed("jax.tree_leaves was removed in JAX v0.6.0"),
        },
    )
    found = judge(uses(source), Censuses(to, None, (to,)))
    assert [(f.line, f.name, f.state, f.message) for f in found] == [
        (6, "jax.tree_map", "removed", "jax.tree_map was removed in JAX v0.6.0"),
        (
            8,
            "jax.tree_leaves",
            "guarded",
            "jax.tree_leaves was removed in JAX v0.6.0 (inside an except AttributeError fallback)",
        ),
    ]
    assert exit_status(found) == 1


def test_the_else_and_finally_of_a_guarding_try_are_scanned_and_not_guarded():
    """The `else` runs where the guarded import worked and `finally` everywhere: neither is a fallback."""
    source = """\
        import jax

        try:
            import jax.experimental.host_callback as hcb
        except ImportError:
            hcb = None
        else:
            jax.tree_map(f, t)
        finally:
            jax.clear_backends()
        """
    assert rows(source) == [
        (4, 12, "jax.experimental.host_callback", "name", (), TRY_IMPORT, 0, ""),
        (8, 5, "jax.tree_map", "name", (), "", 2, ""),
        (10, 5, "jax.clear_backends", "name", (), "", 0, ""),
    ]


def test_the_operands_of_an_or_are_scanned_and_an_and_inside_it_still_guards():
    source = """\
        import jax

        def leaves(x):
            return x is None or jax.tree_leaves(x)

        def sharded(x, cached):
            return cached or (hasattr(jax, "pxla") and isinstance(x, jax.pxla.ShardedDeviceArray))
        """
    assert rows(source) == [
        (4, 25, "jax.tree_leaves", "name", (), "", 1, ""),
        (7, 62, "jax.pxla.ShardedDeviceArray", "name", (), "inside an hasattr(...) guard", 0, ""),
    ]


def test_a_module_bound_in_a_guard_carries_the_guard_to_its_attributes_and_the_keywords_passed_to_them():
    """The pattern of code that still supports `xmap`: the module imported in a `try`, used anywhere after it."""
    source = """\
        import jax
        try:
            from jax.experimental import maps
        except ImportError:
            maps = None

        def run(f):
            return maps.xmap(f, in_axes=["i"], out_axes=["i"])
        """
    bound = "bound inside try/except ImportError at line 3"
    assert rows(source) == [
        (3, 5, "jax.experimental", "name", (), TRY_IMPORT, 0, ""),
        (3, 34, "jax.experimental.maps", "name", (), TRY_IMPORT, 0, ""),
        (8, 12, "jax.experimental.maps.xmap", "call", ("in_axes", "out_axes"), bound, 0, ""),
        (8, 12, "jax.experimental.maps.xmap", "name", (), bound, 1, ""),
    ]
    old = census(
        "0.4.30",
        {
            "jax.experimental": module(),
            "jax.experimental.maps": module(),
            "jax.experimental.maps.xmap": fn(("f", P, None), ("in_axes", P, None), ("out_axes", P, None)),
        },
    )
    new = census("0.4.31", {"jax.experimental": module()})
    found = judge(uses(source), Censuses(new, None, (old, new)))
    assert [(f.line, f.name, f.state, f.message) for f in found] == [
        (3, "jax.experimental.maps", "guarded", f"not in jax 0.4.31 (last seen on 0.4.30) ({TRY_IMPORT})"),
        (8, "jax.experimental.maps.xmap", "guarded", f"not in jax 0.4.31 (last seen on 0.4.30) ({bound})"),
    ]
    assert exit_status(found) == 0


def test_a_function_bound_in_a_guard_carries_the_guard_to_a_call_passing_keywords():
    source = """\
        import jax
        if hasattr(jax.lax, "linalg"):
            eig = jax.lax.linalg.eig
        eig(a, use_magma=True)
        """
    bound = "bound inside an hasattr(...) guard at line 3"
    # the test's own `jax.lax` is not guarded by it: where `jax.lax` is gone, the test itself raises
    assert rows(source) == [
        (2, 12, "jax.lax", "name", (), "", 0, ""),
        (3, 11, "jax.lax.linalg.eig", "name", (), "inside an hasattr(...) guard", 0, ""),
        (4, 1, "jax.lax.linalg.eig", "call", ("use_magma",), bound, 0, ""),
        (4, 1, "jax.lax.linalg.eig", "name", (), bound, 1, ""),
    ]


def test_a_later_binding_outside_any_guard_drops_the_guard_of_the_one_it_replaces():
    """The last binding wins, and with it its guard: `tree_map` rebound plainly is judged as it now stands."""
    source = """\
        import jax
        if hasattr(jax, "tree_map"):
            tree_map = jax.tree_map
        else:
            tree_map = jax.tree.map
        tree_map = jax.tree_util.tree_map
        tree_map(f, t)
        """
    assert rows(source)[-1] == (7, 1, "jax.tree_util.tree_map", "name", (), "", 2, "")


def test_an_import_in_a_fallback_that_binds_a_jax_name_among_others_drops_that_names_earlier_guard():
    """`import numpy as np, jax.numpy as jnp` in a fallback binds `jnp` plainly (an import statement carries no
    guard): the guard of the earlier `from jax import numpy as jnp` goes with the binding it replaced."""
    source = """\
        import jax
        if hasattr(jax, "numpy"):
            from jax import numpy as jnp
        try:
            import scipy
        except ImportError:
            import numpy as np, jax.numpy as jnp
        jnp.fix(x)
        """
    assert rows(source)[-1] == (8, 1, "jax.numpy.fix", "name", (), "", 1, "")


def test_bindings_maps_each_name_the_file_binds_to_its_jax_path_and_nothing_else():
    source = textwrap.dedent("""\
        import jax, numpy as np
        import jax.numpy as jnp
        from jax import *
        from jax.experimental import maps as m
        tm = jax.tree_util.tree_map
        if hasattr(jax, "pxla"):
            pxla = jax.pxla
        """)
    assert bindings(ast.parse(source)) == {
        "jax": "jax",
        "jnp": "jax.numpy",
        "m": "jax.experimental.maps",
        "tm": "jax.tree_util.tree_map",
        "pxla": "jax.pxla",
    }


def test_a_config_option_carries_the_literal_it_is_set_to_as_written_and_nothing_for_a_variable():
    source = """\
        import jax
        jax.config.update("jax_pmap_no_rank_reduction", False)
        jax.config.update("jax_default_dtype_bits", val="32")
        jax.config.update(name="jax_enable_x64", val=flag)
        jax.config.update("jax_numpy_rank_promotion", "allow")
        jax.config.update("jax_threefry_partitionable", not flag)
        """
    assert rows(source) == [
        (2, 1, "jax.config.update", "name", (), "", 2, ""),
        (2, 19, "jax.config.jax_pmap_no_rank_reduction", "config", (), "", 0, "False"),
        (3, 1, "jax.config.update", "name", (), "", 1, ""),
        (3, 19, "jax.config.jax_default_dtype_bits", "config", (), "", 0, "'32'"),
        (4, 1, "jax.config.update", "name", (), "", 0, ""),
        (4, 24, "jax.config.jax_enable_x64", "config", (), "", 0, ""),
        (5, 1, "jax.config.update", "name", (), "", 2, ""),
        (5, 19, "jax.config.jax_numpy_rank_promotion", "config", (), "", 0, "'allow'"),
        (6, 1, "jax.config.update", "name", (), "", 2, ""),
        (6, 19, "jax.config.jax_threefry_partitionable", "config", (), "", 0, ""),
    ]


def test_a_name_carries_how_many_arguments_its_call_passes_by_position():
    """0 where it is only referenced, -1 where a starred argument makes the count unknown, and a call passing
    keywords is a use of its own with no positional count."""
    source = """\
        import jax
        dot = jax.lax.dot
        jax.lax.dot(a, b, *rest)
        jax.lax.dot(*operands)
        jax.lax.dot(a, b, p, precision=p)
        dot(a, b, p)
        """
    assert rows(source) == [
        (2, 7, "jax.lax.dot", "name", (), "", 0, ""),
        (3, 1, "jax.lax.dot", "name", (), "", -1, ""),
        (4, 1, "jax.lax.dot", "name", (), "", -1, ""),
        (5, 1, "jax.lax.dot", "call", ("precision",), "", 0, ""),
        (5, 1, "jax.lax.dot", "name", (), "", 3, ""),
        (6, 1, "jax.lax.dot", "name", (), "", 3, ""),
    ]


def test_a_broad_fallback_for_a_missing_jax_does_not_hide_the_uses_of_the_installed_one():
    """Found under mutation (`guard_of_handler`): optional JAX is often imported with `except Exception:` or a bare
    `except:` (`jax = None`, `jnp = None` after it); those bindings unbound `jax` and `jnp`, and every use of JAX in
    the file went unseen. As with `except ImportError`, the fallback leaves the JAX binding standing, and the
    broad handler still guards nothing."""
    for handler in (
        "except Exception:",
        "except:",
        "except (RuntimeError, BaseException):",
        "except builtins.Exception:",
    ):
        source = f"""\
            try:
                import jax
                import jax.numpy as jnp
            {handler}
                jax = None
                jnp = None

            def f(x):
                return jax.tree_map(abs, x), jnp.fix(x)
            """
        assert rows(source) == [
            (3, 12, "jax.numpy", "name", (), "", 0, ""),
            (9, 12, "jax.tree_map", "name", (), "", 2, ""),
            (9, 34, "jax.numpy.fix", "name", (), "", 1, ""),
        ], handler
    # a handler that cannot catch ImportError is no fallback: its binding is the last, as anywhere else
    assert uses("import jax\ntry:\n    pass\nexcept ValueError:\n    jax = None\njax.tree_map\n") == []


# issue 58: a guard counts only for the names it tests. chex 0.1.90's library code (chex/_src/asserts.py,
# `_check_sharding`) uses `jax.sharding.PmapSharding` inside `if hasattr(jax, "Array"):`; every `hasattr` was a
# guard, so the use was filed `guarded` and the removal on 0.10.0 (2 of chex's tests break) was never reported.
HASATTR = "inside an hasattr(...) guard"
SHARDING_08 = census(
    "0.8.0", {"jax.Array": fn(), "jax.sharding": module(), "jax.sharding.PmapSharding": fn(), "jax.tree": module()}
)
SHARDING_10 = census("0.10.0", {"jax.Array": fn(), "jax.sharding": module(), "jax.tree": module()})


def judged(source: str) -> list[tuple[int, str, str]]:
    found = judge(uses(source), Censuses(SHARDING_10, None, (SHARDING_08, SHARDING_10)))
    return [(f.line, f.name, f.state) for f in found]


def test_chexs_guard_on_another_name_is_no_guard_and_the_removal_is_reported():
    source = """\
        import jax

        def _check_sharding(x):
            if hasattr(jax, "Array"):
                return isinstance(x.sharding, jax.sharding.PmapSharding)
            else:
                return jax.sharding.PmapSharding
        """
    assert [(u.line, u.name, u.guarded) for u in uses(source)] == [
        (5, "jax.sharding.PmapSharding", ""),
        (7, "jax.sharding.PmapSharding", HASATTR),  # the else: the fallback for where jax.Array is absent
    ]
    assert judged(source) == [(5, "jax.sharding.PmapSharding", "removed"), (7, "jax.sharding.PmapSharding", "guarded")]


def test_an_hasattr_on_the_name_used_guards_it_and_the_names_under_it():
    source = """\
        import jax
        from jax import sharding as sh

        if hasattr(jax.sharding, "PmapSharding"):
            kinds = (jax.sharding.PmapSharding, jax.sharding.PmapSharding.mesh)
        if hasattr(sh, "PmapSharding") and isinstance(x, sh.PmapSharding):
            pass
        """
    assert [(u.line, u.name, u.guarded) for u in uses(source) if u.line > 2] == [
        (4, "jax.sharding", ""),
        (5, "jax.sharding.PmapSharding", HASATTR),
        (5, "jax.sharding.PmapSharding.mesh", HASATTR),
        (6, "jax.sharding", ""),
        (6, "jax.sharding.PmapSharding", HASATTR),
    ]
    assert {state for _, _, state in judged(source)} == {"guarded"}


def test_a_getattr_with_a_default_is_a_guarded_use_and_without_one_a_plain_use():
    source = """\
        import jax

        PmapSharding = getattr(jax.sharding, "PmapSharding", None)
        Gone = getattr(jax.sharding, "PmapSharding")
        if getattr(jax.sharding, "PmapSharding", None) is not None:
            jax.sharding.PmapSharding
        if getattr(jax.sharding, "PmapSharding", None) is None:
            jax.sharding.PmapSharding
        """
    assert judged(source) == [
        (3, "jax.sharding.PmapSharding", "guarded"),
        (4, "jax.sharding.PmapSharding", "removed"),
        (5, "jax.sharding.PmapSharding", "guarded"),
        (6, "jax.sharding.PmapSharding", "guarded"),
        (7, "jax.sharding.PmapSharding", "guarded"),
        (8, "jax.sharding.PmapSharding", "removed"),  # runs exactly where the name is absent
    ]
    assert [u.guarded for u in uses(source) if u.line == 3] == ["inside a getattr(..., default)", ""]


def test_a_try_except_attribute_error_guards_an_attribute_and_import_error_an_import():
    source = """\
        import jax

        try:
            kind = jax.sharding.PmapSharding
        except AttributeError:
            kind = None
        try:
            from jax.sharding import PmapSharding
            other = jax.sharding.PmapSharding
        except ImportError:
            PmapSharding = None
        """
    assert judged(source) == [
        (4, "jax.sharding.PmapSharding", "guarded"),
        (8, "jax.sharding.PmapSharding", "guarded"),
        (9, "jax.sharding.PmapSharding", "removed"),  # an AttributeError, which `except ImportError` lets through
    ]


def test_an_hasattr_on_another_modules_attribute_of_the_same_name_is_no_guard():
    source = """\
        import jax
        import numpy as np

        if hasattr(jax, "PmapSharding"):
            jax.sharding.PmapSharding
        if hasattr(np, "PmapSharding"):
            jax.sharding.PmapSharding
        if not hasattr(jax.sharding, "PmapSharding"):
            jax.sharding.PmapSharding
        else:
            jax.sharding.PmapSharding
        if not hasattr(jax.sharding, "PmapSharding"):
            jax.tree_map
        """
    assert judged(source) == [
        (5, "jax.sharding.PmapSharding", "removed"),
        (7, "jax.sharding.PmapSharding", "removed"),
        (9, "jax.sharding.PmapSharding", "removed"),  # `if not hasattr`: the branch where it is absent
        (11, "jax.sharding.PmapSharding", "guarded"),  # its else: where the name is there
        (13, "jax.tree_map", "guarded"),  # the fallback covers every other name in it
    ]


def test_nested_guards_each_cover_their_own_names():
    source = """\
        import jax

        if hasattr(jax, "sharding"):
            if hasattr(jax, "Array"):
                a = jax.sharding.PmapSharding
        if hasattr(jax, "Array"):
            if hasattr(jax.sharding, "PmapSharding"):
                b = jax.sharding.PmapSharding
        try:
            if hasattr(jax, "Array"):
                c = jax.sharding.PmapSharding
        except AttributeError:
            pass
        if hasattr(jax, "Array"):
            pmap = jax.sharding.PmapSharding
        pmap()
        """
    assert judged(source) == [
        (5, "jax.sharding.PmapSharding", "guarded"),  # the outer hasattr(jax, "sharding") covers what is under it
        (8, "jax.sharding.PmapSharding", "guarded"),  # the inner guard tests it
        (11, "jax.sharding.PmapSharding", "guarded"),  # the try around both
        (15, "jax.sharding.PmapSharding", "removed"),
        (16, "jax.sharding.PmapSharding", "removed"),  # an alias bound where no guard covers it carries none
    ]
